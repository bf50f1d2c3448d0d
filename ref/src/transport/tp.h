/* tp.h — the transport seam: everything that crosses processes goes through here.
 *
 * CONTRACT. Each ordered pair (me, peer) of a window gets one transport when the window is
 * created (nbr_target_t.net): `shm` when the peer shares my node (load/store on mapped memory,
 * CMA for private memory, CPU atomics on its node-shared control block), `am` across nodes
 * (active messages over the vendor's point-to-point on a private communicator, am.c) or `ucx`
 * (RDMA through UCX, ucx.c) — the ops table below. The synchronization algorithms (epoch.c, lock.c) and the RMA calls
 * (rma.c) are written once against the functions below; which transport serves a pair is
 * decided here, never in them.
 *
 *   data        put/get of contiguous bytes at a byte offset of the peer's window (already range
 *               checked by the caller; dynamic windows: an absolute address, checked again at
 *               the target); accumulate delivery of contiguous whole elements of one predefined
 *               type (optionally fetching the old contents); compare-and-swap of one element.
 *   atomics     on the 64-bit control words of the peer's control block (the two-level lock of
 *               001 §2.3): fetch-add, conditional add (add unless masked bits are set — one
 *               round trip for a reader/writer try), compare-and-swap, swap. A call returns 1
 *               with the old value when it is known, 0 while it is in flight (the caller keeps
 *               the cell and asks again: the engine's tries never wait; lock.c). `_nr` forms
 *               want no result (releases).
 *   notifications  monotonic counters a rank raises toward one peer (PSCW posts and done ids,
 *               000 §VII-B) or toward all (fence arrivals, 000 rule 5); the reader always reads
 *               its own control block or, for shm fence counters, the peer's.
 *   completion  an operation toward a shm peer is complete when its call returns. Toward any
 *               other peer it is complete when the target acknowledged it (data written, or
 *               fetched data arrived here) or, over RDMA, when a flush of its endpoint
 *               completed (the transport's `flush`, which nbr_tp_quiet starts): nbr_tp_quiet(w, rank | NBR_FLUSH_ALL) says whether
 *               nothing the window issued toward rank (or anyone) is outstanding. Epochs and
 *               flushes wait for it; a request-based call's request (w->op_req) is finished
 *               when the last of its operations completes.
 *   errors      a failure at the target (e.g. an address no region covers) comes back with the
 *               acknowledgement; it is kept in w->tp_err and reported by the next completion
 *               (flush, closing call) through the window's error handler.
 *
 * Costs: the shm branches below are inline; a pair's transport is one byte compared on paths that
 * are not the put/get fast path (which only runs on mapped memory and never gets here). */
#ifndef NBR_TP_H
#define NBR_TP_H

#include "layout.h"
#include "nbr.h"

/* Control words reachable by remote atomics: fixed ones, then the queue nodes of the queued lock
 * (NBR_W_QNEXT(i) and NBR_W_QGRANT(i): fields of qnode[i] of the owner's control block; i = size
 * is the global word's queue). */
enum { NBR_W_LOCK = 0, NBR_W_GLOBAL, NBR_W_RS, NBR_W_QTAIL, NBR_W_GQTAIL, NBR_W_QNODE };
#define NBR_W_QNEXT(i)  (NBR_W_QNODE + 2 * (i))
#define NBR_W_QGRANT(i) (NBR_W_QNODE + 2 * (i) + 1)

/* Where a control word sits in a control block of a window of `size` ranks: its byte offset. */
static inline size_t nbr_ctl_word_off(int size, int word)
{
    if (word >= NBR_W_QNODE) {
        size_t i = (size_t)(word - NBR_W_QNODE);
        return nbr_ctl_qnode_off(size) + i / 2 * sizeof(nbr_qnode_t) +
               (i % 2 ? offsetof(nbr_qnode_t, grant) : offsetof(nbr_qnode_t, next));
    }
    return word == NBR_W_LOCK     ? offsetof(nbr_ctl_t, lock)
           : word == NBR_W_RS     ? offsetof(nbr_ctl_t, rs_arrived)
           : word == NBR_W_QTAIL  ? offsetof(nbr_ctl_t, qtail)
           : word == NBR_W_GQTAIL ? offsetof(nbr_ctl_t, gqtail)
                                  : offsetof(nbr_ctl_t, global);
}
/* Atomic operations: FADD old = w, w += a; CADD old = w, w += a unless (w & b); CAS old = w,
 * w = a if w == b; SWAP old = w, w = a. */
enum { NBR_AMO_FADD = 0, NBR_AMO_CADD, NBR_AMO_CAS, NBR_AMO_SWAP };
/* Notification slots (a rank's control block holds one of each per peer). */
enum { NBR_NS_POSTED = 0, NBR_NS_COMPLETED, NBR_NS_FENCE, NBR_NS_FREED };

/* ---- the ops table ----------------------------------------------------------------------------
 *
 * One table per transport that crosses nodes (shm, within a node, stays inline below: its
 * branches are the hot paths). A pair's table is nbr_tp_table[w->t[r].net]; adding a transport is
 * one file with one table and one entry in tp.c (docs/ref-internals.md, "The transport seam"). A
 * transport may take an entry from another one (ucx serves accumulates through am's: the target's
 * CPU, one path for every accumulate of a location, MPI-3.1 §11.7.1 — except the eligible pairs
 * of accumulate_ops=same_op windows, which every path serves with atomic instructions: op.c).
 *
 * `ordered`: a pair's operations take effect at the target in the order they were issued (am: its
 * requests are served in order). Only then may a lock release or a PSCW done notification follow
 * the data before the data is complete (epoch.c, remote_done); otherwise the closing call waits
 * for completion first. `flush`: completion needs a request of its own (RDMA: a put is complete
 * when a flush says so, not when anything comes back) — nbr_tp_quiet starts it for what is
 * outstanding toward r (or everyone); NULL where acknowledgements arrive by themselves. */
typedef struct {
    const char *buf;
    const nbr_run_t *run;
    int nrun, contig;
    int64_t extent, count, ebytes;
    MPI_Datatype pair; /* results of a padded pair type: written field by field */
    MPI_Aint pext;     /* its extent, or 0 */
} nbr_tp_side_t;

typedef struct nbr_tp_ops {
    const char *name;
    int ordered;
    int (*put)(nbr_win_t *w, int r, MPI_Aint off, const void *src, size_t len);
    int (*get)(nbr_win_t *w, int r, MPI_Aint off, void *dst, size_t len);
    int (*acc)(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic, const void *src,
               void *result, size_t len);
    int (*cas)(nbr_win_t *w, int r, MPI_Aint off, const void *val, const void *cmp, void *result,
               size_t n);
    int (*amo)(nbr_win_t *w, int r, int word, int op, uint64_t a, uint64_t b, nbr_tp_cell_t *c,
               uint64_t *old);
    void (*notify)(nbr_win_t *w, int r, int slot, uint64_t v);
    int (*put_packed)(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      const nbr_tp_side_t *src, int64_t total);
    int (*get_packed)(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      const nbr_tp_side_t *dst, int64_t total);
    int (*acc_packed)(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      MPI_Op op, MPI_Datatype basic, MPI_Aint ext, const nbr_tp_side_t *src,
                      const nbr_tp_side_t *res, int64_t total);
    int (*regions)(nbr_win_t *w, int r); /* copy r's region table into w->t[r].rcache */
    void (*flush)(nbr_win_t *w, int r);  /* or NULL (above) */
} nbr_tp_ops_t;

extern const nbr_tp_ops_t *const nbr_tp_table[NBR_NET_N]; /* tp.c; shm's entry is NULL */
extern int nbr_tp_on; /* windows with remote pairs exist, or remote traffic is outstanding */
extern unsigned long nbr_tp_served; /* requests served, replies and completions (progress thread) */
void nbr_tp_init(void);     /* MPI_Init */
void nbr_tp_finalize(void); /* MPI_Finalize */
void nbr_tp_progress(void); /* step 1 of the engine: every transport's completions and service */
/* Only the completions of transports that complete operations without the am service (ucx's
 * worker; am's service polls the MPI library): a wait's cheap first poll (sync.c). */
void nbr_tp_poll_completions(void);
/* One step of a wait inside a call issuing on w (am.c, ucx.c): nbr_wait_step with the call's
 * request context put aside, so another thread issuing meanwhile does not join it (tp.c). */
void nbr_tp_call_wait_step(nbr_win_t *w, long *spins);
long nbr_tp_outstanding(void); /* operations in flight, all windows and transports */

/* ---- the active-message transport (am.c) ----------------------------------------------------- */

extern const nbr_tp_ops_t nbr_tp_am_ops;
void nbr_am_init(void);     /* MPI_Init: the private communicator and posted receives */
void nbr_am_finalize(void); /* MPI_Finalize: drain, cancel, free */
void nbr_am_progress(void); /* serve incoming requests, collect replies and completions */
int nbr_am_ready(void);     /* the transport could be set up (else windows across nodes fail) */
int nbr_am_win_register(nbr_win_t *w); /* returns the window's id (>= 0) or -1 */
void nbr_am_win_unregister(nbr_win_t *w);
long nbr_am_outstanding(void); /* tokens in flight, all windows (tests) */
/* Requests issued so far, and how many were packed (tests: a transpose is one message, not a
 * million). Packed transfers (layout.h; paper 004 §III-A) carry the target's layout in wire form
 * (at most 4096 bytes) and split `total` bytes of packed stream into messages the target
 * scatters (put), gathers (get) or applies (accumulate, whole elements; `res` receives the old
 * contents when not NULL). The origin's side is a cursor over its buffer; `contig`: its buffer
 * is the stream itself. */
extern unsigned long nbr_am_sent, nbr_am_sent_packed;
/* Its operations (the table's entries), which other transports may take into their tables. */
int nbr_am_put(nbr_win_t *w, int r, MPI_Aint off, const void *src, size_t len);
int nbr_am_get(nbr_win_t *w, int r, MPI_Aint off, void *dst, size_t len);
int nbr_am_acc(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic, const void *src,
               void *result, size_t len);
int nbr_am_cas(nbr_win_t *w, int r, MPI_Aint off, const void *val, const void *cmp, void *result,
               size_t n);
int nbr_am_amo(nbr_win_t *w, int r, int word, int op, uint64_t a, uint64_t b, nbr_tp_cell_t *c,
               uint64_t *old);
void nbr_am_notify(nbr_win_t *w, int r, int slot, uint64_t v);
int nbr_am_put_packed(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      const nbr_tp_side_t *src, int64_t total);
int nbr_am_get_packed(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      const nbr_tp_side_t *dst, int64_t total);
int nbr_am_acc_packed(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      MPI_Op op, MPI_Datatype basic, MPI_Aint ext, const nbr_tp_side_t *src,
                      const nbr_tp_side_t *res, int64_t total);
int nbr_am_regions(nbr_win_t *w, int r);

/* ---- the UCX transport (ucx.c; built unless make UCX=0) ------------------------------------- */

#ifndef NBR_HAVE_UCX
#define NBR_HAVE_UCX 0
#endif
/* Dynamic windows over UCX: the packed key of the owner's region holding an address, fetched
 * with an am request (at most NBR_UCX_KEY_MAX bytes) and served by the owner's ucx.c. */
#define NBR_UCX_KEY_MAX 2048
int nbr_am_rkey(nbr_win_t *w, int r, uint64_t addr, void *buf, size_t cap, size_t *len,
                uint64_t *base, uint64_t *size);
int nbr_ucx_rkey_serve(nbr_win_t *w, uint64_t addr, void *buf, size_t cap, size_t *len,
                       uint64_t *base, uint64_t *size);
#if NBR_HAVE_UCX
extern const nbr_tp_ops_t nbr_tp_ucx_ops;
extern int nbr_ucx_on; /* windows with ucx pairs exist, or were created (its worker runs) */
/* The across-node fast paths (docs/ref-internals.md, "Fast paths across nodes"): a put or get of
 * n contiguous bytes at byte offset off of a static window's pair r (range checked by the caller),
 * called by rma.c's rw_fast without the ops table; and the start of pair r's flush, called by
 * sync.c's flush_fast. Same effects as the table's put, get and flush. */
int nbr_ucx_rw(nbr_win_t *w, int r, MPI_Aint off, void *buf, size_t n, int write);
void nbr_ucx_flush_pair(nbr_win_t *w, int r);
/* rma.c's acc_tp_fast: the table's acc for an (op, basic) pair of a same_op window that UCP's
 * atomics of s bytes serve (nbr_op_atomic_native's answer, which the caller has). */
int nbr_ucx_acc_fast(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic, int s,
                     const void *src, void *result, size_t len);
#endif
/* NBRMA_NET for a window whose group spans nodes: NBR_NET_AM or NBR_NET_UCX wanted, "auto"
 * (UCX where it reaches the peer, else am), or -1 and a reason in why. */
enum { NBR_NET_WANT_AUTO = -2 };
int nbr_tp_net_select(const char *net, char *why, size_t n);
/* A window's pairs on other nodes get their transport (win.c, collective over comm, after the
 * peers' descriptors are known and before any RMA): UCX set-up and key exchange when wanted.
 * Returns an MPI error class (and the reason in why) that the caller agrees on. */
int nbr_tp_win_setup(nbr_win_t *w, MPI_Comm comm, int want, char *why, size_t n);
/* MPI_Win_allocate's memory for a rank alone on its node in a window that spans nodes (win.c,
 * before nbr_tp_win_setup): the transport's own, zeroed, which it frees at teardown. UCX
 * allocates it (UCP_MEM_MAP_ALLOCATE): its shared-memory transports map such memory into the
 * origins, which then put, get and apply atomics without this process's CPU, and an RDMA
 * transport registers it once. NULL where the window's pairs will not go through UCX or UCX
 * cannot allocate: the caller falls back to private memory. */
void *nbr_tp_win_alloc(nbr_win_t *w, size_t size);
extern int nbr_ucx_alloc_max; /* at most this many live at a time (ucx.c; 1024) */
/* The control block of a rank alone on its node in a window spanning nodes (win.c): allocated by
 * the transport likewise (zeroed, with its header line), so that the other nodes' lock words,
 * notifications and counters land on it without this process's CPU (UCX over shared memory maps
 * it; RDMA registers it once). NULL when the pairs will not go through UCX or UCX cannot
 * allocate (the cap above counts these too): the caller takes an arena block.
 * nbr_tp_ctl_free gives it back after the transport's teardown. */
void *nbr_tp_ctl_alloc(size_t size);
void nbr_tp_ctl_free(void *block);
void nbr_tp_win_teardown(nbr_win_t *w); /* after the free barrier */
/* Dynamic windows: the bytes a transport keeps about regions (ucx: my registrations and their
 * packed keys, the owners' regions whose keys it fetched), in MPIX_Win_get_stats' region_bytes. */
long long nbr_tp_region_bytes(const nbr_win_t *w);
#if NBR_HAVE_UCX
long long nbr_ucx_region_bytes(const nbr_win_t *w);
#endif
/* Dynamic windows: a region attached / detached (UCX registers it). */
int nbr_tp_attach(nbr_win_t *w, void *base, MPI_Aint size);
void nbr_tp_detach(nbr_win_t *w, const void *base);
/* Start completing what is outstanding toward r (or everyone) on transports that complete on
 * request (w->unordered: ucx's endpoint flushes). */
void nbr_tp_flush(nbr_win_t *w, int r);
/* Free: whether what a transport sends without counting it (ucx's notifications) has landed;
 * asks for it when not. The free barrier waits for it before its notices go out. */
int nbr_tp_settled(nbr_win_t *w);
/* Counters by transport (tests: the bytes went through UCX, not am). */
typedef struct {
    unsigned long puts, gets, amos, flushes, bytes_put, bytes_got;
    unsigned long accs, bytes_acc; /* accumulate atomics (accumulate_ops=same_op windows) */
    unsigned long fences; /* ucp_worker_fence calls that ordered accumulates (accumulate_ordering) */
    unsigned long acc_locked, bytes_locked; /* NBRMA_ACC=hw: accumulate pieces carried out with
                                               004's lock + get + put protocol, their bytes */
    unsigned long win_allocs; /* MPI_Win_allocate memory UCX allocated (nbr_tp_win_alloc) */
    unsigned long ctl_allocs; /* control blocks UCX allocated (nbr_tp_ctl_alloc) */
    unsigned long pairs_mapped; /* pairs whose target's window memory UCX maps here (ucp_rkey_ptr:
                                   NBRMA_ACC=auto and NBRMA_NONCONTIG=auto choose by it) */
    long long meta_bytes; /* the windows' transport state counted in their metadata now */
} nbr_ucx_stats_t;
/* A wait on a node's accumulate lock lets the UCX worker progress (ucx.c; nothing when UCX is
 * off): over TCP a remote holder's get, put and release need this process's worker. */
void nbr_ucx_poke(void);
extern nbr_ucx_stats_t nbr_ucx_stats;
/* What nbrma-settings prints about UCX: its version, and (verbose) the transports toward a peer
 * and the RDMA devices libibverbs sees. */
void nbr_ucx_describe(void *stream, int verbose);
/* The RDMA devices libibverbs sees and their ports (verbs.c; loaded at run time). */
void nbr_rdma_devices(void *stream);

/* The remote-only operations (the caller knows the pair is remote). */
static inline const nbr_tp_ops_t *nbr_tp_of(const nbr_win_t *w, int r)
{
    return nbr_tp_table[w->t[r].net];
}
static inline int nbr_tp_amo(nbr_win_t *w, int r, int word, int op, uint64_t a, uint64_t b,
                             nbr_tp_cell_t *c, uint64_t *old)
{
    return nbr_tp_of(w, r)->amo(w, r, word, op, a, b, c, old);
}


/* ---- dispatch -------------------------------------------------------------------------------- */

static inline int nbr_tp_remote(const nbr_target_t *t)
{
    return t->net != NBR_NET_SHM;
}

static inline uint64_t *nbr_tp_word(nbr_win_t *w, int r, int word)
{
    return (uint64_t *)((char *)w->t[r].ctl + nbr_ctl_word_off(w->size, word));
}

/* One atomic on a shm control word (acquire on the way in, release on the way out): the lock tries
 * of lock.c on shm peers, and the target's side of a remote one (am.c). */
static inline uint64_t nbr_tp_amo_shm(uint64_t *p, int op, uint64_t a, uint64_t b)
{
    uint64_t v;
    switch (op) {
    case NBR_AMO_FADD:
        return __atomic_fetch_add(p, a, __ATOMIC_ACQ_REL);
    case NBR_AMO_CADD:
        v = __atomic_load_n(p, __ATOMIC_RELAXED);
        while (!(v & b))
            if (__atomic_compare_exchange_n(p, &v, v + a, 1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                break;
        return v;
    case NBR_AMO_CAS:
        v = b;
        __atomic_compare_exchange_n(p, &v, a, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        return v;
    default:
        return __atomic_exchange_n(p, a, __ATOMIC_ACQ_REL);
    }
}

/* No result wanted (lock releases): toward a remote peer it still counts as outstanding. */
static inline void nbr_tp_amo_nr(nbr_win_t *w, int r, int word, int op, uint64_t a)
{
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[r]))) {
        if (op == NBR_AMO_FADD)
            __atomic_add_fetch(nbr_tp_word(w, r, word), a, __ATOMIC_RELEASE);
        else
            __atomic_store_n(nbr_tp_word(w, r, word), a, __ATOMIC_RELEASE);
        return;
    }
    nbr_tp_table[w->t[r].net]->amo(w, r, word, op, a, 0, NULL, NULL);
}

static inline void nbr_tp_notify(nbr_win_t *w, int r, int slot, uint64_t v)
{
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[r]))) {
        nbr_peer_ctr_t *p = &w->t[r].peer[w->rank];
        __atomic_store_n(slot == NBR_NS_POSTED ? &p->posted : &p->completed, v, __ATOMIC_RELEASE);
        return;
    }
    nbr_tp_table[w->t[r].net]->notify(w, r, slot, v);
}

/* I reached fence `no` with my preceding epoch complete: shm peers read my own counter; remote
 * peers are told. */
static inline void nbr_tp_fence_signal(nbr_win_t *w, uint64_t no)
{
    if (__atomic_load_n(&w->ctl->fence, __ATOMIC_RELAXED) >= no)
        return;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my epoch's calls are visible first */
    __atomic_store_n(&w->ctl->fence, no, __ATOMIC_RELEASE);
    if (NBR_UNLIKELY(w->nremote))
        for (int r = 0; r < w->size; r++)
            if (nbr_tp_remote(&w->t[r]))
                nbr_tp_table[w->t[r].net]->notify(w, r, NBR_NS_FENCE, no);
}

static inline uint64_t nbr_tp_fence_seen(nbr_win_t *w, int r)
{
    if (NBR_UNLIKELY(w->lazy)) /* one node; no descriptor is made for a fence */
        return __atomic_load_n(&nbr_tgt_ctl(w, r, NULL)->fence, __ATOMIC_ACQUIRE);
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[r])))
        return __atomic_load_n(&w->t[r].ctl->fence, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&w->t[w->rank].peer[r].fence, __ATOMIC_ACQUIRE);
}

static inline int nbr_tp_put(nbr_win_t *w, int r, MPI_Aint off, const void *src, size_t len)
{
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[r])))
        return nbr_shm_write(w, r, off, src, len);
    return nbr_tp_table[w->t[r].net]->put(w, r, off, src, len);
}

static inline int nbr_tp_get(nbr_win_t *w, int r, MPI_Aint off, void *dst, size_t len)
{
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[r])))
        return nbr_shm_read(w, r, off, dst, len);
    return nbr_tp_table[w->t[r].net]->get(w, r, off, dst, len);
}

/* Nothing the window issued toward r (or anyone: NBR_FLUSH_ALL) is outstanding. When something
 * is and a transport completes operations only when asked (RDMA), ask it: every wait for
 * completion polls this. */
static inline long nbr_tp_out(const nbr_win_t *w, int r) /* outstanding toward r, or all */
{
    return r == NBR_FLUSH_ALL ? __atomic_load_n(&w->tp_out, __ATOMIC_ACQUIRE)
                              : __atomic_load_n(&w->t[r].tp_out, __ATOMIC_ACQUIRE);
}

static inline int nbr_tp_quiet(nbr_win_t *w, int r)
{
    if (nbr_tp_out(w, r) == 0)
        return 1;
    if (NBR_UNLIKELY(w->unordered)) {
        nbr_tp_flush(w, r);
        /* A flush of memory the origin maps (UCX over shared memory) completes in its call:
         * asked again, the window is quiet now, and the caller's poll of the transport (a
         * worker progress: ~150 instructions) is not needed. */
        return nbr_tp_out(w, r) == 0;
    }
    return 0;
}

#endif
