/* d1_latency.c — D1: put and get latency vs size (paper 001 §3.1).
 *
 * Allocated window, origin rank 0 locks target rank 1 exclusively once, then each sample is one
 * MPI_Put (or MPI_Get) followed by MPI_Win_flush: the time to remote completion. Paper's fit on
 * a Cray XE6: P_put = 0.16 ns*s + 1 us, P_get = 0.17 ns*s + 1.9 us. */
#include <stdlib.h>

#include "bench.h"

enum { OP_PUT, OP_GET };

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1;
    const size_t n = c->size;
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
    const int count = (int)n;
    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++) {
            if (c->op == OP_PUT)
                NBH_MPI(c, MPI_Put(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE, w.win));
            else
                NBH_MPI(c, MPI_Get(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE, w.win));
            NBH_MPI(c, MPI_Win_flush(target, w.win));
        }
    }
    static const char *const q[] = {"latency"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double t = 0;
        if (me == origin) {
            double t0 = MPI_Wtime();
            if (c->op == OP_PUT)
                MPI_Put(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE, w.win);
            else
                MPI_Get(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE, w.win);
            MPI_Win_flush(target, w.win);
            t = MPI_Wtime() - t0;
        }
        nbh_rec_sample(&rec, st, &t);
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
        double med = nbh_rec_median(&rec, 0);
        gb_set_counter(st, "bandwidth_MBps", med > 0 ? (double)n / med / 1e6 : 0);
    }
    nbh_rec_free(&rec);
    free(buf);
    nbh_win_close(&w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = OP_PUT; op <= OP_GET; op++)
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, op, ctx->opts.sizes[i], run, "D1_%s_latency/%s/size:%zu",
                         op == OP_PUT ? "put" : "get", nbh_series_name(s), ctx->opts.sizes[i]);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "D1",
        .title = "put/get latency vs size (paper 001 §3.1)",
        .header =
            "origin rank 0, target rank 1, exclusive lock held across the loop\n"
            "sample = one MPI_Put or MPI_Get + MPI_Win_flush at the origin (remote completion)\n"
            "put: one-way data movement, completion confirmed (round-trip for the flush);\n"
            "get: round-trip. latency_us = median over samples of the max across ranks",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_WINDOW,
        .default_sizes = "1:4M",
        .quick_sizes = "1,64,4K,256K",
        .default_iters = 1000,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
