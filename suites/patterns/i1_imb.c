/* i1_imb.c — I1: the shape of IMB-RMA's passive-target benchmarks (Intel MPI Benchmarks, IMB-RMA:
 * Unidir_put, Unidir_get, Accumulate, Fetch_and_op, Compare_and_swap), where third-party
 * comparisons of MPI RMA look (issue 24).
 *
 * Origin rank 0, target rank 1 (other ranks idle). The window is MPI_Win_create over memory from
 * MPI_Alloc_mem, as IMB makes it (mem:allocmem); for comparison over malloc'ed memory
 * (mem:malloc) and an MPI_Win_allocate window (mem:allocate). Rank 0 holds
 * MPI_Win_lock(MPI_LOCK_SHARED, 1) across the run; one sample is --ops operations (default 100)
 * of one kind and size toward rank 1:
 *   mode:nonagg  each operation followed by MPI_Win_flush (IMB's non-aggregate mode: latency);
 *   mode:agg     all of them issued, then one MPI_Win_flush (aggregate mode: rate).
 * per_op_us = sample / ops (median over samples, minimum beside it).
 * Operations: put and get of --sizes bytes (MPI_BYTE, default 4..64, IMB's small messages; up to
 * 4 MiB), accumulate MPI_SUM of size/4 MPI_INTs, fetch_and_op MPI_SUM and compare_and_swap on one
 * 4-byte (MPI_INT32_T) or 8-byte (MPI_INT64_T) element.
 * Verified: the put pattern in the target's memory, the get pattern in the origin's buffer, every
 * accumulated element, every value fetch_and_op and compare_and_swap returned (each CAS swaps k to
 * k + 1, so each succeeds exactly when the ones before it did) and the final counters.
 * Series vendor and ref (under vendor the memory is the MPI library's MPI_Alloc_mem). Across
 * virtual nodes (NBRMA_RANKS_PER_NODE=1) the ref series is the active-message path, carried out by
 * the target's CPU (paper 004's AM-based operations beside the HW-based ones: CMA, load/store). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { OP_PUT, OP_GET, OP_ACC, OP_FOP, OP_CAS, NOPS };
enum { MEM_ALLOCMEM, MEM_MALLOC, MEM_ALLOCATE, NMEM };
enum { MODE_NONAGG, MODE_AGG };
static const char *const op_names[NOPS] = {"put", "get", "accumulate", "fetch_and_op",
                                           "compare_and_swap"};
static const char *const mem_names[NMEM] = {"allocmem", "malloc", "allocate"};

static long n_ops = 100;

#define C_OP(c)   ((c)->op & 0xf)
#define C_MODE(c) (((c)->op >> 4) & 0xf)
#define C_MEM(c)  (((c)->op >> 8) & 0xf)

typedef struct {
    MPI_Win win;
    unsigned char *base, *mem;
    int kind;
} win_t;

static void win_open(win_t *w, const nbh_case_t *c, MPI_Aint bytes)
{
    MPI_Comm comm = c->ctx->comm;
    if (MPIX_Nbrma_set_impl) /* the series decides whose RMA (and whose MPI_Alloc_mem) serves */
        NBH_MPI(c, MPIX_Nbrma_set_impl(c->series == NBH_VENDOR ? "vendor" : "ref"));
    memset(w, 0, sizeof *w);
    w->kind = C_MEM(c);
    switch (w->kind) {
    case MEM_ALLOCMEM:
        NBH_MPI(c, MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->mem));
        NBH_MPI(c, MPI_Win_create(w->mem, bytes, 1, MPI_INFO_NULL, comm, &w->win));
        w->base = w->mem;
        break;
    case MEM_MALLOC:
        w->mem = aligned_alloc(64, (size_t)bytes);
        if (!w->mem)
            nbh_mpi_fail(c, "aligned_alloc (window memory)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
        NBH_MPI(c, MPI_Win_create(w->mem, bytes, 1, MPI_INFO_NULL, comm, &w->win));
        w->base = w->mem;
        break;
    default:
        NBH_MPI(c, MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win));
        break;
    }
    memset(w->base, 0, (size_t)bytes);
    NBH_MPI(c, nbh_barrier(comm));
}

static void win_close(win_t *w)
{
    MPI_Win_free(&w->win);
    if (w->kind == MEM_ALLOCMEM)
        MPI_Free_mem(w->mem);
    else if (w->kind == MEM_MALLOC)
        free(w->mem);
}

typedef struct {
    const nbh_case_t *c;
    win_t w;
    unsigned char *buf; /* origin buffer (put source, get destination) */
    int64_t *res;       /* fetched values, one per operation of a sample */
    int64_t *cmp, *swp; /* compare_and_swap's operands, one per operation (MPI-3.1 §11.3: an
                           origin buffer is not to be changed before the flush completes it) */
    int64_t k;          /* operations carried out so far (counter value) */
    int ok;
} i1_t;

/* One sample's `ops` operations (and flushes) toward rank 1. */
static void sample(i1_t *s)
{
    const nbh_case_t *c = s->c;
    const int op = C_OP(c), agg = C_MODE(c) == MODE_AGG, target = 1;
    const int n = (int)c->size, wide = n == 8;
    const MPI_Datatype at = wide ? MPI_INT64_T : MPI_INT32_T;
    MPI_Win win = s->w.win;
    int32_t one32 = 1;
    int64_t one64 = 1;
    for (long i = 0; i < n_ops; i++) {
        switch (op) {
        case OP_PUT:
            MPI_Put(s->buf, n, MPI_BYTE, target, 0, n, MPI_BYTE, win);
            break;
        case OP_GET:
            MPI_Get(s->buf, n, MPI_BYTE, target, 0, n, MPI_BYTE, win);
            break;
        case OP_ACC:
            MPI_Accumulate(s->buf, n / 4, MPI_INT, target, 0, n / 4, MPI_INT, MPI_SUM, win);
            break;
        case OP_FOP:
            if (wide) {
                MPI_Fetch_and_op(&one64, &s->res[i], at, target, 0, MPI_SUM, win);
            } else {
                MPI_Fetch_and_op(&one32, (int32_t *)&s->res[i], at, target, 0, MPI_SUM, win);
            }
            break;
        case OP_CAS:
            if (wide) {
                s->cmp[i] = s->k + i;
                s->swp[i] = s->k + i + 1;
            } else {
                *(int32_t *)&s->cmp[i] = (int32_t)(s->k + i);
                *(int32_t *)&s->swp[i] = (int32_t)(s->k + i + 1);
            }
            MPI_Compare_and_swap(&s->swp[i], &s->cmp[i], &s->res[i], at, target, 0, win);
            break;
        }
        if (!agg)
            MPI_Win_flush(target, win);
    }
    if (agg)
        MPI_Win_flush(target, win);
    if (op == OP_FOP || op == OP_CAS) /* each fetched the counter as the ones before left it */
        for (long i = 0; i < n_ops; i++) {
            int64_t got = wide ? s->res[i] : *(int32_t *)&s->res[i];
            s->ok &= got == (wide ? s->k + i : (int64_t)(int32_t)(s->k + i));
        }
    s->k += n_ops;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1, op = C_OP(c), n = (int)c->size;
    i1_t s = {.c = c, .ok = 1};
    const MPI_Aint bytes = n < 64 ? 64 : n;
    win_open(&s.w, c, bytes);
    s.buf = malloc((size_t)bytes);
    s.res = calloc((size_t)n_ops, sizeof *s.res);
    s.cmp = calloc((size_t)n_ops, sizeof *s.cmp);
    s.swp = calloc((size_t)n_ops, sizeof *s.swp);
    if (!s.buf || !s.res || !s.cmp || !s.swp)
        nbh_mpi_fail(c, "malloc (origin buffers)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    unsigned seed = nbh_next_seed();
    if (op == OP_PUT)
        nbh_pattern_fill(s.buf, (size_t)n, seed);
    else if (op == OP_ACC)
        for (int i = 0; i < n / 4; i++)
            ((int *)s.buf)[i] = 1;
    if (me == target && op == OP_GET) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, s.w.win);
        nbh_pattern_fill(s.w.base, (size_t)n, seed);
        MPI_Win_unlock(target, s.w.win);
    }
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_SHARED, target, 0, s.w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++)
            sample(&s);
    }
    static const char *const q[] = {"per_op"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double t = 0;
        if (me == origin) {
            double t0 = MPI_Wtime();
            sample(&s);
            t = (MPI_Wtime() - t0) / (double)n_ops;
        }
        nbh_rec_sample(&rec, st, &t);
    }
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock(target, s.w.win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));

    /* What the target's memory (or the origin's buffer) must hold now. */
    int64_t k = s.k;
    NBH_MPI(c, nbh_bcast(&k, 1, MPI_INT64_T, origin, c->ctx->comm));
    int ok = s.ok;
    long where = -1;
    if (me == origin && op == OP_GET)
        where = nbh_pattern_check(s.buf, (size_t)n, seed);
    if (me == target) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, s.w.win);
        if (op == OP_PUT)
            where = nbh_pattern_check(s.w.base, (size_t)n, seed);
        else if (op == OP_ACC)
            for (int i = 0; i < n / 4 && where < 0; i++)
                if (((int *)s.w.base)[i] != (int)k)
                    where = i;
        if (op == OP_FOP || op == OP_CAS) {
            int64_t v = n == 8 ? *(int64_t *)s.w.base : *(int32_t *)s.w.base;
            if (v != (n == 8 ? k : (int64_t)(int32_t)k))
                where = 0;
        }
        MPI_Win_unlock(target, s.w.win);
    }
    ok = ok && where < 0;
    if (nbh_verify(st, c, ok,
                   "%s of %d bytes (%s memory): %s at byte/element %ld after %lld operations",
                   op_names[op], n, mem_names[C_MEM(c)],
                   s.ok ? "the data differs" : "a fetched value differed", where, (long long)k))
        nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
    free(s.buf);
    free(s.res);
    free(s.cmp);
    free(s.swp);
    win_close(&s.w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    const char *sn = nbh_series_name(s);
    for (int mem = 0; mem < NMEM; mem++)
        for (int op = 0; op < NOPS; op++)
            for (int mode = MODE_NONAGG; mode <= MODE_AGG; mode++)
                for (int i = 0; i < ctx->opts.nsizes; i++) {
                    size_t sz = ctx->opts.sizes[i];
                    if (op >= OP_FOP ? sz != 4 && sz != 8 : sz < 4 || sz > (4u << 20) || sz % 4)
                        continue; /* one element of 4 or 8 bytes; whole ints up to 4 MiB */
                    nbh_add_case(ctx, s, op | mode << 4 | mem << 8, sz, run,
                                 "I1_%s/%s/mem:%s/mode:%s/size:%zu", op_names[op], sn,
                                 mem_names[mem], mode ? "agg" : "nonagg", sz);
                }
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"ops", "operations per sample (default 100)", &n_ops, 1, 1L << 20},
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "I1",
        .title = "IMB-RMA's passive-target shape: put, get, accumulate, fetch_and_op, "
                 "compare_and_swap on windows over MPI_Alloc_mem, malloc and MPI_Win_allocate "
                 "memory (issue 24)",
        .header = "origin rank 0, target rank 1, MPI_Win_lock(MPI_LOCK_SHARED) across the run\n"
                  "mem:allocmem = MPI_Win_create over MPI_Alloc_mem memory (what IMB-RMA does),\n"
                  "  mem:malloc = over malloc'ed memory, mem:allocate = MPI_Win_allocate\n"
                  "sample = --ops operations; nonagg: each + MPI_Win_flush, agg: one flush at "
                  "the end\n"
                  "per_op_us = sample / ops; put/get MPI_BYTE, accumulate MPI_SUM on MPI_INT,\n"
                  "  fetch_and_op (SUM) and compare_and_swap on one 4- or 8-byte integer",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "4:64",
        .quick_sizes = "8",
        .default_iters = 200,
        .extra = extra,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures IMB's blocking operations (nonblocking epochs: D7, A1-A7)",
    };
    return nbh_main(argc, argv, &ex);
}
