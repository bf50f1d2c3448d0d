/* test_passive.c — passive-target progress across nodes (issue 10 §2 and §5).
 *
 * Across nodes the target's CPU carries out what reaches it (transport/am.c). Rank 1, the
 * target, computes without any MPI call while rank 0 locks it, puts and unlocks.
 * With NBRMA_ASYNC_PROGRESS=1 the progress thread serves the requests while the target computes;
 * without it the epoch waits until the target calls MPI again — the documented behaviour
 * (docs/ref.md, "Across nodes"), as MPICH without its asynchronous progress.
 *
 * Both are asserted as orders of events, never as elapsed time under a bound (a busy machine
 * stretches every time; "< 5 ms" once failed at 30.6 ms under load):
 *   thread:   rank 0 runs two epochs back to back (lock, put v, unlock; lock, put v', unlock);
 *             rank 1 computes until it sees v' in its window memory. Seeing it means the first
 *             unlock returned and the second put was applied while rank 1 made no MPI call. The
 *             computation is bounded by nbh_limit(10 s) only so that a broken thread fails.
 *   nothread: rank 1 computes D = 20 ms (scaled by nbh_timeout_scale()) and then checks its
 *             window memory: the put must not have arrived; rank 0's unlock must return after
 *             rank 1's computation ended (CLOCK_MONOTONIC, one clock for both ranks: virtual
 *             nodes are processes of one machine). A round in which rank 0 began its epoch only
 *             after rank 1 stopped computing (rank 0 descheduled that long) proves nothing and
 *             is counted apart; at least one round of ROUNDS must be a real one.
 * Run on 2 ranks with NBRMA_RANKS_PER_NODE=1; argument: "thread" or "nothread" (what the
 * testlist line set in NBRMA_ASYNC_PROGRESS). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbrma.h"
#include "tap.h"
#include "timing.h"

#define D      0.020
#define ROUNDS 7

static double now(void) /* one clock for every process of the machine */
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long load_long(const long *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    tap_init(MPI_COMM_WORLD);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE");
    int thread = argc > 1 && !strcmp(argv[1], "thread");
    if (n != 2 || !rpn || strcmp(rpn, "1") != 0 || argc != 2 ||
        (!thread && strcmp(argv[1], "nothread") != 0))
        tap_bail_out("run on 2 ranks with NBRMA_RANKS_PER_NODE=1 and an argument thread|nothread "
                     "(see ref/tests/testlist)");
    const char *ap = getenv("NBRMA_ASYNC_PROGRESS");
    if (thread != (ap && atoi(ap) > 0))
        tap_bail_out("argument %s disagrees with NBRMA_ASYNC_PROGRESS=%s", argv[1],
                     ap ? ap : "(unset)");
    MPIX_Nbrma_set_impl("ref");
    tap_plan(thread ? 3 : 4);

    long *base;
    MPI_Win win;
    MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    base[0] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    const double limit = nbh_limit(10.0), d = nbh_limit(D);
    int served = 0, reached = 0, after = 0, real = 0;
    double worst = 0.0;
    for (int k = 0; k < ROUNDS; k++) {
        const long v = 100 + 2 * k, v2 = v + 1;
        double times[2] = {0, 0}; /* rank 0: epoch start, unlock return; rank 1: compute end */
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 1) { /* compute, no MPI call */
            double t0 = now();
            volatile double x = 0;
            if (thread) {
                while (load_long(&base[0]) != v2 && now() - t0 < limit)
                    x += 1;
                served += load_long(&base[0]) == v2;
                if (now() - t0 > worst)
                    worst = now() - t0;
            } else {
                while (now() - t0 < d)
                    x += 1;
                reached += load_long(&base[0]) == v;
            }
            times[0] = now();
        } else {
            times[0] = now();
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
            MPI_Win_unlock(1, win);
            times[1] = now();
            if (thread) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(&v2, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
                MPI_Win_unlock(1, win);
            }
        }
        /* rank 0 learns when rank 1 stopped computing */
        double end = times[0];
        MPI_Bcast(&end, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
        if (me == 0 && !thread && times[0] < end) {
            real++;
            after += times[1] >= end;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    long last = base[0];
    MPI_Bcast(&last, 1, MPI_LONG, 1, MPI_COMM_WORLD);
    long want = 100 + 2 * (ROUNDS - 1) + (thread ? 1 : 0);
    tap_ok(last == want, "the target holds the last round's put (%ld, expected %ld)", last, want);
    int counts[4] = {served, reached, after, real};
    MPI_Allreduce(MPI_IN_PLACE, counts, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (thread) {
        if (me == 0)
            tap_diag("progress thread: the target saw the second epoch's put after at most %.3f ms of "
                 "computation", worst * 1e3);
        tap_ok(counts[0] == ROUNDS,
               "with the progress thread both epochs completed while the target computed without "
               "an MPI call, in %d of %d rounds (limit %.0f s)",
               counts[0], ROUNDS, limit);
    } else {
        if (me == 0)
            tap_diag("no progress thread: %d of %d rounds had rank 0's epoch begin while the target "
                 "computed (%.0f ms)",
                 counts[3], ROUNDS, d * 1e3);
        tap_ok(counts[1] == 0,
               "without it no put reached the target's memory while it computed (%d of %d rounds "
               "did)",
               counts[1], ROUNDS);
        tap_ok(counts[3] > 0 && counts[2] == counts[3],
               "and the epoch ended only after the target's computation, at its next MPI call "
               "(%d of %d real rounds)",
               counts[2], counts[3]);
    }
    MPI_Win_free(&win);
    tap_ok(1, "the window is freed");
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
