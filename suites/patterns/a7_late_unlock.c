/* a7_late_unlock.c — A7: Late Unlock (paper 000 §III, §IV-C5, §VIII-A1, Fig. 6).
 *
 * Origins O0 (rank 0) and O1 (rank 1), target T (rank 2). At time 0 O0 locks T exclusively and
 * puts `size` bytes; O1 asks for the same exclusive lock --lag-us later (so O0 asks first) and
 * puts `size` bytes into another slot. O0 has D of work (--delay-us) before unlocking. Blocking
 * series: lock, put, work D, unlock — the holder keeps the lock through its work, and O1 waits
 * for it (unless the implementation acquires lazily at unlock). ref-nb (§IV-C5): ilock, put,
 * iunlock, work D, MPI_Wait — the lock is released once the put is done. Measured: O1's epoch
 * from its lock request to its unlock completed (o1_epoch_us), O0's from time 0 (o0_epoch_us). */
#include "ab.h"

enum { O0 = 0, O1 = 1, T = 2 };
static long lag_us = 100;

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[2];
    double done[2] = {0, 0};
    double t0 = nbh_align(al);
    if (c->ctx->rank == O0) {
        ab_lock(c, a, T, &r[0]);
        ab_put(c, a, T, 0);
        if (ab_nb(c)) {
            ab_unlock(c, a, T, &r[1]);
            nbh_work_us(delay_us);
            ab_complete_all(c, 2, r, done);
        } else {
            nbh_work_us(delay_us);
            ab_unlock(c, a, T, &r[1]);
            done[1] = MPI_Wtime();
        }
        t[1] = done[1] - t0;
    } else if (c->ctx->rank == O1) {
        nbh_work_us((double)lag_us);
        double ts = MPI_Wtime();
        ab_lock(c, a, T, &r[0]);
        ab_put(c, a, T, 1);
        ab_unlock(c, a, T, &r[1]);
        if (!ab_nb(c))
            done[1] = MPI_Wtime();
        ab_complete_all(c, ab_nb(c) ? 2 : 1, r, done);
        t[0] = done[1] - ts;
    } else
        ab_passive(al); /* T progresses in the harness's collectives (nbh_rec_sample) */
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"o1_epoch", "o0_epoch"};
    const nbh_pattern_t p = {2, q, 0, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 2);
    ab_pin_late(c, O0);
    ab_expect(&a, T, 0);
    ab_expect(&a, T, 1);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_a(ctx, s, 0, "A7_late_unlock", "delay_us", run);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"lag-us", "how long after O0 O1 asks for the lock (default 100)", &lag_us, 0, 1000000},
        AB_PIN_OPT,
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "A7",
        .title = "Late Unlock: a lock holder's work delays the next requester (000 Fig. 6)",
        .header =
            "rank 0 = O0, rank 1 = O1: origins; rank 2 = T: the target (passive)\n"
            "O0 at time 0: exclusive lock on T, put SIZE bytes, D (--delay-us) of work, unlock\n"
            "  ref-nb: ilock, put, MPIX_Win_iunlock, the work, then MPI_Wait\n"
            "O1 at time 0 + lag (--lag-us): exclusive lock on T, put SIZE bytes, unlock\n"
            "measured: o1_epoch_us (O1's lock request to its unlock done), o0_epoch_us (from 0)\n"
            "propagated_delay_us = o1_epoch_us - the same without O0's work (same run)\n"
            "paper 000 saw: lazy-lock vendor: O1 ~ transfer, O0 ~ D + transfer; ref: O1 ~ O0's\n"
            "  epoch + own transfer; ref-nb: O1 ~ both transfers, without D",
        .min_ranks = 3,
        .max_ranks = 3,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "1M",
        .quick_sizes = "1M",
        .default_iters = 100,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
