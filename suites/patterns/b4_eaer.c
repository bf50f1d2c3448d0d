/* b4_eaer.c — B4: E_A_E_R (paper 000 §VI-B, §VIII-A2, Fig. 10).
 *
 * ref-nb only, MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER off and on. Origins O0 (rank 0, D late,
 * --delay-us) and O1 (rank 1); target T (rank 2) exposes first to O0, then to O1: ipost(O0),
 * iwait, ipost(O1), iwait, at time 0. Flag off: the second exposure is deferred behind the
 * first, which waits for the late O0, so D reaches O1; on: it may run at once. Each origin puts
 * into its own slot. Measured from time 0: o1_epoch_us (at O1, its access epoch completed),
 * cumulative_us (at T, both exposures completed), o0_epoch_us. */
#include "ab.h"

enum { O0 = 0, O1 = 1, T = 2 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[4];
    double done[4] = {0, 0, 0, 0};
    double t0 = nbh_align(al);
    switch (c->ctx->rank) {
    case O0:
    case O1:
        if (c->ctx->rank == O0)
            nbh_work_us(delay_us);
        ab_start(c, a, T, &r[0]);
        ab_put(c, a, T, c->ctx->rank);
        ab_complete(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        t[c->ctx->rank == O1 ? 1 : 2] = done[1] - t0;
        break;
    case T:
        ab_post(c, a, O0, &r[0]);
        ab_wait(c, a, &r[1]);
        ab_post(c, a, O1, &r[2]);
        ab_wait(c, a, &r[3]);
        ab_complete_all(c, 4, r, done);
        t[0] = (done[1] > done[3] ? done[1] : done[3]) - t0;
        break;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "o1_epoch", "o0_epoch"};
    const nbh_pattern_t p = {3, q, 1, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 2);
    ab_pin_late(c, O0);
    ab_expect(&a, T, O0);
    ab_expect(&a, T, O1);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_b(ctx, s, "B4_eaer", NBH_FLAG_E_A_E_R, run);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {AB_PIN_OPT, {NULL, NULL, NULL, 0, 0}};
    static const nbh_experiment_t ex = {
        .id = "B4",
        .title = "E_A_E_R: a second exposure after one to a late origin (000 Fig. 10)",
        .header =
            "ref-nb only; MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER off (flag:0) and on (flag:1)\n"
            "rank 0 = O0: D (--delay-us) of work, then istart(T), put, icomplete\n"
            "rank 1 = O1 at time 0: istart(T), put, icomplete\n"
            "rank 2 = T at time 0: ipost(O0), iwait; ipost(O1), iwait\n"
            "measured from time 0: o1_epoch_us (O1's access epoch done), cumulative_us (T's two\n"
            "  exposures), o0_epoch_us; propagated_delay_us = o1_epoch_us - the same without D\n"
            "paper 000 saw: off: D reaches O1 and T's cumulative = D + both epochs; on: it does\n"
            "  not, and T overlaps D with its second exposure",
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
