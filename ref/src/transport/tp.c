/* tp.c — the transports' table and what every remote transport shares: which one serves a pair
 * (NBRMA_NET), progress, and the process-wide start and end. Adding a transport: its file, its
 * table (tp.h's nbr_tp_ops_t), one entry below, and its set-up in nbr_tp_win_setup
 * (docs/ref-internals.md, "The transport seam"). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nbr.h"
#include "transport/tp.h"

const nbr_tp_ops_t *const nbr_tp_table[NBR_NET_N] = {
    [NBR_NET_SHM] = NULL, /* inline in tp.h: load/store, CMA, CPU atomics */
    [NBR_NET_AM] = &nbr_tp_am_ops,
#if NBR_HAVE_UCX
    [NBR_NET_UCX] = &nbr_tp_ucx_ops,
#endif
};

int nbr_tp_on;
unsigned long nbr_tp_served;

#if NBR_HAVE_UCX
void nbr_ucx_progress(void); /* ucx.c */
long nbr_ucx_outstanding(void);
void nbr_ucx_finalize(void);
int nbr_ucx_win_setup(nbr_win_t *w, MPI_Comm comm, int want, char *why, size_t n);
void nbr_ucx_win_teardown(nbr_win_t *w);
int nbr_ucx_attach(nbr_win_t *w, void *base, MPI_Aint size);
void nbr_ucx_detach(nbr_win_t *w, const void *base);
void *nbr_ucx_win_alloc(nbr_win_t *w, size_t size);
void *nbr_ucx_ctl_alloc(size_t size);
void nbr_ucx_ctl_free(void *block);
#endif

void nbr_tp_init(void)
{
    nbr_am_init();
}

void nbr_tp_finalize(void)
{
    nbr_am_finalize();
#if NBR_HAVE_UCX
    nbr_ucx_finalize();
#endif
}

/* A wait inside a call that is issuing operations on w. nbr_wait_step lets the big lock go, and
 * another thread may then issue on w too: the call's request context (rma.c's NBR_R_ENTRY: the
 * R-variant's request its tokens complete; epoch.c's replay_one: the recorded call's) is this
 * thread's. Left in w, the other thread's tokens joined this call's request, and an R-variant of
 * the other thread, returning, cleared it, so this call's later tokens made no request and its
 * MPI_Rget completed at birth, before its data arrived. Put aside for the wait, so the other
 * thread sees a window with no call running, and taken back after. Used by am's and ucx's waits
 * inside calls. */
void nbr_tp_call_wait_step(nbr_win_t *w, long *spins)
{
    int want = w->want_req;
    nbr_req_t *got = w->got_req, *op = w->op_req;
    w->want_req = 0, w->got_req = NULL, w->op_req = NULL;
    nbr_wait_step(spins);
    w->want_req = want, w->got_req = got, w->op_req = op;
}

void nbr_tp_progress(void)
{
    nbr_am_progress();
#if NBR_HAVE_UCX
    if (nbr_ucx_on)
        nbr_ucx_progress();
#endif
}

void nbr_tp_poll_completions(void)
{
#if NBR_HAVE_UCX
    if (nbr_ucx_on)
        nbr_ucx_progress();
#endif
}

long nbr_tp_outstanding(void)
{
#if NBR_HAVE_UCX
    if (nbr_ucx_on)
        return nbr_am_outstanding() + nbr_ucx_outstanding();
#endif
    return nbr_am_outstanding();
}

int nbr_tp_net_select(const char *net, char *why, size_t n)
{
    /* An emulated wire (NBRMA_WIRE_US/_MBPS) exists only in am: auto then means am, so the
     * experiments that ask for one (C2-C5, sched_structure) get it. */
    if (!net || !*net || !strcasecmp(net, "auto"))
        return nbr_cfg.WIRE_US > 0 || nbr_cfg.WIRE_MBPS > 0 ? NBR_NET_AM : NBR_NET_WANT_AUTO;
    if (!strcasecmp(net, "am"))
        return NBR_NET_AM;
    if (!strcasecmp(net, "ucx")) {
#if NBR_HAVE_UCX
        return NBR_NET_UCX;
#else
        snprintf(why, n,
                 "NBRMA_NET=ucx, but this libnbrma was built without UCX (make UCX=0, or no "
                 "libucx-dev): rebuild with UCX, or set NBRMA_NET=am (or auto)");
        return -1;
#endif
    }
    if (!strcasecmp(net, "verbs")) {
        snprintf(why, n,
                 "NBRMA_NET=verbs: libnbrma reaches RDMA devices through UCX now (its own verbs "
                 "data path was retired): set NBRMA_NET=ucx (or auto; UCX_NET_DEVICES picks the "
                 "device)");
        return -1;
    }
    snprintf(why, n, "NBRMA_NET=%s is not a transport: use ucx, am or auto", net);
    return -1;
}

int nbr_tp_win_setup(nbr_win_t *w, MPI_Comm comm, int want, char *why, size_t n)
{
    w->unordered = 0;
#if NBR_HAVE_UCX
    if (want != NBR_NET_AM)
        return nbr_ucx_win_setup(w, comm, want, why, n);
#else
    (void)comm, (void)want, (void)why, (void)n;
#endif
    return MPI_SUCCESS;
}

#if NBR_HAVE_UCX
/* Whether a window's pairs across nodes may go through UCX (NBRMA_NET is not am): then the
 * memory they reach is worth UCX's allocation. */
static int ucx_wanted(void)
{
    char why[8];
    return nbr_tp_net_select(nbr_cfg.NET, why, sizeof why) != NBR_NET_AM;
}
#endif

void *nbr_tp_win_alloc(nbr_win_t *w, size_t size)
{
#if NBR_HAVE_UCX
    if (ucx_wanted())
        return nbr_ucx_win_alloc(w, size);
#endif
    (void)w, (void)size;
    return NULL;
}

void *nbr_tp_ctl_alloc(size_t size)
{
#if NBR_HAVE_UCX
    if (ucx_wanted())
        return nbr_ucx_ctl_alloc(size);
#endif
    (void)size;
    return NULL;
}

void nbr_tp_ctl_free(void *block)
{
#if NBR_HAVE_UCX
    nbr_ucx_ctl_free(block);
#else
    (void)block;
#endif
}

void nbr_tp_win_teardown(nbr_win_t *w)
{
#if NBR_HAVE_UCX
    nbr_ucx_win_teardown(w);
#else
    (void)w;
#endif
}

int nbr_tp_settled(nbr_win_t *w)
{
#if NBR_HAVE_UCX
    int nbr_ucx_settled(nbr_win_t * w);
    return nbr_ucx_settled(w);
#else
    (void)w;
    return 1;
#endif
}

void nbr_tp_flush(nbr_win_t *w, int r)
{
#if NBR_HAVE_UCX
    nbr_tp_ucx_ops.flush(w, r);
#else
    (void)w, (void)r;
#endif
}

long long nbr_tp_region_bytes(const nbr_win_t *w)
{
#if NBR_HAVE_UCX
    if (w->tp)
        return nbr_ucx_region_bytes(w);
#endif
    (void)w;
    return 0;
}

int nbr_tp_attach(nbr_win_t *w, void *base, MPI_Aint size)
{
#if NBR_HAVE_UCX
    if (w->tp)
        return nbr_ucx_attach(w, base, size);
#endif
    (void)w, (void)base, (void)size;
    return MPI_SUCCESS;
}

void nbr_tp_detach(nbr_win_t *w, const void *base)
{
#if NBR_HAVE_UCX
    if (w->tp)
        nbr_ucx_detach(w, base);
#endif
    (void)w, (void)base;
}

#if !NBR_HAVE_UCX
nbr_ucx_stats_t nbr_ucx_stats;
int nbr_ucx_alloc_max = 1024;

void nbr_ucx_describe(void *stream, int verbose)
{
    FILE *f = stream;
    fprintf(f, "UCX: not built in (make UCX=0, or libucx-dev missing): pairs on other nodes use "
               "am\n");
    if (verbose)
        nbr_rdma_devices(f);
}
#endif

#if !NBR_HAVE_UCX
int nbr_ucx_rkey_serve(nbr_win_t *w, uint64_t addr, void *buf, size_t cap, size_t *len,
                       uint64_t *base, uint64_t *size)
{
    (void)w, (void)addr, (void)buf, (void)cap, (void)len, (void)base, (void)size;
    return MPI_ERR_INTERN; /* no origin asks a process without UCX */
}
#endif
