/* nbr.h — libnbrma's internal core: the window object, epoch state, and the helpers every part
 * shares (lookup, errors, yielding waits). Shared-memory layout of a window:
 *   data  — node-shared segment (allocate/allocate_shared flavors) reached by load/store, or the
 *           user's private memory (create/dynamic) reached through CMA (process_vm_readv/writev);
 *   ctl   — node-shared control block per rank: lock words (two-level lock, paper 001 §2.3),
 *           the fence barrier, the per-peer monotonic PSCW counters (paper 000 §VII-B), the
 *           accumulate lock and the dynamic-window region table.
 * The handle the application holds is a real vendor MPI_Win, so names, attributes, info, groups,
 * error handlers and c2f/f2c work as the vendor implements them. */
#ifndef NBR_H
#define NBR_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define NBR_API         __attribute__((visibility("default")))
#define NBR_LIKELY(x)   __builtin_expect(!!(x), 1)
#define NBR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NBR_CACHELINE   64

/* Settings (env.c): one X-macro table, NAME, type, default, help. */
// clang-format off
#define NBR_SETTINGS(X)                                                                      \
    X(IMPL, str, "ref", "who serves windows: ref (libnbrma) or vendor (forward to the MPI library)") \
    X(SPIN, int, 0, "polls of a wait before it yields the CPU; 0: auto (100 when a node has more ranks than cores, else 20000)") \
    X(MAX_ATTACH, int, 64, "regions a rank may attach at once to one dynamic window")             \
    X(RANKS_PER_NODE, int, 0, "group ranks into nodes of this many consecutive ranks instead of by shared memory (0: by shared memory); lets one machine exercise multi-node windows") \
    X(VERBOSE, int, 0, "1: print window creation and errors on stderr")
// clang-format on

typedef struct {
#define NBR_DECL_str(n)          const char *n;
#define NBR_DECL_int(n)          long n;
#define X(name, type, def, help) NBR_DECL_##type(name)
    NBR_SETTINGS(X)
#undef X
} nbr_settings_t;
extern nbr_settings_t nbr_cfg;
void nbr_settings_load(void);

/* MPI handles are ints (MPICH) or pointers (Open MPI): hash their bytes (murmur3's finalizer)
 * for open-addressing tables; compare them with ==. Call as nbr_handle_hash(&h, sizeof h). */
static inline uint64_t nbr_handle_hash(const void *handle, size_t len)
{
    uint64_t k = 0;
    memcpy(&k, handle, len < sizeof k ? len : sizeof k);
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    return k ^ (k >> 33);
}

/* ---- control block (node-shared, one per rank) ----------------------------------------------- */

#define NBR_LOCK_WRITER (UINT64_C(1) << 63)

typedef struct {
    uint64_t posted;    /* exposure epochs this peer opened toward me (its g for me) */
    uint64_t completed; /* access epochs this peer closed toward me */
} nbr_peer_ctr_t;

typedef struct {
    MPI_Aint base, size; /* absolute address in the owner's address space */
} nbr_region_t;

typedef struct {
    _Alignas(NBR_CACHELINE) uint64_t lock;   /* local RW lock: writer bit | reader count */
    _Alignas(NBR_CACHELINE) uint64_t acc;    /* accumulate atomicity lock (0 free, else holder+1) */
    _Alignas(NBR_CACHELINE) uint64_t global; /* rank 0 only: lock_all holders (low 32) | exclusive
                                                lock holders (high 32), 001 §2.3's global lock */
    _Alignas(NBR_CACHELINE) uint64_t bar_count;   /* rank 0 only: fence barrier arrivals */
    uint64_t bar_gen;                             /* rank 0 only: completed barriers */
    _Alignas(NBR_CACHELINE) int32_t nregions; /* dynamic windows: regions[] in use */
    /* followed by: nbr_region_t regions[max_attach]; nbr_peer_ctr_t peer[size] */
} nbr_ctl_t;

/* ---- windows --------------------------------------------------------------------------------- */

enum { NBR_EP_NONE = 0, NBR_EP_FENCE, NBR_EP_PSCW, NBR_EP_LOCK, NBR_EP_LOCK_ALL };
enum { NBR_LK_NONE = 0, NBR_LK_SHARED, NBR_LK_EXCL };

typedef struct nbr_target {
    unsigned char *base; /* direct pointer to the target's memory (shared flavors), else NULL */
    MPI_Aint addr;       /* the target's own address of its memory (CMA), 0 for dynamic */
    MPI_Aint size;
    int disp_unit;
    pid_t pid;
    nbr_ctl_t *ctl;
    nbr_region_t *regions;
    nbr_peer_ctr_t *peer;    /* the target's per-peer counters */
    uint64_t a;              /* access epochs I requested toward it (PSCW start) */
    uint64_t e;              /* exposure epochs I opened toward it as origin (PSCW post) */
    unsigned char locked;    /* NBR_LK_* held by me on it */
    unsigned char in_access; /* member of the current PSCW access group */
} nbr_target_t;

typedef struct nbr_win {
    MPI_Win handle; /* what the application holds */
    MPI_Win ctl_win;
    MPI_Comm comm; /* private duplicate for our own collectives */
    int rank, size, flavor;
    void *base;
    MPI_Aint bytes;
    int disp_unit;
    nbr_ctl_t *ctl; /* mine */
    nbr_target_t *t;
    /* Epoch state (what the application opened; MPI-3.1 §11.5) */
    int access, exposure;
    int fence_open;       /* a fence opened access+exposure (not after NOSUCCEED) */
    unsigned long epoch_ops; /* RMA calls since the last fence (may a fence epoch give way?) */
    int nlocked;          /* targets I hold a lock on */
    int excl_global;      /* exclusive locks I hold (registered in the global word, 001 §2.3) */
    int lockall_nocheck;  /* lock_all was opened with MPI_MODE_NOCHECK: nothing to release */
    int *exp_group, nexp; /* PSCW exposure group (origins) */
    int *acc_group, nacc; /* PSCW access group (targets) */
    int max_attach;
    int named; /* the application set a name (MPI_Win_set_name) */
} nbr_win_t;

extern int nbr_impl_ref; /* 1: new windows are served by ref */
extern long nbr_spin; /* polls before a wait yields (NBRMA_SPIN, or chosen per node) */
extern int nbr_nwins;    /* live ref windows (progress only runs when > 0) */

nbr_win_t *nbr_win_lookup_slow(MPI_Win win);
extern MPI_Win nbr_win_last_handle;
extern nbr_win_t *nbr_win_last;
/* The window a handle names, or NULL for a vendor window. One compare on the fast path. */
static inline nbr_win_t *nbr_win_find(MPI_Win win)
{
    if (NBR_LIKELY(win == nbr_win_last_handle && nbr_win_last))
        return nbr_win_last;
    return nbr_win_lookup_slow(win);
}

/* ---- errors (errors.c) ----------------------------------------------------------------------- */

/* Report misuse through the window's error handler: the returned code has class `cls` and
 * MPI_Error_string gives "CALL: message" naming the rank and argument. */
int nbr_err(nbr_win_t *w, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same for a call without a ref window (creation): through the communicator's handler. */
int nbr_err_comm(MPI_Comm comm, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- waiting and progress (progress.c) ------------------------------------------------------- */

void nbr_progress(void);
/* Poll cond(arg) with progress; yield after NBRMA_SPIN polls. */
void nbr_wait_until(int (*cond)(void *), void *arg);
int nbr_wait_req(MPI_Request *req); /* PMPI_Test + yield */
int nbr_barrier(MPI_Comm comm);     /* nonblocking barrier + nbr_wait_req */
/* A request already complete (R-variants, epoch openings): a generalized request. */
int nbr_req_done(MPI_Request *req);

/* ---- synchronization (fence.c, pscw.c, lock.c) ----------------------------------------------- */

int nbr_fence(nbr_win_t *w, int assert);
/* Before start/post/lock/lock_all: end the epoch a fence opened, refused (MPI_ERR_RMA_SYNC) when
 * RMA calls were issued in it: it must be closed by a fence (MPI-3.1 §11.5.1). */
int nbr_fence_yield(nbr_win_t *w, const char *call);
int nbr_pscw_post(nbr_win_t *w, MPI_Group group, int assert);
int nbr_pscw_start(nbr_win_t *w, MPI_Group group, int assert);
int nbr_pscw_complete(nbr_win_t *w);
int nbr_pscw_wait(nbr_win_t *w);
int nbr_pscw_test(nbr_win_t *w, int *flag);
int nbr_lock(nbr_win_t *w, int type, int rank, int assert);
int nbr_unlock(nbr_win_t *w, int rank);
int nbr_lock_all(nbr_win_t *w, int assert);
int nbr_unlock_all(nbr_win_t *w);
#define NBR_FLUSH_ALL (-0x7fffffff)                      /* not a rank, nor any MPI constant */
int nbr_flush(nbr_win_t *w, const char *call, int rank); /* rank NBR_FLUSH_ALL: every target */
int nbr_group_ranks(nbr_win_t *w, MPI_Group g, int **ranks, int *n);
void nbr_acc_lock(nbr_target_t *t, int me);
void nbr_acc_unlock(nbr_target_t *t);

/* ---- data movement (transport/shm.c) --------------------------------------------------------- */

/* Copy between local memory and a target's window memory at byte offset `off` (already bounds
 * checked): direct memcpy for shared flavors, CMA otherwise. Return MPI_SUCCESS or an error. */
int nbr_shm_write(nbr_win_t *w, int target, MPI_Aint off, const void *src, size_t len);
int nbr_shm_read(nbr_win_t *w, int target, MPI_Aint off, void *dst, size_t len);

#endif
