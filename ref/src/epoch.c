/* epoch.c — epoch objects, the deferred-epoch queue and the progress engine (paper 000 §VII).
 *
 * Every synchronization call, blocking or not, creates or closes an epoch object; the object
 * lives in its window's queue, in opening order, until it has completed internally. Its internal
 * lifetime (000 §VI): DEFERRED until the activation predicate admits it (000 §VII-A), ACTIVE once
 * it took its matching ids and asked for access, READY once access is granted (posts seen, lock
 * acquired, fence barrier passed: RMA calls then go to memory, recorded ones are replayed), DONE
 * once it is closed and its completion conditions hold (notifications sent, peers done).
 *
 * The engine is event driven, so that the work of a call does not grow with the number of
 * epochs waiting behind it (10^5 deferred epochs cost what one does):
 *   - an epoch whose state may change is put on a work list, never found by scanning;
 *   - deferred epochs are a suffix of the queue (activation is in order, rule 4): only the first
 *     of them, the frontier, is ever tested, and the predicate looks at the heads of three
 *     closed-epoch lists, O(1);
 *   - what active epochs wait for lives in other processes' words (posts, done notifications,
 *     lock words, fence counters). Waits queue per peer in id order (ids only grow: 000 §VII-B)
 *     and only a queue's head is polled, so polling costs one word per peer that something
 *     waits on — the sources on the poll list — not one per epoch;
 *   - flushes wait for the oldest recorded call toward their rank (000 §VII-C's age stamps),
 *     which is the head of that rank's run list.
 * nbr_progress() runs the seven steps of 000 §VII-D over these lists until nothing moves, from
 * every libnbrma call that may wait and from the intercepted wait/test family, so one MPI_Test
 * carries every epoch as far as it can go and closing requests complete under plain MPI_Wait. */
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h> /* the pool of operation objects poisons what it keeps */
#endif

#include "nbr.h"
#include "transport/tp.h"

nbr_engine_stats_t nbr_engine_stats;

/* The engine's lists (under the big lock). */
static nbr_epoch_t *work_head, *work_tail;     /* epochs to activate or complete (steps 3, 7) */
static nbr_epoch_t *replay_head, *replay_tail; /* ready epochs holding recorded calls (step 4) */
static nbr_source_t *poll_head;                /* words that active epochs wait on (steps 5, 6) */
static int in_engine; /* the engine is not reentrant (replay calls back into rma.c) */

/* ---- doubly linked lists through named fields ------------------------------------------------ */

#define LIST_APPEND(head, tail, x, nx, pv)                                                         \
    do {                                                                                           \
        (x)->nx = NULL;                                                                            \
        (x)->pv = (tail);                                                                          \
        if (tail)                                                                                  \
            (tail)->nx = (x);                                                                      \
        else                                                                                       \
            (head) = (x);                                                                          \
        (tail) = (x);                                                                              \
    } while (0)
#define LIST_REMOVE(head, tail, x, nx, pv)                                                         \
    do {                                                                                           \
        if ((x)->pv)                                                                               \
            (x)->pv->nx = (x)->nx;                                                                 \
        else                                                                                       \
            (head) = (x)->nx;                                                                      \
        if ((x)->nx)                                                                               \
            (x)->nx->pv = (x)->pv;                                                                 \
        else                                                                                       \
            (tail) = (x)->pv;                                                                      \
        (x)->nx = (x)->pv = NULL;                                                                  \
    } while (0)

/* on_list: 0 none, 1 work, 2 replay */
static void push_work(nbr_epoch_t *e)
{
    if (e->on_list || e->state == NBR_ES_DONE)
        return;
    e->on_list = 1;
    LIST_APPEND(work_head, work_tail, e, wnext, wprev);
}

static void push_replay(nbr_epoch_t *e)
{
    if (e->on_list == 1)
        LIST_REMOVE(work_head, work_tail, e, wnext, wprev);
    else if (e->on_list == 2)
        return;
    e->on_list = 2;
    LIST_APPEND(replay_head, replay_tail, e, wnext, wprev);
}

/* ---- intra-epoch scheduling (002 §4) ------------------------------------------------------
 * An iR call (a Put/Get of at least th bytes to a node peer or to self, in a ready epoch of a
 * window with pairs on other nodes) is recorded like a call of a deferred epoch but held: the
 * epoch is not pushed for replay until its closing call (mark_closed) or a flush
 * (nbr_sched_release). The IR calls (inter-node) were issued in their calls already, and ir calls
 * (below th) were carried out there; the replay then issues what is remote first and copies the
 * held calls while the inter-node transfers are in flight (step 4) — Listing 1's
 * iterate_on_progression. An epoch holding such calls sits on the window's held list. */
static void held_add(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->on_held || e->rs) /* a reduce-scatter fence epoch's calls wait for rs_step only */
        return;
    e->on_held = 1;
    LIST_APPEND(w->held_head, w->held_tail, e, hnext, hprev);
}

static void held_remove(nbr_win_t *w, nbr_epoch_t *e)
{
    if (!e->on_held)
        return;
    e->on_held = 0;
    LIST_REMOVE(w->held_head, w->held_tail, e, hnext, hprev);
}

void nbr_sched_release(nbr_win_t *w, int rank)
{
    if (rank != NBR_FLUSH_ALL && w->t[rank].net != NBR_NET_SHM && !w->issue_delayed &&
        !w->held_remote)
        return; /* the scheduler's held calls go to node peers only */
    NBR_ENTER();
    for (nbr_epoch_t *e = w->held_head, *n; e; e = n) {
        n = e->hnext;
        held_remove(w, e);
        push_replay(e);
    }
    NBR_LEAVE();
}

static void unlist(nbr_epoch_t *e)
{
    if (e->on_list == 1)
        LIST_REMOVE(work_head, work_tail, e, wnext, wprev);
    else if (e->on_list == 2)
        LIST_REMOVE(replay_head, replay_tail, e, wnext, wprev);
    e->on_list = 0;
}

static void source_link(nbr_source_t *s)
{
    if (s->linked)
        return;
    s->linked = 1;
    s->prev = NULL;
    s->next = poll_head;
    if (poll_head)
        poll_head->prev = s;
    poll_head = s;
}

static void source_unlink(nbr_source_t *s)
{
    if (!s->linked)
        return;
    s->linked = 0;
    if (s->prev)
        s->prev->next = s->next;
    else
        poll_head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
}

/* The engine state toward peer r, created on first use. NULL only when out of memory. */
static nbr_peer_q_t *peer_q(nbr_win_t *w, int r)
{
    nbr_peer_q_t *q = w->t[r].q; /* (NULL in an unmade descriptor too) */
    if (NBR_LIKELY(q))
        return q;
    nbr_tgt(w, r); /* a PSCW group member's first use (lazy windows make its descriptor) */
    if (!(q = calloc(1, sizeof *q)))
        return NULL;
    nbr_stat(&w->st_meta, &nbr_st.windows, 0, (long long)sizeof *q);
    q->posts = (nbr_source_t){.w = w, .kind = NBR_SRC_POSTS, .peer = r};
    q->dones = (nbr_source_t){.w = w, .kind = NBR_SRC_DONES, .peer = r};
    q->lock = (nbr_source_t){.w = w, .kind = NBR_SRC_LOCK, .peer = r};
    if (w->lock_q) {
        /* rank 0's holds the global word's queue state too (nbr_lockq), which every queued lock
         * may use: rank 0's engine state exists whenever another's does */
        const int nq = r == 0 ? 2 : 1;
        if ((r != 0 && !peer_q(w, 0)) || !(q->lq = calloc(nq, sizeof *q->lq))) {
            free(q);
            return NULL;
        }
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, nq * (long long)sizeof *q->lq);
        q->lq[0].handoff = (nbr_source_t){.w = w, .kind = NBR_SRC_HANDOFF, .peer = r};
        if (r == 0)
            q->lq[1].handoff = (nbr_source_t){.w = w, .kind = NBR_SRC_HANDOFF, .peer = w->size};
    }
    w->t[r].q = q;
    return q;
}

/* ---- epoch objects --------------------------------------------------------------------------- */

/* Epoch objects are recycled per window: a blocking lock/unlock pair must not cost two trips
 * through malloc. */
nbr_epoch_t *nbr_epoch_new(nbr_win_t *w, int kind)
{
    nbr_epoch_t *e = w->ep_free;
    if (e)
        w->ep_free = e->next;
    else if ((e = malloc(sizeof *e)))
        nbr_stat(&w->st_epochs, &nbr_st.epochs, 1, (long long)sizeof *e);
    else
        return NULL;
    /* one assignment: the compiler zeroes the rest inline (a memset call costs twice as much) */
    *e = (nbr_epoch_t){
        .win = w,
        .kind = kind,
        .side = kind == NBR_EK_FENCE  ? NBR_SIDE_ACCESS | NBR_SIDE_EXPOSURE
                : kind == NBR_EK_POST ? NBR_SIDE_EXPOSURE
                                      : NBR_SIDE_ACCESS,
        .cls = kind == NBR_EK_FENCE || kind == NBR_EK_LOCK_ALL ? NBR_CL_COLL
               : kind == NBR_EK_POST                          ? NBR_CL_EXPOSURE
                                                              : NBR_CL_ACCESS,
        .close_seq = UINT64_MAX,
        .target = -1,
    };
    e->rec_tail = &e->rec;
    return e;
}

/* The bytes group_epoch (sync.c) asks for: the group's ranks (+1) and the matching entries. */
static long long group_bytes(const nbr_epoch_t *e)
{
    return (long long)e->n * (long long)sizeof *e->group + 1 +
           ((long long)e->n + 1) * (long long)sizeof *e->m;
}

void nbr_epoch_free(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->group) { /* START, POST only: lock epochs skip two calls to free */
        if (e->m) /* counted by nbr_epoch_peers_alloc, which group_epoch runs once m exists */
            nbr_stat(&w->st_epochs, &nbr_st.epochs, 0, -group_bytes(e));
        free(e->group);
        e->group = NULL;
    }
    if (e->m) {
        free(e->m);
        e->m = NULL;
    }
    e->next = w->ep_free;
    w->ep_free = e;
}

void nbr_epoch_pool_free(nbr_win_t *w)
{
    while (w->ep_free) {
        nbr_epoch_t *e = w->ep_free;
        w->ep_free = e->next;
        free(e);
        nbr_stat(&w->st_epochs, &nbr_st.epochs, -1, -(long long)sizeof *e);
    }
}

int nbr_epoch_peers_alloc(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->kind == NBR_EK_LOCK)
        return peer_q(w, e->target) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (e->kind == NBR_EK_LOCK_ALL && w->lock_q && !peer_q(w, 0)) /* the global word's queue */
        return MPI_ERR_NO_MEM;
    if (e->group && e->m) /* group_epoch (sync.c) allocated both, and calls this once */
        nbr_stat(&w->st_epochs, &nbr_st.epochs, 0, group_bytes(e));
    for (int i = 0; i < e->n; i++)
        if (!peer_q(w, e->group[i]))
            return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

void nbr_win_engine_init(nbr_win_t *w)
{
    w->src_all = (nbr_source_t){.w = w, .kind = NBR_SRC_LOCK_ALL};
    w->src_fence = (nbr_source_t){.w = w, .kind = NBR_SRC_FENCE};
    w->src_quiet = (nbr_source_t){.w = w, .kind = NBR_SRC_QUIET};
}

/* e joins the window's queue, deferred (the frontier is the caller's business). */
static void queue_append(nbr_win_t *w, nbr_epoch_t *e)
{
    e->open_seq = ++w->seq;
    LIST_APPEND(w->q_head, w->q_tail, e, next, prev);
    w->ndeferred++;
    w->npending++;
}

void nbr_epoch_enqueue(nbr_win_t *w, nbr_epoch_t *e)
{
    queue_append(w, e);
    if (!w->frontier) {
        w->frontier = e;
        push_work(e);
    }
}

void nbr_epoch_set_direct(nbr_win_t *w, nbr_epoch_t *e, int on)
{
    switch (e->kind) {
    case NBR_EK_FENCE:
    case NBR_EK_LOCK_ALL:
        __atomic_store_n(&w->all_direct, on, __ATOMIC_RELEASE);
        break;
    case NBR_EK_START:
        for (int i = 0; i < e->n; i++)
            __atomic_store_n(&w->t[e->group[i]].direct, (unsigned char)on, __ATOMIC_RELEASE);
        break;
    case NBR_EK_LOCK:
        __atomic_store_n(&w->t[e->target].direct, (unsigned char)on, __ATOMIC_RELEASE);
        break;
    }
}

/* The application closed e; its completion will finish req (may be NULL). */
static void mark_closed(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req)
{
    e->closed = 1;
    e->close_seq = ++w->seq;
    nbr_epoch_set_direct(w, e, 0);
    if (e->on_held && !e->rs) { /* the closing call carries out what the scheduler held (002 §4) */
        held_remove(w, e);
        push_replay(e);
    }
    if (req) {
        nbr_req_ref(req);
        e->close_req = req;
    }
}

void nbr_epoch_close(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req)
{
    mark_closed(w, e, req);
    LIST_APPEND(w->closed_head[e->cls], w->closed_tail[e->cls], e, cnext, cprev);
    e->on_closed = 1;
    push_work(e); /* it may complete now */
}

static _Thread_local int in_progress_thread NBR_TLS_MODEL;
static nbr_rec_t *type_free_head; /* recordings whose datatypes the progress thread may not free */

int nbr_in_progress_thread(void)
{
    return in_progress_thread;
}

void nbr_mark_progress_thread(void)
{
    in_progress_thread = 1;
}

int nbr_engine_busy(void)
{
    return work_head || replay_head || poll_head || nbr_tp_outstanding() > 0;
}

/* ---- operation objects: a pool (issue 26, F6) ------------------------------------------------
 * Recorded calls (deferred epochs, the scheduler's held calls, delayed issue, the reduce-scatter
 * fence) come and go by the thousand per epoch. A malloc and a free each cost about half of a
 * delayed put (perf, f6_issue at 16 Ki puts per target: _int_malloc and the page faults of a heap
 * that glibc gives back to the kernel after each epoch and takes again in the next). Freed
 * objects are kept for reuse instead, up to NBRMA_OP_POOL of them in the process (16384, as MPICH
 * ch3's global pool); the rest go back to malloc. The ops gauges count the objects in use,
 * proc_ops_pooled those kept (MPIX_Win_stats version 2). Under the big lock, as every recording and
 * replay is. */
static nbr_rec_t *rec_pool; /* a stack, linked through next */
static long long rec_pool_n;
/* Under AddressSanitizer a pooled object is poisoned but for its link, so that a use after it was
 * freed is still reported (SAN=1), as it would be had it gone back to malloc. */
#if defined(__SANITIZE_ADDRESS__)
#define REC_POISON(r)                                                                              \
    ASAN_POISON_MEMORY_REGION(&(r)->run_prev, sizeof *(r)-offsetof(nbr_rec_t, run_prev))
#define REC_UNPOISON(r) ASAN_UNPOISON_MEMORY_REGION((r), sizeof *(r))
#else
#define REC_POISON(r)   ((void)(r))
#define REC_UNPOISON(r) ((void)(r))
#endif

static nbr_rec_t *rec_alloc(void)
{
    nbr_rec_t *r = rec_pool;
    if (!r)
        return malloc(sizeof *r);
    REC_UNPOISON(r);
    rec_pool = r->next;
    rec_pool_n--;
    nbr_stat(NULL, &nbr_st.ops_pooled, -1, -(long long)sizeof *r);
    return r;
}

static void rec_release(nbr_rec_t *r)
{
    if (rec_pool_n >= nbr_cfg.OP_POOL) {
        free(r);
        return;
    }
    r->next = rec_pool;
    REC_POISON(r);
    rec_pool = r;
    rec_pool_n++;
    nbr_stat(NULL, &nbr_st.ops_pooled, 1, (long long)sizeof *r);
}

void nbr_rec_pool_drain(void)
{
    NBR_ENTER();
    while (rec_pool) /* rec_alloc takes from the pool while it holds any */
        free(rec_alloc());
    NBR_LEAVE();
}

static void rec_free(nbr_rec_t *r)
{
    if (in_progress_thread && (r->dup_ot || r->dup_rt || r->dup_tt)) {
        r->next = type_free_head; /* MPI_Type_free is for an application thread */
        type_free_head = r;
        return;
    }
    if (r->dup_ot)
        PMPI_Type_free(&r->ot);
    if (r->dup_rt)
        PMPI_Type_free(&r->rt);
    if (r->dup_tt)
        PMPI_Type_free(&r->tt);
    rec_release(r);
}

static void flushes_check(nbr_win_t *w, int rank);

/* A run leaves its rank's list: if it was the oldest, flushes toward the rank may be done. */
static void run_remove(nbr_win_t *w, nbr_rec_t *r)
{
    nbr_peer_q_t *q = w->t[r->rank].q;
    int was_head = q->run_head == r;
    LIST_REMOVE(q->run_head, q->run_tail, r, run_next, run_prev);
    r->is_run = 0;
    if (was_head && q->fl_head)
        flushes_check(w, r->rank);
}

/* The epoch holds no recorded call any more: flush_all requests may be done. */
static void rec_list_remove(nbr_win_t *w, nbr_epoch_t *e)
{
    if (!e->on_rec)
        return;
    int was_head = w->rec_head == e;
    LIST_REMOVE(w->rec_head, w->rec_tail, e, rnext, rprev);
    e->on_rec = 0;
    if (was_head && w->fla_head)
        flushes_check(w, NBR_FLUSH_ALL);
}

/* Done (or dropped): leave every list, complete the closing request, recycle. */
static void finish(nbr_win_t *w, nbr_epoch_t *e)
{
    unlist(e);
    if (w->frontier == e && (w->frontier = e->next))
        push_work(w->frontier);
    LIST_REMOVE(w->q_head, w->q_tail, e, next, prev);
    if (e->on_closed) {
        int was_head = w->closed_head[e->cls] == e;
        LIST_REMOVE(w->closed_head[e->cls], w->closed_tail[e->cls], e, cnext, cprev);
        e->on_closed = 0;
        if (was_head && w->frontier) /* the predicate may admit the first deferred epoch now */
            push_work(w->frontier);
    }
    if (e->state == NBR_ES_DEFERRED)
        w->ndeferred--;
    w->npending--;
    e->state = NBR_ES_DONE;
    for (nbr_rec_t *r = e->rec, *n; r; r = n) { /* only a dropped epoch still holds calls */
        n = r->next;
        if (r->is_run)
            run_remove(w, r);
        if (r->req) {
            nbr_req_finish(r->req, MPI_ERR_RMA_SYNC);
            nbr_req_release(r->req);
        }
        nbr_stat(&w->st_ops, &nbr_st.ops, -1, -(long long)sizeof *r);
        rec_free(r);
    }
    rec_list_remove(w, e);
    held_remove(w, e);
    if (e->open_req) {
        nbr_req_finish(e->open_req, e->err);
        nbr_req_release(e->open_req);
    }
    if (e->close_req) {
        nbr_req_finish(e->close_req, e->err);
        nbr_req_release(e->close_req);
    }
    nbr_epoch_free(w, e);
}

void nbr_epoch_drop(nbr_win_t *w, nbr_epoch_t *e)
{
    if (!e->closed)
        nbr_epoch_close(w, e, NULL);
    if (e->state == NBR_ES_ACTIVE && e->kind == NBR_EK_FENCE && w->fence_wait == e) {
        w->fence_wait = NULL;
        source_unlink(&w->src_fence);
    }
    finish(w, e);
}

/* ---- recording (000 §VII-A) ------------------------------------------------------------------ */

nbr_epoch_t *nbr_access_epoch(nbr_win_t *w, int rank)
{
    if (w->fence_ep)
        return w->fence_ep;
    if (w->all_ep)
        return w->all_ep;
    if (w->t[rank].lock_ep)
        return w->t[rank].lock_ep;
    if (w->start_ep && w->t[rank].in_access)
        return w->start_ep;
    return NULL;
}

static int dup_type(MPI_Datatype *t, unsigned char *dup)
{
    int ni, na, nd, comb;
    *dup = 0;
    if (*t == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(*t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return MPI_SUCCESS;
    if (comb == MPI_COMBINER_NAMED)
        return MPI_SUCCESS;
    MPI_Datatype d;
    int rc = PMPI_Type_dup(*t, &d);
    if (rc == MPI_SUCCESS) {
        *t = d;
        *dup = 1;
    }
    return rc;
}

int nbr_record(nbr_win_t *w, const nbr_rec_t *src)
{
    nbr_epoch_t *e = nbr_access_epoch(w, src->rank);
    nbr_peer_q_t *q = peer_q(w, src->rank);
    nbr_rec_t *r = q ? rec_alloc() : NULL;
    if (!r)
        return nbr_err(w, src->call, MPI_ERR_NO_MEM,
                       "out of memory recording a call of a deferred epoch");
    *r = *src;
    r->next = r->run_next = r->run_prev = NULL;
    r->ep = e;
    r->is_run = 0;
    if (r->kind != NBR_RC_GACC) /* the types a kind does not use: unset in *src */
        r->rt = MPI_DATATYPE_NULL;
    if (r->kind == NBR_RC_CAS)
        r->tt = MPI_DATATYPE_NULL;
    nbr_stat(&w->st_ops, &nbr_st.ops, 1, (long long)sizeof *r);
    if (dup_type(&r->ot, &r->dup_ot) != MPI_SUCCESS ||
        dup_type(&r->rt, &r->dup_rt) != MPI_SUCCESS ||
        dup_type(&r->tt, &r->dup_tt) != MPI_SUCCESS) {
        nbr_stat(&w->st_ops, &nbr_st.ops, -1, -(long long)sizeof *r);
        rec_free(r);
        return nbr_err(w, src->call, MPI_ERR_TYPE, "could not keep the datatype for later");
    }
    r->age = ++w->age;
    if (r->req)
        nbr_req_ref(r->req);
    *e->rec_tail = r;
    e->rec_tail = &r->next;
    if (e->nrec++ == 0) {
        e->first_age = r->age;
        LIST_APPEND(w->rec_head, w->rec_tail, e, rnext, rprev);
        e->on_rec = 1;
    }
    /* One open epoch covers a rank at a time, so its runs toward the rank are in age order. */
    if (!q->run_tail || q->run_tail->ep != e) {
        r->is_run = 1;
        LIST_APPEND(q->run_head, q->run_tail, r, run_next, run_prev);
    }
    if (r->held && e->state == NBR_ES_READY && !e->closed) {
        held_add(w, e); /* carried out at the closing call or a flush (002 §4) */
        if (w->t[r->rank].net != NBR_NET_SHM)
            w->held_remote = 1; /* delayed issue (004 §III-D): flushes toward it release */
    }
    else if (e->state == NBR_ES_READY && !e->rs) /* another thread made it ready meanwhile */
        push_replay(e);
    return MPI_SUCCESS;
}

long nbr_pending_calls(nbr_win_t *w, int rank)
{
    long n = 0;
    for (nbr_epoch_t *e = w->q_head; e; e = e->next)
        for (nbr_rec_t *r = e->rec; r; r = r->next)
            n += rank == NBR_FLUSH_ALL || r->rank == rank;
    return n;
}

/* ---- flush (000 §VII-C) ---------------------------------------------------------------------- */

/* The oldest recorded call still pending toward rank (or any), UINT64_MAX when none. */
static uint64_t oldest_pending(nbr_win_t *w, int rank)
{
    if (rank == NBR_FLUSH_ALL)
        return w->rec_head ? w->rec_head->first_age : UINT64_MAX;
    nbr_peer_q_t *q = w->t[rank].q;
    return q && q->run_head ? q->run_head->age : UINT64_MAX;
}

/* Complete the flushes toward rank (or all) whose calls were all carried out. They wait in age
 * order, so it stops at the first that still waits. */
/* A flush whose calls were all carried out: done once the remote ones completed (a flush
 * toward shm peers only is done at once). */
static void flush_done(nbr_win_t *w, nbr_flush_t *f)
{
    if (!nbr_tp_quiet(w, f->rank)) {
        f->next = w->fq_head;
        w->fq_head = f;
        source_link(&w->src_quiet);
        return;
    }
    w->nflushes--;
    int err = w->tp_err;
    w->tp_err = MPI_SUCCESS;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    nbr_req_finish(f->req, err);
    nbr_req_release(f->req);
    free(f);
    nbr_stat(&w->st_flushes, &nbr_st.flushes, -1, -(long long)sizeof *f);
}

static void flushes_check(nbr_win_t *w, int rank)
{
    uint64_t oldest = oldest_pending(w, rank);
    nbr_peer_q_t *q = rank == NBR_FLUSH_ALL ? NULL : w->t[rank].q;
    nbr_flush_t **head = q ? &q->fl_head : &w->fla_head, **tail = q ? &q->fl_tail : &w->fla_tail;
    while (*head && (*head)->age < oldest) {
        nbr_flush_t *f = *head;
        if (!(*head = f->next))
            *tail = NULL;
        flush_done(w, f);
    }
}

nbr_req_t *nbr_flush_start(nbr_win_t *w, int rank, nbr_req_t *req, int *rc)
{
    *rc = MPI_SUCCESS;
    uint64_t age = w->age; /* every call recorded so far is no younger than the flush */
    int recorded = oldest_pending(w, rank) <= age;
    if (!recorded && (NBR_LIKELY(!w->nremote) || (nbr_tp_quiet(w, rank) && !w->tp_err)))
        return NULL;
    nbr_flush_t *f = malloc(sizeof *f);
    if (!f) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    nbr_stat(&w->st_flushes, &nbr_st.flushes, 1, (long long)sizeof *f);
    *f = (nbr_flush_t){.age = age, .req = req, .rank = rank};
    /* Calls held since the caller released them (an epoch that became ready in between, under
     * delayed issue: make_ready) are due now too, or this flush would wait for them forever. */
    if (recorded && NBR_UNLIKELY(w->held_head))
        nbr_sched_release(w, rank);
    nbr_req_ref(req); /* the flush's */
    if (!recorded) { /* only remote completions to wait for */
        w->nflushes++;
        flush_done(w, f);
        return req;
    }
    nbr_peer_q_t *q = rank == NBR_FLUSH_ALL ? NULL : w->t[rank].q;
    nbr_flush_t **head = q ? &q->fl_head : &w->fla_head, **tail = q ? &q->fl_tail : &w->fla_tail;
    if (*tail)
        (*tail)->next = f;
    else
        *head = f;
    *tail = f;
    w->nflushes++;
    return req;
}

/* ---- activation (000 §VI-B, §VII-A) ---------------------------------------------------------- */

static unsigned flag_needed(int prev_side, int next_side)
{
    if (next_side == NBR_SIDE_ACCESS)
        return prev_side == NBR_SIDE_ACCESS ? NBR_AAAR : NBR_AAER;
    return prev_side == NBR_SIDE_EXPOSURE ? NBR_EAER : NBR_EAAR;
}

/* The predicate of 000 §VII-A for the first deferred epoch e: every epoch before e is active, so
 * e may go unless an earlier epoch the application closed before it opened e is not done yet —
 * the default of 000 §VI-B — and no reorder flag lets e pass it (flags never apply to fence or
 * lock_all epochs). Epochs opened after e cannot have been closed before e opened, so "earlier"
 * needs no check, and the earliest closed epoch of each class (the head of its list) decides
 * for the whole class. Epochs whose application lifetimes overlap (post then start, locks on
 * two targets) progress together as MPI-3 requires. */
static int may_activate(const nbr_win_t *w, const nbr_epoch_t *e)
{
    for (int c = 0; c < NBR_NCLASS; c++) {
        const nbr_epoch_t *p = w->closed_head[c];
        if (!p || p->close_seq > e->open_seq)
            continue;
        if (c == NBR_CL_COLL || e->cls == NBR_CL_COLL)
            return 0;
        if (!(w->flags & flag_needed(p->side, e->side)))
            return 0;
    }
    return 1;
}

void nbr_win_flags_changed(nbr_win_t *w)
{
    if (w->frontier)
        push_work(w->frontier);
}

static void signal_fence(nbr_win_t *w, uint64_t no)
{
    nbr_tp_fence_signal(w, no);
}

/* Every rank reached fence `no`? (the scan remembers peers already seen, so a long wait rescans
 * nobody). */
static int fence_passed(nbr_win_t *w, uint64_t no)
{
    if (w->fence_wait_no != no) {
        w->fence_wait_no = no;
        w->fence_scan = 0;
    }
    while (w->fence_scan < w->size) {
        if (nbr_tp_fence_seen(w, w->fence_scan) < no)
            return 0;
        w->fence_scan++;
    }
    return 1;
}

static void fence_wait(nbr_win_t *w, nbr_epoch_t *e)
{
    w->fence_wait = e;
    source_link(&w->src_fence);
}

/* ---- the reduce-scatter fence (paper 004 §III-C1, Fig. 2a; 003 §4) ---------------------------
 * NBRMA_FENCE=reduce_scatter. The opening fence is a no-op and the epoch's calls are held (every
 * one recorded, as delayed issue does). At the closing fence, once the epoch is ready and every
 * earlier epoch is done (rs_start, from the engine):
 *   phase 0  flags[t] = 1 for each target t of a held call, and an MPI_Ireduce_scatter_block
 *            (sum) of them on the window's own communicator: rs_in = origins that will notify me;
 *   phase 1  the engine tests it (libnbrma never blocks inside the vendor MPI); done: every rank
 *            reached this closing fence with its previous epochs complete, so the held calls may
 *            go — they are replayed (issued) now;
 *   phase 2  once my calls are complete (try_complete's remote_done: shm at the call, am
 *            acknowledged by the target's CPU, ucx flushed), each flagged target gets one
 *            fetch-add on its rs_arrived word (the "last operation decrements the target's
 *            counter" of 003 §4; behind the data on every transport);
 *   phase 3  my rs_arrived reaches rs_expect (sum of rs_in over all fences): every origin that
 *            targeted me completed. Then I signal this fence number (no wait) for an epoch of
 *            another kind that may follow; and when the closing call opens no reduce-scatter
 *            epoch (MPI_MODE_NOSUCCEED, or the barrier fence next: rs_last)
 *   phase 4  wait for every peer's signal: a lock or PSCW epoch after it finds no access of this
 *            epoch still in flight toward any target (a barrier, as the barrier fence does).
 * An epoch the fence opened but start/post/lock/lock_all ended (rs_yield) waits likewise for
 * every peer's signal of the fence that opened it (rs_after: that fence closed a reduce-scatter
 * epoch without a barrier). Work per fence: O(P) for the flags, the collective, O(targets)
 * notifications; no barrier between two reduce-scatter fence epochs. */
static void rs_resume(nbr_epoch_t *e)
{
    if (e->nrec)
        push_replay(e);
    else
        push_work(e);
}

/* What e waits for is there (phase 1: the reduce-scatter completed, its result taken). */
static int rs_poll(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->rs_yield)
        return !e->rs_after || fence_passed(w, e->fence_no);
    switch (e->rs_phase) {
    case 1: {
        int done = 0;
        if (PMPI_Test(&e->rs_req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            done = 1; /* every rank sees the failure alike: no notification is due */
            e->rs_in = 0;
            if (!e->err)
                e->err = MPI_ERR_OTHER;
        }
        if (!done)
            return 0;
        w->rs_expect += (uint64_t)e->rs_in;
        e->rs_phase = 2;
        return 1;
    }
    case 3:
        return __atomic_load_n(&w->ctl->rs_arrived, __ATOMIC_ACQUIRE) >= w->rs_expect;
    case 4:
        return fence_passed(w, e->close_no);
    }
    return 1;
}

static void rs_start(nbr_win_t *w, nbr_epoch_t *e)
{
    memset(w->rs_flags, 0, (size_t)w->size * sizeof *w->rs_flags);
    for (nbr_rec_t *r = e->rec; r; r = r->next)
        if ((unsigned)r->rank < (unsigned)w->size)
            w->rs_flags[r->rank] = 1;
    e->rs_phase = 1;
    if (PMPI_Ireduce_scatter_block(w->rs_flags, &e->rs_in, 1, MPI_INT, MPI_SUM, w->rs_comm,
                                   &e->rs_req) != MPI_SUCCESS) {
        e->rs_req = MPI_REQUEST_NULL; /* tested at once: complete */
        e->rs_in = 0;
        if (!e->err)
            e->err = MPI_ERR_OTHER;
    }
    if (rs_poll(w, e))
        rs_resume(e);
    else
        fence_wait(w, e);
}

/* try_complete's part (my calls complete): phases 2 to 4, or an ended epoch's wait. 1: done. */
static int rs_finish(nbr_win_t *w, nbr_epoch_t *e)
{
    if (!e->rs_yield && e->rs_phase == 2) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my calls' effects before the notification */
        for (int t = 0; t < w->size; t++)
            if (w->rs_flags[t])
                nbr_tp_amo_nr(w, t, NBR_W_RS, NBR_AMO_FADD, 1);
        e->rs_phase = 3;
    }
    if (!e->rs_yield && e->rs_phase == 3) {
        if (!rs_poll(w, e)) {
            fence_wait(w, e);
            return 0;
        }
        signal_fence(w, e->close_no);
        if (!e->rs_last)
            return 1;
        e->rs_phase = 4;
    }
    if (!rs_poll(w, e)) {
        fence_wait(w, e);
        return 0;
    }
    return 1;
}

/* Delayed issue (004 §III-D): a deferred epoch that becomes ready keeps its recorded calls for
 * the closing call or a flush, unless one of them is an R-variant, whose request the
 * application may wait for inside the epoch, or a flush is already waiting (it released the
 * held calls before these could be held): then all are carried out now, in order. */
static int delayed_keeps(nbr_win_t *w, nbr_epoch_t *e)
{
    if (!w->issue_delayed || e->closed || w->nflushes)
        return 0; /* a flush issued while the epoch was deferred waits for these calls */
    for (nbr_rec_t *r = e->rec; r; r = r->next)
        if (r->req)
            return 0;
    if (w->nremote)
        w->held_remote = 1;
    return 1;
}

static void make_ready(nbr_win_t *w, nbr_epoch_t *e)
{
    e->state = NBR_ES_READY;
    if (e->open_req) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        nbr_req_finish(e->open_req, MPI_SUCCESS);
        nbr_req_release(e->open_req);
        e->open_req = NULL;
    }
    if (e->rs) { /* reduce-scatter fence: every call waits for the closing fence (rs_start) */
        if (e->closed)
            push_work(e);
        else
            nbr_epoch_set_direct(w, e, 1);
        return;
    }
    if (e->nrec && delayed_keeps(w, e)) { /* delayed issue: still queued until closing */
        held_add(w, e);
        nbr_epoch_set_direct(w, e, 1);
    } else if (e->nrec)
        push_replay(e);
    else if (!e->closed)
        nbr_epoch_set_direct(w, e, 1);
    else
        push_work(e);
}

/* Lock requests are granted per target in activation order (one origin's lock epochs toward one
 * target: with A_A_A_R a later shared lock granted first would keep out the earlier exclusive
 * one, whose calls a flush of the later epoch then waits for forever). */
static void handoff(nbr_win_t *w, nbr_epoch_t *e, int t);

/* try_lock of a queued window (lock.c), out of the polling lock's path. */
static __attribute__((noinline)) int try_lock_queued(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->kind == NBR_EK_LOCK_ALL) {
        /* lock_all waits its turn in the global word's queue and passes it on once it holds its
         * share, as a reader does below. */
        if (!nbr_try_global_queued(w, e))
            return 0;
        handoff(w, e, w->size);
        return 1;
    }
    if (e->lock_type == MPI_LOCK_SHARED) {
        /* A reader waits its turn in the target's queue, and once it holds the lock passes the
         * queue on at once, so that readers in a row share the lock and a writer behind them
         * waits at the head. */
        if (!nbr_try_lock_queued(w, e))
            return 0;
        handoff(w, e, e->target);
        return 1;
    }
    /* Exclusive: the registration in the global word through its queue (passed on once held),
     * then the target's queue and writer bit. */
    if (e->lock_phase == 0) {
        if (!nbr_try_global_queued(w, e))
            return 0;
        handoff(w, e, w->size);
        e->lock_phase = 1;
    }
    return nbr_try_lock_queued(w, e);
}

static int try_lock(nbr_win_t *w, nbr_epoch_t *e)
{
    if (NBR_UNLIKELY(w->lock_q))
        return try_lock_queued(w, e);
    if (e->kind == NBR_EK_LOCK_ALL)
        return nbr_try_lock_all(w, &e->cell);
    if (e->lock_type == MPI_LOCK_SHARED)
        return nbr_try_lock_shared(w, e->target, &e->cell);
    if (e->lock_phase == 0 && nbr_try_lock_global_excl(w, &e->cell))
        e->lock_phase = 1;
    return e->lock_phase == 1 && nbr_try_lock_writer(w, e->target, &e->cell);
}

/* A released exclusive lock that waited in the target's queue, or a granted shared one: hand the
 * queue on to the successor (lock.c), at once when it can, else in the engine's polls (the epoch
 * goes on meanwhile: the lock word decides who holds the lock, only the order of the next holders
 * waits). */
static void handoff(nbr_win_t *w, nbr_epoch_t *e, int t)
{
    if (e->qstep != 3) /* not queued (a registration another exclusive lock of mine made) */
        return;
    e->qstep = 0;
    nbr_lockq_t *lq = nbr_lockq(w, t);
    lq->hstate = NBR_HO_START;
    if (nbr_lock_handoff(w, t))
        return;
    /* A successor swapped itself in and its link is on its way. In a window on one node that link
     * is a store the successor makes in the same step as its swap, needing nothing of this
     * process: wait for it here. Left to the engine, it would wait for this process's next
     * libnbrma call — and on one node MPI_Recv, MPI_Barrier and the rest go straight to the
     * vendor, so a process that unlocks (or takes a shared lock) and then blocks in MPI_Recv for
     * a message its successor sends once it holds the lock would never grant it: a deadlock
     * (thread_rma's visibility point under SAN=thread, where the successor was slow enough to be
     * seen between its swap and its link). Across nodes the link may need this process's own
     * progress (am) and blocking calls serve it (blocking.c): the engine finishes the hand-off. */
    if (!w->nremote) {
        while (!nbr_lock_handoff(w, t))
            nbr_relax();
        return;
    }
    w->nhandoff++;
    source_link(&lq->handoff);
}

/* Take the matching ids (000 §VII-B: only activated epochs modify <a, e, g>) and ask for access.
 * The per-peer state exists already (nbr_epoch_peers when the epoch opened). */
static void activate(nbr_win_t *w, nbr_epoch_t *e)
{
    w->ndeferred--;
    e->state = NBR_ES_ACTIVE;
    switch (e->kind) {
    case NBR_EK_FENCE:
        if (e->rs) { /* 004 Fig. 2a: the opening fence is a no-op (its calls are held) */
            make_ready(w, e);
            break;
        }
        signal_fence(w, e->fence_no);
        if (fence_passed(w, e->fence_no))
            make_ready(w, e);
        else
            fence_wait(w, e);
        break;
    case NBR_EK_START:
        e->nwait = e->nnotify = e->n;
        for (int i = 0; i < e->n; i++) {
            nbr_peer_q_t *q = w->t[e->group[i]].q;
            nbr_match_t *m = &e->m[i];
            m->ep = e;
            m->id = ++w->t[e->group[i]].a; /* access id A_i = ++a_l */
            m->next = NULL;
            if (q->acc_tail)
                q->acc_tail->next = m;
            else
                q->acc_head = m;
            q->acc_tail = m;
            m->granted = m->notify = 0;
            if (e->assert & MPI_MODE_NOCHECK) { /* the posts are known to have happened */
                m->granted = 1;
                e->nwait--;
            } else if (!q->acc_cursor) {
                q->acc_cursor = m; /* the first entry not granted */
            }
            if (q->acc_cursor)
                source_link(&q->posts);
        }
        if (!e->nwait)
            make_ready(w, e);
        break;
    case NBR_EK_POST:
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my stores are visible before I expose */
        e->nwait = e->n;
        for (int i = 0; i < e->n; i++) {
            int o = e->group[i];
            nbr_peer_q_t *q = w->t[o].q;
            nbr_match_t *m = &e->m[i];
            m->ep = e;
            m->id = ++w->t[o].e;
            m->next = NULL;
            /* g_r, one-sidedly in the origin's control block */
            nbr_tp_notify(w, o, NBR_NS_POSTED, m->id);
            if (q->exp_tail)
                q->exp_tail->next = m;
            else
                q->exp_head = m;
            q->exp_tail = m;
            source_link(&q->dones);
        }
        make_ready(w, e);
        break;
    case NBR_EK_LOCK:
    case NBR_EK_LOCK_ALL:
        if (e->assert & MPI_MODE_NOCHECK) {
            make_ready(w, e);
            break;
        }
        nbr_epoch_t **head, **tail;
        nbr_source_t *src;
        if (e->kind == NBR_EK_LOCK) {
            nbr_peer_q_t *q = w->t[e->target].q;
            head = &q->lock_head;
            tail = &q->lock_tail;
            src = &q->lock;
        } else {
            head = &w->all_head;
            tail = &w->all_tail;
            src = &w->src_all;
        }
        e->lnext = NULL;
        if (!*head && try_lock(w, e)) { /* nobody queued before it: one try at once */
            make_ready(w, e);
            break;
        }
        if (*tail)
            (*tail)->lnext = e;
        else
            *head = e;
        *tail = e;
        source_link(src);
        break;
    }
}

/* ---- completion ------------------------------------------------------------------------------ */

/* START done notifications toward rank r go out in id order: write every notification due at
 * the head of r's queue; an epoch whose last one went out is done (pushed for completion). */
static void notify_due(nbr_win_t *w, int r)
{
    nbr_peer_q_t *q = w->t[r].q;
    nbr_match_t *m;
    while ((m = q->acc_head) && m->notify) {
        nbr_tp_notify(w, r, NBR_NS_COMPLETED, m->id);
        if (!(q->acc_head = m->next))
            q->acc_tail = NULL;
        if (--m->ep->nnotify == 0)
            push_work(m->ep);
    }
}

/* A closed, ready epoch with nothing left to carry out: complete it if its conditions hold,
 * else leave it waiting on a source that pushes it back. */
/* The scope of an access epoch's remote completions: its target, or every peer. */
static inline int epoch_scope(const nbr_epoch_t *e)
{
    return e->kind == NBR_EK_LOCK ? e->target : NBR_FLUSH_ALL;
}

/* A closed access epoch whose remote operations are still in flight waits on the window's
 * quiet source (transport/tp.h: complete = acknowledged by the target). */
static void quiet_park(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->on_quiet)
        return;
    e->on_quiet = 1;
    LIST_APPEND(w->quiet_head, w->quiet_tail, e, qnext, qprev);
    source_link(&w->src_quiet);
}

static void notify_due(nbr_win_t *w, int r);

/* A closing START epoch's done notifications, once: each goes out when every earlier one toward
 * its target has (notify_due). */
static void start_notify(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->notify_marked)
        return;
    e->notify_marked = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my calls are visible before I say done */
    for (int i = 0; i < e->n; i++)
        e->m[i].notify = 1;
    for (int i = 0; i < e->n; i++)
        notify_due(w, e->group[i]);
}

/* Out of line (windows with remote pairs only): what a closing epoch may do before its remote
 * operations complete, then: are they complete? If not, e waits on the quiet source; if a target
 * reported a failure, e's closing call raises it.
 *
 * A pair's requests take effect at the target in the order they were sent, large puts included
 * (transport/am.c), so whatever concerns only the targets of a pair may follow the data at once:
 * PSCW done notifications (each goes to the target of the operations it covers) and the lock word
 * of a lock epoch's own target. The target's wait or the next lock holder then never waits for
 * this origin's next MPI call (A4's late complete across nodes). What covers other targets waits
 * for the acknowledgements: the global word of an exclusive lock and lock_all (at rank 0, a
 * lock_all holder then reaches every target), and fence arrivals (a peer that passed the fence
 * reaches every target). */
static __attribute__((noinline, cold)) int remote_done(nbr_win_t *w, nbr_epoch_t *e)
{
    /* Over a transport without that order (RDMA: a flushed put is complete, a put is not; a get
     * completed here may be followed by an atomic that overtakes nothing), the data first: the
     * done notifications and the lock word wait until the epoch's operations are complete. */
    if (NBR_UNLIKELY(w->unordered) && !e->notify_marked && e->lock_phase != 2 &&
        !nbr_tp_quiet(w, epoch_scope(e))) {
        quiet_park(w, e);
        return 0;
    }
    if (e->kind == NBR_EK_START)
        start_notify(w, e);
    if (e->kind == NBR_EK_START && e->nnotify)
        return 0; /* notify_due pushes e back when its last notification went out */
    if (e->kind == NBR_EK_LOCK && e->lock_phase != 2 && !(e->assert & MPI_MODE_NOCHECK)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (e->lock_type == MPI_LOCK_SHARED) {
            nbr_unlock_shared(w, e->target);
        } else {
            nbr_unlock_target(w, e->target);
            handoff(w, e, e->target);
        }
        e->lock_phase = 2; /* the exclusive lock's global word: after the acknowledgements */
    }
    if (!nbr_tp_quiet(w, epoch_scope(e))) {
        quiet_park(w, e);
        return 0;
    }
    if (w->tp_err) {
        if (!e->err)
            e->err = w->tp_err;
        w->tp_err = MPI_SUCCESS;
    }
    return 1;
}

static void try_complete(nbr_win_t *w, nbr_epoch_t *e)
{
    if (NBR_UNLIKELY(w->nremote) && e->kind != NBR_EK_POST && !remote_done(w, e))
        return;
    switch (e->kind) {
    case NBR_EK_FENCE:
        if (e->rs) {
            if (!rs_finish(w, e))
                return;
        } else if (e->close_no) {
            signal_fence(w, e->close_no);
            if (!fence_passed(w, e->close_no)) {
                fence_wait(w, e);
                return;
            }
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
    case NBR_EK_START:
        start_notify(w, e);
        if (e->nnotify)
            return;
        break;
    case NBR_EK_POST:
        if (e->nwait)
            return;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
    case NBR_EK_LOCK:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (e->assert & MPI_MODE_NOCHECK)
            break;
        if (NBR_UNLIKELY(e->lock_phase == 2)) { /* the target's word went out already */
            if (e->lock_type != MPI_LOCK_SHARED)
                nbr_unlock_global_excl(w);
        } else if (e->lock_type == MPI_LOCK_SHARED) {
            nbr_unlock_shared(w, e->target);
        } else {
            nbr_unlock_writer(w, e->target);
            handoff(w, e, e->target);
        }
        break;
    case NBR_EK_LOCK_ALL:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!(e->assert & MPI_MODE_NOCHECK))
            nbr_unlock_all_word(w);
        break;
    }
    finish(w, e);
}

/* One step of an epoch on the work list. */
static void advance(nbr_epoch_t *e)
{
    nbr_win_t *w = e->win;
    nbr_engine_stats.epochs_advanced++;
    if (e->state == NBR_ES_DEFERRED) {
        if (e != w->frontier || !may_activate(w, e))
            return;
        w->frontier = e->next; /* deferred epochs are a suffix: the next one is the frontier */
        if (w->frontier)
            push_work(w->frontier);
        activate(w, e);
        return;
    }
    if (e->state == NBR_ES_READY && e->closed && e->rs && !e->rs_yield && e->rs_phase == 0) {
        rs_start(w, e);
        return;
    }
    if (e->state == NBR_ES_READY && e->closed && !e->nrec)
        try_complete(w, e);
}

/* ---- the seven steps of 000 §VII-D ----------------------------------------------------------- */

/* Steps 1 and 2 concern inter-node messages (transport/am.c): step 1 collects their completions
 * (acknowledgements, fetched data, credits) and serves the requests peers sent us — puts, gets,
 * accumulates, lock words and notifications are carried out here, by the target's CPU, lock and
 * unlock requests in the order they came (000 §VII-D batches them the same way). Step 2, the
 * posting of inter-node RMA, happens in the RMA calls themselves: a call of a ready epoch sends
 * its request at once, so there is nothing left to post here. */
static void step1_internode_completions(void)
{
    if (NBR_UNLIKELY(nbr_tp_on))
        nbr_tp_progress();
}

static void step2_internode_post(void)
{
}

/* Steps 3 and 7: complete and activate whatever the work list holds. */
static void complete_and_activate(void)
{
    nbr_epoch_t *e;
    while ((e = work_head)) {
        LIST_REMOVE(work_head, work_tail, e, wnext, wprev);
        e->on_list = 0;
        advance(e);
    }
}

/* Step 4: carry out the calls recorded while epochs were not ready (intra-node RMA). A flush
 * waits for the oldest call toward its rank: it is done once that call's run leaves the list. */
int nbr_rma_exec(nbr_win_t *w, const nbr_rec_t *r); /* rma.c */

/* Carry out one recorded call of e and let it go. */
static void replay_one(nbr_win_t *w, nbr_epoch_t *e, nbr_rec_t *r)
{
    w->op_req = r->req; /* its remote operations finish the call's request */
    int rc = nbr_rma_exec(w, r);
    w->op_req = NULL;
    nbr_engine_stats.records_replayed++;
    if (rc != MPI_SUCCESS && !e->err)
        e->err = rc;
    if (r->req) {
        if (rc != MPI_SUCCESS && r->req->tp_err == MPI_SUCCESS)
            r->req->tp_err = rc;
        nbr_req_arm(r->req);
        nbr_req_release(r->req);
    }
    e->nrec--;
    if (r->is_run)
        run_remove(w, r);
    nbr_stat(&w->st_ops, &nbr_st.ops, -1, -(long long)sizeof *r);
    rec_free(r);
}

static void step4_intranode_rma(void)
{
    nbr_epoch_t *e;
    while ((e = replay_head)) {
        LIST_REMOVE(replay_head, replay_tail, e, wnext, wprev);
        e->on_list = 0;
        nbr_win_t *w = e->win;
        nbr_rec_t *r = e->rec;
        e->rec = NULL;
        e->rec_tail = &e->rec;
        held_remove(w, e);
        w->replaying = 1;
        /* With the scheduler (002 §4, Listing 1) the inter-node calls (IR) go first and the
         * intra-node ones are copied afterwards, while those are in flight, collecting inter-node
         * completions between copies. Calls toward one target keep their order (a target is
         * remote or not). */
        const int split = w->sched && w->nremote;
        nbr_rec_t *local = NULL, **ltail = &local;
        for (nbr_rec_t *n; r; r = n) {
            n = r->next;
            if (split && w->t[r->rank].net == NBR_NET_SHM) {
                r->next = NULL;
                *ltail = r;
                ltail = &r->next;
            } else {
                replay_one(w, e, r);
            }
        }
        for (nbr_rec_t *n; local; local = n) {
            n = local->next;
            if (NBR_UNLIKELY(nbr_tp_on))
                nbr_tp_progress();
            replay_one(w, e, local);
        }
        w->replaying = 0;
        rec_list_remove(w, e);
        if (e->closed)
            push_work(e);
        else
            nbr_epoch_set_direct(w, e, 1);
    }
}

/* Poll one source: grant, count or complete what its word now allows. 1 if anything moved. */
static int poll_source(nbr_source_t *s)
{
    nbr_win_t *w = s->w;
    nbr_engine_stats.sources_polled++;
    int moved = 0;
    switch (s->kind) {
    case NBR_SRC_POSTS: { /* START grants: g_r >= A_i (000 §VII-B) */
        nbr_peer_q_t *q = w->t[s->peer].q;
        uint64_t g = __atomic_load_n(&w->t[w->rank].peer[s->peer].posted, __ATOMIC_ACQUIRE);
        nbr_match_t *m;
        while ((m = q->acc_cursor) && m->id <= g) {
            m->granted = 1;
            if (--m->ep->nwait == 0)
                make_ready(w, m->ep);
            while ((m = m->next) && m->granted) /* NOCHECK entries were granted at birth */
                ;
            q->acc_cursor = m;
            moved = 1;
        }
        if (!q->acc_cursor)
            source_unlink(s);
        break;
    }
    case NBR_SRC_DONES: { /* POST completions: the origin's done ids reach X */
        nbr_peer_q_t *q = w->t[s->peer].q;
        uint64_t c = __atomic_load_n(&w->t[w->rank].peer[s->peer].completed, __ATOMIC_ACQUIRE);
        nbr_match_t *m;
        while ((m = q->exp_head) && m->id <= c) {
            if (!(q->exp_head = m->next))
                q->exp_tail = NULL;
            if (--m->ep->nwait == 0 && m->ep->closed)
                push_work(m->ep);
            moved = 1;
        }
        if (!q->exp_head)
            source_unlink(s);
        break;
    }
    case NBR_SRC_LOCK:
    case NBR_SRC_LOCK_ALL: { /* step 6: one try at the first waiting lock (001 §2.3) */
        nbr_peer_q_t *q = s->kind == NBR_SRC_LOCK ? w->t[s->peer].q : NULL;
        nbr_epoch_t **head = q ? &q->lock_head : &w->all_head;
        nbr_epoch_t **tail = q ? &q->lock_tail : &w->all_tail;
        nbr_epoch_t *e;
        while ((e = *head) && try_lock(w, e)) {
            if (!(*head = e->lnext))
                *tail = NULL;
            make_ready(w, e);
            moved = 1;
        }
        if (!*head)
            source_unlink(s);
        break;
    }
    case NBR_SRC_HANDOFF: /* queued lock: a released lock waits for its successor's link */
        if (nbr_lock_handoff(w, s->peer)) {
            w->nhandoff--;
            source_unlink(s);
            moved = 1;
        }
        break;
    case NBR_SRC_QUIET: { /* remote completions (step 1 counted them) */
        for (nbr_epoch_t *e = w->quiet_head, *n; e; e = n) {
            n = e->qnext;
            if (!nbr_tp_quiet(w, epoch_scope(e)))
                continue;
            LIST_REMOVE(w->quiet_head, w->quiet_tail, e, qnext, qprev);
            e->on_quiet = 0;
            push_work(e);
            moved = 1;
        }
        nbr_flush_t *f = w->fq_head, *keep = NULL;
        w->fq_head = NULL;
        for (nbr_flush_t *n; f; f = n) {
            n = f->next;
            if (nbr_tp_quiet(w, f->rank)) {
                flush_done(w, f);
                moved = 1;
            } else {
                f->next = keep;
                keep = f;
            }
        }
        for (nbr_flush_t *n; keep; keep = n) { /* back, with any flush_done put there */
            n = keep->next;
            keep->next = w->fq_head;
            w->fq_head = keep;
        }
        if (!w->quiet_head && !w->fq_head)
            source_unlink(s);
        break;
    }
    case NBR_SRC_FENCE: {
        nbr_epoch_t *e = w->fence_wait;
        if (e->rs) {
            if (!rs_poll(w, e))
                break;
            w->fence_wait = NULL;
            source_unlink(s);
            rs_resume(e);
            moved = 1;
            break;
        }
        uint64_t no = e->state == NBR_ES_ACTIVE ? e->fence_no : e->close_no;
        if (!fence_passed(w, no))
            break;
        w->fence_wait = NULL;
        source_unlink(s);
        if (e->state == NBR_ES_ACTIVE)
            make_ready(w, e);
        else
            push_work(e);
        moved = 1;
        break;
    }
    }
    return moved;
}

/* Steps 5 (intra-node notifications: posts, done ids, fence arrivals) and 6 (lock requests):
 * one look at every word something waits on. */
static int steps5_6_poll(void)
{
    int moved = 0;
    for (nbr_source_t *s = poll_head, *n; s; s = n) {
        n = s->next; /* polling may unlink s (and only s) */
        moved |= poll_source(s);
    }
    return moved;
}

void nbr_progress(void)
{
    NBR_ENTER();
    nbr_engine_stats.progress_calls++;
    if (NBR_UNLIKELY(nbr_tp_on) && !in_engine)
        nbr_tp_progress(); /* serve peers even when nothing of ours waits */
    if (!in_engine && (work_head || replay_head || poll_head)) {
        in_engine = 1;
        int moved, sweep = 0;
        do {
            if (sweep++) /* the first sweep's step 1 just ran, above */
                step1_internode_completions();
            step2_internode_post();
            complete_and_activate(); /* step 3 */
            step4_intranode_rma();
            moved = steps5_6_poll(); /* steps 5 and 6 */
            complete_and_activate(); /* step 7 */
            /* Until nothing moves: a grant readies calls for step 4, a completion admits the
             * next epoch; one call carries every epoch as far as it can go. */
        } while (moved || work_head || replay_head);
        in_engine = 0;
    }
    nbr_req_finish_queued();
    if (type_free_head && !in_progress_thread) {
        while (type_free_head) {
            nbr_rec_t *r = type_free_head;
            type_free_head = r->next;
            rec_free(r);
        }
    }
    NBR_LEAVE();
}

/* Nobody is inside the engine and it has nothing queued on any window, but for `own` alone on
 * the work list (NULL: nothing at all). */
static inline int engine_idle(const nbr_epoch_t *own)
{
    return !in_engine && work_head == own && work_tail == own && !replay_head && !poll_head &&
           !type_free_head;
}

/* A direct step ends (docs/ref-internals.md, "The direct path"): whatever it left behind (a
 * grant to wait for, calls to replay, a successor admitted) goes to the full engine, whose
 * "until nothing moves" rule is untouched (issue 9 item 4); else only what nbr_progress does
 * last remains. */
static void direct_done(void)
{
    if (work_head || replay_head || poll_head) {
        nbr_progress();
        return;
    }
    nbr_req_finish_queued();
}

/* After an epoch was opened or closed (both put it on the work list): run the engine. When e is
 * the engine's only work, a sweep of nbr_progress would advance e, find nothing else and sweep
 * once more to confirm it: advancing e here is that sweep without the loop. */
void nbr_epoch_kick(nbr_win_t *w, nbr_epoch_t *e)
{
    (void)w;
    NBR_ENTER();
    if (engine_idle(e)) {
        LIST_REMOVE(work_head, work_tail, e, wnext, wprev);
        e->on_list = 0;
        nbr_engine_stats.progress_calls++;
        in_engine = 1;
        advance(e);
        in_engine = 0;
        direct_done();
        NBR_LEAVE();
        return;
    }
    NBR_LEAVE();
    nbr_progress();
}

/* Enqueue e and run the engine. The direct path (docs/ref-internals.md, "The direct path"):
 * when the engine is idle and e, the window's only deferred epoch, passes the predicate of
 * 000 §VII-A, the sweep nbr_progress would make activates e and nothing else; activating it
 * here is that sweep. Activation may link a lock source to wait on (the grant did not come):
 * the full engine takes over from there. */
void nbr_epoch_open(nbr_win_t *w, nbr_epoch_t *e)
{
    NBR_ENTER();
    if (w->frontier || !engine_idle(NULL) || !may_activate(w, e)) {
        nbr_epoch_enqueue(w, e);
        NBR_LEAVE();
        nbr_progress();
        return;
    }
    queue_append(w, e);
    nbr_engine_stats.progress_calls++;
    nbr_engine_stats.epochs_advanced++;
    in_engine = 1;
    activate(w, e); /* the frontier stays NULL: e is the last epoch of the window */
    in_engine = 0;
    direct_done();
    NBR_LEAVE();
}

/* Close a LOCK or LOCK_ALL epoch and complete it at once if the engine is idle and e holds no
 * recorded call: what advancing it on the work list would do, without the work and closed lists.
 * try_complete finishes these kinds, except a lock epoch toward another node: its data is
 * acknowledged (remote_quiet), then the release of the lock word goes out and the epoch waits on
 * the quiet source for its acknowledgement; the call returns meanwhile (win.c's
 * internal_pending: MPI_Win_free waits for it). No deferred epoch can wait for e — it closes after
 * every epoch opened so far — so nothing else is admitted by its completion. *err: the epoch's
 * error (a replayed call's) that its closing request would carry. 0 if the direct path does not
 * apply: close it with nbr_epoch_close and kick it. */
static __attribute__((noinline, cold)) int remote_quiet(nbr_win_t *w, const nbr_epoch_t *e)
{
    return nbr_tp_quiet(w, epoch_scope(e)) && !w->tp_err;
}

int nbr_epoch_close_direct(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req, int *err)
{
    NBR_ENTER();
    if ((e->kind != NBR_EK_LOCK && e->kind != NBR_EK_LOCK_ALL) || e->state != NBR_ES_READY ||
        e->nrec || !engine_idle(NULL) || (NBR_UNLIKELY(w->nremote) && !remote_quiet(w, e))) {
        NBR_LEAVE();
        return 0;
    }
    mark_closed(w, e, req);
    *err = e->err;
    nbr_engine_stats.progress_calls++;
    nbr_engine_stats.epochs_advanced++;
    in_engine = 1;
    try_complete(w, e);
    in_engine = 0;
    direct_done();
    NBR_LEAVE();
    return 1;
}

void nbr_win_engine_detach(nbr_win_t *w)
{
    source_unlink(&w->src_all);
    source_unlink(&w->src_fence);
    source_unlink(&w->src_quiet);
    nbr_target_t *t;
    for (int it = 0; (t = nbr_tgt_next(w, &it));) {
        nbr_peer_q_t *q = t->q;
        if (!q)
            continue;
        source_unlink(&q->posts);
        source_unlink(&q->dones);
        source_unlink(&q->lock);
        if (q->lq) {
            const int nq = t == &w->t[0] ? 2 : 1;
            for (int i = 0; i < nq; i++)
                source_unlink(&q->lq[i].handoff);
            free(q->lq);
            nbr_stat(&w->st_meta, &nbr_st.windows, 0, -nq * (long long)sizeof *q->lq);
        }
        free(q);
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, -(long long)sizeof *q);
        t->q = NULL;
    }
}
