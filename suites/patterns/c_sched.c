/* c_sched.c — C1-C5: intra-epoch message scheduling (paper 002 §3-§5, EXPERIMENTS.md §C).
 *
 * One origin (rank 0) and three targets; "other node" is another node as libnbrma sees it (real,
 * or a virtual node of NBRMA_RANKS_PER_NODE). The scenarios:
 *   C1 intra       three targets on the origin's node
 *   C2 inter       three targets on other nodes
 *   C3 inter_work  C2 with D of work (--delay-us) inside the epoch
 *   C4 mix         targets on the origin's node and on other nodes
 *   C5 mix_work    C4 with D of work inside the epoch
 * self:1 makes the origin its own first intra-node target (C1, C4, C5). Which scenarios a run can
 * do depends on the layout: 4 ranks on one node give C1; NBRMA_RANKS_PER_NODE=1 gives C2, C3;
 * =2 gives C4, C5 (one node peer, two targets on the other node); the benchlist runs all three.
 * Every scenario in GATS (targets post before time 0), fence and lock_all, with MPI_Put and
 * MPI_Get of SIZE bytes per target, issued in rank order (so the intra-node ones come first).
 * Series: vendor; ref (scheduler off: each call is carried out where it is made); ref-sched
 * (nbrma_sched=on: intra-node calls of at least --th bytes are held for the closing call, which
 * copies them while the inter-node transfers are in flight, 002 §4); ref-nb-sched (the same with
 * MPIX_Win_istart/icomplete, ifence, ilock_all/iunlock_all and one wait).
 *
 * Measured at the origin, per sample (the maximum across ranks is kept, the median reported):
 *   epoch_us  the epoch, from its opening call to the return of its closing call (or wait)
 *   inter_us  the same epoch with the inter-node targets only: alpha + eps + D_I
 *   alpha_us  the same epoch's synchronization calls without RMA: alpha + eps, its fixed cost
 *   zeta_us   the origin copying SIZE bytes once per intra-node target (memcpy): zeta_i
 *   work_us   the work placed inside the epoch: C_p (0 without work)
 * and from those medians 002's predictions (eq. 1, eq. 2), with D_I = inter_us - alpha_us:
 *   model_L0_us = alpha + max(D_I, zeta_i + C_p)      (with scheduling)
 *   model_L1_us = alpha + max(D_I, C_p) + zeta_i      (without)
 * Paper 002 saw (Fig. 2, 3): with scheduling Mix ~ max(Intra, Inter) and Mix+work no costlier
 * than Inter; without it, Mix ~ Intra + Inter. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { SC_INTRA = 1, SC_INTER, SC_INTER_WORK, SC_MIX, SC_MIX_WORK, SC_N };
static const char *const sc_name[SC_N] = {"", "intra", "inter", "inter_work", "mix", "mix_work"};
enum { M_GATS, M_FENCE, M_LOCKALL, M_N };
static const char *const m_name[M_N] = {"gats", "fence", "lock_all"};
enum { NT = 3 }; /* targets per epoch */

static long th_opt = 8192;
static long inter_opt = 0; /* bytes per inter-node target; 0: SIZE */

/* One case's parameters (nbh_case_t.op indexes this table). */
typedef struct {
    int sc, mode, put, self, sched;
    const char *label; /* the series as reported */
} cparam_t;
static cparam_t *params;
static int nparams, capparams;

/* The scenario's targets in rank order: *nintra of them on the origin's node (self first). 0 if
 * the layout cannot give the scenario (why says what it lacks). */
static int pick_targets(const nbh_ctx_t *ctx, int sc, int self, int *t, int *nintra,
                        const char **why)
{
    int intra[8], ni = 0, inter[8], ne = 0;
    if (self)
        intra[ni++] = 0;
    for (int r = 1; r < ctx->nranks; r++) {
        if (ctx->node[r] == ctx->node[0] && ni < 8)
            intra[ni++] = r;
        else if (ctx->node[r] != ctx->node[0] && ne < 8)
            inter[ne++] = r;
    }
    int want_i = 0, want_e = 0;
    switch (sc) {
    case SC_INTRA:
        want_i = NT;
        *why = "three targets on rank 0's node (counting rank 0 itself with self:1)";
        break;
    case SC_INTER:
    case SC_INTER_WORK:
        want_e = NT;
        *why = "three targets on other nodes than rank 0's";
        break;
    default: /* mix: as many intra-node targets as leave room for at least one inter-node */
        want_e = ne >= 2 ? 2 : ne;
        want_i = NT - want_e;
        *why = "targets on rank 0's node and on another node";
        if (ne < 1 || ni < 1)
            return 0;
        if (ni < want_i) {
            want_i = ni;
            want_e = NT - ni;
        }
        break;
    }
    if (ni < want_i || ne < want_e)
        return 0;
    int n = 0;
    for (int i = 0; i < want_i; i++)
        t[n++] = intra[i];
    for (int i = 0; i < want_e; i++)
        t[n++] = inter[i];
    *nintra = want_i;
    return n;
}

typedef struct {
    nbh_win_t w;
    int t[NT], n, nintra;
    unsigned char *buf; /* origin: NT slots of size (put: the data; get: where it lands) */
    unsigned char *scratch;
    size_t size, inter; /* bytes per intra-node / inter-node target */
    unsigned seed;
    MPI_Group origin_g, all_g, inter_g; /* {0}; the targets; the inter-node targets */
} sc_t;

static int is_in(const int *t, int n, int r)
{
    for (int i = 0; i < n; i++)
        if (t[i] == r)
            return 1;
    return 0;
}

/* One epoch of the case's mode toward targets t[0..n-1], `bytes` per target, D of work inside
 * (work_us > 0). Collective over the window's ranks. Returns the origin's epoch time (seconds;
 * 0 elsewhere). */
static double epoch(const nbh_case_t *c, sc_t *s, const cparam_t *p, const int *t, int n,
                    MPI_Group g, size_t bytes, double work_us)
{
    const int me = c->ctx->rank, nb = c->series == NBH_REF_NB;
    MPI_Win win = s->w.win;
    MPI_Request r[2];
    int nr = 0;
    double t0 = 0, el = 0;
    int target = is_in(t, n, me);
    if (p->mode == M_GATS && target && me != 0) { /* exposure open before time 0 */
        if (nb)
            NBH_MPI(c, MPIX_Win_ipost(s->origin_g, 0, win, &r[nr++]));
        else
            NBH_MPI(c, MPI_Win_post(s->origin_g, 0, win));
    }
    if (p->mode == M_GATS && me == 0 && target) /* self: exposure to myself */
        NBH_MPI(c, MPI_Win_post(s->origin_g, 0, win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    if (me == 0 || p->mode == M_FENCE) {
        t0 = MPI_Wtime();
        MPI_Request open = MPI_REQUEST_NULL, close = MPI_REQUEST_NULL;
        switch (p->mode) {
        case M_GATS:
            if (me == 0)
                NBH_MPI(c, nb ? MPIX_Win_istart(g, 0, win, &open) : MPI_Win_start(g, 0, win));
            break;
        case M_FENCE:
            NBH_MPI(c, nb ? MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &open)
                          : MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
            break;
        default:
            NBH_MPI(c, nb ? MPIX_Win_ilock_all(0, win, &open) : MPI_Win_lock_all(0, win));
            break;
        }
        if (me == 0 && bytes)
            for (int i = 0; i < n; i++) {
                unsigned char *b = s->buf + (size_t)i * s->size;
                MPI_Aint d = nbh_win_disp(&s->w, t[i], 0);
                int k = (int)(c->ctx->node[t[i]] != c->ctx->node[0] && s->inter < bytes ? s->inter
                                                                                        : bytes);
                NBH_MPI(c, p->put ? MPI_Put(b, k, MPI_BYTE, t[i], d, k, MPI_BYTE, win)
                                  : MPI_Get(b, k, MPI_BYTE, t[i], d, k, MPI_BYTE, win));
            }
        if (me == 0 && work_us > 0)
            nbh_work_us(work_us);
        switch (p->mode) {
        case M_GATS:
            if (me == 0)
                NBH_MPI(c, nb ? MPIX_Win_icomplete(win, &close) : MPI_Win_complete(win));
            break;
        case M_FENCE:
            NBH_MPI(c, nb ? MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &close)
                          : MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
            break;
        default:
            NBH_MPI(c, nb ? MPIX_Win_iunlock_all(win, &close) : MPI_Win_unlock_all(win));
            break;
        }
        if (nb) {
            MPI_Request q[2] = {open, close};
            double done[2];
            NBH_MPI(c, nbh_wait_times(2, q, done));
        }
        el = MPI_Wtime() - t0;
    }
    if (p->mode == M_GATS && target) {
        if (nb && me != 0)
            NBH_MPI(c, MPIX_Win_iwait(win, &r[nr++]));
        else
            NBH_MPI(c, MPI_Win_wait(win));
    }
    if (nr) {
        double done[2];
        NBH_MPI(c, nbh_wait_times(nr, r, done));
    }
    /* Every rank leaves the epoch before any opens the next: a rank outside this epoch's group
     * would otherwise post for the next one while the origin still starts this one. MPI allows
     * that, but MPICH 4.0.2 (ch4:ucx) then hung in MPI_Win_start here (the vendor series, C4). */
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    return me == 0 ? el : 0;
}

/* zeta_i: the origin copies SIZE bytes once per intra-node target (its CPU's share). */
static double zeta(sc_t *s)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < s->nintra; i++) {
        memcpy(s->scratch, s->buf + (size_t)i * s->size, s->size);
        __asm__ __volatile__("" : : "r"(s->scratch) : "memory"); /* keep the copy */
    }
    return MPI_Wtime() - t0;
}

static MPI_Group group_of(const nbh_case_t *c, const int *t, int n)
{
    MPI_Group world, g;
    NBH_MPI(c, MPI_Comm_group(c->ctx->comm, &world));
    NBH_MPI(c, MPI_Group_incl(world, n, t, &g));
    NBH_MPI(c, MPI_Group_free(&world));
    return g;
}

/* Fresh data for one verified epoch: put — the origin's slots hold per-target patterns and the
 * targets' windows zeros; get — the targets' windows hold their patterns, the origin's slots
 * zeros. */
static void prepare(const nbh_case_t *c, sc_t *s, const cparam_t *p)
{
    const int me = c->ctx->rank;
    nbh_win_self_lock(&s->w, c);
    if (p->put)
        memset(s->w.base, 0, s->size);
    else
        nbh_pattern_fill(s->w.base, s->size, s->seed + 97u * (unsigned)me);
    nbh_win_self_unlock(&s->w, c);
    if (me == 0)
        for (int i = 0; i < s->n; i++) {
            unsigned char *b = s->buf + (size_t)i * s->size;
            if (p->put)
                nbh_pattern_fill(b, s->size, s->seed + 13u * (unsigned)s->t[i]);
            else
                memset(b, 0, s->size);
        }
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
}

static int verify(gb_state_t *st, const nbh_case_t *c, sc_t *s, const cparam_t *p)
{
    const int me = c->ctx->rank;
    prepare(c, s, p);
    epoch(c, s, p, s->t, s->n, s->all_g, s->size, 0);
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    long off = -1;
    int who = -1;
    size_t mine = c->ctx->node[me] != c->ctx->node[0] ? s->inter : s->size;
    if (p->put && is_in(s->t, s->n, me)) {
        nbh_win_self_lock(&s->w, c);
        off = nbh_pattern_check(s->w.base, mine, s->seed + 13u * (unsigned)me);
        nbh_win_self_unlock(&s->w, c);
        who = me;
    } else if (!p->put && me == 0) {
        for (int i = 0; i < s->n && off < 0; i++)
            if ((off = nbh_pattern_check(s->buf + (size_t)i * s->size,
                                         c->ctx->node[s->t[i]] != c->ctx->node[0] ? s->inter
                                                                                  : s->size,
                                         s->seed + 97u * (unsigned)s->t[i])) >= 0)
                who = s->t[i];
    }
    return nbh_verify(st, c, off < 0, "the %s of rank %d's %zu bytes differs at byte %ld",
                      p->put ? "put" : "get", who, s->size, off);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const cparam_t *p = &params[c->op];
    const nbh_ctx_t *ctx = c->ctx;
    sc_t s;
    memset(&s, 0, sizeof s);
    const char *why;
    s.n = pick_targets(ctx, p->sc, p->self, s.t, &s.nintra, &why);
    s.size = c->size;
    s.inter = inter_opt > 0 && (size_t)inter_opt < s.size ? (size_t)inter_opt : s.size;
    s.seed = nbh_next_seed();
    if (s.size > (size_t)INT32_MAX) {
        gb_skip_with_error(st, "SIZE exceeds an int count (2^31 - 1 bytes)");
        return;
    }
    s.buf = malloc((size_t)NT * s.size);
    s.scratch = malloc(s.size);
    if (!s.buf || !s.scratch)
        nbh_mpi_fail(c, "malloc (origin buffers)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    memset(s.scratch, 0, s.size);
    nbh_win_open(&s.w, c, (MPI_Aint)s.size);
    int zero = 0, inter[NT], ne = s.n - s.nintra;
    for (int i = 0; i < ne; i++)
        inter[i] = s.t[s.nintra + i];
    s.origin_g = group_of(c, &zero, 1);
    s.all_g = group_of(c, s.t, s.n);
    s.inter_g = group_of(c, inter, ne);
    const double work = p->sc == SC_INTER_WORK || p->sc == SC_MIX_WORK ? ctx->opts.delay_us : 0;
    prepare(c, &s, p);
    for (int i = 0; i < ctx->opts.warmup; i++)
        epoch(c, &s, p, s.t, s.n, s.all_g, s.size, work);
    static const char *const q[] = {"epoch", "inter", "alpha", "zeta", "work"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 5, q);
    while (gb_keep_running(st)) {
        double t[5] = {0, 0, 0, 0, 0};
        t[0] = epoch(c, &s, p, s.t, s.n, s.all_g, s.size, work);
        if (ne)
            t[1] = epoch(c, &s, p, inter, ne, s.inter_g, s.size, 0);
        t[2] = epoch(c, &s, p, s.t, s.n, s.all_g, 0, 0); /* the epoch's calls, no RMA */
        if (ctx->rank == 0) {
            t[3] = zeta(&s);
            double w0 = MPI_Wtime();
            if (work > 0)
                nbh_work_us(work);
            t[4] = work > 0 ? MPI_Wtime() - w0 : 0;
        }
        nbh_rec_sample(&rec, st, t);
    }
    if (verify(st, c, &s, p)) {
        nbh_rec_report(&rec, st);
        double alpha = nbh_rec_median(&rec, 2), z = nbh_rec_median(&rec, 3) * 1e6,
               cp = nbh_rec_median(&rec, 4) * 1e6;
        alpha *= 1e6;
        double di = ne ? nbh_rec_median(&rec, 1) * 1e6 - alpha : 0;
        if (di < 0)
            di = 0;
        double l0 = alpha + (di > z + cp ? di : z + cp), l1 = alpha + (di > cp ? di : cp) + z;
        gb_set_counter(st, "model_L0_us", l0);
        gb_set_counter(st, "model_L1_us", l1);
        gb_set_counter(st, "D_I_us", di);
        gb_set_counter(st, "intra_targets", s.nintra);
        gb_set_counter(st, "inter_targets", ne);
    }
    nbh_rec_free(&rec);
    MPI_Group_free(&s.origin_g);
    MPI_Group_free(&s.all_g);
    MPI_Group_free(&s.inter_g);
    nbh_win_close(&s.w);
    free(s.buf);
    free(s.scratch);
}

static void add(nbh_ctx_t *ctx, nbh_series_t s, cparam_t p)
{
    if (nparams == capparams &&
        !(params = realloc(params, (size_t)(capparams = capparams ? 2 * capparams : 64) *
                                       sizeof *params))) {
        fprintf(stderr, "c_sched: out of memory registering benchmarks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    params[nparams] = p;
    int work = p.sc == SC_INTER_WORK || p.sc == SC_MIX_WORK;
    for (int i = 0; i < ctx->opts.nsizes; i++) {
        nbh_case_t *c;
        if (work)
            c = nbh_add_case(ctx, s, nparams, ctx->opts.sizes[i], run,
                             "C%d_%s/%s/mode:%s/op:%s/self:%d/size:%zu/delay_us:%.0f", p.sc,
                             sc_name[p.sc], p.label, m_name[p.mode], p.put ? "put" : "get",
                             p.self, ctx->opts.sizes[i], ctx->opts.delay_us);
        else
            c = nbh_add_case(ctx, s, nparams, ctx->opts.sizes[i], run,
                             "C%d_%s/%s/mode:%s/op:%s/self:%d/size:%zu", p.sc, sc_name[p.sc],
                             p.label, m_name[p.mode], p.put ? "put" : "get", p.self,
                             ctx->opts.sizes[i]);
        c->sched = p.sched;
        c->sched_th = th_opt;
    }
    nparams++;
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    static int told; /* say each skip once, with the first series registered */
    const int tell = !told;
    told = 1;
    for (int sc = SC_INTRA; sc < SC_N; sc++)
        for (int self = 0; self <= 1; self++) {
            if (self && (sc == SC_INTER || sc == SC_INTER_WORK))
                continue; /* no intra-node target to replace */
            int t[NT], ni;
            const char *why;
            if (!pick_targets(ctx, sc, self, t, &ni, &why)) {
                if (ctx->rank == 0 && tell)
                    fprintf(stderr,
                            "c_sched: C%d (%s, self:%d) skipped: it needs %s; this layout "
                            "(nodes of ranks %s) has not (the benchlist runs C1 on one node, "
                            "C2/C3 with NBRMA_RANKS_PER_NODE=1, C4/C5 with 2)\n",
                            sc, sc_name[sc], self, why, ctx->node_of_rank);
                continue;
            }
            for (int m = 0; m < M_N; m++)
                for (int put = 1; put >= 0; put--) {
                    cparam_t p = {sc, m, put, self, -1, "vendor"};
                    if (s == NBH_VENDOR) {
                        add(ctx, s, p);
                    } else if (s == NBH_REF) {
                        p.sched = 0, p.label = "ref";
                        add(ctx, s, p);
                        p.sched = 1, p.label = "ref-sched";
                        add(ctx, s, p);
                    } else {
                        p.sched = 1, p.label = "ref-nb-sched";
                        add(ctx, s, p);
                    }
                }
        }
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"th", "ref-sched: intra-node Put/Get of at least this many bytes are scheduled (002's th; "
               "nbrma_sched_th)",
         &th_opt, 0, 1L << 40},
        {"inter-bytes", "bytes per inter-node target (0: SIZE, as in paper 002); a smaller value "
                        "makes the intra-node copies the larger part",
         &inter_opt, 0, 1L << 31},
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "C",
        .title = "intra-epoch message scheduling: Intra, Inter, Inter+work, Mix, Mix+work "
                 "(paper 002 §5)",
        .header =
            "rank 0 opens an epoch (GATS, fence, lock_all) toward three targets and puts or gets\n"
            "SIZE bytes to each in rank order (intra-node targets first); C3 and C5 work D inside\n"
            "the epoch. Targets on rank 0's node / other nodes per NBRMA_RANKS_PER_NODE;\n"
            "NBRMA_WIRE_US / NBRMA_WIRE_MBPS emulate a network between virtual nodes.\n"
            "series: vendor; ref (scheduler off); ref-sched (nbrma_sched=on, th = --th);\n"
            "ref-nb-sched (nonblocking epoch calls, scheduler on)\n"
            "measured: epoch_us; inter_us (inter-node targets only), alpha_us (1 byte each),\n"
            "zeta_us (origin memcpy per intra-node target), work_us; model_L0_us / model_L1_us =\n"
            "002 eq. 1 / eq. 2 from those\n"
            "paper 002 saw: with scheduling Mix ~ max(Intra, Inter), Mix+work <= Inter+work",
        .min_ranks = 4,
        .max_ranks = 0,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "1M",
        .quick_sizes = "256K",
        .default_iters = 30,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
