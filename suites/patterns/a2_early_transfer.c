/* a2_early_transfer.c — A2: Early Transfer (paper 000 §III).
 *
 * Origin rank 0, target rank 1. The target busy-works D before posting; the origin, at time 0,
 * starts its access epoch and issues one put of `size` bytes before the target has exposed
 * its window, then closes the epoch (ref-nb: istart, put, icomplete, MPI_Test until done).
 * The pattern exists when the RMA call itself blocks until the exposure: MPI-3 makes RMA calls
 * nonblocking, so the benchmark shows where the delay goes instead. Measured at the origin:
 * put_call_us (time inside MPI_Put), start_call_us (inside start/istart), epoch_us (time 0 to
 * the epoch's completion). propagated_delay_us: put_call_us minus the same without delay. */
#include "ab.h"

enum { ORIGIN = 0, TARGET = 1 };

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    ab_t *a = arg;
    MPI_Request r[2];
    double done[2] = {0, 0};
    double t0 = nbh_align(al);
    if (c->ctx->rank == TARGET) {
        nbh_work_us(delay_us);
        ab_post(c, a, ORIGIN, &r[0]);
        ab_wait(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
    } else {
        ab_start(c, a, TARGET, &r[0]);
        double t1 = MPI_Wtime();
        ab_put(c, a, TARGET, 0);
        double t2 = MPI_Wtime();
        ab_complete(c, a, &r[1]);
        if (!ab_nb(c))
            done[1] = MPI_Wtime();
        ab_complete_all(c, ab_nb(c) ? 2 : 1, r, done);
        t[0] = t2 - t1;
        t[1] = t1 - t0;
        t[2] = done[1] - t0;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"put_call", "start_call", "epoch"};
    const nbh_pattern_t p = {3, q, 0, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 1);
    ab_expect(&a, TARGET, 0);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_a(ctx, s, 0, "A2_early_transfer", "delay_us", run);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "A2",
        .title = "Early Transfer: an RMA call issued before the target exposed its window",
        .header =
            "rank 0 origin, rank 1 target that busy-works D (--delay-us) before MPI_Win_post\n"
            "origin at time 0: start(target), put SIZE bytes, complete\n"
            "  ref-nb: istart, put, icomplete, then MPI_Test until the epoch completed\n"
            "measured at the origin: put_call_us (inside MPI_Put), start_call_us (inside start),\n"
            "  epoch_us (time 0 to the epoch's completion); propagated_delay_us = put_call_us -\n"
            "  the same without the delay (same run)\n"
            "paper 000 (§III): nonexistent once RMA calls are nonblocking (MPI-3); a blocking\n"
            "  put (or start) would carry the target's delay",
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
