/* d4_atomics.c — D4: atomic operations (paper 001 §3.1.3).
 *
 * Origin rank 0 holds an exclusive lock on target rank 1; each sample is one operation on 8-byte
 * integers (MPI_INT64_T) followed by MPI_Win_flush:
 *   accumulate MPI_SUM and MPI_MIN over --sizes bytes (s/8 elements),
 *   fetch_and_op MPI_SUM and compare_and_swap on one element; fetch_and_op again on a window
 *   created with info accumulate_ops=same_op.
 * Paper's fits: P_acc,sum = 28 ns*s + 2.4 us, P_acc,min = 0.8 ns*s + 7.3 us, P_CAS = 2.4 us.
 * Validation follows every update: SUM adds 1 per operation, MIN lowers by 1 per operation,
 * fetch_and_op and CAS must return the previous counter value each time. */
#include <stdint.h>
#include <stdlib.h>

#include "bench.h"

enum { OP_ACC_SUM, OP_ACC_MIN, OP_FOP, OP_CAS };
#define MIN_START ((int64_t)1 << 40)

/* One operation; `k` counts operations issued so far in this case. Returns 0 if a fetched
 * value was wrong. */
static int one_op(const nbh_case_t *c, int64_t *buf, int count, int target, MPI_Aint disp,
                  MPI_Win win, int64_t k)
{
    int64_t one = 1, res = -1, cmp = k, swap = k + 1;
    switch (c->op) {
    case OP_ACC_SUM:
        MPI_Accumulate(buf, count, MPI_INT64_T, target, disp, count, MPI_INT64_T, MPI_SUM, win);
        break;
    case OP_ACC_MIN:
        MPI_Accumulate(buf, count, MPI_INT64_T, target, disp, count, MPI_INT64_T, MPI_MIN, win);
        break;
    case OP_FOP:
        MPI_Fetch_and_op(&one, &res, MPI_INT64_T, target, disp, MPI_SUM, win);
        break;
    case OP_CAS:
        MPI_Compare_and_swap(&swap, &cmp, &res, MPI_INT64_T, target, disp, win);
        break;
    }
    MPI_Win_flush(target, win);
    return c->op < OP_FOP || res == k;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1;
    const int count = c->op < OP_FOP ? (int)(c->size / 8) : 1;
    nbh_win_t w;
    nbh_win_open(&w, c, (MPI_Aint)count * 8);
    int64_t *buf = calloc((size_t)count, sizeof *buf);
    if (!buf)
        nbh_mpi_fail(c, "calloc (origin buffer)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    int64_t *tgt = (int64_t *)w.base;
    if (me == target && c->op == OP_ACC_MIN) {
        nbh_win_self_lock(&w, c);
        for (int i = 0; i < count; i++)
            tgt[i] = MIN_START;
        nbh_win_self_unlock(&w, c);
    }
    if (c->op == OP_ACC_SUM)
        for (int i = 0; i < count; i++)
            buf[i] = 1;
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    const MPI_Aint disp = nbh_win_disp(&w, target, 0);

    int64_t k = 0;
    int fetched_ok = 1;
    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win));
        for (int i = 0; i < c->ctx->opts.warmup; i++, k++) {
            if (c->op == OP_ACC_MIN)
                for (int e = 0; e < count; e++)
                    buf[e] = MIN_START - k - 1;
            fetched_ok &= one_op(c, buf, count, target, disp, w.win, k);
        }
    }
    static const char *const q[] = {"latency"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double t = 0;
        if (me == origin) {
            if (c->op == OP_ACC_MIN) /* outside the timed region */
                for (int e = 0; e < count; e++)
                    buf[e] = MIN_START - k - 1;
            double t0 = MPI_Wtime();
            fetched_ok &= one_op(c, buf, count, target, disp, w.win, k);
            t = MPI_Wtime() - t0;
            k++;
        }
        nbh_rec_sample(&rec, st, &t);
    }
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock(target, w.win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));

    /* Every element must reflect all k operations. */
    NBH_MPI(c, nbh_bcast(&k, 1, MPI_INT64_T, origin, c->ctx->comm));
    int64_t expect = c->op == OP_ACC_MIN ? MIN_START - k : k;
    long bad = -1;
    int64_t got = 0;
    if (me == target) {
        nbh_win_self_lock(&w, c);
        for (int i = 0; i < count && bad < 0; i++)
            if (tgt[i] != expect) {
                bad = i;
                got = tgt[i];
            }
        nbh_win_self_unlock(&w, c);
    }
    int ok = bad < 0 && fetched_ok;
    if (nbh_verify(st, c, ok,
                   fetched_ok ? "element %ld holds %lld after %lld operations, expected %lld"
                              : "a fetched value differed from the counter (element %ld, %lld, "
                                "%lld ops, %lld)",
                   bad, (long long)got, (long long)k, (long long)expect))
        nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
    free(buf);
    nbh_win_close(&w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    const char *sn = nbh_series_name(s);
    for (int op = OP_ACC_SUM; op <= OP_ACC_MIN; op++)
        for (int i = 0; i < ctx->opts.nsizes; i++) {
            size_t sz = ctx->opts.sizes[i] < 8 ? 8 : ctx->opts.sizes[i] / 8 * 8;
            nbh_add_case(ctx, s, op, sz, run, "D4_acc_%s/%s/size:%zu",
                         op == OP_ACC_SUM ? "sum" : "min", sn, sz);
        }
    nbh_add_case(ctx, s, OP_FOP, 8, run, "D4_fetch_and_op/%s", sn);
    /* The same on a window whose info says accumulate_ops=same_op (MPI-3.1 §11.2.1): libnbrma
     * then serves it with a UCP atomic toward a ucx peer (compare with U1's fetching add). */
    nbh_add_case(ctx, s, OP_FOP, 8, run, "D4_fetch_and_op_same_op/%s", sn)->acc_ops = "same_op";
    nbh_add_case(ctx, s, OP_CAS, 8, run, "D4_cas/%s", sn);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "D4",
        .title = "atomics: accumulate SUM/MIN vs size, fetch_and_op, compare_and_swap (paper 001 "
                 "§3.1.3)",
        .header =
            "origin rank 0, target rank 1, exclusive lock held across the loop, 8-byte integers\n"
            "sample = one operation + MPI_Win_flush at the origin (remote completion)\n"
            "accumulate: one-way with completion; fetch_and_op, CAS: round-trip",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_WINDOW,
        .default_sizes = "8:512K:x4",
        .quick_sizes = "8,4K",
        .default_iters = 1000,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures the blocking calls (the nonblocking epochs are A1-A7, B1-B5)",
    };
    return nbh_main(argc, argv, &ex);
}
