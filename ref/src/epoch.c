/* epoch.c — epoch objects, the deferred-epoch queue and the progress engine (paper 000 §VII).
 *
 * Every synchronization call, blocking or not, creates or closes an epoch object; the object
 * lives in its window's queue, in opening order, until it has completed internally. Its internal
 * lifetime (000 §VI): DEFERRED until the activation predicate admits it (000 §VII-A), ACTIVE once
 * it took its matching ids and asked for access, READY once access is granted (posts seen, lock
 * acquired, fence barrier passed: RMA calls then go to memory, recorded ones are replayed), DONE
 * once it is closed and its completion conditions hold (notifications sent, peers done). The
 * engine below advances all of this in the seven steps of 000 §VII-D, from every libnbrma call
 * that may wait and from the intercepted wait/test family, so closing requests complete under
 * plain MPI_Wait/MPI_Test. Over shared memory an RMA call of a ready epoch completes inside the
 * call; what the engine carries out later are the calls of epochs that were not ready yet. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbr.h"

static nbr_win_t *busy_head; /* windows with epochs or flushes pending */
static int in_engine;        /* the engine is not reentrant (replay calls back into rma.c) */

void nbr_win_busy(nbr_win_t *w)
{
    if (!w->busy) {
        w->busy = 1;
        w->busy_next = busy_head;
        busy_head = w;
    }
}

/* A window being freed leaves the engine's list. */
void nbr_win_unbusy(nbr_win_t *w)
{
    for (nbr_win_t **p = &busy_head; *p; p = &(*p)->busy_next)
        if (*p == w) {
            *p = w->busy_next;
            break;
        }
    w->busy = 0;
}

/* ---- epoch objects --------------------------------------------------------------------------- */

/* Epoch objects are recycled per window: a blocking lock/unlock pair must not cost two trips
 * through malloc. */
nbr_epoch_t *nbr_epoch_new(nbr_win_t *w, int kind)
{
    nbr_epoch_t *e = w->ep_free;
    if (e) {
        w->ep_free = e->next;
        memset(e, 0, sizeof *e);
    } else if (!(e = calloc(1, sizeof *e))) {
        return NULL;
    }
    e->kind = kind;
    e->side = kind == NBR_EK_FENCE  ? NBR_SIDE_ACCESS | NBR_SIDE_EXPOSURE
              : kind == NBR_EK_POST ? NBR_SIDE_EXPOSURE
                                    : NBR_SIDE_ACCESS;
    e->rec_tail = &e->rec;
    e->close_seq = UINT64_MAX;
    e->target = -1;
    return e;
}

void nbr_epoch_enqueue(nbr_win_t *w, nbr_epoch_t *e)
{
    e->open_seq = ++w->seq;
    e->next = NULL;
    *w->q_tail = e;
    w->q_tail = &e->next;
    w->ndeferred++;
    w->npending++;
    nbr_win_busy(w);
}

void nbr_epoch_set_direct(nbr_win_t *w, nbr_epoch_t *e, int on)
{
    switch (e->kind) {
    case NBR_EK_FENCE:
    case NBR_EK_LOCK_ALL:
        w->all_direct = on;
        break;
    case NBR_EK_START:
        for (int i = 0; i < e->n; i++)
            w->t[e->group[i]].direct = (unsigned char)on;
        break;
    case NBR_EK_LOCK:
        w->t[e->target].direct = (unsigned char)on;
        break;
    }
}

void nbr_epoch_close(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *req)
{
    e->closed = 1;
    e->close_seq = ++w->seq;
    nbr_epoch_set_direct(w, e, 0);
    if (req) {
        req->refs++;
        e->close_req = req;
    }
}

static _Thread_local int in_progress_thread;
static nbr_rec_t *type_free_head; /* recordings whose datatypes the progress thread may not free */

int nbr_in_progress_thread(void)
{
    return in_progress_thread;
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
    free(r);
}

/* Done: leave the queue, complete the closing request, free. */
void nbr_epoch_finish(nbr_win_t *w, nbr_epoch_t *e)
{
    nbr_epoch_t **p = &w->q_head;
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    if (w->q_tail == &e->next)
        w->q_tail = p;
    if (e->state == NBR_ES_DEFERRED)
        w->ndeferred--;
    w->npending--;
    e->state = NBR_ES_DONE;
    if (e->close_req) {
        nbr_req_finish(e->close_req, e->err);
        nbr_req_release(e->close_req);
    }
    for (nbr_rec_t *r = e->rec, *n; r; r = n) { /* only a dropped epoch still holds calls */
        n = r->next;
        rec_free(r);
    }
    free(e->group);
    free(e->ids);
    e->next = w->ep_free;
    w->ep_free = e;
}

void nbr_epoch_pool_free(nbr_win_t *w)
{
    while (w->ep_free) {
        nbr_epoch_t *e = w->ep_free;
        w->ep_free = e->next;
        free(e);
    }
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
    nbr_rec_t *r = malloc(sizeof *r);
    if (!r)
        return nbr_err(w, src->call, MPI_ERR_NO_MEM,
                       "out of memory recording a call of a "
                       "deferred epoch");
    *r = *src;
    r->next = NULL;
    if (r->kind != NBR_RC_GACC) /* the types a kind does not use: unset in *src */
        r->rt = MPI_DATATYPE_NULL;
    if (r->kind == NBR_RC_CAS)
        r->tt = MPI_DATATYPE_NULL;
    r->age = ++w->age;
    if (dup_type(&r->ot, &r->dup_ot) != MPI_SUCCESS ||
        dup_type(&r->rt, &r->dup_rt) != MPI_SUCCESS ||
        dup_type(&r->tt, &r->dup_tt) != MPI_SUCCESS) {
        rec_free(r);
        return nbr_err(w, src->call, MPI_ERR_TYPE, "could not keep the datatype for later");
    }
    if (r->req)
        r->req->refs++;
    *e->rec_tail = r;
    e->rec_tail = &r->next;
    e->nrec++;
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

void nbr_flush_add(nbr_win_t *w, nbr_flush_t *f)
{
    f->next = w->flushes;
    w->flushes = f;
    nbr_win_busy(w);
}

/* A recorded call was carried out: every flush no older than it counts down (000 §VII-C). */
static void flush_countdown(nbr_win_t *w, const nbr_rec_t *r)
{
    for (nbr_flush_t **p = &w->flushes; *p;) {
        nbr_flush_t *f = *p;
        if ((f->rank == NBR_FLUSH_ALL || f->rank == r->rank) && r->age <= f->age &&
            --f->count == 0) {
            *p = f->next;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            nbr_req_finish(f->req, MPI_SUCCESS);
            nbr_req_release(f->req);
            free(f);
            continue;
        }
        p = &f->next;
    }
}

int nbr_rma_exec(nbr_win_t *w, const nbr_rec_t *r); /* rma.c */

static void replay(nbr_win_t *w, nbr_epoch_t *e)
{
    nbr_rec_t *r = e->rec;
    e->rec = NULL;
    e->rec_tail = &e->rec;
    unsigned long ops = w->epoch_ops; /* counted when recorded */
    w->replaying = 1;
    while (r) {
        int rc = nbr_rma_exec(w, r);
        if (rc != MPI_SUCCESS && !e->err)
            e->err = rc;
        if (r->req) {
            nbr_req_finish(r->req, rc);
            nbr_req_release(r->req);
        }
        flush_countdown(w, r);
        nbr_rec_t *n = r->next;
        rec_free(r);
        e->nrec--;
        r = n;
    }
    w->replaying = 0;
    w->epoch_ops = ops;
}

/* ---- activation (000 §VI-B, §VII-A) ---------------------------------------------------------- */

static unsigned flag_needed(int prev_side, int next_side)
{
    if (next_side == NBR_SIDE_ACCESS)
        return prev_side == NBR_SIDE_ACCESS ? NBR_AAAR : NBR_AAER;
    return prev_side == NBR_SIDE_EXPOSURE ? NBR_EAER : NBR_EAAR;
}

/* The predicate of 000 §VII-A. Every epoch before e in the queue is active (the scan stops at
 * the first deferred one: rule 4, no epoch is skipped). One the application closed before it
 * opened e must complete first (the default of 000 §VI-B), unless the reorder flag for that
 * pair of sides is on and neither epoch is a fence or lock_all epoch. Epochs whose application
 * lifetimes overlap (post then start before wait, locks on two targets) progress together as
 * MPI-3 requires. */
static int may_activate(nbr_win_t *w, const nbr_epoch_t *e)
{
    for (const nbr_epoch_t *p = w->q_head; p != e; p = p->next) {
        if (p->close_seq > e->open_seq)
            continue;
        if (p->kind == NBR_EK_FENCE || p->kind == NBR_EK_LOCK_ALL || e->kind == NBR_EK_FENCE ||
            e->kind == NBR_EK_LOCK_ALL)
            return 0;
        if (!(w->flags & flag_needed(p->side, e->side)))
            return 0;
    }
    return 1;
}

static void signal_fence(nbr_win_t *w, uint64_t no)
{
    if (__atomic_load_n(&w->ctl->fence, __ATOMIC_RELAXED) < no) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my epoch's calls are visible first */
        __atomic_store_n(&w->ctl->fence, no, __ATOMIC_RELEASE);
    }
}

static void make_ready(nbr_win_t *w, nbr_epoch_t *e)
{
    e->state = NBR_ES_READY;
    if (!e->nrec && !e->closed)
        nbr_epoch_set_direct(w, e, 1);
}

/* Take the matching ids (000 §VII-B: only activated epochs modify <a, e, g>) and ask for access. */
static void activate(nbr_win_t *w, nbr_epoch_t *e)
{
    w->ndeferred--;
    e->state = NBR_ES_ACTIVE;
    switch (e->kind) {
    case NBR_EK_FENCE:
        signal_fence(w, e->fence_no);
        break;
    case NBR_EK_START:
        for (int i = 0; i < e->n; i++)
            e->ids[i] = ++w->t[e->group[i]].a; /* access id A_i = ++a_l */
        if (e->assert & MPI_MODE_NOCHECK)
            make_ready(w, e);
        break;
    case NBR_EK_POST:
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my stores are visible before I expose */
        for (int i = 0; i < e->n; i++) {
            int o = e->group[i];
            e->ids[i] = ++w->t[o].e;
            /* g_r, one-sidedly in the origin's control block */
            __atomic_store_n(&w->t[o].peer[w->rank].posted, e->ids[i], __ATOMIC_RELEASE);
        }
        make_ready(w, e);
        break;
    case NBR_EK_LOCK:
    case NBR_EK_LOCK_ALL:
        if (e->assert & MPI_MODE_NOCHECK)
            make_ready(w, e);
        break;
    }
}

/* ---- completion ------------------------------------------------------------------------------ */

/* My own control block's slot for peer r: what r wrote about me. */
static inline nbr_peer_ctr_t *mine(nbr_win_t *w, int r)
{
    return &w->t[w->rank].peer[r];
}

int nbr_post_completed(nbr_win_t *w, nbr_epoch_t *e)
{
    for (int i = 0; i < e->n; i++)
        if (__atomic_load_n(&mine(w, e->group[i])->completed, __ATOMIC_ACQUIRE) < e->ids[i])
            return 0;
    return 1;
}

/* Every rank reached fence `no` (e->scan: peers already seen, so a long wait rescans nobody). */
static int fence_passed(nbr_win_t *w, nbr_epoch_t *e, uint64_t no)
{
    while (e->scan < w->size) {
        if (__atomic_load_n(&w->t[e->scan].ctl->fence, __ATOMIC_ACQUIRE) < no)
            return 0;
        e->scan++;
    }
    return 1;
}

/* Done notifications reach a target in access-id order: an access epoch may not notify a target
 * an earlier, still pending access epoch of mine also covers (with A_A_A_R they can finish out of
 * order; the target's counter must not count the later one for the earlier). */
static int may_notify(nbr_win_t *w, const nbr_epoch_t *e)
{
    for (const nbr_epoch_t *p = w->q_head; p != e; p = p->next) {
        if (p->kind != NBR_EK_START)
            continue;
        for (int i = 0; i < e->n; i++)
            for (int j = 0; j < p->n; j++)
                if (e->group[i] == p->group[j])
                    return 0;
    }
    return 1;
}

/* A closed, ready epoch with nothing left to carry out: try to complete it. */
static int try_complete(nbr_win_t *w, nbr_epoch_t *e)
{
    switch (e->kind) {
    case NBR_EK_FENCE:
        if (e->close_no) {
            signal_fence(w, e->close_no);
            if (!fence_passed(w, e, e->close_no))
                return 0;
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
    case NBR_EK_START:
        if (!may_notify(w, e))
            return 0;
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my calls are visible before I say done */
        for (int i = 0; i < e->n; i++) {
            nbr_target_t *t = &w->t[e->group[i]];
            __atomic_store_n(&t->peer[w->rank].completed, e->ids[i], __ATOMIC_RELEASE);
        }
        break;
    case NBR_EK_POST:
        if (!nbr_post_completed(w, e))
            return 0;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
    case NBR_EK_LOCK:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!(e->assert & MPI_MODE_NOCHECK)) {
            if (e->lock_type == MPI_LOCK_SHARED)
                nbr_unlock_shared(&w->t[e->target]);
            else
                nbr_unlock_writer(w, &w->t[e->target]);
        }
        break;
    case NBR_EK_LOCK_ALL:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!(e->assert & MPI_MODE_NOCHECK))
            nbr_unlock_all_word(w);
        break;
    }
    nbr_epoch_finish(w, e);
    return 1;
}

/* ---- the seven steps of 000 §VII-D ----------------------------------------------------------- */

/* Steps 1 and 2 concern inter-node messages: their completions (flow-control credits, pinned
 * memory) and the posting of inter-node RMA. Windows served here live on one node (a window
 * spanning nodes is refused at creation until the inter-node transports exist), so they have no
 * inter-node traffic; the steps keep their place in the sweep so the transports slot in. */
static void step1_internode_completions(void)
{
}

static void step2_internode_post(void)
{
}

/* Steps 3 and 7: complete every epoch that can be, then activate deferred epochs in order until
 * the predicate refuses one. A window that completes an epoch is rescanned (its completion may
 * admit the next). */
static void complete_and_activate(void)
{
    for (nbr_win_t *w = busy_head; w; w = w->busy_next) {
        int again = 1;
        while (again) {
            again = 0;
            for (nbr_epoch_t *e = w->q_head, *n; e; e = n) {
                n = e->next;
                if (e->closed && e->state == NBR_ES_READY && !e->nrec && try_complete(w, e))
                    again = 1;
            }
            for (nbr_epoch_t *e = w->q_head; e; e = e->next) {
                if (e->state != NBR_ES_DEFERRED)
                    continue;
                if (!may_activate(w, e))
                    break;
                activate(w, e);
                again |= e->state == NBR_ES_READY && e->closed && !e->nrec;
            }
        }
    }
}

/* Step 4: carry out the calls recorded while epochs were not ready (intra-node RMA). */
static void step4_intranode_rma(void)
{
    for (nbr_win_t *w = busy_head; w; w = w->busy_next)
        for (nbr_epoch_t *e = w->q_head; e; e = e->next)
            if (e->state == NBR_ES_READY && e->nrec) {
                replay(w, e);
                if (!e->closed)
                    nbr_epoch_set_direct(w, e, 1);
            }
}

/* Step 5 for one epoch: exposure grants (g_r >= A_i, 000 §VII-B) and fence barrier arrivals
 * turn an active epoch ready. */
static int grant_by_notification(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->kind == NBR_EK_START) {
        for (int i = 0; i < e->n; i++)
            if (__atomic_load_n(&mine(w, e->group[i])->posted, __ATOMIC_ACQUIRE) < e->ids[i])
                return 0;
    } else if (e->kind == NBR_EK_FENCE) {
        if (!fence_passed(w, e, e->fence_no))
            return 0;
        e->scan = 0; /* rescanned for the closing fence */
    } else {
        return 0;
    }
    make_ready(w, e);
    return 1;
}

/* Step 6 for one epoch: one try at its lock (001 §2.3's two-level lock). */
static int grant_lock(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->kind == NBR_EK_LOCK_ALL) {
        if (!nbr_try_lock_all(w))
            return 0;
    } else if (e->kind == NBR_EK_LOCK) {
        /* One origin's lock epochs toward one target are granted in opening order: with
         * A_A_A_R a later shared lock granted first would keep out the earlier exclusive one,
         * whose calls a flush of the later epoch then waits for forever. */
        for (const nbr_epoch_t *p = w->q_head; p != e; p = p->next)
            if (p->kind == NBR_EK_LOCK && p->target == e->target && p->state == NBR_ES_ACTIVE)
                return 0;
        nbr_target_t *t = &w->t[e->target];
        if (e->lock_type == MPI_LOCK_SHARED) {
            if (!nbr_try_lock_shared(t))
                return 0;
        } else {
            if (e->lock_phase == 0 && nbr_try_lock_global_excl(w))
                e->lock_phase = 1;
            if (e->lock_phase == 0 || !nbr_try_lock_writer(t))
                return 0;
        }
    } else {
        return 0;
    }
    make_ready(w, e);
    return 1;
}

static int step5_intranode_notifications(void)
{
    int moved = 0;
    for (nbr_win_t *w = busy_head; w; w = w->busy_next)
        for (nbr_epoch_t *e = w->q_head; e; e = e->next)
            if (e->state == NBR_ES_ACTIVE)
                moved |= grant_by_notification(w, e);
    return moved;
}

static int step6_locks(void)
{
    int moved = 0;
    for (nbr_win_t *w = busy_head; w; w = w->busy_next)
        for (nbr_epoch_t *e = w->q_head; e; e = e->next)
            if (e->state == NBR_ES_ACTIVE)
                moved |= grant_lock(w, e);
    return moved;
}

static void drop_idle_windows(void)
{
    for (nbr_win_t **p = &busy_head; *p;) {
        nbr_win_t *w = *p;
        if (!w->q_head && !w->flushes) {
            w->busy = 0;
            *p = w->busy_next;
        } else {
            p = &w->busy_next;
        }
    }
}

static void finish_queued(void);

void nbr_progress(void)
{
    NBR_ENTER();
    if (busy_head && !in_engine) {
        in_engine = 1;
        for (int sweep = 0; sweep < 2; sweep++) {
            step1_internode_completions();
            step2_internode_post();
            complete_and_activate(); /* step 3 */
            step4_intranode_rma();
            int moved = step5_intranode_notifications();
            moved |= step6_locks();
            complete_and_activate(); /* step 7 */
            if (!moved)
                break;
            /* A grant in step 5 or 6 readies calls for step 4: one more sweep, not a later call. */
        }
        drop_idle_windows();
        in_engine = 0;
    }
    finish_queued();
    NBR_LEAVE();
}

/* After an epoch was opened or closed: when it is alone in its window's queue, its transitions
 * need no sweep (the predicate admits the first epoch of a queue): activate, one grant try,
 * complete, inline. This is the whole of a blocking lock/unlock on a free lock. Otherwise, or if
 * it is still waiting, a full engine sweep. */
void nbr_epoch_kick(nbr_win_t *w, nbr_epoch_t *e)
{
    if (w->q_head == e && !e->next && !in_engine && !w->flushes) {
        NBR_ENTER();
        if (e->state == NBR_ES_DEFERRED)
            activate(w, e);
        if (e->state == NBR_ES_ACTIVE && !grant_lock(w, e))
            grant_by_notification(w, e);
        int done = 0;
        if (e->state == NBR_ES_READY && !e->nrec)
            done = !e->closed || try_complete(w, e);
        NBR_LEAVE();
        if (done)
            return;
    }
    nbr_progress();
}

/* ---- requests (000 §VII-C) ------------------------------------------------------------------- */

static nbr_req_t *finish_head; /* completed by the progress thread, MPI_Grequest_complete due */

nbr_req_t *nbr_req_new(void)
{
    nbr_req_t *r = calloc(1, sizeof *r);
    if (r) {
        r->refs = 1;
        r->greq = MPI_REQUEST_NULL;
    }
    return r;
}

void nbr_req_release(nbr_req_t *r)
{
    if (--r->refs == 0 && !r->is_static)
        free(r);
}

/* The request of a blocking call: it is waited for before the call returns, so one request serves
 * every blocking call (libnbrma serves one application thread; the progress thread never makes
 * one). */
nbr_req_t *nbr_req_blocking(void)
{
    static nbr_req_t r;
    r = (nbr_req_t){.refs = 1, .greq = MPI_REQUEST_NULL, .is_static = 1};
    return &r;
}

static int greq_query(void *extra, MPI_Status *st)
{
    nbr_req_t *r = extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = r->err;
    return r->err;
}

static int greq_free(void *extra)
{
    NBR_ENTER();
    nbr_req_release(extra);
    NBR_LEAVE();
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* an epoch cannot be cancelled; it completes as usual */
}

/* The caller's reference passes to the generalized request (released by its free function). */
int nbr_req_expose(nbr_req_t *r, MPI_Request *req)
{
    int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, r, req);
    if (rc != MPI_SUCCESS) {
        nbr_req_release(r);
        return rc;
    }
    r->greq = *req;
    if (r->done) {
        r->greq = MPI_REQUEST_NULL;
        PMPI_Grequest_complete(*req);
    }
    return MPI_SUCCESS;
}

void nbr_req_finish(nbr_req_t *r, int err)
{
    r->err = err;
    r->done = 1;
    if (r->greq == MPI_REQUEST_NULL)
        return;
    if (in_progress_thread) { /* the progress thread makes no MPI call: the next one does */
        r->refs++;
        r->next_finish = finish_head;
        finish_head = r;
        return;
    }
    MPI_Request g = r->greq;
    r->greq = MPI_REQUEST_NULL;
    PMPI_Grequest_complete(g);
}

static void finish_queued(void)
{
    if (in_progress_thread)
        return;
    while (type_free_head) {
        nbr_rec_t *r = type_free_head;
        type_free_head = r->next;
        rec_free(r);
    }
    while (finish_head) {
        nbr_req_t *r = finish_head;
        finish_head = r->next_finish;
        MPI_Request g = r->greq;
        r->greq = MPI_REQUEST_NULL;
        if (g != MPI_REQUEST_NULL)
            PMPI_Grequest_complete(g);
        nbr_req_release(r);
    }
}

int nbr_req_wait(nbr_req_t *r)
{
    long spins = 0;
    while (!r->done) {
        nbr_progress();
        if (r->done)
            break;
        if (++spins > nbr_spin) {
            NBR_LEAVE(); /* let the progress thread in while we yield */
            sched_yield();
            NBR_ENTER();
        }
    }
    return r->err;
}

/* ---- NBRMA_ASYNC_PROGRESS: a thread running the engine (passive progress) -------------------- */

int nbr_async;
static pthread_mutex_t big = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_t thread; /* runs until the process exits */

void nbr_big_lock(void)
{
    pthread_mutex_lock(&big);
}

void nbr_big_unlock(void)
{
    pthread_mutex_unlock(&big);
}

static void *progress_thread(void *arg)
{
    (void)arg;
    in_progress_thread = 1;
    for (;;) {
        pthread_mutex_lock(&big);
        int idle = !busy_head;
        if (!idle)
            nbr_progress();
        pthread_mutex_unlock(&big);
        if (idle)
            usleep(200);
        else
            sched_yield();
    }
    return NULL;
}

void nbr_progress_start(void)
{
    if (nbr_async)
        return;
    nbr_async = 1;
    if (pthread_create(&thread, NULL, progress_thread, NULL) != 0)
        nbr_async = 0;
}
