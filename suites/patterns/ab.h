/* ab.h — what the A (inefficiency pattern, paper 000 §III, §IV-C) and B (reorder flag, 000 §VI-B)
 * benchmarks share: a window of `slots` regions of `size` bytes per rank, one patterned put per
 * epoch into a region, each synchronization call in the case's series (vendor and ref: the
 * blocking call; ref-nb: its MPIX_Win_i* twin, whose request the caller completes with
 * nbh_wait_times, i.e. MPI_Test), singleton groups, and validation of every region that received
 * puts once per sample set. docs/experiments-ab.md describes each experiment. */
#ifndef NBH_AB_H
#define NBH_AB_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { AB_MAXRANKS = 8, AB_MAXREGIONS = 8 };

typedef struct {
    nbh_win_t w;
    unsigned char *buf; /* every rank's origin buffer: the case's pattern */
    size_t size;
    int slots;
    unsigned seed;
    MPI_Group g[AB_MAXRANKS]; /* g[r]: the group of rank r alone */
    int nregions;             /* (target, slot) pairs the puts land in, for validation */
    int region_target[AB_MAXREGIONS], region_slot[AB_MAXREGIONS];
} ab_t;

static inline int ab_nb(const nbh_case_t *c)
{
    return c->series == NBH_REF_NB;
}

/* Collective: window, patterned buffer, groups. */
static inline void ab_open(ab_t *a, const nbh_case_t *c, int slots)
{
    memset(a, 0, sizeof *a);
    a->size = c->size;
    a->slots = slots;
    a->seed = nbh_next_seed();
    nbh_win_open(&a->w, c, (MPI_Aint)(a->size * (size_t)slots));
    a->buf = malloc(a->size ? a->size : 1);
    if (!a->buf)
        nbh_mpi_fail(c, "malloc (origin buffer)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    nbh_pattern_fill(a->buf, a->size, a->seed);
    MPI_Group world;
    for (int r = 0; r < AB_MAXRANKS; r++)
        a->g[r] = MPI_GROUP_NULL;
    NBH_MPI(c, MPI_Comm_group(c->ctx->comm, &world));
    for (int r = 0; r < c->ctx->nranks && r < AB_MAXRANKS; r++)
        NBH_MPI(c, MPI_Group_incl(world, 1, &r, &a->g[r]));
    MPI_Group_free(&world);
}

/* With more ranks than cores (3 ranks here on 2 cores), Linux may queue a polling rank behind
 * the late rank's D of busy work on the same core, where sched_yield does not help: the delay
 * then reaches it through the scheduler, not through MPI (B1 at D = 1 ms saw T1 wait D with the
 * flag on). So on an oversubscribed node the late rank gets a core of its own and the others
 * share the remaining ones, as if the late process had its own core. Called at the start of
 * every case (the mask is computed from the one the process started with). --pin-late 0 leaves
 * placement to the OS (AB_PIN_OPT in the experiment's extra options). */
static long ab_pin_opt = 1;
#define AB_PIN_HELP                                                                                \
    "with more ranks than cores, 1: the late rank runs alone on a core, 0: the OS places it"
#define AB_PIN_OPT                                                                                 \
    {                                                                                              \
        "pin-late", AB_PIN_HELP, &ab_pin_opt, 0, 1                                                 \
    }

static inline void ab_pin_late(const nbh_case_t *c, int late)
{
    static cpu_set_t orig;
    static int have = -1;
    if (have < 0)
        have = sched_getaffinity(0, sizeof orig, &orig) == 0;
    if (!have || !c->ctx->oversubscribed || c->ctx->nnodes != 1 || CPU_COUNT(&orig) < 2)
        return;
    if (!ab_pin_opt) {
        sched_setaffinity(0, sizeof orig, &orig);
        return;
    }
    int first = 0;
    while (!CPU_ISSET(first, &orig))
        first++;
    cpu_set_t set;
    if (c->ctx->rank == late) {
        CPU_ZERO(&set);
        CPU_SET(first, &set);
    } else {
        set = orig;
        CPU_CLR(first, &set);
    }
    sched_setaffinity(0, sizeof set, &set);
    static int told;
    if (!told++ && c->ctx->rank == 0)
        fprintf(stderr,
                "# oversubscribed: the late rank %d runs alone on CPU %d, the others share the "
                "%d other CPU%s\n",
                late, first, CPU_COUNT(&orig) - 1, CPU_COUNT(&orig) > 2 ? "s" : "");
}

/* Declare that puts land in `slot` of `target`'s window (checked by ab_verify). */
static inline void ab_expect(ab_t *a, int target, int slot)
{
    a->region_target[a->nregions] = target;
    a->region_slot[a->nregions++] = slot;
}

static inline void ab_put(const nbh_case_t *c, const ab_t *a, int target, int slot)
{
    int n = (int)a->size;
    NBH_MPI(c, MPI_Put(a->buf, n, MPI_BYTE, target,
                       nbh_win_disp(&a->w, target, (MPI_Aint)(a->size * (size_t)slot)), n, MPI_BYTE,
                       a->w.win));
}

/* Collective: zero every rank's window, so validation sees only what came after. */
static inline void ab_reset(const nbh_case_t *c, void *arg)
{
    ab_t *a = arg;
    nbh_win_self_lock(&a->w, c);
    memset(a->w.base, 0, (size_t)a->w.bytes);
    nbh_win_self_unlock(&a->w, c);
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
}

/* Collective: every declared region holds the pattern. */
static inline int ab_verify(gb_state_t *st, const nbh_case_t *c, ab_t *a)
{
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    long bad = -1;
    int slot = -1;
    nbh_win_self_lock(&a->w, c);
    for (int i = 0; i < a->nregions && bad < 0; i++)
        if (a->region_target[i] == c->ctx->rank) {
            slot = a->region_slot[i];
            bad = nbh_pattern_check(a->w.base + a->size * (size_t)slot, a->size, a->seed);
        }
    nbh_win_self_unlock(&a->w, c);
    return nbh_verify(st, c, bad < 0, "byte %ld of the %zu-byte put into slot %d differs", bad,
                      a->size, slot);
}

static inline void ab_close(ab_t *a)
{
    for (int r = 0; r < AB_MAXRANKS; r++)
        if (a->g[r] != MPI_GROUP_NULL)
            MPI_Group_free(&a->g[r]);
    free(a->buf);
    nbh_win_close(&a->w);
}

/* ---- synchronization in the case's series: blocking calls leave *r = MPI_REQUEST_NULL ------ */

static inline void ab_post(const nbh_case_t *c, const ab_t *a, int peer, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_ipost(a->g[peer], 0, a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_post(a->g[peer], 0, a->w.win));
}

static inline void ab_start(const nbh_case_t *c, const ab_t *a, int peer, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_istart(a->g[peer], 0, a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_start(a->g[peer], 0, a->w.win));
}

static inline void ab_complete(const nbh_case_t *c, const ab_t *a, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_icomplete(a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_complete(a->w.win));
}

static inline void ab_wait(const nbh_case_t *c, const ab_t *a, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_iwait(a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_wait(a->w.win));
}

static inline void ab_fence(const nbh_case_t *c, const ab_t *a, int assert, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_ifence(assert, a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_fence(assert, a->w.win));
}

static inline void ab_lock(const nbh_case_t *c, const ab_t *a, int target, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, a->w.win));
}

static inline void ab_unlock(const nbh_case_t *c, const ab_t *a, int target, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (ab_nb(c))
        NBH_MPI(c, MPIX_Win_iunlock(target, a->w.win, r));
    else
        NBH_MPI(c, MPI_Win_unlock(target, a->w.win));
}

/* A rank with nothing to do at time 0 (a passive target): when it got there does not matter, so
 * it does not count in start_skew_us (it is often descheduled then, by the ranks that work). */
static inline void ab_passive(nbh_align_t *al)
{
    al->late = 0;
}

/* Complete n requests (MPI_Test polling); done[i] = completion time of request i. */
static inline void ab_complete_all(const nbh_case_t *c, int n, MPI_Request *r, double *done)
{
    NBH_MPI(c, nbh_wait_times(n, r, done));
}

/* ---- registration --------------------------------------------------------------------------- */

/* §A: one case per size in every series. `what` is e.g. "A4_late_complete", `dname` the name of
 * the --delay-us parameter in the benchmark name ("delay_us" or, where D is work, "work_us"). */
static inline void ab_register_a(nbh_ctx_t *ctx, nbh_series_t s, int op, const char *what,
                                 const char *dname, gb_fn_t fn)
{
    for (int i = 0; i < ctx->opts.nsizes; i++)
        nbh_add_case(ctx, s, op, ctx->opts.sizes[i], fn, "%s/%s/size:%zu/%s:%g", what,
                     nbh_series_name(s), ctx->opts.sizes[i], dname, ctx->opts.delay_us);
}

/* §B: the reorder flag off and on, one case per size; ref-nb only (AB_B_SERIES in the
 * experiment, so the harness says why vendor and ref are skipped). */
#define AB_B_SERIES     (1u << NBH_REF_NB)
#define AB_B_SERIES_WHY "reorder flags exist only with nonblocking synchronization (ref-nb)"

static inline void ab_register_b(nbh_ctx_t *ctx, nbh_series_t s, const char *what, unsigned flag,
                                 gb_fn_t fn)
{
    for (int i = 0; i < ctx->opts.nsizes; i++)
        for (int on = 0; on <= 1; on++) {
            nbh_case_t *c = nbh_add_case(
                ctx, s, on, ctx->opts.sizes[i], fn, "%s/%s/flag:%d/size:%zu/delay_us:%g", what,
                nbh_series_name(s), on, ctx->opts.sizes[i], ctx->opts.delay_us);
            c->flags = on ? flag : 0;
        }
}

#endif
