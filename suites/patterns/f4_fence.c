/* f4_fence.c — F4: the reduce-scatter vs the barrier fence (paper 004 §III-C1, §IV-C, Figures 2
 * and 5; 003 §4; issue 26).
 *
 * Every rank puts `size` 8-byte values to each of its two ring neighbours (fewer with P = 2: the
 * one other rank), each at its own slot of the target's window, then closes the epoch with a
 * fence — a halo exchange, 003's ghost-area pattern. The same libnbrma binary runs both
 * algorithms, chosen per window with the info key nbrma_fence: barrier (004 Fig. 2b, with
 * counters) and reduce_scatter (Fig. 2a: opening fence a no-op, calls held to the closing fence,
 * MPI_Ireduce_scatter_block of per-target flags, one notification per target). Measured per
 * epoch (a sample; maximum across ranks): epoch_us, from the first put to the closing fence's
 * return. Also meta_bytes, the window's metadata (MPIX_Win_get_stats: the reduce-scatter flags
 * are P ints more), and ops_hwm, the operation objects held at once (the held calls). Every
 * epoch's data is verified at its target (then a barrier, outside the timed part: the closing
 * fence opened the next epoch). Vendor: no switch (series_why). */
#include <stdio.h>

#include "strategy.h"

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, p = c->ctx->nranks;
    const size_t n = c->size; /* puts per target per epoch */
    /* targets: the right and left neighbours (one rank when p = 2); slot 0 from the left, 1 from
     * the right */
    const int right = (me + 1) % p, left = (me + p - 1) % p, nt = p == 2 ? 1 : 2;
    long *base, *src;
    MPI_Win win;
    if (!strat_window(c, st, "nbrma_fence", c->op ? "reduce_scatter" : "barrier",
                      2 * n * sizeof(long), n, &base, &src, &win))
        return;
    static const char *const q[] = {"epoch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    NBH_MPI(c, MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    long epoch = 0;
    int ok = 1;
    while (gb_keep_running(st)) {
        epoch++;
        for (size_t i = 0; i < n; i++)
            src[i] = strat_value(me, epoch, i);
        double t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++)
            MPI_Put(&src[i], 1, MPI_LONG, right, (MPI_Aint)i, 1, MPI_LONG, win);
        if (nt == 2)
            for (size_t i = 0; i < n; i++)
                MPI_Put(&src[i], 1, MPI_LONG, left, (MPI_Aint)(n + i), 1, MPI_LONG, win);
        MPI_Win_fence(0, win);
        double t = MPI_Wtime() - t0;
        nbh_rec_sample(&rec, st, &t);
        for (size_t i = 0; i < n && ok; i++)
            ok = base[i] == strat_value(left, epoch, i) &&
                 (nt == 1 || base[n + i] == strat_value(right, epoch, i));
        /* the closing fence opened the next epoch: no rank's puts may land before this check */
        NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    }
    MPIX_Win_stats s = strat_stats(c, win);
    NBH_MPI(c, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    nbh_verify(st, c, ok, "epoch %ld: a put is missing at its target", epoch);
    double v[2] = {(double)s.meta.bytes, (double)s.ops.count_hwm};
    NBH_MPI(c, MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, c->ctx->comm));
    nbh_rec_report(&rec, st);
    gb_set_counter(st, "meta_bytes", v[0]);
    gb_set_counter(st, "ops_hwm", v[1]);
    nbh_rec_free(&rec);
    NBH_MPI(c, MPI_Win_free(&win));
    free(src);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = 0; op < 2; op++)
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, op, ctx->opts.sizes[i], run,
                         "F4_fence/%s/fence:%s/ops:%zu/procs:%d/nodes:%d", nbh_series_name(s),
                         op ? "reduce_scatter" : "barrier", ctx->opts.sizes[i], ctx->nranks,
                         ctx->nnodes);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "F4",
        .title = "reduce-scatter vs barrier fence: epoch time and metadata (paper 004 §III-C1, "
                 "§IV-C; 003 §4)",
        .header = "every rank: fence; SIZE puts of 8 B to each ring neighbour; fence\n"
                  "sample = one epoch (first put .. closing fence), maximum across ranks;\n"
                  "meta_bytes, ops_hwm: MPIX_Win_get_stats, maximum across ranks;\n"
                  "algorithm per window (info nbrma_fence=barrier|reduce_scatter)",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "1,16,256,4096",
        .quick_sizes = "1,256",
        .default_iters = 50,
        .register_cases = register_cases,
        .series = 1u << NBH_REF,
        .series_why = "the algorithms are libnbrma's (vendor MPI libraries have no switch); "
                      "ref-nb: fence epochs here are blocking",
    };
    return nbh_main(argc, argv, &ex);
}
