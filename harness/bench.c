/* bench.c — main() of every benchmark binary and the helpers its cases share (see bench.h).
 *
 * Flow: MPI_Init; parse our options and hand --benchmark_* flags to Google Benchmark (rank 0
 * alone gets the output file); calibrate the work loop; record the MPI library, rank count and
 * ranks per node in the JSON context; register each selected series' cases; run. Every
 * collective the harness itself issues is nonblocking plus a yielding test loop (timing.h). */
#include "bench.h"

#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NBH_MPI_NAME
#define NBH_MPI_NAME "unknown"
#endif

/* MPIX_Nbrma_set_impl and MPIX_Win_ifence (mpix.h) are present only when the binary runs on
 * libnbrma (linked or preloaded): the switch between the vendor's RMA and the reference for
 * windows created from then on, and the nonblocking API. */

static int g_failed;         /* a case failed validation: exit non-zero */
static nbh_case_t **g_cases; /* freed after the run */
static size_t g_ncases, g_capcases;
static char g_crash_msg[320];
static size_t g_crash_len;
static struct sigaction g_old_segv, g_old_bus, g_old_abrt, g_old_fpe, g_old_ill;

/* ---- crash reports: name the case that was running ---------------------------------------- */

static void on_crash(int sig)
{
    if (g_crash_len)
        (void)!write(2, g_crash_msg, g_crash_len);
    const struct sigaction *old = sig == SIGSEGV  ? &g_old_segv
                                  : sig == SIGBUS ? &g_old_bus
                                  : sig == SIGFPE ? &g_old_fpe
                                  : sig == SIGILL ? &g_old_ill
                                                  : &g_old_abrt;
    sigaction(sig, old, NULL); /* chain to the MPI library's handler (backtrace) or default */
    raise(sig);
}

static void install_crash_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
    sigaction(SIGFPE, &sa, &g_old_fpe);
    sigaction(SIGILL, &sa, &g_old_ill);
    sigaction(SIGABRT, &sa, &g_old_abrt);
}

void nbh_case_begin(const nbh_case_t *c)
{
    int n = snprintf(g_crash_msg, sizeof g_crash_msg,
                     "nbrma: rank %d: crashed while running %s (a fault inside the MPI library "
                     "is a vendor bug; report it with this name)\n",
                     c->ctx->rank, c->name);
    g_crash_len = n < 0 ? 0 : (size_t)n < sizeof g_crash_msg ? (size_t)n : sizeof g_crash_msg - 1;
}

_Noreturn void nbh_mpi_fail(const nbh_case_t *c, const char *call, int rc, const char *file,
                            int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "nbrma: rank %d: %s: %s failed (%s:%d): %s\n", c ? c->ctx->rank : -1,
            c ? c->name : "(setup)", call, file, line, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    abort();
}

/* ---- cases ---------------------------------------------------------------------------------- */

nbh_case_t *nbh_add_case(nbh_ctx_t *ctx, nbh_series_t s, int op, size_t size, gb_fn_t fn,
                         const char *fmt, ...)
{
    nbh_case_t *c = calloc(1, sizeof *c);
    if (!c || (g_ncases == g_capcases &&
               !(g_cases = realloc(g_cases, (g_capcases = g_capcases ? 2 * g_capcases : 64) *
                                                sizeof *g_cases)))) {
        fprintf(stderr, "nbrma: out of memory registering benchmarks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    g_cases[g_ncases++] = c;
    c->ctx = ctx;
    c->series = s;
    c->op = op;
    c->size = size;
    c->flags = s == NBH_REF_NB ? ctx->opts.flags : 0;
    c->sched = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->name, sizeof c->name, fmt, ap);
    va_end(ap);
    gb_register(c->name, fn, c, ctx->opts.iters, ctx->opts.reps);
    return c;
}

/* ---- sample recording ----------------------------------------------------------------------- */

int nbh_rec_init(nbh_rec_t *r, const nbh_case_t *c, gb_state_t *st, int nq,
                 const char *const *names)
{
    memset(r, 0, sizeof *r);
    r->nq = nq;
    r->comm = c->ctx->comm;
    long cap = gb_max_iterations(st);
    r->cap = cap < 1 ? 1 : cap > (1L << 20) ? (1L << 20) : cap;
    for (int q = 0; q < nq; q++) {
        r->names[q] = names[q];
        r->v[q] = malloc((size_t)r->cap * sizeof(double));
        if (!r->v[q]) {
            fprintf(stderr, "nbrma: rank %d: %s: out of memory for %ld samples\n", c->ctx->rank,
                    c->name, r->cap);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    nbh_case_begin(c);
    return 0;
}

static double rec_add(nbh_rec_t *r, const double *t)
{
    double m[NBH_MAXQ];
    memcpy(m, t, (size_t)r->nq * sizeof *m);
    nbh_allreduce(m, r->nq, MPI_DOUBLE, MPI_MAX, r->comm);
    if (r->n < r->cap) {
        for (int q = 0; q < r->nq; q++)
            r->v[q][r->n] = m[q];
        r->n++;
    }
    return m[0];
}

void nbh_rec_add(nbh_rec_t *r, const double *t)
{
    rec_add(r, t);
}

void nbh_rec_sample(nbh_rec_t *r, gb_state_t *st, const double *t)
{
    double m0 = rec_add(r, t);
    gb_set_iteration_time(st, m0 > 0 ? m0 : 1e-12);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double nbh_rec_median(const nbh_rec_t *r, int q)
{
    if (r->n == 0)
        return 0;
    double *tmp = malloc((size_t)r->n * sizeof *tmp);
    if (!tmp)
        return 0;
    memcpy(tmp, r->v[q], (size_t)r->n * sizeof *tmp);
    qsort(tmp, (size_t)r->n, sizeof *tmp, cmp_double);
    double med = r->n % 2 ? tmp[r->n / 2] : 0.5 * (tmp[r->n / 2 - 1] + tmp[r->n / 2]);
    free(tmp);
    return med;
}

double nbh_rec_min(const nbh_rec_t *r, int q)
{
    double m = r->n ? r->v[q][0] : 0;
    for (long i = 1; i < r->n; i++)
        if (r->v[q][i] < m)
            m = r->v[q][i];
    return m;
}

void nbh_rec_report(const nbh_rec_t *r, gb_state_t *st)
{
    char key[64];
    for (int q = 0; q < r->nq; q++) {
        snprintf(key, sizeof key, "%s_us", r->names[q]);
        gb_set_counter(st, key, nbh_rec_median(r, q) * 1e6);
    }
    snprintf(key, sizeof key, "%s_min_us", r->names[0]);
    gb_set_counter(st, key, nbh_rec_min(r, 0) * 1e6);
    gb_set_counter(st, "samples", (double)r->n);
}

void nbh_rec_free(nbh_rec_t *r)
{
    for (int q = 0; q < r->nq; q++)
        free(r->v[q]);
    memset(r, 0, sizeof *r);
}

/* ---- windows -------------------------------------------------------------------------------- */

/* The reorder flags as window info (ref/include/nbrma.h's keys), or MPI_INFO_NULL. */
static MPI_Info flags_info(const nbh_case_t *c)
{
    static const char *const keys[] = {NBH_KEY_A_A_A_R, NBH_KEY_A_A_E_R, NBH_KEY_E_A_E_R,
                                       NBH_KEY_E_A_A_R};
    MPI_Info info = MPI_INFO_NULL;
    if (!c->flags && (c->sched < 0 || c->series == NBH_VENDOR) && !c->acc_ops)
        return info;
    NBH_MPI(c, MPI_Info_create(&info));
    if (c->acc_ops)
        NBH_MPI(c, MPI_Info_set(info, "accumulate_ops", c->acc_ops));
    for (unsigned i = 0; i < sizeof keys / sizeof *keys; i++)
        if (c->flags & (1u << i))
            NBH_MPI(c, MPI_Info_set(info, keys[i], "true"));
    if (c->sched >= 0 && c->series != NBH_VENDOR) { /* libnbrma's scheduler (paper 002 §4) */
        char th[32];
        snprintf(th, sizeof th, "%ld", c->sched_th);
        NBH_MPI(c, MPI_Info_set(info, "nbrma_sched", c->sched ? "on" : "off"));
        NBH_MPI(c, MPI_Info_set(info, "nbrma_sched_th", th));
    }
    return info;
}

void nbh_win_open(nbh_win_t *w, const nbh_case_t *c, MPI_Aint bytes)
{
    MPI_Comm comm = c->ctx->comm;
    MPI_Info info = flags_info(c);
    memset(w, 0, sizeof *w);
    /* On libnbrma, the series decides whose RMA serves the windows created from here on. */
    if (MPIX_Nbrma_set_impl)
        NBH_MPI(c, MPIX_Nbrma_set_impl(c->series == NBH_VENDOR ? "vendor" : "ref"));
    /* Whole cache lines: MPICH 4.0.2 misplaces RMA to MPI_Win_allocate windows whose sizes are
     * not multiples of 16 (suites/conformance/win_allocate_odd). */
    w->bytes = bytes < 64 ? 64 : (bytes + 63) & ~(MPI_Aint)63;
    w->flavor = c->ctx->opts.window;
    switch (w->flavor) {
    case NBH_WIN_ALLOCATE:
        NBH_MPI(c, MPI_Win_allocate(w->bytes, 1, info, comm, &w->base, &w->win));
        break;
    case NBH_WIN_CREATE:
        /* Plain user memory, as an application would pass it. */
        w->base = aligned_alloc(64, ((size_t)w->bytes + 63) & ~(size_t)63);
        if (!w->base)
            nbh_mpi_fail(c, "aligned_alloc (window memory)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
        NBH_MPI(c, MPI_Win_create(w->base, w->bytes, 1, info, comm, &w->win));
        break;
    case NBH_WIN_ALLOCMEM:
        /* What IMB-RMA does: MPI_Alloc_mem (the series' own: the vendor's under vendor). */
        NBH_MPI(c, MPI_Alloc_mem(w->bytes, MPI_INFO_NULL, &w->base));
        NBH_MPI(c, MPI_Win_create(w->base, w->bytes, 1, info, comm, &w->win));
        break;
    case NBH_WIN_DYNAMIC: {
        w->base = aligned_alloc(64, ((size_t)w->bytes + 63) & ~(size_t)63);
        w->remote = malloc((size_t)c->ctx->nranks * sizeof *w->remote);
        if (!w->base || !w->remote)
            nbh_mpi_fail(c, "malloc (dynamic window)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
        NBH_MPI(c, MPI_Win_create_dynamic(info, comm, &w->win));
        NBH_MPI(c, MPI_Win_attach(w->win, w->base, w->bytes));
        MPI_Aint mine;
        NBH_MPI(c, MPI_Get_address(w->base, &mine));
        MPI_Request req;
        NBH_MPI(c, MPI_Iallgather(&mine, 1, MPI_AINT, w->remote, 1, MPI_AINT, comm, &req));
        NBH_MPI(c, nbh_wait(&req));
        break;
    }
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    NBH_MPI(c, MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    memset(w->base, 0, (size_t)w->bytes);
    NBH_MPI(c, nbh_barrier(comm));
}

MPI_Aint nbh_win_disp(const nbh_win_t *w, int target, MPI_Aint off)
{
    return w->remote ? w->remote[target] + off : off;
}

void nbh_win_close(nbh_win_t *w)
{
    if (w->flavor == NBH_WIN_DYNAMIC)
        MPI_Win_detach(w->win, w->base);
    MPI_Win_free(&w->win);
    if (w->flavor == NBH_WIN_ALLOCMEM)
        MPI_Free_mem(w->base);
    else if (w->flavor != NBH_WIN_ALLOCATE)
        free(w->base);
    free(w->remote);
    memset(w, 0, sizeof *w);
}

void nbh_win_self_lock(const nbh_win_t *w, const nbh_case_t *c)
{
    NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->ctx->rank, 0, w->win));
}

void nbh_win_self_unlock(const nbh_win_t *w, const nbh_case_t *c)
{
    NBH_MPI(c, MPI_Win_unlock(c->ctx->rank, w->win));
}

unsigned nbh_next_seed(void)
{
    /* Every rank runs the same cases in the same order, so the counters agree. */
    static unsigned seed = 0x5eed;
    return seed += 0x9e3779b9u;
}

/* ---- validation ----------------------------------------------------------------------------- */

static inline unsigned char pattern_byte(size_t i, unsigned seed)
{
    /* Never 0, so a window left at zero never passes for data that arrived. */
    return (unsigned char)((((i + seed) * 2654435761u) >> 13) % 255 + 1);
}

void nbh_pattern_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = pattern_byte(i, seed);
}

long nbh_pattern_check(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_byte(i, seed))
            return (long)i;
    return -1;
}

int nbh_verify(gb_state_t *st, const nbh_case_t *c, int ok, const char *fmt, ...)
{
    if (!ok) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fprintf(stderr, "nbrma: rank %d: %s: VALIDATION FAILED: %s\n", c->ctx->rank, c->name, msg);
        fflush(stderr);
    }
    int all = ok ? 1 : 0;
    NBH_MPI(c, nbh_allreduce(&all, 1, MPI_INT, MPI_MIN, c->ctx->comm));
    if (!all) {
        g_failed = 1;
        gb_skip_with_error(st, "validation failed: wrong data arrived (see stderr)");
    }
    return all;
}

/* ---- patterned transfers (D1-D3) ------------------------------------------------------------ */

void nbh_xfer_open(nbh_xfer_t *x, const nbh_case_t *c, size_t bytes, int put)
{
    const int me = c->ctx->rank;
    nbh_win_open(&x->w, c, (MPI_Aint)bytes);
    x->bytes = bytes;
    x->put = put;
    x->seed = nbh_next_seed();
    x->disp = nbh_win_disp(&x->w, NBH_TARGET, 0);
    x->buf = calloc(1, bytes ? bytes : 1);
    if (!x->buf)
        nbh_mpi_fail(c, "calloc (origin buffer)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    if (!put && me == NBH_TARGET) {
        nbh_win_self_lock(&x->w, c);
        nbh_pattern_fill(x->w.base, bytes, x->seed);
        nbh_win_self_unlock(&x->w, c);
    }
    if (put && me == NBH_ORIGIN)
        nbh_pattern_fill(x->buf, bytes, x->seed);
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
}

int nbh_xfer_verify(nbh_xfer_t *x, gb_state_t *st, const nbh_case_t *c)
{
    const int me = c->ctx->rank;
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    long bad = -1;
    if (x->put && me == NBH_TARGET) {
        nbh_win_self_lock(&x->w, c);
        bad = nbh_pattern_check(x->w.base, x->bytes, x->seed);
        nbh_win_self_unlock(&x->w, c);
    } else if (!x->put && me == NBH_ORIGIN) {
        bad = nbh_pattern_check(x->buf, x->bytes, x->seed);
    }
    return nbh_verify(st, c, bad < 0, "byte %ld of %zu differs from what was %s", bad, x->bytes,
                      x->put ? "put" : "read by get");
}

void nbh_xfer_close(nbh_xfer_t *x)
{
    free(x->buf);
    nbh_win_close(&x->w);
}

/* ---- delay patterns (§A, §B) --------------------------------------------------------------- */

void nbh_pattern_run(gb_state_t *st, const nbh_case_t *c, const nbh_pattern_t *p, void *arg)
{
    const nbh_opts_t *o = &c->ctx->opts;
    nbh_align_t al;
    NBH_MPI(c, nbh_align_init(&al, c->ctx->comm));
    const char *names[NBH_MAXQ];
    int nq = p->nq + 1;
    if (nq > NBH_MAXQ)
        nbh_mpi_fail(c, "nbh_pattern_run (too many quantities)", MPI_ERR_ARG, __FILE__, __LINE__);
    for (int q = 0; q < p->nq; q++)
        names[q] = p->names[q];
    names[p->nq] = "start_skew";
    double t[NBH_MAXQ];

    for (int i = 0; i < o->warmup; i++) {
        memset(t, 0, sizeof t);
        p->sample(c, arg, &al, o->delay_us, t);
    }
    /* The same pattern without the delay, as many samples as the timed part (at most 1000):
     * what the victim quantity costs by itself in this run. */
    nbh_rec_t base = {0};
    double nodelay = 0;
    if (p->victim >= 0) {
        nbh_rec_init(&base, c, st, nq, names);
        long n = base.cap < 1000 ? base.cap : 1000;
        for (long i = 0; i < n; i++) {
            memset(t, 0, sizeof t);
            p->sample(c, arg, &al, 0, t);
            nbh_rec_add(&base, t);
        }
        nodelay = nbh_rec_median(&base, p->victim);
        nbh_rec_free(&base);
    }
    if (p->reset)
        p->reset(c, arg);

    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, nq, names);
    while (gb_keep_running(st)) {
        memset(t, 0, sizeof t);
        p->sample(c, arg, &al, o->delay_us, t);
        t[p->nq] = al.late;
        nbh_rec_sample(&rec, st, t);
    }
    nbh_rec_report(&rec, st);
    /* The ranks did not start together when the latest one was, in the median sample, later
     * than the delay D the experiment injects: what "propagated" then mixes D with the
     * scheduler's lateness (issue 23: A1 once showed a 26 ms skew against D = 1 ms and "-3866 us
     * propagated"). Said on stderr and kept in the JSON (skew_exceeds_delay = 1), so the
     * summary and the figures can say it too. */
    double skew_us = nbh_rec_median(&rec, p->nq) * 1e6;
    int skewed = o->delay_us > 0 && skew_us > o->delay_us;
    if (skewed) {
        gb_set_counter(st, "skew_exceeds_delay", 1);
        if (c->ctx->rank == 0)
            fprintf(stderr,
                    "# %s: WARNING: start skew %.0f us exceeds the injected delay D = %.0f us: "
                    "the ranks did not start together (more ranks than cores, or a loaded "
                    "machine); the delay propagation measured here is not meaningful\n",
                    c->name, skew_us, o->delay_us);
    }
    if (p->victim >= 0) {
        char key[64];
        double with = nbh_rec_median(&rec, p->victim);
        snprintf(key, sizeof key, "%s_nodelay_us", p->names[p->victim]);
        gb_set_counter(st, key, nodelay * 1e6);
        gb_set_counter(st, "propagated_delay_us", (with - nodelay) * 1e6);
        if (c->ctx->rank == 0)
            fprintf(stderr,
                    "# %s: %s %.0f us with the %.0f us delay, %.0f us without it: "
                    "%.0f us of the delay propagated%s\n",
                    c->name, p->names[p->victim], with * 1e6, o->delay_us, nodelay * 1e6,
                    (with - nodelay) * 1e6, skewed ? " (start skew > D: not meaningful)" : "");
    }
    nbh_rec_free(&rec);
}

/* ---- main ----------------------------------------------------------------------------------- */

static int series_available(nbh_series_t s, const char **why)
{
    if (s == NBH_VENDOR)
        return 1;
    if (!MPIX_Nbrma_set_impl) {
        *why = "this binary is not running on libnbrma (link it with -lnbrma or LD_PRELOAD it)";
        return 0;
    }
    if (s == NBH_REF_NB && !MPIX_Win_ifence) {
        *why = "the libnbrma in use has no nonblocking synchronization (MPIX_Win_ifence)";
        return 0;
    }
    return 1;
}

static void add_context(const nbh_ctx_t *ctx)
{
    char buf[192];
    gb_add_context("experiment", ctx->ex->id);
    gb_add_context("mpi_library", ctx->mpi_library);
    int ver, sub;
    MPI_Get_version(&ver, &sub);
    snprintf(buf, sizeof buf, "%d.%d", ver, sub);
    gb_add_context("mpi_standard", buf);
    gb_add_context("nbrma_mpi", NBH_MPI_NAME);
    snprintf(buf, sizeof buf, "%d", ctx->nranks);
    gb_add_context("nranks", buf);
    snprintf(buf, sizeof buf, "%d", ctx->ranks_per_node);
    gb_add_context("ranks_per_node", buf);
    snprintf(buf, sizeof buf, "%d", ctx->nnodes);
    gb_add_context("nnodes", buf);
    gb_add_context("node_of_rank", ctx->node_of_rank);
    /* The transport of each pair: within a node, shared memory for ref (the vendor's own path
     * for the vendor series); across nodes, ref's NBRMA_NET (auto: ucx where libnbrma has UCX
     * and it reaches the peer, else am) and UCX's transports. */
    const char *net = getenv("NBRMA_NET"), *tls = getenv("UCX_TLS");
    snprintf(buf, sizeof buf, "within a node: shm; across nodes: %s (ref, NBRMA_NET)%s%s / vendor",
             net && *net ? net : "auto", tls ? ", UCX_TLS=" : "", tls ? tls : "");
    gb_add_context("pair_transport", ctx->nnodes == 1 ? "shm (ref) / vendor within the node" : buf);
    gb_add_context("window_flavor", nbh_win_flavor_name(ctx->opts.window));
    snprintf(buf, sizeof buf, "%.4f", nbh_work_ns_per_iter());
    gb_add_context("work_ns_per_iter", buf);
    snprintf(buf, sizeof buf, "%ld", ctx->opts.iters);
    gb_add_context("iters", buf);
    gb_add_context("quick", ctx->opts.quick ? "1" : "0");
    snprintf(buf, sizeof buf, "%.4f", MPI_Wtick() * 1e6);
    gb_add_context("wtick_us", buf);
    snprintf(buf, sizeof buf, "%d", ctx->cores);
    gb_add_context("cores_per_node", buf);
    gb_add_context("oversubscribed", ctx->oversubscribed ? "1" : "0");
}

static void print_header(const nbh_ctx_t *ctx)
{
    const nbh_experiment_t *ex = ctx->ex;
    printf("# %s — %s\n", ex->id, ex->title);
    for (const char *p = ex->header; p && *p;) {
        size_t len = strcspn(p, "\n");
        printf("#   %.*s\n", (int)len, p);
        p += len + (p[len] == '\n');
    }
    printf("# ranks: %d (%d per node, %d node%s); window: %s; work loop: %.3f ns/iteration\n",
           ctx->nranks, ctx->ranks_per_node, ctx->nnodes, ctx->nnodes == 1 ? "" : "s",
           nbh_win_flavor_name(ctx->opts.window), nbh_work_ns_per_iter());
    printf("# MPI: %s\n", ctx->mpi_library);
    if (ctx->oversubscribed)
        printf(
            "# NOTE: %d ranks per node on %d cores: oversubscribed. Blocking vendor calls may "
            "spin\n"
            "#       against descheduled peers; times include that (context: oversubscribed=1)\n",
            ctx->ranks_per_node, ctx->cores);
    fflush(stdout);
}

static void node_layout(nbh_ctx_t *ctx)
{
    /* Nodes as the program sees them: real ones, or libnbrma's virtual nodes of
     * NBRMA_RANKS_PER_NODE (its MPI_Comm_split_type honours them). CPUs are counted per real
     * host (the PMPI_ call bypasses libnbrma): virtual nodes on one machine share its cores. */
    MPI_Comm node, host;
    int nsize, nrank, hsize;
    MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node);
    PMPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &host);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(host, &hsize);
    /* The CPUs the host's ranks may use: the union of their affinity masks (a launcher that
     * binds each rank to one core still gives the job every core it bound). */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        CPU_ZERO(&set);
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &set);
    }
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, &set, (int)sizeof set, MPI_BYTE, MPI_BOR, host, &r);
    nbh_wait(&r);
    /* Which node each rank is on: its node's lowest rank names it. */
    int leader = ctx->rank;
    MPI_Iallreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node, &r);
    nbh_wait(&r);
    int *leaders = malloc((size_t)ctx->nranks * sizeof *leaders);
    if (!leaders) {
        fprintf(stderr, "nbrma: out of memory describing the node layout\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Iallgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, ctx->comm, &r);
    nbh_wait(&r);
    size_t at = 0;
    ctx->node_of_rank[0] = '\0';
    if (!(ctx->node = malloc((size_t)ctx->nranks * sizeof *ctx->node))) {
        fprintf(stderr, "nbrma: out of memory describing the node layout\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < ctx->nranks; i++) { /* nodes numbered in order of their first rank */
        ctx->node[i] = 0;
        for (int j = 0; j < leaders[i]; j++)
            ctx->node[i] += leaders[j] == j;
    }
    for (int i = 0; i < ctx->nranks; i++) {
        int id = ctx->node[i];
        int w = snprintf(ctx->node_of_rank + at, sizeof ctx->node_of_rank - at, "%s%d",
                         i ? "," : "", id);
        if (w < 0 || (size_t)w >= sizeof ctx->node_of_rank - at) {
            snprintf(ctx->node_of_rank, sizeof ctx->node_of_rank, "(%d ranks)", ctx->nranks);
            break;
        }
        at += (size_t)w;
    }
    free(leaders);
    MPI_Comm_free(&node);
    MPI_Comm_free(&host);
    int v[4] = {nsize, nrank == 0, CPU_COUNT(&set), hsize > CPU_COUNT(&set)};
    nbh_allreduce(&v[0], 1, MPI_INT, MPI_MAX, ctx->comm);
    nbh_allreduce(&v[1], 1, MPI_INT, MPI_SUM, ctx->comm);
    nbh_allreduce(&v[2], 1, MPI_INT, MPI_MIN, ctx->comm);
    nbh_allreduce(&v[3], 1, MPI_INT, MPI_MAX, ctx->comm);
    ctx->ranks_per_node = v[0];
    ctx->nnodes = v[1];
    ctx->cores = v[2];
    ctx->oversubscribed = v[3];
}

static void library_name(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int l = 0;
    MPI_Get_library_version(v, &l);
    size_t n = strcspn(v, "\n,");
    if (n >= len)
        n = len - 1;
    memcpy(out, v, n);
    out[n] = '\0';
    for (char *p = out; *p; p++)
        if (*p == '\t')
            *p = ' ';
}

static void apply_quick(nbh_opts_t *o, const nbh_experiment_t *ex)
{
    if (o->iters == 0 || o->iters > 30)
        o->iters = 30;
    o->reps = 1;
    if (o->warmup > 3)
        o->warmup = 3;
    if ((ex->uses & NBH_USE_SIZES) && !(o->given & NBH_USE_SIZES) && ex->quick_sizes) {
        char err[160];
        o->nsizes = nbh_parse_sizes(ex->quick_sizes, o->sizes, NBH_MAX_SIZES, err, sizeof err);
    }
}

int nbh_main(int argc, char **argv, const nbh_experiment_t *ex)
{
    MPI_Init(&argc, &argv);
    static nbh_ctx_t ctx; /* cases point at it until exit */
    ctx.ex = ex;
    ctx.comm = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(ctx.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(ctx.comm, &ctx.rank);
    MPI_Comm_size(ctx.comm, &ctx.nranks);
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

    /* Split argv: --benchmark_* go to Google Benchmark, the rest is ours. */
    char **ours = calloc((size_t)argc + 1, sizeof *ours);
    char **gbv = calloc((size_t)argc + 3, sizeof *gbv);
    int nours = 1, ngb = 1;
    ours[0] = gbv[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--benchmark_", 12))
            gbv[ngb++] = argv[i];
        else
            ours[nours++] = argv[i];
    }

    char err[512] = "";
    nbh_opts_defaults(&ctx.opts, ex->default_iters);
    int rc = nbh_opts_parse(&ctx.opts, nours, ours, ex->uses, ex->extra, err, sizeof err);
    if (rc == 0 && ctx.opts.help) {
        if (ctx.rank == 0) {
            printf("%s — %s %s\n\n%s\n\n", prog, ex->id, ex->title, ex->header);
            nbh_opts_usage(stdout, prog, ex->uses, ex->extra);
            gb_print_flags(stdout);
        }
        goto out;
    }
    if (rc == 0 && (ctx.nranks < ex->min_ranks || (ex->max_ranks && ctx.nranks > ex->max_ranks))) {
        rc = 2;
        if (ex->max_ranks)
            snprintf(err, sizeof err, "%s needs %d..%d ranks, got %d (mpiexec -n %d %s)", ex->id,
                     ex->min_ranks, ex->max_ranks, ctx.nranks, ex->min_ranks, prog);
        else
            snprintf(err, sizeof err, "%s needs at least %d ranks, got %d (mpiexec -n %d %s)",
                     ex->id, ex->min_ranks, ctx.nranks, ex->min_ranks, prog);
    }
    /* Rank 0 alone writes the JSON: check now that it can, so no rank is left waiting. */
    static char outflag[4096 + 32];
    if (rc == 0 && ctx.opts.out && ctx.rank == 0) {
        FILE *f = fopen(ctx.opts.out, "w");
        if (!f) {
            rc = 2;
            snprintf(err, sizeof err, "--out: cannot write '%s'", ctx.opts.out);
        } else {
            fclose(f);
            snprintf(outflag, sizeof outflag, "--benchmark_out=%s", ctx.opts.out);
            gbv[ngb++] = outflag;
            gbv[ngb++] = "--benchmark_out_format=json";
        }
    }
    nbh_bcast(&rc, 1, MPI_INT, 0, ctx.comm);
    if (rc == 0 && gb_initialize(&ngb, gbv, ctx.rank == 0, err, sizeof err) != 0)
        rc = 2;
    if (rc == 0 && ngb > 1) {
        rc = 2;
        snprintf(err, sizeof err, "unknown Google Benchmark flag '%s' (see --help)", gbv[1]);
    }
    if (rc != 0) {
        if (ctx.rank == 0 && err[0])
            fprintf(stderr, "%s: error: %s\n", prog, err);
        goto out;
    }

    if (ctx.opts.quick)
        apply_quick(&ctx.opts, ex);
    if ((ex->uses & NBH_USE_SIZES) && ctx.opts.nsizes == 0)
        ctx.opts.nsizes =
            nbh_parse_sizes(ex->default_sizes, ctx.opts.sizes, NBH_MAX_SIZES, err, sizeof err);
    nbh_work_calibrate();
    library_name(ctx.mpi_library, sizeof ctx.mpi_library);
    node_layout(&ctx);
    install_crash_handlers();
    add_context(&ctx);
    if (ctx.rank == 0)
        print_header(&ctx);

    for (int s = 0; s < NBH_NSERIES; s++) {
        if (!(ctx.opts.series & (1u << s)))
            continue;
        const char *why = "";
        if (ex->series && !(ex->series & (1u << s))) {
            if (ctx.rank == 0)
                fprintf(stderr, "%s: series %s skipped: %s\n", prog,
                        nbh_series_name((nbh_series_t)s),
                        ex->series_why ? ex->series_why : "the experiment does not have it");
            continue;
        }
        if (!series_available((nbh_series_t)s, &why)) {
            if (ctx.rank == 0)
                fprintf(stderr, "%s: series %s skipped: %s\n", prog,
                        nbh_series_name((nbh_series_t)s), why);
            continue;
        }
        ex->register_cases(&ctx, (nbh_series_t)s);
    }
    gb_run(ctx.rank == 0);
    nbh_allreduce(&g_failed, 1, MPI_INT, MPI_MAX, ctx.comm);
    if (g_failed) {
        rc = 1;
        if (ctx.rank == 0)
            fprintf(stderr, "%s: FAILED: at least one benchmark moved wrong data (see above)\n",
                    prog);
    }
out:
    for (size_t i = 0; i < g_ncases; i++)
        free(g_cases[i]);
    free(g_cases);
    free(ours);
    free(gbv);
    nbh_barrier(ctx.comm);
    MPI_Finalize();
    return rc;
}
