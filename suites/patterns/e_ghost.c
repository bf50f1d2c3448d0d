/* e_ghost.c — E (benchmarks E1_ghost/...): ghost-area exchange on a 2-D periodic grid
 * (paper 003 §1, §5).
 *
 * The ranks form a 2-D periodic grid (MPI_Dims_create); each exchanges n bytes with its four
 * neighbours (west, east, south, north; with 2 or 4 ranks some coincide, and a dimension of
 * extent 1 makes a rank its own neighbour). Every rank's window holds four ghost slots of n
 * bytes; the data for direction d lands in the neighbour's slot for the opposite direction.
 * Versions (one case each, per size):
 *   fence  MPI_Win_fence(NOPRECEDE), 4 puts, MPI_Win_fence(NOSTORE|NOPUT|NOSUCCEED)
 *   pscw   post(neighbours), start(neighbours), 4 puts, complete, wait
 *   lock   per distinct neighbour: lock shared, its puts, unlock; then a barrier, which is how
 *          a target learns that its ghost cells are complete
 * ref-nb issues the nonblocking forms (MPIX_Win_ifence, _ipost/_istart/_icomplete/_iwait,
 * _ilock/_iunlock with MPI_Ibarrier) and waits for all requests once. Each sample also times
 * the same exchange with MPI_Irecv/MPI_Isend/MPI_Waitall, so the ratio one-sided / p2p
 * compares both under the same conditions: counters onesided_us and p2p_us (median over
 * samples of the maximum across ranks) and ratio = onesided_us / p2p_us. Paper 003's tables
 * 1-2 (MPICH2 on a Linux cluster): fence 3.5 -> 1.2, pscw 2.0 -> 1.1 from small to large n. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { V_FENCE, V_PSCW, V_LOCK, V_N };
static const char *const vname[V_N] = {"fence", "pscw", "lock"};
enum { W, E, S, N, NDIR };
static int opposite(int d)
{
    return d ^ 1;
} /* W<->E, S<->N */

typedef struct {
    int nb[NDIR]; /* neighbour rank per direction */
    int uniq[NDIR], nuniq;
    MPI_Group group;            /* the distinct neighbours (PSCW) */
    unsigned char *send, *recv; /* NDIR * n each: outgoing data, p2p ghost slots */
    nbh_win_t w;                /* NDIR * n: one-sided ghost slots */
    size_t n;
    unsigned seed;
} ghost_t;

static void ghost_open(ghost_t *g, const nbh_case_t *c)
{
    const int me = c->ctx->rank, p = c->ctx->nranks;
    int dims[2] = {0, 0};
    NBH_MPI(c, MPI_Dims_create(p, 2, dims));
    const int x = me % dims[0], y = me / dims[0];
    g->nb[W] = y * dims[0] + (x + dims[0] - 1) % dims[0];
    g->nb[E] = y * dims[0] + (x + 1) % dims[0];
    g->nb[S] = ((y + dims[1] - 1) % dims[1]) * dims[0] + x;
    g->nb[N] = ((y + 1) % dims[1]) * dims[0] + x;
    g->nuniq = 0;
    for (int d = 0; d < NDIR; d++) {
        int seen = 0;
        for (int i = 0; i < g->nuniq; i++)
            seen |= g->uniq[i] == g->nb[d];
        if (!seen)
            g->uniq[g->nuniq++] = g->nb[d];
    }
    MPI_Group world;
    NBH_MPI(c, MPI_Comm_group(c->ctx->comm, &world));
    NBH_MPI(c, MPI_Group_incl(world, g->nuniq, g->uniq, &g->group));
    NBH_MPI(c, MPI_Group_free(&world));
    g->n = c->size;
    if (g->n > (size_t)INT32_MAX / NDIR) { /* int counts; NDIR slots in one window */
        fprintf(stderr, "e_ghost: size %zu is too large for %d ghost slots\n", g->n, NDIR);
        MPI_Abort(c->ctx->comm, 1);
    }
    g->send = malloc(NDIR * g->n);
    g->recv = malloc(NDIR * g->n);
    if (!g->send || !g->recv) {
        fprintf(stderr, "e_ghost: out of memory for 2 x %d x %zu bytes\n", NDIR, g->n);
        MPI_Abort(c->ctx->comm, 1);
    }
    g->seed = nbh_next_seed();
    for (int d = 0; d < NDIR; d++) /* the data a rank sends in direction d */
        nbh_pattern_fill(g->send + d * g->n, g->n, g->seed + 8u * (unsigned)me + (unsigned)d);
    nbh_win_open(&g->w, c, (MPI_Aint)(NDIR * g->n));
}

static void ghost_close(ghost_t *g)
{
    nbh_win_close(&g->w);
    MPI_Group_free(&g->group);
    free(g->send);
    free(g->recv);
}

static void p2p(const nbh_case_t *c, ghost_t *g)
{
    MPI_Request r[2 * NDIR];
    const int n = (int)g->n;
    for (int d = 0; d < NDIR; d++) /* slot d receives what nb[d] sent towards us */
        NBH_MPI(c, MPI_Irecv(g->recv + d * g->n, n, MPI_BYTE, g->nb[d], opposite(d), c->ctx->comm,
                             &r[d]));
    for (int d = 0; d < NDIR; d++)
        NBH_MPI(
            c, MPI_Isend(g->send + d * g->n, n, MPI_BYTE, g->nb[d], d, c->ctx->comm, &r[NDIR + d]));
    MPI_Status sts[2 * NDIR];
    NBH_MPI(c, MPI_Waitall(2 * NDIR, r, sts));
}

static void puts_to(const nbh_case_t *c, ghost_t *g, int only)
{
    const int n = (int)g->n;
    for (int d = 0; d < NDIR; d++)
        if (only < 0 || g->nb[d] == only)
            NBH_MPI(c, MPI_Put(g->send + d * g->n, n, MPI_BYTE, g->nb[d],
                               nbh_win_disp(&g->w, g->nb[d], (MPI_Aint)(opposite(d) * g->n)), n,
                               MPI_BYTE, g->w.win));
}

static void onesided(const nbh_case_t *c, ghost_t *g)
{
    const int nb = c->series == NBH_REF_NB;
    MPI_Win win = g->w.win;
    MPI_Request r[2 * NDIR + 2];
    int nr = 0;
    switch (c->op) {
    case V_FENCE:
        if (nb)
            NBH_MPI(c, MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r[nr++]));
        else
            NBH_MPI(c, MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        puts_to(c, g, -1);
        if (nb)
            NBH_MPI(c, MPIX_Win_ifence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win,
                                       &r[nr++]));
        else
            NBH_MPI(c, MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win));
        break;
    case V_PSCW:
        if (nb) {
            NBH_MPI(c, MPIX_Win_ipost(g->group, 0, win, &r[nr++]));
            NBH_MPI(c, MPIX_Win_istart(g->group, 0, win, &r[nr++]));
        } else {
            NBH_MPI(c, MPI_Win_post(g->group, 0, win));
            NBH_MPI(c, MPI_Win_start(g->group, 0, win));
        }
        puts_to(c, g, -1);
        if (nb) {
            NBH_MPI(c, MPIX_Win_icomplete(win, &r[nr++]));
            NBH_MPI(c, MPIX_Win_iwait(win, &r[nr++]));
        } else {
            NBH_MPI(c, MPI_Win_complete(win));
            NBH_MPI(c, MPI_Win_wait(win));
        }
        break;
    default:
        for (int i = 0; i < g->nuniq; i++) {
            if (nb)
                NBH_MPI(c, MPIX_Win_ilock(MPI_LOCK_SHARED, g->uniq[i], 0, win, &r[nr++]));
            else
                NBH_MPI(c, MPI_Win_lock(MPI_LOCK_SHARED, g->uniq[i], 0, win));
            puts_to(c, g, g->uniq[i]);
            if (nb)
                NBH_MPI(c, MPIX_Win_iunlock(g->uniq[i], win, &r[nr++]));
            else
                NBH_MPI(c, MPI_Win_unlock(g->uniq[i], win));
        }
        if (nb) {
            /* The barrier may only start once this rank's puts are complete at their targets. */
            double done[2 * NDIR];
            NBH_MPI(c, nbh_wait_times(nr, r, done));
            nr = 0;
            NBH_MPI(c, MPI_Ibarrier(c->ctx->comm, &r[nr++]));
        } else {
            NBH_MPI(c, MPI_Barrier(c->ctx->comm));
        }
        break;
    }
    if (nr) { /* ref-nb: test and yield rather than block inside the MPI library */
        double done[2 * NDIR + 2];
        NBH_MPI(c, nbh_wait_times(nr, r, done));
    }
}

/* After one fresh exchange of each kind: does every ghost slot hold its neighbour's data? */
static int verify(gb_state_t *st, const nbh_case_t *c, ghost_t *g)
{
    nbh_win_self_lock(&g->w, c);
    memset(g->w.base, 0, NDIR * g->n);
    nbh_win_self_unlock(&g->w, c);
    memset(g->recv, 0, NDIR * g->n);
    NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    p2p(c, g);
    onesided(c, g);
    NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    int ok = 1, bad_d = -1, bad_kind = 0;
    long off = -1;
    nbh_win_self_lock(&g->w, c);
    for (int d = 0; d < NDIR && ok; d++) {
        unsigned s = g->seed + 8u * (unsigned)g->nb[d] + (unsigned)opposite(d);
        if ((off = nbh_pattern_check(g->recv + d * g->n, g->n, s)) >= 0)
            ok = 0, bad_d = d, bad_kind = 0;
        else if ((off = nbh_pattern_check(g->w.base + d * g->n, g->n, s)) >= 0)
            ok = 0, bad_d = d, bad_kind = 1;
    }
    nbh_win_self_unlock(&g->w, c);
    return nbh_verify(st, c, ok,
                      "ghost slot %d (from rank %d) of the %s exchange differs at byte %ld", bad_d,
                      bad_d >= 0 ? g->nb[bad_d] : -1, bad_kind ? vname[c->op] : "p2p", off);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    ghost_t g;
    ghost_open(&g, c);
    NBH_MPI(c, MPI_Barrier(c->ctx->comm));
    for (int i = 0; i < c->ctx->opts.warmup; i++) {
        p2p(c, &g);
        onesided(c, &g);
    }
    static const char *const q[] = {"onesided", "p2p"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 2, q);
    while (gb_keep_running(st)) {
        double t[2];
        double t0 = MPI_Wtime();
        onesided(c, &g);
        double t1 = MPI_Wtime();
        p2p(c, &g);
        t[1] = MPI_Wtime() - t1;
        t[0] = t1 - t0;
        nbh_rec_sample(&rec, st, t);
    }
    if (verify(st, c, &g)) {
        nbh_rec_report(&rec, st);
        double p = nbh_rec_median(&rec, 1);
        gb_set_counter(st, "ratio", p > 0 ? nbh_rec_median(&rec, 0) / p : 0);
        gb_set_counter(st, "neighbours", g.nuniq);
    }
    nbh_rec_free(&rec);
    ghost_close(&g);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int v = 0; v < V_N; v++)
        for (int i = 0; i < ctx->opts.nsizes; i++)
            nbh_add_case(ctx, s, v, ctx->opts.sizes[i], run,
                         "E1_ghost/%s/version:%s/procs:%d/size:%zu", nbh_series_name(s), vname[v],
                         ctx->nranks, ctx->opts.sizes[i]);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "E1",
        .title = "ghost-area exchange, 2-D periodic grid, 4 neighbours (paper 003 §1, §5)",
        .header =
            "every rank sends SIZE bytes to each of its 4 grid neighbours, receives 4 x SIZE\n"
            "versions: fence (NOPRECEDE; NOSTORE|NOPUT|NOSUCCEED), pscw, lock (shared lock per\n"
            "neighbour + barrier); each sample times the one-sided exchange and then the same\n"
            "exchange with isend/irecv; ratio = onesided_us / p2p_us (medians of the max across\n"
            "ranks). ref-nb: the nonblocking epoch calls, one wait at the end",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_WINDOW,
        .default_sizes = "16:256K",
        .quick_sizes = "16,1K,64K,256K",
        .default_iters = 300,
        .register_cases = register_cases,
        .series = 0,
    };
    return nbh_main(argc, argv, &ex);
}
