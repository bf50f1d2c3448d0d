/* contention.c — atomicity under contention: every rank does N MPI_Fetch_and_op(+1) on the same
 * element of rank 0 (under lock_all + flush, then under per-operation shared locks), so the final
 * value is size*N and the values fetched by all ranks are exactly {0 .. size*N-1} (gathered and
 * checked for duplicates at rank 0); then N MPI_Accumulate(SUM) of integers and of doubles into
 * one element each, which must lose no update.
 *   contention [N]   operations per rank and phase (default 200) */
#include "conf.h"

static int64_t *base;
static MPI_Win win;
static int nops = 200;

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Rank 0 checks that the gathered fetch results are a permutation of 0..total-1. */
static int check_fetched(const int64_t *mine, const char *what)
{
    long total = (long)conf_size * nops;
    int64_t *all = conf_rank == 0 ? malloc(total * sizeof *all) : NULL;
    MPI_Request r;
    MPI_Igather(mine, nops, MPI_INT64_T, all, nops, MPI_INT64_T, 0, MPI_COMM_WORLD, &r);
    nbh_wait(&r);
    int ok = 1;
    if (conf_rank == 0) {
        qsort(all, total, sizeof *all, cmp64);
        for (long i = 0; i < total && ok; i++) {
            if (all[i] != i) {
                tap_diag("%s: sorted fetched value %ld is %lld (%s)", what, i, (long long)all[i],
                         i > 0 && all[i] == all[i - 1] ? "a duplicate: two ranks fetched it"
                                                       : "a value is missing");
                ok = 0;
            }
        }
        free(all);
    }
    return ok;
}

static int64_t read_elem(int disp)
{
    int64_t v = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&v, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, win);
    MPI_Win_unlock(0, win);
    return v;
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    if (argc > 1)
        nops = atoi(argv[1]);
    if (nops < 1)
        tap_bail_out("usage: contention [N > 0]");
    tap_plan(6);
    conf_win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    memset(base, 0, 4 * sizeof(int64_t));
    MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);
    int64_t *got = malloc(nops * sizeof *got), one = 1;
    long total = (long)conf_size * nops;

    /* lock_all + flush */
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < nops; k++) {
        MPI_Fetch_and_op(&one, &got[k], MPI_INT64_T, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);
    tap_is_long(read_elem(0), total, "%d ranks x %d MPI_Fetch_and_op(+1) under lock_all: total",
                conf_size, nops);
    tap_ok(check_fetched(got, "lock_all"),
           "lock_all: the fetched values are exactly 0..%ld, no duplicates", total - 1);

    /* a shared lock per operation */
    for (int k = 0; k < nops; k++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Fetch_and_op(&one, &got[k], MPI_INT64_T, 0, 1, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    nbh_barrier(MPI_COMM_WORLD);
    tap_is_long(read_elem(1), total,
                "%d ranks x %d MPI_Fetch_and_op(+1), each in its own shared lock: total", conf_size,
                nops);
    tap_ok(check_fetched(got, "shared locks"),
           "shared locks: the fetched values are exactly 0..%ld, no duplicates", total - 1);

    /* MPI_Accumulate(SUM) of an integer and of a double, flushed every 10 operations */
    double half = 0.5;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < nops; k++) {
        MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, MPI_SUM, win);
        MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, 3, 1, MPI_DOUBLE, MPI_SUM, win);
        if (k % 10 == 9)
            MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);
    tap_is_long(read_elem(2), total, "%d ranks x %d MPI_Accumulate(SUM, +1) on MPI_INT64_T",
                conf_size, nops);
    double d = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&d, 1, MPI_DOUBLE, 0, 3, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(0, win);
    tap_is_double(d, 0.5 * total, 0, "%d ranks x %d MPI_Accumulate(SUM, +0.5) on MPI_DOUBLE",
                  conf_size, nops);
    free(got);
    conf_win_free(&win);
    return conf_done();
}
