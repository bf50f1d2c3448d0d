/* r2_windows.c — R2: what creating and freeing a window costs, vendor vs ref (issue #9 items 8
 * and 15; paper 004 §III, window metadata and set-up).
 *
 * Every rank creates and frees one window per sample, of one shape per case: MPI_Win_create over
 * 4 KiB of user memory, MPI_Win_allocate of 4 KiB (equal sizes: symmetric under ref), of unequal
 * sizes, MPI_Win_allocate_shared of 4 KiB, MPI_Win_create_dynamic. Measured: create_us, free_us,
 * window_us = both (maximum across ranks per sample; a collective). Run with more ranks than
 * cores too: there the MPI library's blocking collectives spin, and ref must not add to them. Each
 * case checks once that a window of its shape moves data (a fence epoch with one put). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { W_CREATE, W_ALLOCATE, W_ALLOCATE_UNEQUAL, W_SHARED, W_DYNAMIC, W_N };
static const char *const shape[W_N] = {"create", "allocate", "allocate_unequal",
                                       "allocate_shared", "dynamic"};

static int make(const nbh_case_t *c, void *mem, MPI_Win *w, long **base)
{
    MPI_Comm comm = c->ctx->comm;
    const MPI_Aint unequal = 64 * (MPI_Aint)(c->ctx->rank + 1);
    *base = mem;
    switch (c->op) {
    case W_CREATE:
        return MPI_Win_create(mem, 4096, sizeof(long), MPI_INFO_NULL, comm, w);
    case W_ALLOCATE:
        return MPI_Win_allocate(4096, sizeof(long), MPI_INFO_NULL, comm, base, w);
    case W_ALLOCATE_UNEQUAL:
        return MPI_Win_allocate(unequal, sizeof(long), MPI_INFO_NULL, comm, base, w);
    case W_SHARED:
        return MPI_Win_allocate_shared(4096, sizeof(long), MPI_INFO_NULL, comm, base, w);
    default:
        return MPI_Win_create_dynamic(MPI_INFO_NULL, comm, w);
    }
}

/* One fence epoch with a put to the right neighbour; 1 if it arrived. */
static int works(const nbh_case_t *c, MPI_Win w, long *base)
{
    const int me = c->ctx->rank, n = c->ctx->nranks, right = (me + 1) % n;
    MPI_Aint disp = 0, theirs = 0;
    if (c->op == W_DYNAMIC) {
        NBH_MPI(c, MPI_Win_attach(w, base, 64));
        NBH_MPI(c, MPI_Get_address(base, &disp));
        NBH_MPI(c, MPI_Sendrecv(&disp, 1, MPI_AINT, (me + n - 1) % n, 0, &theirs, 1, MPI_AINT,
                                right, 0, c->ctx->comm, MPI_STATUS_IGNORE));
    }
    long v = me + 1;
    NBH_MPI(c, MPI_Win_fence(0, w));
    NBH_MPI(c, MPI_Put(&v, 1, MPI_LONG, right, theirs, 1, MPI_LONG, w));
    NBH_MPI(c, MPI_Win_fence(0, w));
    int ok = base[0] == (me + n - 1) % n + 1;
    if (c->op == W_DYNAMIC)
        NBH_MPI(c, MPI_Win_detach(w, base));
    return ok;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    if (MPIX_Nbrma_set_impl)
        NBH_MPI(c, MPIX_Nbrma_set_impl(c->series == NBH_VENDOR ? "vendor" : "ref"));
    long *mem = aligned_alloc(64, 4096);
    if (!mem)
        nbh_mpi_fail(c, "aligned_alloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    MPI_Win w;
    long *base;
    NBH_MPI(c, make(c, mem, &w, &base));
    int ok = works(c, w, base);
    NBH_MPI(c, MPI_Win_free(&w));
    for (int i = 0; i < c->ctx->opts.warmup; i++) {
        NBH_MPI(c, make(c, mem, &w, &base));
        NBH_MPI(c, MPI_Win_free(&w));
    }
    static const char *const q[] = {"window", "create", "free"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 3, q);
    while (gb_keep_running(st)) {
        double t0 = MPI_Wtime();
        NBH_MPI(c, make(c, mem, &w, &base));
        double t1 = MPI_Wtime();
        NBH_MPI(c, MPI_Win_free(&w));
        double t2 = MPI_Wtime();
        double t[3] = {t2 - t0, t1 - t0, t2 - t1};
        nbh_rec_sample(&rec, st, t);
    }
    if (nbh_verify(st, c, ok, "a %s window did not carry a put to the right neighbour",
                   shape[c->op]))
        nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
    free(mem);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = 0; op < W_N; op++) {
        if (!strcmp(shape[op], "allocate_shared") && ctx->nnodes > 1) {
            /* MPI-3.1 §11.2.3: its group must share memory (NODES=k runs span nodes) */
            if (ctx->rank == 0 && s == NBH_VENDOR)
                fprintf(stderr, "r2_windows: R2_window_allocate_shared skipped: the ranks span "
                                "%d nodes\n",
                        ctx->nnodes);
            continue;
        }
        nbh_add_case(ctx, s, op, 0, run, "R2_window_%s/%s/procs:%d", shape[op],
                     nbh_series_name(s), ctx->nranks);
    }
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "R2",
        .title = "window creation and free, vendor vs ref (004 §III: window set-up costs)",
        .header = "every rank: create one window, free it (a collective: maximum across ranks)\n"
                  "shapes: MPI_Win_create 4 KiB, MPI_Win_allocate 4 KiB (symmetric under ref), "
                  "allocate of unequal sizes, MPI_Win_allocate_shared 4 KiB, dynamic\n"
                  "measured: window_us = create_us + free_us per sample",
        .min_ranks = 2,
        .default_iters = 200,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "window creation has no nonblocking variant",
    };
    return nbh_main(argc, argv, &ex);
}
