/* d1_latency.c — D1: put and get latency vs size (paper 001 §3.1).
 *
 * Allocated window, origin rank 0 locks target rank 1 exclusively once, then each sample is one
 * MPI_Put (or MPI_Get) followed by MPI_Win_flush: the time to remote completion. Paper's fit on
 * a Cray XE6: P_put = 0.16 ns*s + 1 us, P_get = 0.17 ns*s + 1.9 us.
 *
 * Beside them, in the vendor series, the two-sided floor: rank 0 sends `size` bytes with the MPI
 * library's point-to-point, rank 1 answers with an empty message (PMPI_ calls, so libnbrma's
 * waits are not in it). That is what a flushed put costs at least when RMA runs as active
 * messages over the same library (one request, one acknowledgement): libnbrma's am transport
 * across nodes (NODES=1) is measured against it (issue 10 §6). */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

enum { OP_PUT, OP_GET, OP_P2P };

static void run_p2p(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank;
    const int count = (int)c->size;
    char *buf = calloc(c->size ? c->size : 1, 1);
    if (!buf) {
        fprintf(stderr, "nbrma: out of memory for %zu bytes\n", c->size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = me == NBH_ORIGIN ? NBH_TARGET : me == NBH_TARGET ? NBH_ORIGIN : -1;
    static const char *const q[] = {"latency"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    for (int i = -c->ctx->opts.warmup; i < 0 || gb_keep_running(st); i++) {
        double t = 0;
        if (me == NBH_ORIGIN) {
            double t0 = MPI_Wtime();
            NBH_MPI(c, PMPI_Send(buf, count, MPI_BYTE, peer, 7, c->ctx->comm));
            NBH_MPI(c, PMPI_Recv(NULL, 0, MPI_BYTE, peer, 8, c->ctx->comm, MPI_STATUS_IGNORE));
            t = MPI_Wtime() - t0;
        } else if (me == NBH_TARGET) {
            NBH_MPI(c, PMPI_Recv(buf, count, MPI_BYTE, peer, 7, c->ctx->comm, MPI_STATUS_IGNORE));
            NBH_MPI(c, PMPI_Send(NULL, 0, MPI_BYTE, peer, 8, c->ctx->comm));
        }
        if (i >= 0)
            nbh_rec_sample(&rec, st, &t);
    }
    nbh_rec_report(&rec, st);
    double med = nbh_rec_median(&rec, 0);
    gb_set_counter(st, "bandwidth_MBps", med > 0 ? (double)c->size / med / 1e6 : 0);
    nbh_rec_free(&rec);
    free(buf);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, target = NBH_TARGET;
    const int count = (int)c->size;
    nbh_xfer_t x;
    nbh_xfer_open(&x, c, c->size, c->op == OP_PUT);
    if (me == NBH_ORIGIN) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, x.w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++) {
            NBH_MPI(c, nbh_xfer_issue(&x, 0, count));
            NBH_MPI(c, MPI_Win_flush(target, x.w.win));
        }
    }
    static const char *const q[] = {"latency"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double t = 0;
        if (me == NBH_ORIGIN) {
            double t0 = MPI_Wtime();
            nbh_xfer_issue(&x, 0, count);
            MPI_Win_flush(target, x.w.win);
            t = MPI_Wtime() - t0;
        }
        nbh_rec_sample(&rec, st, &t);
    }
    if (me == NBH_ORIGIN)
        NBH_MPI(c, MPI_Win_unlock(target, x.w.win));
    if (nbh_xfer_verify(&x, st, c)) {
        nbh_rec_report(&rec, st);
        double med = nbh_rec_median(&rec, 0);
        gb_set_counter(st, "bandwidth_MBps", med > 0 ? (double)c->size / med / 1e6 : 0);
    }
    nbh_rec_free(&rec);
    nbh_xfer_close(&x);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = OP_PUT; op <= OP_GET; op++)
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, op, ctx->opts.sizes[i], run, "D1_%s_latency/%s/size:%zu",
                         op == OP_PUT ? "put" : "get", nbh_series_name(s), ctx->opts.sizes[i]);
    if (s == NBH_VENDOR) /* the two-sided floor, once */
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, OP_P2P, ctx->opts.sizes[i], run_p2p,
                         "D1_p2p_send_ack/vendor/size:%zu", ctx->opts.sizes[i]);
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
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures the blocking calls (the nonblocking epochs are A1-A7, B1-B5)",
    };
    return nbh_main(argc, argv, &ex);
}
