/* b2_aaar_lock.c — B2: A_A_A_R with lock epochs (paper 000 §VI-B, §VIII-A2, Fig. 8).
 *
 * ref-nb only, MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER off and on. Origins O0 (rank 0), O1 (rank 1);
 * targets T0 (rank 2) and T1 (rank 3 with 4 ranks; with 3 ranks T1 is O0's window — a passive
 * target needs no CPU of its own in ref). At time 0 O0 locks T0 exclusively, puts, works D
 * (--delay-us), then unlocks. --lag-us later O1 asks for T0's lock (queued behind O0), puts,
 * iunlocks, then locks T1, puts, iunlocks, and completes both by MPI_Test. Flag off: the T1
 * epoch is deferred behind the T0 epoch; on: it may run at once. Measured at O1 from its first
 * request: cumulative_us (both epochs completed), second_epoch_us (the T1 epoch completed);
 * o0_epoch_us from time 0. */
#include "ab.h"

enum { O0 = 0, O1 = 1, T0 = 2 };
static long lag_us = 100;

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    const int t1 = c->ctx->nranks > 3 ? 3 : O0;
    MPI_Request r[4];
    double done[4] = {0, 0, 0, 0};
    double t0 = nbh_align(al);
    if (c->ctx->rank == O0) {
        ab_lock(c, a, T0, &r[0]);
        ab_put(c, a, T0, 0);
        nbh_work_us(delay_us);
        ab_unlock(c, a, T0, &r[1]);
        ab_complete_all(c, 2, r, done);
        t[2] = done[1] - t0;
    } else if (c->ctx->rank == O1) {
        nbh_work_us((double)lag_us);
        double ts = MPI_Wtime();
        ab_lock(c, a, T0, &r[0]);
        ab_put(c, a, T0, 1);
        ab_unlock(c, a, T0, &r[1]);
        ab_lock(c, a, t1, &r[2]);
        ab_put(c, a, t1, 1);
        ab_unlock(c, a, t1, &r[3]);
        ab_complete_all(c, 4, r, done);
        t[0] = (done[1] > done[3] ? done[1] : done[3]) - ts;
        t[1] = done[3] - ts;
    } else {
        ab_passive(al);
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "second_epoch", "o0_epoch"};
    const nbh_pattern_t p = {3, q, 1, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 2);
    ab_pin_late(c, O0);
    ab_expect(&a, T0, 0);
    ab_expect(&a, T0, 1);
    ab_expect(&a, c->ctx->nranks > 3 ? 3 : O0, 1);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_b(ctx, s, "B2_aaar_lock", NBH_FLAG_A_A_A_R, run);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"lag-us", "how long after O0 O1 asks for T0's lock (default 100)", &lag_us, 0, 1000000},
        AB_PIN_OPT,
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "B2",
        .title = "A_A_A_R, lock: a held lock and the requester's next epoch (000 Fig. 8)",
        .header =
            "ref-nb only; MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER off (flag:0) and on (flag:1)\n"
            "rank 0 = O0 at time 0: ilock(T0, exclusive), put, D (--delay-us) of work, iunlock\n"
            "rank 1 = O1 at time 0 + lag (--lag-us): ilock(T0), put, iunlock; ilock(T1), put,\n"
            "  iunlock; MPI_Test until both completed\n"
            "rank 2 = T0; T1 = rank 3 with 4 ranks, else O0's window (passive targets)\n"
            "measured at O1 from its first request: cumulative_us (both epochs), second_epoch_us\n"
            "  (the T1 epoch); o0_epoch_us; propagated_delay_us = second_epoch_us - without D\n"
            "paper 000 saw: on: O1's cumulative ~ its first epoch only (1340 us); off: serialized",
        .min_ranks = 3,
        .max_ranks = 4,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "1M",
        .quick_sizes = "1M",
        .default_iters = 100,
        .extra = extra,
        .register_cases = register_cases,
        .series = AB_B_SERIES,
        .series_why = AB_B_SERIES_WHY,
    };
    return nbh_main(argc, argv, &ex);
}
