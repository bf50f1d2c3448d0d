/* contention_lock.c — a spinlock built from MPI_Compare_and_swap (lock word: an MPI_INT on rank
 * 0, 0 = free, rank+1 = held) protects a non-atomic read-modify-write (MPI_Get, flush, +1,
 * MPI_Put, flush) of a counter on the last rank; the lock is released with
 * MPI_Accumulate(MPI_REPLACE). With N critical sections per rank the counter must end at size*N,
 * every value 0..size*N-1 must have been read by exactly one critical section, and the lock word
 * must always name its holder while held (read with MPI_Fetch_and_op(MPI_NO_OP)).
 *   contention_lock [N]   critical sections per rank (default 50) */
#include "relax.h"
#include "conf.h"

static int *base;
static MPI_Win win;

static int cmpint(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    int n = argc > 1 ? atoi(argv[1]) : 50;
    if (n < 1)
        tap_bail_out("usage: contention_lock [N > 0]");
    tap_plan(4);
    conf_win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    memset(base, 0, 4 * sizeof(int));
    MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);

    const int lock_rank = 0, data_rank = conf_size - 1, me = conf_rank + 1, zero = 0;
    int *seen = malloc(n * sizeof *seen), wrong_holder = 0;
    long spins = 0;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < n; k++) {
        for (;;) { /* acquire */
            int prev = -1;
            MPI_Compare_and_swap(&me, &zero, &prev, MPI_INT, lock_rank, 0, win);
            MPI_Win_flush(lock_rank, win);
            if (prev == 0)
                break;
            spins++;
            nbh_relax(); /* the holder may need this core */
        }
        int holder = -1, c = -1;
        MPI_Fetch_and_op(NULL, &holder, MPI_INT, lock_rank, 0, MPI_NO_OP, win);
        MPI_Get(&c, 1, MPI_INT, data_rank, 1, 1, MPI_INT, win);
        MPI_Win_flush_all(win);
        if (holder != me && wrong_holder++ == 0)
            tap_diag("rank %d in its critical section %d: the lock word says %d", conf_rank, k,
                     holder);
        seen[k] = c;
        c++;
        MPI_Put(&c, 1, MPI_INT, data_rank, 1, 1, MPI_INT, win);
        MPI_Win_flush(data_rank, win);
        MPI_Accumulate(&zero, 1, MPI_INT, lock_rank, 0, 1, MPI_INT, MPI_REPLACE, win); /* release */
        MPI_Win_flush(lock_rank, win);
    }
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);

    int final = -1, lockword = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, data_rank, 0, win);
    MPI_Get(&final, 1, MPI_INT, data_rank, 1, 1, MPI_INT, win);
    MPI_Win_unlock(data_rank, win);
    MPI_Win_lock(MPI_LOCK_SHARED, lock_rank, 0, win);
    MPI_Get(&lockword, 1, MPI_INT, lock_rank, 0, 1, MPI_INT, win);
    MPI_Win_unlock(lock_rank, win);
    long total = (long)conf_size * n, all_spins = spins;
    nbh_allreduce(&all_spins, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (conf_rank == 0)
        tap_diag("%ld failed acquisition attempts in all", all_spins);
    tap_is_long(final, total, "CAS spinlock: %d ranks x %d get+put increments, counter", conf_size,
                n);
    tap_ok(wrong_holder == 0, "CAS spinlock: the lock word names the holder inside every "
                              "critical section");
    tap_is_long(lockword, 0, "CAS spinlock: the lock is free at the end");

    int *all = conf_rank == 0 ? malloc(total * sizeof *all) : NULL;
    MPI_Request r;
    MPI_Igather(seen, n, MPI_INT, all, n, MPI_INT, 0, MPI_COMM_WORLD, &r);
    nbh_wait(&r);
    int ok = 1;
    if (conf_rank == 0) {
        qsort(all, total, sizeof *all, cmpint);
        for (long i = 0; i < total && ok; i++)
            if (all[i] != i) {
                tap_diag("sorted counter value %ld read in a critical section is %d", i, all[i]);
                ok = 0;
            }
        free(all);
    }
    tap_ok(ok, "CAS spinlock: critical sections read each counter value 0..%ld exactly once",
           total - 1);
    free(seen);
    conf_win_free(&win);
    return conf_done();
}
