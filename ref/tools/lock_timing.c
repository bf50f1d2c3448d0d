/* lock_timing.c — passive-target synchronization in a tight loop, for comparing two builds of
 * libnbrma on the same machine in one sitting (ref/tools/lock-timing.sh; docs/ref.md, "What
 * issue #9 cost"). D7 measures the same calls through the benchmark harness, whose per-sample
 * timer calls add noise of the size of the differences looked for here.
 *
 *   mpiexec -n 2 lock_timing [N [REPS]]
 *
 * Rank 0 runs N iterations of each case against rank 1 (lock_all: both ranks) on an allocated
 * window (the flush case inside one exclusive lock, with nothing pending), REPS times, and prints per case the best of the REPS means, in µs per iteration.
 * Rank 1 waits in a barrier. The put case verifies that the last value arrived. */
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

enum { EXCL, SHARED, ALL, PUT, FLUSH, NCASES };
static const char *const names[NCASES] = {"lock excl+unlock", "lock shared+unlock",
                                          "lock_all+unlock_all", "lock excl+put 8 B+unlock",
                                          "flush (lock held)"};

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
    for (int c = 0; c < NCASES; c++) {
        double best = 1e30;
        if (me == 0) {
            if (c == FLUSH)
                CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            for (long i = 0; i < n / 10; i++) /* warm up */
                one(c, win, &v);
            for (long r = 0; r < reps; r++) {
                double t0 = MPI_Wtime();
                for (long i = 0; i < n; i++)
                    one(c, win, &v);
                double t = (MPI_Wtime() - t0) / (double)n * 1e6;
                best = t < best ? t : best;
            }
            if (c == FLUSH)
                CHECK(MPI_Win_unlock(1, win));
            printf("%-26s %8.4f us\n", names[c], best);
            fflush(stdout);
        }
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
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
