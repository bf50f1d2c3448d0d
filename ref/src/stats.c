/* stats.c — memory accounting (issue 26; paper 004 §III-IV): what libnbrma's RMA machinery holds
 * in this process, per window and in all.
 *
 * Paper 004 compares implementation strategies by the memory each costs per process: window
 * metadata (§III-B), lock queues (§III-C2), operation objects and request objects (§III-D). Every
 * figure here comes from a gauge updated where the memory is allocated and freed — the window
 * object and its per-peer descriptors (win.c), the per-peer engine queues and the control block
 * (epoch.c, win.c), epoch objects, recorded calls and flush objects (epoch.c), requests
 * (request.c) — never from a model. What is read at query time instead is read from the live
 * structures, exactly: the capacities of dynamic windows' region tables, per-transport splits of
 * the per-peer state, and the operations in flight toward other nodes.
 *
 * Gauges are updated under the big lock (nbr_stat), except the requests', which are atomic:
 * requests are freed from whichever thread the MPI library calls the generalized request's free
 * function on. Nothing here runs on the put/get fast path or on the pooled lock/unlock path
 * (epoch objects are counted when malloc'ed, not when recycled). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "transport/tp.h"

nbr_stats_t nbr_st;

static void hwm(long long *mark, long long v)
{
    long long m = __atomic_load_n(mark, __ATOMIC_RELAXED);
    while (v > m && !__atomic_compare_exchange_n(mark, &m, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void nbr_gauge_add(nbr_gauge_t *g, long long count, long long bytes)
{
    long long c = __atomic_add_fetch(&g->count, count, __ATOMIC_RELAXED);
    long long b = __atomic_add_fetch(&g->bytes, bytes, __ATOMIC_RELAXED);
    if (count > 0)
        hwm(&g->count_hwm, c);
    if (bytes > 0)
        hwm(&g->bytes_hwm, b);
}

static void gauge_read(MPIX_Nbrma_gauge *out, const nbr_gauge_t *g)
{
    out->count = __atomic_load_n(&g->count, __ATOMIC_RELAXED);
    out->count_hwm = __atomic_load_n(&g->count_hwm, __ATOMIC_RELAXED);
    out->bytes = __atomic_load_n(&g->bytes, __ATOMIC_RELAXED);
    out->bytes_hwm = __atomic_load_n(&g->bytes_hwm, __ATOMIC_RELAXED);
}

/* The transport index of nbr_target_t.net in the public enumeration. */
static int tp_index(int net)
{
    switch (net) {
    case NBR_NET_SHM:
        return MPIX_NBRMA_TP_SHM;
    case NBR_NET_AM:
        return MPIX_NBRMA_TP_AM;
    case NBR_NET_UCX:
        return MPIX_NBRMA_TP_UCX;
    }
    return MPIX_NBRMA_TP_VERBS; /* no pair uses verbs today (the ucx transport reaches RDMA) */
}

static void proc_part(MPIX_Win_stats *s)
{
    gauge_read(&s->proc_windows, &nbr_st.windows);
    gauge_read(&s->proc_epochs, &nbr_st.epochs);
    gauge_read(&s->proc_ops, &nbr_st.ops);
    gauge_read(&s->proc_flushes, &nbr_st.flushes);
    gauge_read(&s->proc_requests, &nbr_st.requests);
    gauge_read(&s->proc_ops_pooled, &nbr_st.ops_pooled);
}

static void win_part(nbr_win_t *w, MPIX_Win_stats *s)
{
    s->ranks = w->size;
    /* A lazy window's pairs are all on this node; its descriptors are the ones made so far, and
     * their memory the pages of its reservation that they backed (nbr.h). */
    const nbr_lazy_t *z = w->lazy;
    if (z) {
        s->peers[MPIX_NBRMA_TP_SHM] = w->size;
        s->peer_bytes[MPIX_NBRMA_TP_SHM] = z->pages * (long long)z->page;
    }
    const nbr_target_t *t;
    for (int it = 0; (t = nbr_tgt_next(w, &it));) {
        int k = tp_index(t->net);
        s->peers[k] += !z;
        s->peer_bytes[k] += (z ? 0 : (long long)sizeof *t) + (t->q ? (long long)sizeof *t->q : 0);
        s->region_bytes += (long long)t->rcache_cap * (long long)sizeof *t->rcache;
    }
    s->region_bytes += nbr_tp_region_bytes(w) + (long long)w->rcap * (long long)sizeof *w->regs +
                       (long long)w->zcap * (long long)sizeof *w->zregs;
    gauge_read(&s->meta, &w->st_meta);
    s->ctl_bytes = (long long)w->ctl_size;
    /* The two-level lock of 001 §2.3: this rank's local lock word (with the queued lock's tail
     * beside it) and (rank 0) the global word, each on its own cache line. The polling lock has
     * no queue; the queued one (NBRMA_LOCK=queued, lock.c) one node per target and one for the
     * global word's queue in this rank's control block, there for the window's life. */
    s->lock_word_bytes = (long long)(w->rank == 0 ? 2 : 1) * NBR_CACHELINE;
    long long qn = w->lock_q ? (long long)w->size + 1 : 0;
    long long qb = qn * (long long)sizeof(nbr_qnode_t);
    s->lock_queue = (MPIX_Nbrma_gauge){qn, qn, qb, qb};
    gauge_read(&s->epochs, &w->st_epochs);
    gauge_read(&s->ops, &w->st_ops);
    gauge_read(&s->flushes, &w->st_flushes);
    s->ops_in_flight = w->tp_out;
}

/* The bytes of the struct a caller of `version` holds: version 1 ended before proc_ops_pooled. */
static size_t stats_size(int version)
{
    return version == 1 ? offsetof(MPIX_Win_stats, proc_ops_pooled) : sizeof(MPIX_Win_stats);
}

NBR_API int MPIX_Win_get_stats(MPI_Win win, MPIX_Win_stats *stats)
{
    if (!stats)
        return MPI_ERR_ARG;
    if (stats->version < 1 || stats->version > MPIX_WIN_STATS_VERSION) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "MPIX_Win_get_stats: stats->version is %d; this libnbrma fills versions 1 to %d "
                 "(set it to MPIX_WIN_STATS_VERSION)",
                 stats->version, MPIX_WIN_STATS_VERSION);
        if (nbr_cfg.VERBOSE)
            fprintf(stderr, "libnbrma: %s\n", msg);
        return MPI_ERR_ARG;
    }
    /* Filled whole here and copied out at the caller's size: an older caller's struct is shorter,
     * and nothing past its end is written. */
    MPIX_Win_stats s = {.version = stats->version};
    nbr_win_t *w = NULL;
    if (win != MPI_WIN_NULL && !(w = nbr_win_find(win)))
        return nbr_err_vendor_win(win, "MPIX_Win_get_stats", MPI_ERR_WIN,
                                  "the window is served by the vendor MPI library, which keeps "
                                  "no such counters");
    NBR_ENTER();
    if (w)
        win_part(w, &s);
    proc_part(&s);
    NBR_LEAVE();
    memcpy(stats, &s, stats_size(s.version));
    return MPI_SUCCESS;
}

/* ---- NBRMA_STATS: the process part as JSON at MPI_Finalize ----------------------------------- */

static void json_gauge(FILE *f, const char *name, const nbr_gauge_t *g, int last)
{
    MPIX_Nbrma_gauge v;
    gauge_read(&v, g);
    fprintf(f,
            "  \"%s\": {\"count\": %lld, \"count_hwm\": %lld, \"bytes\": %lld, "
            "\"bytes_hwm\": %lld}%s\n",
            name, v.count, v.count_hwm, v.bytes, v.bytes_hwm, last ? "" : ",");
}

/* The path for this process: %r becomes the world rank; without %r, ".RANK" is appended when the
 * job has several processes (they would otherwise write one file). */
static int stats_path(char *out, size_t len, const char *pat, int rank, int size)
{
    size_t o = 0;
    int had_r = 0;
    for (const char *p = pat; *p; p++) {
        int n;
        if (p[0] == '%' && p[1] == 'r') {
            n = snprintf(out + o, len - o, "%d", rank);
            had_r = 1;
            p++;
        } else {
            n = snprintf(out + o, len - o, "%c", *p);
        }
        if (n < 0 || (size_t)n >= len - o)
            return 0;
        o += (size_t)n;
    }
    if (!had_r && size > 1) {
        int n = snprintf(out + o, len - o, ".%d", rank);
        if (n < 0 || (size_t)n >= len - o)
            return 0;
    }
    return 1;
}

int nbr_stats_finalize(void)
{
    nbr_settings_load();
    if (!nbr_cfg.STATS || !*nbr_cfg.STATS)
        return MPI_SUCCESS;
    int rank = 0, size = 1;
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        PMPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS)
        rank = 0, size = 1;
    char path[4096];
    if (!stats_path(path, sizeof path, nbr_cfg.STATS, rank, size)) {
        fprintf(stderr, "libnbrma: NBRMA_STATS='%.200s': the path is too long\n", nbr_cfg.STATS);
        return MPI_ERR_FILE;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "libnbrma: NBRMA_STATS: cannot write '%s': %s\n", path, strerror(errno));
        return MPI_ERR_FILE;
    }
    fprintf(f, "{\n  \"version\": %d,\n  \"rank\": %d,\n  \"size\": %d,\n", MPIX_WIN_STATS_VERSION,
            rank, size);
    fprintf(f, "  \"issue\": \"%s\",\n", nbr_cfg.ISSUE);
    json_gauge(f, "windows", &nbr_st.windows, 0);
    json_gauge(f, "epochs", &nbr_st.epochs, 0);
    json_gauge(f, "ops", &nbr_st.ops, 0);
    json_gauge(f, "flushes", &nbr_st.flushes, 0);
    json_gauge(f, "requests", &nbr_st.requests, 0);
    json_gauge(f, "ops_pooled", &nbr_st.ops_pooled, 1);
    fprintf(f, "}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "libnbrma: NBRMA_STATS: cannot write '%s': %s\n", path, strerror(errno));
        return MPI_ERR_FILE;
    }
    return MPI_SUCCESS;
}
