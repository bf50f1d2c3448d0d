/* sync.c — every synchronization call, blocking and nonblocking (paper 000 §V).
 *
 * Each call is written once, as the nonblocking version: it checks the application-level rules
 * of MPI-3.1 §11.5 (what may be open now), creates or closes an epoch object (epoch.c) and runs
 * the progress engine once. Opening calls never wait (000 §VII-C: "all the epoch-opening
 * routines exit immediately"); a closing call returns the epoch's closing request. The blocking
 * call waits on that request inside libnbrma; MPIX_Win_i* wraps it in a generalized request the
 * application completes with MPI_Wait/MPI_Test. Blocking flush waits the same way on a flush
 * object: carrying out the calls recorded before it is all that flushing means over shared
 * memory, where a call of a ready epoch is complete when it returns. */
#include <stdlib.h>

#include "nbr.h"
#include "nbrma.h"
#include "transport/tp.h"

int nbr_group_ranks(nbr_win_t *w, MPI_Group g, int **ranks, int *n)
{
    return nbr_group_translate(g, w->group, ranks, n);
}

int nbr_group_translate(MPI_Group g, MPI_Group wg, int **ranks, int *n)
{
    int rc = PMPI_Group_size(g, n);
    if (rc != MPI_SUCCESS)
        return rc;
    int *in = malloc((size_t)*n * sizeof *in + 1), *out = malloc((size_t)*n * sizeof *out + 1);
    if (!in || !out) {
        free(in);
        free(out);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < *n; i++)
        in[i] = i;
    rc = *n ? PMPI_Group_translate_ranks(g, *n, in, wg, out) : MPI_SUCCESS;
    free(in);
    for (int i = 0; rc == MPI_SUCCESS && i < *n; i++)
        if (out[i] == MPI_UNDEFINED)
            rc = MPI_ERR_GROUP;
    if (rc != MPI_SUCCESS) {
        free(out);
        return rc;
    }
    *ranks = out;
    return MPI_SUCCESS;
}

/* An epoch's error reaches a blocking caller here, unreported so far (a replayed call's): it goes
 * through the window's handler (MPI-3.1 §8.3). */
static int raised(MPI_Win win, int rc)
{
    return rc == MPI_SUCCESS ? rc : nbr_err_raise(win, rc);
}

/* Hand the outcome of a synchronization call to its caller: `r` is the closing or flush request
 * (NULL: nothing to wait for). req != NULL: the nonblocking API's request — a request complete
 * from birth when r completed inside the call without error (progress.c, "requests that are
 * complete from birth"; r goes back to the window's spare), else r exposed; req == NULL: block
 * on r. */
static __attribute__((noinline)) int conclude_nb(nbr_win_t *w, nbr_req_t *r, MPI_Request *req)
{
    if (!r)
        return nbr_req_done(req);
    if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) && r->err == MPI_SUCCESS &&
        nbr_req_cheap()) {
        nbr_req_unspare(w, r);
        return nbr_req_done(req);
    }
    return nbr_req_expose(r, req);
}

static inline int conclude(nbr_win_t *w, nbr_req_t *r, MPI_Request *req)
{
    if (req)
        return conclude_nb(w, r, req);
    if (!r)
        return MPI_SUCCESS;
    int rc = nbr_req_wait(r);
    MPI_Win win = r->win;
    nbr_req_release(r);
    return raised(win, rc);
}

/* A nonblocking call whose epoch completed inside the call with error `err` (0: none). */
static int concluded(nbr_win_t *w, const char *call, int err, MPI_Request *req)
{
    if (err == MPI_SUCCESS)
        return nbr_req_done(req);
    nbr_req_t *r = nbr_req_new(w); /* the error reaches MPI_Wait through the window's handler */
    if (!r)
        return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for a request");
    nbr_req_finish(r, err);
    return nbr_req_expose(r, req);
}

static nbr_req_t *new_req(nbr_win_t *w, const char *call, int *rc, const MPI_Request *req)
{
    nbr_req_t *r = req ? nbr_req_spare(w) : nbr_req_blocking(w);
    *rc = r ? MPI_SUCCESS : nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for a request");
    return r;
}

/* A fence-opened epoch ends when start, post, lock or lock_all opens another kind of epoch;
 * refused (MPI_ERR_RMA_SYNC) when RMA calls were issued in it: it must be closed by a fence
 * (MPI-3.1 §11.5.1). It carries nothing, so it is dropped at once. */
static int fence_yield(nbr_win_t *w, const char *call)
{
    nbr_epoch_t *e = w->fence_ep;
    if (!e)
        return MPI_SUCCESS;
    if (w->epoch_ops)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "%lu RMA call(s) were issued in the epoch the last MPI_Win_fence opened; "
                       "close it with MPI_Win_fence first (MPI_MODE_NOSUCCEED when no fence "
                       "epoch follows)",
                       w->epoch_ops);
    w->fence_ep = NULL;
    if (e->rs) { /* 004 Fig. 2a: the previous fence returned without a barrier; the epoch that
                    comes now waits for every peer to have completed it (epoch.c, rs_step) */
        w->rs_hold = 0;
        nbr_issue_update(w);
        e->rs_yield = 1;
        w->rs_yielded = 1;
        nbr_epoch_close(w, e, NULL);
        nbr_progress();
        return MPI_SUCCESS;
    }
    nbr_epoch_drop(w, e);
    return MPI_SUCCESS;
}

/* ---- fence (000 rule 5: barrier semantics without blocking) ---------------------------------- */

static int ifence(nbr_win_t *w, const char *call, int assert, MPI_Request *req)
{
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits fence does not define",
                       assert);
    if (w->start_ep || w->post_ep || w->all_ep || w->nlocked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "a %s epoch is open on this window; fence cannot start or end it",
                       w->nlocked || w->all_ep ? "passive target" : "post/start/complete/wait");
    int rc = MPI_SUCCESS;
    nbr_epoch_t *next = NULL;
    nbr_req_t *r = NULL;
    if (!(assert & MPI_MODE_NOSUCCEED) && !(next = nbr_epoch_new(w, NBR_EK_FENCE)))
        return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an epoch");
    /* A reduce-scatter fence epoch that start/post/lock/lock_all ended here may have been closed
     * by a fence elsewhere: this fence closes an empty one, so that every rank takes part in the
     * same reduce-scatters (004 Fig. 2a; epoch.c, rs_start). */
    nbr_epoch_t *ghost = NULL;
    if (!w->fence_ep && w->rs_yielded && !(ghost = nbr_epoch_new(w, NBR_EK_FENCE))) {
        if (next)
            nbr_epoch_free(w, next);
        return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an epoch");
    }
    if ((w->fence_ep || ghost) && !(r = new_req(w, call, &rc, req))) {
        if (next)
            nbr_epoch_free(w, next);
        if (ghost)
            nbr_epoch_free(w, ghost);
        return rc;
    }
    w->rs_yielded = 0;
    if (ghost) {
        ghost->rs = 1;
        ghost->fence_no = w->fence_calls;
        nbr_epoch_enqueue(w, ghost);
        w->fence_ep = ghost;
    }
    uint64_t no = ++w->fence_calls; /* collective: the same number on every rank */
    if (next) { /* MPI_Win_set_info is collective: the same strategy on every rank */
        next->rs = (unsigned char)w->fence_rs;
        next->rs_after = next->rs && w->fence_ep && w->fence_ep->rs;
    }
    if (w->fence_ep) {
        w->fence_ep->close_no = no;
        w->fence_ep->rs_last = !next || !next->rs;
        nbr_epoch_close(w, w->fence_ep, r);
        w->fence_ep = NULL;
    }
    if (next) {
        next->fence_no = no;
        next->assert = assert;
        nbr_epoch_enqueue(w, next);
        w->fence_ep = next;
    }
    if (w->rs_hold != (next && next->rs)) {
        w->rs_hold = next && next->rs;
        nbr_issue_update(w);
    }
    w->epoch_ops = 0;
    nbr_progress();
    return conclude(w, r, req);
}

/* ---- general active target: post, start, complete, wait, test -------------------------------- */

static nbr_epoch_t *group_epoch(nbr_win_t *w, const char *call, int kind, MPI_Group group, int *rc)
{
    nbr_epoch_t *e = nbr_epoch_new(w, kind);
    if (!e) {
        *rc = nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an epoch");
        return NULL;
    }
    if (group == MPI_GROUP_NULL || nbr_group_ranks(w, group, &e->group, &e->n) != MPI_SUCCESS) {
        nbr_epoch_free(w, e);
        *rc = nbr_err(w, call, MPI_ERR_GROUP, "the group is not a group of the window's ranks");
        return NULL;
    }
    e->m = calloc((size_t)e->n + 1, sizeof *e->m);
    if (!e->m || nbr_epoch_peers(w, e) != MPI_SUCCESS) {
        nbr_epoch_free(w, e);
        *rc = nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an epoch");
        return NULL;
    }
    return e;
}

static int ipost(nbr_win_t *w, const char *call, MPI_Group group, int assert, MPI_Request *req)
{
    if (w->post_ep)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "an exposure epoch is already open (close it with MPI_Win_wait first)");
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits post does not define",
                       assert);
    int rc = fence_yield(w, call);
    nbr_epoch_t *e = rc == MPI_SUCCESS ? group_epoch(w, call, NBR_EK_POST, group, &rc) : NULL;
    if (!e)
        return rc;
    e->assert = assert;
    nbr_epoch_enqueue(w, e);
    w->post_ep = e;
    nbr_epoch_kick(w, e);
    return conclude(w, NULL, req);
}

static int istart(nbr_win_t *w, const char *call, MPI_Group group, int assert, MPI_Request *req)
{
    if (w->start_ep || w->all_ep || w->nlocked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "an access epoch is already open (%s)",
                       w->start_ep ? "close it with MPI_Win_complete first"
                                   : "a passive target epoch");
    if (assert & ~MPI_MODE_NOCHECK)
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits start does not define",
                       assert);
    int rc = fence_yield(w, call);
    nbr_epoch_t *e = rc == MPI_SUCCESS ? group_epoch(w, call, NBR_EK_START, group, &rc) : NULL;
    if (!e)
        return rc;
    e->assert = assert;
    for (int i = 0; i < e->n; i++)
        w->t[e->group[i]].in_access = 1;
    nbr_epoch_enqueue(w, e);
    w->start_ep = e;
    nbr_epoch_kick(w, e);
    return conclude(w, NULL, req);
}

static int icomplete(nbr_win_t *w, const char *call, MPI_Request *req)
{
    nbr_epoch_t *e = w->start_ep;
    if (!e)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "no access epoch of MPI_Win_start is open");
    int rc;
    nbr_req_t *r = new_req(w, call, &rc, req);
    if (!r)
        return rc;
    for (int i = 0; i < e->n; i++)
        w->t[e->group[i]].in_access = 0;
    w->start_ep = NULL;
    nbr_epoch_close(w, e, r);
    nbr_epoch_kick(w, e);
    return conclude(w, r, req);
}

static int iwait(nbr_win_t *w, const char *call, MPI_Request *req)
{
    nbr_epoch_t *e = w->post_ep;
    if (!e)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "no exposure epoch of MPI_Win_post is open");
    int rc;
    nbr_req_t *r = new_req(w, call, &rc, req);
    if (!r)
        return rc;
    w->post_ep = NULL;
    nbr_epoch_close(w, e, r);
    nbr_epoch_kick(w, e);
    return conclude(w, r, req);
}

/* MPI_Win_test: closes the exposure epoch only if it has completed (MPI-3.1 §11.5.2). */
static int win_test(nbr_win_t *w, int *flag)
{
    nbr_epoch_t *e = w->post_ep;
    if (!e)
        return nbr_err(w, "MPI_Win_test", MPI_ERR_RMA_SYNC,
                       "no exposure epoch of MPI_Win_post is open");
    nbr_progress();
    *flag = e->state == NBR_ES_READY && e->nwait == 0;
    if (*flag) {
        w->post_ep = NULL;
        nbr_epoch_close(w, e, NULL);
        nbr_progress();
    }
    return MPI_SUCCESS;
}

/* ---- passive target -------------------------------------------------------------------------- */

static int check_rank(nbr_win_t *w, const char *call, int rank)
{
    if (rank < 0 || rank >= w->size)
        return nbr_err(w, call, MPI_ERR_RANK, "rank %d is not in the window's group of %d", rank,
                       w->size);
    return MPI_SUCCESS;
}

/* MPI-3.1 §11.5.3: a lock on memory the caller can load/store — its own rank, or any rank of a
 * window whose memory MPI_Win_shared_query exposes (allocate_shared, and allocate, which ref
 * places in node-shared memory; not a rank of another node) — must be held when MPI_Win_lock returns, or load/store inside
 * the epoch would race with other holders. Elsewhere the grant may come lazily, with the first
 * RMA call or the unlock (paper 000 §VII-C's opening calls that return at once). */
static int lock_must_hold(const nbr_win_t *w, int rank)
{
    return rank == w->rank || ((w->flavor == MPI_WIN_FLAVOR_SHARED ||
                                w->flavor == MPI_WIN_FLAVOR_ALLOCATE) &&
                               !nbr_tp_remote(&w->t[rank])); /* another node's: no load/store */
}

/* Open a LOCK or LOCK_ALL epoch. A nonblocking call's request, and a blocking call that must
 * hold the lock, complete at the grant (docs/nonblocking.md: where we differ from 000). When the
 * kick granted the lock at once (the common case), a blocking call needs no request at all and a
 * nonblocking one gets a request complete from birth (progress.c): the request is attached to
 * the epoch only when the grant has not come. */
/* The nonblocking call's request, before the epoch opens (opening cannot be undone if this
 * failed later): when complete-at-birth requests are generalized ones, made and attached at once
 * (it is handed out in any case); else only the window's spare made ready, taken if the grant
 * does not come in the call. */
static inline int nb_open_prepare(nbr_win_t *w, const char *call,
                                                     nbr_epoch_t *e, nbr_req_t **o, int *rc)
{
    if (nbr_req_cheap())
        return nbr_req_spare_ready(w);
    if (!(*o = nbr_req_spare(w))) {
        *rc = nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for a request");
        return 0;
    }
    nbr_req_ref(*o); /* the epoch's, dropped at the grant */
    e->open_req = *o;
    return 1;
}

static inline int nb_open_conclude(nbr_win_t *w, nbr_epoch_t *e, nbr_req_t *o,
                                                      MPI_Request *req)
{
    if (!o && e->state == NBR_ES_READY) /* granted inside the call: a pooled request */
        return nbr_req_done(req);
    if (!o) {
        /* Still waiting for the grant: nothing ran since the kick (the engine runs under the
         * big lock we hold), so the request attached now is finished by make_ready. The
         * window's spare (made ready before opening) is there. */
        o = nbr_req_spare(w);
        nbr_req_ref(o);
        e->open_req = o;
    }
    return conclude(w, o, req);
}

static int open_lock_epoch(nbr_win_t *w, const char *call, nbr_epoch_t *e, int hold,
                           MPI_Request *req)
{
    int rc = MPI_SUCCESS;
    nbr_req_t *o = NULL;
    if (nbr_epoch_peers(w, e) != MPI_SUCCESS || (req && !nb_open_prepare(w, call, e, &o, &rc))) {
        nbr_epoch_free(w, e);
        return rc != MPI_SUCCESS ? rc : nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory");
    }
    if (e->kind == NBR_EK_LOCK) {
        w->t[e->target].lock_ep = e;
        w->nlocked++;
    } else {
        w->all_ep = e;
    }
    nbr_epoch_open(w, e);
    if (req)
        return nb_open_conclude(w, e, o, req);
    if (hold && e->state != NBR_ES_READY) {
        /* Still waiting for the grant (see nb_open_conclude). The thread's blocking request
         * cannot fail. */
        o = nbr_req_blocking(w);
        nbr_req_ref(o);
        e->open_req = o;
        return conclude(w, o, NULL);
    }
    return MPI_SUCCESS;
}

/* The application-level record of an open LOCK or LOCK_ALL epoch, taken away (on = 0) or put
 * back. */
static void lock_epoch_detach(nbr_win_t *w, nbr_epoch_t *e, int on)
{
    if (e->kind == NBR_EK_LOCK) {
        w->t[e->target].lock_ep = on ? e : NULL;
        w->nlocked += on ? 1 : -1;
    } else {
        w->all_ep = on ? e : NULL;
    }
}

/* Close a LOCK or LOCK_ALL epoch (unlock, unlock_all). When the epoch completes at once
 * (nbr_epoch_close_direct: a ready epoch, nothing recorded, nothing else queued) a blocking call
 * needs no request and a nonblocking one gets a request complete from birth (its error, if a
 * replayed call failed, a request that carries it); otherwise the closing request is waited on or handed out. */
static int close_lock_epoch(nbr_win_t *w, const char *call, nbr_epoch_t *e, MPI_Request *req)
{
    int rc = MPI_SUCCESS, err;
    lock_epoch_detach(w, e, 0);
    if (nbr_epoch_close_direct(w, e, NULL, &err))
        return req ? concluded(w, call, err, req) : raised(w->handle, err);
    nbr_req_t *r = new_req(w, call, &rc, req); /* the blocking one cannot fail */
    if (!r) {
        lock_epoch_detach(w, e, 1); /* nothing was done: the epoch stays open */
        return rc;
    }
    nbr_epoch_close(w, e, r);
    nbr_epoch_kick(w, e);
    return conclude(w, r, req);
}

static int ilock(nbr_win_t *w, const char *call, int type, int rank, int assert, MPI_Request *req)
{
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return nbr_err(w, call, MPI_ERR_LOCKTYPE,
                       "lock_type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", type);
    if (rank == MPI_PROC_NULL)
        return conclude(w, NULL, req);
    int rc = check_rank(w, call, rank);
    if (rc != MPI_SUCCESS)
        return rc;
    if (assert & ~MPI_MODE_NOCHECK)
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits lock does not define",
                       assert);
    nbr_target_t *t = nbr_tgt(w, rank);
    if (t->lock_ep)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "rank %d is already locked by this process (nested lock)", rank);
    if (w->start_ep || w->all_ep)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "an access epoch of %s is open",
                       w->start_ep ? "MPI_Win_start" : "MPI_Win_lock_all");
    if ((rc = fence_yield(w, call)) != MPI_SUCCESS)
        return rc;
    nbr_epoch_t *e = nbr_epoch_new(w, NBR_EK_LOCK);
    if (!e)
        return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an epoch");
    e->target = rank;
    e->lock_type = type;
    e->assert = assert;
    return open_lock_epoch(w, call, e, lock_must_hold(w, rank), req);
}

static int iunlock(nbr_win_t *w, const char *call, int rank, MPI_Request *req)
{
    if (rank == MPI_PROC_NULL)
        return conclude(w, NULL, req);
    int rc = check_rank(w, call, rank);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_target_t *t = &w->t[rank];
    nbr_epoch_t *e = t->lock_ep;
    if (!e)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "rank %d is not locked by this process", rank);
    return close_lock_epoch(w, call, e, req);
}

static int ilock_all(nbr_win_t *w, const char *call, int assert, MPI_Request *req)
{
    if (w->all_ep || w->start_ep || w->nlocked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "an access epoch is already open (%s)",
                       w->all_ep     ? "MPI_Win_lock_all"
                       : w->start_ep ? "MPI_Win_start"
                                     : "MPI_Win_lock");
    if (assert & ~MPI_MODE_NOCHECK)
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits lock_all does not define",
                       assert);
    int rc = fence_yield(w, call);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_epoch_t *e = nbr_epoch_new(w, NBR_EK_LOCK_ALL);
    if (!e)
        return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an epoch");
    e->assert = assert;
    /* lock_all is a shared lock on every rank, the caller's own memory included: held on return */
    return open_lock_epoch(w, call, e, 1, req);
}

static int iunlock_all(nbr_win_t *w, const char *call, MPI_Request *req)
{
    nbr_epoch_t *e = w->all_ep;
    if (!e)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all was not called");
    return close_lock_epoch(w, call, e, req);
}

/* A blocking flush with nothing recorded toward rank: wait for the remote acknowledgements
 * directly (no flush object, no engine sweep per poll: a put+flush across nodes is one round
 * trip, and this is most of what it costs besides). */
static __attribute__((noinline)) int flush_remote(nbr_win_t *w, int rank)
{
    long spins = 0;
    if (!nbr_tp_quiet(w, rank)) /* an RDMA flush often completes at its first poll */
        nbr_tp_poll_completions();
    while (!nbr_tp_quiet(w, rank)) {
        nbr_progress();
        if (!nbr_tp_quiet(w, rank))
            nbr_wait_step(&spins);
    }
    int err = w->tp_err;
    w->tp_err = MPI_SUCCESS;
    return raised(w->handle, err);
}

/* Flush (000 §VII-C): over shared memory a call of a ready epoch is complete when it returns,
 * so flushing means carrying out the recorded calls no younger than the flush. */
static int iflush(nbr_win_t *w, const char *call, int rank, MPI_Request *req)
{
    if (rank == MPI_PROC_NULL)
        return conclude(w, NULL, req);
    if (rank == NBR_FLUSH_ALL) {
        if (!w->all_ep && !w->nlocked)
            return nbr_err(w, call, MPI_ERR_RMA_SYNC, "no passive target epoch is open");
    } else {
        int rc = check_rank(w, call, rank);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!w->all_ep && !w->t[rank].lock_ep)
            return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                           "no passive target epoch toward rank %d is open", rank);
    }
    /* Every call toward rank already went to its transport (none recorded, none held): only
     * the remote completions are left, and flush_remote runs the engine only while one is
     * outstanding. A put + flush to memory an origin maps (UCX-allocated, over shared memory)
     * completes at once and costs no engine sweep (the entry point already served other nodes
     * when no progress thread does). */
    if (NBR_UNLIKELY(w->nremote) && !req && !w->held_head && nbr_flush_nothing_recorded(w, rank)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return flush_remote(w, rank);
    }
    if (NBR_UNLIKELY(w->held_head)) /* calls the scheduler held (002 §4) are due now */
        nbr_sched_release(w, rank);
    nbr_progress();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!req && NBR_UNLIKELY(w->nremote) && nbr_flush_nothing_recorded(w, rank))
        return flush_remote(w, rank);
    int rc;
    nbr_req_t *r = new_req(w, call, &rc, req);
    if (!r)
        return rc;
    if (!nbr_flush_start(w, rank, r, &rc)) {
        if (req)
            nbr_req_unspare(w, r);
        else
            nbr_req_release(r);
        return rc != MPI_SUCCESS ? nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for a flush")
                                 : conclude(w, NULL, req);
    }
    nbr_progress();
    return conclude(w, r, req);
}

/* ---- the MPI entry points and their MPIX_ twins ---------------------------------------------- */

/* Every synchronization call serves other nodes' requests first when nothing else does (no
 * progress thread: NBRMA_ASYNC_PROGRESS=off, or no MPI_THREAD_MULTIPLE). A process whose own
 * epochs touch only itself or its node peers would otherwise never serve a remote origin while it
 * polls its own memory (MPICH's one-sided linked-list benchmark spins on lock/get/unlock toward
 * itself and MPI_Iprobe: across nodes it never finished). One load and branch where it does not
 * apply. */
static inline void serve_others(void)
{
    if (NBR_UNLIKELY(__atomic_load_n(&nbr_tp_on, __ATOMIC_RELAXED)) && !nbr_thread_serves())
        nbr_progress();
}
#define NBR_SERVE_SYNC(vendor_call, expr) NBR_SERVE(vendor_call, (serve_others(), (expr)))

/* MPIX_ calls on a window the vendor serves: refused (the MPI library has no such epochs). */
#define NBR_NB_ENTRY(call, ...)                                                                    \
    nbr_win_t *w = nbr_win_find(win);                                                              \
    if (!w)                                                                                        \
        return nbr_err_vendor_win(win, call, MPI_ERR_WIN,                                          \
                                  "the window is served by the MPI library, which has no "         \
                                  "nonblocking epochs (create it with NBRMA_IMPL=ref)");           \
    if (!request)                                                                                  \
        return nbr_err(w, call, MPI_ERR_REQUEST, "request is NULL");                               \
    NBR_ENTER();                                                                                   \
    serve_others();                                                                                \
    int rc_ = __VA_ARGS__;                                                                         \
    int kick_ = nbr_kick_wanted();                                                                 \
    NBR_LEAVE();                                                                                   \
    if (kick_)                                                                                     \
        nbr_thread_kick();                                                                         \
    return rc_

NBR_API int MPI_Win_fence(int assert, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_fence(assert, win), ifence(w, "MPI_Win_fence", assert, NULL));
}

NBR_API int MPIX_Win_ifence(int assert, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_ifence", ifence(w, "MPIX_Win_ifence", assert, request));
}

NBR_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_post(group, assert, win), ipost(w, "MPI_Win_post", group, assert, NULL));
}

NBR_API int MPIX_Win_ipost(MPI_Group group, int assert, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_ipost", ipost(w, "MPIX_Win_ipost", group, assert, request));
}

NBR_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_start(group, assert, win), istart(w, "MPI_Win_start", group, assert, NULL));
}

NBR_API int MPIX_Win_istart(MPI_Group group, int assert, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_istart", istart(w, "MPIX_Win_istart", group, assert, request));
}

NBR_API int MPI_Win_complete(MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_complete(win), icomplete(w, "MPI_Win_complete", NULL));
}

NBR_API int MPIX_Win_icomplete(MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_icomplete", icomplete(w, "MPIX_Win_icomplete", request));
}

NBR_API int MPI_Win_wait(MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_wait(win), iwait(w, "MPI_Win_wait", NULL));
}

NBR_API int MPIX_Win_iwait(MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iwait", iwait(w, "MPIX_Win_iwait", request));
}

NBR_API int MPI_Win_test(MPI_Win win, int *flag)
{
    NBR_SERVE_SYNC(PMPI_Win_test(win, flag), win_test(w, flag));
}

NBR_API int MPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_lock(type, rank, assert, win),
              ilock(w, "MPI_Win_lock", type, rank, assert, NULL));
}

NBR_API int MPIX_Win_ilock(int type, int rank, int assert, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_ilock", ilock(w, "MPIX_Win_ilock", type, rank, assert, request));
}

NBR_API int MPI_Win_unlock(int rank, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_unlock(rank, win), iunlock(w, "MPI_Win_unlock", rank, NULL));
}

NBR_API int MPIX_Win_iunlock(int rank, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iunlock", iunlock(w, "MPIX_Win_iunlock", rank, request));
}

NBR_API int MPI_Win_lock_all(int assert, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_lock_all(assert, win), ilock_all(w, "MPI_Win_lock_all", assert, NULL));
}

NBR_API int MPIX_Win_ilock_all(int assert, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_ilock_all", ilock_all(w, "MPIX_Win_ilock_all", assert, request));
}

NBR_API int MPI_Win_unlock_all(MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_unlock_all(win), iunlock_all(w, "MPI_Win_unlock_all", NULL));
}

NBR_API int MPIX_Win_iunlock_all(MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iunlock_all", iunlock_all(w, "MPIX_Win_iunlock_all", request));
}

/* MPI_Win_flush toward one rank of another node with nothing recorded or held toward it (iflush's
 * first branch), inlined into the entry point: the pair's RDMA flush is started directly (no ops
 * table) and, when it completes in its call (memory the origin maps), nothing else runs. No
 * fence: every operation of this epoch toward the rank went through its transport, whose flush
 * is their completion (UCX's own ordering: its shared-memory flush fences the stores it made);
 * the fence of iflush orders this process's copies into node peers' memory, and a flush toward
 * one rank of another node made none. docs/ref-internals.md, "Fast paths across nodes". Returns
 * 1 when it took the call (its result in *rc), 0 for iflush. */
static inline __attribute__((always_inline)) int flush_fast(nbr_win_t *w, int rank, int *rc)
{
    if (NBR_LIKELY(!w->nremote) || (unsigned)rank >= (unsigned)w->size)
        return 0;
    nbr_target_t *t = &w->t[rank];
    if (!nbr_tp_remote(t) || !(w->all_ep || t->lock_ep) || w->held_head ||
        !nbr_flush_nothing_recorded(w, rank))
        return 0;
#if NBR_HAVE_UCX
    if (t->net == NBR_NET_UCX && nbr_tp_out(w, rank) != 0)
        nbr_ucx_flush_pair(w, rank);
#endif
    if (NBR_LIKELY(nbr_tp_out(w, rank) == 0 && w->tp_err == MPI_SUCCESS)) {
        *rc = MPI_SUCCESS;
        return 1;
    }
    *rc = flush_remote(w, rank);
    return 1;
}

NBR_API int MPI_Win_flush(int rank, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_flush(rank, win);
    NBR_ENTER();
    serve_others();
    int rc;
    if (!flush_fast(w, rank, &rc))
        rc = iflush(w, "MPI_Win_flush", rank, NULL);
    NBR_LEAVE();
    return rc;
}

NBR_API int MPIX_Win_iflush(int rank, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iflush", iflush(w, "MPIX_Win_iflush", rank, request));
}

NBR_API int MPI_Win_flush_local(int rank, MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_flush_local(rank, win), iflush(w, "MPI_Win_flush_local", rank, NULL));
}

NBR_API int MPIX_Win_iflush_local(int rank, MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iflush_local", iflush(w, "MPIX_Win_iflush_local", rank, request));
}

NBR_API int MPI_Win_flush_all(MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_flush_all(win), iflush(w, "MPI_Win_flush_all", NBR_FLUSH_ALL, NULL));
}

NBR_API int MPIX_Win_iflush_all(MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iflush_all", iflush(w, "MPIX_Win_iflush_all", NBR_FLUSH_ALL, request));
}

NBR_API int MPI_Win_flush_local_all(MPI_Win win)
{
    NBR_SERVE_SYNC(PMPI_Win_flush_local_all(win),
              iflush(w, "MPI_Win_flush_local_all", NBR_FLUSH_ALL, NULL));
}

NBR_API int MPIX_Win_iflush_local_all(MPI_Win win, MPI_Request *request)
{
    NBR_NB_ENTRY("MPIX_Win_iflush_local_all",
                 iflush(w, "MPIX_Win_iflush_local_all", NBR_FLUSH_ALL, request));
}

NBR_API int MPI_Win_sync(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_sync(win);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    nbr_progress();
    return MPI_SUCCESS;
}

NBR_API int MPIX_Win_epoch_counts(MPI_Win win, int *deferred, int *pending)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return nbr_err_vendor_win(win, "MPIX_Win_epoch_counts", MPI_ERR_WIN,
                                  "the window is served by the MPI library");
    NBR_ENTER();
    nbr_progress();
    *deferred = w->ndeferred;
    *pending = w->npending;
    NBR_LEAVE();
    return MPI_SUCCESS;
}
