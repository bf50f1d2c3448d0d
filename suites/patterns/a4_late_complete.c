/* a4_late_complete.c — A4: Late Complete (paper 000 §III, §IV-C3, §VIII-A1, Fig. 3).
 *
 * Origin rank 0, target rank 1. The target has posted its exposure before time 0; at time 0 the
 * origin starts, puts `size` bytes and overlaps D of work with the transfer. Blocking series:
 * start, put, work D, complete — the target's wait cannot return before complete, so the
 * origin's work reaches the target. ref-nb (the §IV-C3 fix): istart, put, icomplete, work D,
 * MPI_Wait — the epoch closes before the work, and the target's wait needs only the transfer.
 * Measured at the target: its epoch from time 0 to the end of its wait (target_epoch_us); at the
 * origin: its epoch from time 0 to completion (origin_epoch_us). */
#include "ab.h"

enum { ORIGIN = 0, TARGET = 1 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[2];
    double done[2] = {0, 0};
    if (c->ctx->rank == TARGET) {
        ab_post(c, a, ORIGIN, &r[0]); /* exposure open before time 0: no Late Post here */
        double t0 = nbh_align(al);
        ab_wait(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        t[0] = done[1] - t0;
    } else {
        double t0 = nbh_align(al);
        ab_start(c, a, TARGET, &r[0]);
        ab_put(c, a, TARGET, 0);
        if (ab_nb(c)) {
            ab_complete(c, a, &r[1]);
            nbh_work_us(delay_us);
        } else {
            nbh_work_us(delay_us);
            ab_complete(c, a, &r[1]);
        }
        ab_complete_all(c, 2, r, done);
        t[1] = done[1] - t0;
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
    ab_register_a(ctx, s, 0, "A4_late_complete", "delay_us", run);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "A4",
        .title =
            "Late Complete: the origin's work inside its epoch reaches the target (000 Fig. 3)",
        .header =
            "rank 0 origin, rank 1 target; the target's exposure (post) is open before time 0\n"
            "origin at time 0: start, put SIZE bytes, then D of work (--delay-us)\n"
            "  vendor, ref: work D, then MPI_Win_complete (the usual overlap inside the epoch)\n"
            "  ref-nb: MPIX_Win_icomplete, then work D, then MPI_Wait (the epoch closes early)\n"
            "target: MPI_Win_wait (ref-nb: MPIX_Win_iwait + MPI_Wait)\n"
            "measured: target_epoch_us = time 0 to the target's wait returning; origin_epoch_us\n"
            "propagated_delay_us = target_epoch_us - the same without the work (same run)\n"
            "paper 000 saw: blocking series ~ the whole origin epoch (D); ref-nb ~ the transfer "
            "only",
        .min_ranks = 2,
        .max_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "1K:4M:x4",
        .quick_sizes = "1K,1M",
        .default_iters = 100,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
