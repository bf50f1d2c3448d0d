/* f3_metadata.c — F3: window metadata per process vs P (paper 004 §III-B, §IV-B, Figure 4;
 * issue 26).
 *
 * 004 measures what each process stores about the others for one window: base addresses, scaling
 * units (disp_unit) and memory keys — O(P) except MPI_Win_allocate with one disp_unit, which can
 * be O(1) with symmetric allocation. Here every rank creates one window per sample, of one shape
 * per case: MPI_Win_create or MPI_Win_allocate (4 KiB), with the same disp_unit on every rank or
 * a different one (rank + 1), and MPI_Win_allocate and MPI_Win_create with nbrma_meta=lazy (F3's
 * O(1) layout: descriptors made on first use, win.c; a create window's are looked up in a
 * directory that rank 0 holds) — allocate_diff_lazy too, the disp_unit per rank in the symmetric
 * segment's directory, where 004 keeps O(P) — and reads MPIX_Win_get_stats before freeing it. Counters
 * (the largest across ranks; counters at the allocation sites, not a model): meta_bytes, the
 * window's metadata in the process (object, per-peer descriptors, engine queues, control block);
 * meta_bytes_rest, the same without rank 0 (which holds create_lazy's directory);
 * peer_bytes, the per-peer part; ctl_bytes, the node-shared control block (32 B of matching
 * counters per peer); per_rank_bytes = meta_bytes / P. Timed: create_us (one create + stats +
 * free; R2 times creation in detail). Run at P = 2, 4, 8: plot.py fits meta_bytes = a + b·P per
 * shape and extrapolates to 004's scales (docs/experiments-f.md). Each window is checked to move
 * data once (a fence epoch with one put). Vendor: no counters (series_why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ref/include/nbrma.h"
#include "bench.h"

extern int MPIX_Win_get_stats(MPI_Win win, MPIX_Win_stats *stats) __attribute__((weak));

enum {
    S_CREATE_SAME,
    S_CREATE_DIFF,
    S_ALLOCATE_SAME,
    S_ALLOCATE_DIFF,
    S_ALLOCATE_LAZY,
    S_CREATE_LAZY,
    S_ALLOCATE_DIFF_LAZY,
    S_N
};
static const char *const shape[S_N] = {"create_same",   "create_diff",   "allocate_same",
                                       "allocate_diff", "allocate_lazy", "create_lazy",
                                       "allocate_diff_lazy"};

static int is_lazy(int op)
{
    return op == S_ALLOCATE_LAZY || op == S_CREATE_LAZY || op == S_ALLOCATE_DIFF_LAZY;
}

static int make(const nbh_case_t *c, void *mem, MPI_Win *w, long **base)
{
    const int du = (c->op == S_CREATE_DIFF || c->op == S_ALLOCATE_DIFF ||
                    c->op == S_ALLOCATE_DIFF_LAZY)
                       ? c->ctx->rank + 1
                       : 8;
    const int create = c->op == S_CREATE_SAME || c->op == S_CREATE_DIFF || c->op == S_CREATE_LAZY;
    *base = mem;
    /* 004's O(1) case: no descriptor until a peer is used (nbrma_meta=lazy; one node only, else
     * the window keeps its table, and the case says so) */
    MPI_Info info = MPI_INFO_NULL;
    int rc = MPI_SUCCESS;
    if (is_lazy(c->op) && (rc = MPI_Info_create(&info)) == MPI_SUCCESS)
        rc = MPI_Info_set(info, "nbrma_meta", "lazy");
    if (rc == MPI_SUCCESS)
        rc = create ? MPI_Win_create(mem, 4096, du, info, c->ctx->comm, w)
                    : MPI_Win_allocate(4096, du, info, c->ctx->comm, base, w);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return rc;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    if (!MPIX_Win_get_stats || !MPIX_Nbrma_set_impl) {
        gb_skip_with_error(st, "this libnbrma has no MPIX_Win_get_stats");
        return;
    }
    NBH_MPI(c, MPIX_Nbrma_set_impl("ref"));
    const int me = c->ctx->rank, p = c->ctx->nranks, right = (me + 1) % p;
    long *mem = aligned_alloc(64, 4096), *base;
    if (!mem)
        nbh_mpi_fail(c, "aligned_alloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    MPI_Win w;
    /* once: the window moves data (disp 0 of the right neighbour: disp_unit does not matter) */
    NBH_MPI(c, make(c, mem, &w, &base));
    if (is_lazy(c->op)) {
        MPI_Info info;
        char val[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        NBH_MPI(c, MPI_Win_get_info(w, &info));
        NBH_MPI(c, MPI_Info_get(info, "nbrma_meta", MPI_MAX_INFO_VAL, val, &found));
        NBH_MPI(c, MPI_Info_free(&info));
        if (!found || strcmp(val, "lazy")) {
            NBH_MPI(c, MPI_Win_free(&w));
            free(mem);
            gb_skip_with_error(st, "nbrma_meta=lazy applies to windows on one node: this one kept "
                                   "its descriptor table");
            return;
        }
    }
    long v = me + 1;
    NBH_MPI(c, MPI_Win_fence(0, w));
    NBH_MPI(c, MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, w));
    NBH_MPI(c, MPI_Win_fence(0, w));
    int ok = base[0] == (me + p - 1) % p + 1;
    NBH_MPI(c, MPI_Win_free(&w));
    nbh_verify(st, c, ok, "the put from the left neighbour did not arrive");
    static const char *const q[] = {"create"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    MPIX_Win_stats s;
    while (gb_keep_running(st)) {
        double t0 = MPI_Wtime();
        NBH_MPI(c, make(c, mem, &w, &base));
        memset(&s, 0, sizeof s);
        s.version = MPIX_WIN_STATS_VERSION;
        NBH_MPI(c, MPIX_Win_get_stats(w, &s));
        NBH_MPI(c, MPI_Win_free(&w));
        double t = MPI_Wtime() - t0;
        nbh_rec_sample(&rec, st, &t);
    }
    long long pb = 0;
    for (int k = 0; k < MPIX_NBRMA_NTP; k++)
        pb += s.peer_bytes[k];
    double m[4] = {(double)s.meta.bytes, (double)pb, (double)s.ctl_bytes,
                   me == 0 ? 0.0 : (double)s.meta.bytes};
    NBH_MPI(c, MPI_Allreduce(MPI_IN_PLACE, m, 4, MPI_DOUBLE, MPI_MAX, c->ctx->comm));
    nbh_rec_report(&rec, st);
    gb_set_counter(st, "meta_bytes", m[0]);
    gb_set_counter(st, "peer_bytes", m[1]);
    gb_set_counter(st, "ctl_bytes", m[2]);
    gb_set_counter(st, "per_rank_bytes", m[0] / p);
    gb_set_counter(st, "meta_bytes_rest", m[3]);
    nbh_rec_free(&rec);
    free(mem);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int op = 0; op < S_N; op++)
        nbh_add_case(ctx, s, op, 0, run, "F3_metadata/%s/shape:%s/procs:%d/nodes:%d",
                     nbh_series_name(s), shape[op], ctx->nranks, ctx->nnodes);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "F3",
        .title = "window metadata per process vs P (paper 004 §III-B, §IV-B)",
        .header = "every rank: create one window (create / allocate x same / different disp_unit),\n"
                  "read MPIX_Win_get_stats, free it; sample = create + free (max across ranks);\n"
                  "memory = the window's metadata in a process (gauges at the allocation sites)",
        .min_ranks = 2,
        .uses = 0,
        .default_iters = 10,
        .register_cases = register_cases,
        .series = 1u << NBH_REF,
        .series_why = "the counters are libnbrma's (a vendor MPI library has none to read)",
    };
    return nbh_main(argc, argv, &ex);
}
