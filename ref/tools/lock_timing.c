/* lock_timing.c — passive-target synchronization in a tight loop, for comparing two builds of
 * libnbrma on the same machine in one sitting (ref/tools/lock-timing.sh; docs/ref.md, "What
 * issue #9 cost"). D7 measures the same calls through the benchmark harness, whose per-sample
 * timer calls add noise of the size of the differences looked for here.
 *
 *   mpiexec -n 2 lock_timing [N [REPS]]
 *
 * Rank 0 runs N iterations of each case against rank 1 (lock_all: both ranks) on an allocated
 * window (the flush case inside one exclusive lock, with nothing pending), REPS times, and prints per case the best of the REPS means, in µs per iteration (the cases interleaved in each repetition).
 * Rank 1 waits in a barrier. The put case verifies that the last value arrived.
 * The nonblocking cases (issue 24) are the same epochs through libnbrma's MPIX_Win_ilock /
 * iunlock (two MPI_Wait) and ilock_all / iunlock_all (one MPI_Waitall); they are skipped when the
 * preloaded library has no such calls (the references are weak). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            fprintf(stderr, "lock_timing: %s failed (%d)\n", #call, rc_);                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

extern int MPIX_Win_ilock(int, int, int, MPI_Win, MPI_Request *) __attribute__((weak));
extern int MPIX_Win_iunlock(int, MPI_Win, MPI_Request *) __attribute__((weak));
extern int MPIX_Win_ilock_all(int, MPI_Win, MPI_Request *) __attribute__((weak));
extern int MPIX_Win_iunlock_all(MPI_Win, MPI_Request *) __attribute__((weak));

enum { EXCL, SHARED, ALL, PUT, FLUSH, NB_EXCL, NB_PUT, NB_ALL, NB_ALL_PUT, ALL_PUT, NCASES };
static const char *const names[NCASES] = {"lock excl+unlock",
                                          "lock shared+unlock",
                                          "lock_all+unlock_all",
                                          "lock excl+put 8 B+unlock",
                                          "flush (lock held)",
                                          "ilock excl+iunlock+2 wait",
                                          "ilock excl+put 8 B+iunlock+2 wait",
                                          "ilock_all+iunlock_all+waitall",
                                          "ilock_all+put 8 B+iunlock_all+waitall",
                                          "lock_all+put 8 B+unlock_all"};

static void one(int c, MPI_Win win, long *v)
{
    switch (c) {
    case EXCL:
    case SHARED:
        CHECK(MPI_Win_lock(c == EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 1, 0, win));
        CHECK(MPI_Win_unlock(1, win));
        break;
    case ALL:
        CHECK(MPI_Win_lock_all(0, win));
        CHECK(MPI_Win_unlock_all(win));
        break;
    case FLUSH:
        CHECK(MPI_Win_flush(1, win));
        break;
    case PUT:
        ++*v;
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        CHECK(MPI_Put(v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK(MPI_Win_unlock(1, win));
        break;
    case ALL_PUT:
        ++*v;
        CHECK(MPI_Win_lock_all(0, win));
        CHECK(MPI_Put(v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK(MPI_Win_unlock_all(win));
        break;
    case NB_EXCL:
    case NB_PUT: {
        MPI_Request r[2];
        if (c == NB_PUT)
            ++*v;
        CHECK(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &r[0]));
        if (c == NB_PUT)
            CHECK(MPI_Put(v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK(MPIX_Win_iunlock(1, win, &r[1]));
        CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        CHECK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        break;
    }
    case NB_ALL:
    case NB_ALL_PUT: {
        MPI_Request r[2];
        MPI_Status st[2]; /* (MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
        if (c == NB_ALL_PUT)
            ++*v;
        CHECK(MPIX_Win_ilock_all(0, win, &r[0]));
        if (c == NB_ALL_PUT)
            CHECK(MPI_Put(v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK(MPIX_Win_iunlock_all(win, &r[1]));
        CHECK(MPI_Waitall(2, r, st));
        break;
    }
    }
}

static long arg(int argc, char **argv, int i, long dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    long x = strtol(argv[i], &end, 10);
    if (*end || x < 1) {
        fprintf(stderr, "lock_timing: '%s' is not a positive count (usage: lock_timing [N [REPS]])\n",
                argv[i]);
        exit(2);
    }
    return x;
}

int main(int argc, char **argv)
{
    CHECK(MPI_Init(&argc, &argv));
    int me, np;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    long n = arg(argc, argv, 1, 200000), reps = arg(argc, argv, 2, 7);
    if (np != 2) {
        if (me == 0)
            fprintf(stderr, "lock_timing: run it on 2 ranks (got %d)\n", np);
        MPI_Finalize();
        return 2;
    }
    long *base, v = 0;
    MPI_Win win;
    CHECK(MPI_Win_allocate(64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                           &win));
    base[0] = 0;
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int ok = 1;
    int have_nb = MPIX_Win_ilock && MPIX_Win_iunlock && MPIX_Win_ilock_all && MPIX_Win_iunlock_all;
    double best[NCASES];
    for (int c = 0; c < NCASES; c++)
        best[c] = 1e30;
    /* Cases interleaved within each repetition: the load of a shared machine drifts over seconds,
     * and the ratios between cases are what is compared. */
    for (long r = -1; r < reps && me == 0; r++) {
        for (int c = 0; c < NCASES; c++) {
            if (c >= NB_EXCL && c <= NB_ALL_PUT && !have_nb)
                continue; /* the preloaded library has no nonblocking epochs */
            if (c == FLUSH)
                CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            long iters = r < 0 ? n / 10 : n; /* r = -1: warm-up */
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++)
                one(c, win, &v);
            double t = (MPI_Wtime() - t0) / (double)iters * 1e6;
            if (r >= 0)
                best[c] = t < best[c] ? t : best[c];
            if (c == FLUSH)
                CHECK(MPI_Win_unlock(1, win));
        }
    }
    for (int c = 0; c < NCASES && me == 0; c++)
        if (best[c] < 1e30)
            printf("%-38s %8.4f us\n", names[c], best[c]);
    fflush(stdout);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(MPI_Bcast(&v, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    if (me == 1) {
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        ok = base[0] == v;
        CHECK(MPI_Win_unlock(1, win));
        if (!ok)
            fprintf(stderr, "lock_timing: rank 1 holds %ld, expected %ld\n", base[0], v);
    }
    CHECK(MPI_Win_free(&win));
    CHECK(MPI_Finalize());
    return ok ? 0 : 1;
}
