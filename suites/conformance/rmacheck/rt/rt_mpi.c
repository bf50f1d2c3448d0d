/* rt_mpi.c — the MPI side of rmacheck's runtime: wrappers for every window, RMA, synchronization
 * and request-completion call, and for the collectives and blocking point-to-point calls that
 * order processes. Each wrapper records one log line and forwards to the next definition of the
 * same symbol (dlsym RTLD_NEXT): the vendor MPI, or libnbrma when that is loaded after us, so the
 * same runtime checks programs on either.
 *
 * Ordering between processes is tracked with vector clocks: every recorded event ticks this
 * rank's entry; collectives (and window fences, creation, free) join all members' clocks with an
 * extra allreduce; post->start and complete->wait carry the clock in a message on a duplicate of
 * the window's communicator; a blocking send carries it to the receive on a duplicate of
 * MPI_COMM_WORLD. The analysis (rmacheck.py) decides happens-before from those clocks. */
#include "rt.h"
#include "../../../../harness/relax.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The next definition of a symbol, looked up once (threads racing on the first call both store
 * the same pointer). */
#define NEXT(name)                                                                                 \
    static __typeof__(&P##name) next_##name##_fp;                                                  \
    __typeof__(&P##name) next_##name = __atomic_load_n(&next_##name##_fp, __ATOMIC_ACQUIRE);       \
    if (!next_##name) {                                                                            \
        next_##name = (__typeof__(&P##name))dlsym(RTLD_NEXT, #name);                               \
        if (!next_##name)                                                                          \
            next_##name = &P##name;                                                                \
        __atomic_store_n(&next_##name##_fp, next_##name, __ATOMIC_RELEASE);                        \
    }

/* The big lock (rt.h): held while a wrapper reads or changes the runtime's state, dropped around
 * the call it forwards. */
#define LOCK() rc_big_lock()
#define UNLOCK() rc_big_unlock()

#define PC __builtin_return_address(0)
#define TAG_POST 1
#define TAG_COMPLETE 2

/* An exchange of events among a communicator's members (xg_start). */
typedef struct {
    MPI_Request r;
    uint64_t *b;
    int n;
} rc_xg_t;

typedef struct {
    MPI_Win win;
    int used;     /* 1: live (widx_of finds it); 2: being created or freed (taken, not found) */
    char gid[48];
    MPI_Comm shadow;
    int n, me;
    int *world;   /* window comm rank -> world rank */
    int *start;   /* start group (window comm ranks) */
    int nstart;
    int *post;    /* post group */
    int npost;
    MPI_Request *postrq; /* MPIX_Win_istart: the post clocks, received by the epoch's end */
    uint64_t *postvc;
    int npostrq;
    rc_xg_t fxg;     /* the last fence's exchange, joined late (MPI_Win_fence) */
    rc_ref_t fxg_ev; /* ... by this event */
} rc_win_t;

static rc_win_t wins[RC_MAXWIN];
static int to_world(MPI_Comm comm, int r);
static MPI_Comm wshadow = MPI_COMM_NULL;
static long win_counter;

/* Issue stamps: an RMA call is issued when its call returned (request-based calls are recorded
 * after it), a closing call (flush, unlock, complete, fence, free, a nonblocking closing call)
 * starts when it is recorded. A closing call completes only what was issued before it started:
 * with threads, another thread's operation recorded just before may reach MPI only after it. */
static uint64_t stamp_ctr;
static uint64_t stamp_next(void) { return ++stamp_ctr; }

/* MPI_Comm_free of a communicator of the runtime's own, without the big lock (collective). */
static void comm_free_unlocked(MPI_Comm *c)
{
    int d = rc_big_release();
    PMPI_Comm_free(c);
    rc_big_reacquire(d);
}

/* ---- handle tables -------------------------------------------------------------------------
 * Requests and matched messages are looked up by their handle at every completion: a hash table
 * keyed by the handle's bytes (an int in MPICH, a pointer in Open MPI), chained, growing with
 * its entries, O(1) expected per insert, find and delete. Entries embed rc_hnode_t first. */
_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request wider than 64 bits");
_Static_assert(sizeof(MPI_Message) <= sizeof(uint64_t), "MPI_Message wider than 64 bits");

typedef struct rc_hnode {
    struct rc_hnode *next;
    uint64_t key;
} rc_hnode_t;

typedef struct {
    rc_hnode_t **b;
    size_t nb, n; /* buckets (a power of two), entries */
} rc_htab_t;

/* The key of a handle: its bytes (handle_key(&h, sizeof h), through the macros below). */
static uint64_t handle_key(const void *h, size_t n)
{
    uint64_t k = 0;
    memcpy(&k, h, n);
    return k;
}
#define req_key(r) handle_key(&(MPI_Request){(r)}, sizeof(MPI_Request))
#define msg_key(m) handle_key(&(MPI_Message){(m)}, sizeof(MPI_Message))
#define comm_key(c) handle_key(&(MPI_Comm){(c)}, sizeof(MPI_Comm))

static size_t ht_index(const rc_htab_t *t, uint64_t k)
{
    k ^= k >> 33; /* murmur3's finalizer: handles are small ints or aligned pointers */
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return (size_t)k & (t->nb - 1);
}

static rc_hnode_t *ht_find(const rc_htab_t *t, uint64_t k)
{
    if (!t->n)
        return NULL;
    for (rc_hnode_t *e = t->b[ht_index(t, k)]; e; e = e->next)
        if (e->key == k)
            return e;
    return NULL;
}

/* Unlinks and returns the entry with key k (NULL: none); the caller frees it. */
static rc_hnode_t *ht_remove(rc_htab_t *t, uint64_t k)
{
    if (!t->n)
        return NULL;
    for (rc_hnode_t **l = &t->b[ht_index(t, k)]; *l; l = &(*l)->next)
        if ((*l)->key == k) {
            rc_hnode_t *e = *l;
            *l = e->next;
            t->n--;
            return e;
        }
    return NULL;
}

/* Links e (its key set, not present yet); 0 when there is no memory for the first buckets. A
 * failed growth keeps the table as it is: longer chains, nothing lost. */
static int ht_insert(rc_htab_t *t, rc_hnode_t *e)
{
    if (t->n >= t->nb) {
        size_t nb = t->nb ? 2 * t->nb : 64;
        rc_hnode_t **b = calloc(nb, sizeof *b);
        if (b) {
            rc_htab_t g = {b, nb, 0};
            for (size_t i = 0; i < t->nb; i++)
                for (rc_hnode_t *x = t->b[i], *nx; x; x = nx) {
                    nx = x->next;
                    size_t j = ht_index(&g, x->key);
                    x->next = b[j];
                    b[j] = x;
                }
            free(t->b);
            t->b = b;
            t->nb = nb;
        } else if (!t->nb) {
            return 0;
        }
    }
    size_t j = ht_index(t, e->key);
    e->next = t->b[j];
    t->b[j] = e;
    t->n++;
    return 1;
}

/* The entry of key k, a zeroed one of `size` bytes added when there is none; NULL without
 * memory. */
static rc_hnode_t *ht_get(rc_htab_t *t, uint64_t k, size_t size)
{
    rc_hnode_t *e = ht_find(t, k);
    if (e)
        return e;
    if (!(e = calloc(1, size)))
        return NULL;
    e->key = k;
    if (!ht_insert(t, e)) {
        free(e);
        return NULL;
    }
    return e;
}

/* ---- clock channels of point-to-point messages ---------------------------------------------
 * A message's clock travels on a duplicate of its communicator, its *channel*, with the message's
 * own ranks and tag, so that clocks pair with messages exactly as MPI pairs the messages: a
 * receiver that takes the messages of two communicators with the same source and tag in another
 * order than they were sent joins the right clocks (one world-wide channel paired them in send
 * order). Every communicator the program builds through a constructor wrapped below gets its
 * channel then (a collective over the new communicator, made by all its members like the
 * constructor) and loses it in MPI_Comm_free/MPI_Comm_disconnect; MPI_COMM_WORLD's channel is
 * wshadow. Communicators built elsewhere (MPI_Comm_idup, dynamic processes) use wshadow with
 * ranks translated to MPI_COMM_WORLD, as every communicator did before, and an intercommunicator
 * there carries no clock. Every member of a communicator decides alike, so a clock is always
 * received where it was sent. */
typedef struct {
    rc_hnode_t h; /* key: the communicator handle */
    MPI_Comm shadow;
} rc_chan_t;
static rc_htab_t chans;

_Static_assert(sizeof(MPI_Comm) <= sizeof(uint64_t), "MPI_Comm wider than 64 bits");

/* The channel of comm, and rank r of comm as a rank of it; MPI_COMM_NULL: no clock travels. */
static MPI_Comm chan_of(MPI_Comm comm, int r, int *cr)
{
    *cr = r;
    if (comm == MPI_COMM_WORLD)
        return wshadow;
    rc_chan_t *c = (rc_chan_t *)ht_find(&chans, comm_key(comm));
    if (c)
        return c->shadow;
    *cr = to_world(comm, r);
    return *cr == MPI_UNDEFINED ? MPI_COMM_NULL : wshadow;
}

/* comm is gone, or its handle names a communicator without a channel from now on. Caller holds
 * the big lock. */
static void chan_drop(MPI_Comm comm)
{
    rc_chan_t *c = (rc_chan_t *)ht_remove(&chans, comm_key(comm));
    if (c) {
        comm_free_unlocked(&c->shadow);
        free(c);
    }
}

/* A constructor returned comm (collective over comm's members, who all come here). Caller holds
 * the big lock; the dup runs without it. No other thread knows comm yet, so no other collective
 * on it can interleave with the dup (MPI forbids concurrent collectives on one communicator, and
 * the dup is part of the constructor's call). */
static void chan_new(MPI_Comm comm)
{
    if (!rc_active || rc_inside || comm == MPI_COMM_NULL || wshadow == MPI_COMM_NULL)
        return;
    chan_drop(comm); /* a handle MPI reused after a free we did not see */
    rc_chan_t *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->h.key = comm_key(comm);
    /* a failing dup fails on every member alike (context ids are agreed collectively) */
    int d = rc_big_release();
    int rc = PMPI_Comm_dup(comm, &c->shadow);
    rc_big_reacquire(d);
    if (rc != MPI_SUCCESS) {
        free(c);
        return;
    }
    if (!ht_insert(&chans, &c->h)) {
        comm_free_unlocked(&c->shadow);
        free(c);
    }
}

typedef struct {
    rc_hnode_t h;      /* key: the request handle */
    MPI_Request req;
    int widx;
    int sync;          /* 1: a nonblocking synchronization call, 0: a request-based operation,
                          2: a nonblocking collective (vcreq carries the clocks),
                          3: a point-to-point receive (its sender's clock is consumed) */
    MPI_Comm comm;     /* sync 3: the receive's communicator */
    char call[32];
    int target;        /* comm rank or -1 */
    MPI_Request vcreq;
    uint64_t *vcbuf;   /* the members' events (vcn of them) of a collective's event exchange */
    int vcn;
    /* Taken when a nonblocking epoch-closing call is made, since later epochs of the window may
     * begin before its request completes: icomplete's start group and the post clocks its
     * istart is receiving, iwait's post group. */
    int *grp;
    int ngrp;
    MPI_Request *prq;
    uint64_t *pvc;
    int nprq;
    uint64_t start; /* sync 1: the closing call's start stamp */
} rc_req_t;
static rc_htab_t reqs; /* the requests whose completion is followed */

typedef struct {
    MPI_Request r;
    uint64_t *buf;
} rc_send_t;
static rc_send_t *sends;
static int nsends, capsends;

/* ---- atomics as synchronization ----------------------------------------------------------
 * Programs build locks and flags from accumulate-class operations (CAS, fetch-and-op, replace).
 * Each target location has a slot: an atomic operation releases into it when issued, before the
 * operation itself goes to the MPI library, and acquires it when it completes. That orders an
 * acquire after every atomic on the location issued before it completed: more order than the
 * program may have, never less, so precision holds. Locations hash to slots; a collision only adds
 * order.
 *
 * A slot holds one word, the last release: (rank + 1) << 40 | n for rank's n-th release. A
 * release swaps its word in and logs the word it replaced ("al n a.s previous"): the analysis
 * chains the releases of a slot, so the clock a slot holds after release n is the join of its
 * event's clock and of the chain before it. An acquire logs the word it read ("j ... s<r>.<n>").
 *
 * Where the slots live (docs/rmacheck.md, "Across nodes"): when every rank shares one node, in a
 * file of the run's directory that all ranks map (an atomic exchange per release); when the ranks
 * span nodes — real ones, or virtual ones (RMACHECK_RANKS_PER_NODE=k: every k ranks of a host
 * form a node, so one machine exercises this path) — in a window of the runtime's own on a
 * duplicate of MPI_COMM_WORLD, where every rank hosts the slots of the locations it owns. A
 * release there is MPI_Rget_accumulate(MPI_REPLACE) and a read MPI_Rget_accumulate(MPI_NO_OP),
 * each waited for with the runtime's test loop and then flushed (remote completion) before the
 * program's operation is issued: accumulates are atomic per element (MPI-3.1 §11.7.1). */
static uint64_t *ashm;              /* node-shared store: aslots words */
static size_t ashm_bytes;
static MPI_Win awin = MPI_WIN_NULL; /* store across nodes: aslots slots per rank */
static MPI_Comm acomm = MPI_COMM_NULL;
static int aslots;
static uint64_t relno; /* this rank's releases so far */
typedef struct {
    int widx, tw, slot;
    MPI_Request req;
} rc_apend_t;
static rc_apend_t *apend;
static int napend, capapend;
static int rc_wait(MPI_Request *r);

static void atom_fail(const char *what)
{
    fprintf(stderr, "rmacheck: rank %d: %s; stopping\n", rc_wrank, what);
    _exit(2);
}

/* Room for one more element in a growable array (*p, *n used of *cap): doubles it. A record the
 * runtime cannot keep would be an edge lost (a false alarm later), so running out of memory
 * stops the run (exit 2) instead. */
static void grow(void *p, int n, int *cap, size_t size, int first)
{
    if (n < *cap)
        return;
    int nc = *cap ? 2 * *cap : first;
    void *q = realloc(*(void **)p, (size_t)nc * size);
    if (!q || nc <= *cap)
        atom_fail("out of memory for the runtime's records");
    *(void **)p = q;
    *cap = nc;
}

/* RMACHECK_RANKS_PER_NODE: 0 when unset (nodes are what MPI_COMM_TYPE_SHARED says). */
static int ranks_per_node(void)
{
    const char *s = getenv("RMACHECK_RANKS_PER_NODE");
    if (!s || !*s)
        return 0;
    char *end;
    long k = strtol(s, &end, 10);
    if (*end || k < 1 || k > 1 << 30) {
        fprintf(stderr, "rmacheck: RMACHECK_RANKS_PER_NODE='%s' is not a positive integer\n", s);
        _exit(2);
    }
    return (int)k;
}

/* Which node this rank is on and how many there are; every rank learns the same count. */
static void nodes_find(int *node, int *nnodes)
{
    MPI_Comm nc;
    int lr, ls, k = ranks_per_node();
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &nc) !=
            MPI_SUCCESS ||
        PMPI_Comm_rank(nc, &lr) != MPI_SUCCESS || PMPI_Comm_size(nc, &ls) != MPI_SUCCESS)
        atom_fail("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    int first = k ? lr / k * k : 0; /* my node's first rank in nc */
    MPI_Group g, wg;
    if (PMPI_Comm_group(nc, &g) != MPI_SUCCESS ||
        PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS ||
        PMPI_Group_translate_ranks(g, 1, &first, wg, node) != MPI_SUCCESS)
        atom_fail("MPI_Group_translate_ranks failed");
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    PMPI_Comm_free(&nc);
    int lead = lr == first, n = 0;
    MPI_Request r;
    if (PMPI_Iallreduce(&lead, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
        rc_wait(&r) != MPI_SUCCESS)
        atom_fail("MPI_Iallreduce of the node count failed");
    *nnodes = n;
}

static void atom_open(void)
{
    const char *dir = getenv("RMACHECK_DIR");
    int node = 0, nnodes = 1;
    nodes_find(&node, &nnodes);
    const char *store = "none";
    if (nnodes == 1) {
        /* one node: a file all ranks map, one word per slot (512 KiB) */
        char path[4096];
        aslots = 65536;
        ashm_bytes = (size_t)aslots * sizeof(uint64_t);
        if (!dir || snprintf(path, sizeof path, "%s/atomics", dir) >= (int)sizeof path)
            atom_fail("RMACHECK_DIR missing or too long");
        int fd = open(path, O_RDWR | O_CREAT, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)ashm_bytes) != 0)
            atom_fail("cannot create the atomics file in RMACHECK_DIR");
        void *m = mmap(NULL, ashm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
            atom_fail("cannot map the atomics file");
        ashm = m;
        store = "shm";
    } else {
        /* several nodes: a window, each rank hosting aslots slots (32 KiB) */
        aslots = 4096;
        MPI_Aint bytes = (MPI_Aint)aslots * (MPI_Aint)sizeof(uint64_t);
        uint64_t *base;
        MPI_Request r;
        if (PMPI_Comm_dup(MPI_COMM_WORLD, &acomm) != MPI_SUCCESS ||
            PMPI_Win_allocate(bytes, sizeof(uint64_t), MPI_INFO_NULL, acomm, &base, &awin) !=
                MPI_SUCCESS ||
            PMPI_Win_lock_all(MPI_MODE_NOCHECK, awin) != MPI_SUCCESS)
            atom_fail("cannot create the window of atomic clocks");
        memset(base, 0, (size_t)bytes);
        if (PMPI_Win_sync(awin) != MPI_SUCCESS || PMPI_Ibarrier(acomm, &r) != MPI_SUCCESS ||
            rc_wait(&r) != MPI_SUCCESS || PMPI_Win_sync(awin) != MPI_SUCCESS)
            atom_fail("cannot set up the window of atomic clocks");
        store = "window";
    }
    char host[256] = "?";
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "?");
    host[sizeof host - 1] = 0;
    for (char *c = host; *c; c++)
        if (*c == ' ' || *c == '\n')
            *c = '_';
    rc_log("node %d %d %s %s\n", node, nnodes, store, host);
}

static void atom_close(void)
{
    if (awin != MPI_WIN_NULL) {
        MPI_Request r;
        /* nobody reads or merges a slot once everyone is here; then free returns at once */
        if (PMPI_Win_unlock_all(awin) != MPI_SUCCESS || PMPI_Ibarrier(acomm, &r) != MPI_SUCCESS ||
            rc_wait(&r) != MPI_SUCCESS || PMPI_Win_free(&awin) != MPI_SUCCESS ||
            PMPI_Comm_free(&acomm) != MPI_SUCCESS)
            fprintf(stderr, "rmacheck: rank %d: freeing the window of atomic clocks failed\n",
                    rc_wrank);
    }
    if (ashm) {
        munmap(ashm, ashm_bytes);
        ashm = NULL;
    }
}

/* One access to the window store: swap `in` into (tw, slot) with MPI_REPLACE, or read it with
 * MPI_NO_OP (in NULL); the previous word into *out; complete at the target when it returns. The
 * flush, which waits for the target, runs without the big lock. */
static void slot_rma(int tw, int slot, const uint64_t *in, uint64_t *out)
{
    MPI_Request r;
    uint64_t mine = in ? *in : 0;
    int ok = PMPI_Rget_accumulate(&mine, 1, MPI_UINT64_T, out, 1, MPI_UINT64_T, tw,
                                  (MPI_Aint)slot, 1, MPI_UINT64_T, in ? MPI_REPLACE : MPI_NO_OP,
                                  awin, &r) == MPI_SUCCESS &&
             rc_wait(&r) == MPI_SUCCESS;
    if (ok) {
        int d = rc_big_release();
        ok = PMPI_Win_flush(tw, awin) == MPI_SUCCESS;
        rc_big_reacquire(d);
    }
    if (!ok)
        atom_fail("an access to the window of atomic clocks failed");
}

/* The slot of a target location (window, target, displacement, first byte). */
static int atom_slot(const char *gid, int tw, long disp, long off)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = gid; *c; c++)
        h = (h ^ (uint64_t)(unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)tw) * 1099511628211ull;
    h = (h ^ (uint64_t)disp) * 1099511628211ull;
    h = (h ^ (uint64_t)off) * 1099511628211ull;
    return (int)(h % (uint64_t)aslots);
}

static const char *slot_str(uint64_t v, char *b, size_t n)
{
    if (!v)
        snprintf(b, n, "-");
    else
        snprintf(b, n, "s%lu.%lu", (unsigned long)((v >> 40) - 1),
                 (unsigned long)(v & (((uint64_t)1 << 40) - 1)));
    return b;
}

/* Release: the operation's event `ev` becomes the slot's last release (the window store waits
 * without the big lock). */
static void atom_merge(int tw, int slot, rc_ref_t ev)
{
    uint64_t n = ++relno, prev = 0;
    uint64_t mine = (uint64_t)(rc_wrank + 1) << 40 | n;
    if (ashm)
        prev = __atomic_exchange_n(ashm + slot, mine, __ATOMIC_SEQ_CST);
    else
        slot_rma(tw, slot, &mine, &prev);
    char b[48];
    rc_log("al %lu %lu.%lu %s\n", (unsigned long)n, (unsigned long)ev.a, (unsigned long)ev.s,
           slot_str(prev, b, sizeof b));
}

/* Completion of the atomics on `widx` toward `tw` (-1: all), or of the one with request `req`. */
static void atom_acquire(int widx, int tw, int req_only, MPI_Request req)
{
    if (napend == 0)
        return;
    /* The entries done leave apend before any slot is read: a read of the window store waits
     * without the big lock (slot_rma), and other threads change apend meanwhile. */
    rc_apend_t *dn = malloc((size_t)napend * sizeof *dn);
    uint64_t *vals = malloc((size_t)napend * sizeof *vals);
    if (!dn || !vals)
        atom_fail("out of memory");
    int k = 0, ndn = 0;
    for (int i = 0; i < napend; i++) {
        rc_apend_t *p = &apend[i];
        int done = req_only ? p->req == req
                            : p->widx == widx && (tw < 0 || p->tw == tw);
        if (!done)
            apend[k++] = *p;
        else
            dn[ndn++] = *p;
    }
    napend = k;
    for (int i = 0; i < ndn; i++) {
        vals[i] = 0;
        if (ashm)
            vals[i] = __atomic_load_n(ashm + dn[i].slot, __ATOMIC_SEQ_CST);
        else
            slot_rma(dn[i].tw, dn[i].slot, NULL, &vals[i]);
    }
    rc_join_slots(vals, ndn);
    free(dn);
    free(vals);
}

/* Atomics between their call and a closing call that covers them. A closing call acquires the
 * entries in apend; with threads, it may be a closing call of another thread that started
 * before this operation reached MPI, which does not complete it: acquired then, the slot misses
 * what other ranks merged before the operation took effect (lost order, a false alarm). So
 * op_record files each new entry here, with its issue stamp, and release_ops hands to
 * atom_acquire only the entries issued before the closing call started; the others wait for a
 * later one. Entries are filed in number order (op_record files one in the critical section that
 * numbers its call), which op_issued relies on. Caller holds the big lock. */
typedef struct {
    rc_apend_t a;
    long no;
    uint64_t issued; /* 0: the call has not returned yet */
} rc_astage_t;
static rc_astage_t *astage;
static int nastage, capastage;

static void astage_push(const rc_apend_t *a, long no, uint64_t issued)
{
    grow(&astage, nastage, &capastage, sizeof *astage, 64);
    astage[nastage++] = (rc_astage_t){*a, no, issued};
}

/* Into apend, where atom_acquire finds it. */
static void apend_push(const rc_apend_t *a)
{
    grow(&apend, napend, &capapend, sizeof *apend, 64);
    apend[napend++] = *a;
}

/* Local completion of operations: their buffers are free, and their atomics acquire. `before`:
 * the closing call's start stamp (RC_STAMP_ALL: everything, as at MPI_Win_free). */
static void release_ops(int w, int t, int req_only, MPI_Request rq, uint64_t before)
{
    rc_inflight_release(w, t, req_only, rq, before);
    int k = 0;
    for (int i = 0; i < nastage; i++) {
        rc_astage_t *s = &astage[i];
        int done = req_only ? s->a.req == rq
                            : s->a.widx == w && (t < 0 || s->a.tw == t) &&
                                  (before == RC_STAMP_ALL || (s->issued && s->issued < before));
        if (done)
            apend_push(&s->a);
        else
            astage[k++] = *s;
    }
    nastage = k;
    atom_acquire(w, t, req_only, rq);
}

/* The RMA call recorded as number `no` returned. */
static void op_issued(long no)
{
    if (no < 0)
        return;
    LOCK();
    uint64_t st = stamp_next();
    rc_inflight_issued(no, st);
    for (int i = nastage - 1; i >= 0 && astage[i].no >= no; i--)
        if (astage[i].no == no && !astage[i].issued)
            astage[i].issued = st;
    UNLOCK();
}

/* ---- helpers ------------------------------------------------------------------------------ */

static int widx_of(MPI_Win w)
{
    for (int i = 0; i < RC_MAXWIN; i++)
        if (wins[i].used == 1 && wins[i].win == w)
            return i;
    return -1;
}

static int wworld(int widx, int r)
{
    if (widx < 0 || r < 0 || r >= wins[widx].n)
        return r;
    return wins[widx].world[r];
}

/* The runtime never blocks inside the vendor MPI (oversubscribed nodes: MPICH's blocking calls
 * spin and starve the peer they wait for): every wait is a test loop that gives the core away
 * with harness/relax.h's nbh_relax, libnbrma's policy (docs/ref.md, "Waiting on a busy node"): a
 * sched_yield at every turn gets about 1% of a core beside other jobs' CPU-bound tasks on Linux
 * >= 6.6 (EEVDF charges the yielder a slice), so such a wait could take seconds. The
 * test is the next library's MPI_Test, not PMPI_Test: under libnbrma that also drives its
 * progress engine, which a peer may need from this rank before it can reach the collective or
 * send the message waited for (a deferred MPIX_Win_icomplete, say). */
/* The big lock is dropped while it waits (the test included: under libnbrma it runs the engine,
 * which may wait for another thread inside it), so *r must be the caller's own: a local, or an
 * entry taken out of the shared tables first. */
static int rc_wait(MPI_Request *r)
{
    NEXT(MPI_Test);
    int done = 0, rc;
    int d = rc_big_release();
    while ((rc = next_MPI_Test(r, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        nbh_relax();
    rc_big_reacquire(d);
    return rc;
}

static void sends_progress(int wait_all)
{
    if (wait_all) {
        /* taken out of the table first: rc_wait drops the lock */
        rc_send_t *all = sends;
        int n = nsends;
        sends = NULL;
        nsends = capsends = 0;
        for (int i = 0; i < n; i++) {
            rc_wait(&all[i].r);
            free(all[i].buf);
        }
        free(all);
        return;
    }
    int k = 0;
    for (int i = 0; i < nsends; i++) {
        int done = 0;
        PMPI_Test(&sends[i].r, &done, MPI_STATUS_IGNORE);
        if (done)
            free(sends[i].buf);
        else
            sends[k++] = sends[i];
    }
    nsends = k;
}

/* Events travel over MPI as RC_REF_WORDS words (rank, actor, seq). */
static void ref_put(rc_ref_t r, uint64_t *w)
{
    w[0] = r.r;
    w[1] = r.a;
    w[2] = r.s;
}

static rc_ref_t *refs_of(const uint64_t *w, int n)
{
    rc_ref_t *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r)
        atom_fail("out of memory");
    for (int i = 0; i < n; i++)
        r[i] = (rc_ref_t){w[3 * i], w[3 * i + 1], w[3 * i + 2]};
    return r;
}

static void join_words(const uint64_t *w, int n)
{
    rc_ref_t *r = refs_of(w, n);
    rc_join(r, n);
    free(r);
}

static const char *ref_str(rc_ref_t r, char *b, size_t n)
{
    if (!r.s)
        snprintf(b, n, "-");
    else
        snprintf(b, n, "e%lu.%lu.%lu", (unsigned long)r.r, (unsigned long)r.a, (unsigned long)r.s);
    return b;
}

/* The event ev to rank dest of comm with tag (the clock of everything before it). */
static void send_vc(int dest, int tag, MPI_Comm comm, rc_ref_t ev)
{
    sends_progress(0);
    grow(&sends, nsends, &capsends, sizeof *sends, 16);
    uint64_t *b = malloc(RC_REF_WORDS * sizeof *b);
    if (!b)
        atom_fail("out of memory");
    ref_put(ev, b);
    if (PMPI_Isend(b, RC_REF_WORDS, MPI_UINT64_T, dest, tag, comm, &sends[nsends].r) !=
        MPI_SUCCESS) {
        free(b);
        return;
    }
    sends[nsends++].buf = b;
}

/* The event rank src of comm sent with tag; 0 when the receive failed. */
static int recv_ref(int src, int tag, MPI_Comm comm, rc_ref_t *out)
{
    uint64_t w[RC_REF_WORDS];
    MPI_Request r;
    if (PMPI_Irecv(w, RC_REF_WORDS, MPI_UINT64_T, src, tag, comm, &r) != MPI_SUCCESS ||
        rc_wait(&r) != MPI_SUCCESS)
        return 0;
    *out = (rc_ref_t){w[0], w[1], w[2]};
    return 1;
}

static void recv_vc(int src, int tag, MPI_Comm comm)
{
    rc_ref_t r;
    if (recv_ref(src, tag, comm, &r))
        rc_join(&r, 1);
}

/* MPIX_Win_istart returns before the targets posted: receive their events without blocking and
 * join them when the epoch completes (the targets have posted by then). */
static void post_recv_start(rc_win_t *W)
{
    free(W->postrq);
    free(W->postvc);
    W->npostrq = 0;
    W->postrq = malloc((size_t)(W->nstart + 1) * sizeof *W->postrq);
    W->postvc = malloc((size_t)(W->nstart + 1) * RC_REF_WORDS * sizeof *W->postvc);
    if (!W->postrq || !W->postvc)
        atom_fail("out of memory");
    for (int i = 0; i < W->nstart; i++)
        if (PMPI_Irecv(W->postvc + (size_t)W->npostrq * RC_REF_WORDS, RC_REF_WORDS,
                       MPI_UINT64_T, W->start[i], TAG_POST, W->shadow,
                       &W->postrq[W->npostrq]) == MPI_SUCCESS)
            W->npostrq++;
}

/* Join the post events an MPIX_Win_istart is receiving (n requests, one event each). */
static void join_posts(MPI_Request *rq, const uint64_t *vcs, int n)
{
    int k = 0;
    uint64_t *ok = malloc((size_t)(n > 0 ? n : 1) * RC_REF_WORDS * sizeof *ok);
    if (!ok)
        atom_fail("out of memory");
    for (int i = 0; i < n; i++)
        if (rc_wait(&rq[i]) == MPI_SUCCESS)
            memcpy(ok + (size_t)k++ * RC_REF_WORDS, vcs + (size_t)i * RC_REF_WORDS,
                   RC_REF_WORDS * sizeof *ok);
    join_words(ok, k);
    free(ok);
}

static void post_recv_finish(rc_win_t *W)
{
    /* taken out of the window first: join_posts drops the lock */
    MPI_Request *rq = W->postrq;
    uint64_t *vcs = W->postvc;
    int n = W->npostrq;
    W->postrq = NULL;
    W->postvc = NULL;
    W->npostrq = 0;
    join_posts(rq, vcs, n);
    free(rq);
    free(vcs);
}

/* Every member's last event to every member: the collective (or fence, window creation or free)
 * just logged orders the events after it on every member after those before it on every member. */
static void allreduce_vc(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return;
    uint64_t mine[RC_REF_WORDS];
    ref_put(rc_last(), mine);
    uint64_t *b = malloc((size_t)n * RC_REF_WORDS * sizeof *b);
    if (!b)
        atom_fail("out of memory");
    MPI_Request r;
    if (PMPI_Iallgather(mine, RC_REF_WORDS, MPI_UINT64_T, b, RC_REF_WORDS, MPI_UINT64_T, comm,
                        &r) == MPI_SUCCESS &&
        rc_wait(&r) == MPI_SUCCESS)
        join_words(b, n);
    free(b);
}

/* Start the event exchange of a nonblocking collective or fence (this actor's last event, from
 * every member), gathered while the program goes on; NULL when it could not start. The buffer
 * holds the *n members' events, then this rank's own (the send buffer, kept until completion). */
static uint64_t *vc_iallreduce(MPI_Comm comm, MPI_Request *vr, int *n)
{
    if (PMPI_Comm_size(comm, n) != MPI_SUCCESS)
        return NULL;
    uint64_t *b = malloc((size_t)(*n + 1) * RC_REF_WORDS * sizeof *b);
    if (!b)
        atom_fail("out of memory");
    uint64_t *mine = b + (size_t)*n * RC_REF_WORDS;
    ref_put(rc_last(), mine);
    if (PMPI_Iallgather(mine, RC_REF_WORDS, MPI_UINT64_T, b, RC_REF_WORDS, MPI_UINT64_T, comm,
                        vr) != MPI_SUCCESS) {
        free(b);
        return NULL;
    }
    return b;
}

/* ... and join it: every member started it with the same call, so it completes. */
static void vc_join_req(MPI_Request *vr, const uint64_t *b, int n)
{
    if (rc_wait(vr) == MPI_SUCCESS)
        join_words(b, n);
}

/* The exchange of a blocking collective (or fence, or window free), started before the
 * program's call with the event just logged for it, and finished after the call: the call itself
 * progresses it, so the wait after it rarely has to yield. Every member starts it before the same
 * call, so the runtime's and the program's collectives on one communicator keep one order. */
static void xg_start(MPI_Comm comm, rc_xg_t *x)
{
    int inter = 0;
    x->b = NULL;
    x->r = MPI_REQUEST_NULL;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return;
    x->b = vc_iallreduce(comm, &x->r, &x->n);
}

static void xg_finish(rc_xg_t *x, int join)
{
    if (!x->b)
        return;
    if (rc_wait(&x->r) == MPI_SUCCESS && join)
        join_words(x->b, x->n);
    free(x->b);
    x->b = NULL;
}

/* A fence's exchange is joined late. When the fence returns, an event with the joins field "L"
 * stands for its join (everything the rank does after the fence comes after that event), and the
 * exchange is waited for at the window's next fence, after the program's call (by then every
 * member started it long ago, so the test succeeds at once and the wait never yields), or when
 * the window is freed; a line "jl a.s refs" then names what the event joins. The analysis reads
 * those lines first. A rank that dies in between loses that one join. */
static void fence_late_finish(rc_win_t *W)
{
    rc_xg_t *x = &W->fxg;
    if (!x->b)
        return;
    if (rc_wait(&x->r) == MPI_SUCCESS) {
        size_t cap = (size_t)x->n * 64 + 64, o = 0;
        char *b = malloc(cap);
        if (!b)
            atom_fail("out of memory");
        o += (size_t)snprintf(b, cap, "jl %lu.%lu ", (unsigned long)W->fxg_ev.a,
                              (unsigned long)W->fxg_ev.s);
        int k = 0;
        for (int i = 0; i < x->n; i++) {
            const uint64_t *w = x->b + (size_t)i * RC_REF_WORDS;
            if (!w[2] || (w[0] == (uint64_t)rc_wrank && w[1] == W->fxg_ev.a))
                continue;
            o += (size_t)snprintf(b + o, cap - o, "%se%lu.%lu.%lu", k++ ? "," : "",
                                  (unsigned long)w[0], (unsigned long)w[1], (unsigned long)w[2]);
        }
        if (!k)
            o += (size_t)snprintf(b + o, cap - o, "-");
        snprintf(b + o, cap - o, "\n");
        rc_log("%s", b);
        free(b);
    }
    free(x->b);
    x->b = NULL;
}

static void req_bufs_free(rc_req_t *e)
{
    free(e->vcbuf);
    free(e->grp);
    free(e->prq);
    free(e->pvc);
}

static void req_drop(rc_req_t *e)
{
    if (e->vcreq != MPI_REQUEST_NULL)
        rc_wait(&e->vcreq); /* every member started that allreduce: it completes */
    for (int i = 0; i < e->nprq; i++)
        rc_wait(&e->prq[i]); /* the targets sent their post clocks when they posted */
    /* a stale MPIX_Win_iwait completed: its origins sent their complete clocks; consume them */
    if (e->grp && e->widx >= 0 && wins[e->widx].used)
        for (int i = 0; i < e->ngrp; i++)
            recv_vc(e->grp[i], TAG_COMPLETE, wins[e->widx].shadow);
    req_bufs_free(e);
}

/* Follows request r; returns its entry (for the caller's extra fields) or NULL when it is not
 * followed (MPI_REQUEST_NULL, no memory). */
static rc_req_t *req_track(MPI_Request r, int widx, int sync, const char *call, int target)
{
    if (r == MPI_REQUEST_NULL)
        return NULL;
    /* MPI hands out a handle again only once the request it named is gone: an entry with this
     * handle is one whose completion we did not see (MPI_Request_free, a completion inside the
     * library). Drop it, or its call would be logged at this request's completion. */
    rc_req_t *old = (rc_req_t *)ht_remove(&reqs, req_key(r));
    if (old) {
        req_drop(old);
        free(old);
    }
    rc_req_t *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->h.key = req_key(r); /* the rest zero, but for handles (not 0 in every MPI) */
    e->vcreq = MPI_REQUEST_NULL;
    e->comm = MPI_COMM_NULL;
    e->req = r;
    e->widx = widx;
    e->sync = sync;
    e->target = target;
    snprintf(e->call, sizeof e->call, "%s", call);
    if (!ht_insert(&reqs, &e->h)) {
        free(e);
        return NULL;
    }
    return e;
}

static int *ints_dup(const int *a, int n)
{
    int *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
    if (b && n > 0)
        memcpy(b, a, (size_t)n * sizeof *b);
    return b;
}

/* Follow receive r on comm: its completion consumes the sender's clock (p2p_recv_edge). */
static void recv_track(MPI_Request r, MPI_Comm comm, const char *call)
{
    rc_req_t *e = req_track(r, -1, 3, call, -1);
    if (e)
        e->comm = comm;
}

/* What a nonblocking closing call must remember (see rc_req_t); the fence's clock exchange starts
 * at the call, when every member makes its calls in the same order, and joins at completion. */
static void req_take_epoch(rc_req_t *e, int widx, const char *call, rc_ref_t ev)
{
    if (!e)
        return;
    rc_win_t *W = &wins[widx];
    if (strcmp(call, "MPIX_Win_icomplete") == 0) {
        /* The clock goes to the targets now: waiting for this request to complete before sending
         * it would deadlock a program whose ranks poll MPI_Win_test before waiting on their
         * icomplete (the targets' wait completes only after every origin called complete, and
         * joins the clock then). rmacheck.py takes this call as the operations' completion. */
        for (int i = 0; i < W->nstart; i++)
            send_vc(W->start[i], TAG_COMPLETE, W->shadow, ev);
        W->nstart = 0;
        e->prq = W->postrq;
        e->pvc = W->postvc;
        e->nprq = W->npostrq;
        W->postrq = NULL;
        W->postvc = NULL;
        W->npostrq = 0;
    } else if (strcmp(call, "MPIX_Win_iwait") == 0) {
        e->grp = ints_dup(W->post, W->npost);
        e->ngrp = e->grp ? W->npost : 0;
    } else if (strcmp(call, "MPIX_Win_ifence") == 0) {
        int inter = 0;
        if (PMPI_Comm_test_inter(W->shadow, &inter) != MPI_SUCCESS || inter)
            return;
        e->vcbuf = vc_iallreduce(W->shadow, &e->vcreq, &e->vcn);
        if (!e->vcbuf)
            e->vcreq = MPI_REQUEST_NULL;
    }
}

/* Comm-relative group members, as window comm ranks. Returns count; *out malloc'd. */
static int group_ranks(MPI_Group g, int widx, int **out)
{
    int n = 0;
    *out = NULL;
    if (PMPI_Group_size(g, &n) != MPI_SUCCESS || n <= 0)
        return 0;
    int *in = malloc((size_t)n * sizeof *in), *o = malloc((size_t)n * sizeof *o);
    MPI_Group wg;
    if (!in || !o || PMPI_Comm_group(wins[widx].shadow, &wg) != MPI_SUCCESS) {
        free(in);
        free(o);
        return 0;
    }
    for (int i = 0; i < n; i++)
        in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, wg, o);
    PMPI_Group_free(&wg);
    free(in);
    *out = o;
    return n;
}

static const char *group_str(int widx, const int *g, int n, char *b, size_t len)
{
    size_t off = 0;
    b[0] = '-';
    b[1] = 0;
    for (int i = 0; i < n && off + 16 < len; i++)
        off += (size_t)snprintf(b + off, len - off, i ? ",%d" : "%d", wworld(widx, g[i]));
    return b;
}

/* A request handle as log text ("-" for none); handles are ints or pointers depending on the MPI. */
static const char *req_str(MPI_Request r)
{
    static __thread char b[40];
    if (r == MPI_REQUEST_NULL)
        return "-";
    uintptr_t v = 0;
    memcpy(&v, &r, sizeof r < sizeof v ? sizeof r : sizeof v);
    snprintf(b, sizeof b, "%lx", (unsigned long)v);
    return b;
}

/* ---- datatypes ---------------------------------------------------------------------------- */

typedef struct {
    long off[512], len[512];
    int n, approx;
} blocks_t;

static void blk_add(blocks_t *b, long off, long len)
{
    if (len <= 0)
        return;
    if (b->n > 0 && b->off[b->n - 1] + b->len[b->n - 1] == off) {
        b->len[b->n - 1] += len;
        return;
    }
    if (b->n == 512) {
        b->approx = 1;
        return;
    }
    b->off[b->n] = off;
    b->len[b->n] = len;
    b->n++;
}

static void flat(MPI_Datatype t, long count, long base, blocks_t *b, int depth);

static void flat_one(MPI_Datatype t, long base, blocks_t *b, int depth)
{
    int ni, na, nd, comb;
    if (depth > 8 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        b->approx = 1;
        return;
    }
    int size;
    MPI_Aint tlb, text;
    PMPI_Type_size(t, &size);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    if (comb == MPI_COMBINER_NAMED || (long)size == (long)text) {
        blk_add(b, base + (long)tlb, size);
        return;
    }
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (!ints || !aints || !types ||
        PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        b->approx = 1;
        goto out;
    }
    MPI_Aint lb, ext;
    switch (comb) {
    case MPI_COMBINER_DUP:
        flat_one(types[0], base, b, depth + 1);
        break;
    case MPI_COMBINER_RESIZED:
        flat_one(types[0], base, b, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        flat(types[0], ints[0], base, b, depth + 1);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        PMPI_Type_get_extent(types[0], &lb, &ext);
        for (int k = 0; k < ints[0]; k++)
            flat(types[0], ints[1],
                 base + (comb == MPI_COMBINER_VECTOR ? (long)k * ints[2] * (long)ext
                                                     : (long)k * (long)aints[0]),
                 b, depth + 1);
        break;
    case MPI_COMBINER_INDEXED:
        PMPI_Type_get_extent(types[0], &lb, &ext);
        for (int k = 0; k < ints[0]; k++)
            flat(types[0], ints[1 + k], base + (long)ints[1 + ints[0] + k] * (long)ext, b,
                 depth + 1);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int k = 0; k < ints[0]; k++)
            flat(types[0], ints[1 + k], base + (long)aints[k], b, depth + 1);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        PMPI_Type_get_extent(types[0], &lb, &ext);
        for (int k = 0; k < ints[0]; k++)
            flat(types[0], ints[1], base + (long)ints[2 + k] * (long)ext, b, depth + 1);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int k = 0; k < ints[0]; k++)
            flat(types[0], ints[1], base + (long)aints[k], b, depth + 1);
        break;
    case MPI_COMBINER_STRUCT:
        for (int k = 0; k < ints[0]; k++)
            flat(types[k], ints[1 + k], base + (long)aints[k], b, depth + 1);
        break;
    default:
        b->approx = 1;
        blk_add(b, base + (long)tlb, (long)text);
        break;
    }
    for (int k = 0; k < nd; k++) {
        int a, c, d, cb;
        if (PMPI_Type_get_envelope(types[k], &a, &c, &d, &cb) == MPI_SUCCESS &&
            cb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[k]);
    }
out:
    free(ints);
    free(aints);
    free(types);
}

static void flat(MPI_Datatype t, long count, long base, blocks_t *b, int depth)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS ||
        PMPI_Type_size(t, &size) != MPI_SUCCESS) {
        b->approx = 1;
        return;
    }
    if ((long)size == (long)ext && (long)size == (long)text && tlb == lb) {
        blk_add(b, base + (long)tlb, count * (long)size); /* contiguous: one block */
        return;
    }
    for (long i = 0; i < count && !b->approx; i++)
        flat_one(t, base + i * (long)ext, b, depth);
}

static const char *blocks_str(const blocks_t *b, char *s, size_t n)
{
    size_t off = 0;
    s[0] = '-';
    s[1] = 0;
    for (int i = 0; i < b->n && off + 48 < n; i++)
        off += (size_t)snprintf(s + off, n - off, i ? ",%ld:%ld" : "%ld:%ld", b->off[i], b->len[i]);
    return s;
}

static const char *type_base(MPI_Datatype t, char *s, int depth)
{
    int ni, na, nd, comb, len;
    strcpy(s, "?");
    if (depth > 8 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return s;
    if (comb == MPI_COMBINER_NAMED) {
        char name[MPI_MAX_OBJECT_NAME];
        if (PMPI_Type_get_name(t, name, &len) == MPI_SUCCESS && len > 0) {
            for (char *p = name; *p; p++)
                if (*p == ' ')
                    *p = '_';
            snprintf(s, 64, "%.60s", name);
        }
        return s;
    }
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (ints && aints && types && nd > 0 &&
        PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types) == MPI_SUCCESS) {
        type_base(types[0], s, depth + 1);
        for (int k = 0; k < nd; k++) {
            int a, c, d, cb;
            if (PMPI_Type_get_envelope(types[k], &a, &c, &d, &cb) == MPI_SUCCESS &&
                cb != MPI_COMBINER_NAMED)
                PMPI_Type_free(&types[k]);
        }
    }
    free(ints);
    free(aints);
    free(types);
    return s;
}

static const char *op_name(MPI_Op op)
{
    if (op == MPI_SUM) return "sum";
    if (op == MPI_PROD) return "prod";
    if (op == MPI_MAX) return "max";
    if (op == MPI_MIN) return "min";
    if (op == MPI_BAND) return "band";
    if (op == MPI_BOR) return "bor";
    if (op == MPI_BXOR) return "bxor";
    if (op == MPI_LAND) return "land";
    if (op == MPI_LOR) return "lor";
    if (op == MPI_LXOR) return "lxor";
    if (op == MPI_MINLOC) return "minloc";
    if (op == MPI_MAXLOC) return "maxloc";
    if (op == MPI_REPLACE) return "replace";
    if (op == MPI_NO_OP) return "no_op";
    return "user";
}

/* ---- init and finalize -------------------------------------------------------------------- */

static void after_init(void)
{
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rc_wrank) != MPI_SUCCESS ||
        PMPI_Comm_size(MPI_COMM_WORLD, &rc_wsize) != MPI_SUCCESS)
        return;
    rc_log_open();
    if (!rc_active)
        return;
    rc_actor_main();
    /* the first line, before any collective of the runtime: a run whose other ranks die before
     * they get here still says how many ranks should have logged */
    char exe[4096] = "?";
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0)
        exe[k] = 0;
    rc_log("init %d %d %d %s\n", rc_wrank, rc_wsize, (int)getpid(), exe);
    /* threads: each its own actor (the program was built with rmacheck-cc), or one per process */
    rc_log("actors %s\n", rc_instrumented ? "threads" : "process");
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &wshadow) != MPI_SUCCESS)
        wshadow = MPI_COMM_NULL;
    atom_open();
}

int MPI_Init(int *argc, char ***argv)
{
    NEXT(MPI_Init);
    int rc = next_MPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int req, int *prov)
{
    NEXT(MPI_Init_thread);
    int rc = next_MPI_Init_thread(argc, argv, req, prov);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int MPI_Finalize(void)
{
    NEXT(MPI_Finalize);
    LOCK();
    if (rc_active) {
        rc_flush_all(); /* accesses of other threads not followed by an event of theirs */
        rc_event("fin", "-", "%s", "");
        sends_progress(1);
        for (int i = 0; i < RC_MAXWIN; i++)
            if (wins[i].used) {
                fence_late_finish(&wins[i]);
                rc_log("leak %d\n", i);
            }
        atom_close();
        if (wshadow != MPI_COMM_NULL)
            comm_free_unlocked(&wshadow);
        __atomic_store_n(&rc_active, 0, __ATOMIC_RELAXED); /* the hooks read it without a lock */
    }
    UNLOCK();
    return next_MPI_Finalize();
}

/* ---- windows ------------------------------------------------------------------------------ */

/* A Boolean info key under either spelling. The keys present are enumerated rather than looked
 * up: Open MPI 4.1 rejects (fatally) a lookup with a key longer than 35 characters. */
static int info_flag(MPI_Info info, const char *k1, const char *k2)
{
    int n = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
        return 0;
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], v[64];
        int found = 0;
        if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS ||
            (strcmp(key, k1) != 0 && strcmp(key, k2) != 0))
            continue;
        if (PMPI_Info_get(info, key, sizeof v - 1, v, &found) == MPI_SUCCESS && found &&
            (strcmp(v, "true") == 0 || strcmp(v, "1") == 0))
            return 1;
    }
    return 0;
}

static void win_created(MPI_Win w, MPI_Comm comm, void *base, MPI_Aint size, int unit,
                        MPI_Info info, const char *flavor, int shared, void *pc)
{
    if (!rc_active)
        return;
    int idx = -1;
    for (int i = 0; i < RC_MAXWIN; i++)
        if (!wins[i].used) {
            idx = i;
            break;
        }
    if (idx < 0) {
        fprintf(stderr, "rmacheck: rank %d: more than %d windows; later ones are not checked\n",
                rc_wrank, RC_MAXWIN);
        return;
    }
    /* Taken now (used 2) and found by widx_of only when complete: the collectives below drop the
     * big lock, and other threads may create windows meanwhile. */
    rc_win_t *W = &wins[idx];
    memset(W, 0, sizeof *W);
    W->used = 2;
    W->win = w;
    /* This rank's number for the window (unique on this rank); the window's id is the number of
     * its lowest world rank, so ids stay unique however threads interleave window creations. */
    long my_no = ++win_counter;
    int d = rc_big_release();
    int drc = PMPI_Comm_dup(comm, &W->shadow);
    rc_big_reacquire(d);
    if (drc != MPI_SUCCESS) {
        W->used = 0;
        return;
    }
    PMPI_Comm_size(W->shadow, &W->n);
    PMPI_Comm_rank(W->shadow, &W->me);
    W->world = malloc((size_t)W->n * sizeof(int));
    int *in = malloc((size_t)W->n * sizeof(int));
    uintptr_t *bases = malloc((size_t)W->n * sizeof *bases);
    MPI_Group g, wg;
    if (!W->world || !in || !bases) {
        free(in);
        free(bases);
        free(W->world);
        comm_free_unlocked(&W->shadow);
        W->used = 0;
        return;
    }
    for (int i = 0; i < W->n; i++)
        in[i] = i;
    PMPI_Comm_group(W->shadow, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, W->n, in, wg, W->world);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    free(in);
    /* A global id: the lowest world rank of the window and that rank's number for it (one MIN
     * over world rank << 32 | number). */
    _Static_assert(sizeof(long) >= 8, "long narrower than 64 bits");
    long key = (long)rc_wrank << 32 | (my_no & 0xffffffffL);
    MPI_Request cr;
    if (PMPI_Iallreduce(MPI_IN_PLACE, &key, 1, MPI_LONG, MPI_MIN, W->shadow, &cr) != MPI_SUCCESS ||
        rc_wait(&cr) != MPI_SUCCESS)
        key = (long)rc_wrank << 32 | (my_no & 0xffffffffL); /* local: still unique per rank */
    snprintf(W->gid, sizeof W->gid, "w%ld.%ld", key >> 32, key & 0xffffffffL);
    uintptr_t mine = (uintptr_t)base;
    MPI_Request gr;
    if (PMPI_Iallgather(&mine, sizeof mine, MPI_BYTE, bases, sizeof mine, MPI_BYTE, W->shadow,
                        &gr) != MPI_SUCCESS ||
        rc_wait(&gr) != MPI_SUCCESS)
        memset(bases, 0, (size_t)W->n * sizeof *bases);
    int flags = info_flag(info, "MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER", "MPIX_A_A_A_R") |
                info_flag(info, "MPIX_WIN_ACCESS_AFTER_EXPOSURE_REORDER", "MPIX_A_A_E_R") << 1 |
                info_flag(info, "MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER", "MPIX_E_A_E_R") << 2 |
                info_flag(info, "MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER", "MPIX_E_A_A_R") << 3;
    char p[512], *mem = malloc((size_t)W->n * 12 + 2);
    if (!mem)
        atom_fail("out of memory");
    size_t off = 0;
    mem[0] = 0;
    for (int i = 0; i < W->n; i++)
        off += (size_t)sprintf(mem + off, i ? ",%d" : "%d", W->world[i]);
    rc_pc(pc, p, sizeof p);
    rc_event("win", "-", "%d %s %s %lx %ld %d %s %d %s", idx, W->gid, flavor,
             (unsigned long)mine, (long)size, unit, mem, flags, p);
    free(mem);
    if (size > 0)
        rc_range_add(mine, (size_t)size, mine, idx, rc_wrank);
    if (shared) {
        for (int r = 0; r < W->n; r++) {
            MPI_Aint sz;
            int du;
            void *ptr;
            if (r == W->me || PMPI_Win_shared_query(w, r, &sz, &du, &ptr) != MPI_SUCCESS)
                continue;
            if (sz > 0)
                rc_range_add((uintptr_t)ptr, (size_t)sz, bases[r], idx, W->world[r]);
        }
    }
    free(bases);
    allreduce_vc(W->shadow);
    W->used = 1;
}

int MPI_Win_create(void *base, MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    NEXT(MPI_Win_create);
    int rc = next_MPI_Win_create(base, size, unit, info, comm, win);
    LOCK();
    if (rc == MPI_SUCCESS && rc_active && !rc_inside)
        win_created(*win, comm, base, size, unit, info, "create", 0, PC);
    UNLOCK();
    return rc;
}

int MPI_Win_allocate(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    NEXT(MPI_Win_allocate);
    int rc = next_MPI_Win_allocate(size, unit, info, comm, baseptr, win);
    LOCK();
    if (rc == MPI_SUCCESS && rc_active && !rc_inside)
        win_created(*win, comm, *(void **)baseptr, size, unit, info, "allocate", 0, PC);
    UNLOCK();
    return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    NEXT(MPI_Win_allocate_shared);
    int rc = next_MPI_Win_allocate_shared(size, unit, info, comm, baseptr, win);
    LOCK();
    if (rc == MPI_SUCCESS && rc_active && !rc_inside)
        win_created(*win, comm, *(void **)baseptr, size, unit, info, "shared", 1, PC);
    UNLOCK();
    return rc;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    NEXT(MPI_Win_create_dynamic);
    int rc = next_MPI_Win_create_dynamic(info, comm, win);
    LOCK();
    if (rc == MPI_SUCCESS && rc_active && !rc_inside)
        win_created(*win, comm, NULL, 0, 1, info, "dynamic", 0, PC);
    UNLOCK();
    return rc;
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    NEXT(MPI_Win_attach);
    int rc = next_MPI_Win_attach(win, base, size);
    LOCK();
    int i = rc_active ? widx_of(win) : -1;
    if (rc == MPI_SUCCESS && i >= 0) {
        rc_event("attach", "-", "%d %lx %ld", i, (unsigned long)(uintptr_t)base, (long)size);
        rc_range_add((uintptr_t)base, (size_t)size, (uintptr_t)base, i, rc_wrank);
    }
    UNLOCK();
    return rc;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    NEXT(MPI_Win_detach);
    LOCK();
    int i = rc_active ? widx_of(win) : -1;
    if (i >= 0) {
        rc_event("detach", "-", "%d %lx", i, (unsigned long)(uintptr_t)base);
        rc_range_del((uintptr_t)base, i);
    }
    UNLOCK();
    return next_MPI_Win_detach(win, base);
}

int MPI_Win_free(MPI_Win *win)
{
    NEXT(MPI_Win_free);
    LOCK();
    int i = rc_active ? widx_of(*win) : -1;
    if (i < 0) {
        UNLOCK();
        return next_MPI_Win_free(win);
    }
    char p[512];
    rc_pc(PC, p, sizeof p);
    rc_event("sync", "-", "%d free -1 0 0 - - %s", i, p);
    /* Not found from now on: once MPI freed it, another thread's new window may get its handle
     * before this slot is free again. */
    wins[i].used = 2;
    rc_xg_t xg;
    xg_start(wins[i].shadow, &xg);
    UNLOCK();
    int rc = next_MPI_Win_free(win);
    LOCK();
    rc_range_del_win(i);
    release_ops(i, -1, 0, MPI_REQUEST_NULL, RC_STAMP_ALL);
    fence_late_finish(&wins[i]);
    xg_finish(&xg, 1);
    comm_free_unlocked(&wins[i].shadow);
    free(wins[i].world);
    free(wins[i].start);
    free(wins[i].post);
    free(wins[i].postrq);
    free(wins[i].postvc);
    wins[i].used = 0;
    UNLOCK();
    return rc;
}

/* ---- communication calls ------------------------------------------------------------------ */

/* count elements of t in bytes; -1 when the type cannot be asked (then assumed non-empty) */
static long type_bytes(MPI_Datatype t, int count)
{
    int size;
    if (count < 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS || size == MPI_UNDEFINED)
        return -1;
    return (long)count * (long)size;
}

/* A local buffer of an operation that is window memory: a line "ol" names the window bytes, so
 * the analysis checks them against other threads' loads and stores (origin-buffer hazards
 * between threads, which the online check sees only when they overlap in time). */
typedef struct {
    rc_ref_t ev;
    int write;
} rc_olctx_t;

static void ol_piece(void *c, int win, int owner, uintptr_t oaddr, size_t len)
{
    rc_olctx_t *x = c;
    char b[160];
    int n = snprintf(b, sizeof b, "ol %lu.%lu %c %d %d %lx %lu\n", (unsigned long)x->ev.a,
                     (unsigned long)x->ev.s, x->write ? 'W' : 'R', win, owner,
                     (unsigned long)oaddr, (unsigned long)len);
    if (n > 0 && n < (int)sizeof b)
        rc_log("%s", b);
}

static long opno; /* the RMA calls recorded so far (their order under the big lock) */

/* Records one operation; `res`/`rcount`/`rtype` is the result buffer of fetching calls.
 * `issued`: the issue stamp when the call already returned (request-based calls), else 0 and
 * op_issued(the returned event number) once it returns; -1: nothing recorded. Caller holds the
 * big lock. */
static long op_record(const char *call, int widx, int target, MPI_Aint disp, int tcount,
                      MPI_Datatype ttype, const void *obuf, int ocount, MPI_Datatype otype,
                      const void *res, int rcount, MPI_Datatype rtype, const char *op,
                      MPI_Request req, void *pc, uint64_t issued)
{
    char p[512], bs[8192], bt[64];
    blocks_t *b = malloc(2 * sizeof *b); /* the target side; then the origin and result sides */
    if (!b)
        return -1;
    b->n = 0;
    b->approx = 0;
    /* A call whose origin (or result) side carries no byte moves none (MPI-3.1 §11.3: empty type
     * signatures match), whatever its target side says: it touches no target byte. */
    int getlike = strcmp(call, "MPI_Get") == 0 || strcmp(call, "MPI_Rget") == 0 ||
                  (op && strcmp(op, "no_op") == 0);
    if (type_bytes(getlike ? rtype : otype, getlike ? rcount : ocount) != 0)
        flat(ttype, tcount, 0, b, 0);
    int tw = wworld(widx, target);
    rc_pc(pc, p, sizeof p);
    rc_ref_t ev = rc_event("op", "-", "%d %s %d %ld %s %d %s %s %s %s", widx, call, tw,
                           (long)disp, blocks_str(b, bs, sizeof bs), b->approx, op ? op : "-",
                           op ? type_base(ttype, bt, 0) : "-", req_str(req), p);
    long no = ++opno;
    /* Its local buffers go in flight, and its atomic is staged, before anything can wait
     * (atom_merge drops the big lock while it waits): both lists stay in number order, which
     * rc_inflight_issued and op_issued rely on. */
    int slot = -1;
    if (op && b->n > 0 && (ashm || awin != MPI_WIN_NULL)) {
        slot = atom_slot(wins[widx].gid, tw, (long)disp, b->off[0]);
        astage_push(&(rc_apend_t){widx, tw, slot, req}, no, issued);
    }
    /* The call reads its origin buffer and writes its result buffer at some point until it
     * completes locally: against the local buffers of operations still in flight, that is what a
     * load or a store there would be (two gets into one buffer race; a put from a buffer a get
     * is filling reads it too early). Both sides are checked before either goes in flight. */
    const void *side[2] = {obuf, res}; /* side 1, the result, is written */
    int cnt[2] = {ocount, rcount};
    MPI_Datatype ty[2] = {otype, rtype};
    for (int s = 0; s < 2; s++) {
        b[s].n = 0;
        b[s].approx = 0;
        if (!side[s] || cnt[s] <= 0 || side[s] == MPI_BOTTOM)
            continue;
        flat(ty[s], cnt[s], 0, &b[s], 0);
        for (int i = 0; i < b[s].n; i++)
            rc_inflight_check((uintptr_t)side[s] + (uintptr_t)b[s].off[i], (size_t)b[s].len[i], s,
                              pc, call);
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < b[s].n; i++) {
            uintptr_t a = (uintptr_t)side[s] + (uintptr_t)b[s].off[i];
            rc_inflight_add(a, (size_t)b[s].len[i], widx, tw, no, ev, s, req, issued);
            rc_range_each(a, (size_t)b[s].len[i], ol_piece, &(rc_olctx_t){ev, s});
        }
    if (slot >= 0)
        atom_merge(tw, slot, ev); /* before the operation goes to MPI */
    free(b);
    return no;
}

#define OP_PROLOGUE(win, target)                                                                   \
    int widx = (rc_active && !rc_inside && (target) != MPI_PROC_NULL) ? widx_of(win) : -1;

/* An RMA call without a request: recorded under the big lock, issued without it, then marked
 * issued. */
#define OP_CALL(NEXTCALL, RECORD)                                                                  \
    LOCK();                                                                                        \
    OP_PROLOGUE(w, t);                                                                             \
    long no_ = widx >= 0 ? RECORD : -1;                                                            \
    UNLOCK();                                                                                      \
    int rc = NEXTCALL;                                                                             \
    op_issued(no_);                                                                                \
    return rc;

/* A request-based RMA call: recorded once it returned (with its request). */
#define OP_RCALL(NAME, NEXTCALL, RECORD)                                                           \
    int rc = NEXTCALL;                                                                             \
    LOCK();                                                                                        \
    OP_PROLOGUE(w, t);                                                                             \
    if (widx >= 0 && rc == MPI_SUCCESS) {                                                          \
        RECORD;                                                                                    \
        req_track(*rq, widx, 0, NAME, t);                                                          \
    }                                                                                              \
    UNLOCK();                                                                                      \
    return rc;

int MPI_Put(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
            MPI_Win w)
{
    NEXT(MPI_Put);
    OP_CALL(next_MPI_Put(o, oc, ot, t, d, tc, tt, w),
            op_record("MPI_Put", widx, t, d, tc, tt, o, oc, ot, NULL, 0, ot, NULL,
                      MPI_REQUEST_NULL, PC, 0))
}

int MPI_Get(void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
            MPI_Win w)
{
    NEXT(MPI_Get);
    OP_CALL(next_MPI_Get(o, oc, ot, t, d, tc, tt, w),
            op_record("MPI_Get", widx, t, d, tc, tt, NULL, 0, ot, o, oc, ot, NULL,
                      MPI_REQUEST_NULL, PC, 0))
}

int MPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    NEXT(MPI_Accumulate);
    OP_CALL(next_MPI_Accumulate(o, oc, ot, t, d, tc, tt, op, w),
            op_record("MPI_Accumulate", widx, t, d, tc, tt, o, oc, ot, NULL, 0, ot, op_name(op),
                      MPI_REQUEST_NULL, PC, 0))
}

int MPI_Get_accumulate(const void *o, int oc, MPI_Datatype ot, void *r, int rc_, MPI_Datatype rt,
                       int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    NEXT(MPI_Get_accumulate);
    OP_CALL(next_MPI_Get_accumulate(o, oc, ot, r, rc_, rt, t, d, tc, tt, op, w),
            op_record("MPI_Get_accumulate", widx, t, d, tc, tt, op == MPI_NO_OP ? NULL : o, oc,
                      ot, r, rc_, rt, op_name(op), MPI_REQUEST_NULL, PC, 0))
}

int MPI_Fetch_and_op(const void *o, void *r, MPI_Datatype dt, int t, MPI_Aint d, MPI_Op op,
                     MPI_Win w)
{
    NEXT(MPI_Fetch_and_op);
    OP_CALL(next_MPI_Fetch_and_op(o, r, dt, t, d, op, w),
            op_record("MPI_Fetch_and_op", widx, t, d, 1, dt, op == MPI_NO_OP ? NULL : o, 1, dt, r,
                      1, dt, op_name(op), MPI_REQUEST_NULL, PC, 0))
}

int MPI_Compare_and_swap(const void *o, const void *c, void *r, MPI_Datatype dt, int t,
                         MPI_Aint d, MPI_Win w)
{
    NEXT(MPI_Compare_and_swap);
    OP_CALL(next_MPI_Compare_and_swap(o, c, r, dt, t, d, w),
            op_record("MPI_Compare_and_swap", widx, t, d, 1, dt, o, 1, dt, r, 1, dt, "cas",
                      MPI_REQUEST_NULL, PC, 0))
}

int MPI_Rput(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
             MPI_Win w, MPI_Request *rq)
{
    NEXT(MPI_Rput);
    OP_RCALL("MPI_Rput", next_MPI_Rput(o, oc, ot, t, d, tc, tt, w, rq),
             op_record("MPI_Rput", widx, t, d, tc, tt, o, oc, ot, NULL, 0, ot, NULL, *rq, PC,
                       stamp_next()))
}

int MPI_Rget(void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
             MPI_Win w, MPI_Request *rq)
{
    NEXT(MPI_Rget);
    OP_RCALL("MPI_Rget", next_MPI_Rget(o, oc, ot, t, d, tc, tt, w, rq),
             op_record("MPI_Rget", widx, t, d, tc, tt, NULL, 0, ot, o, oc, ot, NULL, *rq, PC,
                       stamp_next()))
}

int MPI_Raccumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                    MPI_Datatype tt, MPI_Op op, MPI_Win w, MPI_Request *rq)
{
    NEXT(MPI_Raccumulate);
    OP_RCALL("MPI_Raccumulate", next_MPI_Raccumulate(o, oc, ot, t, d, tc, tt, op, w, rq),
             op_record("MPI_Raccumulate", widx, t, d, tc, tt, o, oc, ot, NULL, 0, ot, op_name(op),
                       *rq, PC, stamp_next()))
}

int MPI_Rget_accumulate(const void *o, int oc, MPI_Datatype ot, void *r, int rc_,
                        MPI_Datatype rt, int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op,
                        MPI_Win w, MPI_Request *rq)
{
    NEXT(MPI_Rget_accumulate);
    OP_RCALL("MPI_Rget_accumulate",
             next_MPI_Rget_accumulate(o, oc, ot, r, rc_, rt, t, d, tc, tt, op, w, rq),
             op_record("MPI_Rget_accumulate", widx, t, d, tc, tt, op == MPI_NO_OP ? NULL : o, oc,
                       ot, r, rc_, rt, op_name(op), *rq, PC, stamp_next()))
}

/* ---- synchronization ---------------------------------------------------------------------- */

/* MPI_MODE_* differ between MPIs: the log carries them as bits 1 NOCHECK, 2 NOSTORE, 4 NOPUT,
 * 8 NOPRECEDE, 16 NOSUCCEED. */
static int norm_assert(int a)
{
    return (a & MPI_MODE_NOCHECK ? 1 : 0) | (a & MPI_MODE_NOSTORE ? 2 : 0) |
           (a & MPI_MODE_NOPUT ? 4 : 0) | (a & MPI_MODE_NOPRECEDE ? 8 : 0) |
           (a & MPI_MODE_NOSUCCEED ? 16 : 0);
}

static rc_ref_t sync_record(int widx, const char *call, int target, int a1, int a2,
                            const char *grp, MPI_Request req, void *pc)
{
    char p[512];
    a1 = norm_assert(a1);
    rc_pc(pc, p, sizeof p);
    return rc_event("sync", "-", "%d %s %d %d %d %s %s %s", widx, call,
                    target >= 0 ? wworld(widx, target) : -1, a1, a2, grp ? grp : "-",
                    req_str(req), p);
}

#define SYNC_PROLOGUE(win) int widx = (rc_active && !rc_inside) ? widx_of(win) : -1;

/* Receives the clocks of the window comm ranks g[0..n) with tag (a copy of the group: recv_vc
 * drops the big lock). */
static void recv_vcs(const int *g, int n, int tag, MPI_Comm comm)
{
    int *c = ints_dup(g, n);
    rc_ref_t *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!c || !r)
        atom_fail("out of memory");
    int k = 0;
    for (int i = 0; i < n; i++)
        k += recv_ref(c[i], tag, comm, &r[k]);
    rc_join(r, k);
    free(c);
    free(r);
}

int MPI_Win_fence(int assert, MPI_Win w)
{
    NEXT(MPI_Win_fence);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx < 0) {
        UNLOCK();
        return next_MPI_Win_fence(assert, w);
    }
    uint64_t st = stamp_next();
    sync_record(widx, "MPI_Win_fence", -1, assert, 0, NULL, MPI_REQUEST_NULL, PC);
    rc_xg_t xg;
    xg_start(wins[widx].shadow, &xg);
    UNLOCK();
    int rc = next_MPI_Win_fence(assert, w);
    LOCK();
    release_ops(widx, -1, 0, MPI_REQUEST_NULL, st);
    fence_late_finish(&wins[widx]); /* the previous fence's */
    if (xg.b) {
        wins[widx].fxg = xg;
        wins[widx].fxg_ev = rc_event("j", "L", "%s", "");
    }
    UNLOCK();
    return rc;
}

int MPI_Win_post(MPI_Group g, int assert, MPI_Win w)
{
    NEXT(MPI_Win_post);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx < 0) {
        UNLOCK();
        return next_MPI_Win_post(g, assert, w);
    }
    char gs[1024];
    free(wins[widx].post);
    wins[widx].npost = group_ranks(g, widx, &wins[widx].post);
    group_str(widx, wins[widx].post, wins[widx].npost, gs, sizeof gs);
    rc_ref_t ev = sync_record(widx, "MPI_Win_post", -1, assert, 0, gs, MPI_REQUEST_NULL, PC);
    UNLOCK();
    int rc = next_MPI_Win_post(g, assert, w);
    LOCK();
    for (int i = 0; i < wins[widx].npost; i++)
        send_vc(wins[widx].post[i], TAG_POST, wins[widx].shadow, ev);
    UNLOCK();
    return rc;
}

int MPI_Win_start(MPI_Group g, int assert, MPI_Win w)
{
    NEXT(MPI_Win_start);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx < 0) {
        UNLOCK();
        return next_MPI_Win_start(g, assert, w);
    }
    char gs[1024];
    free(wins[widx].start);
    wins[widx].nstart = group_ranks(g, widx, &wins[widx].start);
    group_str(widx, wins[widx].start, wins[widx].nstart, gs, sizeof gs);
    sync_record(widx, "MPI_Win_start", -1, assert, 0, gs, MPI_REQUEST_NULL, PC);
    UNLOCK();
    int rc = next_MPI_Win_start(g, assert, w);
    LOCK();
    if (rc == MPI_SUCCESS)
        recv_vcs(wins[widx].start, wins[widx].nstart, TAG_POST, wins[widx].shadow);
    UNLOCK();
    return rc;
}

int MPI_Win_complete(MPI_Win w)
{
    NEXT(MPI_Win_complete);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx < 0) {
        UNLOCK();
        return next_MPI_Win_complete(w);
    }
    uint64_t st = stamp_next();
    rc_ref_t ev = sync_record(widx, "MPI_Win_complete", -1, 0, 0, NULL, MPI_REQUEST_NULL, PC);
    UNLOCK();
    int rc = next_MPI_Win_complete(w);
    LOCK();
    release_ops(widx, -1, 0, MPI_REQUEST_NULL, st);
    post_recv_finish(&wins[widx]); /* an MPIX_Win_istart's post clocks */
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < wins[widx].nstart; i++)
            send_vc(wins[widx].start[i], TAG_COMPLETE, wins[widx].shadow, ev);
        wins[widx].nstart = 0;
    }
    UNLOCK();
    return rc;
}

int MPI_Win_wait(MPI_Win w)
{
    NEXT(MPI_Win_wait);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx < 0) {
        UNLOCK();
        return next_MPI_Win_wait(w);
    }
    sync_record(widx, "MPI_Win_wait", -1, 0, 0, NULL, MPI_REQUEST_NULL, PC);
    UNLOCK();
    int rc = next_MPI_Win_wait(w);
    LOCK();
    if (rc == MPI_SUCCESS) {
        int n = wins[widx].npost;
        wins[widx].npost = 0;
        recv_vcs(wins[widx].post, n, TAG_COMPLETE, wins[widx].shadow);
    }
    UNLOCK();
    return rc;
}

int MPI_Win_test(MPI_Win w, int *flag)
{
    NEXT(MPI_Win_test);
    int rc = next_MPI_Win_test(w, flag);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx >= 0 && rc == MPI_SUCCESS && *flag) {
        sync_record(widx, "MPI_Win_wait", -1, 0, 0, NULL, MPI_REQUEST_NULL, PC);
        int n = wins[widx].npost;
        wins[widx].npost = 0;
        recv_vcs(wins[widx].post, n, TAG_COMPLETE, wins[widx].shadow);
    }
    UNLOCK();
    return rc;
}

int MPI_Win_lock(int type, int t, int assert, MPI_Win w)
{
    NEXT(MPI_Win_lock);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx >= 0)
        sync_record(widx, "MPI_Win_lock", t, assert, type == MPI_LOCK_EXCLUSIVE, NULL,
                    MPI_REQUEST_NULL, PC);
    UNLOCK();
    return next_MPI_Win_lock(type, t, assert, w);
}

int MPI_Win_lock_all(int assert, MPI_Win w)
{
    NEXT(MPI_Win_lock_all);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx >= 0)
        sync_record(widx, "MPI_Win_lock_all", -1, assert, 0, NULL, MPI_REQUEST_NULL, PC);
    UNLOCK();
    return next_MPI_Win_lock_all(assert, w);
}

/* A closing call completes what was issued before it started (stamp st), on return. */
#define CLOSE_WRAPPER(NAME, ARGS_DECL, ARGS, TARGET, LOCAL)                                        \
    int NAME ARGS_DECL                                                                             \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        LOCK();                                                                                    \
        SYNC_PROLOGUE(w);                                                                          \
        if (widx < 0) {                                                                            \
            UNLOCK();                                                                              \
            return next_##NAME ARGS;                                                               \
        }                                                                                          \
        uint64_t st = stamp_next();                                                                \
        sync_record(widx, #NAME, TARGET, 0, 0, NULL, MPI_REQUEST_NULL, PC);                        \
        UNLOCK();                                                                                  \
        int rc = next_##NAME ARGS;                                                                 \
        LOCK();                                                                                    \
        release_ops(widx, (TARGET) >= 0 ? wworld(widx, TARGET) : -1, 0, MPI_REQUEST_NULL, st);    \
        UNLOCK();                                                                                  \
        return rc;                                                                                 \
    }

CLOSE_WRAPPER(MPI_Win_unlock, (int t, MPI_Win w), (t, w), t, 0)
CLOSE_WRAPPER(MPI_Win_unlock_all, (MPI_Win w), (w), -1, 0)
CLOSE_WRAPPER(MPI_Win_flush, (int t, MPI_Win w), (t, w), t, 0)
CLOSE_WRAPPER(MPI_Win_flush_all, (MPI_Win w), (w), -1, 0)
CLOSE_WRAPPER(MPI_Win_flush_local, (int t, MPI_Win w), (t, w), t, 1)
CLOSE_WRAPPER(MPI_Win_flush_local_all, (MPI_Win w), (w), -1, 1)

int MPI_Win_sync(MPI_Win w)
{
    NEXT(MPI_Win_sync);
    LOCK();
    SYNC_PROLOGUE(w);
    if (widx >= 0)
        sync_record(widx, "MPI_Win_sync", -1, 0, 0, NULL, MPI_REQUEST_NULL, PC);
    UNLOCK();
    return next_MPI_Win_sync(w);
}

/* ---- libnbrma's nonblocking synchronization (weak: absent on vendor-only programs) --------- */

#define NBSYNC(NAME, ARGS_DECL, ARGS, TARGET, A1, A2, GROUP)                                       \
    int NAME ARGS_DECL;                                                                            \
    int NAME ARGS_DECL                                                                             \
    {                                                                                              \
        static __typeof__(&NAME) nx_;                                                              \
        __typeof__(&NAME) nx = __atomic_load_n(&nx_, __ATOMIC_ACQUIRE);                            \
        if (!nx) {                                                                                 \
            nx = (__typeof__(&NAME))dlsym(RTLD_NEXT, #NAME);                                       \
            __atomic_store_n(&nx_, nx, __ATOMIC_RELEASE);                                          \
        }                                                                                          \
        if (!nx) {                                                                                 \
            fprintf(stderr, "rmacheck: %s is not provided by the MPI library\n", #NAME);           \
            return MPI_ERR_OTHER;                                                                  \
        }                                                                                          \
        LOCK();                                                                                    \
        SYNC_PROLOGUE(w);                                                                          \
        uint64_t st = stamp_next(); /* what is issued before the call, the call covers */          \
        UNLOCK();                                                                                  \
        int rc = nx ARGS;                                                                          \
        if (widx < 0 || rc != MPI_SUCCESS)                                                         \
            return rc;                                                                             \
        LOCK();                                                                                    \
        char gs[1024] = "-";                                                                       \
        GROUP;                                                                                     \
        rc_ref_t ev_ = sync_record(widx, #NAME, TARGET, A1, A2, gs, *req, PC);                     \
        rc_req_t *e_ = req_track(*req, widx, 1, #NAME, TARGET);                                    \
        if (e_)                                                                                    \
            e_->start = st;                                                                        \
        req_take_epoch(e_, widx, #NAME, ev_);                                                      \
        if (strstr(#NAME, "unlock") || strstr(#NAME, "flush") || strstr(#NAME, "complete") ||     \
            strstr(#NAME, "fence"))                                                                \
            rc_inflight_mark_closing(widx, (TARGET) >= 0 ? wworld(widx, TARGET) : -1);             \
        if (strcmp(#NAME, "MPIX_Win_ipost") == 0)                                                  \
            for (int i = 0; i < wins[widx].npost; i++)                                             \
                send_vc(wins[widx].post[i], TAG_POST, wins[widx].shadow, ev_);                     \
        if (strcmp(#NAME, "MPIX_Win_istart") == 0)                                                 \
            post_recv_start(&wins[widx]);                                                          \
        UNLOCK();                                                                                  \
        return rc;                                                                                 \
    }

#define POSTGRP                                                                                    \
    free(wins[widx].post);                                                                         \
    wins[widx].npost = group_ranks(g, widx, &wins[widx].post);                                     \
    group_str(widx, wins[widx].post, wins[widx].npost, gs, sizeof gs)
#define STARTGRP                                                                                   \
    free(wins[widx].start);                                                                        \
    wins[widx].nstart = group_ranks(g, widx, &wins[widx].start);                                   \
    group_str(widx, wins[widx].start, wins[widx].nstart, gs, sizeof gs)

NBSYNC(MPIX_Win_ifence, (int assert, MPI_Win w, MPI_Request *req), (assert, w, req), -1, assert,
       0, (void)0)
NBSYNC(MPIX_Win_ipost, (MPI_Group g, int assert, MPI_Win w, MPI_Request *req),
       (g, assert, w, req), -1, assert, 0, POSTGRP)
NBSYNC(MPIX_Win_istart, (MPI_Group g, int assert, MPI_Win w, MPI_Request *req),
       (g, assert, w, req), -1, assert, 0, STARTGRP)
NBSYNC(MPIX_Win_icomplete, (MPI_Win w, MPI_Request *req), (w, req), -1, 0, 0, (void)0)
NBSYNC(MPIX_Win_iwait, (MPI_Win w, MPI_Request *req), (w, req), -1, 0, 0, (void)0)
NBSYNC(MPIX_Win_ilock, (int type, int t, int assert, MPI_Win w, MPI_Request *req),
       (type, t, assert, w, req), t, assert, type == MPI_LOCK_EXCLUSIVE, (void)0)
NBSYNC(MPIX_Win_iunlock, (int t, MPI_Win w, MPI_Request *req), (t, w, req), t, 0, 0, (void)0)
NBSYNC(MPIX_Win_ilock_all, (int assert, MPI_Win w, MPI_Request *req), (assert, w, req), -1,
       assert, 0, (void)0)
NBSYNC(MPIX_Win_iunlock_all, (MPI_Win w, MPI_Request *req), (w, req), -1, 0, 0, (void)0)
NBSYNC(MPIX_Win_iflush, (int t, MPI_Win w, MPI_Request *req), (t, w, req), t, 0, 0, (void)0)
NBSYNC(MPIX_Win_iflush_local, (int t, MPI_Win w, MPI_Request *req), (t, w, req), t, 0, 0,
       (void)0)
NBSYNC(MPIX_Win_iflush_all, (MPI_Win w, MPI_Request *req), (w, req), -1, 0, 0, (void)0)
NBSYNC(MPIX_Win_iflush_local_all, (MPI_Win w, MPI_Request *req), (w, req), -1, 0, 0, (void)0)

/* ---- request completion ------------------------------------------------------------------- */

/* The clock of the send a completed receive matched (sent on the communicator's channel with
 * the message's tag, see P2P_SEND). A cancelled receive, or one from MPI_PROC_NULL, matched
 * none. */
static void p2p_recv_edge(MPI_Comm comm, const MPI_Status *st)
{
    int cancelled = 0, cs;
    if (wshadow == MPI_COMM_NULL || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0 ||
        PMPI_Test_cancelled(st, &cancelled) != MPI_SUCCESS || cancelled)
        return;
    MPI_Comm ch = chan_of(comm, st->MPI_SOURCE, &cs);
    if (ch == MPI_COMM_NULL)
        return;
    rc_ref_t sent = {0, 0, 0};
    char j[80];
    recv_ref(cs, st->MPI_TAG, ch, &sent);
    rc_event("p2p", ref_str(sent, j, sizeof j), "recv %d", cs);
}

/* The completion of request r, whose entry ep the caller took out of the table (req_claim) before
 * the call that completed it: once MPI completed it, another thread may be handed the same handle
 * for a new request and follow it before this thread gets here. Caller holds the big lock. */
static void req_done(rc_req_t *ep, MPI_Request r, const MPI_Status *st)
{
    rc_req_t e = *ep;
    free(ep);
    if (e.sync == 3) {
        if (st)
            p2p_recv_edge(e.comm, st);
        return;
    }
    if (e.sync == 2) {
        /* every member started the clock allreduce with the collective: it completes */
        vc_join_req(&e.vcreq, e.vcbuf, e.vcn);
        free(e.vcbuf);
        rc_event("coll", "-", "%s", e.call);
        return;
    }
    if (!wins[e.widx].used) {
        req_bufs_free(&e);
        return;
    }
    rc_win_t *W = &wins[e.widx];
    /* Clocks the completion carries are joined before its event is logged, so the event (and
     * an epoch a deferred one activates after it) is ordered after what they bring: the other
     * members' fence calls, the origins' complete calls, the targets' posts. */
    if (strcmp(e.call, "MPIX_Win_ifence") == 0 && e.vcbuf) {
        vc_join_req(&e.vcreq, e.vcbuf, e.vcn);
    } else if (strcmp(e.call, "MPIX_Win_icomplete") == 0) {
        join_posts(e.prq, e.pvc, e.nprq);
    } else if (strcmp(e.call, "MPIX_Win_iwait") == 0) {
        recv_vcs(e.grp, e.ngrp, TAG_COMPLETE, W->shadow);
    }
    req_bufs_free(&e);
    if (!wins[e.widx].used) /* freed while this thread waited without the lock */
        return;
    rc_event("rq", "-", "%d %s %s", e.widx, e.call, req_str(r));
    if (!e.sync) {
        release_ops(e.widx, -1, 1, r, RC_STAMP_ALL);
        return;
    }
    int tw = e.target >= 0 ? wworld(e.widx, e.target) : -1;
    if (strstr(e.call, "unlock") || strstr(e.call, "flush"))
        release_ops(e.widx, tw, 0, MPI_REQUEST_NULL, e.start);
    if (strcmp(e.call, "MPIX_Win_ifence") == 0 || strcmp(e.call, "MPIX_Win_icomplete") == 0)
        release_ops(e.widx, -1, 0, MPI_REQUEST_NULL, e.start);
}

/* The entry of r, out of the table while a completion call runs without the big lock (NULL: not
 * followed). The handle stays r's until the call completes it, so no other entry can take the
 * key meanwhile; req_unclaim puts back the entry of a request the call did not complete. */
static rc_req_t *req_claim(MPI_Request r)
{
    if (!rc_active || rc_inside || r == MPI_REQUEST_NULL)
        return NULL;
    return (rc_req_t *)ht_remove(&reqs, req_key(r));
}

static void req_unclaim(rc_req_t *e)
{
    if (!e)
        return;
    rc_req_t *old = (rc_req_t *)ht_remove(&reqs, e->h.key); /* none: the handle was live */
    if (old) {
        req_drop(old);
        free(old);
    }
    if (!ht_insert(&reqs, &e->h)) {
        req_drop(e);
        free(e);
    }
}

/* The family passes each completed request's status to req_done (a receive needs its source
 * and tag); where the application ignores statuses, the wrappers ask for them anyway. */
int MPI_Wait(MPI_Request *r, MPI_Status *st)
{
    NEXT(MPI_Wait);
    MPI_Request s = *r;
    MPI_Status own;
    MPI_Status *use = st == MPI_STATUS_IGNORE ? &own : st;
    LOCK();
    rc_req_t *e = req_claim(s);
    UNLOCK();
    int rc = next_MPI_Wait(r, use);
    if (e) {
        LOCK();
        req_done(e, s, rc == MPI_SUCCESS ? use : NULL);
        UNLOCK();
    }
    return rc;
}

int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    NEXT(MPI_Test);
    MPI_Request s = *r;
    MPI_Status own;
    MPI_Status *use = st == MPI_STATUS_IGNORE ? &own : st;
    LOCK();
    rc_req_t *e = req_claim(s);
    UNLOCK();
    int rc = next_MPI_Test(r, flag, use);
    if (e) {
        LOCK();
        if (*flag)
            req_done(e, s, rc == MPI_SUCCESS ? use : NULL);
        else
            req_unclaim(e);
        UNLOCK();
    }
    return rc;
}

/* The handles before the call (completion sets them to MPI_REQUEST_NULL) and their claimed
 * entries: on the stack up to 64, else on the heap (FREE_REQS); without memory, only the first
 * 64 are followed. */
typedef struct {
    MPI_Request r;
    rc_req_t *e;
} rc_saved_t;
#define SAVE_REQS(n, r)                                                                            \
    rc_saved_t sv_stack_[64];                                                                      \
    rc_saved_t *sv_ = (n) > 64 ? malloc((size_t)(n) * sizeof *sv_) : NULL;                         \
    int nsv_ = (n) < 0 ? 0 : (n);                                                                  \
    if (!sv_) {                                                                                    \
        sv_ = sv_stack_;                                                                           \
        nsv_ = nsv_ < 64 ? nsv_ : 64;                                                              \
    }                                                                                              \
    LOCK();                                                                                        \
    for (int i_ = 0; i_ < nsv_; i_++) {                                                            \
        sv_[i_].r = (r)[i_];                                                                       \
        sv_[i_].e = req_claim(sv_[i_].r);                                                          \
    }                                                                                              \
    UNLOCK();
#define FREE_REQS()                                                                                \
    do {                                                                                           \
        if (sv_ != sv_stack_)                                                                      \
            free(sv_);                                                                             \
    } while (0)

/* After the call: the completion of saved request i (st: its status or NULL) ... */
static void saved_done(rc_saved_t *sv, int i, const MPI_Status *st)
{
    if (sv[i].e)
        req_done(sv[i].e, sv[i].r, st);
    sv[i].e = NULL;
}

/* ... and the entries of those the call did not complete go back. */
static void saved_unclaim(rc_saved_t *sv, int n)
{
    for (int i = 0; i < n; i++)
        if (sv[i].e) {
            req_unclaim(sv[i].e);
            sv[i].e = NULL;
        }
}

/* statuses for n requests: the caller's, or an array of our own (NULL when out of memory) */
static MPI_Status *statuses(int n, MPI_Status st[], MPI_Status **own)
{
    *own = NULL;
    if (st != MPI_STATUSES_IGNORE)
        return st;
    *own = malloc((size_t)(n > 0 ? n : 1) * sizeof **own);
    return *own ? *own : MPI_STATUSES_IGNORE;
}

int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[])
{
    NEXT(MPI_Waitall);
    SAVE_REQS(n, r);
    MPI_Status *own, *use = statuses(n, st, &own);
    int rc = next_MPI_Waitall(n, r, use);
    LOCK();
    for (int i = 0; i < nsv_; i++)
        saved_done(sv_, i, rc == MPI_SUCCESS && use != MPI_STATUSES_IGNORE ? &use[i] : NULL);
    UNLOCK();
    free(own);
    FREE_REQS();
    return rc;
}

int MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status st[])
{
    NEXT(MPI_Testall);
    SAVE_REQS(n, r);
    MPI_Status *own, *use = statuses(n, st, &own);
    int rc = next_MPI_Testall(n, r, flag, use);
    LOCK();
    if (*flag)
        for (int i = 0; i < nsv_; i++)
            saved_done(sv_, i, rc == MPI_SUCCESS && use != MPI_STATUSES_IGNORE ? &use[i] : NULL);
    saved_unclaim(sv_, nsv_);
    UNLOCK();
    free(own);
    FREE_REQS();
    return rc;
}

int MPI_Waitany(int n, MPI_Request r[], int *idx, MPI_Status *st)
{
    NEXT(MPI_Waitany);
    SAVE_REQS(n, r);
    MPI_Status own;
    MPI_Status *use = st == MPI_STATUS_IGNORE ? &own : st;
    int rc = next_MPI_Waitany(n, r, idx, use);
    LOCK();
    if (*idx >= 0 && *idx < nsv_)
        saved_done(sv_, *idx, rc == MPI_SUCCESS ? use : NULL);
    saved_unclaim(sv_, nsv_);
    UNLOCK();
    FREE_REQS();
    return rc;
}

int MPI_Testany(int n, MPI_Request r[], int *idx, int *flag, MPI_Status *st)
{
    NEXT(MPI_Testany);
    SAVE_REQS(n, r);
    MPI_Status own;
    MPI_Status *use = st == MPI_STATUS_IGNORE ? &own : st;
    int rc = next_MPI_Testany(n, r, idx, flag, use);
    LOCK();
    if (*flag && *idx >= 0 && *idx < nsv_)
        saved_done(sv_, *idx, rc == MPI_SUCCESS ? use : NULL);
    saved_unclaim(sv_, nsv_);
    UNLOCK();
    FREE_REQS();
    return rc;
}

static void some_done(const int *outcount, const int idx[], const MPI_Status *use,
                      rc_saved_t *sv, int nsv, int rc)
{
    LOCK();
    if (*outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++)
            if (idx[i] >= 0 && idx[i] < nsv)
                saved_done(sv, idx[i],
                           rc == MPI_SUCCESS && use != MPI_STATUSES_IGNORE ? &use[i] : NULL);
    saved_unclaim(sv, nsv);
    UNLOCK();
}

int MPI_Waitsome(int n, MPI_Request r[], int *outcount, int idx[], MPI_Status st[])
{
    NEXT(MPI_Waitsome);
    SAVE_REQS(n, r);
    MPI_Status *own, *use = statuses(n, st, &own);
    int rc = next_MPI_Waitsome(n, r, outcount, idx, use);
    some_done(outcount, idx, use, sv_, nsv_, rc);
    free(own);
    FREE_REQS();
    return rc;
}

int MPI_Testsome(int n, MPI_Request r[], int *outcount, int idx[], MPI_Status st[])
{
    NEXT(MPI_Testsome);
    SAVE_REQS(n, r);
    MPI_Status *own, *use = statuses(n, st, &own);
    int rc = next_MPI_Testsome(n, r, outcount, idx, use);
    some_done(outcount, idx, use, sv_, nsv_, rc);
    free(own);
    FREE_REQS();
    return rc;
}

/* ---- collectives and blocking point-to-point: happens-before edges ------------------------- */

/* A blocking collective: its event before the call, the exchange around it (xg_start). */
#define COLL(NAME, ARGS_DECL, ARGS)                                                                \
    int NAME ARGS_DECL                                                                             \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        rc_xg_t xg_ = {MPI_REQUEST_NULL, NULL, 0};                                                 \
        LOCK();                                                                                    \
        if (rc_active && !rc_inside) {                                                             \
            rc_event("coll", "-", "%s", #NAME);                                                    \
            xg_start(comm, &xg_);                                                                  \
        }                                                                                          \
        UNLOCK();                                                                                  \
        int rc = next_##NAME ARGS;                                                                 \
        if (xg_.b) {                                                                               \
            LOCK();                                                                                \
            xg_finish(&xg_, rc == MPI_SUCCESS);                                                    \
            UNLOCK();                                                                              \
        }                                                                                          \
        return rc;                                                                                 \
    }

COLL(MPI_Barrier, (MPI_Comm comm), (comm))
COLL(MPI_Bcast, (void *b, int c, MPI_Datatype t, int root, MPI_Comm comm), (b, c, t, root, comm))
COLL(MPI_Allreduce,
     (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm),
     (s, r, c, t, op, comm))
COLL(MPI_Reduce,
     (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm),
     (s, r, c, t, op, root, comm))
COLL(MPI_Allgather,
     (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, MPI_Comm comm),
     (s, sc, st, r, rc_, rt, comm))
COLL(MPI_Gather,
     (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, int root,
      MPI_Comm comm),
     (s, sc, st, r, rc_, rt, root, comm))
COLL(MPI_Scatter,
     (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, int root,
      MPI_Comm comm),
     (s, sc, st, r, rc_, rt, root, comm))
COLL(MPI_Alltoall,
     (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, MPI_Comm comm),
     (s, sc, st, r, rc_, rt, comm))
COLL(MPI_Allgatherv,
     (const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int rd[],
      MPI_Datatype rt, MPI_Comm comm),
     (s, sc, st, r, rcs, rd, rt, comm))
COLL(MPI_Gatherv,
     (const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int rd[],
      MPI_Datatype rt, int root, MPI_Comm comm),
     (s, sc, st, r, rcs, rd, rt, root, comm))
COLL(MPI_Scatterv,
     (const void *s, const int scs[], const int sd[], MPI_Datatype st, void *r, int rc_,
      MPI_Datatype rt, int root, MPI_Comm comm),
     (s, scs, sd, st, r, rc_, rt, root, comm))
COLL(MPI_Alltoallv,
     (const void *s, const int scs[], const int sd[], MPI_Datatype st, void *r, const int rcs[],
      const int rd[], MPI_Datatype rt, MPI_Comm comm),
     (s, scs, sd, st, r, rcs, rd, rt, comm))
COLL(MPI_Alltoallw,
     (const void *s, const int scs[], const int sd[], const MPI_Datatype sts[], void *r,
      const int rcs[], const int rd[], const MPI_Datatype rts[], MPI_Comm comm),
     (s, scs, sd, sts, r, rcs, rd, rts, comm))
COLL(MPI_Reduce_scatter,
     (const void *s, void *r, const int rcs[], MPI_Datatype t, MPI_Op op, MPI_Comm comm),
     (s, r, rcs, t, op, comm))
COLL(MPI_Reduce_scatter_block,
     (const void *s, void *r, int rc_, MPI_Datatype t, MPI_Op op, MPI_Comm comm),
     (s, r, rc_, t, op, comm))
/* A scan orders each member only after the lower ranks; the join of all members' clocks gives
 * more order than that (a missed race at worst, never a false alarm), as Reduce and Gather do. */
COLL(MPI_Scan, (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm),
     (s, r, c, t, op, comm))
COLL(MPI_Exscan, (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm),
     (s, r, c, t, op, comm))

static int to_world(MPI_Comm comm, int r)
{
    if (r < 0 || comm == MPI_COMM_WORLD)
        return r;
    MPI_Group g, wg;
    int o = MPI_UNDEFINED, inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return MPI_UNDEFINED;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, 1, &r, wg, &o);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    return o;
}

/* Every way to send a message carries an event of the sender to the receive, and every receive
 * consumes one, or a receive would wait for an event nobody sends (an MPI_Ssend matched by an
 * MPI_Recv hung under the first runtime). Blocking sends send it on return, nonblocking ones at
 * the call (the message's content is fixed then), persistent ones at each MPI_Start.
 * Threads: when threads send to one destination with one tag and communicator at once, the k-th
 * event to leave may belong to another thread's message than the k-th message MPI matches. So
 * each send first releases into an object of (channel, destination, tag), before its call, and
 * after the call sends an event that acquires that object: the k-th event then covers the first k
 * sends (the k sends whose events left first had returned before it, and MPI orders the messages
 * of calls ordered in time, so the k-th message was sent — its release logged — before). The
 * receiving side has no such guarantee (docs/rmacheck.md, Limits). A program of one actor per
 * process (not built with rmacheck-cc) needs no object: its later events cover its earlier ones. */
static void p2p_key(char *b, size_t n, MPI_Comm ch, int cd, int tag)
{
    snprintf(b, n, "P%lx.%d.%d", (unsigned long)comm_key(ch), cd, tag);
}

/* Before the send call (caller holds the big lock). */
static rc_ref_t p2p_release(MPI_Comm ch, int cd, int tag, const char *what)
{
    if (!rc_instrumented)
        return rc_event("p2p", "-", "%s %d", what, cd);
    char k[96];
    p2p_key(k, sizeof k, ch, cd, tag);
    rc_rel("%s", k);
    return (rc_ref_t){0, 0, 0};
}

/* After it: the event to the receiver. */
static void p2p_send_event(MPI_Comm ch, int cd, int tag, rc_ref_t pre)
{
    if (rc_instrumented) {
        char k[96];
        p2p_key(k, sizeof k, ch, cd, tag);
        rc_acq("%s", k);
        pre = rc_last();
    }
    send_vc(cd, tag, ch, pre);
}

static int p2p_send_pre(int dest, int tag, MPI_Comm comm, const char *what, MPI_Comm *ch,
                        rc_ref_t *pre)
{
    *ch = MPI_COMM_NULL;
    if (!rc_active || rc_inside || dest == MPI_PROC_NULL || wshadow == MPI_COMM_NULL)
        return MPI_UNDEFINED;
    int cd;
    *ch = chan_of(comm, dest, &cd);
    if (*ch == MPI_COMM_NULL)
        return MPI_UNDEFINED;
    *pre = p2p_release(*ch, cd, tag, what);
    return cd;
}

#define P2P_SEND(NAME, ARGS_DECL, ARGS)                                                            \
    int NAME ARGS_DECL                                                                             \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        MPI_Comm ch;                                                                               \
        rc_ref_t pre;                                                                              \
        LOCK();                                                                                    \
        int cd = p2p_send_pre(dest, tag, comm, "send", &ch, &pre);                                 \
        UNLOCK();                                                                                  \
        int rc = next_##NAME ARGS;                                                                 \
        if (cd != MPI_UNDEFINED && rc == MPI_SUCCESS) {                                            \
            LOCK();                                                                                \
            p2p_send_event(ch, cd, tag, pre);                                                      \
            UNLOCK();                                                                              \
        }                                                                                          \
        return rc;                                                                                 \
    }
#define BSEND_DECL (const void *b, int c, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
#define ISEND_DECL                                                                                 \
    (const void *b, int c, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *rq)
P2P_SEND(MPI_Send, BSEND_DECL, (b, c, t, dest, tag, comm))
P2P_SEND(MPI_Ssend, BSEND_DECL, (b, c, t, dest, tag, comm))
P2P_SEND(MPI_Bsend, BSEND_DECL, (b, c, t, dest, tag, comm))
P2P_SEND(MPI_Rsend, BSEND_DECL, (b, c, t, dest, tag, comm))
P2P_SEND(MPI_Isend, ISEND_DECL, (b, c, t, dest, tag, comm, rq))
P2P_SEND(MPI_Issend, ISEND_DECL, (b, c, t, dest, tag, comm, rq))
P2P_SEND(MPI_Ibsend, ISEND_DECL, (b, c, t, dest, tag, comm, rq))
P2P_SEND(MPI_Irsend, ISEND_DECL, (b, c, t, dest, tag, comm, rq))

int MPI_Recv(void *b, int c, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    NEXT(MPI_Recv);
    MPI_Status s;
    int rc = next_MPI_Recv(b, c, t, src, tag, comm, &s);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    LOCK();
    if (rc_active && !rc_inside && rc == MPI_SUCCESS)
        p2p_recv_edge(comm, &s);
    UNLOCK();
    return rc;
}

/* After a send-receive: the clock to dest (cd, ch from p2p_send_pre), and the source's joined. */
static void sendrecv_edges(int cd, MPI_Comm ch, int stag, MPI_Comm comm, int rc,
                           const MPI_Status *s, rc_ref_t pre)
{
    LOCK();
    if (rc_active && !rc_inside && rc == MPI_SUCCESS) {
        if (cd != MPI_UNDEFINED)
            p2p_send_event(ch, cd, stag, pre);
        p2p_recv_edge(comm, s);
    }
    UNLOCK();
}

int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype stt, int dest, int stag, void *rb, int rc_,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
    NEXT(MPI_Sendrecv);
    MPI_Status s;
    MPI_Comm ch;
    rc_ref_t pre;
    LOCK();
    int cd = p2p_send_pre(dest, stag, comm, "sendrecv", &ch, &pre);
    UNLOCK();
    int rc = next_MPI_Sendrecv(sb, sc, stt, dest, stag, rb, rc_, rt, src, rtag, comm, &s);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    sendrecv_edges(cd, ch, stag, comm, rc, &s, pre);
    return rc;
}

int MPI_Sendrecv_replace(void *b, int c, MPI_Datatype t, int dest, int stag, int src, int rtag,
                         MPI_Comm comm, MPI_Status *st)
{
    NEXT(MPI_Sendrecv_replace);
    MPI_Status s;
    MPI_Comm ch;
    rc_ref_t pre;
    LOCK();
    int cd = p2p_send_pre(dest, stag, comm, "sendrecv", &ch, &pre);
    UNLOCK();
    int rc = next_MPI_Sendrecv_replace(b, c, t, dest, stag, src, rtag, comm, &s);
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    sendrecv_edges(cd, ch, stag, comm, rc, &s, pre);
    return rc;
}

int MPI_Irecv(void *b, int c, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *rq)
{
    NEXT(MPI_Irecv);
    int rc = next_MPI_Irecv(b, c, t, src, tag, comm, rq);
    LOCK();
    if (rc_active && !rc_inside && rc == MPI_SUCCESS && src != MPI_PROC_NULL &&
        wshadow != MPI_COMM_NULL)
        recv_track(*rq, comm, "MPI_Irecv");
    UNLOCK();
    return rc;
}

/* Communicator constructors and destructors: the channel of each new communicator (see
 * chan_of). MPI_Comm_idup's communicator is not usable before its request completes, so it keeps
 * no channel (any entry its handle had is dropped). */
#define CTOR(NAME, ARGS_DECL, ARGS, OUT)                                                           \
    int NAME ARGS_DECL                                                                             \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        int rc = next_##NAME ARGS;                                                                 \
        if (rc == MPI_SUCCESS) {                                                                   \
            LOCK();                                                                                \
            chan_new(*(OUT));                                                                      \
            UNLOCK();                                                                              \
        }                                                                                          \
        return rc;                                                                                 \
    }
CTOR(MPI_Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n), n)
CTOR(MPI_Comm_dup_with_info, (MPI_Comm c, MPI_Info i, MPI_Comm *n), (c, i, n), n)
CTOR(MPI_Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *n), (c, g, n), n)
CTOR(MPI_Comm_create_group, (MPI_Comm c, MPI_Group g, int tag, MPI_Comm *n), (c, g, tag, n), n)
CTOR(MPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *n), (c, color, key, n), n)
CTOR(MPI_Comm_split_type, (MPI_Comm c, int type, int key, MPI_Info i, MPI_Comm *n),
     (c, type, key, i, n), n)
CTOR(MPI_Intercomm_create, (MPI_Comm l, int ll, MPI_Comm p, int rl, int tag, MPI_Comm *n),
     (l, ll, p, rl, tag, n), n)
CTOR(MPI_Intercomm_merge, (MPI_Comm c, int high, MPI_Comm *n), (c, high, n), n)
CTOR(MPI_Cart_create,
     (MPI_Comm c, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *n),
     (c, nd, dims, periods, reorder, n), n)
CTOR(MPI_Cart_sub, (MPI_Comm c, const int remain[], MPI_Comm *n), (c, remain, n), n)
CTOR(MPI_Graph_create,
     (MPI_Comm c, int nn, const int index[], const int edges[], int reorder, MPI_Comm *n),
     (c, nn, index, edges, reorder, n), n)
CTOR(MPI_Dist_graph_create,
     (MPI_Comm c, int nn, const int src[], const int deg[], const int dst[], const int w[],
      MPI_Info i, int reorder, MPI_Comm *n),
     (c, nn, src, deg, dst, w, i, reorder, n), n)
CTOR(MPI_Dist_graph_create_adjacent,
     (MPI_Comm c, int indeg, const int src[], const int sw[], int outdeg, const int dst[],
      const int dw[], MPI_Info i, int reorder, MPI_Comm *n),
     (c, indeg, src, sw, outdeg, dst, dw, i, reorder, n), n)

int MPI_Comm_idup(MPI_Comm c, MPI_Comm *n, MPI_Request *r)
{
    NEXT(MPI_Comm_idup);
    int rc = next_MPI_Comm_idup(c, n, r);
    if (rc == MPI_SUCCESS && !rc_inside) {
        LOCK();
        chan_drop(*n);
        UNLOCK();
    }
    return rc;
}

/* The channel is taken out of the table before the call: once MPI freed the communicator,
 * another thread's constructor may get its handle (and its own channel) at once. */
#define DTOR(NAME)                                                                                 \
    int NAME(MPI_Comm *c)                                                                          \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        MPI_Comm old = *c;                                                                         \
        LOCK();                                                                                    \
        rc_chan_t *ch = rc_inside ? NULL : (rc_chan_t *)ht_remove(&chans, comm_key(old));          \
        UNLOCK();                                                                                  \
        int rc = next_##NAME(c);                                                                   \
        if (ch) {                                                                                  \
            LOCK();                                                                                \
            if (rc == MPI_SUCCESS || ht_find(&chans, ch->h.key) || !ht_insert(&chans, &ch->h)) {   \
                comm_free_unlocked(&ch->shadow);                                                   \
                free(ch);                                                                          \
            }                                                                                      \
            UNLOCK();                                                                              \
        }                                                                                          \
        return rc;                                                                                 \
    }
DTOR(MPI_Comm_free)
DTOR(MPI_Comm_disconnect)

/* Persistent requests, remembered at initialization: a send sends its clock at each start; a
 * receive is followed from each start to its completion like an MPI_Irecv (its completion
 * consumes the sender's clock), however often it is restarted. */
typedef struct {
    rc_hnode_t h; /* key: the request handle */
    int recv;     /* 0: a send to rank wd of channel comm with tag; 1: a receive on comm */
    int wd, tag;
    MPI_Comm comm;
} rc_preq_t;
static rc_htab_t preqs;

static void preq_add(MPI_Request r, int recv, int wd, int tag, MPI_Comm comm)
{
    if (r == MPI_REQUEST_NULL || (!recv && wd == MPI_UNDEFINED))
        return;
    /* a handle reused after MPI_Request_free: the entry is overwritten */
    rc_preq_t *p = (rc_preq_t *)ht_get(&preqs, req_key(r), sizeof *p);
    if (!p)
        return;
    p->recv = recv;
    p->wd = wd;
    p->tag = tag;
    p->comm = comm;
}

static void preq_send(MPI_Request r, int dest, int tag, MPI_Comm comm)
{
    int cd;
    MPI_Comm ch = chan_of(comm, dest, &cd);
    if (ch != MPI_COMM_NULL)
        preq_add(r, 0, cd, tag, ch);
}

#define SEND_INIT(NAME)                                                                            \
    int NAME ISEND_DECL                                                                            \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        int rc = next_##NAME(b, c, t, dest, tag, comm, rq);                                        \
        LOCK();                                                                                    \
        if (rc == MPI_SUCCESS && rc_active && !rc_inside && dest != MPI_PROC_NULL &&               \
            wshadow != MPI_COMM_NULL)                                                              \
            preq_send(*rq, dest, tag, comm);                                                       \
        UNLOCK();                                                                                  \
        return rc;                                                                                 \
    }

SEND_INIT(MPI_Send_init)
SEND_INIT(MPI_Ssend_init)
SEND_INIT(MPI_Bsend_init)
SEND_INIT(MPI_Rsend_init)

int MPI_Recv_init(void *b, int c, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                  MPI_Request *rq)
{
    NEXT(MPI_Recv_init);
    int rc = next_MPI_Recv_init(b, c, t, src, tag, comm, rq);
    LOCK();
    if (rc == MPI_SUCCESS && rc_active && !rc_inside && src != MPI_PROC_NULL &&
        wshadow != MPI_COMM_NULL)
        preq_add(*rq, 1, MPI_UNDEFINED, tag, comm);
    UNLOCK();
    return rc;
}

/* Before MPI_Start(all): the releases of the persistent sends among r[0..n) (pre[i]). */
static void preq_starting(int n, const MPI_Request r[], rc_ref_t pre[])
{
    for (int i = 0; i < n; i++) {
        pre[i] = (rc_ref_t){0, 0, 0};
        rc_preq_t *p = (rc_preq_t *)ht_find(&preqs, req_key(r[i]));
        if (p && !p->recv)
            pre[i] = p2p_release(p->comm, p->wd, p->tag, "send");
    }
}

/* After it: each send's event goes to its receiver; each receive is followed to its completion. */
static void preq_started(MPI_Request r, rc_ref_t pre)
{
    rc_preq_t *p = (rc_preq_t *)ht_find(&preqs, req_key(r));
    if (!p)
        return;
    if (p->recv) {
        recv_track(r, p->comm, "MPI_Recv_init");
        return;
    }
    p2p_send_event(p->comm, p->wd, p->tag, pre);
}

static int preq_on(void) { return rc_active && !rc_inside && wshadow != MPI_COMM_NULL; }

int MPI_Start(MPI_Request *r)
{
    NEXT(MPI_Start);
    rc_ref_t pre;
    LOCK();
    int on = preq_on();
    if (on)
        preq_starting(1, r, &pre);
    UNLOCK();
    MPI_Request h = *r;
    int rc = next_MPI_Start(r);
    LOCK();
    if (rc == MPI_SUCCESS && on)
        preq_started(h, pre);
    UNLOCK();
    return rc;
}

int MPI_Startall(int n, MPI_Request r[])
{
    NEXT(MPI_Startall);
    rc_ref_t *pre = NULL;
    MPI_Request *h = NULL;
    LOCK();
    int on = preq_on() && n > 0;
    if (on) {
        pre = malloc((size_t)n * sizeof *pre);
        h = malloc((size_t)n * sizeof *h);
        if (!pre || !h)
            atom_fail("out of memory");
        memcpy(h, r, (size_t)n * sizeof *h);
        preq_starting(n, r, pre);
    }
    UNLOCK();
    int rc = next_MPI_Startall(n, r);
    LOCK();
    if (rc == MPI_SUCCESS && on)
        for (int i = 0; i < n; i++)
            preq_started(h[i], pre[i]);
    UNLOCK();
    free(pre);
    free(h);
    return rc;
}

/* A freed persistent request is forgotten. A freed active receive (persistent or not) stays
 * followed until MPI hands its handle out again (req_track); its completion is not seen. */
int MPI_Request_free(MPI_Request *r)
{
    NEXT(MPI_Request_free);
    MPI_Request s = *r;
    /* out of the table before the call: once freed, the handle may go to another thread */
    LOCK();
    rc_preq_t *p = s == MPI_REQUEST_NULL ? NULL : (rc_preq_t *)ht_remove(&preqs, req_key(s));
    UNLOCK();
    int rc = next_MPI_Request_free(r);
    if (p) {
        LOCK();
        if (rc == MPI_SUCCESS || ht_find(&preqs, p->h.key) || !ht_insert(&preqs, &p->h))
            free(p);
        UNLOCK();
    }
    return rc;
}

/* Matched probes: the message handle an MPI_Mprobe/MPI_Improbe returns remembers its
 * communicator until MPI_Mrecv/MPI_Imrecv receives it; the receive consumes the sender's clock
 * (MPI_Mrecv on return, MPI_Imrecv when its request completes). MPI_Probe and MPI_Iprobe receive
 * nothing and consume nothing. */
typedef struct {
    rc_hnode_t h; /* key: the message handle */
    MPI_Comm comm;
} rc_msg_t;
static rc_htab_t msgs;

static void msg_add(MPI_Message m, MPI_Comm comm)
{
    if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC)
        return;
    /* an existing entry is a handle whose receive we did not see: overwritten */
    rc_msg_t *p = (rc_msg_t *)ht_get(&msgs, msg_key(m), sizeof *p);
    if (p)
        p->comm = comm;
}

/* The communicator of message m, forgotten; MPI_COMM_NULL when m was not seen probed. */
static MPI_Comm msg_take(MPI_Message m)
{
    if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC)
        return MPI_COMM_NULL;
    rc_msg_t *p = (rc_msg_t *)ht_remove(&msgs, msg_key(m));
    if (!p)
        return MPI_COMM_NULL;
    MPI_Comm c = p->comm;
    free(p);
    return c;
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st)
{
    NEXT(MPI_Mprobe);
    int rc = next_MPI_Mprobe(src, tag, comm, m, st);
    LOCK();
    if (rc == MPI_SUCCESS && rc_active && !rc_inside && wshadow != MPI_COMM_NULL)
        msg_add(*m, comm);
    UNLOCK();
    return rc;
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *m, MPI_Status *st)
{
    NEXT(MPI_Improbe);
    int rc = next_MPI_Improbe(src, tag, comm, flag, m, st);
    LOCK();
    if (rc == MPI_SUCCESS && *flag && rc_active && !rc_inside && wshadow != MPI_COMM_NULL)
        msg_add(*m, comm);
    UNLOCK();
    return rc;
}

int MPI_Mrecv(void *b, int c, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
    NEXT(MPI_Mrecv);
    MPI_Message s = *m;
    MPI_Status own;
    MPI_Status *use = st == MPI_STATUS_IGNORE ? &own : st;
    /* taken before the call: once received, the message handle may go to another thread */
    LOCK();
    MPI_Comm comm = rc_active && !rc_inside ? msg_take(s) : MPI_COMM_NULL;
    UNLOCK();
    int rc = next_MPI_Mrecv(b, c, t, m, use);
    if (comm != MPI_COMM_NULL) {
        LOCK();
        if (rc == MPI_SUCCESS)
            p2p_recv_edge(comm, use);
        else if (*m == s)
            msg_add(s, comm); /* not received: still the program's */
        UNLOCK();
    }
    return rc;
}

int MPI_Imrecv(void *b, int c, MPI_Datatype t, MPI_Message *m, MPI_Request *rq)
{
    NEXT(MPI_Imrecv);
    MPI_Message s = *m;
    LOCK();
    MPI_Comm comm = rc_active && !rc_inside ? msg_take(s) : MPI_COMM_NULL;
    UNLOCK();
    int rc = next_MPI_Imrecv(b, c, t, m, rq);
    if (comm != MPI_COMM_NULL) {
        LOCK();
        if (rc == MPI_SUCCESS)
            recv_track(*rq, comm, "MPI_Imrecv");
        else if (*m == s)
            msg_add(s, comm);
        UNLOCK();
    }
    return rc;
}

/* Nonblocking collectives: the clock allreduce starts with the collective (same communicator,
 * same order on every member) and is joined when the user's request completes. */
static void icoll_track(MPI_Request r, MPI_Comm comm, const char *name)
{
    int inter = 0;
    if (r == MPI_REQUEST_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return;
    rc_event("coll", "-", "%s-start", name);
    MPI_Request vr;
    int n = 0;
    uint64_t *b = vc_iallreduce(comm, &vr, &n);
    if (!b)
        return;
    rc_req_t *e = req_track(r, -1, 2, name, -1);
    if (e) {
        e->vcreq = vr;
        e->vcbuf = b;
        e->vcn = n;
    } else {
        rc_wait(&vr);
        free(b);
    }
}

#define ICOLL(NAME, ARGS_DECL, ARGS)                                                               \
    int NAME ARGS_DECL                                                                             \
    {                                                                                              \
        NEXT(NAME);                                                                                \
        int rc = next_##NAME ARGS;                                                                 \
        LOCK();                                                                                    \
        if (rc_active && !rc_inside && rc == MPI_SUCCESS)                                          \
            icoll_track(*req, comm, #NAME);                                                        \
        UNLOCK();                                                                                  \
        return rc;                                                                                 \
    }

ICOLL(MPI_Ibarrier, (MPI_Comm comm, MPI_Request *req), (comm, req))
ICOLL(MPI_Ibcast, (void *b, int c, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req),
      (b, c, t, root, comm, req))
ICOLL(MPI_Iallreduce,
      (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req),
      (s, r, c, t, op, comm, req))
ICOLL(MPI_Ireduce,
      (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
       MPI_Request *req),
      (s, r, c, t, op, root, comm, req))
ICOLL(MPI_Iallgather,
      (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, MPI_Comm comm,
       MPI_Request *req),
      (s, sc, st, r, rc_, rt, comm, req))
ICOLL(MPI_Igather,
      (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, int root,
       MPI_Comm comm, MPI_Request *req),
      (s, sc, st, r, rc_, rt, root, comm, req))
ICOLL(MPI_Iscatter,
      (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, int root,
       MPI_Comm comm, MPI_Request *req),
      (s, sc, st, r, rc_, rt, root, comm, req))
ICOLL(MPI_Ialltoall,
      (const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, MPI_Comm comm,
       MPI_Request *req),
      (s, sc, st, r, rc_, rt, comm, req))
ICOLL(MPI_Iallgatherv,
      (const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int rd[],
       MPI_Datatype rt, MPI_Comm comm, MPI_Request *req),
      (s, sc, st, r, rcs, rd, rt, comm, req))
ICOLL(MPI_Igatherv,
      (const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int rd[],
       MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req),
      (s, sc, st, r, rcs, rd, rt, root, comm, req))
ICOLL(MPI_Iscatterv,
      (const void *s, const int scs[], const int sd[], MPI_Datatype st, void *r, int rc_,
       MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req),
      (s, scs, sd, st, r, rc_, rt, root, comm, req))
ICOLL(MPI_Ialltoallv,
      (const void *s, const int scs[], const int sd[], MPI_Datatype st, void *r, const int rcs[],
       const int rd[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req),
      (s, scs, sd, st, r, rcs, rd, rt, comm, req))
ICOLL(MPI_Ialltoallw,
      (const void *s, const int scs[], const int sd[], const MPI_Datatype sts[], void *r,
       const int rcs[], const int rd[], const MPI_Datatype rts[], MPI_Comm comm,
       MPI_Request *req),
      (s, scs, sd, sts, r, rcs, rd, rts, comm, req))
ICOLL(MPI_Ireduce_scatter,
      (const void *s, void *r, const int rcs[], MPI_Datatype t, MPI_Op op, MPI_Comm comm,
       MPI_Request *req),
      (s, r, rcs, t, op, comm, req))
ICOLL(MPI_Ireduce_scatter_block,
      (const void *s, void *r, int rc_, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
       MPI_Request *req),
      (s, r, rc_, t, op, comm, req))
ICOLL(MPI_Iscan,
      (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req),
      (s, r, c, t, op, comm, req))
ICOLL(MPI_Iexscan,
      (const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req),
      (s, r, c, t, op, comm, req))
