/* test_epochs.c — internals of nonblocking epochs on 2 ranks: the matching triple <a, e, g> of
 * paper 000 §VII-B (only activated epochs advance it; ids are never reset), deferred epochs
 * (serial activation: one active, the rest deferred), recorded calls and the age stamps of
 * nonblocking flush (§VII-C: a flush counts exactly the recorded calls older than itself). */
#include <stddef.h>
#include <stdio.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"
#include "timing.h"

#define K       5
#define NPOINTS 12

/* Points are decided where they can be (one rank, mid-protocol) and reported collectively at the
 * end: ok[i] starts true on every rank, a rank that checks point i may clear it. */
static int ok[NPOINTS];
static char what[NPOINTS][200];

#define CHECK(i, cond, ...)                                                                        \
    do {                                                                                           \
        ok[i] = (cond);                                                                            \
        snprintf(what[i], sizeof what[i], __VA_ARGS__);                                            \
    } while (0)

static void wait_all(int n, MPI_Request *r)
{
    MPI_Status st[2 * K];
    MPI_Waitall(n, r, st);
}

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
    MPI_Win_allocate(16 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    nbr_win_t *w = nbr_win_find(win);
    tap_ok(w != NULL, "the window is served by ref");
    for (int i = 0; i < NPOINTS; i++)
        ok[i] = 1;
    static const char *const names[NPOINTS] = {
        "K closed access epochs before any post: 1 active, K-1 deferred, K pending",
        "only the activated epoch took an access id (a = 1, g = 0)",
        "the K epochs' puts are recorded",
        "after every request completed, the K puts are in place at the target",
        "target: exposure ids e and done ids written by the origin both reached K",
        "origin: a and g reached K with one triple for all pending epochs",
        "origin: no epoch left pending",
        "4 recorded calls of a not-granted lock epoch took consecutive ages",
        "the first flush waits for the 3 calls before it (its age), the second for all 4",
        "while the lock is not granted, neither the ilock request nor the flush is complete",
        "both flushes completed once the lock was granted and the calls carried out",
        "the flushed puts reached the target",
    };
    int peer = 1 - me;
    MPI_Group world, pg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &pg);

    /* Rank 0 opens and closes K access epochs toward rank 1 before rank 1 posts anything. */
    MPI_Request r[2 * K];
    long v[K];
    if (me == 0) {
        for (int i = 0; i < K; i++) {
            v[i] = 100 + i;
            MPIX_Win_istart(pg, 0, win, &r[2 * i]);
            MPI_Put(&v[i], 1, MPI_LONG, 1, i, 1, MPI_LONG, win);
            MPIX_Win_icomplete(win, &r[2 * i + 1]);
        }
        int deferred, pending;
        MPIX_Win_epoch_counts(win, &deferred, &pending);
        CHECK(0, deferred == K - 1 && pending == K,
              "%d closed access epochs, no post yet: 1 active, %d deferred (got %d), %d pending "
              "(got %d)",
              K, K - 1, deferred, K, pending);
        CHECK(1, w->t[1].a == 1 && w->t[0].peer[1].posted == 0,
              "only the activated epoch took an access id: a = %llu (1), g = %llu (0)",
              (unsigned long long)w->t[1].a, (unsigned long long)w->t[0].peer[1].posted);
        long recorded = nbr_pending_calls(w, 1);
        CHECK(2, recorded == K, "its put and the deferred epochs' puts are recorded: %ld (%d)",
              recorded, K);
    }
    nbh_barrier(MPI_COMM_WORLD);
    if (me == 1) /* K exposures back to back: the k-th matches the origin's k-th access */
        for (int i = 0; i < K; i++) {
            MPIX_Win_ipost(pg, 0, win, &r[2 * i]);
            MPIX_Win_iwait(win, &r[2 * i + 1]);
        }
    wait_all(2 * K, r);
    if (me == 1) {
        int good = 1;
        for (int i = 0; i < K; i++)
            good &= base[i] == 100 + i;
        CHECK(3, good, "after every request completed, the %d puts are in place", K);
        CHECK(4, w->t[0].e == K && w->t[1].peer[0].completed == K,
              "exposure ids e = %llu and done ids written by the origin = %llu (both %d)",
              (unsigned long long)w->t[0].e, (unsigned long long)w->t[1].peer[0].completed, K);
    } else {
        CHECK(5, w->t[1].a == K && w->t[0].peer[1].posted == K,
              "a = %llu and g = %llu reached %d, with one triple for all pending epochs",
              (unsigned long long)w->t[1].a, (unsigned long long)w->t[0].peer[1].posted, K);
        CHECK(6, w->npending == 0 && w->ndeferred == 0, "no epoch left pending");
    }

    /* Flush ages: rank 1 holds the exclusive lock on itself; rank 0's lock epoch stays active
     * (not granted), its puts recorded; a flush counts the calls before it, not after. */
    nbh_barrier(MPI_COMM_WORLD);
    if (me == 1)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    nbh_barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Request f[2], u;
        long x[4] = {7, 8, 9, 10};
        uint64_t age0 = w->age;
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &u); /* completes at the grant */
        for (int i = 0; i < 3; i++)
            MPI_Put(&x[i], 1, MPI_LONG, 1, 8 + i, 1, MPI_LONG, win);
        MPIX_Win_iflush(1, win, &f[0]);
        MPI_Put(&x[3], 1, MPI_LONG, 1, 11, 1, MPI_LONG, win);
        MPIX_Win_iflush(1, win, &f[1]);
        CHECK(7, w->age == age0 + 4, "4 recorded calls took ages %llu..%llu",
              (unsigned long long)age0 + 1, (unsigned long long)w->age);
        nbr_flush_t *f0 = w->t[1].q ? w->t[1].q->fl_head : NULL, *f1 = f0 ? f0->next : NULL;
        CHECK(8, f0 && f1 && f0->age == age0 + 3 && f1->age == age0 + 4 && w->nflushes == 2,
              "the first flush waits for ages <= %llu (got %llu), the second <= %llu (got %llu)",
              (unsigned long long)age0 + 3, (unsigned long long)(f0 ? f0->age : 0),
              (unsigned long long)age0 + 4, (unsigned long long)(f1 ? f1->age : 0));
        int done = 0, granted = 0;
        MPI_Test(&f[0], &done, MPI_STATUS_IGNORE);
        MPI_Test(&u, &granted, MPI_STATUS_IGNORE);
        CHECK(9, !done && !granted,
              "while the lock is not granted, the flush (%s) and the ilock request (%s) are "
              "not complete",
              done ? "complete" : "pending", granted ? "complete" : "pending");
        int one = 1;
        MPI_Send(&one, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* let rank 1 unlock */
        wait_all(2, f);
        if (!granted)
            MPI_Wait(&u, MPI_STATUS_IGNORE);
        CHECK(10, w->nflushes == 0 && nbr_pending_calls(w, 1) == 0,
              "both flushes completed once the lock was granted and the calls carried out");
        MPI_Win_unlock(1, win);
        MPI_Send(&one, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        int one;
        MPI_Request rr;
        MPI_Irecv(&one, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rr);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        MPI_Win_unlock(1, win);
        MPI_Irecv(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &rr);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        CHECK(11, base[8] == 7 && base[9] == 8 && base[10] == 9 && base[11] == 10,
              "the flushed puts reached the target: %ld %ld %ld %ld", base[8], base[9], base[10],
              base[11]);
    }
    for (int i = 0; i < NPOINTS; i++)
        tap_ok(ok[i], "%s%s%s", names[i], !ok[i] ? " — " : "", !ok[i] ? what[i] : "");
    MPI_Group_free(&pg);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
