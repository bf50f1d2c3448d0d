/* test_sync.c — ref's synchronization internals under contention (run on 4 ranks): exclusive
 * locks exclude each other (no lost update of a non-atomic read-modify-write), lock_all and
 * exclusive locks exclude each other through the global word of paper 001 §2.3, the words return
 * to zero afterwards, and the PSCW matching counters of paper 000 §VII-B count every epoch
 * exactly once, never reset, across epochs with different groups and with MPI_MODE_NOCHECK; the
 * fence counters count the fences that closed an epoch. */
#include <stddef.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"

#define ROUNDS 200

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long *base;
    MPI_Win win;
    MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    nbr_win_t *w = nbr_win_find(win);
    tap_ok(w != NULL, "the window is served by ref");

    /* Exclusive lock: get, increment, put on rank 0 — unprotected, this loses updates. */
    for (int i = 0; i < ROUNDS; i++) {
        long v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long total = 0;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        total = base[0];
        MPI_Win_unlock(0, win);
    }
    MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    tap_is_long(total, (long)p * ROUNDS, "%d ranks x %d exclusive get+put increments: none lost", p,
                ROUNDS);

    /* Exclusive locks on rank 1 interleaved with lock_all epochs that read both counters of
     * rank 1: a lock_all holder must never see the two halves of an exclusive update apart. */
    int torn = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if ((i + me) % 2) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            long v[2];
            MPI_Get(v, 2, MPI_LONG, 1, 0, 2, MPI_LONG, win);
            MPI_Win_flush(1, win);
            v[0]++;
            v[1]++;
            MPI_Put(&v[0], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
            MPI_Win_flush(1, win);
            MPI_Put(&v[1], 1, MPI_LONG, 1, 1, 1, MPI_LONG, win);
            MPI_Win_unlock(1, win);
        } else {
            long v[2];
            MPI_Win_lock_all(0, win);
            MPI_Get(v, 2, MPI_LONG, 1, 0, 2, MPI_LONG, win);
            MPI_Win_unlock_all(win);
            torn += v[0] != v[1];
        }
    }
    tap_is_long(torn, 0, "lock_all readers never overlap an exclusive writer (no torn pair)");
    MPI_Barrier(MPI_COMM_WORLD);
    tap_ok(__atomic_load_n(&w->t[0].ctl->global, __ATOMIC_ACQUIRE) == 0 &&
               __atomic_load_n(&w->t[me].ctl->lock, __ATOMIC_ACQUIRE) == 0 &&
               __atomic_load_n(&w->t[me].ctl->acc_next, __ATOMIC_ACQUIRE) ==
                   __atomic_load_n(&w->t[me].ctl->acc_serving, __ATOMIC_ACQUIRE),
           "after all epochs the global and local lock words are 0 again, the accumulate lock "
           "free (every ticket served)");

    /* PSCW on a ring with alternating groups; every third epoch with NOCHECK after a barrier. */
    MPI_Group world, g1, g2;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int right = (me + 1) % p, left = (me + p - 1) % p;
    MPI_Group_incl(world, 1, &right, &g1); /* I access my right neighbour */
    MPI_Group_incl(world, 1, &left, &g2);  /* I expose to my left neighbour */
    int bad = 0;
    for (int i = 0; i < ROUNDS; i++) {
        int nocheck = i % 3 == 2;
        MPI_Win_post(g2, 0, win);
        if (nocheck)
            MPI_Barrier(MPI_COMM_WORLD); /* every post happened: NOCHECK is legal */
        MPI_Win_start(g1, nocheck ? MPI_MODE_NOCHECK : 0, win);
        long v = (long)i * 1000 + me;
        MPI_Put(&v, 1, MPI_LONG, right, 1, 1, MPI_LONG, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        bad += base[1] != (long)i * 1000 + left;
    }
    tap_is_long(bad, 0, "%d PSCW epochs: each exposure sees exactly its matching access's put",
                ROUNDS);
    tap_ok(w->t[right].a == ROUNDS && w->t[left].e == ROUNDS,
           "access ids a and exposure ids e count %d epochs each", ROUNDS);
    tap_ok(w->t[me].peer[right].posted == ROUNDS && w->t[me].peer[left].completed == ROUNDS,
           "the counters peers wrote one-sidedly (posted by my target, completed by my origin) "
           "reached %d, never reset",
           ROUNDS);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);
    MPI_Group_free(&world);

    /* Fence barrier: many generations, data from every rank visible after each. */
    bad = 0;
    MPI_Win_fence(0, win);
    for (int i = 0; i < ROUNDS; i++) {
        long v = i + me;
        MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, win);
        MPI_Win_fence(0, win);
        bad += base[0] != i + left;
        MPI_Win_fence(0, win);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_is_long(bad, 0, "%d fence epochs: each put visible after its closing fence", ROUNDS);
    int fenced = 1;
    for (int r = 0; r < p; r++)
        fenced &= __atomic_load_n(&w->t[r].ctl->fence, __ATOMIC_ACQUIRE) == 2 * ROUNDS + 2;
    tap_ok(fenced && w->fence_calls == 2 * ROUNDS + 2 && w->npending == 0,
           "every rank's fence counter reached fence %d, the last of %llu calls; no epoch "
           "pending",
           2 * ROUNDS + 2, (unsigned long long)w->fence_calls);
    MPI_Win_free(&win);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
