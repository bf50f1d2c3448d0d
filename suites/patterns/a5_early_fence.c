/* a5_early_fence.c — A5: Early Fence (paper 000 §III, §IV-C2, §VIII-A1, Fig. 4).
 *
 * Two ranks share a fence epoch opened before time 0. At time 0 the origin (rank 0) puts `size`
 * bytes and closes the epoch; the target (rank 1) closes it at once — early, the transfer still
 * runs — and then has D of CPU-bound work (--delay-us). Blocking series: the closing fence
 * returns after the transfer, then the work: both serialized. ref-nb (§IV-C2): ifence, the
 * work, MPI_Wait — the transfer proceeds behind the work. Measured at the target:
 * cumulative_us (time 0 to epoch and work both done), idle_us (time inside fence calls and the
 * final wait after time 0); at the origin: origin_epoch_us. */
#include "ab.h"

enum { ORIGIN = 0, TARGET = 1 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double work_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[2];
    double done[2] = {0, 0};
    ab_fence(c, a, MPI_MODE_NOPRECEDE, &r[0]); /* open: collective, before time 0 */
    ab_complete_all(c, 1, r, done);
    double t0 = nbh_align(al);
    if (c->ctx->rank == ORIGIN) {
        ab_put(c, a, TARGET, 0);
        ab_fence(c, a, MPI_MODE_NOSUCCEED, &r[1]);
        ab_complete_all(c, 1, &r[1], &done[1]);
        t[2] = done[1] - t0;
        return;
    }
    double t1 = MPI_Wtime();
    ab_fence(c, a, MPI_MODE_NOSUCCEED, &r[1]);
    double idle = MPI_Wtime() - t1;
    nbh_work_us(work_us);
    t1 = MPI_Wtime();
    ab_complete_all(c, 1, &r[1], &done[1]);
    double end = MPI_Wtime();
    idle += end - t1;
    t[0] = end - t0;
    t[1] = idle;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "idle", "origin_epoch"};
    const nbh_pattern_t p = {3, q, -1, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 1);
    ab_expect(&a, TARGET, 0);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_a(ctx, s, 0, "A5_early_fence", "work_us", run);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "A5",
        .title = "Early Fence: a closing fence waits for the transfer (000 Fig. 4)",
        .header =
            "rank 0 origin, rank 1 target; a fence epoch is open before time 0\n"
            "origin at time 0: put SIZE bytes, closing fence (ref-nb: MPIX_Win_ifence + MPI_Test)\n"
            "target at time 0: closing fence at once (early), then D (--delay-us) of work\n"
            "  ref-nb: MPIX_Win_ifence, the work, then MPI_Wait\n"
            "measured at the target: cumulative_us (time 0 to epoch and work both done),\n"
            "  idle_us (inside the fence and the final wait); at the origin: origin_epoch_us\n"
            "paper 000 saw: blocking = transfer + D serialized; ref-nb ~ D + epsilon (1010 us)",
        .min_ranks = 2,
        .max_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "256K,1M",
        .quick_sizes = "256K,1M",
        .default_iters = 100,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
