/* ordering.c — ordering guarantees. With the default accumulate_ordering (rar,raw,war,waw),
 * accumulate operations from one origin to the same target location complete in program order
 * even without a flush: N MPI_Accumulate(REPLACE, 1..N) followed by MPI_Get_accumulate(NO_OP)
 * reads N; SUMs are all seen by a following MPI_Fetch_and_op(NO_OP); a read issued before a
 * write returns the old value; REPLACE/SUM/PROD apply in order. Put and Get are unordered, so
 * they are ordered with MPI_Win_flush (or unlock + lock); a window with accumulate_ordering=none
 * is ordered by flushes too. */
#include "conf.h"

#define N 100

static int64_t *base;
static MPI_Win win;
static int right;

/* Element e of the right neighbour belongs to us (nobody else touches it). */
static void same_origin_accumulates(void)
{
    int64_t v, got = -1;
    for (int k = 1; k <= N; k++) {
        v = k;
        MPI_Accumulate(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, MPI_REPLACE, win);
    }
    MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &got, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T,
                       MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    tap_is_long(got, N,
                "waw+raw: %d MPI_Accumulate(REPLACE, 1..%d), then Get_accumulate(NO_OP) "
                "in the same epoch without a flush reads %d",
                N, N, N);

    int64_t one = 1, sum = -1;
    for (int k = 0; k < N; k++)
        MPI_Accumulate(&one, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, MPI_SUM, win);
    MPI_Fetch_and_op(NULL, &sum, MPI_INT64_T, right, 1, MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    tap_is_long(sum, 1000 + N,
                "raw: %d MPI_Accumulate(SUM, +1) are all seen by a following "
                "MPI_Fetch_and_op(NO_OP) without a flush",
                N);

    int64_t before = -1, big = 999;
    MPI_Fetch_and_op(NULL, &before, MPI_INT64_T, right, 2, MPI_NO_OP, win);
    MPI_Accumulate(&big, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, MPI_REPLACE, win);
    MPI_Win_flush(right, win);
    tap_is_long(before, 2000,
                "war: MPI_Fetch_and_op(NO_OP) issued before an "
                "MPI_Accumulate(REPLACE) returns the old value");

    int64_t five = 5, seven = 7, three = 3, res = -1;
    MPI_Accumulate(&five, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, MPI_SUM, win);
    MPI_Accumulate(&seven, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, MPI_REPLACE, win);
    MPI_Accumulate(&three, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, MPI_PROD, win);
    MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &res, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T,
                       MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    tap_is_long(res, 21, "waw: SUM +5, REPLACE 7, PROD x3 on one element apply in order (= 21)");
}

static void puts_and_gets(void)
{
    int64_t v1 = conf_val(1, conf_rank, 0), v2 = conf_val(2, conf_rank, 0), got = -1, got2 = -1;
    MPI_Put(&v1, 1, MPI_INT64_T, right, 4, 1, MPI_INT64_T, win);
    MPI_Win_flush(right, win);
    MPI_Get(&got, 1, MPI_INT64_T, right, 4, 1, MPI_INT64_T, win);
    MPI_Win_flush(right, win);
    MPI_Put(&v2, 1, MPI_INT64_T, right, 4, 1, MPI_INT64_T, win);
    MPI_Win_flush(right, win);
    MPI_Get(&got2, 1, MPI_INT64_T, right, 4, 1, MPI_INT64_T, win);
    MPI_Win_flush(right, win);
    int ok = got == v1 && got2 == v2;
    if (!ok)
        tap_diag("read %lld then %lld from rank %d, expected %lld then %lld", (long long)got,
                 (long long)got2, right, (long long)v1, (long long)v2);
    tap_ok(ok, "MPI_Put, flush, MPI_Get sees it; a second put + flush overwrites it");
}

static void across_epochs(void)
{
    int64_t v = conf_val(3, conf_rank, 0), got = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(&v, 1, MPI_INT64_T, right, 5, 1, MPI_INT64_T, win);
    MPI_Win_unlock(right, win);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Get(&got, 1, MPI_INT64_T, right, 5, 1, MPI_INT64_T, win);
    MPI_Win_unlock(right, win);
    tap_is_long(got, v, "MPI_Put in one lock epoch is seen by MPI_Get in the next");
}

static void unordered_window(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    int64_t *b;
    MPI_Win w;
    conf_win_allocate(2 * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD, &b, &w);
    MPI_Info_free(&info);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, w);
    b[0] = b[1] = 0;
    MPI_Win_unlock(conf_rank, w);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w);
    int64_t v, got = -1;
    for (int k = 1; k <= N; k++) {
        v = k;
        MPI_Accumulate(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, MPI_REPLACE, w);
        MPI_Win_flush(right, w);
    }
    MPI_Fetch_and_op(NULL, &got, MPI_INT64_T, right, 0, MPI_NO_OP, w);
    MPI_Win_flush(right, w);
    MPI_Win_unlock_all(w);
    tap_is_long(got, N, "accumulate_ordering=none: REPLACE 1..%d with a flush after each reads %d",
                N, N);
    nbh_barrier(MPI_COMM_WORLD);
    conf_win_free(&w);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    right = conf_right();
    tap_plan(7);
    conf_win_allocate(8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    for (int i = 0; i < 8; i++)
        base[i] = 1000 * i;
    MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    same_origin_accumulates();
    puts_and_gets();
    MPI_Win_unlock_all(win);
    across_epochs();
    nbh_barrier(MPI_COMM_WORLD);
    conf_win_free(&win);
    unordered_window();
    return conf_done();
}
