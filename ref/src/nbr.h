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
/* Thread-local variables of the fast path: the static TLS block (libnbrma is linked or
 * preloaded, never dlopen'ed late), so an access is one %fs-relative load. */
#define NBR_TLS_MODEL __attribute__((tls_model("initial-exec")))
/* MPI_Aint holds an address: the largest one (MPI defines no such constant). */
_Static_assert(sizeof(MPI_Aint) == sizeof(intptr_t), "MPI_Aint is address-sized");
#define NBR_AINT_MAX ((MPI_Aint)INTPTR_MAX)

/* Settings (env.c): one X-macro table, NAME, type, default, help. */
// clang-format off
#define NBR_SETTINGS(X)                                                                      \
    X(IMPL, str, "ref", "who serves windows: ref (libnbrma) or vendor (forward to the MPI library)") \
    X(SPIN, int, 0, "polls of a wait before it yields the CPU; 0: auto (100 when a node has more ranks than cores, else 20000)") \
    X(RELAX, str, "auto", "how a wait gives its core away once NBRMA_SPIN polls found nothing: yield (sched_yield), sleep (a nanosleep of NBRMA_RELAX_NS), spin (never: poll on), auto (yield while yields come back at once; after a late one, because other tasks ran, poll without yielding for 50 ms, doubled per late yield up to 1 s: docs/ref.md, waiting on a busy node)") \
    X(RELAX_NS, int, 1000, "the sleep of NBRMA_RELAX=sleep in nanoseconds (the kernel adds the thread's timer slack, 50 us by default)") \
    X(RANKS_PER_NODE, int, 0, "group ranks into nodes of this many consecutive ranks instead of by shared memory (0: by shared memory); lets one machine exercise multi-node windows") \
    X(SYMMETRIC, int, 1, "MPI_Win_allocate: 1 maps all ranks' memory at one address in every process when sizes and disp_units agree (paper 001 §2.2); 0: separate segments") \
    X(NET, str, "auto", "transport between ranks of different nodes: ucx (RDMA put/get and atomics through UCX: InfiniBand, RoCE, shared memory, TCP), am (active messages over the MPI library's point-to-point), auto (ucx where libnbrma was built with it and UCX reaches the peer, else am)") \
    X(SCHED, str, "off", "intra-epoch message scheduling (paper 002 §4) in windows with pairs on other nodes: on defers Put/Get to node peers (and self) of at least NBRMA_SCHED_TH bytes to the closing call or a flush, so they are copied while inter-node transfers are in flight; off carries them out in the call (window info key nbrma_sched)") \
    X(SCHED_TH, int, 8192, "payload in bytes from which the scheduler defers an intra-node Put/Get (002's th; window info key nbrma_sched_th)") \
    X(WIRE_US, int, 0, "an emulated network between nodes (am transport): each request takes effect this many microseconds after it arrived (plus NBRMA_WIRE_MBPS), without using a CPU; 0: none") \
    X(WIRE_MBPS, int, 0, "the emulated network's bandwidth per origin-target link in MB/s (10^6 bytes); 0: unlimited") \
    X(ASYNC_PROGRESS, str, "auto", "the progress thread: auto (default) serves other nodes' requests whenever windows span nodes and MPI_THREAD_MULTIPLE is available (requested at MPI_Init when the job may span nodes); on: also advances deferred epochs while the application computes (paper 000 §VII-D), from the first window; off: never (a target blocked in an MPI call libnbrma cannot wrap then stalls its origins across nodes)") \
    X(ISSUE, str, "eager", "issuing of RMA calls in a ready epoch (paper 004 §III-D): eager carries each out in its call; delayed queues every call (an operation object each) until the closing call or a flush, as MPICH's lazy issue does (window info key nbrma_issue)") \
    X(FENCE, str, "barrier", "fence algorithm (paper 004 §III-C1, Fig. 2; 003 §4): barrier signals every peer and waits for all at each fence (the opening one too); reduce_scatter holds a fence epoch's calls until its closing fence, whose MPI_Ireduce_scatter_block of per-target flags tells each target how many origins will notify it, and returns when its own calls completed and those notifications arrived (window info key nbrma_fence)") \
    X(NONCONTIG, str, "auto", "how a put or get whose target side is noncontiguous crosses to another node (paper 004 §III-A, F1): blocks sends one operation per contiguous block (hardware style: one RDMA transfer each over ucx), packed one message per request that the target's CPU scatters or gathers (active-message style), auto packs when the target's blocks average under 4 KiB, and toward a target whose memory UCX maps into this process (shared memory) only when the request also has more than 256 blocks; within a node the data is always copied directly (window info key nbrma_noncontig)") \
    X(ACC, str, "auto", "how accumulates (and get_accumulate, fetch_and_op, compare_and_swap) reach a target on another node over the ucx transport (paper 004 §III-A, Fig. 1, F2): am sends one message the target's CPU applies; hw takes the target's accumulate lock with a remote atomic, gets the data, computes at the origin, puts it back, flushes and releases the lock; auto is hw toward a target whose window memory UCX maps into this process (ucp_rkey_ptr: shared memory) and am toward the others (a network). Pairs on the am transport have no hardware path and stay am; under accumulate_ops=same_op the pairs with UCP atomics keep them (window info key nbrma_acc)") \
    X(LOCK, str, "polling", "how a lock waits for its target (paper 004 §III-C2, F5): polling retries the target's lock word (001 §2.3's two-level lock) until it is free; queued joins a FIFO queue of origins (an MCS list: one swap at the target, one write to the predecessor) and waits on a word in its own memory for the grant, at a cost of 16 bytes per peer (and 16 for the global word's queue) in every process's control block; a shared lock passes the queue on as soon as it holds the lock, so readers in a row share it and a writer behind them waits at the head; lock_all and exclusive locks' registration in rank 0's global word queue the same way (window info key nbrma_lock)") \
    X(META, str, "table", "window metadata (paper 004 §III-B, F3): table keeps a descriptor per peer (O(P) bytes per window in every process); lazy computes a peer's descriptor when the peer is first used, in address space reserved for all (memory only for the pages used), which MPI_Win_allocate windows on one node allow (their memory symmetric, every control block, size and disp_unit named in the symmetric segment's directory; sizes that differ take the largest as the stride when that reserves at most twice the bytes asked for) and MPI_Win_create windows on one node (a directory rank 0 holds); other windows keep the table (window info key nbrma_meta, fixed at creation; MPI_Win_get_info tells which is in force)") \
    X(OP_POOL, int, 16384, "freed operation objects (recorded calls: deferred epochs, delayed issue, the scheduler's held calls, the reduce-scatter fence) kept in the process for reuse instead of going back to malloc, as MPICH ch3's global pool of RMA operations (MPIR_CVAR_CH3_RMA_OP_GLOBAL_POOL_SIZE, also 16384); MPIX_Win_get_stats' proc_ops_pooled counts them; 0: none kept") \
    X(STATS, str, "", "path: write this process's memory accounting (MPIX_Win_get_stats' process part, JSON) there at MPI_Finalize; %r in the path becomes the MPI_COMM_WORLD rank, else .RANK is appended when the job has several processes; empty: none") \
    X(VERBOSE, int, 0, "1: print window creation and every error on stderr (else only errors about to abort the job)")
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
    uint64_t fence;     /* remote peers only: the fences it reached (shm peers' are read in
                           their own block) */
    uint64_t freed;     /* remote peers only: it reached MPI_Win_free */
} nbr_peer_ctr_t;

/* A queue node of the queued lock (lock.c, NBRMA_LOCK=queued): one per target in each process's
 * control block, after the per-peer counters (nbr_ctl_qnodes), and one for the global word. The
 * origin's successor in the target's queue writes next (its rank + 1); the releasing predecessor
 * writes grant. */
typedef struct {
    uint64_t next, grant;
} nbr_qnode_t;

/* Transports of a peer pair (transport/tp.h). */
enum { NBR_NET_SHM = 0, NBR_NET_AM, NBR_NET_UCX, NBR_NET_N };

/* The result of a remote atomic in flight (transport/tp.h): idle, pending, ready. */
enum { NBR_CELL_IDLE = 0, NBR_CELL_PENDING, NBR_CELL_READY };
typedef struct {
    int state, err;
    uint64_t val;
} nbr_tp_cell_t;

/* A transport's amo entry on a cell it may have started before: 1 with *old when its result is
 * ready (the cell idle again; an error joins the window's tp_err), 0 while it is in flight, -1
 * when nothing is (the caller starts the operation). */
static inline int nbr_tp_cell_take(int *tp_err, nbr_tp_cell_t *c, uint64_t *old)
{
    if (c && c->state == NBR_CELL_READY) {
        c->state = NBR_CELL_IDLE;
        if (c->err != 0 && !*tp_err)
            *tp_err = c->err;
        *old = c->val;
        return 1;
    }
    return c && c->state == NBR_CELL_PENDING ? 0 : -1;
}

typedef struct {
    MPI_Aint base, size; /* absolute address in the owner's address space */
} nbr_region_t;

typedef struct {
    _Alignas(NBR_CACHELINE) uint64_t lock;   /* local RW lock: writer bit | reader count */
    uint64_t qtail; /* queued lock (lock.c): the last origin in my queue, its rank + 1; 0 empty */
    uint64_t gqtail; /* rank 0 only: the same for the global word's queue (lock_all, exclusive
                        registrations); in the cache line's padding */
    /* Accumulate atomicity lock, a ticket lock (lock.c): FIFO, so a large accumulate that lets go
     * between chunks lets every waiting small one in. */
    _Alignas(NBR_CACHELINE) uint32_t acc_next; /* next ticket to hand out */
    uint32_t acc_serving;                      /* ticket holding the lock */
    _Alignas(NBR_CACHELINE) uint64_t global; /* rank 0 only: lock_all holders (low 32) | exclusive
                                                lock holders (high 32), 001 §2.3's global lock */
    _Alignas(NBR_CACHELINE) uint64_t fence;  /* fences this rank reached with its preceding
                                                epoch complete (monotonic; barrier of 000 rule 5) */
    uint64_t rs_arrived; /* reduce-scatter fence (003 §4): origins that completed their calls
                            toward me, over all fences (word NBR_W_RS, added to by each) */
    /* Dynamic windows: where the owner's sorted region table is (win.c), under a sequence
     * number that is odd while it changes. */
    _Alignas(NBR_CACHELINE) uint64_t reg_seq;
    uint64_t reg_addr, reg_n;
    /* followed by: nbr_peer_ctr_t peer[size], then (queued lock only) nbr_qnode_t qnode[size + 1]
     * (one per target, and the last for the global word's queue) */
} nbr_ctl_t;

/* The control block's layout, in one place (win.c allocates it, the transports register it and
 * address its words): where the queue nodes start, and its length without rounding. */
static inline size_t nbr_ctl_qnode_off(int size)
{
    return sizeof(nbr_ctl_t) + (size_t)size * sizeof(nbr_peer_ctr_t);
}
static inline size_t nbr_ctl_len(int size, int lock_q)
{
    return nbr_ctl_qnode_off(size) + (lock_q ? ((size_t)size + 1) * sizeof(nbr_qnode_t) : 0);
}
static inline nbr_qnode_t *nbr_ctl_qnodes(nbr_ctl_t *c, int size)
{
    return (nbr_qnode_t *)((char *)c + nbr_ctl_qnode_off(size));
}

/* The cache line before a control block (arena.c): it survives the block's reuse. inc counts the
 * windows the block has served; freed is the last of them that reached MPI_Win_free — a peer
 * waiting for "freed >= my window's inc" is never fooled by a block reused meanwhile. */
typedef struct {
    _Alignas(NBR_CACHELINE) uint64_t inc;
    uint64_t freed;
    void *tp_mem; /* a block the transport allocated (nbr_tp_ctl_alloc): its handle; else NULL */
} nbr_ctl_hdr_t;
static inline nbr_ctl_hdr_t *nbr_ctl_hdr(nbr_ctl_t *c)
{
    return (nbr_ctl_hdr_t *)((char *)c - NBR_CACHELINE);
}

/* Control-block memory (arena.c): node-shared, named by (chunk, offset) across processes. */
typedef struct {
    uint32_t chunk;
    uint32_t tag; /* the owner's nbr_proc_tag(): its chunk names, unlike pids, are never reused */
    uint64_t off;
} nbr_arena_ref_t;
/* A random 32-bit value per process, part of the names of its shm objects: a name made of the
 * pid alone collides with the leftovers of a killed process that had the same pid. */
uint32_t nbr_proc_tag(void);
void *nbr_arena_alloc(size_t bytes, nbr_arena_ref_t *ref);
void nbr_arena_free(void *p, size_t bytes);
void *nbr_arena_map(int pid, nbr_arena_ref_t ref);
void nbr_arena_finalize(void); /* MPI_Finalize: unlink this process's chunks (and mem.c's) */

/* MPI_Alloc_mem memory (mem.c): node-shared segments named by (tag, seg) across processes. */
typedef struct {
    uint32_t tag, seg; /* the owner's nbr_proc_tag() and segment number */
    uint64_t off;      /* byte offset of the window's base in the segment */
} nbr_mem_ref_t;
/* 1 when bytes [base, base + size) lie in one node-shared segment of this process (*ref). */
int nbr_mem_find(const void *base, MPI_Aint size, nbr_mem_ref_t *ref);
/* MPI_Win_allocate across nodes, a rank with node peers in the window: node-shared, zeroed
 * memory they map (NULL: none to be had); freed by nbr_mem_win_free, refused by MPI_Free_mem. */
void *nbr_mem_win_alloc(size_t size);
void nbr_mem_win_free(void *p);
/* Map `size` bytes of process pid's segment at ref here: their address, or NULL; *map and *len
 * are what nbr_mem_unmap takes. */
void *nbr_mem_map(int pid, const nbr_mem_ref_t *ref, MPI_Aint size, void **map, size_t *len);
void nbr_mem_unmap(void *map, size_t len);
void nbr_mem_finalize(void); /* MPI_Finalize: unlink the segments' names */
long nbr_mem_segments(void);  /* live segments of this process (tests) */
size_t nbr_mem_resident(void); /* bytes their objects hold in memory (tests) */
extern int nbr_mem_seg_order;  /* log2 of a segment's size (tests lower it before allocating) */

/* ---- epochs (epoch.c; paper 000 §VI and §VII) ------------------------------------------------ */

/* Kinds of epoch objects. A fence epoch is access and exposure at once. */
enum { NBR_EK_FENCE = 1, NBR_EK_START, NBR_EK_POST, NBR_EK_LOCK, NBR_EK_LOCK_ALL };
/* Internal lifetime (000 §VI): deferred -> active (ids taken, waiting for grants) -> ready
 * (granted: RMA calls go to memory) -> done (completion conditions met, notifications sent). */
enum { NBR_ES_DEFERRED = 0, NBR_ES_ACTIVE, NBR_ES_READY, NBR_ES_DONE };
enum { NBR_SIDE_ACCESS = 1, NBR_SIDE_EXPOSURE = 2 };
/* Classes of closed epochs for the activation predicate: which reorder flag can let a later
 * epoch pass an earlier one (collective epochs — fence, lock_all — never let anything pass). */
enum { NBR_CL_ACCESS = 0, NBR_CL_EXPOSURE, NBR_CL_COLL, NBR_NCLASS };
/* Reorder flags of 000 §VI-B, per window. */
enum {
    NBR_AAAR = 1u << 0, /* access after access */
    NBR_AAER = 1u << 1, /* access after exposure */
    NBR_EAER = 1u << 2, /* exposure after exposure */
    NBR_EAAR = 1u << 3, /* exposure after access */
};

/* The internal request of an epoch opening or closing, a flush or a recorded R-variant call
 * (000 §VII-C). A blocking call waits on it directly; a nonblocking one also gets a generalized
 * request completed from it. refs: the engine's and the generalized request's (freed by
 * whichever lets go last). `win` names the window whose error handler its error goes through. */
typedef struct nbr_req {
    int done; /* atomic: set by whichever thread runs the engine */
    int err;
    int refs;
    int is_static; /* a thread's blocking-call request (nbr_req_blocking): never freed */
    MPI_Request greq;     /* to complete (MPI_REQUEST_NULL once completed) */
    MPI_Request greq_key; /* the handle it was registered under (request.c) */
    MPI_Win win;
    struct nbr_req *next_finish; /* queued for MPI_Grequest_complete (progress thread) */
    /* A request-based call toward remote peers: its operations still in flight, their first
     * error, and whether the call has issued them all (armed: the last completion finishes it). */
    int tp_pending, tp_err, tp_armed;
} nbr_req_t;

struct nbr_epoch;

/* An RMA call of an epoch that is not ready yet, recorded with its arguments and replayed on
 * activation (000 §VII-A). Buffers are the application's (unsafe until completion, rule 2);
 * derived datatypes are duplicated so the application may free its handles. The first recorded
 * call of an epoch toward a rank is that epoch's *run* toward the rank: runs sit in the rank's
 * list in age order, so the oldest call still pending toward a rank is its first run's. */
enum { NBR_RC_PUT = 1, NBR_RC_GET, NBR_RC_ACC, NBR_RC_GACC, NBR_RC_FOP, NBR_RC_CAS };
typedef struct nbr_rec {
    struct nbr_rec *next;
    struct nbr_rec *run_prev, *run_next; /* runs only: the target's run list */
    struct nbr_epoch *ep;                /* runs only: the epoch */
    int kind, rank;
    const void *obuf, *cbuf;
    void *rbuf;
    int ocount, rcount, tcount;
    MPI_Datatype ot, rt, tt;
    unsigned char dup_ot, dup_rt, dup_tt, is_run;
    unsigned char held; /* deferred by the scheduler (002 §4) in a ready epoch: carried out at
                           the epoch's closing call or a flush, not at once */
    MPI_Aint disp;
    MPI_Op op;
    const char *call;
    uint64_t age;   /* 000 §VII-C: a flush waits for the calls no younger than itself */
    nbr_req_t *req; /* R-variants: completed at replay */
} nbr_rec_t;

/* One entry of a PSCW epoch toward one peer (000 §VII-B): its id, queued in the peer's FIFO in
 * id order. START: granted once the peer's posts reach the id; its done notification goes out
 * when every earlier entry toward that peer has sent its own (ids must arrive in order). POST:
 * complete once the origin's done notifications reach the id. */
typedef struct nbr_match {
    struct nbr_match *next;
    struct nbr_epoch *ep;
    uint64_t id;
    unsigned char granted, notify;
} nbr_match_t;

typedef struct nbr_epoch {
    struct nbr_epoch *next, *prev;   /* the window's queue, in opening order */
    struct nbr_epoch *cnext, *cprev; /* closed and not done: its class's list, in closing order */
    struct nbr_epoch *wnext, *wprev; /* the engine's work or replay list */
    struct nbr_epoch *lnext;         /* LOCK / LOCK_ALL: the FIFO of epochs waiting for the lock */
    struct nbr_epoch *rnext, *rprev; /* epochs holding recorded calls, by first recorded age */
    struct nbr_win *win;
    int kind, state, side, cls, closed, assert;
    unsigned char on_list, on_closed, on_rec, notify_marked, on_quiet, on_held;
    uint64_t open_seq, close_seq; /* window events: was an earlier epoch closed before I opened? */
    int *group, n;                /* START: targets; POST: origins */
    nbr_match_t *m;               /* START, POST: one entry per group member */
    int nwait;                    /* START: posts still missing; POST: done notifications */
    int nnotify;                  /* START: done notifications not yet written */
    int target, lock_type, lock_phase; /* LOCK */
    unsigned char qstep; /* LOCK, LOCK_ALL, queued (lock.c): 0 not queued, 1 swapping the tail, 2
                            waiting for the grant, 3 at the head (then the lock word) */
    uint64_t fence_no, close_no; /* FENCE: fence call that opened / closes it (0: none) */
    /* FENCE under the reduce-scatter algorithm (004 Fig. 2a, 003 §4; epoch.c, rs_step): rs set
     * at the opening call; rs_phase 0 calls held, 1 reduce-scatter in flight, 2 calls carried
     * out, 3 targets notified; rs_last: the closing call opens no reduce-scatter epoch (a
     * barrier follows, for the passive-target or PSCW epoch that may come next); rs_yield:
     * ended by start/post/lock/lock_all, it waits for every peer's previous fence. */
    unsigned char rs, rs_phase, rs_last, rs_yield, rs_after;
    int rs_in; /* the reduce-scatter's result: origins that will notify me */
    MPI_Request rs_req;
    nbr_rec_t *rec, **rec_tail;
    long nrec;
    uint64_t first_age; /* age of its first recorded call */
    nbr_req_t *close_req, *open_req; /* open_req: LOCK, LOCK_ALL: completes at the grant */
    int err;
    nbr_tp_cell_t cell;             /* LOCK, LOCK_ALL: a lock try in flight (remote targets) */
    struct nbr_epoch *qnext, *qprev; /* closed, waiting for its operations to complete */
    struct nbr_epoch *hnext, *hprev; /* ready, holding calls the scheduler deferred (w->held) */
} nbr_epoch_t;

/* A flush waiting for recorded calls no younger than `age` toward its rank (or any). */
typedef struct nbr_flush {
    struct nbr_flush *next;
    uint64_t age;
    nbr_req_t *req;
    int rank; /* or NBR_FLUSH_ALL */
} nbr_flush_t;

/* Something the engine polls: a word another process writes that an active epoch waits on. */
enum {
    NBR_SRC_POSTS = 1,
    NBR_SRC_DONES,
    NBR_SRC_LOCK,
    NBR_SRC_LOCK_ALL,
    NBR_SRC_FENCE,
    NBR_SRC_QUIET,  /* epochs and flushes waiting for remote completions */
    NBR_SRC_HANDOFF /* queued lock: a released lock still to be handed to its successor */
};
typedef struct nbr_source {
    struct nbr_source *next, *prev; /* the engine's poll list */
    struct nbr_win *w;
    int kind, peer, linked;
} nbr_source_t;

/* The queue node of the queued lock toward one target (lock.c): free, in the queue (waiting or
 * holding), or its released lock being handed on: the tail's CAS not yet issued, issued, or
 * waiting for the successor's link. */
enum { NBR_HO_NONE = 0, NBR_HO_QUEUED, NBR_HO_START, NBR_HO_CAS, NBR_HO_NEXT };

/* Engine state of one peer of a window, allocated on first use (idle peers cost a pointer). */
typedef struct nbr_peer_q {
    nbr_match_t *acc_head, *acc_tail, *acc_cursor; /* START entries toward it; cursor: 1st not
                                                       granted */
    nbr_match_t *exp_head, *exp_tail;              /* POST entries toward it (as origin) */
    nbr_epoch_t *lock_head, *lock_tail;            /* LOCK epochs waiting for its lock */
    nbr_rec_t *run_head, *run_tail;                /* recorded calls toward it, one run/epoch */
    nbr_flush_t *fl_head, *fl_tail;                /* flushes toward it, by age */
    nbr_source_t posts, dones, lock;
    struct nbr_lockq *lq; /* queued-lock windows only (NBRMA_LOCK=queued): below */
} nbr_peer_q_t;

/* The queued lock's state toward one target (lock.c), allocated with the peer's engine state in
 * windows that queue (a polling window pays the pointer above): the hand-off of a released
 * exclusive lock to my successor in the target's queue, NBR_HO_*; a new lock toward it waits
 * until it is done (one queue node per target). Rank 0's peer state holds two: its own queue's,
 * then the global word's (lock_all and exclusive registrations: queue `size`, nbr_lockq). */
typedef struct nbr_lockq {
    int hstate;
    nbr_tp_cell_t hcell;
    nbr_source_t handoff;
} nbr_lockq_t;

/* ---- memory accounting (stats.c; paper 004 §III-IV) ------------------------------------------
 * Gauges updated where memory is allocated and freed: objects and bytes now, and their high-water
 * marks; never on the put/get fast path. nbr_stat runs under the big lock (every site that
 * allocates windows, epochs, recorded calls or flushes holds it when threads exist): plain
 * arithmetic. Requests are freed from any thread (the MPI library calls the generalized request's
 * free function): nbr_gauge_add, atomic. */
typedef struct {
    long long count, count_hwm, bytes, bytes_hwm;
} nbr_gauge_t;
typedef struct {
    nbr_gauge_t windows, epochs, ops, flushes, requests;
    nbr_gauge_t ops_pooled; /* operation objects kept for reuse (epoch.c's pool, NBRMA_OP_POOL) */
} nbr_stats_t;
extern nbr_stats_t nbr_st;
void nbr_gauge_add(nbr_gauge_t *g, long long count, long long bytes);
static inline void nbr_gauge_plain(nbr_gauge_t *g, long long count, long long bytes)
{
    g->count += count;
    g->bytes += bytes;
    if (g->count > g->count_hwm)
        g->count_hwm = g->count;
    if (g->bytes > g->bytes_hwm)
        g->bytes_hwm = g->bytes;
}
/* A window's gauge and the process's together (wg may be NULL); under the big lock. */
static inline void nbr_stat(nbr_gauge_t *wg, nbr_gauge_t *pg, long long count, long long bytes)
{
    if (wg)
        nbr_gauge_plain(wg, count, bytes);
    nbr_gauge_plain(pg, count, bytes);
}
int nbr_stats_finalize(void); /* NBRMA_STATS: write the JSON report (before PMPI_Finalize) */

/* ---- windows --------------------------------------------------------------------------------- */

typedef struct nbr_target {
    unsigned char *base; /* direct pointer to the target's memory (shared flavors), else NULL */
    MPI_Aint addr;       /* the target's own address of its memory (CMA), 0 for dynamic */
    MPI_Aint size;
    int disp_unit;
    pid_t pid;
    nbr_ctl_t *ctl;
    uint64_t inc;            /* its control block's incarnation for this window */
    nbr_peer_ctr_t *peer;    /* the target's per-peer counters */
    nbr_region_t *rcache;    /* dynamic: a copy of its region table ... */
    int rcache_n, rcache_cap, rcache_valid;
    uint64_t rcache_seq;     /* ... as of this sequence number */
    uint64_t a;              /* access epochs activated toward it (PSCW; 000 §VII-B's a_l) */
    uint64_t e;              /* exposure epochs activated toward it as origin (e_l) */
    unsigned char direct;    /* an open, ready epoch covers it: RMA calls go straight to memory */
    unsigned char in_access; /* member of the open PSCW access group */
    nbr_epoch_t *lock_ep;    /* the open lock epoch toward it */
    nbr_peer_q_t *q;         /* engine state toward it (NULL until first needed) */
    unsigned char net;       /* NBR_NET_*: the transport of the pair (transport/tp.h) */
    unsigned char made;      /* filled in (at creation; lazy windows: on first use, nbr_tgt) */
    unsigned char mapped;    /* remote: its window memory is mapped into this process by the
                                transport (ucx: ucp_rkey_ptr succeeds), so a block costs a copy */
    int wrank;               /* remote: its rank in MPI_COMM_WORLD (the am communicator's) */
    int amid;                /* remote: its id of this window */
    long tp_out;             /* remote: my operations toward it not yet complete */
    void *mem_map;           /* create window over its MPI_Alloc_mem memory: my mapping of it */
    size_t mem_map_len;
} nbr_target_t;

enum { NBR_NC_AUTO = 0, NBR_NC_BLOCKS, NBR_NC_PACKED }; /* nbr_win_t.noncontig */
enum { NBR_ACC_AM = 0, NBR_ACC_HW, NBR_ACC_AUTO };      /* nbr_win_t.acc_hw */
/* nbr_win_t.priv_kind: MPI_Win_allocate's memory in a window that spans nodes (win.c) */
enum { NBR_PRIV_NONE = 0, NBR_PRIV_HEAP, NBR_PRIV_SHM, NBR_PRIV_TP };
/* nbr_win_t.ctl_kind: where my control block came from (win.c) */
enum { NBR_CTL_ARENA = 0, NBR_CTL_TP };
enum { NBR_ORD_RAR = 1, NBR_ORD_RAW = 2, NBR_ORD_WAR = 4, NBR_ORD_WAW = 8, NBR_ORD_ALL = 15 };

typedef struct nbr_win {
    MPI_Win handle;  /* what the application holds (a vendor window) */
    MPI_Group group; /* the window's group (PSCW groups translate into it) */
    int rank, size, flavor;
    int acc_same_op; /* info accumulate_ops=same_op at creation (else same_op_no_op, the default) */
    /* Intra-epoch scheduling (002 §4; epoch.c): a Put/Get to a shm peer of at least sched_th
     * bytes in a ready epoch is held until the closing call or a flush; NBR_AINT_MAX when the
     * scheduler is off or no pair of the window is remote (nothing to overlap the copies with). */
    MPI_Aint sched_th;
    int sched; /* the scheduler is on (nbrma_sched / NBRMA_SCHED) */
    int issue_cfg; /* NBRMA_ISSUE / nbrma_issue (below, issue_delayed; in a 4-byte hole here) */
    MPI_Aint sched_bytes; /* its threshold as set, whether or not it applies (Win_get_info) */
    unsigned char cma;       /* peers reach my memory with CMA (create, dynamic) */
    unsigned char priv_kind; /* NBR_PRIV_*: where priv (below) came from */
    unsigned char ctl_kind;  /* NBR_CTL_*: where ctl_block came from */
    unsigned char lock_q;    /* NBRMA_LOCK / nbrma_lock is queued (lock.c; fixed at creation: the
                                control block then holds the queue nodes; in a 1-byte hole) */
    int acc_native;  /* every rank said same_op and every eligible accumulate of the window can
                        use atomic instructions (op.c, rma.c; MPI-3.1 §11.2.1) */
    void *base;
    MPI_Aint bytes;
    int disp_unit;
    /* Strategy settings, a byte each in the 4 bytes one int took (window metadata is gated to
     * the byte: ci/baselines' metadata_base_*). */
    unsigned char fence_rs;  /* NBRMA_FENCE / nbrma_fence is reduce_scatter (below, rs_*) */
    unsigned char noncontig; /* NBRMA_NONCONTIG / nbrma_noncontig: NBR_NC_* (rma.c) */
    unsigned char acc_hw;    /* NBRMA_ACC / nbrma_acc: NBR_ACC_* (004's lock + get + put, ucx.c;
                                per pair: nbr_acc_hw) */
    unsigned char acc_order; /* info accumulate_ordering (MPI-3.1 §11.7.2): NBR_ORD_* bits; 0 is
                                "none" */
    nbr_ctl_t *ctl; /* mine */
    nbr_target_t *t;       /* the descriptors, one per rank (lazy: reserved, made on first use) */
    struct nbr_lazy *lazy; /* NBRMA_META=lazy in force (win.c, nbr_tgt), else NULL */
    struct nbr_cdirent *cdir; /* a one-node create window's directory (rank 0's, mapped), or NULL */
    size_t cdir_len;          /* ... its bytes: rank 0 allocated it and counts it */
    /* Application-level epochs (MPI-3.1 §11.5): what is open now. */
    nbr_epoch_t *fence_ep;   /* open fence epoch (access and exposure) */
    nbr_epoch_t *start_ep;   /* open PSCW access epoch */
    nbr_epoch_t *post_ep;    /* open PSCW exposure epoch */
    nbr_epoch_t *all_ep;     /* open lock_all epoch */
    int nlocked;             /* open lock epochs */
    int rs_hold;             /* the open fence epoch is a reduce-scatter one (below, rs_*) */
    unsigned long epoch_ops; /* RMA calls since the last fence (may a fence epoch give way?) */
    int all_direct;          /* the open fence or lock_all epoch is ready: calls go to memory */
    int replaying;           /* carrying out recorded calls: their epoch is ready */
    int want_req;            /* an R-variant is running: a recorded call gets a request */
    int rs_comm_ok;          /* rs_comm was duplicated (below, rs_*) */
    nbr_req_t *got_req;      /* ... and here it is */
    /* Internal lifetimes: every epoch not yet done, in opening order (000 §VII-A). Deferred
     * epochs are a suffix of the queue (activation is in order, rule 4): `frontier` is its first.
     * closed[c]: the closed, not yet done epochs of class c in closing order — the activation
     * predicate only looks at their heads, so it costs O(1) however many epochs wait. */
    nbr_epoch_t *q_head, *q_tail, *frontier;
    nbr_epoch_t *closed_head[NBR_NCLASS], *closed_tail[NBR_NCLASS];
    int ndeferred, npending;
    nbr_epoch_t *all_head, *all_tail; /* LOCK_ALL epochs waiting for the global lock */
    nbr_epoch_t *fence_wait;          /* the fence epoch waiting at a barrier ... */
    uint64_t fence_wait_no;           /* ... for this fence number */
    int fence_scan;                   /* peers already seen there */
    int rs_yielded; /* the last fence epoch was a reduce-scatter one that start/post/lock/lock_all
                       ended: the next fence still closes one (empty), as every other rank's does */
    nbr_source_t src_all, src_fence;
    /* Remote completions (transport/tp.h): closed epochs and flushes whose calls were all
     * carried out, waiting for the targets' acknowledgements. */
    nbr_source_t src_quiet;
    nbr_epoch_t *quiet_head, *quiet_tail;
    nbr_flush_t *fq_head;
    int nremote;   /* peers reached through a remote transport (0: a one-node window) */
    int amid;      /* my id of this window among the am transport's (-1: none) */
    long tp_out;   /* my remote operations not yet complete */
    long tp_tries; /* my remote lock tries in flight (not operations: see transport/am.c) */
    int tp_err;    /* the first error a target reported, for the next completion to raise */
    int unordered; /* some remote pair's operations may take effect out of order (RDMA) */
    void *tp;      /* the transports' state of the window (ucx: registrations) */
    nbr_req_t *op_req; /* the request the current call's remote operations complete */
    void *priv;        /* MPI_Win_allocate across nodes: my memory (win.c's priv_alloc) */
    nbr_epoch_t *rec_head, *rec_tail;  /* epochs holding recorded calls, by first age */
    nbr_epoch_t *held_head, *held_tail; /* ready epochs holding calls the scheduler deferred */
    nbr_flush_t *fla_head, *fla_tail;  /* flush_all requests waiting, by age */
    int nflushes;                      /* flush requests waiting */
    int held_remote; /* a call toward another node was ever held (delayed issue) */
    nbr_epoch_t *ep_free; /* recycled epoch objects */
    nbr_req_t *spare_req; /* a request no one holds, for the next nonblocking call (request.c) */
    uint64_t seq;         /* epoch open/close events */
    uint64_t age;         /* recorded RMA calls */
    uint64_t fence_calls; /* fence calls so far (collective: equal on every rank) */
    int excl_global;      /* exclusive locks registered in the global word (001 §2.3) */
    unsigned flags;       /* NBR_AAAR... */
    nbr_region_t *regs;   /* dynamic: my attached regions, sorted by base, disjoint */
    int nregs, rcap;
    void **zregs; /* dynamic: zero-size regions (cover nothing; detachable) */
    int nzregs, zcap;
    int named; /* the application set a name (MPI_Win_set_name) */
    int nhandoff; /* queued lock: released locks still being handed on (epoch.c; a hole here) */
    void *ctl_block; /* my control block with its header (arena.c) */
    size_t ctl_size;
    void *sym; /* symmetric allocation (symheap.c): rank r's memory at sym + r * sym_stride */
    size_t sym_stride, sym_total;
    /* Memory accounting (stats.c): this window's share of the process's gauges. */
    nbr_gauge_t st_meta, st_epochs, st_ops, st_flushes;
    /* Issuing (004 §III-D): delayed queues every call of a ready epoch as a held recording until
     * the closing call or a flush; request-based calls are recorded unheld (carried out at once,
     * after what is queued). */
    int issue_delayed; /* in force: issue_cfg, or an open reduce-scatter fence epoch (rs_hold) */
    /* (The 4-byte fields of the strategies sit in holes of this struct, gdb ptype /o: the CI gate
     * counts this object's bytes.) Fence algorithm (004 §III-C1): fence_rs the setting
     * (NBRMA_FENCE / nbrma_fence); rs_hold
     * while the open fence epoch is a reduce-scatter one (its calls are held: issue_delayed);
     * rs_comm (a duplicate of the window's communicator, rs_comm_ok) carries the
     * MPI_Ireduce_scatter_block of rs_flags (one int per peer: O(P), counted in st_meta);
     * rs_expect: notifications due over all fences (ctl->rs_arrived reaches it). */
    MPI_Comm rs_comm;
    int *rs_flags;
    uint64_t rs_expect;
} nbr_win_t;

/* ---- window metadata: table or lazy (paper 004 §III-B, F3; win.c) -----------------------------
 * table: w->t holds a descriptor per rank, filled at creation (O(P) bytes per window in every
 * process). lazy (NBRMA_META / nbrma_meta): MPI_Win_allocate on one node — 004's case where
 * metadata can be O(1) (symmetric allocation). Rank r's memory is at sym + r·stride in every
 * process (symheap.c; the stride is the largest rank's size, when sizes differ), and each rank
 * writes where its control block lives, its size and its disp_unit into its own entry of a
 * directory at the end of the symmetric segment; a descriptor is computed from those the first
 * time the rank is used (004 keeps O(P) for disp_units that differ; the directory is the
 * node's, one entry per rank in shared memory, not a table in every process). w->t is then address
 * space reserved for P descriptors, not memory: a page is only backed once a descriptor on it is
 * made (mmap MAP_NORESERVE; memory O(pages used), counted by page). So every lookup stays &w->t[r],
 * with no test, for table and lazy windows alike; only where a rank can be used for the first time
 * (nbr_tgt) is there a test of t->made. An unmade descriptor is zero: size 0 and base NULL fail
 * every fast path's checks, which then take the full path, and that makes it. Made under the big
 * lock, as every entry point runs. */
typedef struct {
    int pid;
    int disp_unit;       /* its own (lazy windows whose ranks' sizes or disp_units differ) */
    uint64_t inc;        /* its control block's incarnation for this window */
    nbr_arena_ref_t ctl; /* its control block, with the header line before it (arena.c) */
    MPI_Aint size;       /* its memory's bytes (at most the stride) */
} nbr_dirent_t;
/* MPI_Win_create on one node (lazy): every rank's memory is its own, so its descriptor cannot be
 * computed; it is looked up on demand in a directory of one entry per rank that rank 0 allocates
 * in its node-shared arena (O(P) once per node, where the table is O(P) in every process) and
 * each rank fills with its own entry before the creation's allgather. */
typedef struct nbr_cdirent {
    MPI_Aint addr, size; /* its memory: its own address (CMA), bytes */
    uint64_t inc;        /* its control block's incarnation for this window */
    nbr_arena_ref_t ctl; /* its control block (arena.c) */
    nbr_mem_ref_t mem;   /* its memory in an MPI_Alloc_mem segment (mem_ok): node peers map it */
    int pid, disp_unit, mem_ok, zero;
} nbr_cdirent_t;
typedef struct nbr_lazy {
    size_t len;  /* the reservation's bytes (whole pages) */
    size_t page; /* the page size it was counted in */
    long made;   /* descriptors made */
    long pages;  /* pages backed (counted in the window's metadata) */
} nbr_lazy_t;
/* The symmetric segment's directory (every symmetric allocate window has one, table or lazy). */
static inline nbr_dirent_t *nbr_sym_dir(const nbr_win_t *w)
{
    return (nbr_dirent_t *)((char *)w->sym + w->sym_stride * (size_t)w->size);
}
void nbr_tgt_make(nbr_win_t *w, int r) __attribute__((cold));
/* Rank r's descriptor where r may be used for the first time (the entry points: an RMA call's
 * target, a lock, a PSCW group member's engine state, a queued lock's neighbour): made then in a
 * lazy window (never fails short of memory, when it aborts the job with the reason). Making one
 * is a cache fill, not a change of the window: callers holding a const window may ask too.
 * Everywhere else — an open epoch's target or group member, a recorded call's target, rank 0
 * and this process — &w->t[r] is the descriptor, with no test. */
static inline nbr_target_t *nbr_tgt(const nbr_win_t *w, int r)
{
    nbr_target_t *t = &w->t[r];
    if (NBR_UNLIKELY(!t->made))
        nbr_tgt_make((nbr_win_t *)w, r);
    return t;
}
/* NBRMA_ACC for the pair toward r (004 §III-A, Fig. 1; F2): hw as set, or auto where the
 * transport maps r's memory into this process. There the protocol's get and put are copies and
 * it ran 2.5–14x ahead of one message the target's CPU applies; across a network the message
 * wins (docs/experiments-f.md, F2). Both hold r's accumulate lock, so mixed pairs stay atomic. */
static inline int nbr_acc_hw(const nbr_win_t *w, int r)
{
    return w->acc_hw == NBR_ACC_HW || (w->acc_hw == NBR_ACC_AUTO && w->t[r].mapped);
}
/* The descriptors that exist, one per call, NULL after the last: every rank's (table), the ones
 * made so far (lazy). *it starts at 0. O(P) steps (window free, MPIX_Win_get_stats). */
nbr_target_t *nbr_tgt_next(nbr_win_t *w, int *it);
/* Rank r's control block (and its incarnation, when inc is not NULL) without making its
 * descriptor: what the fence and MPI_Win_free scan of every peer of a node. */
nbr_ctl_t *nbr_tgt_ctl(nbr_win_t *w, int r, uint64_t *inc);

extern int nbr_impl_ref; /* 1: new windows are served by ref */
extern long nbr_spin;    /* polls before a wait yields (NBRMA_SPIN, or chosen per node) */
extern int nbr_nwins;    /* live ref windows (progress only runs when > 0) */

nbr_win_t *nbr_win_lookup_slow(MPI_Win win);
/* Each thread remembers its last lookup; freeing any window bumps nbr_win_gen, which makes every
 * thread's memory stale (a new window may get a freed one's handle). */
extern uint64_t nbr_win_gen;
extern _Thread_local MPI_Win nbr_tl_handle NBR_TLS_MODEL;
extern _Thread_local nbr_win_t *nbr_tl_win NBR_TLS_MODEL;
extern _Thread_local uint64_t nbr_tl_gen NBR_TLS_MODEL;
/* The window a handle names, or NULL for a vendor window. Two compares on the fast path. */
static inline nbr_win_t *nbr_win_find(MPI_Win win)
{
#ifdef NBR_PERF_CANARY
    /* Deliberate extra work on every window entry point (put's fast path included), for the test
     * that shows the deterministic performance gate can fail (ci/perf/test_perfgate.sh). */
    for (volatile int i = 0; i < NBR_PERF_CANARY; i++)
        ;
#endif
    if (NBR_LIKELY(win == nbr_tl_handle &&
                   nbr_tl_gen == __atomic_load_n(&nbr_win_gen, __ATOMIC_RELAXED)))
        return nbr_tl_win;
    return nbr_win_lookup_slow(win);
}
/* Dynamic windows: are bytes [lo, hi) (absolute addresses at `rank`) attached? MPI_SUCCESS,
 * MPI_ERR_RMA_RANGE, or another code when rank's table could not be read. */
int nbr_region_check(nbr_win_t *w, int rank, MPI_Aint lo, MPI_Aint hi);
int nbr_cma_windows(void); /* live windows whose peers use CMA (PR_SET_PTRACER set while > 0) */

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
/* Raise an error code that already exists (a replayed call's, reaching MPI_Wait) through the
 * handler of the window `win` names, or MPI_COMM_WORLD's once that window is gone. */
int nbr_err_raise(MPI_Win win, int code);

/* ---- waiting and progress (progress.c) ------------------------------------------------------- */

void nbr_progress(void);
void nbr_vendor_progress(void); /* run the vendor's progress engine once (MPI-3.1 §3.5) */
void nbr_progress_init(void);     /* after MPI_Init: the probe's private communicator */
void nbr_progress_finalize(void);
int nbr_wait_req(MPI_Request *req); /* PMPI_Test + yield */
int nbr_wait_req_status(MPI_Request *req, MPI_Status *st);
int nbr_barrier(MPI_Comm comm);     /* nonblocking barrier + nbr_wait_req */
/* A request already complete (R-variants, epoch calls that completed inside the call): one of
 * the MPI library's inactive persistent requests that libnbrma pools and its wait/test wrappers
 * complete (progress.c, "requests that are complete from birth"), else a generalized request. */
int nbr_req_done_slow(MPI_Request *req);
extern MPI_Request *nbr_pool_free; /* the pool's free handles (progress.c) ... */
extern int nbr_pool_nfree;         /* ... and how many: taken here without a lock when single */
extern int nbr_locking; /* (declared with the thread-safety helpers below) */
static inline int nbr_req_done(MPI_Request *req)
{
    if (NBR_LIKELY(!nbr_locking && nbr_pool_nfree)) {
        *req = nbr_pool_free[--nbr_pool_nfree];
        return MPI_SUCCESS;
    }
    return nbr_req_done_slow(req);
}
int nbr_req_cheap(void); /* nbr_req_done hands out pooled requests (not generalized ones) */
/* One step of a wait loop: relax (nbr_relax) after NBRMA_SPIN polls, releasing the big lock meanwhile
 * so other threads (the progress thread among them) get in. */
void nbr_wait_step(long *spins);
void nbr_relax(void); /* give the core away for a moment (NBRMA_RELAX) */
enum { NBR_RELAX_AUTO, NBR_RELAX_YIELD, NBR_RELAX_SLEEP, NBR_RELAX_SPIN };
extern int nbr_relax_mode; /* NBRMA_RELAX */

/* ---- synchronization (sync.c) and the engine (epoch.c) --------------------------------------- */

#define NBR_FLUSH_ALL (-0x7fffffff) /* not a rank, nor any MPI constant */
int nbr_group_ranks(nbr_win_t *w, MPI_Group g, int **ranks, int *n);
/* g's ranks in `to` (malloc'ed, *n of them); MPI_ERR_GROUP when one is not in `to`. */
int nbr_group_translate(MPI_Group g, MPI_Group to, int **ranks, int *n);
void nbr_acc_lock(nbr_target_t *t, int me);
void nbr_acc_unlock(nbr_target_t *t);
/* Lock words (lock.c): one try each, never waiting; toward a remote target a try is in flight
 * until its cell holds the answer (0 meanwhile). */
int nbr_try_lock_shared(nbr_win_t *w, int r, nbr_tp_cell_t *c);
int nbr_try_lock_global_excl(nbr_win_t *w, nbr_tp_cell_t *c);
int nbr_try_lock_writer(nbr_win_t *w, int r, nbr_tp_cell_t *c);
/* The queued lock (lock.c, NBRMA_LOCK=queued): an exclusive lock's queue steps after the global
 * word (then the writer bit), and one step of handing a released one to the successor. */
int nbr_try_lock_queued(nbr_win_t *w, nbr_epoch_t *e);
int nbr_lock_handoff(nbr_win_t *w, int t);
/* The global word through its queue (queued windows): lock_all, or an exclusive lock's
 * registration. */
static inline nbr_lockq_t *nbr_lockq(nbr_win_t *w, int t)
{
    return t < w->size ? w->t[t].q->lq : w->t[0].q->lq + 1;
}
int nbr_try_global_queued(nbr_win_t *w, nbr_epoch_t *e);
int nbr_try_lock_all(nbr_win_t *w, nbr_tp_cell_t *c);
void nbr_unlock_shared(nbr_win_t *w, int r);
void nbr_unlock_writer(nbr_win_t *w, int r);
void nbr_unlock_target(nbr_win_t *w, int r); /* nbr_unlock_writer's halves */
void nbr_unlock_global_excl(nbr_win_t *w);
void nbr_unlock_all_word(nbr_win_t *w);
/* A remote operation of a request-based call completed (transport/am.c). */
void nbr_req_op_done(nbr_req_t *r, int err);
/* The call that issued r's operations is over: the last completion finishes it (now if none is
 * in flight). */
void nbr_req_arm(nbr_req_t *r);

nbr_epoch_t *nbr_epoch_new(nbr_win_t *w, int kind);
void nbr_epoch_free(nbr_win_t *w, nbr_epoch_t *e); /* never enqueued */
/* Allocate the per-peer engine state an epoch will need (LOCK: its target; START, POST: its
 * group), so that activating it later cannot fail. MPI_ERR_NO_MEM on failure. A lock toward a
 * target that has its state already (every lock after the first) costs one test. */
int nbr_epoch_peers_alloc(nbr_win_t *w, nbr_epoch_t *e);
static inline int nbr_epoch_peers(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->kind == NBR_EK_LOCK && w->t[e->target].q)
        return MPI_SUCCESS;
    return nbr_epoch_peers_alloc(w, e);
}
void nbr_epoch_enqueue(nbr_win_t *w, nbr_epoch_t *e);
void nbr_win_engine_init(nbr_win_t *w); /* at creation */
/* Close e at application level; its completion will finish `req` (may be NULL). */
void nbr_epoch_close(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req);
/* Drop an epoch that carried nothing (a fence epoch another kind of epoch replaces). */
void nbr_epoch_drop(nbr_win_t *w, nbr_epoch_t *e);
void nbr_epoch_set_direct(nbr_win_t *w, nbr_epoch_t *e, int on);
void nbr_epoch_pool_free(nbr_win_t *w);
/* Advance a just opened or closed epoch, then run the engine. */
void nbr_epoch_kick(nbr_win_t *w, nbr_epoch_t *e);
/* Enqueue e and run the engine, activating e at once when nothing else is queued. */
void nbr_epoch_open(nbr_win_t *w, nbr_epoch_t *e);
/* Close a ready LOCK/LOCK_ALL epoch holding no recorded call and complete it at once when the
 * engine is idle (1, *err = its error); 0: not applicable, nothing was done. */
int nbr_epoch_close_direct(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req, int *err);
/* The reorder flags changed: the first deferred epoch may now pass. */
void nbr_win_flags_changed(nbr_win_t *w);
/* Record an RMA call into the open epoch covering `rank` (not ready yet; or ready, r->held: a
 * call the scheduler defers to the closing call or a flush, 002 §4). */
int nbr_record(nbr_win_t *w, const nbr_rec_t *r);
void nbr_rec_pool_drain(void); /* MPI_Finalize: the kept operation objects go back to malloc */
/* A flush toward `rank` (or NBR_FLUSH_ALL) is coming: the calls the scheduler held toward node
 * peers are carried out by the next engine sweep. */
void nbr_sched_release(nbr_win_t *w, int rank);
void nbr_issue_update(nbr_win_t *w); /* win.c: issue_delayed, sched_th from the settings */
/* The open epoch covering target `rank`, or NULL. */
nbr_epoch_t *nbr_access_epoch(nbr_win_t *w, int rank);
/* A flush toward `rank` (or NBR_FLUSH_ALL): NULL when nothing recorded is older (complete at
 * once), else the request that completes when those calls are carried out (rc on failure). */
nbr_req_t *nbr_flush_start(nbr_win_t *w, int rank, nbr_req_t *req, int *rc);
/* No recorded call toward rank (or any) waits to be carried out: a flush waits for remote
 * completions only. Inline: MPI_Win_flush's fast path across nodes asks it (epoch.c's
 * oldest_pending, the same lists). */
static inline int nbr_flush_nothing_recorded(const nbr_win_t *w, int rank)
{
    if (rank == NBR_FLUSH_ALL)
        return !w->rec_head || w->rec_head->first_age > w->age;
    const nbr_peer_q_t *q = w->t[rank].q;
    return !q || !q->run_head || q->run_head->age > w->age;
}
long nbr_pending_calls(nbr_win_t *w, int rank); /* recorded calls toward rank (tests; O(n)) */
/* Leave the engine's lists: nothing of the window is pending (MPI_Win_free). */
void nbr_win_engine_detach(nbr_win_t *w);
/* Engine work counters (tests check that per-call work does not grow with queue length). */
typedef struct {
    unsigned long progress_calls, epochs_advanced, sources_polled, records_replayed;
} nbr_engine_stats_t;
extern nbr_engine_stats_t nbr_engine_stats;

/* Requests: internal (blocking) or with a generalized request (nonblocking). References are
 * atomic: the MPI library drops the generalized request's from any thread. */
static inline void nbr_req_ref(nbr_req_t *r)
{
    __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
}
nbr_req_t *nbr_req_new(nbr_win_t *w);
nbr_req_t *nbr_req_blocking(nbr_win_t *w);
/* A fresh request from the window's spare (or malloc), and back when it turned out unneeded
 * (nobody else holds it): nonblocking calls that complete inside the call cost no allocation. */
nbr_req_t *nbr_req_spare(nbr_win_t *w);
void nbr_req_unspare(nbr_win_t *w, nbr_req_t *r);
/* Make sure the window has a spare, so that the next nbr_req_spare cannot fail. */
static inline int nbr_req_spare_ready(nbr_win_t *w)
{
    return w->spare_req || (w->spare_req = nbr_req_new(w)) != NULL;
}
int nbr_req_expose(nbr_req_t *r, MPI_Request *req); /* create the generalized request */
void nbr_req_finish(nbr_req_t *r, int err);         /* complete (engine side) */
void nbr_req_release(nbr_req_t *r);                 /* drop the engine's reference */
int nbr_req_wait(nbr_req_t *r);                     /* progress until done; returns its error */
/* The request behind an MPI_Request handle that libnbrma exposed, with a reference taken
 * (release with nbr_req_release), or NULL for any other request. */
nbr_req_t *nbr_req_lookup(MPI_Request h);
void nbr_req_finish_queued(void); /* MPI_Grequest_complete what the progress thread finished */
int nbr_req_registered(void);     /* exposed requests not freed yet (their errors are routed) */
int nbr_engine_busy(void);        /* the engine has epochs to advance or words to poll */
void nbr_mark_progress_thread(void);
/* The progress thread and passive progress across nodes (thread.c). */
void nbr_progress_after_create(int win_rank); /* after a window's creation: start it if due */
int nbr_thread_serves(void);     /* it runs and may call MPI: blocking calls need not serve */
const char *nbr_async_check(void); /* why NBRMA_ASYNC_PROGRESS is not valid, or NULL */
extern int nbr_xnode;            /* the job spans more than one (possibly virtual) node */
extern int nbr_xnode_thread;     /* ... and the progress thread will serve other nodes */
extern int nbr_coll_serve;       /* ... so blocking collectives serve (blocking.c) */
extern unsigned long nbr_polls;  /* wait polls of application threads (the thread keeps out) */
/* The thread naps between polls when nothing moves; a nonblocking synchronization call that
 * leaves an epoch for the engine wakes it (thread.c, "The nap"). Decided under the big lock,
 * the wake-up sent after it. */
extern int nbr_thread_napping;
void nbr_thread_kick(void);
static inline int nbr_kick_wanted(void)
{
    return NBR_UNLIKELY(__atomic_load_n(&nbr_thread_napping, __ATOMIC_RELAXED)) &&
           nbr_engine_busy();
}
int nbr_world_nodes(void);       /* nodes of MPI_COMM_WORLD (win.c), -1 if unknown */

/* Thread safety. With MPI_THREAD_MULTIPLE or the progress thread, every entry point that touches
 * libnbrma state holds the big lock (a mutex with a per-thread depth, so waits can release it
 * whole); otherwise the lock is one predictable branch. */
extern int nbr_locking;
extern int nbr_thread_level; /* what the MPI library provided at initialization */
int nbr_in_progress_thread(void); /* the caller is the progress thread: no MPI call allowed */
/* The lock's word and this thread's depth (thread.c says how the word works). Taking and letting
 * go are inline: on the fast paths across nodes every entry point takes the lock, and the two
 * calls cost ~45 instructions of a put + flush. nbr_big_single: the application calls from one
 * thread at a time, and its release is a plain store (thread.c); nbr_big_helper: this thread is
 * the progress thread. */
extern int nbr_big_word;
extern _Thread_local int nbr_big_depth __attribute__((tls_model("initial-exec")));
extern _Thread_local int nbr_big_helper __attribute__((tls_model("initial-exec")));
extern int nbr_big_single;
void nbr_big_contended(int c); /* thread.c: wait for a lock found taken */
void nbr_big_wake(void);       /* thread.c: wake a waiter */
static inline void nbr_big_take(void)
{
    int c = 0;
    if (NBR_UNLIKELY(!__atomic_compare_exchange_n(&nbr_big_word, &c, 1, 0, __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED)))
        nbr_big_contended(c);
}
static inline void nbr_big_give(void)
{
    if (NBR_LIKELY(__atomic_load_n(&nbr_big_single, __ATOMIC_RELAXED) && !nbr_big_helper))
        __atomic_store_n(&nbr_big_word, 0, __ATOMIC_RELEASE);
    else if (NBR_UNLIKELY(__atomic_exchange_n(&nbr_big_word, 0, __ATOMIC_RELEASE) == 2))
        nbr_big_wake();
}
static inline void nbr_big_lock(void)
{
    if (nbr_big_depth++ == 0)
        nbr_big_take();
}
static inline void nbr_big_unlock(void)
{
    /* depth 0: nbr_locking was switched on between this thread's NBR_ENTER and NBR_LEAVE */
    if (nbr_big_depth > 0 && --nbr_big_depth == 0)
        nbr_big_give();
}
/* Around a blocking call of the MPI library (a collective: window creation and free): the big
 * lock let go whole, so another thread's collective that the peers need can run meanwhile. */
int nbr_big_held(void); /* the calling thread holds the big lock */
int nbr_big_release(void);
void nbr_big_reacquire(int depth);
#define NBR_UNLOCKED(call)                                                                         \
    ({                                                                                             \
        int d_ = nbr_big_release();                                                                \
        int r_ = (call);                                                                           \
        nbr_big_reacquire(d_);                                                                     \
        r_;                                                                                        \
    })
#define NBR_ENTER()                                                                                \
    do {                                                                                           \
        if (NBR_UNLIKELY(nbr_locking))                                                             \
            nbr_big_lock();                                                                        \
    } while (0)
#define NBR_LEAVE()                                                                                \
    do {                                                                                           \
        if (NBR_UNLIKELY(nbr_locking))                                                             \
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
/* Private memory of a node peer (CMA): n <= NBR_CMA_BATCH pieces in one system call. */
#define NBR_CMA_BATCH 1024 /* IOV_MAX on Linux */
typedef struct {
    void *local;
    MPI_Aint off; /* window displacement in bytes (dynamic: the address), bounds checked */
    size_t len;
} nbr_cma_piece_t;
int nbr_shm_cma_batch(nbr_win_t *w, int target, int write, const nbr_cma_piece_t *p, int n);

#endif
