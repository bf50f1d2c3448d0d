/* d3_msgrate.c — D3: message rate (paper 001 §3.1.2).
 *
 * Each sample issues --batch puts (default 1000, of --sizes bytes, default 8) to consecutive
 * slots of the target's window without synchronization, then one MPI_Win_flush. The cost of
 * starting one operation is the batch time divided by the batch (paper: 80 ns intra-node,
 * 416 ns inter-node per 8-byte put). */
#include "bench.h"

static long batch = 1000;

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = NBH_ORIGIN, target = NBH_TARGET;
    const size_t n = c->size;
    const int count = (int)n;
    nbh_xfer_t x; /* the batch's puts fill consecutive slots of one patterned transfer */
    nbh_xfer_open(&x, c, n * (size_t)batch, 1);

    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, x.w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++) {
            for (long k = 0; k < batch; k++)
                NBH_MPI(c, nbh_xfer_issue(&x, (size_t)k * n, count));
            NBH_MPI(c, MPI_Win_flush(target, x.w.win));
        }
    }
    static const char *const q[] = {"batch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double t = 0;
        if (me == origin) {
            double t0 = MPI_Wtime();
            for (long k = 0; k < batch; k++)
                nbh_xfer_issue(&x, (size_t)k * n, count);
            MPI_Win_flush(target, x.w.win);
            t = MPI_Wtime() - t0;
        }
        nbh_rec_sample(&rec, st, &t);
    }
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock(target, x.w.win));
    if (nbh_xfer_verify(&x, st, c)) {
        nbh_rec_report(&rec, st);
        double med = nbh_rec_median(&rec, 0);
        gb_set_counter(st, "per_put_us", med * 1e6 / (double)batch);
        gb_set_counter(st, "rate_Mmsgs", med > 0 ? (double)batch / med / 1e6 : 0);
    }
    nbh_rec_free(&rec);
    nbh_xfer_close(&x);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int i = 0; i < ctx->opts.nsizes; i++)
        nbh_add_case(ctx, s, 0, ctx->opts.sizes[i], run, "D3_put_rate/%s/size:%zu/batch:%ld",
                     nbh_series_name(s), ctx->opts.sizes[i], batch);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"batch", "puts per sample before the flush", &batch, 1, 1000000},
        {0, 0, 0, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "D3",
        .title = "put message rate (paper 001 §3.1.2)",
        .header =
            "origin rank 0, target rank 1, exclusive lock held across the loop\n"
            "sample = --batch puts to consecutive target slots, no synchronization, then one\n"
            "flush; per_put_us = batch_us / batch (one-way injection cost)",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_WINDOW,
        .default_sizes = "8",
        .quick_sizes = "8",
        .default_iters = 200,
        .extra = extra,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures the blocking calls (the nonblocking epochs are A1-A7, B1-B5)",
    };
    return nbh_main(argc, argv, &ex);
}
