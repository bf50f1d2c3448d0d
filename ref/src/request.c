/* request.c — the requests of epochs and flushes (paper 000 §VII-C): an internal nbr_req_t that
 * the engine finishes, exposed to the application as a generalized request when the call was
 * nonblocking. Blocking calls wait on a per-thread request that never reaches the MPI library.
 *
 * Errors: a recorded call that fails at replay makes its epoch's closing request fail. MPI would
 * raise that error through MPI_COMM_WORLD's handler if the generalized request's query function
 * returned it, so the query function reports success and the error travels beside it: every
 * exposed request is registered here by handle, and the intercepted wait/test family
 * (progress.c) looks completed requests up and raises their error through the handler of the
 * window they belong to (MPI-3.1 §8.3: errors of an operation go to its object's handler). */
#include <pthread.h>
#include <stdlib.h>

#include "nbr.h"
#include "transport/tp.h"

/* ---- the registry: exposed handle -> request (open addressing, backward-shift deletion) ----- */

/* Its own lock, not the big one: the MPI library calls greq_free from inside its own critical
 * section, while a thread holding the big lock may be waiting to enter that section. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static nbr_req_t **reg;
static MPI_Request *reg_key;
static size_t reg_cap, reg_n;

static size_t reg_slot(MPI_Request h)
{
    return (size_t)nbr_handle_hash(&h, sizeof h) & (reg_cap - 1);
}

static int reg_grow(void)
{
    size_t cap = reg_cap ? reg_cap * 2 : 64;
    nbr_req_t **v = calloc(cap, sizeof *v);
    MPI_Request *k = calloc(cap, sizeof *k);
    if (!v || !k) {
        free(v);
        free(k);
        return MPI_ERR_NO_MEM;
    }
    nbr_req_t **ov = reg;
    MPI_Request *ok = reg_key;
    size_t ocap = reg_cap;
    reg = v;
    reg_key = k;
    reg_cap = cap;
    for (size_t i = 0; i < ocap; i++)
        if (ov[i]) {
            size_t j = reg_slot(ok[i]);
            while (reg[j])
                j = (j + 1) & (reg_cap - 1);
            reg[j] = ov[i];
            reg_key[j] = ok[i];
        }
    free(ov);
    free(ok);
    return MPI_SUCCESS;
}

static int reg_add(MPI_Request h, nbr_req_t *r)
{
    pthread_mutex_lock(&reg_mu);
    int rc = MPI_SUCCESS;
    if ((reg_n + 1) * 2 > reg_cap && reg_grow() != MPI_SUCCESS) {
        rc = MPI_ERR_NO_MEM;
    } else {
        size_t j = reg_slot(h);
        while (reg[j])
            j = (j + 1) & (reg_cap - 1);
        reg[j] = r;
        reg_key[j] = h;
        __atomic_store_n(&reg_n, reg_n + 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&reg_mu);
    return rc;
}

static void reg_remove(nbr_req_t *r)
{
    pthread_mutex_lock(&reg_mu);
    size_t i = reg_cap ? reg_slot(r->greq_key) : 0;
    while (reg_cap && reg[i] && reg[i] != r)
        i = (i + 1) & (reg_cap - 1);
    if (!reg_cap || !reg[i]) {
        pthread_mutex_unlock(&reg_mu);
        return;
    }
    reg[i] = NULL;
    __atomic_store_n(&reg_n, reg_n - 1, __ATOMIC_RELAXED);
    /* Backward shift: a later member of the cluster moves into the hole unless its home slot
     * lies cyclically in (hole, its slot]. */
    for (size_t j = (i + 1) & (reg_cap - 1); reg[j]; j = (j + 1) & (reg_cap - 1)) {
        size_t k = reg_slot(reg_key[j]);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        reg[i] = reg[j];
        reg_key[i] = reg_key[j];
        reg[j] = NULL;
        i = j;
    }
    pthread_mutex_unlock(&reg_mu);
}

int nbr_req_registered(void)
{
    return __atomic_load_n(&reg_n, __ATOMIC_RELAXED) != 0;
}

nbr_req_t *nbr_req_lookup(MPI_Request h)
{
    nbr_req_t *r = NULL;
    if (!nbr_req_registered() || h == MPI_REQUEST_NULL)
        return NULL;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = reg_cap ? reg_slot(h) : 0; reg_cap && reg[i]; i = (i + 1) & (reg_cap - 1))
        if (reg_key[i] == h) {
            r = reg[i];
            nbr_req_ref(r);
            break;
        }
    pthread_mutex_unlock(&reg_mu);
    return r;
}

/* ---- requests -------------------------------------------------------------------------------- */

static nbr_req_t *finish_head; /* completed by the progress thread, MPI_Grequest_complete due */

nbr_req_t *nbr_req_new(nbr_win_t *w)
{
    nbr_req_t *r = calloc(1, sizeof *r);
    if (r) {
        nbr_gauge_add(&nbr_st.requests, 1, (long long)sizeof *r);
        r->refs = 1;
        r->greq = r->greq_key = MPI_REQUEST_NULL;
        r->win = w ? w->handle : MPI_WIN_NULL;
    }
    return r;
}

/* A nonblocking epoch call's request is made before the call knows whether it completes inside
 * the call; when it does (a pooled request is handed out instead: progress.c), the request was never
 * seen by anyone and is kept for the window's next call, so that the common case costs no trip
 * through malloc. */
nbr_req_t *nbr_req_spare(nbr_win_t *w)
{
    nbr_req_t *r = w->spare_req;
    if (!r)
        return nbr_req_new(w);
    w->spare_req = NULL;
    *r = (nbr_req_t){.refs = 1,
                     .greq = MPI_REQUEST_NULL,
                     .greq_key = MPI_REQUEST_NULL,
                     .win = w->handle};
    return r;
}

void nbr_req_unspare(nbr_win_t *w, nbr_req_t *r)
{
    if (!w->spare_req && __atomic_load_n(&r->refs, __ATOMIC_ACQUIRE) == 1 && !r->is_static)
        w->spare_req = r;
    else
        nbr_req_release(r);
}

void nbr_req_release(nbr_req_t *r)
{
    if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0 && !r->is_static) {
        free(r);
        nbr_gauge_add(&nbr_st.requests, -1, -(long long)sizeof *r);
    }
}

/* The request of a blocking call: waited for before the call returns, so one per thread serves
 * every blocking call of that thread. */
nbr_req_t *nbr_req_blocking(nbr_win_t *w)
{
    static _Thread_local nbr_req_t r NBR_TLS_MODEL;
    r = (nbr_req_t){.refs = 1,
                    .greq = MPI_REQUEST_NULL,
                    .greq_key = MPI_REQUEST_NULL,
                    .is_static = 1,
                    .win = w ? w->handle : MPI_WIN_NULL};
    return &r;
}

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra; /* the error is raised by the wait/test wrappers through the window */
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    nbr_req_t *r = extra;
    reg_remove(r);
    nbr_req_release(r);
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
    NBR_ENTER(); /* the engine may finish r meanwhile (progress thread) */
    r->greq = r->greq_key = *req;
    if (reg_add(*req, r) != MPI_SUCCESS) /* no error routing for it: it still completes */
        r->greq_key = MPI_REQUEST_NULL;
    int done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
    if (done)
        r->greq = MPI_REQUEST_NULL;
    NBR_LEAVE();
    if (done)
        PMPI_Grequest_complete(*req);
    return MPI_SUCCESS;
}

void nbr_req_finish(nbr_req_t *r, int err)
{
    r->err = err;
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    if (r->greq == MPI_REQUEST_NULL)
        return;
    if (nbr_in_progress_thread()) { /* the progress thread makes no MPI call: the next one does */
        nbr_req_ref(r);
        r->next_finish = finish_head;
        finish_head = r;
        return;
    }
    MPI_Request g = r->greq;
    r->greq = MPI_REQUEST_NULL;
    PMPI_Grequest_complete(g);
}

void nbr_req_finish_queued(void)
{
    if (!finish_head || nbr_in_progress_thread())
        return;
    NBR_ENTER();
    while (finish_head) {
        nbr_req_t *r = finish_head;
        finish_head = r->next_finish;
        MPI_Request g = r->greq;
        r->greq = MPI_REQUEST_NULL;
        if (g != MPI_REQUEST_NULL)
            PMPI_Grequest_complete(g);
        nbr_req_release(r);
    }
    NBR_LEAVE();
}

int nbr_req_wait(nbr_req_t *r)
{
    long spins = 0;
    while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        nbr_progress();
        if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
            break;
        if (!nbr_tp_on) /* (the am transport's own tests run the vendor's progress) */
            nbr_vendor_progress(); /* the caller's other communication moves meanwhile */
        nbr_wait_step(&spins);
    }
    return r->err;
}

/* Request-based calls toward remote peers (transport/tp.h): the request completes when the last
 * of the call's operations has, and not before the call has issued them all (armed). */
void nbr_req_op_done(nbr_req_t *r, int err)
{
    if (err != MPI_SUCCESS && r->tp_err == MPI_SUCCESS)
        r->tp_err = err;
    if (--r->tp_pending == 0 && r->tp_armed)
        nbr_req_finish(r, r->tp_err);
}

void nbr_req_arm(nbr_req_t *r)
{
    r->tp_armed = 1;
    if (r->tp_pending == 0)
        nbr_req_finish(r, r->tp_err);
}
