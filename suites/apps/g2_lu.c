/* g2_lu.c — G2: LU decomposition with one-sided row broadcasts (paper 000 §VIII-B, Fig. 13).
 *
 * An --m x --m matrix (diagonally dominant, so no pivoting is needed), rows distributed 1-D
 * cyclically (row i on rank i mod p). At step k the owner of row k — final by then — puts its
 * columns k..m-1 into a pivot buffer (two slots, alternating) of each of the other p-1 ranks,
 * which then eliminate column k from their rows below k. sync:gats — the owner's access epoch is
 * MPI_Win_start/complete on the others, theirs an exposure epoch MPI_Win_post/wait on the owner;
 * sync:fence — one MPI_Win_fence epoch per step on everyone.
 * vendor and ref: blocking calls, so the owner's complete waits for every target to post
 * (000's Late Post / Late Complete). ref-nb: MPIX_Win_istart/icomplete and ipost/iwait (or
 * ifence): the owner goes on with its own elimination while its epoch completes, and a target
 * exposes the next step's slot before eliminating this step — the two overlaps of 000 §VIII-B.
 * Measured: lu_us (the factorization, max over ranks), mpi_us (time inside MPI calls, max over
 * ranks), mpi_share = mpi_us / lu_us. Verified: ||A - LU||_F / ||A||_F below 1e-12 x m, computed
 * on rank 0 from the gathered factors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"

enum { SYNC_GATS, SYNC_FENCE };

static long m_size = 256;

typedef struct {
    const nbh_case_t *c;
    nbh_win_t w; /* two pivot-row slots of m doubles */
    double *a;   /* local rows, m each: global row me + i*p */
    long nl;
    MPI_Group *one;    /* per rank: the group {rank} */
    MPI_Group *others; /* per rank: every rank but it */
    MPI_Request *oreq; /* ref-nb: per step, the owner's close (icomplete / ifence) */
    MPI_Request *sreq; /* ref-nb, gats: per step, the owner's istart */
    double mpi;        /* seconds inside MPI this sample */
} g2_t;

static double a_orig(uint64_t seed, long i, long j, long m)
{
    nba_rng_t r;
    nba_rng_init(&r, seed ^ ((uint64_t)i * 0x100000001b3ull), (int)(j & 0x7fffffff));
    return (double)(nba_rng_next(&r) >> 11) * 0x1p-53 + (i == j ? (double)m : 0.0);
}

static double *slot(const g2_t *g, long k)
{
    return (double *)g->w.base + (size_t)(k & 1) * (size_t)m_size;
}

#define TIMED(g, call)                                                                             \
    do {                                                                                           \
        double t_ = MPI_Wtime();                                                                   \
        NBH_MPI((g)->c, call);                                                                     \
        (g)->mpi += MPI_Wtime() - t_;                                                              \
    } while (0)

/* A target's exposure for step k (gats): post to the owner; ref-nb returns a request. */
static void expose(g2_t *g, long k, MPI_Request *r)
{
    const int p = g->c->ctx->nranks;
    *r = MPI_REQUEST_NULL;
    MPI_Request post = MPI_REQUEST_NULL;
    if (g->c->series == NBH_REF_NB) {
        TIMED(g, MPIX_Win_ipost(g->one[k % p], 0, g->w.win, &post));
        TIMED(g, MPIX_Win_iwait(g->w.win, r));
        TIMED(g, nbh_wait(&post));
    } else {
        TIMED(g, MPI_Win_post(g->one[k % p], 0, g->w.win));
    }
}

static void send_row(g2_t *g, long k, const double *row)
{
    const int p = g->c->ctx->nranks, me = g->c->ctx->rank;
    const int len = (int)(m_size - k);
    for (int d = 0; d < p; d++)
        if (d != me)
            TIMED(g, MPI_Put(row + k, len, MPI_DOUBLE, d,
                             nbh_win_disp(&g->w, d, (MPI_Aint)(((k & 1) * m_size + k) * 8)), len,
                             MPI_DOUBLE, g->w.win));
}

static void factor(g2_t *g)
{
    const nbh_case_t *c = g->c;
    const int p = c->ctx->nranks, me = c->ctx->rank, nb = c->series == NBH_REF_NB;
    const long m = m_size;
    MPI_Request exp_req = MPI_REQUEST_NULL; /* gats target: the exposure of the next step */
    if (c->op == SYNC_FENCE)
        TIMED(g, nb ? MPIX_Win_ifence(MPI_MODE_NOPRECEDE, g->w.win, &g->oreq[0])
                    : MPI_Win_fence(MPI_MODE_NOPRECEDE, g->w.win));
    else if (me != 0)
        expose(g, 0, &exp_req);
    for (long k = 0; k < m; k++) {
        const int owner = (int)(k % p);
        const double *piv;
        if (c->op == SYNC_FENCE) {
            if (nb)
                TIMED(g, nbh_wait(&g->oreq[k])); /* the previous fence: slot k&1 is free */
            if (me == owner)
                send_row(g, k, &g->a[(size_t)(k / p) * (size_t)m]);
            if (nb)
                TIMED(g, MPIX_Win_ifence(0, g->w.win, &g->oreq[k + 1]));
            else
                TIMED(g, MPI_Win_fence(0, g->w.win));
            if (me != owner) {
                if (nb)
                    TIMED(g, nbh_wait(&g->oreq[k + 1]));
                piv = slot(g, k);
            } else {
                piv = &g->a[(size_t)(k / p) * (size_t)m];
            }
        } else if (me == owner) {
            piv = &g->a[(size_t)(k / p) * (size_t)m];
            if (nb) {
                /* Neither request is waited for here: the epoch completes while we eliminate. */
                TIMED(g, MPIX_Win_istart(g->others[owner], 0, g->w.win, &g->sreq[k]));
                send_row(g, k, piv);
                TIMED(g, MPIX_Win_icomplete(g->w.win, &g->oreq[k]));
            } else {
                TIMED(g, MPI_Win_start(g->others[owner], 0, g->w.win));
                send_row(g, k, piv);
                TIMED(g, MPI_Win_complete(g->w.win));
            }
        } else {
            if (nb)
                TIMED(g, nbh_wait(&exp_req));
            else
                TIMED(g, MPI_Win_wait(g->w.win));
            piv = slot(g, k);
        }
        /* Gats: expose the other slot for step k+1 before eliminating (ref-nb overlaps it). */
        if (c->op == SYNC_GATS && k + 1 < m && me != (int)((k + 1) % p))
            expose(g, k + 1, &exp_req);
        /* Eliminate column k from the local rows below k. */
        for (long li = 0; li < g->nl; li++) {
            long i = me + li * p;
            if (i <= k)
                continue;
            double *row = &g->a[(size_t)li * (size_t)m];
            double l = row[k] / piv[k];
            row[k] = l;
            for (long j = k + 1; j < m; j++)
                row[j] -= l * piv[j];
        }
    }
    if (c->op == SYNC_FENCE) {
        if (nb)
            TIMED(g, nbh_wait(&g->oreq[m]));
        TIMED(g, nb ? MPIX_Win_ifence(MPI_MODE_NOSUCCEED, g->w.win, &g->oreq[0])
                    : MPI_Win_fence(MPI_MODE_NOSUCCEED, g->w.win));
        if (nb)
            TIMED(g, nbh_wait(&g->oreq[0]));
    } else if (nb) {
        for (long k = me; k < m; k += p) {
            TIMED(g, nbh_wait(&g->sreq[k]));
            TIMED(g, nbh_wait(&g->oreq[k]));
        }
    }
}

/* Rank 0: ||A - LU||_F / ||A||_F from the gathered factors (L unit lower, U upper, in place). */
static double residual(const double *lu, long m, uint64_t seed)
{
    double num = 0, den = 0;
    for (long i = 0; i < m; i++)
        for (long j = 0; j < m; j++) {
            double s = 0;
            long kmax = i < j ? i : j;
            for (long k = 0; k < kmax; k++)
                s += lu[i * m + k] * lu[k * m + j];
            s += i <= j ? lu[i * m + j] : lu[i * m + j] * lu[j * m + j];
            double a = a_orig(seed, i, j, m);
            num += (a - s) * (a - s);
            den += a * a;
        }
    return sqrt(num / den);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int p = c->ctx->nranks, me = c->ctx->rank;
    const long m = m_size;
    g2_t g = {.c = c, .nl = (m - me + p - 1) / p};
    const uint64_t seed = nba_case_seed();
    nbh_win_open(&g.w, c, (MPI_Aint)m * 16);
    g.a = malloc((size_t)(g.nl ? g.nl : 1) * (size_t)m * sizeof *g.a);
    g.one = malloc((size_t)p * sizeof *g.one);
    g.others = malloc((size_t)p * sizeof *g.others);
    g.oreq = malloc((size_t)(m + 1) * sizeof *g.oreq);
    g.sreq = malloc((size_t)(m + 1) * sizeof *g.sreq);
    if (!g.a || !g.one || !g.others || !g.oreq || !g.sreq)
        nbh_mpi_fail(c, "malloc (G2 state)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    for (long k = 0; k <= m; k++)
        g.oreq[k] = g.sreq[k] = MPI_REQUEST_NULL;
    MPI_Group world;
    NBH_MPI(c, MPI_Comm_group(c->ctx->comm, &world));
    for (int r = 0; r < p; r++) {
        NBH_MPI(c, MPI_Group_incl(world, 1, &r, &g.one[r]));
        NBH_MPI(c, MPI_Group_excl(world, 1, &r, &g.others[r]));
    }
    MPI_Group_free(&world);

    static const char *const q[] = {"lu", "mpi"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 2, q);
    double worst = 0;
    for (int warm = c->ctx->opts.warmup > 0 ? 1 : 0; warm || gb_keep_running(st); warm = 0) {
        for (long li = 0; li < g.nl; li++)
            for (long j = 0; j < m; j++)
                g.a[li * m + j] = a_orig(seed, me + li * p, j, m);
        g.mpi = 0;
        NBH_MPI(c, nbh_barrier(c->ctx->comm));
        double t0 = MPI_Wtime();
        factor(&g);
        double t[2] = {MPI_Wtime() - t0, g.mpi};
        if (!warm)
            nbh_rec_sample(&rec, st, t);
    }
    /* Verify the last factorization: gather the rows to rank 0, in global order. */
    if (nba_corrupt && me == 0 && g.nl > 0) {
        nba_corrupt_note(c, "one element of rank 0's factors (+1)");
        g.a[m / 2] += 1.0;
    }
    double *all = NULL;
    int *counts = NULL, *displs = NULL;
    if (me == 0) {
        all = malloc((size_t)m * (size_t)m * sizeof *all);
        counts = malloc((size_t)p * sizeof *counts);
        displs = malloc((size_t)p * sizeof *displs);
        if (!all || !counts || !displs)
            nbh_mpi_fail(c, "malloc (G2 gather)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
        for (int r = 0, off = 0; r < p; r++) {
            counts[r] = (int)(((m - r + p - 1) / p) * m);
            displs[r] = off;
            off += counts[r];
        }
    }
    MPI_Request r;
    NBH_MPI(c, MPI_Igatherv(g.a, (int)(g.nl * m), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0,
                            c->ctx->comm, &r));
    NBH_MPI(c, nbh_wait(&r));
    if (me == 0) { /* rank-major -> row-major: row i is local row i/p of rank i%p */
        double *lu = malloc((size_t)m * (size_t)m * sizeof *lu);
        if (!lu)
            nbh_mpi_fail(c, "malloc (G2 gather)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
        for (long i = 0; i < m; i++)
            memcpy(&lu[i * m], &all[displs[i % p] + (i / p) * m], (size_t)m * sizeof *lu);
        worst = residual(lu, m, seed);
        free(lu);
    }
    NBH_MPI(c, nbh_bcast(&worst, 1, MPI_DOUBLE, 0, c->ctx->comm));
    const double bound = 1e-12 * (double)m;
    if (nbh_verify(st, c, worst < bound, "||A - LU|| / ||A|| = %.3g, bound %.3g", worst, bound)) {
        nbh_rec_report(&rec, st);
        double lu = nbh_rec_median(&rec, 0);
        if (lu > 0)
            gb_set_counter(st, "mpi_share", nbh_rec_median(&rec, 1) / lu);
        gb_set_counter(st, "residual", worst);
    }
    nbh_rec_free(&rec);
    free(all), free(counts), free(displs);
    for (int i = 0; i < p; i++) {
        MPI_Group_free(&g.one[i]);
        MPI_Group_free(&g.others[i]);
    }
    free(g.one), free(g.others), free(g.oreq), free(g.sreq), free(g.a);
    nbh_win_close(&g.w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    const char *sn = nbh_series_name(s);
    nbh_add_case(ctx, s, SYNC_GATS, (size_t)m_size, run, "G2_lu/%s/sync:gats/procs:%d/m:%ld", sn,
                 ctx->nranks, m_size);
    nbh_add_case(ctx, s, SYNC_FENCE, (size_t)m_size, run, "G2_lu/%s/sync:fence/procs:%d/m:%ld", sn,
                 ctx->nranks, m_size);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"m", "matrix order (default 256)", &m_size, 2, 1L << 15},
        NBA_COMMON_OPTS,
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "G2",
        .title = "LU decomposition, pivot rows broadcast one-sidedly (paper 000 §VIII-B)",
        .header =
            "--m x --m, rows 1-D cyclic; step k: the owner of row k puts it to the other p-1\n"
            "  ranks (sync:gats start/complete vs post/wait, or sync:fence), all eliminate\n"
            "ref-nb: istart/icomplete, ipost/iwait (ifence): the owner eliminates while its epoch\n"
            "  completes, targets expose the next step before eliminating\n"
            "measured: lu_us, mpi_us (inside MPI), mpi_share; verified: ||A-LU||/||A|| small\n"
            "paper 000 saw: ref-nb up to 50 % faster than blocking (64-128 processes)",
        .min_ranks = 2,
        .uses = NBH_USE_WINDOW,
        .default_iters = 5,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
