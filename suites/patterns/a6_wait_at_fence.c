/* a6_wait_at_fence.c — A6: Wait at Fence (paper 000 §III, §IV-C4, §VIII-A1, Fig. 5).
 *
 * Two ranks share a fence epoch opened before time 0. At time 0 the origin (rank 0) puts `size`
 * bytes and has D of work (--delay-us) before its closing fence; the target (rank 1) closes the
 * epoch at once. Blocking series: put, work D, fence — the target's fence cannot return before
 * the origin's, so D reaches it. ref-nb (§IV-C4): put, ifence, work D, MPI_Wait — the origin's
 * epoch closes before its work. Measured at the target: target_epoch_us (time 0 to its fence
 * completed); at the origin: origin_epoch_us. */
#include "ab.h"

enum { ORIGIN = 0, TARGET = 1 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[2];
    double done[2] = {0, 0};
    ab_fence(c, a, MPI_MODE_NOPRECEDE, &r[0]); /* open: collective, before time 0 */
    ab_complete_all(c, 1, r, done);
    double t0 = nbh_align(al);
    if (c->ctx->rank == ORIGIN) {
        ab_put(c, a, TARGET, 0);
        if (ab_nb(c)) {
            ab_fence(c, a, MPI_MODE_NOSUCCEED, &r[1]);
            nbh_work_us(delay_us);
        } else {
            nbh_work_us(delay_us);
            ab_fence(c, a, MPI_MODE_NOSUCCEED, &r[1]);
        }
        ab_complete_all(c, 1, &r[1], &done[1]);
        t[1] = done[1] - t0;
    } else {
        ab_fence(c, a, MPI_MODE_NOSUCCEED, &r[1]);
        ab_complete_all(c, 1, &r[1], &done[1]);
        t[0] = done[1] - t0;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"target_epoch", "origin_epoch"};
    const nbh_pattern_t p = {2, q, 0, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 1);
    ab_expect(&a, TARGET, 0);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_a(ctx, s, 0, "A6_wait_at_fence", "delay_us", run);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "A6",
        .title =
            "Wait at Fence: the origin's work before its fence reaches the target (000 Fig. 5)",
        .header = "rank 0 origin, rank 1 target; a fence epoch is open before time 0\n"
                  "origin at time 0: put SIZE bytes, then D (--delay-us) of work, then the fence\n"
                  "  ref-nb: put, MPIX_Win_ifence, the work, then MPI_Wait\n"
                  "target at time 0: its closing fence (ref-nb: ifence + MPI_Wait)\n"
                  "measured: target_epoch_us (time 0 to the target's fence done), origin_epoch_us\n"
                  "propagated_delay_us = target_epoch_us - the same without the work (same run)\n"
                  "paper 000 saw: blocking series propagate D to the target; ref-nb does not",
        .min_ranks = 2,
        .max_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "1M",
        .quick_sizes = "1M",
        .default_iters = 100,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
