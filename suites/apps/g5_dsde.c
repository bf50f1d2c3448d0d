/* g5_dsde.c — G5: dynamic sparse data exchange (paper 001 §4.2, Fig. 9b; the protocols of
 * Hoefler, Siebert, Lumsdaine, "Scalable communication protocols for dynamic sparse data
 * exchange", PPoPP'10).
 *
 * Each exchange: every rank sends one 8-byte value to each of --k targets drawn at random among
 * the other ranks (a target may be drawn twice on few ranks), and no rank knows who sends to it.
 * Protocols (how a receiver learns what to receive):
 *   alltoall        MPI_Ialltoall of per-destination counts, then MPI_Ialltoallv of the data;
 *   reduce_scatter  MPI_Ireduce_scatter_block of the counts gives each rank its total, then
 *                   MPI_Irecv(ANY_SOURCE) that many times against MPI_Isend;
 *   nbx             MPI_Issend to each target, receive whatever MPI_Iprobe finds, MPI_Ibarrier
 *                   once the own sends matched, done when the barrier is (the "NBX" protocol);
 *   accumulate      one-sided: MPI_Accumulate(+1) into each target's counter inside a fence
 *                   epoch (ref-nb: MPIX_Win_ifence, the sends start before the closing fence
 *                   completes), then the counter says how many MPI_Irecv to post.
 * The point-to-point protocols do not touch RMA: they run once, as the vendor series. The
 * accumulate protocol runs in every series. Sample: one exchange (max over ranks).
 * Verified: every value received is the one its sender made for that (sender, index), and per
 * receiver the count and sum match what the senders say they sent. */
#include "relax.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"

enum { P_ALLTOALL, P_REDUCE_SCATTER, P_NBX, P_ACCUMULATE, P_N };
static const char *const proto_name[P_N] = {"alltoall", "reduce_scatter", "nbx", "accumulate"};

static long k_targets = 6;

typedef struct {
    const nbh_case_t *c;
    nbh_win_t w; /* accumulate: one int64 counter per rank */
    nba_rng_t rng;
    uint64_t seed;
    int *dest;            /* k destinations of this exchange */
    uint64_t *out, *in;   /* k values out; up to k x (n-1) in */
    int *in_src;          /* sender of in[i] */
    long nin;             /* values received this exchange */
    int *scount, *sdispl; /* alltoall: per destination */
    int *rcount, *rdispl;
    uint64_t *sorted;             /* alltoall: out sorted by destination */
    MPI_Request *req;             /* k sends + k x (n-1) receives */
    int64_t *sent_cnt, *sent_sum; /* per destination, all exchanges (verification) */
    int64_t got_cnt, got_sum;
    long bad_value; /* first wrong value seen: its index, or -1 */
    long exchange;  /* exchanges done, for the tag and the values */
} g5_t;

/* The value sender `src` makes for its `i`-th message of exchange `x`: checkable by anyone. */
static uint64_t value_of(uint64_t seed, int src, long x, long i)
{
    nba_rng_t r;
    nba_rng_init(&r, seed ^ ((uint64_t)x << 20) ^ (uint64_t)i, src);
    return nba_rng_next(&r);
}

/* Values of one exchange carry their message index in the receive check: the receiver tries
 * every index of the sender (k is small). */
static int value_ok(const g5_t *g, int src, uint64_t v)
{
    for (long i = 0; i < k_targets; i++)
        if (value_of(g->seed, src, g->exchange, i) == v)
            return 1;
    return 0;
}

static void received(g5_t *g, int src, uint64_t v)
{
    if (g->nin < k_targets * (long)(g->c->ctx->nranks - 1)) {
        g->in[g->nin] = v;
        g->in_src[g->nin] = src;
    }
    g->nin++;
}

static int tag_of(const g5_t *g)
{
    return 100 + (int)(g->exchange & 1); /* an early next exchange cannot match this one */
}

static void isend_all(g5_t *g, int sync)
{
    const nbh_case_t *c = g->c;
    for (long i = 0; i < k_targets; i++)
        NBH_MPI(c, (sync ? MPI_Issend : MPI_Isend)(&g->out[i], 1, MPI_UINT64_T, g->dest[i],
                                                   tag_of(g), c->ctx->comm, &g->req[i]));
}

static void recv_n(g5_t *g, long n)
{
    const nbh_case_t *c = g->c;
    if (n > k_targets * (long)(c->ctx->nranks - 1))
        nbh_mpi_fail(c, "more incoming messages than senders could send", MPI_ERR_COUNT, __FILE__,
                     __LINE__);
    for (long i = 0; i < n; i++)
        NBH_MPI(c, MPI_Irecv(&g->in[i], 1, MPI_UINT64_T, MPI_ANY_SOURCE, tag_of(g), c->ctx->comm,
                             &g->req[k_targets + i]));
    for (long i = 0; i < n; i++) {
        MPI_Status s;
        int done = 0;
        while (!done) {
            NBH_MPI(c, MPI_Test(&g->req[k_targets + i], &done, &s));
            if (!done)
                nbh_relax();
        }
        g->in_src[i] = s.MPI_SOURCE;
    }
    g->nin = n;
}

static void wait_sends(g5_t *g)
{
    for (long i = 0; i < k_targets; i++)
        NBH_MPI(g->c, nbh_wait(&g->req[i]));
}

static void p_alltoall(g5_t *g)
{
    const nbh_case_t *c = g->c;
    const int n = c->ctx->nranks;
    MPI_Request r;
    memset(g->scount, 0, (size_t)n * sizeof *g->scount);
    for (long i = 0; i < k_targets; i++)
        g->scount[g->dest[i]]++;
    NBH_MPI(c, MPI_Ialltoall(g->scount, 1, MPI_INT, g->rcount, 1, MPI_INT, c->ctx->comm, &r));
    g->sdispl[0] = 0; /* pack by destination while the counts travel */
    for (int d = 1; d < n; d++)
        g->sdispl[d] = g->sdispl[d - 1] + g->scount[d - 1];
    int *fill = g->rdispl; /* scratch until the receive displacements are computed */
    memcpy(fill, g->sdispl, (size_t)n * sizeof *fill);
    for (long i = 0; i < k_targets; i++)
        g->sorted[fill[g->dest[i]]++] = g->out[i];
    NBH_MPI(c, nbh_wait(&r));
    g->rdispl[0] = 0;
    for (int d = 1; d < n; d++)
        g->rdispl[d] = g->rdispl[d - 1] + g->rcount[d - 1];
    long total = g->rdispl[n - 1] + g->rcount[n - 1];
    if (total > k_targets * (long)(n - 1))
        nbh_mpi_fail(c, "more incoming messages than senders could send", MPI_ERR_COUNT, __FILE__,
                     __LINE__);
    NBH_MPI(c, MPI_Ialltoallv(g->sorted, g->scount, g->sdispl, MPI_UINT64_T, g->in, g->rcount,
                              g->rdispl, MPI_UINT64_T, c->ctx->comm, &r));
    NBH_MPI(c, nbh_wait(&r));
    for (int d = 0; d < n; d++)
        for (int i = 0; i < g->rcount[d]; i++)
            g->in_src[g->rdispl[d] + i] = d;
    g->nin = total;
}

static void p_reduce_scatter(g5_t *g)
{
    const nbh_case_t *c = g->c;
    const int n = c->ctx->nranks;
    MPI_Request r;
    int mine = 0;
    memset(g->scount, 0, (size_t)n * sizeof *g->scount);
    for (long i = 0; i < k_targets; i++)
        g->scount[g->dest[i]]++;
    NBH_MPI(c, MPI_Ireduce_scatter_block(g->scount, &mine, 1, MPI_INT, MPI_SUM, c->ctx->comm, &r));
    isend_all(g, 0); /* the data need not wait for the counts */
    NBH_MPI(c, nbh_wait(&r));
    recv_n(g, mine);
    wait_sends(g);
}

static void p_nbx(g5_t *g)
{
    const nbh_case_t *c = g->c;
    MPI_Request barrier = MPI_REQUEST_NULL;
    int sends_done = 0, barrier_done = 0;
    isend_all(g, 1);
    g->nin = 0;
    while (!barrier_done) {
        int flag;
        MPI_Status s;
        NBH_MPI(c, MPI_Iprobe(MPI_ANY_SOURCE, tag_of(g), c->ctx->comm, &flag, &s));
        if (flag) {
            uint64_t v;
            NBH_MPI(c, MPI_Recv(&v, 1, MPI_UINT64_T, s.MPI_SOURCE, tag_of(g), c->ctx->comm,
                                MPI_STATUS_IGNORE));
            received(g, s.MPI_SOURCE, v);
            continue;
        }
        if (!sends_done) {
            sends_done = 1; /* a completed request is MPI_REQUEST_NULL: tests true again */
            for (long i = 0; i < k_targets; i++) {
                int f;
                NBH_MPI(c, MPI_Test(&g->req[i], &f, MPI_STATUS_IGNORE));
                sends_done &= f;
            }
            if (sends_done)
                NBH_MPI(c, MPI_Ibarrier(c->ctx->comm, &barrier));
        } else {
            NBH_MPI(c, MPI_Test(&barrier, &barrier_done, MPI_STATUS_IGNORE));
        }
        if (!barrier_done)
            nbh_relax();
    }
}

static void fence(g5_t *g, int assert, MPI_Request *r)
{
    const nbh_case_t *c = g->c;
    *r = MPI_REQUEST_NULL;
    if (c->series == NBH_REF_NB)
        NBH_MPI(c, MPIX_Win_ifence(assert, g->w.win, r));
    else
        NBH_MPI(c, MPI_Win_fence(assert, g->w.win));
}

static void p_accumulate(g5_t *g)
{
    const nbh_case_t *c = g->c;
    const int64_t one = 1;
    MPI_Request open, close;
    fence(g, MPI_MODE_NOPRECEDE, &open);
    for (long i = 0; i < k_targets; i++)
        NBH_MPI(c,
                MPI_Accumulate(&one, 1, MPI_INT64_T, g->dest[i], nbh_win_disp(&g->w, g->dest[i], 0),
                               1, MPI_INT64_T, MPI_SUM, g->w.win));
    fence(g, MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, &close);
    isend_all(g, 0); /* ref-nb: while the closing fence completes */
    NBH_MPI(c, nbh_wait(&open));
    NBH_MPI(c, nbh_wait(&close));
    int64_t *ctr = (int64_t *)g->w.base;
    long mine = (long)ctr[0];
    ctr[0] = 0; /* between fences: no RMA epoch is open on this window */
    recv_n(g, mine);
    wait_sends(g);
}

static void exchange(g5_t *g)
{
    const nbh_case_t *c = g->c;
    const int n = c->ctx->nranks, me = c->ctx->rank;
    for (long i = 0; i < k_targets; i++) {
        int d = (int)nba_rng_below(&g->rng, (uint64_t)(n - 1));
        d += d >= me;
        g->dest[i] = d;
        g->out[i] = value_of(g->seed, me, g->exchange, i);
        g->sent_cnt[d]++;
        g->sent_sum[d] += (int64_t)(g->out[i] & 0xffffffffu);
    }
    switch (c->op) {
    case P_ALLTOALL:
        p_alltoall(g);
        break;
    case P_REDUCE_SCATTER:
        p_reduce_scatter(g);
        break;
    case P_NBX:
        p_nbx(g);
        break;
    default:
        p_accumulate(g);
        break;
    }
    long kept = g->nin < k_targets * (long)(n - 1) ? g->nin : k_targets * (long)(n - 1);
    for (long i = 0; i < kept; i++) {
        if (g->bad_value < 0 && !value_ok(g, g->in_src[i], g->in[i]))
            g->bad_value = g->got_cnt + i;
        g->got_sum += (int64_t)(g->in[i] & 0xffffffffu);
    }
    g->got_cnt += g->nin;
    g->exchange++;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int n = c->ctx->nranks, me = c->ctx->rank;
    const size_t maxin = (size_t)k_targets * (size_t)(n - 1);
    g5_t g = {.c = c, .bad_value = -1};
    g.seed = nba_case_seed();
    nba_rng_init(&g.rng, g.seed, me);
    if (c->op == P_ACCUMULATE)
        nbh_win_open(&g.w, c, 8);
    g.dest = malloc((size_t)k_targets * sizeof *g.dest);
    g.out = malloc((size_t)k_targets * sizeof *g.out);
    g.sorted = malloc((size_t)k_targets * sizeof *g.sorted);
    g.in = malloc(maxin * sizeof *g.in);
    g.in_src = malloc(maxin * sizeof *g.in_src);
    g.req = malloc(((size_t)k_targets + maxin) * sizeof *g.req);
    g.scount = malloc((size_t)n * sizeof(int));
    g.sdispl = malloc((size_t)n * sizeof(int));
    g.rcount = malloc((size_t)n * sizeof(int));
    g.rdispl = malloc((size_t)n * sizeof(int));
    g.sent_cnt = calloc((size_t)n, sizeof *g.sent_cnt);
    g.sent_sum = calloc((size_t)n, sizeof *g.sent_sum);
    if (!g.dest || !g.out || !g.sorted || !g.in || !g.in_src || !g.req || !g.scount || !g.sdispl ||
        !g.rcount || !g.rdispl || !g.sent_cnt || !g.sent_sum)
        nbh_mpi_fail(c, "malloc (G5 state)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    NBH_MPI(c, nbh_barrier(c->ctx->comm));

    for (int i = 0; i < c->ctx->opts.warmup; i++)
        exchange(&g);
    static const char *const q[] = {"exchange"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        NBH_MPI(c, nbh_barrier(c->ctx->comm)); /* each exchange starts together */
        double t0 = MPI_Wtime();
        exchange(&g);
        double t = MPI_Wtime() - t0;
        nbh_rec_sample(&rec, st, &t);
    }

    if (nba_corrupt && me == 0) {
        nba_corrupt_note(c, "one value rank 0 received (+1)");
        g.got_sum += 1;
    }
    NBH_MPI(c, nbh_allreduce(g.sent_cnt, n, MPI_INT64_T, MPI_SUM, c->ctx->comm));
    NBH_MPI(c, nbh_allreduce(g.sent_sum, n, MPI_INT64_T, MPI_SUM, c->ctx->comm));
    int ok = g.bad_value < 0 && g.got_cnt == g.sent_cnt[me] && g.got_sum == g.sent_sum[me];
    if (nbh_verify(st, c, ok,
                   "rank %d received %lld values (sum %lld), the senders sent %lld (sum %lld); "
                   "first value not made by its sender: %ld",
                   me, (long long)g.got_cnt, (long long)g.got_sum, (long long)g.sent_cnt[me],
                   (long long)g.sent_sum[me], g.bad_value)) {
        nbh_rec_report(&rec, st);
        gb_set_counter(st, "k", (double)k_targets);
    }
    nbh_rec_free(&rec);
    if (c->op == P_ACCUMULATE)
        nbh_win_close(&g.w);
    free(g.dest), free(g.out), free(g.sorted), free(g.in), free(g.in_src), free(g.req);
    free(g.scount), free(g.sdispl), free(g.rcount), free(g.rdispl);
    free(g.sent_cnt), free(g.sent_sum);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    const char *sn = nbh_series_name(s);
    for (int p = 0; p < P_N; p++)
        if (p == P_ACCUMULATE || s == NBH_VENDOR)
            nbh_add_case(ctx, s, p, 8, run, "G5_dsde/%s/proto:%s/procs:%d/k:%ld", sn, proto_name[p],
                         ctx->nranks, k_targets);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"k", "targets per rank per exchange (default 6)", &k_targets, 1, 1L << 16},
        NBA_COMMON_OPTS,
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "G5",
        .title = "dynamic sparse data exchange: 8 bytes to k random targets (paper 001 §4.2)",
        .header =
            "every rank sends 8 bytes to each of --k random other ranks; receivers do not know\n"
            "  who sends. Protocols: alltoall (counts, then alltoallv), reduce_scatter (counts),\n"
            "  nbx (issend + iprobe + ibarrier), accumulate (fence epoch of MPI_Accumulate +1 on\n"
            "  each target's counter; ref-nb: ifence, sends overlap the closing fence)\n"
            "point-to-point protocols: vendor series only (no RMA); accumulate: every series\n"
            "sample = one exchange (max over ranks); verified: every value delivered exactly once\n"
            "paper 001 saw (Cray XE6, k = 6): accumulate competitive with nbx, both 2x to 100x\n"
            "  faster than alltoall and reduce_scatter at scale",
        .min_ranks = 2,
        .uses = NBH_USE_WINDOW,
        .default_iters = 100,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
