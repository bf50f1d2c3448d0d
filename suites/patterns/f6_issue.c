/* f6_issue.c — F6: eager vs delayed issuing of RMA operations (paper 004 §III-D, §IV-D, Figures
 * 7 and 8; issue 26).
 *
 * All-to-all in fence epochs: every rank puts `size` 8-byte values to every rank (itself
 * included), each at its own slot of the target's window, then closes the epoch with a fence.
 * The same libnbrma binary runs both strategies of 004, chosen per window with the info key
 * nbrma_issue: eager carries each put out in its call; delayed queues each as an operation object
 * until the closing fence, as MPICH's lazy issue does. Measured per epoch (a sample; maximum
 * across ranks): epoch_us, from the first put to the closing fence's return. Memory, from
 * MPIX_Win_get_stats' gauges (counters at the allocation sites, never a model; the largest value
 * across ranks): ops_hwm_bytes, the operation objects held at once (004 Fig. 8a); ops_per_op, the
 * same per queued put; pooled_bytes, freed operation objects the process keeps for reuse after the
 * epochs (its pool, up to NBRMA_OP_POOL objects: memory not returned to malloc);
 * requests_hwm_bytes, request objects held at once (Fig. 8b: libnbrma's closing requests; a put
 * carries none); meta_bytes, the window's metadata; prof_1 .. prof_8 and prof_after, 004's Fig. 8a
 * profile from one more, untimed epoch: the operation objects rank 0 holds after each eighth of its
 * puts and after the closing fence. After every epoch the operation objects must be back at zero.
 * Every epoch's data is verified at its target (then a barrier, outside the timed part: the closing
 * fence opened the next epoch). Vendor: no counters to read (series_why). */
#include <stdio.h>

#include "strategy.h"

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, p = c->ctx->nranks;
    const size_t n = c->size; /* puts per target per epoch */
    long *base, *src;
    MPI_Win win;
    if (!strat_window(c, st, "nbrma_issue", c->op ? "delayed" : "eager",
                      n * (size_t)p * sizeof(long), n, &base, &src, &win))
        return;
    static const char *const q[] = {"epoch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    NBH_MPI(c, MPI_Win_fence(0, win));
    /* Every epoch starts with every rank past its opening fence (as after each check below):
     * otherwise eager's first epoch records the puts its not yet ready epoch receives
     * (deferred, 000 §VII-A), and its high-water mark would measure that, not eager issue. */
    NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    long epoch = 0;
    int ok = 1;
    long long leftover = 0;
    while (gb_keep_running(st)) {
        epoch++;
        for (size_t i = 0; i < n; i++)
            src[i] = strat_value(me, epoch, i);
        double t0 = MPI_Wtime();
        for (int k = 0; k < p; k++) {
            int t = (me + k) % p;
            for (size_t i = 0; i < n; i++)
                MPI_Put(&src[i], 1, MPI_LONG, t, (MPI_Aint)((size_t)me * n + i), 1, MPI_LONG, win);
        }
        MPI_Win_fence(0, win);
        double t = MPI_Wtime() - t0;
        nbh_rec_sample(&rec, st, &t);
        leftover += strat_stats(c, win).ops.count; /* Fig. 8a: back to 0 after each closing fence */
        for (int o = 0; o < p && ok; o++)
            for (size_t i = 0; i < n && ok; i++)
                ok = base[(size_t)o * n + i] == strat_value(o, epoch, i);
        /* the closing fence opened the next epoch: no rank's puts may land before this check */
        NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    }
    MPIX_Win_stats s = strat_stats(c, win);
    /* 004 Fig. 8a, untimed: one more epoch, the operation objects held after each eighth of its
     * puts and after its closing fence (prof_1 .. prof_8, prof_after; this rank's, rank 0's
     * reported). */
    double prof[9];
    {
        size_t total = n * (size_t)p, done = 0;
        int k8 = 0;
        epoch++;
        for (size_t i = 0; i < n; i++) /* before any put: a queued put reads it at the fence */
            src[i] = strat_value(me, epoch, i);
        for (int k = 0; k < p; k++) {
            int t = (me + k) % p;
            for (size_t i = 0; i < n; i++) {
                MPI_Put(&src[i], 1, MPI_LONG, t, (MPI_Aint)((size_t)me * n + i), 1, MPI_LONG, win);
                done++;
                while (k8 < 8 && done * 8 >= total * (size_t)(k8 + 1))
                    prof[k8++] = (double)strat_stats(c, win).ops.count;
            }
        }
        NBH_MPI(c, MPI_Win_fence(0, win));
        prof[8] = (double)strat_stats(c, win).ops.count;
        leftover += (long long)prof[8];
        for (int o = 0; o < p && ok; o++)
            for (size_t i = 0; i < n && ok; i++)
                ok = base[(size_t)o * n + i] == strat_value(o, epoch, i);
        NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    }
    NBH_MPI(c, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    nbh_verify(st, c, ok && leftover == 0,
               "epoch %ld: a put is missing at its target, or %lld operation objects outlived "
               "their closing fence",
               epoch, leftover);

    /* the largest across ranks */
    double v[5] = {(double)s.ops.bytes_hwm, (double)s.proc_requests.bytes_hwm, (double)s.meta.bytes,
                   (double)s.ops.count_hwm, (double)s.proc_ops_pooled.bytes};
    NBH_MPI(c, MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE, MPI_MAX, c->ctx->comm));
    nbh_rec_report(&rec, st);
    gb_set_counter(st, "ops_hwm_bytes", v[0]);
    gb_set_counter(st, "ops_per_op", v[3] > 0 ? v[0] / v[3] : 0);
    gb_set_counter(st, "ops_hwm", v[3]);
    gb_set_counter(st, "requests_hwm_bytes", v[1]);
    gb_set_counter(st, "meta_bytes", v[2]);
    gb_set_counter(st, "pooled_bytes", v[4]); /* freed objects the process keeps (NBRMA_OP_POOL) */
    static const char *const pname[9] = {"prof_1", "prof_2", "prof_3", "prof_4",    "prof_5",
                                         "prof_6", "prof_7", "prof_8", "prof_after"};
    NBH_MPI(c, MPI_Bcast(prof, 9, MPI_DOUBLE, 0, c->ctx->comm));
    for (int k = 0; k < 9; k++)
        gb_set_counter(st, pname[k], prof[k]);
    nbh_rec_free(&rec);
    NBH_MPI(c, MPI_Win_free(&win));
    free(src);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = 0; op < 2; op++)
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, op, ctx->opts.sizes[i], run,
                         "F6_issue/%s/issue:%s/ops:%zu/procs:%d/nodes:%d", nbh_series_name(s),
                         op ? "delayed" : "eager", ctx->opts.sizes[i], ctx->nranks, ctx->nnodes);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "F6",
        .title = "eager vs delayed issuing: epoch time and operation-object memory (paper 004 "
                 "§III-D, §IV-D)",
        .header = "every rank: fence; SIZE puts of 8 B to every rank (own slots); fence\n"
                  "sample = one epoch (first put .. closing fence), maximum across ranks;\n"
                  "memory: operation/request objects held at once (MPIX_Win_get_stats gauges),\n"
                  "maximum across ranks; strategy per window (info nbrma_issue=eager|delayed)",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "64,1024,16384,65536",
        .quick_sizes = "64,1024",
        .default_iters = 20,
        .register_cases = register_cases,
        .series = 1u << NBH_REF,
        .series_why = "the strategies are libnbrma's (vendor MPI libraries have no switch and no "
                      "memory counters to read); ref-nb: fence epochs here are blocking",
    };
    return nbh_main(argc, argv, &ex);
}
