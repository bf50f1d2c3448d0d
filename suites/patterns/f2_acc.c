/* f2_acc.c — F2: accumulate message rate, hardware-style vs active-message (paper 004 §III-A,
 * Figure 1; §IV-A, Figure 3c; issue 26).
 *
 * Origin rank 0 holds lock_all on a window of target rank 1; a sample is --batch iterations of
 * 004's loop, "ACCUMULATE + WIN_FLUSH_LOCAL", then one MPI_Win_flush so that every operation of
 * the batch has reached the target's memory before the clock stops. Operations: MPI_Accumulate
 * MPI_SUM on MPI_INT and on MPI_DOUBLE, MPI_MIN on MPI_INT (SIZE elements each), and
 * MPI_Fetch_and_op MPI_SUM on one int64 (its result waited for by the flush_local). libnbrma runs
 * 004's two strategies toward another node over the ucx transport, per window with the info key
 * nbrma_acc: am (one message the target's CPU applies under its accumulate lock) and hw (004
 * Fig. 1: a remote atomic takes the target's accumulate lock, RDMA get, compute at the origin,
 * RDMA put, flush, remote atomic release) — and auto, the default, which is hw toward a target
 * whose window memory UCX maps into the origin (shared memory) and am elsewhere, so its column
 * shows which of the two the default picked. Within a node all access the memory directly; over
 * NBRMA_NET=am there is no hardware and both are messages (the contrast line). Vendor: the MPI
 * library's own. Counters: batch_us (median, max across ranks), per_op_us, rate_Mmsgs.
 *
 * Data: every operation's operand depends on its index; the origin keeps the value each target
 * element must end with (sums of small integers and halves: exact in a double) and the target
 * checks every element after the loop; each fetch_and_op must return the count of those before
 * it (the counter starts at 0). */
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "strategy.h"

static long batch = 100;

enum { O_SUM_INT, O_SUM_DOUBLE, O_MIN_INT, O_FOP, O_N };
static const char *const oname[O_N] = {"acc_sum_int", "acc_sum_double", "acc_min_int",
                                       "fetch_and_op_sum_int64"};
enum { S_VENDOR, S_AM, S_HW, S_AUTO };
static const char *const sname[] = {"vendor", "am", "hw", "auto"};
#define MIN_START (INT_MAX - 7)

/* op = operation * 4 + strategy */

/* Operand of operation k, element e. */
static double operand(int o, long k, size_t e)
{
    switch (o) {
    case O_SUM_INT:
        return (double)(k % 5 + 1 + (long)(e % 3));
    case O_SUM_DOUBLE:
        return 0.5 * (double)(k % 5 + 1) + (double)(e % 3);
    case O_MIN_INT:
        return (double)(MIN_START - (k % 1000) * 3 - (long)(e % 7));
    default:
        return 1;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1;
    const int o = c->op / 4, strat = c->op % 4;
    const size_t n = o == O_FOP ? 1 : c->size;
    const size_t esz = o == O_SUM_DOUBLE ? sizeof(double) : o == O_FOP ? 8 : sizeof(int);
    const MPI_Datatype dt = o == O_SUM_DOUBLE ? MPI_DOUBLE : o == O_FOP ? MPI_INT64_T : MPI_INT;
    const MPI_Op mop = o == O_MIN_INT ? MPI_MIN : MPI_SUM;
    if (n > (size_t)1 << 24) {
        gb_skip_with_error(st, "more than 16 Mi elements per accumulate");
        return;
    }
    const size_t wbytes = (n * esz + 63) & ~(size_t)63;
    if (MPIX_Nbrma_set_impl)
        NBH_MPI(c, MPIX_Nbrma_set_impl(c->series == NBH_VENDOR ? "vendor" : "ref"));
    MPI_Info info = MPI_INFO_NULL;
    if (strat != S_VENDOR) {
        NBH_MPI(c, MPI_Info_create(&info));
        NBH_MPI(c, MPI_Info_set(info, "nbrma_acc", sname[strat]));
    }
    unsigned char *base;
    MPI_Win win;
    NBH_MPI(c, MPI_Win_allocate((MPI_Aint)wbytes, (int)esz, info, c->ctx->comm, &base, &win));
    if (info != MPI_INFO_NULL)
        NBH_MPI(c, MPI_Info_free(&info));
    if (strat != S_VENDOR) {
        int run_it = strat_info_is(c, st, win, "nbrma_acc", sname[strat]) &&
                     strat_pair_is_named(c, st, win);
        if (!run_it) {
            NBH_MPI(c, MPI_Win_free(&win));
            return;
        }
    }
    void *src = malloc(n * esz);
    double *expect = malloc(n * sizeof *expect);
    if (!src || !expect)
        nbh_mpi_fail(c, "malloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    for (size_t e = 0; e < n; e++)
        expect[e] = o == O_MIN_INT ? (double)MIN_START : 0;
    if (me == target) { /* the start values, in an epoch of its own */
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
        for (size_t e = 0; e < n; e++)
            if (o == O_SUM_DOUBLE)
                ((double *)base)[e] = 0;
            else if (o == O_FOP)
                ((int64_t *)base)[e] = 0;
            else
                ((int *)base)[e] = (int)expect[e];
        NBH_MPI(c, MPI_Win_unlock(me, win));
    }
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    long k = 0;            /* operations issued so far (warm-up included) */
    long fetched_bad = -1; /* fetch_and_op: the first operation that returned a wrong count */
    int64_t one = 1, res = -1;

    /* One batch of `cnt` operations (+ flush_local each) and a flush; operands set as it goes
     * (an operand is a few instructions: part of the loop, as in 004's benchmark). */
#define BATCH(cnt)                                                                                 \
    do {                                                                                           \
        for (long j_ = 0; j_ < (cnt); j_++, k++) {                                                 \
            if (o == O_FOP) {                                                                      \
                MPI_Fetch_and_op(&one, &res, MPI_INT64_T, target, 0, MPI_SUM, win);                \
                MPI_Win_flush_local(target, win);                                                  \
                if (res != k && fetched_bad < 0)                                                   \
                    fetched_bad = k;                                                               \
                continue;                                                                          \
            }                                                                                      \
            for (size_t e = 0; e < n; e++) {                                                       \
                double v = operand(o, k, e);                                               \
                if (o == O_SUM_DOUBLE)                                                             \
                    ((double *)src)[e] = v;                                                        \
                else                                                                               \
                    ((int *)src)[e] = (int)v;                                                      \
                expect[e] = o == O_MIN_INT ? (v < expect[e] ? v : expect[e]) : expect[e] + v;      \
            }                                                                                      \
            MPI_Accumulate(src, (int)n, dt, target, 0, (int)n, dt, mop, win);                      \
            MPI_Win_flush_local(target, win);                                                      \
        }                                                                                          \
        MPI_Win_flush(target, win);                                                                \
    } while (0)

    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock_all(0, win));
        BATCH((long)c->ctx->opts.warmup);
    }
    nbh_case_begin(c);
    static const char *const q[] = {"batch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double d = 0;
        if (me == origin) {
            double t0 = MPI_Wtime();
            BATCH(batch);
            d = MPI_Wtime() - t0;
        }
        nbh_rec_sample(&rec, st, &d);
    }
#undef BATCH
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock_all(win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    /* the origin's expected values (and operation count) to the target, which checks */
    if (o == O_FOP)
        expect[0] = (double)k;
    NBH_MPI(c, nbh_bcast(expect, (int)n, MPI_DOUBLE, origin, c->ctx->comm));
    NBH_MPI(c, nbh_bcast(&fetched_bad, 1, MPI_LONG, origin, c->ctx->comm));
    long bad = -1;
    double got = 0;
    if (me == target) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
        for (size_t e = 0; e < n && bad < 0; e++) {
            got = o == O_SUM_DOUBLE ? ((double *)base)[e]
                  : o == O_FOP      ? (double)((int64_t *)base)[e]
                                    : (double)((int *)base)[e];
            if (got != expect[e])
                bad = (long)e;
        }
        NBH_MPI(c, MPI_Win_unlock(me, win));
    }
    if (nbh_verify(st, c, bad < 0 && fetched_bad < 0,
                   "%s: element %ld holds %.1f, expected %.1f (fetch_and_op %ld returned a wrong "
                   "count: -1 = none)",
                   oname[o], bad, got, bad >= 0 ? expect[bad] : 0.0, fetched_bad)) {
        nbh_rec_report(&rec, st);
        const double med = nbh_rec_median(&rec, 0);
        gb_set_counter(st, "per_op_us", med * 1e6 / (double)batch);
        gb_set_counter(st, "rate_Mmsgs", med > 0 ? (double)batch / med / 1e6 : 0);
    }
    nbh_rec_free(&rec);
    NBH_MPI(c, MPI_Win_free(&win));
    free(src), free(expect);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    const char *net = s == NBH_VENDOR ? "vendor" : strat_net(ctx);
    int first = s == NBH_VENDOR ? S_VENDOR : S_AM, last = s == NBH_VENDOR ? S_VENDOR : S_AUTO;
    for (int o = 0; o < O_N; o++)
        for (int i = 0; i < ctx->opts.nsizes; i++) {
            if (o == O_FOP && i > 0) /* one element, whatever the sizes */
                break;
            for (int k = first; k <= last; k++)
                nbh_add_case(ctx, s, o * 4 + k, ctx->opts.sizes[i], run,
                             "F2_%s/%s/acc:%s/elems:%zu/batch:%ld/nodes:%d/net:%s", oname[o],
                             nbh_series_name(s), sname[k], o == O_FOP ? (size_t)1 : ctx->opts.sizes[i],
                             batch, ctx->nnodes, net);
        }
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"batch", "accumulate + flush_local iterations per sample (then one flush)", &batch, 1,
         1000000},
        {0, 0, 0, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "F2",
        .title = "accumulate message rate, hardware-style vs active-message (paper 004 §III-A "
                 "Fig. 1, §IV-A Fig. 3c)",
        .header = "origin rank 0, target rank 1, lock_all held across the loop\n"
                  "sample = --batch x (MPI_Accumulate of SIZE elements + MPI_Win_flush_local), "
                  "then MPI_Win_flush\n"
                  "ops: SUM int, SUM double, MIN int, fetch_and_op SUM int64 (1 element)\n"
                  "ref per window: info nbrma_acc=am (one message) | hw (lock, get, compute, put, "
                  "unlock) | auto (the default: hw toward mapped memory, else am)",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "1,64",
        .quick_sizes = "1",
        .default_iters = 20,
        .extra = extra,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "flush_local in a passive epoch held open: nothing nonblocking to measure",
    };
    return nbh_main(argc, argv, &ex);
}
