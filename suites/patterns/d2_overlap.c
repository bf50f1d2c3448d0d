/* d2_overlap.c — D2: how much computation a put or get overlaps (paper 001 §3.1.1).
 *
 * Per case, the origin first measures the operation's latency (put/get + flush), then calibrates
 * a compute loop to 1.1x that latency ("slightly more than the latency"). Each sample then
 * measures three things: comm = op + flush, compute = the loop alone, combined = op, loop,
 * flush. overlap_ratio = (comm + compute - combined) / comm, clamped to [0, 1]: 1 means the
 * transfer proceeded entirely while the CPU computed, 0 means none of it did. */
#include "bench.h"

enum { OP_PUT, OP_GET };

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = NBH_ORIGIN, target = NBH_TARGET;
    const int count = (int)c->size;
    nbh_xfer_t x;
    nbh_xfer_open(&x, c, c->size, c->op == OP_PUT);

    /* Calibration: median latency over warm-up + 20 samples, agreed by all ranks. */
    double lat[32] = {0};
    int nlat = 0;
    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, x.w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++) {
            nbh_xfer_issue(&x, 0, count);
            NBH_MPI(c, MPI_Win_flush(target, x.w.win));
        }
        for (nlat = 0; nlat < 21; nlat++) {
            double t0 = MPI_Wtime();
            nbh_xfer_issue(&x, 0, count);
            MPI_Win_flush(target, x.w.win);
            lat[nlat] = MPI_Wtime() - t0;
        }
        for (int i = 1; i < nlat; i++) /* insertion sort, 21 values */
            for (int j = i; j > 0 && lat[j] < lat[j - 1]; j--) {
                double x = lat[j];
                lat[j] = lat[j - 1];
                lat[j - 1] = x;
            }
    }
    double compute_us = me == origin ? 1.1 * lat[nlat / 2] * 1e6 : 0;
    NBH_MPI(c, nbh_allreduce(&compute_us, 1, MPI_DOUBLE, MPI_MAX, c->ctx->comm));

    static const char *const q[] = {"combined", "comm", "compute"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 3, q);
    while (gb_keep_running(st)) {
        double t[3] = {0, 0, 0};
        if (me == origin) {
            double t0 = MPI_Wtime();
            nbh_xfer_issue(&x, 0, count);
            MPI_Win_flush(target, x.w.win);
            double t1 = MPI_Wtime();
            nbh_work_us(compute_us);
            double t2 = MPI_Wtime();
            nbh_xfer_issue(&x, 0, count);
            nbh_work_us(compute_us);
            MPI_Win_flush(target, x.w.win);
            double t3 = MPI_Wtime();
            t[0] = t3 - t2;
            t[1] = t1 - t0;
            t[2] = t2 - t1;
        }
        nbh_rec_sample(&rec, st, t);
    }
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock(target, x.w.win));
    if (nbh_xfer_verify(&x, st, c)) {
        nbh_rec_report(&rec, st);
        double comb = nbh_rec_median(&rec, 0), comm = nbh_rec_median(&rec, 1),
               comp = nbh_rec_median(&rec, 2);
        double ratio = comm > 0 ? (comm + comp - comb) / comm : 0;
        gb_set_counter(st, "overlap_ratio", ratio < 0 ? 0 : ratio > 1 ? 1 : ratio);
    }
    nbh_rec_free(&rec);
    nbh_xfer_close(&x);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = OP_PUT; op <= OP_GET; op++)
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, op, ctx->opts.sizes[i], run, "D2_%s_overlap/%s/size:%zu",
                         op == OP_PUT ? "put" : "get", nbh_series_name(s), ctx->opts.sizes[i]);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "D2",
        .title = "communication/computation overlap (paper 001 §3.1.1)",
        .header =
            "origin rank 0, target rank 1, exclusive lock held across the loop\n"
            "compute loop calibrated to 1.1x the measured op+flush latency; each sample times\n"
            "comm (op+flush), compute (loop) and combined (op, loop, flush) at the origin\n"
            "overlap_ratio = (comm + compute - combined) / comm, clamped to [0, 1]",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_WINDOW,
        .default_sizes = "8:2M:x4",
        .quick_sizes = "8,4K,256K",
        .default_iters = 1000,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures the blocking calls (the nonblocking epochs are A1-A7, B1-B5)",
    };
    return nbh_main(argc, argv, &ex);
}
