/* sync_passive.c — passive-target synchronization: exclusive and shared MPI_Win_lock/unlock,
 * mutual exclusion of exclusive locks (get + put increments of a counter lose no update),
 * MPI_Win_lock_all with MPI_Win_flush / flush_all (remote completion) and flush_local /
 * flush_local_all (the origin buffer is reusable), MPI_Win_sync making local stores and remote
 * puts visible both ways, MPI_MODE_NOCHECK, and a lock on one's own window. */
#include "conf.h"

#define N          16
#define INCREMENTS 20

static int *base;
static MPI_Win win;

/* Read our own window inside a shared lock on ourselves (valid in either memory model). */
static int check_own(const int *exp, int n, int off)
{
    MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
    int ok = conf_check_int(base + off, exp, n, "rank %d's window from element %d", conf_rank, off);
    MPI_Win_unlock(conf_rank, win);
    return ok;
}

static void reset(int salt)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    conf_fill_int(base, N, salt, conf_rank);
    MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);
}

static void exclusive_put(void)
{
    reset(1);
    int out[N], exp[N];
    conf_fill_int(out, N, 2, conf_rank);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win);
    MPI_Put(out, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    MPI_Win_unlock(conf_right(), win);
    nbh_barrier(MPI_COMM_WORLD);
    conf_fill_int(exp, N, 2, conf_left());
    tap_ok(check_own(exp, N, 0), "exclusive lock: MPI_Put is at the target once unlock returns");
}

static void shared_get(void)
{
    reset(3);
    int got[N], exp[N];
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(got, N, MPI_INT, 0, 0, N, MPI_INT, win);
    MPI_Win_unlock(0, win);
    conf_fill_int(exp, N, 3, 0);
    tap_ok(conf_check_int(got, exp, N, "the MPI_Get result from rank 0"),
           "shared lock: all ranks MPI_Get rank 0's window concurrently");
    nbh_barrier(MPI_COMM_WORLD);
}

/* Non-atomic increments (get, flush, put) of rank 0's element 0 under an exclusive lock. */
static void exclusive_counter(void)
{
    if (conf_rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        base[0] = 0;
        MPI_Win_unlock(0, win);
    }
    nbh_barrier(MPI_COMM_WORLD);
    for (int k = 0; k < INCREMENTS; k++) {
        int c = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        c++;
        MPI_Put(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    nbh_barrier(MPI_COMM_WORLD);
    int final = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&final, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
    tap_is_long(final, (long)conf_size * INCREMENTS,
                "exclusive lock excludes: %d ranks x %d get+put increments of one counter",
                conf_size, INCREMENTS);
}

static void lock_all_flush(void)
{
    reset(4);
    int out[N], *got = malloc(conf_size * sizeof *got), exp[N];
    conf_fill_int(out, N, 5, conf_rank);
    MPI_Win_lock_all(0, win);
    /* Element `rank` of every target gets our value; flush each target separately. */
    for (int t = 0; t < conf_size; t++) {
        MPI_Put(&out[t % N], 1, MPI_INT, t, conf_rank % N, 1, MPI_INT, win);
        MPI_Win_flush(t, win);
    }
    for (int t = 0; t < conf_size; t++)
        MPI_Get(&got[t], 1, MPI_INT, t, conf_rank % N, 1, MPI_INT, win);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    int *want = malloc(conf_size * sizeof *want);
    for (int t = 0; t < conf_size; t++)
        want[t] = out[t % N];
    tap_ok(conf_check_int(got, want, conf_size, "rank %d's read-back (index = target)", conf_rank),
           "lock_all: MPI_Put + MPI_Win_flush to each rank, then MPI_Get + MPI_Win_flush_all");
    nbh_barrier(MPI_COMM_WORLD);
    conf_fill_int(exp, N, 4, conf_rank);
    if (conf_size <= N)
        for (int r = 0; r < conf_size; r++)
            exp[r] = (int)conf_val(5, r, conf_rank % N);
    tap_ok(check_own(exp, N, 0), "lock_all: each rank's window holds every origin's put");
    free(got);
    free(want);
}

/* After flush_local the origin buffer may be overwritten; the target still gets the old data. */
static void flush_local(int all)
{
    reset(6);
    int out[N], back[N], sent[N];
    conf_fill_int(out, N, 7 + all, conf_rank);
    memcpy(sent, out, sizeof sent);
    MPI_Win_lock_all(0, win);
    MPI_Put(out, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    if (all)
        MPI_Win_flush_local_all(win);
    else
        MPI_Win_flush_local(conf_right(), win);
    for (int i = 0; i < N; i++)
        out[i] = -7;
    MPI_Win_flush(conf_right(), win);
    MPI_Get(back, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    MPI_Win_flush(conf_right(), win);
    MPI_Win_unlock_all(win);
    tap_ok(conf_check_int(back, sent, N, "what was read back from rank %d", conf_right()),
           "%s: overwriting the origin buffer afterwards does not change what was put",
           all ? "MPI_Win_flush_local_all" : "MPI_Win_flush_local");
    nbh_barrier(MPI_COMM_WORLD);
}

/* MPI_Win_sync inside lock_all: local stores -> remote get, remote put -> local loads. */
static void win_sync(void)
{
    int got[N], exp[N], out[4];
    MPI_Win_lock_all(0, win);
    conf_fill_int(base, N, 9, conf_rank);
    MPI_Win_sync(win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Get(got, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    MPI_Win_flush(conf_right(), win);
    conf_fill_int(exp, N, 9, conf_right());
    tap_ok(conf_check_int(got, exp, N, "the MPI_Get result from rank %d", conf_right()),
           "lock_all: local stores + MPI_Win_sync + barrier are seen by a remote MPI_Get");
    nbh_barrier(MPI_COMM_WORLD);

    conf_fill_int(out, 4, 10, conf_rank);
    MPI_Put(out, 4, MPI_INT, conf_right(), 4, 4, MPI_INT, win);
    MPI_Win_flush(conf_right(), win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int i = 0; i < N; i++)
        exp[i] = i >= 4 && i < 8 ? (int)conf_val(10, conf_left(), i - 4)
                                 : (int)conf_val(9, conf_rank, i);
    tap_ok(conf_check_int(base, exp, N, "rank %d's window, loaded directly", conf_rank),
           "lock_all: a remote MPI_Put + flush + barrier + MPI_Win_sync is seen by local loads");
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);
}

static void nocheck_and_self(void)
{
    reset(11);
    int got[N], exp[N];
    /* Only shared locks are taken in this phase, so MPI_MODE_NOCHECK is correct. */
    MPI_Win_lock(MPI_LOCK_SHARED, conf_right(), MPI_MODE_NOCHECK, win);
    MPI_Get(got, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    MPI_Win_unlock(conf_right(), win);
    conf_fill_int(exp, N, 11, conf_right());
    tap_ok(conf_check_int(got, exp, N, "the MPI_Get result from rank %d", conf_right()),
           "MPI_Win_lock(SHARED, MPI_MODE_NOCHECK): MPI_Get works");
    nbh_barrier(MPI_COMM_WORLD);

    int out[N];
    conf_fill_int(out, N, 12, conf_rank);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    MPI_Put(out, N, MPI_INT, conf_rank, 0, N, MPI_INT, win);
    MPI_Win_unlock(conf_rank, win);
    tap_ok(check_own(out, N, 0), "exclusive lock on one's own window: MPI_Put to self");
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(11);
    conf_win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    exclusive_put();
    shared_get();
    exclusive_counter();
    lock_all_flush();
    flush_local(0);
    flush_local(1);
    win_sync();
    nocheck_and_self();
    conf_win_free(&win);
    return conf_done();
}
