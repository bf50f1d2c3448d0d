/* ucx.c — the UCX transport: RDMA put/get and remote atomics between nodes through UCP.
 *
 * UCX drives InfiniBand and RoCE (rc, dc, ud through libibverbs), Cray and other networks, and
 * runs here over shared memory (posix/sysv + cma) and TCP with the same UCP calls; MPICH's ch4,
 * Open MPI's osc/ucx and OSHMEM reach RDMA hardware the same way (issue 22).
 *
 * One UCP context and worker per process, created with the first window that wants UCX (features
 * RMA and AMO64); endpoints to a peer when a window first pairs two ranks of different nodes
 * (worker addresses travel with the window's key exchange, endpoints are cached per process).
 * Window memory is registered with ucp_mem_map (create: the user's buffer; allocate: the memory
 * allocated for it; dynamic: each region at MPI_Win_attach), and so is each rank's control block
 * (the lock words of 001 §2.3 and the PSCW/fence counters of 000 §VII-B). Packed keys are
 * exchanged at creation and unpacked once per pair; a dynamic window's region keys are fetched
 * from the owner on a miss (an am request), as its region table is.
 *
 *   put/get       ucp_put_nbx / ucp_get_nbx of contiguous bytes (rma.c walks derived types into
 *                 contiguous pieces; small noncontiguous blocks go packed over am, rma.c, except
 *                 toward a target whose memory UCX maps here — ucp_rkey_ptr, t->mapped).
 *   control words UCP AMO64: ADD, SWAP, CSWAP; the conditional add of a reader/writer try is a
 *                 CSWAP loop (guess, compare, retry with what came back); releases that want no
 *                 result are non-fetching ADDs.
 *   notifications a non-fetching ADD of the difference to the peer's counter (monotonic: two
 *                 notifications in flight may land in any order and still sum right).
 *   accumulates   through am (the target's CPU, under its accumulate lock): MPI-3.1 §11.7.1 makes
 *                 concurrent accumulates to one location with the same basic type atomic whatever
 *                 their operations, and a node's load/store peers apply theirs with the CPU under
 *                 that lock, so a NIC atomic serving one of them would not be atomic with the
 *                 others. One path for every accumulate of a location. NBRMA_ACC=hw: the origin
 *                 takes that same lock with remote atomics, gets, computes, puts and releases
 *                 (paper 004 Fig. 1; hw_acc below); NBRMA_ACC=auto (the default) does so toward
 *                 the targets whose window memory is mapped (nbr_acc_hw).
 *   completion    a get or a fetching atomic is complete when its callback ran (the data is here,
 *                 so the target's memory is no longer read); a put or a non-fetching atomic when
 *                 a ucp_ep_flush_nbx issued after it completed — nbr_tp_quiet starts the flush
 *                 (nbr_tp_flush) for what is outstanding toward the pair.
 *   ordering      none between operations of a pair (RDMA): the window is `unordered`, so a
 *                 closing epoch waits for its operations' completion before its lock release,
 *                 done notification or fence arrival goes out (epoch.c, remote_done).
 *   progress      ucp_worker_progress in step 1 of the engine (nbr_tp_progress) and so in the
 *                 progress thread: over TCP, UCX emulates RMA with active messages that need the
 *                 target's worker to progress.
 *   atomics mode  UCX_ATOMIC_MODE=cpu unless the user set it: a node's load/store peers take the
 *                 same lock words with CPU atomics, so UCX's atomics must be atomic with those
 *                 (device atomics of a NIC are not, in general).
 *
 * Every entry point runs under libnbrma's big lock (or in a process with one thread), so the
 * worker is UCS_THREAD_MODE_SERIALIZED. */
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include "nbr.h"
#include "op.h"
#include "transport/tp.h"

int nbr_ucx_on;
nbr_ucx_stats_t nbr_ucx_stats;

static ucp_context_h ctx;
static ucp_worker_h worker;
static int ucx_state; /* 0: not tried, 1: running, -1: failed (ucx_why says why) */
static char ucx_why[256];
static ucp_address_t *my_addr;
static size_t my_addr_len;
static ucp_ep_h *eps; /* per world rank */
static int nworld;
static long outstanding; /* operations whose callback has not run, flushes included */

/* ---- per window and per pair ---------------------------------------------------------------- */

typedef struct {
    uint64_t base, size; /* the owner's address range */
    ucp_rkey_h key;
} ucx_rreg_t;

typedef struct {
    ucp_ep_h ep;
    ucp_rkey_h wkey, ckey; /* window memory (static flavors), control block */
    uint64_t wbase, cbase;
    long unflushed;   /* puts and non-fetching atomics since the last flush started */
    long notes;       /* notifications since then (not in tp_out: nbr_ucx_settled) */
    int dirty;        /* on the window's dirty list */
    int rank;         /* the pair's target (the plain put/get callbacks' user data is the pair) */
    nbr_win_t *w;
    uint64_t sent[4]; /* notifications: the last value sent per slot (NBR_NS_*) */
    uint64_t guess[3]; /* the last value seen of each control word (the CSWAP loop's guess) */
    long acc_since;    /* accumulate atomics issued since the last ucp_worker_fence (ucx_acc) */
    ucx_rreg_t *rr;    /* dynamic windows: the owner's regions whose keys we fetched */
    int nrr, caprr;
} ucx_pair_t;

typedef struct {
    void *base;
    MPI_Aint size;
    ucp_mem_h mem;
    void *packed;
    size_t plen;
} ucx_lreg_t;

typedef struct {
    ucp_mem_h wmem, cmem;
    int wmem_alloc;   /* wmem is memory UCX allocated (nbr_ucx_win_alloc): unmapping frees it */
    ucx_pair_t *pair; /* by rank */
    int *dirty, ndirty;
    long notes_flushing; /* notifications whose flush is in flight */
    ucx_lreg_t *lr; /* dynamic: my attached regions' registrations */
    int nlr, caplr;
    long long counted; /* bytes of this state in the window's metadata gauge (stats.c) */
} ucx_win_t;

/* ---- operations in flight -------------------------------------------------------------------- */

enum { OP_PUT = 1, OP_GET, OP_AMO, OP_AMO_NR, OP_NOTIFY, OP_FLUSH, OP_ACC };
/* What an operation's end settles: nothing (a put or non-fetching atomic: its flush completes
 * it; a notification), one of tp_out (a get, a fetching atomic), n of tp_out (a flush), a lock
 * try (tp_tries). */
enum { ACCT_NONE = 0, ACCT_OUT, ACCT_FLUSH, ACCT_TRY };

typedef struct ucx_op {
    int kind;
    nbr_win_t *w;
    int rank;
    int acct;    /* what its end settles: ACCT_* */
    nbr_req_t *req;
    nbr_tp_cell_t *cell;
    long n;     /* OP_FLUSH: the operations it completes */
    long notes; /* OP_FLUSH: the notifications it completes */
    /* atomics: operand, reply (CSWAP: the new value in, the old out) */
    uint64_t operand, reply;
    int amo, word; /* NBR_AMO_*, NBR_W_* */
    int reading;   /* a conditional add's read of the word (cadd_again) */
    uint64_t a, b; /* its arguments (CADD retries) */
    void *res;     /* OP_ACC: where the old value goes at completion (esize bytes), or NULL */
    int esize;
    struct ucx_op *next;
} ucx_op_t;

static ucx_op_t *op_free, *retry_head;

/* An operation object from the free list (or the heap), counted outstanding; its fields as they
 * were: the caller sets them. */
static ucx_op_t *op_take(void)
{
    ucx_op_t *o = op_free;
    if (o)
        op_free = o->next;
    else if (!(o = malloc(sizeof *o)))
        return NULL;
    outstanding++;
    return o;
}

static ucx_op_t *op_new(nbr_win_t *w, int rank, int kind, int acct)
{
    ucx_op_t *o = op_take();
    if (!o)
        return NULL;
    *o = (ucx_op_t){.kind = kind, .w = w, .rank = rank, .acct = acct};
    /* A request-based call's first remote operation makes its request (rma.c's NBR_R_ENTRY):
     * the RMA operations of a call, not its synchronization. */
    if (kind == OP_PUT || kind == OP_GET || kind == OP_ACC) {
        if (!w->op_req && w->want_req && !w->replaying && (w->op_req = nbr_req_new(w)))
            w->got_req = w->op_req;
        if ((o->req = w->op_req)) {
            nbr_req_ref(o->req);
            o->req->tp_pending++;
        }
    }
    return o;
}

static void op_release(ucx_op_t *o)
{
    outstanding--;
    o->next = op_free;
    op_free = o;
}

static int status_class(ucs_status_t st)
{
    switch (st) {
    case UCS_OK:
        return MPI_SUCCESS;
    case UCS_ERR_INVALID_ADDR:
    case UCS_ERR_OUT_OF_RANGE:
        return MPI_ERR_RMA_RANGE;
    case UCS_ERR_NO_MEMORY:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_OTHER;
    }
}

static void note_error(nbr_win_t *w, int rank, const char *what, ucs_status_t st)
{
    if (w && w->tp_err == MPI_SUCCESS)
        w->tp_err = status_class(st);
    if (nbr_cfg.VERBOSE)
        fprintf(stderr, "libnbrma (ucx): %s toward rank %d failed: %s\n", what, rank,
                ucs_status_string(st));
}

static void tp_out_add(nbr_win_t *w, int rank, long n)
{
    __atomic_store_n(&w->t[rank].tp_out, w->t[rank].tp_out + n, __ATOMIC_RELEASE);
    __atomic_store_n(&w->tp_out, w->tp_out + n, __ATOMIC_RELEASE);
}

/* A flush's end: the operations and notifications it covered are complete. */
static void flush_settle(const ucx_op_t *o)
{
    tp_out_add(o->w, o->rank, -o->n);
    ((ucx_win_t *)o->w->tp)->notes_flushing -= o->notes;
}

/* The end of an operation: its window's accounting, its request, its cell. */
static void op_done(ucx_op_t *o, ucs_status_t st)
{

    nbr_win_t *w = o->w;
    int err = status_class(st);
    if (st != UCS_OK)
        note_error(w, o->rank,
                   o->kind == OP_PUT   ? "a put"
                   : o->kind == OP_GET ? "a get"
                   : o->kind == OP_FLUSH ? "a flush"
                                         : "an atomic",
                   st);
    if (o->cell)
        *o->cell = (nbr_tp_cell_t){.state = NBR_CELL_READY, .err = err, .val = o->reply};
    if (o->kind == OP_ACC && o->res && st == UCS_OK) /* the result lands at completion */
        memcpy(o->res, &o->reply, (size_t)o->esize);
    if (o->req) {
        nbr_req_op_done(o->req, err);
        nbr_req_release(o->req);
    }
    if (o->acct == ACCT_FLUSH)
        flush_settle(o);
    else if (o->acct == ACCT_OUT)
        tp_out_add(w, o->rank, -1);
    else if (o->acct == ACCT_TRY)
        w->tp_tries--;
    op_release(o);
}

static inline void pair_dirty(nbr_win_t *w, int rank)
{
    ucx_win_t *uw = w->tp;
    ucx_pair_t *p = &uw->pair[rank];
    p->unflushed++;
    tp_out_add(w, rank, 1);
    if (!p->dirty) {
        p->dirty = 1;
        uw->dirty[uw->ndirty++] = rank;
    }
}

/* ---- callbacks ------------------------------------------------------------------------------- */

/* A conditional add (add a unless a bit of b is set) is a loop of CSWAPs from a guess of the
 * word's value: a CSWAP that found the guess did the add; one that found a masked bit set is a
 * refusal (old value returned); otherwise again from what it found. A guess with a masked bit
 * set is never swapped from (that CSWAP would add to a busy word): a fetching ADD of 0 reads the
 * word first (o->reading). Returns 1 when the loop goes on (ucx_progress issues the next step:
 * nothing is posted from inside a callback), 0 when the result is in o->reply. */
static int cadd_again(ucx_op_t *o)
{
    ucx_pair_t *p = &((ucx_win_t *)o->w->tp)->pair[o->rank];
    uint64_t seen = o->reply;
    if (!o->reading && seen == o->operand) { /* swapped: the add is done */
        p->guess[o->word] = seen + o->a;
        return 0;
    }
    p->guess[o->word] = seen;
    if (seen & o->b)
        return 0; /* refused: the caller sees the busy bits in the old value */
    o->reading = 0;
    o->operand = seen;
    o->next = retry_head;
    retry_head = o;
    return 1;
}

static void cb_send(void *request, ucs_status_t st, void *user)
{
    ucx_op_t *o = user;
    ucp_request_free(request);
    if (o->kind == OP_AMO && o->amo == NBR_AMO_CADD && st == UCS_OK && cadd_again(o))
        return;
    op_done(o, st);
}

/* An operation UCP returned: complete now (NULL), failed, or in flight (its callback ends it). */
static int launched(ucx_op_t *o, ucs_status_ptr_t s)
{
    if (s == NULL) {
        if (o->kind == OP_AMO && o->amo == NBR_AMO_CADD && cadd_again(o))
            return MPI_SUCCESS;
        op_done(o, UCS_OK);
        return MPI_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(s)) {
        int cls = status_class(UCS_PTR_STATUS(s));
        op_done(o, UCS_PTR_STATUS(s));
        return cls;
    }
    return MPI_SUCCESS;
}

static ucp_request_param_t send_param(ucx_op_t *o)
{
    return (ucp_request_param_t){.op_attr_mask =
                                     UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                                 .cb.send = cb_send,
                                 .user_data = o};
}

/* ---- addresses ------------------------------------------------------------------------------- */

static void ucx_flush(nbr_win_t *w, int r);

/* Dynamic windows: the key of rank r's region holding address a, and how many of len bytes from
 * a it holds (an access may span regions attached back to back: the caller splits). From the
 * pair's cache, else fetched from the owner (an am request, answered there by
 * nbr_ucx_rkey_serve). */
static int dyn_key(nbr_win_t *w, int r, uint64_t a, uint64_t len, ucp_rkey_h *key, uint64_t *n)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    for (int i = 0; i < p->nrr; i++)
        if (a >= p->rr[i].base && a - p->rr[i].base < p->rr[i].size) {
            uint64_t room = p->rr[i].size - (a - p->rr[i].base);
            *key = p->rr[i].key;
            *n = len < room ? len : room;
            return MPI_SUCCESS;
        }
    char buf[NBR_UCX_KEY_MAX];
    size_t kl = 0;
    uint64_t base = 0, size = 0;
    int rc = nbr_am_rkey(w, r, a, buf, sizeof buf, &kl, &base, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(a >= base && a - base < size))
        return MPI_ERR_RMA_RANGE;
    ucp_rkey_h k;
    if (ucp_ep_rkey_unpack(p->ep, buf, &k) != UCS_OK)
        return MPI_ERR_OTHER;
    /* Keys of regions detached since and overlapping this one go (none is in use: a flush
     * first). */
    for (int i = 0; i < p->nrr;)
        if (p->rr[i].base < base + size && base < p->rr[i].base + p->rr[i].size) {
            ucx_flush(w, r);
            ucp_rkey_destroy(p->rr[i].key);
            p->rr[i] = p->rr[--p->nrr];
        } else {
            i++;
        }
    if (p->nrr == p->caprr) {
        int cap = p->caprr ? 2 * p->caprr : 8;
        ucx_rreg_t *nr = realloc(p->rr, (size_t)cap * sizeof *nr);
        if (!nr) {
            ucp_rkey_destroy(k);
            return MPI_ERR_NO_MEM;
        }
        p->rr = nr;
        p->caprr = cap;
    }
    p->rr[p->nrr++] = (ucx_rreg_t){.base = base, .size = size, .key = k};
    uint64_t room = size - (a - base);
    *key = k;
    *n = len < room ? len : room;
    return MPI_SUCCESS;
}

/* Where the next piece of an access of len bytes at window displacement off goes: its remote
 * address, key and length. */
static int where(nbr_win_t *w, int r, MPI_Aint off, size_t len, uint64_t *ra, ucp_rkey_h *key,
                 size_t *n)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t m;
        *ra = (uint64_t)off;
        int rc = dyn_key(w, r, (uint64_t)off, len, key, &m);
        *n = (size_t)m;
        return rc;
    }
    *ra = p->wbase + (uint64_t)off;
    *key = p->wkey;
    *n = len;
    return *key ? MPI_SUCCESS : MPI_ERR_RMA_RANGE;
}

/* ---- the origin's operations ----------------------------------------------------------------- */

/* A put or get that no request waits for needs no operation object: UCP completes most in
 * their call (NULL: a short put's bytes are on their way, its remote completion is the flush's;
 * over memory the origin maps a get's bytes have landed), and one it returns in flight has its
 * pair as user data, for the callback's accounting. Saves an object's set-up and its completion
 * (~200 instructions of a put + flush across nodes). */
static void cb_put_plain(void *request, ucs_status_t st, void *user)
{
    ucx_pair_t *p = user;
    ucp_request_free(request);
    outstanding--;
    if (st != UCS_OK)
        note_error(p->w, p->rank, "a put or non-fetching atomic", st);
}

/* A get or a fetching atomic: it counts in tp_out until its bytes are here. */
static void cb_get_plain(void *request, ucs_status_t st, void *user)
{
    ucx_pair_t *p = user;
    ucp_request_free(request);
    outstanding--;
    if (st != UCS_OK)
        note_error(p->w, p->rank, "a get or fetching atomic", st);
    tp_out_add(p->w, p->rank, -1);
}

/* What UCP returned for a plain operation (fetch: a get or fetching atomic). */
static int plain_launched(nbr_win_t *w, int r, ucs_status_ptr_t s, int fetch, const char *what)
{
    if (s == NULL)
        return MPI_SUCCESS;
    if (UCS_PTR_IS_ERR(s)) {
        note_error(w, r, what, UCS_PTR_STATUS(s));
        return status_class(UCS_PTR_STATUS(s));
    }
    outstanding++; /* its callback runs inside a later progress, never before this */
    if (fetch)
        tp_out_add(w, r, 1);
    return MPI_SUCCESS;
}

static inline int xfer_plain(nbr_win_t *w, int r, uint64_t ra, ucp_rkey_h key, char *buf, size_t n,
                             int write)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                               UCP_OP_ATTR_FIELD_USER_DATA,
                               .cb.send = write ? cb_put_plain : cb_get_plain,
                               .user_data = p};
    ucs_status_ptr_t s;
    if (write) {
        pair_dirty(w, r);
        nbr_ucx_stats.puts++;
        nbr_ucx_stats.bytes_put += n;
        s = ucp_put_nbx(p->ep, buf, n, ra, key, &prm);
    } else {
        nbr_ucx_stats.gets++;
        nbr_ucx_stats.bytes_got += n;
        s = ucp_get_nbx(p->ep, buf, n, ra, key, &prm);
    }
    return plain_launched(w, r, s, !write, write ? "a put" : "a get");
}

static int xfer(nbr_win_t *w, int r, MPI_Aint off, char *buf, size_t len, int write)
{
    while (len > 0) {
        uint64_t ra;
        ucp_rkey_h key;
        size_t n;
        int rc = where(w, r, off, len, &ra, &key, &n);
        if (rc != MPI_SUCCESS)
            return nbr_err(w, "libnbrma (ucx)", rc,
                           "no registered memory of rank %d holds %zu bytes at %#lx", r, len,
                           (unsigned long)off);
        if (!w->op_req && (!w->want_req || w->replaying)) {
            if ((rc = xfer_plain(w, r, ra, key, buf, n, write)) != MPI_SUCCESS)
                return nbr_err(w, "libnbrma (ucx)", rc, "a %s of %zu bytes %s rank %d failed",
                               write ? "put" : "get", n, write ? "to" : "from", r);
            off += (MPI_Aint)n;
            buf += n;
            len -= n;
            continue;
        }
        ucx_op_t *o = op_new(w, r, write ? OP_PUT : OP_GET, write ? ACCT_NONE : ACCT_OUT);
        if (!o)
            return nbr_err(w, "libnbrma (ucx)", MPI_ERR_NO_MEM, "out of memory for a transfer");
        ucp_request_param_t prm = send_param(o);
        ucp_ep_h ep = ((ucx_win_t *)w->tp)->pair[r].ep;
        if (write) {
            pair_dirty(w, r);
            nbr_ucx_stats.puts++;
            nbr_ucx_stats.bytes_put += n;
            rc = launched(o, ucp_put_nbx(ep, buf, n, ra, key, &prm));
        } else {
            tp_out_add(w, r, 1);
            nbr_ucx_stats.gets++;
            nbr_ucx_stats.bytes_got += n;
            rc = launched(o, ucp_get_nbx(ep, buf, n, ra, key, &prm));
        }
        if (rc != MPI_SUCCESS)
            return nbr_err(w, "libnbrma (ucx)", rc, "a %s of %zu bytes %s rank %d failed",
                           write ? "put" : "get", n, write ? "to" : "from", r);
        off += (MPI_Aint)n;
        buf += n;
        len -= n;
    }
    return MPI_SUCCESS;
}

static int ucx_put(nbr_win_t *w, int r, MPI_Aint off, const void *src, size_t len)
{
    return xfer(w, r, off, (char *)src, len, 1);
}

static int ucx_get(nbr_win_t *w, int r, MPI_Aint off, void *dst, size_t len)
{
    return xfer(w, r, off, dst, len, 0);
}

/* rma.c's fast path (tp.h): xfer's plain case (xfer_plain) in one call, for a static window's
 * bytes that no request waits for; anything else goes through xfer. */
int nbr_ucx_rw(nbr_win_t *w, int r, MPI_Aint off, void *buf, size_t n, int write)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    if (NBR_UNLIKELY(!p->wkey || w->op_req || (w->want_req && !w->replaying)))
        return xfer(w, r, off, buf, n, write);
    int rc = xfer_plain(w, r, p->wbase + (uint64_t)off, p->wkey, buf, n, write);
    if (NBR_UNLIKELY(rc != MPI_SUCCESS))
        return nbr_err(w, "libnbrma (ucx)", rc, "a %s of %zu bytes %s rank %d failed",
                       write ? "put" : "get", n, write ? "to" : "from", r);
    return MPI_SUCCESS;
}

static uint64_t word_addr(const nbr_win_t *w, const ucx_pair_t *p, int word)
{
    return p->cbase + nbr_ctl_word_off(w->size, word);
}

/* Issue (or reissue: a conditional add's next guess) the atomic of o. */
static int amo_issue(ucx_op_t *o)
{
    nbr_win_t *w = o->w;
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[o->rank];
    ucp_request_param_t prm = send_param(o);
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(8);
    ucp_atomic_op_t op;
    const uint64_t *buf = &o->operand;
    nbr_ucx_stats.amos++;
    switch (o->kind == OP_AMO_NR ? -1 : o->amo) {
    case -1: /* non-fetching add */
        op = UCP_ATOMIC_OP_ADD;
        break;
    case NBR_AMO_FADD:
    case NBR_AMO_SWAP:
        op = o->amo == NBR_AMO_FADD ? UCP_ATOMIC_OP_ADD : UCP_ATOMIC_OP_SWAP;
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = &o->reply;
        break;
    default: /* CAS: compare b, new a; CADD: compare the guess (operand), new guess + a */
        if (o->amo == NBR_AMO_CADD && (o->operand & o->b)) {
            o->reading = 1; /* never swap from a busy guess: read the word */
            o->operand = 0;
            op = UCP_ATOMIC_OP_ADD;
            prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            prm.reply_buffer = &o->reply;
            break;
        }
        op = UCP_ATOMIC_OP_CSWAP;
        o->reply = o->amo == NBR_AMO_CAS ? o->a : o->operand + o->a;
        if (o->amo == NBR_AMO_CAS)
            o->operand = o->b;
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = &o->reply;
        break;
    }
    return launched(o,
                    ucp_atomic_op_nbx(p->ep, op, buf, 1, word_addr(w, p, o->word), p->ckey, &prm));
}

static int ucx_amo(nbr_win_t *w, int r, int word, int op, uint64_t a, uint64_t b,
                   nbr_tp_cell_t *c, uint64_t *old)
{
    int taken = nbr_tp_cell_take(&w->tp_err, c, old);
    if (taken >= 0)
        return taken;
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    int nr = !c && op == NBR_AMO_FADD;
    ucx_op_t *o = op_new(w, r, nr ? OP_AMO_NR : OP_AMO, nr ? ACCT_NONE : c ? ACCT_TRY : ACCT_OUT);
    if (!o) {
        if (!w->tp_err)
            w->tp_err = MPI_ERR_NO_MEM;
        return 0;
    }
    o->cell = c;
    o->amo = op;
    o->word = word;
    o->a = a;
    o->b = b;
    if (nr) {
        o->operand = a;
        pair_dirty(w, r);
    } else {
        o->operand = op == NBR_AMO_CADD ? p->guess[word] : a;
        if (c) {
            *c = (nbr_tp_cell_t){.state = NBR_CELL_PENDING};
            w->tp_tries++;
        } else {
            tp_out_add(w, r, 1);
        }
    }
    if (amo_issue(o) != MPI_SUCCESS && c)
        *c = (nbr_tp_cell_t){0}; /* the error is in w->tp_err; the try is repeated */
    if (c && c->state == NBR_CELL_READY) /* completed at once */
        return ucx_amo(w, r, word, op, a, b, c, old);
    return 0;
}

/* ---- accumulates under accumulate_ops=same_op -----------------------------------------------
 *
 * MPI-3.1 §11.2.1: with accumulate_ops=same_op "the implementation will assume that all
 * concurrent accumulate calls to the same target address will use the same operation". On such
 * a window (w->acc_native, agreed at creation) the one-instruction pairs of op.c — SUM, BAND,
 * BOR, BXOR on 4- and 8-byte integers, REPLACE and NO_OP on any 4- or 8-byte element,
 * compare-and-swap of 4 or 8 bytes — at an aligned target address are one UCP atomic per element
 * (ADD, AND, OR, XOR, SWAP, a fetching ADD of 0, CSWAP); every other path of the window (node
 * peers, the target itself, am targets) uses CPU atomic instructions for them, and
 * UCX_ATOMIC_MODE=cpu makes UCP's atomics CPU atomics too, so §11.7.1's element-wise atomicity
 * holds. Anything else goes to the target's CPU (am) — the compare-and-swap-loop pairs of op.c
 * (MIN, MAX, PROD, floating SUM, ...) too, which the target applies with its loop.
 *
 * Ordering: MPI-3.1 §11.7.2 — "accumulate_ordering ... The default value is rar,raw,war,waw":
 * an origin's accumulates to one location take effect in program order. UCP orders nothing
 * between operations on an endpoint without a fence, so an accumulate that follows others still
 * outstanding toward the same peer first calls ucp_worker_fence (once per call, not per
 * element: one call's elements are distinct locations). An origin's eligible accumulates to a
 * location all go this way (rma.c sends them piece by piece, never packed through am), so one
 * channel carries them.
 *
 * Completion: non-fetching atomics count like puts (their flush completes them); fetching ones
 * (and SWAP, which always fetches in UCP) count until their reply is here, which is copied into
 * the caller's result then. */
static inline __attribute__((always_inline)) int acc_issue(nbr_win_t *w, int r, ucp_atomic_op_t uop,
                                                           int s, const void *operand,
                                                           const void *swap, void *res, uint64_t ra)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    int fetch = res || uop == UCP_ATOMIC_OP_SWAP || uop == UCP_ATOMIC_OP_CSWAP;
    /* Plain (as xfer_plain): no request waits for it, and its result (if any) can land in the
     * caller's buffer directly; the operand is the caller's, which MPI keeps unchanged until the
     * operation completes at the origin (MPI-3.1 §11.3.4). A SWAP without a result buffer and a
     * compare-and-swap take an object (it holds the reply or the compare value). */
    if (!w->op_req && (!w->want_req || w->replaying) && operand && !swap &&
        uop != UCP_ATOMIC_OP_CSWAP && (res || !fetch)) {
        ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                   UCP_OP_ATTR_FIELD_USER_DATA |
                                                   UCP_OP_ATTR_FIELD_DATATYPE,
                                   .cb.send = fetch ? cb_get_plain : cb_put_plain,
                                   .user_data = p,
                                   .datatype = ucp_dt_make_contig((size_t)s)};
        if (fetch) {
            prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            prm.reply_buffer = res;
        } else {
            pair_dirty(w, r);
        }
        nbr_ucx_stats.accs++;
        nbr_ucx_stats.bytes_acc += (unsigned long)s;
        int rc = plain_launched(w, r, ucp_atomic_op_nbx(p->ep, uop, operand, 1, ra, p->wkey, &prm),
                                fetch, "an accumulate atomic");
        if (rc != MPI_SUCCESS)
            return nbr_err(w, "libnbrma (ucx)", rc, "an accumulate atomic toward rank %d failed", r);
        return MPI_SUCCESS;
    }
    ucx_op_t *o = op_new(w, r, OP_ACC, fetch ? ACCT_OUT : ACCT_NONE);
    if (!o)
        return nbr_err(w, "libnbrma (ucx)", MPI_ERR_NO_MEM, "out of memory for an atomic");
    o->res = res;
    o->esize = s;
    if (operand)
        memcpy(&o->operand, operand, (size_t)s);
    if (swap)
        memcpy(&o->reply, swap, (size_t)s);
    ucp_request_param_t prm = send_param(o);
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig((size_t)s);
    if (fetch) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = &o->reply;
        tp_out_add(w, r, 1);
    } else {
        pair_dirty(w, r);
    }
    nbr_ucx_stats.accs++;
    nbr_ucx_stats.bytes_acc += (unsigned long)s;
    int rc = launched(o, ucp_atomic_op_nbx(p->ep, uop, &o->operand, 1, ra, p->wkey, &prm));
    if (rc != MPI_SUCCESS)
        return nbr_err(w, "libnbrma (ucx)", rc, "an accumulate atomic toward rank %d failed", r);
    return MPI_SUCCESS;
}

/* Order the n atomics about to be issued toward r after the accumulates still outstanding. */
static inline void acc_order(nbr_win_t *w, int r, long n)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    /* accumulate_ordering=none (MPI-3.1 §11.7.2): "no ordering is guaranteed" — no fence. Any
     * ordering the window asks for keeps the fence (it orders all four at once). */
    if (p->acc_since && w->acc_order && __atomic_load_n(&w->t[r].tp_out, __ATOMIC_ACQUIRE)) {
        nbr_ucx_stats.fences++;
        ucs_status_t st = ucp_worker_fence(worker);
        if (st != UCS_OK)
            note_error(w, r, "a fence", st);
    }
    p->acc_since = n;
}

/* ---- accumulates under NBRMA_ACC=hw (paper 004 §III-A, Fig. 1; experiment F2) ---------------
 *
 * foMPI's protocol, which 004 measures against active messages: the origin takes the target's
 * accumulate lock with a remote atomic, gets the target data, computes at the origin, puts the
 * result back and releases the lock with a remote atomic whose reply it does not wait for. The
 * lock is the target's own (lock.c's ticket lock in its node-shared control block, which this
 * transport registers): its CPU, its node's load/store peers and its am service take it with CPU
 * atomics, and UCX_ATOMIC_MODE=cpu makes UCP's atomics CPU atomics (the header), so every path
 * of every origin still holds one lock per location — MPI-3.1 §11.7.1's atomicity whatever the
 * mix of settings. A ticket is a fetching 32-bit ADD on acc_next; the origin then reads
 * acc_serving (a fetching ADD of 0) until its ticket is served. The put is complete at the target
 * before the release goes (an endpoint flush, hw_complete: the lock word and the data may take
 * different lanes, which a worker fence does not order), and the release counts as an unflushed
 * operation of the pair, so the epoch's flush or closing call completes it. The call waits for its atomics and its get
 * (the computation needs the data), progressing the worker — and nothing else: it serves no am
 * request (one could be an accumulate that waits for this rank's own accumulate lock while this
 * call holds a place in another rank's queue: 4 ranks deadlocked so in acc_ops), and it keeps
 * the big lock (let go, another thread of this process could take it and spin for this rank's
 * own accumulate lock, held by a remote hw holder that waits likewise for its big lock: 2 ranks of
 * 2 threads deadlocked so in thread_rma). So a rank waits for a lock only while it holds none and
 * queues for none, a holder waits for UCX alone, and the waits of lock.c progress UCX under the
 * big lock (nbr_ucx_poke): the queues always drain. Other threads of the process wait meanwhile.
 *
 * Not used (am instead): padded pair types (MPI_DOUBLE_INT, ...): a put of whole elements would
 * write their padding, which is no byte of the accumulate's type map. */
/* A poll of hw_acc's waits: the worker progressed, and after NBRMA_SPIN idle polls the core
 * given away — but the big lock kept (above). */
static void hw_relax(long *spins)
{
    if (++*spins > __atomic_load_n(&nbr_spin, __ATOMIC_RELAXED))
        nbr_relax();
}

#define NBR_HW_HOLD_NS        20000   /* a guess at one lock hold: a few round trips */
#define NBR_HW_BACKOFF_MAX_NS 2000000 /* the longest pause between reads of acc_serving */

/* Let ns nanoseconds pass, progressing the worker (this rank serves others meanwhile). */
static void hw_pause(uint64_t ns)
{
    struct timespec t0, t;
    if (clock_gettime(CLOCK_MONOTONIC, &t0) != 0)
        return;
    long spins = 0;
    do {
        if (!ucp_worker_progress(worker))
            hw_relax(&spins);
        if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
            return;
    } while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
                 (uint64_t)t0.tv_nsec <
             ns);
}

/* Wait for a UCP request made without a callback; its status. */
static ucs_status_t hw_wait(ucs_status_ptr_t s)
{
    if (s == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(s))
        return UCS_PTR_STATUS(s);
    long spins = 0;
    ucs_status_t st;
    while ((st = ucp_request_check_status(s)) == UCS_INPROGRESS)
        if (!ucp_worker_progress(worker))
            hw_relax(&spins);
    ucp_request_free(s);
    return st;
}

/* Everything this origin issued toward r complete at r, waited for. Not ucp_worker_fence: the
 * lock words and the data may travel different lanes — a control block UCX allocated is mapped
 * (its atomics are the origin's CPU atomics), window memory it did not allocate is reached with
 * messages its worker serves — and a fence did not order a put on one before the release on the
 * other (acc_same_op under NBRMA_ACC=hw lost unaligned SUMs so, 1 run in 5). */
static ucs_status_t hw_complete(nbr_win_t *w, int r)
{
    const ucp_request_param_t plain = {.op_attr_mask = 0};
    return hw_wait(ucp_ep_flush_nbx(((ucx_win_t *)w->tp)->pair[r].ep, &plain));
}

/* A fetching 32-bit atomic on the target's control block, waited for. */
static ucs_status_t hw_amo32(nbr_win_t *w, int r, ucp_atomic_op_t op, uint32_t arg, size_t at,
                             uint32_t *old)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    uint32_t v = arg;
    ucp_request_param_t prm = {.op_attr_mask =
                                   UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
                               .datatype = ucp_dt_make_contig(4),
                               .reply_buffer = old};
    nbr_ucx_stats.amos++;
    return hw_wait(ucp_atomic_op_nbx(p->ep, op, &v, 1, p->cbase + at, p->ckey, &prm));
}

/* Release the target's accumulate lock: a non-fetching ADD of 1 to acc_serving (only the holder
 * writes it), completed by the pair's next flush. */
static int hw_release(nbr_win_t *w, int r)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    ucx_op_t *o = op_new(w, r, OP_AMO_NR, ACCT_NONE);
    if (!o)
        return MPI_ERR_NO_MEM;
    const uint32_t one = 1;
    memcpy(&o->operand, &one, sizeof one);
    pair_dirty(w, r);
    ucp_request_param_t prm = send_param(o);
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(4);
    nbr_ucx_stats.amos++;
    return launched(o, ucp_atomic_op_nbx(p->ep, UCP_ATOMIC_OP_ADD, &o->operand, 1,
                                         p->cbase + offsetof(nbr_ctl_t, acc_serving), p->ckey,
                                         &prm));
}

/* One accumulate piece (len bytes of whole elements at off) by 004's protocol: op applied with
 * src, or (cmp != NULL) a compare-and-swap of one element; the old contents into result. */
typedef struct {
    uint64_t ra;
    ucp_rkey_h key;
    size_t n;
} hw_seg_t;

/* Get (write 0) or put the piece, segment by segment, each waited for. */
static ucs_status_t hw_move(nbr_win_t *w, int r, const hw_seg_t *seg, int nseg, char *buf,
                            int write)
{
    ucp_ep_h ep = ((ucx_win_t *)w->tp)->pair[r].ep;
    const ucp_request_param_t plain = {.op_attr_mask = 0};
    for (int i = 0; i < nseg; buf += seg[i].n, i++) {
        ucs_status_t st =
            hw_wait(write ? ucp_put_nbx(ep, buf, seg[i].n, seg[i].ra, seg[i].key, &plain)
                             : ucp_get_nbx(ep, buf, seg[i].n, seg[i].ra, seg[i].key, &plain));
        if (st != UCS_OK)
            return st;
        if (write)
            nbr_ucx_stats.puts++, nbr_ucx_stats.bytes_put += seg[i].n;
        else
            nbr_ucx_stats.gets++, nbr_ucx_stats.bytes_got += seg[i].n;
    }
    return UCS_OK;
}

static int hw_acc(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic,
                  const void *src, const void *cmp, void *result, size_t len)
{
    static const char *const who = "libnbrma (ucx, NBRMA_ACC=hw)";
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    const nbr_dtype_t *d;
    if (nbr_dtype_get(basic, &d) != MPI_SUCCESS || d->extent <= 0)
        return nbr_err(w, who, MPI_ERR_INTERN, "no basic type for an accumulate");
    /* Where the piece lies, before the lock is asked for: a dynamic window's piece may span
     * adjacent regions (a segment each), and fetching a region's key waits for an am reply,
     * which must not happen while this rank holds or queues for a lock (above). */
    hw_seg_t one, *seg = &one;
    int nseg = 0, cap = 1, rc = MPI_SUCCESS;
    for (size_t at = 0; at < len && rc == MPI_SUCCESS;) {
        if (nseg == cap) {
            hw_seg_t *ns = malloc(2 * (size_t)cap * sizeof *ns);
            if (!ns) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            memcpy(ns, seg, (size_t)nseg * sizeof *ns);
            if (seg != &one)
                free(seg);
            seg = ns, cap *= 2;
        }
        hw_seg_t *g = &seg[nseg];
        rc = where(w, r, off + (MPI_Aint)at, len - at, &g->ra, &g->key, &g->n);
        if (rc == MPI_SUCCESS && g->n == 0)
            rc = MPI_ERR_RMA_RANGE;
        if (rc == MPI_SUCCESS)
            at += g->n, nseg++;
    }
    _Alignas(16) char small[256];
    char *buf = rc != MPI_SUCCESS ? NULL : len <= sizeof small ? small : malloc(len);
    if (rc == MPI_SUCCESS && !buf)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        if (seg != &one)
            free(seg);
        return rc == MPI_ERR_NO_MEM
                   ? nbr_err(w, who, rc, "out of memory for a %zu-byte accumulate", len)
                   : nbr_err(w, who, rc, "no registered memory of rank %d holds %zu bytes at %#lx",
                             r, len, (unsigned long)off);
    }
    if (p->unflushed) { /* this origin's earlier atomics toward r take effect first */
        ucs_status_t fs = hw_complete(w, r);
        if (fs != UCS_OK)
            note_error(w, r, "a flush", fs);
    }
    uint32_t ticket = 0, serving = 0;
    ucs_status_t st = hw_amo32(w, r, UCP_ATOMIC_OP_ADD, 1, offsetof(nbr_ctl_t, acc_next), &ticket);
    const char *what = "taking a ticket of the accumulate lock";
    if (st != UCS_OK)
        goto fail;
    /* Proportional back-off between reads: each read is a request the target's worker serves
     * (UCX emulates atomics on memory it did not allocate), so waiters that read back to back
     * flood it and slow the holder's get and put behind them — 4 ranks of nb_stress made
     * millions of reads and a few hundred accumulates a second so. A waiter with k tickets ahead
     * waits about k holds' worth (NBR_HW_HOLD_NS each, at most NBR_HW_BACKOFF_MAX_NS) before it
     * reads again, progressing its worker meanwhile. */
    for (;;) {
        st = hw_amo32(w, r, UCP_ATOMIC_OP_ADD, 0, offsetof(nbr_ctl_t, acc_serving), &serving);
        if (st != UCS_OK || serving == ticket)
            break;
        uint64_t ahead = (uint32_t)(ticket - serving);
        uint64_t ns = ahead * NBR_HW_HOLD_NS;
        hw_pause(ns < NBR_HW_BACKOFF_MAX_NS ? ns : NBR_HW_BACKOFF_MAX_NS);
    }
    what = "waiting for the accumulate lock";
    if (st != UCS_OK)
        goto fail;
    st = hw_move(w, r, seg, nseg, buf, 0);
    what = "getting the target data under the accumulate lock";
    int write = 0;
    if (st == UCS_OK) {
        if (result)
            memcpy(result, buf, len);
        if (cmp) {
            if (memcmp(buf, cmp, len) == 0)
                memcpy(buf, src, len), write = 1;
        } else if (op != MPI_NO_OP) {
            nbr_op_apply(op, basic, src, buf, (MPI_Aint)len / d->extent);
            write = 1;
        }
    }
    if (st == UCS_OK && write) {
        st = hw_move(w, r, seg, nseg, buf, 1);
        what = "putting the result under the accumulate lock";
        ucs_status_t fs = st == UCS_OK ? hw_complete(w, r) : UCS_OK;
        if (fs != UCS_OK)
            st = fs, what = "completing the put before the lock's release";
    }
    /* Released whatever happened once the ticket was served: a lock left held would stop every
     * accumulate to rank r for good. */
    rc = hw_release(w, r);
    if (st != UCS_OK)
        goto fail;
    if (buf != small)
        free(buf);
    if (seg != &one)
        free(seg);
    if (rc != MPI_SUCCESS)
        return nbr_err(w, who, rc, "releasing rank %d's accumulate lock failed", r);
    nbr_ucx_stats.acc_locked++;
    nbr_ucx_stats.bytes_locked += len;
    return MPI_SUCCESS;
fail:
    if (buf != small)
        free(buf);
    if (seg != &one)
        free(seg);
    return nbr_err(w, who, status_class(st), "%s of rank %d failed: %s", what, r,
                   ucs_status_string(st));
}

/* NBRMA_ACC=hw serves this piece: a window with keys for it (dynamic windows fetch them), an
 * element whose bytes are all data. */
static int hw_takes(nbr_win_t *w, int r, MPI_Datatype basic)
{
    const nbr_dtype_t *d;
    return nbr_acc_hw(w, r) &&
           (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || ((ucx_win_t *)w->tp)->pair[r].wkey) &&
           nbr_dtype_get(basic, &d) == MPI_SUCCESS && d->size == d->extent;
}

/* The UCP atomic of an MPI op that nbr_op_atomic_native serves. */
static inline ucp_atomic_op_t acc_uop(MPI_Op op)
{
    return op == MPI_SUM       ? UCP_ATOMIC_OP_ADD
           : op == MPI_BAND    ? UCP_ATOMIC_OP_AND
           : op == MPI_BOR     ? UCP_ATOMIC_OP_OR
           : op == MPI_BXOR    ? UCP_ATOMIC_OP_XOR
           : op == MPI_REPLACE ? UCP_ATOMIC_OP_SWAP
                               : UCP_ATOMIC_OP_ADD; /* MPI_NO_OP: fetch, add 0 */
}

static const uint64_t acc_zero = 0; /* MPI_NO_OP's operand */

/* ucx_acc's atomic case: the len / s elements at ra, one UCP atomic each, ordered after the
 * pair's accumulates still outstanding. */
static inline int acc_atomics(nbr_win_t *w, int r, MPI_Op op, int s, uint64_t ra, const void *src,
                              void *result, size_t len)
{
    ucp_atomic_op_t uop = acc_uop(op);
    size_t n = len / (size_t)s;
    acc_order(w, r, (long)n);
    for (size_t i = 0; i < n; i++) {
        int rc = acc_issue(w, r, uop, s,
                           op == MPI_NO_OP ? (const void *)&acc_zero : (const char *)src + i * s,
                           NULL, result ? (char *)result + i * s : NULL, ra + i * s);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int ucx_acc(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic,
                   const void *src, void *result, size_t len)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    /* UCP has the one-instruction ops only; the compare-and-swap-loop pairs (MPI_MIN, ...) go
     * to the target's CPU, whose loop is atomic with its node's (op.c). */
    int s = w->acc_native ? nbr_op_atomic_native(op, basic) : 0;
    uint64_t ra = p->wbase + (uint64_t)off;
    if (!s || !p->wkey || ra % (uint64_t)s || (op == MPI_NO_OP && !result)) {
        /* NBRMA_ACC=hw, but not where the target's paths use atomic instructions without the
         * lock (same_op's compare-and-swap-loop pairs, op.c): 004's get + put under the lock
         * would not be atomic with them. The target's CPU applies those with its loop. */
        int as = w->acc_native ? nbr_op_atomic_size(op, basic) : 0;
        int lockless = as && p->wkey && ra % (uint64_t)as == 0;
        return hw_takes(w, r, basic) && !lockless && !(op == MPI_NO_OP && !result)
                   ? hw_acc(w, r, off, op, basic, src, NULL, result, len)
                   : nbr_am_acc(w, r, off, op, basic, src, result, len);
    }
    return acc_atomics(w, r, op, s, ra, src, result, len);
}

/* rma.c's acc_tp_fast (tp.h): ucx_acc for a pair of a same_op window that the caller found
 * served by UCP atomics of s bytes (nbr_op_atomic_native), without asking op.c again. */
int nbr_ucx_acc_fast(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic, int s,
                     const void *src, void *result, size_t len)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    uint64_t ra = p->wbase + (uint64_t)off;
    if (NBR_UNLIKELY(!p->wkey || ra % (uint64_t)s || (op == MPI_NO_OP && !result)))
        return ucx_acc(w, r, off, op, basic, src, result, len);
    if (len == (size_t)s) { /* fetch_and_op, a one-element accumulate: acc_atomics, no loop */
        acc_order(w, r, 1);
        return acc_issue(w, r, acc_uop(op), s, op == MPI_NO_OP ? (const void *)&acc_zero : src,
                         NULL, result, ra);
    }
    return acc_atomics(w, r, op, s, ra, src, result, len);
}

static int ucx_cas(nbr_win_t *w, int r, MPI_Aint off, const void *val, const void *cmp,
                   void *result, size_t n)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    uint64_t ra = p->wbase + (uint64_t)off;
    if (!w->acc_native || (n != 4 && n != 8) || !p->wkey || ra % n) {
        if (hw_takes(w, r, MPI_BYTE))
            return hw_acc(w, r, off, MPI_REPLACE, MPI_BYTE, val, cmp, result, n);
        return nbr_am_cas(w, r, off, val, cmp, result, n);
    }
    acc_order(w, r, 1);
    return acc_issue(w, r, UCP_ATOMIC_OP_CSWAP, (int)n, cmp, val, result, ra);
}

static void ucx_notify(nbr_win_t *w, int r, int slot, uint64_t v)
{
    ucx_pair_t *p = &((ucx_win_t *)w->tp)->pair[r];
    uint64_t delta = v - p->sent[slot];
    if (!delta)
        return;
    p->sent[slot] = v;
    static const size_t at[4] = {offsetof(nbr_peer_ctr_t, posted),
                                 offsetof(nbr_peer_ctr_t, completed),
                                 offsetof(nbr_peer_ctr_t, fence), offsetof(nbr_peer_ctr_t, freed)};
    uint64_t ra = p->cbase + sizeof(nbr_ctl_t) + (uint64_t)w->rank * sizeof(nbr_peer_ctr_t) +
                  at[slot];
    /* A PSCW post or done id, or a fence arrival: not counted in tp_out — nothing waits for
     * its arrival (as am sends a done notification without a token) but the window's free,
     * which settles them first (nbr_ucx_settled) while every peer still serves. The FREED
     * notice is a fetching add, counted: its reply is sent when the peer applied it, so waiting
     * for it after the free barrier needs nothing more of a peer that may have moved on. */
    const int freed = slot == NBR_NS_FREED;
    ucx_op_t *o = op_new(w, r, freed ? OP_AMO : OP_NOTIFY, freed ? ACCT_OUT : ACCT_NONE);
    if (!o) {
        if (!w->tp_err)
            w->tp_err = MPI_ERR_NO_MEM;
        return;
    }
    o->operand = delta;
    o->amo = NBR_AMO_FADD;
    ucp_request_param_t prm = send_param(o);
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(8);
    if (freed) {
        tp_out_add(w, r, 1);
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = &o->reply;
    } else {
        ucx_win_t *uw = w->tp;
        p->notes++;
        if (!p->dirty) {
            p->dirty = 1;
            uw->dirty[uw->ndirty++] = r;
        }
    }
    nbr_ucx_stats.amos++;
    (void)launched(o, ucp_atomic_op_nbx(p->ep, UCP_ATOMIC_OP_ADD, &o->operand, 1, ra, p->ckey,
                                        &prm));
}

/* A flush that UCP returned in flight ends here: its operation object is in the request's own
 * space (flush_pair put it there; NULL when it could have none). */
static void cb_flush(void *request, ucs_status_t st, void *user)
{
    (void)user;
    ucx_op_t *o = *(ucx_op_t **)request;
    ucp_request_free(request);
    if (o)
        op_done(o, st);
    else
        outstanding--;
}

/* Complete what is outstanding toward r (or every pair): a flush of each dirty pair's endpoint
 * covers its puts and non-fetching atomics issued so far. Most flushes complete in their call
 * (memory the origin maps) and need no operation object: one is taken only for a flush UCP
 * returns in flight, and goes into the request's own space (the context's request_size) before
 * any progress can end it (~35 instructions of a put + flush). */
static void flush_pair(nbr_win_t *w, int r)
{
    ucx_win_t *uw = w->tp;
    ucx_pair_t *p = &uw->pair[r];
    if (!p->unflushed && !p->notes)
        return;
    static const ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                                            .cb.send = cb_flush};
    long n = p->unflushed, notes = p->notes;
    p->unflushed = p->notes = 0;
    nbr_ucx_stats.flushes++;
    ucs_status_ptr_t s = ucp_ep_flush_nbx(p->ep, &prm);
    if (NBR_LIKELY(s == NULL)) {
        if (n)
            tp_out_add(w, r, -n);
        return;
    }
    if (UCS_PTR_IS_ERR(s)) {
        note_error(w, r, "a flush", UCS_PTR_STATUS(s));
        if (n)
            tp_out_add(w, r, -n); /* they end with the error the next completion reports */
        return;
    }
    ucx_op_t *o = op_take();
    *(ucx_op_t **)s = o;
    if (!o) {
        /* No object to settle it: its callback only frees the request (counted outstanding
         * meanwhile), and the next flush covers these operations again. */
        outstanding++;
        p->unflushed += n;
        p->notes += notes;
        return;
    }
    o->kind = OP_FLUSH, o->w = w, o->rank = r, o->acct = ACCT_FLUSH;
    o->req = NULL, o->cell = NULL, o->n = n, o->notes = notes;
    uw->notes_flushing += notes;
}

void nbr_ucx_flush_pair(nbr_win_t *w, int r)
{
    flush_pair(w, r);
}

static void ucx_flush(nbr_win_t *w, int r)
{
    ucx_win_t *uw = w->tp;
    if (!uw)
        return;
    if (r != NBR_FLUSH_ALL) {
        if (w->t[r].net == NBR_NET_UCX)
            flush_pair(w, r);
        return;
    }
    for (int i = 0; i < uw->ndirty; i++) {
        flush_pair(w, uw->dirty[i]);
        uw->pair[uw->dirty[i]].dirty = 0;
    }
    uw->ndirty = 0;
}

/* Before the free barrier's notices: every notification of the window flushed (each peer still
 * serves then: it waits for this rank's notice). 1 when nothing is left. */
int nbr_ucx_settled(nbr_win_t *w)
{
    ucx_win_t *uw = w->tp;
    if (!uw)
        return 1;
    ucx_flush(w, NBR_FLUSH_ALL);
    return uw->notes_flushing == 0;
}

long nbr_ucx_outstanding(void)
{
    return outstanding;
}

void nbr_ucx_progress(void)
{
    if (!worker)
        return;
    unsigned n;
    while ((n = ucp_worker_progress(worker)))
        nbr_tp_served += n;
    while (retry_head) {
        ucx_op_t *o = retry_head;
        retry_head = o->next;
        (void)amo_issue(o);
    }
}

void nbr_ucx_poke(void)
{
    if (worker && (!nbr_locking || nbr_big_held()))
        nbr_ucx_progress();
}

/* ---- set-up ---------------------------------------------------------------------------------- */

/* One agreement among the window's ranks (as win.c's): the largest error class, or success. */
static int agree(MPI_Comm comm, int rc)
{
    int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER, worst = MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS && PMPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = MPI_ERR_OTHER;
    MPI_Request q;
    if (PMPI_Iallreduce(&cls, &worst, 1, MPI_INT, MPI_MAX, comm, &q) != MPI_SUCCESS ||
        nbr_wait_req(&q) != MPI_SUCCESS)
        return rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
    return rc != MPI_SUCCESS ? rc : worst;
}

static int ucx_start(void)
{
    if (ucx_state)
        return ucx_state > 0;
    ucx_state = -1;
    /* UCX's variables for this context: NBRMA_UCX_<NAME> where set (libnbrma's context only),
     * else UCX_<NAME> (which the MPI library's own UCX reads too). */
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read("NBRMA", NULL, &cfg);
    if (st != UCS_OK) {
        snprintf(ucx_why, sizeof ucx_why, "ucp_config_read: %s", ucs_status_string(st));
        return 0;
    }
    /* A node's load/store peers use CPU atomics on the same words (the file's comment). */
    if (!getenv("UCX_ATOMIC_MODE") && !getenv("NBRMA_UCX_ATOMIC_MODE"))
        (void)ucp_config_modify(cfg, "ATOMIC_MODE", "cpu");
    /* request_size: a flush's request carries its operation object (flush_pair). */
    ucp_params_t prm = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                                      UCP_PARAM_FIELD_REQUEST_SIZE,
                        .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64,
                        .mt_workers_shared = 0,
                        .request_size = sizeof(ucx_op_t *)};
    st = ucp_init(&prm, cfg, &ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK) {
        snprintf(ucx_why, sizeof ucx_why, "ucp_init: %s", ucs_status_string(st));
        return 0;
    }
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    if ((st = ucp_worker_create(ctx, &wp, &worker)) != UCS_OK ||
        (st = ucp_worker_get_address(worker, &my_addr, &my_addr_len)) != UCS_OK) {
        snprintf(ucx_why, sizeof ucx_why, "ucp_worker_create: %s", ucs_status_string(st));
        if (worker)
            ucp_worker_destroy(worker);
        worker = NULL;
        ucp_cleanup(ctx);
        ctx = NULL;
        return 0;
    }
    ucx_state = 1;
    nbr_ucx_on = 1;
    return 1;
}

static ucp_ep_h ep_to(int wrank, const void *addr)
{
    if (!eps && (PMPI_Comm_size(MPI_COMM_WORLD, &nworld) != MPI_SUCCESS ||
                 !(eps = calloc((size_t)nworld, sizeof *eps))))
        return NULL;
    if (wrank < 0 || wrank >= nworld)
        return NULL;
    if (eps[wrank])
        return eps[wrank];
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                          .address = (const ucp_address_t *)addr};
    if (ucp_ep_create(worker, &ep, &eps[wrank]) != UCS_OK)
        eps[wrank] = NULL;
    static int shown;
    if (eps[wrank] && nbr_cfg.VERBOSE && !shown++) { /* what carries the traffic */
        fprintf(stderr, "libnbrma (ucx): the endpoint toward world rank %d:\n", wrank);
        ucp_ep_print_info(eps[wrank], stderr);
    }
    return eps[wrank];
}

static int mem_map(void *base, size_t len, ucp_mem_h *mem, void **packed, size_t *plen)
{
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = base,
                               .length = len};
    if (ucp_mem_map(ctx, &mp, mem) != UCS_OK)
        return 0;
    if (ucp_rkey_pack(ctx, *mem, packed, plen) != UCS_OK) {
        ucp_mem_unmap(ctx, *mem);
        *mem = NULL;
        return 0;
    }
    return 1;
}

/* What each rank sends the others at window creation: whether it can, its worker address and
 * its packed keys (the window memory's, the control block's), then the bytes. */
typedef struct {
    int32_t ok;
    uint32_t alen, wlen, clen;
    uint64_t wbase, cbase;
} ucx_card_t;

static size_t ctl_len(const nbr_win_t *w)
{
    return nbr_ctl_len(w->size, w->lock_q);
}

/* MPI_Win_allocate's memory for a rank alone on its node in a window spanning nodes (tp.h): UCX
 * allocates it (UCP_MEM_MAP_ALLOCATE; up to nbr_ucx_alloc_max windows at a time), so that its
 * shared-memory transports (posix, sysv) map it into the origins, which put, get and apply CPU
 * atomics on it directly; memory UCX did not allocate they reach through active messages that
 * this process's worker must serve (about 17x slower for an 8-byte put + flush here: U1's _alloc
 * series). nbr_ucx_win_setup packs its key; teardown's unmap frees it. No node peer maps it
 * (there is none), so nothing else needs to reach it. */
int nbr_ucx_alloc_max = 1024; /* live allocations per process (below; tests lower it) */
static int ucx_allocs;

/* size bytes UCX allocates (UCP_MEM_MAP_ALLOCATE), zeroed, counted against the cap; NULL when
 * it cannot. Each allocation is a kernel object of UCX's shared-memory transports (a SysV
 * segment, of which a machine has 4096 by default, or a POSIX one holding a file descriptor):
 * past nbr_ucx_alloc_max live ones the callers fall back (window memory: private and registered,
 * as for MPI_Win_create, reached through the target's worker over shared memory; control
 * blocks: the arena's, likewise). */
static void *ucx_alloc(size_t size, ucp_mem_h *mem)
{
    if (!size || ucx_allocs >= nbr_ucx_alloc_max || !ucx_start())
        return NULL;
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                             UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                               .address = NULL,
                               .length = size,
                               .flags = UCP_MEM_MAP_ALLOCATE};
    ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH};
    if (ucp_mem_map(ctx, &mp, mem) != UCS_OK)
        return NULL;
    if (ucp_mem_query(*mem, &ma) != UCS_OK || !ma.address || ma.length < size) {
        ucp_mem_unmap(ctx, *mem);
        return NULL;
    }
    ucx_allocs++;
    memset(ma.address, 0, size); /* as every kind of window memory and control block here */
    return ma.address;
}

void *nbr_ucx_win_alloc(nbr_win_t *w, size_t size)
{
    if (w->tp)
        return NULL;
    ucx_win_t *uw = calloc(1, sizeof *uw);
    void *a = uw ? ucx_alloc(size, &uw->wmem) : NULL;
    if (!a) {
        free(uw);
        return NULL;
    }
    uw->wmem_alloc = 1;
    w->tp = uw;
    nbr_ucx_stats.win_allocs++;
    return a;
}

/* A control block (tp.h, nbr_tp_ctl_alloc): its UCP memory handle rides in its header line (the
 * cache line before the block proper, which nobody else uses when no node peer maps it), so that
 * it outlives the window's transport state, which teardown frees before win.c lets the block go. */
void *nbr_ucx_ctl_alloc(size_t size)
{
    ucp_mem_h mem;
    void *a = ucx_alloc(size, &mem);
    if (!a)
        return NULL;
    ((nbr_ctl_hdr_t *)a)->tp_mem = mem;
    nbr_ucx_stats.ctl_allocs++;
    return a;
}

void nbr_ucx_ctl_free(void *block)
{
    ucp_mem_h mem = ((nbr_ctl_hdr_t *)block)->tp_mem;
    if (mem && ucp_mem_unmap(ctx, mem) == UCS_OK)
        ucx_allocs--;
}

int nbr_ucx_win_setup(nbr_win_t *w, MPI_Comm comm, int want, char *why, size_t nwhy)
{
    ucx_win_t *uw = w->tp ? w->tp : calloc(1, sizeof *uw); /* w->tp: nbr_ucx_win_alloc's */
    ucx_card_t card = {0};
    void *wpk = NULL, *cpk = NULL;
    size_t wlen = 0, clen = 0;
    if (uw && (uw->pair = calloc((size_t)w->size, sizeof *uw->pair)) &&
        (uw->dirty = calloc((size_t)w->size, sizeof *uw->dirty)) && ucx_start()) {
        /* A control block UCX allocated (nbr_ucx_ctl_alloc) is keyed as it is; another one is
         * registered here (and unmapped at teardown). */
        ucp_mem_h cm = w->ctl_kind == NBR_CTL_TP ? nbr_ctl_hdr(w->ctl)->tp_mem : NULL;
        int ok = cm ? ucp_rkey_pack(ctx, cm, &cpk, &clen) == UCS_OK
                    : mem_map(w->ctl, ctl_len(w), &uw->cmem, &cpk, &clen);
        if (ok && uw->wmem)
            ok = ucp_rkey_pack(ctx, uw->wmem, &wpk, &wlen) == UCS_OK;
        else if (ok && w->flavor != MPI_WIN_FLAVOR_DYNAMIC && w->bytes > 0)
            ok = mem_map(w->base, (size_t)w->bytes, &uw->wmem, &wpk, &wlen);
        card = (ucx_card_t){.ok = ok,
                            .alen = (uint32_t)my_addr_len,
                            .wlen = (uint32_t)wlen,
                            .clen = (uint32_t)clen,
                            .wbase = (uint64_t)(uintptr_t)w->base,
                            .cbase = (uint64_t)(uintptr_t)w->ctl};
        if (!ok)
            snprintf(ucx_why, sizeof ucx_why, "ucp_mem_map of the window's memory failed");
    }
    w->tp = uw;
    /* The pair table is window metadata, O(P) like the target descriptors (MPIX_Win_get_stats'
     * meta; given back in nbr_ucx_win_teardown). */
    int have = uw && uw->pair && uw->dirty;
    if (have && !uw->counted) {
        uw->counted = (long long)sizeof *uw +
                      (long long)w->size * (long long)(sizeof *uw->pair + sizeof *uw->dirty);
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, uw->counted);
        nbr_ucx_stats.meta_bytes += uw->counted;
    }
    size_t mine = sizeof card + (card.ok ? card.alen + card.wlen + card.clen : 0);
    int *len = calloc((size_t)w->size, sizeof *len), *at = calloc((size_t)w->size, sizeof *at);
    char *me = malloc(mine), *all = NULL;
    int rc = agree(comm, have && len && at && me ? MPI_SUCCESS : MPI_ERR_NO_MEM);
    if (rc != MPI_SUCCESS) {
        free(len), free(at), free(me);
        if (wpk)
            ucp_rkey_buffer_release(wpk);
        if (cpk)
            ucp_rkey_buffer_release(cpk);
        snprintf(why, nwhy, "out of memory exchanging UCX keys");
        return rc;
    }
    {
        memcpy(me, &card, sizeof card);
        if (card.ok) {
            memcpy(me + sizeof card, my_addr, card.alen);
            if (wlen)
                memcpy(me + sizeof card + card.alen, wpk, wlen);
            memcpy(me + sizeof card + card.alen + wlen, cpk, clen);
        }
    }
    int n = (int)mine;
    MPI_Request q;
    /* Collective whatever happened here: every rank takes the same path. */
    if (PMPI_Iallgather(&n, 1, MPI_INT, len, 1, MPI_INT, comm, &q) != MPI_SUCCESS ||
        nbr_wait_req(&q) != MPI_SUCCESS)
        rc = MPI_ERR_OTHER;
    long total = 0;
    for (int r = 0; r < w->size; r++) {
        at[r] = (int)total;
        total += len[r];
    }
    if (rc == MPI_SUCCESS && total > INT32_MAX)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && !(all = malloc((size_t)total)))
        rc = MPI_ERR_NO_MEM;
    rc = agree(comm, rc);
    if (rc == MPI_SUCCESS &&
        (PMPI_Iallgatherv(me, n, MPI_BYTE, all, len, at, MPI_BYTE, comm, &q) != MPI_SUCCESS ||
         nbr_wait_req(&q) != MPI_SUCCESS))
        rc = MPI_ERR_OTHER;
    if (wpk)
        ucp_rkey_buffer_release(wpk);
    if (cpk)
        ucp_rkey_buffer_release(cpk);
    /* Each pair on another node: UCX when both ends could and the keys unpack. */
    for (int r = 0; rc == MPI_SUCCESS && r < w->size; r++) {
        nbr_target_t *t = &w->t[r];
        if (t->net != NBR_NET_AM)
            continue;
        ucx_card_t c;
        memcpy(&c, all + at[r], sizeof c);
        const char *b = all + at[r] + sizeof c;
        ucx_pair_t *p = &uw->pair[r];
        p->rank = r;
        p->w = w;
        int ok = card.ok && c.ok && (p->ep = ep_to(t->wrank, b)) &&
                 ucp_ep_rkey_unpack(p->ep, b + c.alen + c.wlen, &p->ckey) == UCS_OK &&
                 (!c.wlen || ucp_ep_rkey_unpack(p->ep, b + c.alen, &p->wkey) == UCS_OK);
        if (!ok) {
            if (want == NBR_NET_UCX) {
                snprintf(why, nwhy,
                         "NBRMA_NET=ucx, but UCX cannot reach rank %d from rank %d (%s): check "
                         "UCX_TLS / UCX_NET_DEVICES, or set NBRMA_NET=am (or auto)",
                         r, w->rank,
                         !card.ok ? (ucx_why[0] ? ucx_why : "UCX did not start here")
                         : !c.ok  ? "UCX did not start there"
                         : !p->ep ? "no endpoint"
                                  : "its memory keys do not unpack");
                rc = MPI_ERR_OTHER;
            }
            continue;
        }
        p->wbase = c.wbase;
        p->cbase = c.cbase;
        /* Mapped: UCX reaches r's window memory through shared memory, where a transfer is a
         * copy the origin makes ("only for the endpoints that are reachable via shared memory",
         * ucp.h); over a network the call fails. NBRMA_ACC=auto and NBRMA_NONCONTIG=auto choose
         * by it (nbr_acc_hw, rma.c's pack_runs). */
        void *mp;
        t->mapped = p->wkey && c.wlen && ucp_rkey_ptr(p->wkey, c.wbase, &mp) == UCS_OK;
        nbr_ucx_stats.pairs_mapped += t->mapped;
        t->net = NBR_NET_UCX;
        w->unordered = 1;
    }
    free(len), free(at), free(me), free(all);
    if (rc != MPI_SUCCESS && !why[0])
        snprintf(why, nwhy, "exchanging UCX worker addresses and memory keys failed");
    return rc;
}

/* After the free barrier: my operations are complete (the barrier waited for them, and for my
 * notifications: nbr_ucx_settled), then the keys and registrations go. */
void nbr_ucx_win_teardown(nbr_win_t *w)
{
    ucx_win_t *uw = w->tp;
    if (!uw)
        return;
    w->tp = NULL;
    w->unordered = 0;
    /* The FREED notices' replies (the free barrier waited for everything else; they were sent
     * when the peers applied the notices) before the keys go. */
    long spins = 0;
    w->tp = uw;
    while (worker && __atomic_load_n(&w->tp_out, __ATOMIC_ACQUIRE)) {
        nbr_ucx_progress();
        if (__atomic_load_n(&w->tp_out, __ATOMIC_ACQUIRE))
            nbr_wait_step(&spins);
    }
    w->tp = NULL;
    for (int r = 0; uw->pair && r < w->size; r++) {
        ucx_pair_t *p = &uw->pair[r];
        if (p->wkey)
            ucp_rkey_destroy(p->wkey);
        if (p->ckey)
            ucp_rkey_destroy(p->ckey);
        for (int i = 0; i < p->nrr; i++)
            ucp_rkey_destroy(p->rr[i].key);
        free(p->rr);
        if (w->t[r].net == NBR_NET_UCX)
            w->t[r].net = NBR_NET_AM;
    }
    if (uw->wmem)
        ucp_mem_unmap(ctx, uw->wmem);
    if (uw->wmem_alloc)
        ucx_allocs--;
    if (uw->cmem)
        ucp_mem_unmap(ctx, uw->cmem);
    for (int i = 0; i < uw->nlr; i++) {
        ucp_rkey_buffer_release(uw->lr[i].packed);
        ucp_mem_unmap(ctx, uw->lr[i].mem);
    }
    free(uw->lr);
    free(uw->pair);
    free(uw->dirty);
    if (uw->counted) {
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, -uw->counted);
        nbr_ucx_stats.meta_bytes -= uw->counted;
    }
    free(uw);
}

/* ---- dynamic windows ------------------------------------------------------------------------- */

/* What nbr_tp_region_bytes counts of a window's ucx state (O(P): MPIX_Win_get_stats only). The
 * unpacked keys are UCX's objects, of a size UCX does not tell. */
long long nbr_ucx_region_bytes(const nbr_win_t *w)
{
    const ucx_win_t *uw = w->tp;
    long long b = (long long)uw->caplr * (long long)sizeof *uw->lr;
    for (int i = 0; i < uw->nlr; i++)
        b += (long long)uw->lr[i].plen;
    for (int r = 0; uw->pair && r < w->size; r++)
        b += (long long)uw->pair[r].caprr * (long long)sizeof(ucx_rreg_t);
    return b;
}

int nbr_ucx_attach(nbr_win_t *w, void *base, MPI_Aint size)
{
    ucx_win_t *uw = w->tp;
    if (!uw || size <= 0 || ucx_state <= 0)
        return MPI_SUCCESS;
    if (uw->nlr == uw->caplr) {
        int cap = uw->caplr ? 2 * uw->caplr : 8;
        ucx_lreg_t *n = realloc(uw->lr, (size_t)cap * sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        uw->lr = n;
        uw->caplr = cap;
    }
    ucx_lreg_t *l = &uw->lr[uw->nlr];
    *l = (ucx_lreg_t){.base = base, .size = size};
    if (!mem_map(base, (size_t)size, &l->mem, &l->packed, &l->plen))
        return MPI_ERR_NO_MEM;
    uw->nlr++;
    return MPI_SUCCESS;
}

void nbr_ucx_detach(nbr_win_t *w, const void *base)
{
    ucx_win_t *uw = w->tp;
    for (int i = 0; uw && i < uw->nlr; i++)
        if (uw->lr[i].base == base) {
            ucp_rkey_buffer_release(uw->lr[i].packed);
            ucp_mem_unmap(ctx, uw->lr[i].mem);
            uw->lr[i] = uw->lr[--uw->nlr];
            return;
        }
}

/* The owner's side of a key fetch (am.c's K_RKEY): the packed key of my region holding addr. */
int nbr_ucx_rkey_serve(nbr_win_t *w, uint64_t addr, void *buf, size_t cap, size_t *len,
                       uint64_t *base, uint64_t *size)
{
    ucx_win_t *uw = w->tp;
    for (int i = 0; uw && i < uw->nlr; i++) {
        uint64_t b = (uint64_t)(uintptr_t)uw->lr[i].base, s = (uint64_t)uw->lr[i].size;
        if (addr >= b && addr - b < s) {
            if (uw->lr[i].plen > cap)
                return MPI_ERR_INTERN;
            memcpy(buf, uw->lr[i].packed, uw->lr[i].plen);
            *len = uw->lr[i].plen;
            *base = b;
            *size = s;
            return MPI_SUCCESS;
        }
    }
    return MPI_ERR_RMA_RANGE;
}

/* A barrier of every process of the job that keeps this process's worker serving while it
 * waits (a peer's endpoint close needs our answers). */
static void serving_barrier(void)
{
    MPI_Request b;
    int done = 0;
    if (PMPI_Ibarrier(MPI_COMM_WORLD, &b) != MPI_SUCCESS)
        return;
    while (!done) {
        if (worker)
            ucp_worker_progress(worker);
        if (PMPI_Test(&b, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return;
        if (!done)
            nbr_relax();
    }
}

/* MPI_Finalize, in every process (collective: it is): first every process stops issuing (a
 * barrier), then all endpoints close in flush mode while every peer serves, then a second
 * barrier — nobody destroys its worker while a peer's close still needs it (over TCP a worker
 * that vanished first made its peers' closes time out, and UCX report the endpoint failed). */
void nbr_ucx_finalize(void)
{
    NBR_ENTER();
    int any = ucx_state > 0, all = 0;
    if (PMPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS || !all) {
        NBR_LEAVE();
        return; /* no process ran UCX (every process answers the same) */
    }
    serving_barrier();
    int open = 0;
    ucs_status_ptr_t *cl = calloc((size_t)(nworld ? nworld : 1), sizeof *cl);
    for (int r = 0; cl && eps && r < nworld; r++)
        if (eps[r]) {
            ucp_request_param_t prm = {.op_attr_mask = 0};
            cl[r] = ucp_ep_close_nbx(eps[r], &prm);
            if (cl[r] && UCS_PTR_IS_ERR(cl[r]))
                cl[r] = NULL;
            open += cl[r] != NULL;
        }
    while (open) {
        ucp_worker_progress(worker);
        open = 0;
        for (int r = 0; r < nworld; r++)
            if (cl[r]) {
                if (ucp_request_check_status(cl[r]) != UCS_INPROGRESS) {
                    ucp_request_free(cl[r]);
                    cl[r] = NULL;
                } else {
                    open++;
                }
            }
        if (open)
            nbr_relax();
    }
    free(cl);
    serving_barrier();
    free(eps);
    eps = NULL;
    while (op_free) {
        ucx_op_t *o = op_free;
        op_free = o->next;
        free(o);
    }
    if (ucx_state > 0) {
        ucp_worker_release_address(worker, my_addr);
        ucp_worker_destroy(worker);
        ucp_cleanup(ctx);
    }
    worker = NULL;
    ctx = NULL;
    ucx_state = 0;
    nbr_ucx_on = 0;
    NBR_LEAVE();
}

/* ---- what nbrma-settings says ---------------------------------------------------------------- */

void nbr_ucx_describe(void *stream, int verbose)
{
    FILE *f = stream;
    unsigned maj, min, rel;
    ucp_get_version(&maj, &min, &rel);
    fprintf(f, "UCX: built with %d.%d, running %u.%u.%u (%s); NBRMA_NET=%s\n", UCP_API_MAJOR,
            UCP_API_MINOR, maj, min, rel, ucp_get_version_string(), nbr_cfg.NET);
    /* NBRMA_UCX_<NAME> steers libnbrma's context alone; UCX_<NAME> also the MPI library's. */
    const char *v[] = {"UCX_TLS", "UCX_NET_DEVICES", "UCX_ATOMIC_MODE"};
    for (int i = 0; i < 3; i++) {
        char own[64];
        snprintf(own, sizeof own, "NBRMA_%s", v[i]);
        fprintf(f, "  %s=%s", v[i], getenv(v[i]) ? getenv(v[i]) : "(unset)");
        if (getenv(own))
            fprintf(f, "  %s=%s (libnbrma's UCX)", own, getenv(own));
        fputc('\n', f);
    }
    if (!verbose)
        return;
    if (!ucx_start()) {
        fprintf(f, "UCX does not start here: %s\n", ucx_why);
    } else {
        /* The transports toward a peer: an endpoint to a second worker of this process over
         * the same resources stands for one (UCX's `self` transport serves only a worker's own
         * endpoints; a peer on another node may see other devices). */
        ucp_ep_h ep = NULL;
        ucp_worker_h other = NULL;
        ucp_address_t *oaddr = NULL;
        size_t olen = 0;
        ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                  .thread_mode = UCS_THREAD_MODE_SINGLE};
        ucp_ep_params_t ep_p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS};
        if (ucp_worker_create(ctx, &wp, &other) == UCS_OK &&
            ucp_worker_get_address(other, &oaddr, &olen) == UCS_OK &&
            (ep_p.address = oaddr, ucp_ep_create(worker, &ep_p, &ep) == UCS_OK)) {
            fprintf(f, "UCX transports toward a peer (an endpoint to another worker here):\n");
            ucp_ep_print_info(ep, f);
            ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                       .flags = UCP_EP_CLOSE_FLAG_FORCE};
            ucs_status_ptr_t s = ucp_ep_close_nbx(ep, &prm);
            while (s && !UCS_PTR_IS_ERR(s) && ucp_request_check_status(s) == UCS_INPROGRESS)
                ucp_worker_progress(worker);
            if (s && !UCS_PTR_IS_ERR(s))
                ucp_request_free(s);
        }
        if (oaddr)
            ucp_worker_release_address(other, oaddr);
        if (other)
            ucp_worker_destroy(other);
    }
    nbr_rdma_devices(f);
}

/* ---- the table ------------------------------------------------------------------------------- */

const nbr_tp_ops_t nbr_tp_ucx_ops = {
    .name = "ucx",
    .ordered = 0,
    .put = ucx_put,
    .get = ucx_get,
    /* Accumulates and compare-and-swap: the target's CPU (the file's comment), but UCP atomics
     * for eligible pairs of accumulate_ops=same_op windows (ucx_acc); packed transfers: one
     * message per 16 KiB instead of one RDMA operation per small block. */
    .acc = ucx_acc, /* accumulate_ops=same_op: UCP atomics where eligible; else am's */
    .cas = ucx_cas,
    .amo = ucx_amo,
    .notify = ucx_notify,
    .put_packed = nbr_am_put_packed,
    .get_packed = nbr_am_get_packed,
    .acc_packed = nbr_am_acc_packed,
    .regions = nbr_am_regions,
    .flush = ucx_flush,
};
