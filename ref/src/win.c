/* win.c — window objects: creation of the four flavors, attach/detach, free, and the calls that
 * report a window's properties. The handle given to the application is a vendor window (see
 * nbr.h); ref state is found from it through a small hash table with a one-entry cache.
 *
 * Memory: MPI_Win_allocate and MPI_Win_allocate_shared take node-shared memory from the vendor's
 * MPI_Win_allocate_shared, so every rank of the node loads and stores its peers' segments
 * directly; MPI_Win_create and dynamic windows expose private memory that peers reach with CMA
 * (process_vm_readv/writev). Windows whose group spans nodes are refused: the inter-node
 * transports are not part of the shared-memory reference. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <strings.h>

#include "nbr.h"
#include "nbrma.h"

int nbr_impl_ref = 1;
int nbr_nwins;
MPI_Win nbr_win_last_handle;
nbr_win_t *nbr_win_last;

/* ---- registry: open addressing on the handle's bits ----------------------------------------- */

static nbr_win_t **table;
static size_t table_cap;

static size_t slot_of(MPI_Win win)
{
    return (size_t)nbr_handle_hash(&win, sizeof win) & (table_cap - 1);
}

nbr_win_t *nbr_win_lookup_slow(MPI_Win win)
{
    if (!nbr_nwins || win == MPI_WIN_NULL)
        return NULL;
    for (size_t i = slot_of(win);; i = (i + 1) & (table_cap - 1)) {
        if (!table[i])
            return NULL;
        if (table[i]->handle == win) {
            nbr_win_last_handle = win;
            nbr_win_last = table[i];
            return table[i];
        }
    }
}

static int registry_add(nbr_win_t *w)
{
    if ((size_t)(nbr_nwins + 1) * 2 > table_cap) {
        size_t old_cap = table_cap;
        nbr_win_t **old = table;
        table_cap = table_cap ? table_cap * 2 : 16;
        table = calloc(table_cap, sizeof *table);
        if (!table) {
            table = old;
            table_cap = old_cap;
            return MPI_ERR_NO_MEM;
        }
        for (size_t i = 0; i < old_cap; i++)
            if (old[i]) {
                size_t j = slot_of(old[i]->handle);
                while (table[j])
                    j = (j + 1) & (table_cap - 1);
                table[j] = old[i];
            }
        free(old);
    }
    size_t j = slot_of(w->handle);
    while (table[j])
        j = (j + 1) & (table_cap - 1);
    table[j] = w;
    nbr_nwins++;
    return MPI_SUCCESS;
}

static void registry_remove(nbr_win_t *w)
{
    size_t i = slot_of(w->handle);
    while (table[i] != w)
        i = (i + 1) & (table_cap - 1);
    table[i] = NULL;
    /* Re-insert the rest of the cluster so lookups never stop early. */
    for (size_t j = (i + 1) & (table_cap - 1); table[j]; j = (j + 1) & (table_cap - 1)) {
        nbr_win_t *x = table[j];
        table[j] = NULL;
        size_t k = slot_of(x->handle);
        while (table[k])
            k = (k + 1) & (table_cap - 1);
        table[k] = x;
    }
    nbr_nwins--;
    nbr_win_last = NULL;
    nbr_win_last_handle = MPI_WIN_NULL;
}

/* ---- creation -------------------------------------------------------------------------------- */

static void lib_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    nbr_settings_load();
#ifdef PR_SET_PTRACER
    /* Let peers of the node read/write our private window memory with CMA even under Yama. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    if (nbr_cfg.ASYNC_PROGRESS)
        nbr_progress_start();
}

/* ---- reorder flags (paper 000 §VI-B): window info keys --------------------------------------- */

static const struct {
    const char *key, *short_key; /* Open MPI holds keys of at most 35 characters */
    unsigned bit;
} flag_keys[] = {
    {MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER, MPIX_A_A_A_R, NBR_AAAR},
    {MPIX_WIN_ACCESS_AFTER_EXPOSURE_REORDER, MPIX_A_A_E_R, NBR_AAER},
    {MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER, MPIX_E_A_E_R, NBR_EAER},
    {MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER, MPIX_E_A_A_R, NBR_EAAR},
};
#define NBR_NFLAGS (int)(sizeof flag_keys / sizeof flag_keys[0])

/* Apply the reorder keys `info` holds to *flags (keys compare without regard to case). A value
 * other than 1/0/true/false is refused: *bad names the key. */
static int parse_flags(MPI_Info info, unsigned *flags, const char **bad, char *val, int vlen)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < NBR_NFLAGS; i++) {
        int n, found = 0;
        if (PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
            return MPI_ERR_INFO;
        for (int k = 0; k < n && !found; k++) {
            char key[MPI_MAX_INFO_KEY + 1];
            if (PMPI_Info_get_nthkey(info, k, key) != MPI_SUCCESS ||
                (strcasecmp(key, flag_keys[i].key) && strcasecmp(key, flag_keys[i].short_key)))
                continue;
            PMPI_Info_get(info, key, vlen - 1, val, &found);
        }
        if (!found)
            continue;
        if (!strcmp(val, "1") || !strcasecmp(val, "true")) {
            *flags |= flag_keys[i].bit;
        } else if (!strcmp(val, "0") || !strcasecmp(val, "false")) {
            *flags &= ~flag_keys[i].bit;
        } else {
            *bad = flag_keys[i].key;
            return MPI_ERR_INFO_VALUE;
        }
    }
    return MPI_SUCCESS;
}

/* How long waits spin before yielding: a peer we wait for needs our core only when the node has
 * more ranks than cores; otherwise yielding early just adds system calls to every wait (a 2-rank
 * fence under Open MPI took 3.9 us instead of 0.6). Cores = the union of the node's ranks'
 * affinity masks (a launcher that binds each rank to one core still gives the job all of them). */
static void choose_spin(MPI_Comm node, int nranks)
{
    if (nbr_cfg.SPIN > 0) {
        nbr_spin = nbr_cfg.SPIN;
        return;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return; /* keep the safe default */
    MPI_Request r;
    if (PMPI_Iallreduce(MPI_IN_PLACE, &set, (int)sizeof set, MPI_BYTE, MPI_BOR, node, &r) !=
            MPI_SUCCESS ||
        nbr_wait_req(&r) != MPI_SUCCESS)
        return;
    static int oversubscribed;
    oversubscribed |= nranks > CPU_COUNT(&set); /* one crowded node keeps early yields */
    nbr_spin = oversubscribed ? 100 : 20000;
}

/* Ref serves the window only when asked to and when its group lives on one node. */
static int serve_with_ref(MPI_Comm comm, const char *call, int *rc)
{
    lib_init();
    *rc = MPI_SUCCESS;
    if (!nbr_impl_ref)
        return 0;
    MPI_Comm node;
    int n, nn;
    PMPI_Comm_size(comm, &n);
    if (nbr_cfg.RANKS_PER_NODE > 0) { /* virtual nodes of consecutive world ranks */
        int wr;
        PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
        PMPI_Comm_split(comm, (int)(wr / nbr_cfg.RANKS_PER_NODE), 0, &node);
    } else {
        PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    }
    PMPI_Comm_size(node, &nn);
    choose_spin(node, nn);
    PMPI_Comm_free(&node);
    if (nn != n)
        *rc = nbr_err_comm(comm, call, MPI_ERR_UNSUPPORTED_OPERATION,
                           "the window's group spans nodes (%d of %d ranks share this node); the "
                           "reference serves shared-memory windows only: set NBRMA_IMPL=vendor to "
                           "forward such windows to the MPI library",
                           nn, n);
    return 1;
}

typedef struct {
    MPI_Aint addr, size;
    int disp_unit;
    int pid;
} nbr_peer_info_t;

/* Everything after the vendor handle exists: control block, peers' descriptors, registration. */
static int win_setup(nbr_win_t *w, MPI_Comm comm, MPI_Win data_win)
{
    int rc;
    PMPI_Comm_dup(comm, &w->comm);
    PMPI_Comm_rank(comm, &w->rank);
    PMPI_Comm_size(comm, &w->size);
    w->max_attach = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (int)nbr_cfg.MAX_ATTACH : 0;
    size_t ctl_bytes = (sizeof(nbr_ctl_t) + (size_t)w->max_attach * sizeof(nbr_region_t) +
                        (size_t)w->size * sizeof(nbr_peer_ctr_t) + NBR_CACHELINE - 1) &
                       ~(size_t)(NBR_CACHELINE - 1);
    void *ctl_base;
    rc = PMPI_Win_allocate_shared((MPI_Aint)ctl_bytes, 1, MPI_INFO_NULL, w->comm, &ctl_base,
                                  &w->ctl_win);
    if (rc != MPI_SUCCESS)
        return rc;
    memset(ctl_base, 0, ctl_bytes);
    w->ctl = ctl_base;
    w->t = calloc((size_t)w->size, sizeof *w->t);
    nbr_peer_info_t *info = calloc((size_t)w->size, sizeof *info);
    if (!w->t || !info) {
        free(info);
        return MPI_ERR_NO_MEM;
    }
    nbr_peer_info_t mine = {(MPI_Aint)(uintptr_t)w->base, w->bytes, w->disp_unit, (int)getpid()};
    MPI_Request req;
    rc = PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, info, (int)sizeof mine, MPI_BYTE,
                         w->comm, &req);
    if (rc == MPI_SUCCESS)
        rc = nbr_wait_req(&req);
    for (int r = 0; rc == MPI_SUCCESS && r < w->size; r++) {
        nbr_target_t *t = &w->t[r];
        MPI_Aint sz;
        int du;
        void *p;
        rc = PMPI_Win_shared_query(w->ctl_win, r, &sz, &du, &p);
        t->ctl = p;
        t->regions = (nbr_region_t *)(t->ctl + 1);
        t->peer = (nbr_peer_ctr_t *)(t->regions + w->max_attach);
        t->addr = info[r].addr;
        t->size = info[r].size;
        t->disp_unit = info[r].disp_unit;
        t->pid = info[r].pid;
        if (rc == MPI_SUCCESS && data_win != MPI_WIN_NULL) {
            rc = PMPI_Win_shared_query(data_win, r, &sz, &du, &p);
            t->base = sz > 0 ? p : NULL;
        } else if (r == w->rank) {
            t->base = w->base; /* my own memory: no CMA needed */
        }
    }
    free(info);
    if (rc == MPI_SUCCESS)
        rc = registry_add(w);
    if (rc == MPI_SUCCESS)
        rc = nbr_barrier(w->comm); /* everyone's control block is zeroed before first use */
    if (rc == MPI_SUCCESS && nbr_cfg.VERBOSE && w->rank == 0)
        fprintf(stderr, "libnbrma: window of %d ranks served by ref (flavor %d)\n", w->size,
                w->flavor);
    return rc;
}

static void win_destroy(nbr_win_t *w)
{
    nbr_sym_free(w->sym, w->sym_total);
    if (w->ctl_win != MPI_WIN_NULL)
        PMPI_Win_free(&w->ctl_win);
    if (w->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&w->comm);
    free(w->t);
    while (w->q_head) /* only fence epochs that carried nothing remain at free */
        nbr_epoch_finish(w, w->q_head);
    nbr_epoch_pool_free(w);
    free(w);
}

static nbr_win_t *win_new(int flavor, MPI_Aint size, int disp_unit)
{
    nbr_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->flavor = flavor;
    w->bytes = size;
    w->disp_unit = disp_unit;
    w->ctl_win = MPI_WIN_NULL;
    w->comm = MPI_COMM_NULL;
    w->handle = MPI_WIN_NULL;
    w->q_tail = &w->q_head;
    return w;
}

static int check_args(MPI_Comm comm, const char *call, MPI_Aint size, int disp_unit, MPI_Info info,
                      unsigned *flags)
{
    const char *bad = NULL;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    *flags = 0;
    if (parse_flags(info, flags, &bad, val, (int)sizeof val) != MPI_SUCCESS)
        return nbr_err_comm(comm, call, MPI_ERR_INFO_VALUE,
                            "info key %s has value \"%s\"; use 1 or 0 (true or false)",
                            bad ? bad : "(unreadable)", val);
    if (size < 0)
        return nbr_err_comm(comm, call, MPI_ERR_SIZE, "size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return nbr_err_comm(comm, call, MPI_ERR_DISP, "disp_unit %d is not positive", disp_unit);
    return MPI_SUCCESS;
}

/* Symmetric allocation (symheap.c) when every rank asks for the same size and disp_unit. Returns
 * 1 with the window's handle and memory set, 0 to use separate segments, -1 on error (rc). */
static int try_symmetric(nbr_win_t *w, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                         int *rc)
{
    long v[4] = {(long)size, -(long)size, disp_unit, -(long)disp_unit};
    MPI_Request r;
    *rc = MPI_SUCCESS;
    if (!nbr_cfg.SYMMETRIC ||
        PMPI_Iallreduce(MPI_IN_PLACE, v, 4, MPI_LONG, MPI_MAX, comm, &r) != MPI_SUCCESS ||
        nbr_wait_req(&r) != MPI_SUCCESS || v[0] != -v[1] || v[2] != -v[3] || v[0] == 0)
        return 0;
    int n, me;
    PMPI_Comm_size(comm, &n);
    PMPI_Comm_rank(comm, &me);
    size_t align = size >= 4096 ? 4096 : NBR_CACHELINE;
    w->sym_stride = ((size_t)size + align - 1) & ~(align - 1);
    w->sym_total = (w->sym_stride * (size_t)n + 4095) & ~(size_t)4095;
    w->sym = nbr_sym_alloc(comm, w->sym_total);
    if (!w->sym) {
        if (nbr_cfg.VERBOSE && me == 0)
            fprintf(stderr,
                    "libnbrma: no common address for a symmetric window of %zu bytes; "
                    "separate segments\n",
                    w->sym_total);
        return 0;
    }
    w->base = (char *)w->sym + (size_t)me * w->sym_stride;
    /* The handle: a vendor shared window of no memory (Open MPI 4.1 refuses dynamic windows in
     * some settings, e.g. singletons; every MPI has node-shared windows). */
    void *none;
    if ((*rc = PMPI_Win_allocate_shared(0, 1, info, comm, &none, &w->handle)) != MPI_SUCCESS)
        return -1;
    if ((*rc = win_setup(w, comm, MPI_WIN_NULL)) != MPI_SUCCESS) {
        PMPI_Win_free(&w->handle);
        return -1;
    }
    for (int q = 0; q < w->size; q++)
        w->t[q].base = (unsigned char *)w->sym + (size_t)q * w->sym_stride;
    return 1;
}

/* Allocated and shared windows: node-shared memory, symmetric (allocate, equal sizes) or from
 * the vendor's MPI_Win_allocate_shared. */
static int create_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                         MPI_Win *win, int flavor, const char *call)
{
    int rc;
    unsigned flags;
    if ((rc = check_args(comm, call, size, disp_unit, info, &flags)) != MPI_SUCCESS)
        return rc;
    nbr_win_t *w = win_new(flavor, size, disp_unit);
    if (!w)
        return nbr_err_comm(comm, call, MPI_ERR_NO_MEM, "out of memory for the window object");
    w->flags = flags;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        int sym = try_symmetric(w, size, disp_unit, info, comm, &rc);
        if (sym) {
            if (sym < 0) {
                win_destroy(w);
                return nbr_err_comm(comm, call, rc, "window set-up failed");
            }
            *(void **)baseptr = w->base;
            *win = w->handle;
            return MPI_SUCCESS;
        }
    }
    void *base = NULL;
    rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, &base, &w->handle);
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return rc;
    }
    w->base = base;
    rc = win_setup(w, comm, w->handle);
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&w->handle);
        win_destroy(w);
        return nbr_err_comm(comm, call, rc, "window set-up failed");
    }
    *(void **)baseptr = base;
    *win = w->handle;
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    int rc;
    if (!serve_with_ref(comm, "MPI_Win_allocate", &rc))
        return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    if (rc != MPI_SUCCESS)
        return rc;
    return create_shared(size, disp_unit, info, comm, baseptr, win, MPI_WIN_FLAVOR_ALLOCATE,
                         "MPI_Win_allocate");
}

NBR_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    int rc;
    if (!serve_with_ref(comm, "MPI_Win_allocate_shared", &rc))
        return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
    if (rc != MPI_SUCCESS)
        return rc;
    return create_shared(size, disp_unit, info, comm, baseptr, win, MPI_WIN_FLAVOR_SHARED,
                         "MPI_Win_allocate_shared");
}

/* Create and dynamic windows expose private memory: a vendor window over no memory gives the
 * handle (its predefined attributes are answered here), peers use CMA. */
static int create_private(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                          MPI_Win *win, int flavor, const char *call)
{
    unsigned flags;
    int rc = check_args(comm, call, size, disp_unit, info, &flags);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_win_t *w = win_new(flavor, size, disp_unit);
    if (!w)
        return nbr_err_comm(comm, call, MPI_ERR_NO_MEM, "out of memory for the window object");
    w->flags = flags;
    w->base = base;
    /* The handle: a vendor shared window of no memory (Open MPI 4.1 cannot create windows over
     * user memory in some settings, e.g. a singleton; node-shared windows exist everywhere). */
    void *none;
    rc = PMPI_Win_allocate_shared(0, 1, info, comm, &none, &w->handle);
    if (rc == MPI_SUCCESS && (rc = win_setup(w, comm, MPI_WIN_NULL)) != MPI_SUCCESS)
        PMPI_Win_free(&w->handle);
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return nbr_err_comm(comm, call, rc, "window set-up failed");
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           MPI_Win *win)
{
    int rc;
    if (!serve_with_ref(comm, "MPI_Win_create", &rc))
        return PMPI_Win_create(base, size, disp_unit, info, comm, win);
    if (rc != MPI_SUCCESS)
        return rc;
    return create_private(base, size, disp_unit, info, comm, win, MPI_WIN_FLAVOR_CREATE,
                          "MPI_Win_create");
}

NBR_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    int rc;
    if (!serve_with_ref(comm, "MPI_Win_create_dynamic", &rc))
        return PMPI_Win_create_dynamic(info, comm, win);
    if (rc != MPI_SUCCESS)
        return rc;
    return create_private(MPI_BOTTOM, 0, 1, info, comm, win, MPI_WIN_FLAVOR_DYNAMIC,
                          "MPI_Win_create_dynamic");
}

/* Dynamic windows: the region table lives in my control block so peers validate addresses
 * without asking me (the descriptor list of 001 §2.2, over shared memory). */
NBR_API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_attach(win, base, size);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return nbr_err(w, "MPI_Win_attach", MPI_ERR_RMA_FLAVOR,
                       "the window was not created with MPI_Win_create_dynamic");
    if (size < 0 || (size > 0 && !base))
        return nbr_err(w, "MPI_Win_attach", MPI_ERR_ARG, "region %p of %ld bytes is invalid", base,
                       (long)size);
    nbr_ctl_t *c = w->ctl;
    nbr_region_t *reg = w->t[w->rank].regions;
    MPI_Aint lo = (MPI_Aint)(uintptr_t)base, hi = lo + size;
    for (int i = 0; i < c->nregions; i++)
        if (lo < reg[i].base + reg[i].size && reg[i].base < hi)
            return nbr_err(w, "MPI_Win_attach", MPI_ERR_RMA_ATTACH,
                           "region %p+%ld overlaps an attached region", base, (long)size);
    if (c->nregions == w->max_attach)
        return nbr_err(w, "MPI_Win_attach", MPI_ERR_RMA_ATTACH,
                       "already %d regions attached (raise NBRMA_MAX_ATTACH)", w->max_attach);
    reg[c->nregions] = (nbr_region_t){lo, size};
    __atomic_store_n(&c->nregions, c->nregions + 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_detach(MPI_Win win, const void *base)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_detach(win, base);
    nbr_ctl_t *c = w->ctl;
    nbr_region_t *reg = w->t[w->rank].regions;
    for (int i = 0; i < c->nregions; i++)
        if (reg[i].base == (MPI_Aint)(uintptr_t)base) {
            reg[i] = reg[c->nregions - 1];
            __atomic_store_n(&c->nregions, c->nregions - 1, __ATOMIC_RELEASE);
            return MPI_SUCCESS;
        }
    return nbr_err(w, "MPI_Win_detach", MPI_ERR_RMA_ATTACH, "%p is not an attached region", base);
}

/* Freeing needs every epoch closed and complete (MPI-3.1 §11.2.5); a nonblocking epoch whose
 * request has not completed is an error, never a hang. The epoch the last fence opened may stay
 * open when it carried no RMA call. */
static int win_free(nbr_win_t *w, MPI_Win *win)
{
    static const char call[] = "MPI_Win_free";
    nbr_progress();
    if (w->nlocked || w->all_ep || w->start_ep || w->post_ep || (w->fence_ep && w->epoch_ops))
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "an epoch is still open (%s); close it before freeing the window",
                       w->nlocked    ? "a lock is held"
                       : w->all_ep   ? "lock_all"
                       : w->start_ep ? "access epoch of MPI_Win_start"
                       : w->post_ep  ? "exposure epoch of MPI_Win_post"
                                     : "RMA calls issued after the last MPI_Win_fence");
    int open_fence = w->fence_ep != NULL;
    if (w->npending > open_fence || w->flushes)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "%d closed epoch(s) and %s flush(es) have not completed yet (%d of them "
                       "deferred); complete their requests with MPI_Wait or MPI_Test first",
                       w->npending - open_fence, w->flushes ? "some" : "no", w->ndeferred);
    /* Everyone stops touching peers' memory before any of it goes away. */
    int rc = nbr_barrier(w->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_win_unbusy(w);
    registry_remove(w);
    rc = PMPI_Win_free(&w->handle);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return rc;
}

NBR_API int MPI_Win_free(MPI_Win *win)
{
    nbr_win_t *w = win ? nbr_win_find(*win) : NULL;
    if (!w)
        return PMPI_Win_free(win);
    NBR_ENTER();
    int rc = win_free(w, win);
    NBR_LEAVE();
    return rc;
}

/* Reorder flags may change during the window's life (000 §VI-B); other keys go to the vendor. */
NBR_API int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_set_info(win, info);
    const char *bad = NULL;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    NBR_ENTER();
    unsigned flags = w->flags;
    int rc = parse_flags(info, &flags, &bad, val, (int)sizeof val);
    if (rc == MPI_SUCCESS)
        w->flags = flags;
    NBR_LEAVE();
    if (rc != MPI_SUCCESS)
        return nbr_err(w, "MPI_Win_set_info", MPI_ERR_INFO_VALUE,
                       "info key %s has value \"%s\"; use 1 or 0 (true or false)",
                       bad ? bad : "(unreadable)", val);
    return PMPI_Win_set_info(win, info);
}

NBR_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
    nbr_win_t *w = nbr_win_find(win);
    int rc = PMPI_Win_get_info(win, info);
    if (!w || rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < NBR_NFLAGS && rc == MPI_SUCCESS; i++) {
        const char *v = (w->flags & flag_keys[i].bit) ? "1" : "0";
        rc = PMPI_Info_set(*info, flag_keys[i].short_key, v);
        if (rc == MPI_SUCCESS && strlen(flag_keys[i].key) < MPI_MAX_INFO_KEY)
            rc = PMPI_Info_set(*info, flag_keys[i].key, v);
    }
    return rc;
}

/* ---- properties ------------------------------------------------------------------------------ */

NBR_API int MPI_Win_get_attr(MPI_Win win, int keyval, void *attr_val, int *flag)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_get_attr(win, keyval, attr_val, flag);
    /* The predefined attributes describe the ref window, not the vendor handle behind it. */
    static int model = MPI_WIN_UNIFIED;
    void *v = NULL;
    if (keyval == MPI_WIN_BASE)
        v = w->base;
    else if (keyval == MPI_WIN_SIZE)
        v = &w->bytes;
    else if (keyval == MPI_WIN_DISP_UNIT)
        v = &w->disp_unit;
    else if (keyval == MPI_WIN_CREATE_FLAVOR)
        v = &w->flavor;
    else if (keyval == MPI_WIN_MODEL)
        v = &model;
    else
        return PMPI_Win_get_attr(win, keyval, attr_val, flag);
    *(void **)attr_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Names are the vendor's, except that an unnamed window's name is the empty string (MPI-3.1
 * §6.8): Open MPI names its windows ("rdma window 3"), which must not show through ref. */
NBR_API int MPI_Win_set_name(MPI_Win win, const char *name)
{
    nbr_win_t *w = nbr_win_find(win);
    int rc = PMPI_Win_set_name(win, name);
    if (w && rc == MPI_SUCCESS)
        w->named = 1;
    return rc;
}

NBR_API int MPI_Win_get_name(MPI_Win win, char *name, int *len)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w || w->named)
        return PMPI_Win_get_name(win, name, len);
    name[0] = '\0';
    *len = 0;
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                 void *baseptr)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->flavor != MPI_WIN_FLAVOR_ALLOCATE)
        return nbr_err(w, "MPI_Win_shared_query", MPI_ERR_RMA_FLAVOR,
                       "the window's memory is not shared (flavor create or dynamic)");
    if (!w->sym)
        return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    if (rank == MPI_PROC_NULL) /* every rank has the same nonzero size: rank 0's */
        rank = 0;
    if (rank < 0 || rank >= w->size)
        return nbr_err(w, "MPI_Win_shared_query", MPI_ERR_RANK,
                       "rank %d is not in the window's group of %d", rank, w->size);
    *size = w->t[rank].size;
    *disp_unit = w->t[rank].disp_unit;
    *(void **)baseptr = w->t[rank].base;
    return MPI_SUCCESS;
}
