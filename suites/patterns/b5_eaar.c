/* b5_eaar.c — B5: E_A_A_R (paper 000 §VI-B, §VIII-A2, Fig. 11).
 *
 * ref-nb only, MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER off and on. P0 (rank 0) is a target, D
 * late (--delay-us) exposing to P2; P2 (rank 2) accesses P0 and then exposes to P1 (rank 1):
 * istart(P0), put, icomplete, ipost(P1), iwait, at time 0; P1 accesses P2 at time 0. Flag off:
 * P2's exposure is deferred behind its access epoch, which waits for the late P0, so D reaches
 * P1; on: the exposure may run at once. Measured from time 0: p1_epoch_us (at P1, its access
 * epoch completed), cumulative_us (at P2, both epochs), p2_access_us, p2_exposure_us. */
#include "ab.h"

enum { P0 = 0, P1 = 1, P2 = 2 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[4];
    double done[4] = {0, 0, 0, 0};
    double t0 = nbh_align(al);
    switch (c->ctx->rank) {
    case P0:
        nbh_work_us(delay_us);
        ab_post(c, a, P2, &r[0]);
        ab_wait(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        break;
    case P1:
        ab_start(c, a, P2, &r[0]);
        ab_put(c, a, P2, 0);
        ab_complete(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        t[1] = done[1] - t0;
        break;
    case P2:
        ab_start(c, a, P0, &r[0]);
        ab_put(c, a, P0, 0);
        ab_complete(c, a, &r[1]);
        ab_post(c, a, P1, &r[2]);
        ab_wait(c, a, &r[3]);
        ab_complete_all(c, 4, r, done);
        t[0] = (done[1] > done[3] ? done[1] : done[3]) - t0;
        t[2] = done[1] - t0;
        t[3] = done[3] - t0;
        break;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "p1_epoch", "p2_access", "p2_exposure"};
    const nbh_pattern_t p = {4, q, 1, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 1);
    ab_pin_late(c, P0);
    ab_expect(&a, P0, 0);
    ab_expect(&a, P2, 0);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_b(ctx, s, "B5_eaar", NBH_FLAG_E_A_A_R, run);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {AB_PIN_OPT, {NULL, NULL, NULL, 0, 0}};
    static const nbh_experiment_t ex = {
        .id = "B5",
        .title = "E_A_A_R: an exposure after an access epoch to a late target (000 Fig. 11)",
        .header =
            "ref-nb only; MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER off (flag:0) and on (flag:1)\n"
            "rank 0 = P0: D (--delay-us) of work, then ipost(P2), iwait\n"
            "rank 2 = P2 at time 0: istart(P0), put, icomplete; ipost(P1), iwait\n"
            "rank 1 = P1 at time 0: istart(P2), put, icomplete\n"
            "measured from time 0: p1_epoch_us (P1's access epoch done), cumulative_us (P2's two\n"
            "  epochs), p2_access_us, p2_exposure_us; propagated_delay_us = p1_epoch_us - the\n"
            "  same without D\n"
            "paper 000 saw: on (at P2): P1 avoids D, P2's cumulative is lower",
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
