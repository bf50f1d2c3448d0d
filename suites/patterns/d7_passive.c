/* d7_passive.c — D7: passive target synchronization costs (paper 001 §3.2).
 *
 * Origin rank 0, target rank 1 (lock_all: every rank is a target). Cases:
 *   lock_exclusive, lock_shared: lock + unlock with nothing in between, each timed;
 *   lock_all: lock_all + unlock_all;
 *   flush: MPI_Win_flush with no pending operation, inside a held lock;
 *   sync: MPI_Win_sync inside a held lock;
 *   lock_put_unlock: a whole epoch carrying one 8-byte put (validated).
 * Paper's fits: lock excl 5.4 us, shared = lock_all 2.7 us, unlock 0.4 us, flush 76 ns,
 * sync 17 ns. Implementations that acquire lazily (MPICH) move the cost into unlock: compare
 * epoch_us across libraries, not lock_us alone.
 * ref-nb: the same epochs with the nonblocking twins, each request waited for at once
 * (MPIX_Win_ilock + MPI_Wait is the lock part, MPIX_Win_iunlock + MPI_Wait the unlock part,
 * MPIX_Win_iflush + MPI_Wait; sync has no twin). Nothing overlaps, so ref-nb should cost what
 * ref does (issue 24: at most 1.2x per epoch). */
#include <stdint.h>
#include <string.h>

#include "bench.h"

enum { C_LOCK_EXCL, C_LOCK_SHARED, C_LOCK_ALL, C_FLUSH, C_SYNC, C_LOCK_PUT_UNLOCK, C_N };
static const char *const case_names[C_N] = {"lock_exclusive", "lock_shared", "lock_all",
                                            "flush",          "sync",        "lock_put_unlock"};

/* One sample at the origin: t[0] whole, t[1] lock part, t[2] unlock part (seconds). */
static void nb_wait(MPI_Request *r)
{
    MPI_Wait(r, MPI_STATUS_IGNORE);
}

/* One sample at the origin: t[0] whole, t[1] lock part, t[2] unlock part (seconds). */
static void one(const nbh_case_t *c, const nbh_win_t *w, MPI_Aint disp, int64_t *val, double *t)
{
    const int target = 1, nb = c->series == NBH_REF_NB;
    MPI_Request r[2];
    double t0 = MPI_Wtime(), t1 = t0;
    switch (c->op) {
    case C_LOCK_EXCL:
    case C_LOCK_SHARED: {
        int type = c->op == C_LOCK_EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
        if (nb) {
            MPIX_Win_ilock(type, target, 0, w->win, &r[0]);
            nb_wait(&r[0]);
        } else {
            MPI_Win_lock(type, target, 0, w->win);
        }
        t1 = MPI_Wtime();
        if (nb) {
            MPIX_Win_iunlock(target, w->win, &r[1]);
            nb_wait(&r[1]);
        } else {
            MPI_Win_unlock(target, w->win);
        }
        break;
    }
    case C_LOCK_ALL:
        if (nb) {
            MPIX_Win_ilock_all(0, w->win, &r[0]);
            nb_wait(&r[0]);
        } else {
            MPI_Win_lock_all(0, w->win);
        }
        t1 = MPI_Wtime();
        if (nb) {
            MPIX_Win_iunlock_all(w->win, &r[1]);
            nb_wait(&r[1]);
        } else {
            MPI_Win_unlock_all(w->win);
        }
        break;
    case C_FLUSH:
        if (nb) {
            MPIX_Win_iflush(target, w->win, &r[0]);
            nb_wait(&r[0]);
        } else {
            MPI_Win_flush(target, w->win);
        }
        break;
    case C_SYNC:
        MPI_Win_sync(w->win);
        break;
    case C_LOCK_PUT_UNLOCK:
        ++*val;
        if (nb) { /* the epoch of issue 24: ilock, put, iunlock, then both waits */
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, w->win, &r[0]);
            MPI_Put(val, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, w->win);
            MPIX_Win_iunlock(target, w->win, &r[1]);
            nb_wait(&r[0]);
            nb_wait(&r[1]);
        } else {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w->win);
            MPI_Put(val, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, w->win);
            MPI_Win_unlock(target, w->win);
        }
        break;
    }
    double t2 = MPI_Wtime();
    t[0] = t2 - t0;
    t[1] = t1 - t0;
    t[2] = t2 - t1;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1;
    const int held = c->op == C_FLUSH || c->op == C_SYNC;
    const int lockcase = c->op <= C_LOCK_ALL;
    nbh_win_t w;
    nbh_win_open(&w, c, 64);
    const MPI_Aint disp = nbh_win_disp(&w, target, 0);
    int64_t val = 0;
    double t[3] = {0, 0, 0};

    if (me == origin) {
        if (held)
            NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++)
            one(c, &w, disp, &val, t);
    }
    static const char *const q_lock[] = {"epoch", "lock", "unlock"};
    static const char *const q_flush[] = {"flush"};
    static const char *const q_sync[] = {"sync"};
    static const char *const q_epoch[] = {"epoch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, lockcase ? 3 : 1,
                 lockcase           ? q_lock
                 : c->op == C_FLUSH ? q_flush
                 : c->op == C_SYNC  ? q_sync
                                    : q_epoch);
    while (gb_keep_running(st)) {
        if (me == origin)
            one(c, &w, disp, &val, t);
        nbh_rec_sample(&rec, st, t);
    }
    if (me == origin && held)
        NBH_MPI(c, MPI_Win_unlock(target, w.win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));

    int ok = 1;
    int64_t got = 0;
    if (c->op == C_LOCK_PUT_UNLOCK) {
        NBH_MPI(c, nbh_bcast(&val, 1, MPI_INT64_T, origin, c->ctx->comm));
        if (me == target) {
            nbh_win_self_lock(&w, c);
            memcpy(&got, w.base, sizeof got);
            nbh_win_self_unlock(&w, c);
            ok = got == val;
        }
    }
    if (nbh_verify(st, c, ok, "target holds %lld after %lld lock-put-unlock epochs", (long long)got,
                   (long long)val))
        nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
    nbh_win_close(&w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = 0; op < C_N; op++)
        nbh_add_case(ctx, s, op, op == C_LOCK_PUT_UNLOCK ? 8 : 0, run, "D7_%s/%s", case_names[op],
                     nbh_series_name(s));
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "D7",
        .title =
            "passive target: lock exclusive/shared/lock_all, unlock, flush, sync (paper 001 §3.2)",
        .header = "origin rank 0, target rank 1 (lock_all: all ranks); the target only progresses\n"
                  "lock cases: lock_us and unlock_us timed separately, epoch_us = both\n"
                  "flush: no pending operation; sync: MPI_Win_sync; both inside a held lock\n"
                  "lock_put_unlock: one epoch with one 8-byte put (one-way, remote completion)\n"
                  "ref-nb: the nonblocking twins (ilock, iunlock, iflush), each request waited\n"
                  "  for at once (lock_put_unlock: ilock, put, iunlock, then both waits)",
        .min_ranks = 2,
        .uses = NBH_USE_WINDOW,
        .default_iters = 1000,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF | 1u << NBH_REF_NB,
    };
    return nbh_main(argc, argv, &ex);
}
