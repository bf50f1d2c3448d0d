/* nbr.h — libnbrma's internal core: the window object, epoch objects (paper 000 §VII), and the
 * helpers every part shares (lookup, errors, yielding waits). Shared-memory layout of a window:
 *   data  — node-shared memory (allocate: symmetric where sizes agree, 001 §2.2; allocate_shared)
 *           reached by load/store, or the user's private memory (create/dynamic) reached
 *           through CMA (process_vm_readv/writev);
 *   ctl   — node-shared control block per rank: lock words (two-level lock, paper 001 §2.3),
 *           the monotonic fence counter, the per-peer matching counters (paper 000 §VII-B), the
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
    X(SYMMETRIC, int, 1, "MPI_Win_allocate: 1 maps all ranks' memory at one address in every process when sizes and disp_units agree (paper 001 §2.2); 0: separate segments") \
    X(ASYNC_PROGRESS, int, 0, "1: a progress thread advances deferred epochs while the application computes (paper 000 §VII-D)") \
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
    _Alignas(NBR_CACHELINE) uint64_t fence;  /* fences this rank reached with its preceding
                                                epoch complete (monotonic; barrier of 000 rule 5) */
    _Alignas(NBR_CACHELINE) int32_t nregions; /* dynamic windows: regions[] in use */
    /* followed by: nbr_region_t regions[max_attach]; nbr_peer_ctr_t peer[size] */
} nbr_ctl_t;

/* ---- epochs (epoch.c; paper 000 §VI and §VII) ------------------------------------------------ */

/* Kinds of epoch objects. A fence epoch is access and exposure at once. */
enum { NBR_EK_FENCE = 1, NBR_EK_START, NBR_EK_POST, NBR_EK_LOCK, NBR_EK_LOCK_ALL };
/* Internal lifetime (000 §VI): deferred -> active (ids taken, waiting for grants) -> ready
 * (granted: RMA calls go to memory) -> done (completion conditions met, notifications sent). */
enum { NBR_ES_DEFERRED = 0, NBR_ES_ACTIVE, NBR_ES_READY, NBR_ES_DONE };
enum { NBR_SIDE_ACCESS = 1, NBR_SIDE_EXPOSURE = 2 };
/* Reorder flags of 000 §VI-B, per window. */
enum {
    NBR_AAAR = 1u << 0, /* access after access */
    NBR_AAER = 1u << 1, /* access after exposure */
    NBR_EAER = 1u << 2, /* exposure after exposure */
    NBR_EAAR = 1u << 3, /* exposure after access */
};

/* The internal request of an epoch closing or a flush (000 §VII-C). A blocking call waits on it
 * directly; a nonblocking one also gets a generalized request completed from it. refs: the
 * engine's and the generalized request's (freed by whichever lets go last). */
typedef struct nbr_req {
    volatile int done;
    int err;
    int refs;
    int is_static; /* the blocking calls' request (nbr_req_blocking): never freed */
    MPI_Request greq;
    struct nbr_req *next_finish; /* queued for MPI_Grequest_complete (progress thread) */
} nbr_req_t;

/* An RMA call of an epoch that is not ready yet, recorded with its arguments and replayed on
 * activation (000 §VII-A). Buffers are the application's (unsafe until completion, rule 2);
 * derived datatypes are duplicated so the application may free its handles. */
enum { NBR_RC_PUT = 1, NBR_RC_GET, NBR_RC_ACC, NBR_RC_GACC, NBR_RC_FOP, NBR_RC_CAS };
typedef struct nbr_rec {
    struct nbr_rec *next;
    int kind, rank;
    const void *obuf, *cbuf;
    void *rbuf;
    int ocount, rcount, tcount;
    MPI_Datatype ot, rt, tt;
    unsigned char dup_ot, dup_rt, dup_tt;
    MPI_Aint disp;
    MPI_Op op;
    const char *call;
    uint64_t age;   /* 000 §VII-C: flushes count down the calls older than themselves */
    nbr_req_t *req; /* R-variants: completed at replay */
} nbr_rec_t;

typedef struct nbr_epoch {
    struct nbr_epoch *next; /* the window's queue, in opening order */
    int kind, state, side, closed, assert;
    uint64_t open_seq, close_seq; /* window events: was an earlier epoch closed before I opened? */
    int *group, n;                /* START: targets; POST: origins */
    uint64_t *ids;                /* START: access ids A_i; POST: exposure ids (000 §VII-B) */
    int target, lock_type, lock_phase; /* LOCK */
    uint64_t fence_no, close_no;       /* FENCE: fence call that opened / closes it (0: none) */
    int scan;                          /* FENCE: peers already seen at the barrier */
    nbr_rec_t *rec, **rec_tail;
    long nrec;
    nbr_req_t *close_req;
    int err;
} nbr_epoch_t;

/* A pending nonblocking or blocking flush: completes when `count` recorded calls toward `rank`
 * (or any, NBR_FLUSH_ALL) no younger than `age` have been carried out. */
typedef struct nbr_flush {
    struct nbr_flush *next;
    int rank;
    uint64_t age;
    long count;
    nbr_req_t *req;
} nbr_flush_t;

/* ---- windows --------------------------------------------------------------------------------- */

typedef struct nbr_target {
    unsigned char *base; /* direct pointer to the target's memory (shared flavors), else NULL */
    MPI_Aint addr;       /* the target's own address of its memory (CMA), 0 for dynamic */
    MPI_Aint size;
    int disp_unit;
    pid_t pid;
    nbr_ctl_t *ctl;
    nbr_region_t *regions;
    nbr_peer_ctr_t *peer;    /* the target's per-peer counters */
    uint64_t a;              /* access epochs activated toward it (PSCW; 000 §VII-B's a_l) */
    uint64_t e;              /* exposure epochs activated toward it as origin (e_l) */
    unsigned char direct;    /* an open, ready epoch covers it: RMA calls go straight to memory */
    unsigned char in_access; /* member of the open PSCW access group */
    nbr_epoch_t *lock_ep;    /* the open lock epoch toward it */
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
    /* Application-level epochs (MPI-3.1 §11.5): what is open now. */
    nbr_epoch_t *fence_ep;   /* open fence epoch (access and exposure) */
    nbr_epoch_t *start_ep;   /* open PSCW access epoch */
    nbr_epoch_t *post_ep;    /* open PSCW exposure epoch */
    nbr_epoch_t *all_ep;     /* open lock_all epoch */
    int nlocked;             /* open lock epochs */
    unsigned long epoch_ops; /* RMA calls since the last fence (may a fence epoch give way?) */
    int all_direct;          /* the open fence or lock_all epoch is ready: calls go to memory */
    int replaying;           /* carrying out recorded calls: their epoch is ready */
    int want_req;            /* an R-variant is running: a recorded call gets a request */
    nbr_req_t *got_req;      /* ... and here it is */
    /* Internal lifetimes: every epoch not yet done, in opening order (000 §VII-A). */
    nbr_epoch_t *q_head, **q_tail;
    int ndeferred, npending;
    struct nbr_win *busy_next; /* windows with pending epochs or flushes, for the engine */
    int busy;
    nbr_flush_t *flushes;
    nbr_epoch_t *ep_free; /* recycled epoch objects */
    uint64_t seq;         /* epoch open/close events */
    uint64_t age;         /* recorded RMA calls */
    uint64_t fence_calls; /* fence calls so far (collective: equal on every rank) */
    int excl_global;      /* exclusive locks registered in the global word (001 §2.3) */
    unsigned flags;       /* NBR_AAAR... */
    int max_attach;
    int named; /* the application set a name (MPI_Win_set_name) */
    void *sym; /* symmetric allocation (symheap.c): rank r's memory at sym + r * sym_stride */
    size_t sym_stride, sym_total;
} nbr_win_t;

extern int nbr_impl_ref; /* 1: new windows are served by ref */
extern long nbr_spin;    /* polls before a wait yields (NBRMA_SPIN, or chosen per node) */
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
/* Same for a window the vendor serves (MPIX_ calls that need a ref window). */
int nbr_err_vendor_win(MPI_Win win, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- waiting and progress (progress.c) ------------------------------------------------------- */

void nbr_progress(void);
int nbr_wait_req(MPI_Request *req); /* PMPI_Test + yield */
int nbr_barrier(MPI_Comm comm);     /* nonblocking barrier + nbr_wait_req */
/* A request already complete (R-variants, epoch openings): a generalized request. */
int nbr_req_done(MPI_Request *req);

/* ---- synchronization (sync.c) and the engine (epoch.c) --------------------------------------- */

#define NBR_FLUSH_ALL (-0x7fffffff) /* not a rank, nor any MPI constant */
int nbr_group_ranks(nbr_win_t *w, MPI_Group g, int **ranks, int *n);
void nbr_acc_lock(nbr_target_t *t, int me);
void nbr_acc_unlock(nbr_target_t *t);
/* Lock words (lock.c): one try each, never waiting. */
int nbr_try_lock_shared(nbr_target_t *t);
int nbr_try_lock_global_excl(nbr_win_t *w);
int nbr_try_lock_writer(nbr_target_t *t);
int nbr_try_lock_all(nbr_win_t *w);
void nbr_unlock_shared(nbr_target_t *t);
void nbr_unlock_writer(nbr_win_t *w, nbr_target_t *t);
void nbr_unlock_all_word(nbr_win_t *w);

nbr_epoch_t *nbr_epoch_new(nbr_win_t *w, int kind);
void nbr_epoch_enqueue(nbr_win_t *w, nbr_epoch_t *e);
/* Close e at application level; its completion will finish `req` (may be NULL). */
void nbr_epoch_close(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req);
void nbr_epoch_set_direct(nbr_win_t *w, nbr_epoch_t *e, int on);
int nbr_post_completed(nbr_win_t *w, nbr_epoch_t *e); /* every origin closed its access */
void nbr_epoch_finish(nbr_win_t *w, nbr_epoch_t *e);  /* done: notify, complete, free */
void nbr_epoch_pool_free(nbr_win_t *w);
/* Advance a just opened or closed epoch (inline when alone in its queue, else a sweep). */
void nbr_epoch_kick(nbr_win_t *w, nbr_epoch_t *e);
/* Record an RMA call into the open epoch covering `rank` (not ready yet). */
int nbr_record(nbr_win_t *w, const nbr_rec_t *r);
/* The open epoch covering target `rank`, or NULL. */
nbr_epoch_t *nbr_access_epoch(nbr_win_t *w, int rank);
long nbr_pending_calls(nbr_win_t *w, int rank); /* recorded calls toward rank (or ALL) */
void nbr_flush_add(nbr_win_t *w, nbr_flush_t *f);
void nbr_win_busy(nbr_win_t *w);
void nbr_win_unbusy(nbr_win_t *w);

/* Requests: internal (blocking) or with a generalized request (nonblocking). */
nbr_req_t *nbr_req_new(void);
nbr_req_t *nbr_req_blocking(void);
int nbr_req_expose(nbr_req_t *r, MPI_Request *req); /* create the generalized request */
void nbr_req_finish(nbr_req_t *r, int err);         /* complete (engine side) */
void nbr_req_release(nbr_req_t *r);                 /* drop the engine's reference */
int nbr_req_wait(nbr_req_t *r);                     /* progress until done; returns its error */
void nbr_progress_start(void);                      /* NBRMA_ASYNC_PROGRESS thread */
/* With NBRMA_ASYNC_PROGRESS the engine runs in a second thread: every entry point that touches
 * window state holds the big lock (no cost otherwise: one predictable branch). */
extern int nbr_async;
int nbr_in_progress_thread(void); /* the caller is the progress thread: no MPI call allowed */
void nbr_big_lock(void);
void nbr_big_unlock(void);
#define NBR_ENTER()                                                                                \
    do {                                                                                           \
        if (NBR_UNLIKELY(nbr_async))                                                               \
            nbr_big_lock();                                                                        \
    } while (0)
#define NBR_LEAVE()                                                                                \
    do {                                                                                           \
        if (NBR_UNLIKELY(nbr_async))                                                               \
            nbr_big_unlock();                                                                      \
    } while (0)

/* The body of an MPI entry point on a window: forward `vendor_call` when the vendor serves
 * `win`, else evaluate `expr` (it may use w) under the big lock and return its code. */
#define NBR_SERVE(vendor_call, expr)                                                               \
    nbr_win_t *w = nbr_win_find(win);                                                              \
    if (!w)                                                                                        \
        return vendor_call;                                                                        \
    NBR_ENTER();                                                                                   \
    int rc_ = expr;                                                                                \
    NBR_LEAVE();                                                                                   \
    return rc_

/* Symmetric allocation (symheap.c, 001 §2.2): `total` bytes of node-shared memory mapped at the
 * same address in every process of comm (collective), or NULL. */
void *nbr_sym_alloc(MPI_Comm comm, size_t total);
void nbr_sym_free(void *addr, size_t total);

/* ---- data movement (transport/shm.c) --------------------------------------------------------- */

/* Copy between local memory and a target's window memory at byte offset `off` (already bounds
 * checked): direct memcpy for shared flavors, CMA otherwise. Return MPI_SUCCESS or an error. */
int nbr_shm_write(nbr_win_t *w, int target, MPI_Aint off, const void *src, size_t len);
int nbr_shm_read(nbr_win_t *w, int target, MPI_Aint off, void *dst, size_t len);

#endif
