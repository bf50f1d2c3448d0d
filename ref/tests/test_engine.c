/* test_engine.c — the progress engine's work does not grow with the number of waiting epochs or
 * requests (issue #9 item 5; paper 000 §VII-D). Counted, not timed: the engine's own counters
 * (nbr_engine_stats) say how often it advanced an epoch, polled a word and carried out a call,
 * which is deterministic where a clock is not.
 *
 * 2 ranks. Rank 1 (target) posts late; rank 0 opens and closes an access epoch toward it, then
 * queues K lock epochs (ilock, accumulate, iunlock) behind it, plus F nonblocking flushes in one
 * of them, and drains everything with one MPI_Waitall once rank 1 posted. For K = 100 and
 * K = 3000 each epoch must be advanced a bounded number of times (the old engine rescanned the
 * queue on every call: quadratic), each progress call must poll a bounded number of words, and
 * the result must be right (K accumulates landed). */
#include <stdio.h>
#include <stdlib.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"

static void one_round(MPI_Win win, long *base, int K, int F, MPI_Group peer)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long one = 1;
    nbr_engine_stats_t s0 = nbr_engine_stats;
    int nreq = 2 + 2 * K + F;
    MPI_Request *r = malloc((size_t)nreq * sizeof *r);
    MPI_Status *st = malloc((size_t)nreq * sizeof *st);
    int deferred = -1, pending = -1;
    if (me == 0) {
        int n = 0;
        MPIX_Win_istart(peer, 0, win, &r[n++]);
        MPI_Put(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
        MPIX_Win_icomplete(win, &r[n++]);
        for (int i = 0; i < K; i++) {
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &r[n++]);
            MPI_Accumulate(&one, 1, MPI_LONG, 1, 1, 1, MPI_LONG, MPI_SUM, win);
            if (i == K - 1)
                for (int f = 0; f < F; f++)
                    MPIX_Win_iflush(1, win, &r[n++]);
            MPIX_Win_iunlock(1, win, &r[n++]);
        }
        MPIX_Win_epoch_counts(win, &deferred, &pending);
        MPI_Send(&one, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD); /* now post */
        MPI_Waitall(nreq, r, st);
    } else {
        long x;
        MPI_Request rr;
        MPI_Irecv(&x, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, &rr);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
    }
    nbr_engine_stats_t s1 = nbr_engine_stats;
    unsigned long adv = s1.epochs_advanced - s0.epochs_advanced;
    unsigned long polls = s1.sources_polled - s0.sources_polled;
    unsigned long calls = s1.progress_calls - s0.progress_calls;
    unsigned long replayed = s1.records_replayed - s0.records_replayed;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        tap_ok(deferred == K && pending == K + 1,
               "K=%d: behind the late post all %d lock epochs wait deferred (%d), %d pending (%d)",
               K, K, deferred, K + 1, pending);
        tap_ok(adv <= 6UL * (unsigned long)(K + 1),
               "K=%d: %lu epoch advances for %d epochs (bounded per epoch: <= 6 each)", K, adv,
               K + 1);
        tap_ok(polls <= 3 * calls,
               "K=%d: %lu word polls in %lu progress calls (bounded per call: <= 3 each)", K,
               polls, calls);
        tap_ok(replayed == (unsigned long)K + 1, "K=%d: every recorded call carried out once (%lu)",
               K, replayed);
    } else {
        for (int i = 0; i < 4; i++) /* the origin's points */
            tap_ok(1, "K=%d", K);
    }
    long got = K;
    if (me == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        got = base[1];
        base[1] = 0;
        MPI_Win_unlock(1, win);
    }
    tap_is_long(got, K, "K=%d: the %d accumulates all landed at the target", K, K);
    MPI_Barrier(MPI_COMM_WORLD);
    free(r);
    free(st);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long *base;
    MPI_Win win;
    MPI_Win_allocate(16 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Group world, peer;
    int other = 1 - me;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &other, &peer);
    one_round(win, base, 100, 10, peer);
    one_round(win, base, 3000, 1000, peer);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
