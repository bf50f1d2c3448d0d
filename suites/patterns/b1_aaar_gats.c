/* b1_aaar_gats.c — B1: A_A_A_R with GATS epochs (paper 000 §VI-B, §VIII-A2, Fig. 7).
 *
 * ref-nb only, MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER off and on. Origin O (rank 0), targets T0
 * (rank 1) and T1 (rank 2). At time 0 O opens an access epoch to T0 (istart, put, icomplete) and
 * then one to T1 (istart, put, icomplete), and completes both by MPI_Test; T0 busy-works D
 * before exposing (Late Post); T1 exposes at time 0. Flag off: T1's epoch is deferred until
 * T0's completes; on: it may run while T0's waits. Measured from time 0: t1_epoch_us (at T1,
 * its exposure completed), cumulative_us (at O, both access epochs completed), t0_epoch_us. */
#include "ab.h"

enum { O = 0, T0 = 1, T1 = 2 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[4];
    double done[4] = {0, 0, 0, 0};
    double t0 = nbh_align(al);
    switch (c->ctx->rank) {
    case O:
        ab_start(c, a, T0, &r[0]);
        ab_put(c, a, T0, 0);
        ab_complete(c, a, &r[1]);
        ab_start(c, a, T1, &r[2]);
        ab_put(c, a, T1, 0);
        ab_complete(c, a, &r[3]);
        ab_complete_all(c, 4, r, done);
        t[0] = (done[1] > done[3] ? done[1] : done[3]) - t0;
        break;
    case T0:
        nbh_work_us(delay_us);
        ab_post(c, a, O, &r[0]);
        ab_wait(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        t[2] = done[1] - t0;
        break;
    case T1:
        ab_post(c, a, O, &r[0]);
        ab_wait(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        t[1] = done[1] - t0;
        break;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "t1_epoch", "t0_epoch"};
    const nbh_pattern_t p = {3, q, 1, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 1);
    ab_pin_late(c, T0);
    ab_expect(&a, T0, 0);
    ab_expect(&a, T1, 0);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_b(ctx, s, "B1_aaar_gats", NBH_FLAG_A_A_A_R, run);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {AB_PIN_OPT, {NULL, NULL, NULL, 0, 0}};
    static const nbh_experiment_t ex = {
        .id = "B1",
        .title = "A_A_A_R, GATS: a late target's delay and the next access epoch (000 Fig. 7)",
        .header =
            "ref-nb only; MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER off (flag:0) and on (flag:1)\n"
            "rank 0 = O at time 0: istart(T0), put, icomplete; istart(T1), put, icomplete\n"
            "rank 1 = T0: D (--delay-us) of work, then ipost + iwait (a Late Post)\n"
            "rank 2 = T1: ipost + iwait at time 0\n"
            "measured from time 0: t1_epoch_us (T1's exposure done), cumulative_us (O's two\n"
            "  epochs done), t0_epoch_us; propagated_delay_us = t1_epoch_us - the same without D\n"
            "paper 000 saw: on: T1 not delayed, O's cumulative ~ T0's latency; off: the delay\n"
            "  chains O -> T1",
        .min_ranks = 3,
        .max_ranks = 3,
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
