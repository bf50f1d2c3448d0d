/* a3_early_wait.c — A3: Early Wait (paper 000 §III).
 *
 * Origin rank 0, target rank 1; the target's exposure is open before time 0. At time 0 the
 * origin starts, puts `size` bytes and completes; the target closes its exposure at once, while
 * the transfer still runs, and has D of work to do afterwards (--delay-us). Variants:
 *   wait  (vendor, ref): MPI_Win_wait, then the work — the target idles in wait for the transfer;
 *   test  (vendor, ref): MPI_Win_test between 20 us slices of the work until it succeeds, then
 *         the rest of the work — the mitigation of §III;
 *   iwait (ref-nb): MPIX_Win_iwait, the whole work, then MPI_Wait — the removal.
 * Measured at the target: cumulative_us (time 0 to epoch and work both done), idle_us (time
 * inside synchronization calls after time 0), target_epoch_us (time 0 to the epoch seen
 * complete); at the origin: origin_epoch_us. */
#include "ab.h"

enum { ORIGIN = 0, TARGET = 1 };
enum { V_WAIT, V_TEST, V_IWAIT, V_N };
static const char *const variant_names[V_N] = {"wait", "test", "iwait"};
static const double slice_us = 20;

static void target(const nbh_case_t *c, ab_t *a, nbh_align_t *al, double work_us, double *t)
{
    MPI_Request r[2];
    double done[2] = {0, 0}, idle = 0, epoch = 0;
    ab_post(c, a, ORIGIN, &r[0]);
    double t0 = nbh_align(al), t1, t2;
    switch (c->op) {
    case V_WAIT:
        t1 = MPI_Wtime();
        NBH_MPI(c, MPI_Win_wait(a->w.win));
        epoch = t2 = MPI_Wtime();
        idle = t2 - t1;
        nbh_work_us(work_us);
        break;
    case V_TEST: {
        double left = work_us;
        for (int flag = 0;;) {
            t1 = MPI_Wtime();
            NBH_MPI(c, MPI_Win_test(a->w.win, &flag));
            t2 = MPI_Wtime();
            idle += t2 - t1;
            if (flag) {
                epoch = t2;
                break;
            }
            double w = left < slice_us ? left : slice_us;
            nbh_work_us(w);
            left -= w;
        }
        nbh_work_us(left);
        break;
    }
    case V_IWAIT:
        t1 = MPI_Wtime();
        ab_wait(c, a, &r[1]);
        idle = MPI_Wtime() - t1;
        nbh_work_us(work_us);
        t1 = MPI_Wtime();
        ab_complete_all(c, 2, r, done);
        epoch = done[1];
        idle += MPI_Wtime() - t1;
        break;
    }
    if (c->op != V_IWAIT)
        ab_complete_all(c, 1, r, done); /* MPI_REQUEST_NULL: nothing */
    t[0] = MPI_Wtime() - t0;
    t[1] = idle;
    t[2] = epoch - t0;
}

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double work_us, double *t)
{
    ab_t *a = arg;
    if (c->ctx->rank == TARGET) {
        target(c, a, al, work_us, t);
        return;
    }
    MPI_Request r[2];
    double done[2] = {0, 0};
    double t0 = nbh_align(al);
    ab_start(c, a, TARGET, &r[0]);
    ab_put(c, a, TARGET, 0);
    ab_complete(c, a, &r[1]);
    if (!ab_nb(c))
        done[1] = MPI_Wtime();
    ab_complete_all(c, ab_nb(c) ? 2 : 1, r, done);
    t[3] = done[1] - t0;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "idle", "target_epoch", "origin_epoch"};
    const nbh_pattern_t p = {4, q, -1, sample, ab_reset};
    ab_t a;
    ab_open(&a, c, 1);
    ab_expect(&a, TARGET, 0);
    nbh_pattern_run(st, c, &p, &a);
    ab_verify(st, c, &a);
    ab_close(&a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    char what[64];
    for (int v = 0; v < V_N; v++) {
        if ((v == V_IWAIT) != (s == NBH_REF_NB))
            continue;
        snprintf(what, sizeof what, "A3_early_wait/%s/variant:%s", nbh_series_name(s),
                 variant_names[v]);
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, v, ctx->opts.sizes[i], run, "%s/size:%zu/work_us:%g", what,
                         ctx->opts.sizes[i], ctx->opts.delay_us);
    }
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "A3",
        .title = "Early Wait: the target waits while the transfer still runs",
        .header =
            "rank 0 origin, rank 1 target; the target has posted before time 0\n"
            "origin at time 0: start, put SIZE bytes, complete\n"
            "target at time 0: closes its exposure, then has D (--delay-us) of work to do:\n"
            "  variant wait (vendor, ref): MPI_Win_wait, then the work\n"
            "  variant test (vendor, ref): MPI_Win_test between 20 us slices of the work\n"
            "  variant iwait (ref-nb): MPIX_Win_iwait, the work, then MPI_Wait\n"
            "measured at the target: cumulative_us (time 0 to epoch and work done), idle_us\n"
            "  (inside synchronization calls), target_epoch_us; at the origin: origin_epoch_us\n"
            "paper 000 (§III): MPI_Win_test mitigates the idle time, MPIX_Win_iwait removes it",
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
