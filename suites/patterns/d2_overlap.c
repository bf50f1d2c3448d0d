/* d2_overlap.c — D2: how much computation a put or get overlaps (paper 001 §3.1.1).
 *
 * Per case, the origin first measures the operation's latency (put/get + flush), then calibrates
 * a compute loop to 1.1x that latency ("slightly more than the latency"). Each sample then
 * measures three things: comm = op + flush, compute = the loop alone, combined = op, loop,
 * flush. overlap_ratio = (comm + compute - combined) / comm, clamped to [0, 1]: 1 means the
 * transfer proceeded entirely while the CPU computed, 0 means none of it did. */
#include <stdlib.h>

#include "bench.h"

enum { OP_PUT, OP_GET };

static void issue(const nbh_case_t *c, void *buf, int count, int target, MPI_Aint disp, MPI_Win win)
{
    if (c->op == OP_PUT)
        MPI_Put(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE, win);
    else
        MPI_Get(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE, win);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1;
    const size_t n = c->size;
    const int count = (int)n;
    nbh_win_t w;
    nbh_win_open(&w, c, (MPI_Aint)n);
    unsigned seed = nbh_next_seed();
    unsigned char *buf = calloc(1, n);
    if (!buf)
        nbh_mpi_fail(c, "calloc (origin buffer)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    if (c->op == OP_GET && me == target) {
        nbh_win_self_lock(&w, c);
        nbh_pattern_fill(w.base, n, seed);
        nbh_win_self_unlock(&w, c);
    }
    if (c->op == OP_PUT && me == origin)
        nbh_pattern_fill(buf, n, seed);
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    const MPI_Aint disp = nbh_win_disp(&w, target, 0);

    /* Calibration: median latency over warm-up + 20 samples, agreed by all ranks. */
    double lat[32] = {0};
    int nlat = 0;
    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++) {
            issue(c, buf, count, target, disp, w.win);
            NBH_MPI(c, MPI_Win_flush(target, w.win));
        }
        for (nlat = 0; nlat < 21; nlat++) {
            double t0 = MPI_Wtime();
            issue(c, buf, count, target, disp, w.win);
            MPI_Win_flush(target, w.win);
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
            issue(c, buf, count, target, disp, w.win);
            MPI_Win_flush(target, w.win);
            double t1 = MPI_Wtime();
            nbh_work_us(compute_us);
            double t2 = MPI_Wtime();
            issue(c, buf, count, target, disp, w.win);
            nbh_work_us(compute_us);
            MPI_Win_flush(target, w.win);
            double t3 = MPI_Wtime();
            t[0] = t3 - t2;
            t[1] = t1 - t0;
            t[2] = t2 - t1;
        }
        nbh_rec_sample(&rec, st, t);
    }
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock(target, w.win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));

    long bad = -1;
    if (c->op == OP_PUT && me == target) {
        nbh_win_self_lock(&w, c);
        bad = nbh_pattern_check(w.base, n, seed);
        nbh_win_self_unlock(&w, c);
    } else if (c->op == OP_GET && me == origin) {
        bad = nbh_pattern_check(buf, n, seed);
    }
    if (nbh_verify(st, c, bad < 0, "byte %ld of %zu differs from what was %s", bad, n,
                   c->op == OP_PUT ? "put" : "read by get")) {
        nbh_rec_report(&rec, st);
        double comb = nbh_rec_median(&rec, 0), comm = nbh_rec_median(&rec, 1),
               comp = nbh_rec_median(&rec, 2);
        double ratio = comm > 0 ? (comm + comp - comb) / comm : 0;
        gb_set_counter(st, "overlap_ratio", ratio < 0 ? 0 : ratio > 1 ? 1 : ratio);
    }
    nbh_rec_free(&rec);
    free(buf);
    nbh_win_close(&w);
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
    };
    return nbh_main(argc, argv, &ex);
}
