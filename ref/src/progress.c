/* progress.c — waiting without blocking inside the vendor MPI, and the wait/test family.
 *
 * Every wait in libnbrma is a poll loop that gives its core away after NBRMA_SPIN polls, as
 * NBRMA_RELAX says (thread.c, nbr_relax): with more ranks than cores (laptops, CI, teaching
 * labs) a peer we wait for needs our core. The MPI
 * wait/test family is intercepted so that, while ref windows or requests exist, MPI_Wait on any
 * request (an epoch's closing request, an MPI_Rput's, or a plain MPI_Irecv's) also polls and
 * yields, drives the progress engine (epoch.c, paper 000 §VII-D) — a nonblocking epoch completes
 * under plain MPI_Wait/MPI_Test — and raises a failed epoch's error through its window's error
 * handler (request.c says why the MPI library cannot).
 *
 * MPI_Waitall waits for its requests one after the other (MPI_Request_get_status on the first
 * one not complete yet), so a wait for n requests costs O(n) tests in all, not O(n) per poll;
 * then one PMPI_Waitall, which finds them all complete, returns the statuses. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "transport/tp.h"

/* Until a window tells us whether its node is oversubscribed, yield early (the safe choice). */
long nbr_spin = 100;

/* MPI-3.1 §3.5 (progress): a process blocked in any MPI call keeps its pending point-to-point
 * and collective communication moving. Our waits poll our own state (shared memory), so a wait
 * that made no call into the vendor MPI would starve the caller's other communication — and
 * deadlock a peer whose MPI_Send or collective needs it (suites/conformance/sync_progress). A
 * probe runs the vendor's progress engine (MPICH and Open MPI alike); it goes to a private
 * duplicate of MPI_COMM_WORLD, made at initialization, so it can match nothing of the
 * application's (a duplicate of MPI_COMM_SELF would not do: MPICH serves a probe on a
 * one-process communicator without running its progress engine). Not from the progress thread
 * unless the vendor gave MPI_THREAD_MULTIPLE. */
static MPI_Comm poke_comm = MPI_COMM_NULL;

void nbr_progress_init(void)
{
    MPI_Comm c;
    MPI_Request r;
    if (PMPI_Comm_idup(MPI_COMM_WORLD, &c, &r) != MPI_SUCCESS)
        return; /* then the probes go to MPI_COMM_WORLD (they match nothing either way) */
    if (nbr_wait_req(&r) != MPI_SUCCESS)
        return;
    if (PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        (void)PMPI_Comm_free(&c);
        return;
    }
    poke_comm = c;
}

static void pool_finalize(void);

void nbr_progress_finalize(void)
{
    pool_finalize();
    if (poke_comm != MPI_COMM_NULL && PMPI_Comm_free(&poke_comm) != MPI_SUCCESS)
        poke_comm = MPI_COMM_NULL; /* freed by MPI_Finalize anyway */
}

void nbr_vendor_progress(void)
{
    if (nbr_in_progress_thread() && nbr_thread_level != MPI_THREAD_MULTIPLE)
        return;
    int flag = 0;
    MPI_Comm c = poke_comm != MPI_COMM_NULL ? poke_comm : MPI_COMM_WORLD;
    /* an error (none is expected) only loses one poke: the wait loop polls again */
    if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return;
}

int nbr_wait_req_status(MPI_Request *req, MPI_Status *st)
{
    int done = 0, rc;
    long spins = 0;
    while ((rc = PMPI_Test(req, &done, st)) == MPI_SUCCESS && !done) {
        nbr_progress();
        nbr_wait_step(&spins);
    }
    return rc;
}

int nbr_wait_req(MPI_Request *req)
{
    return nbr_wait_req_status(req, MPI_STATUS_IGNORE);
}

int nbr_barrier(MPI_Comm comm)
{
    MPI_Request r;
    int rc = PMPI_Ibarrier(comm, &r);
    return rc != MPI_SUCCESS ? rc : nbr_wait_req(&r);
}

/* ---- requests that are complete from birth --------------------------------------------------
 *
 * An epoch call that completes inside the call (a lock granted at once, an unlock with nothing
 * left to wait for, every opening call but the locks, a flush with nothing pending, an R-variant
 * over shared memory) needs a request that is complete from birth. A generalized request made and
 * completed for it cost more than the epoch itself (MPICH: ~900 instructions in the MPI_Test that
 * releases it, twice per ilock/iunlock epoch: issue 24). Instead libnbrma keeps a pool of the
 * library's own inactive persistent requests (MPI_Send_init to MPI_PROC_NULL, made once, reused):
 * real handles of the MPI library, distinct while the application holds them (tools that follow
 * requests by handle, rmacheck among them, see one request per call), that the wait/test wrappers
 * below recognize (one hash probe) and complete without entering the library — set to
 * MPI_REQUEST_NULL with an empty status, the handle back in the pool. MPI_Request_free and
 * MPI_Cancel are intercepted for them too (the library would free the pooled request, or refuse
 * to cancel an inactive persistent one). Should a pooled handle reach the library some other way,
 * it is an inactive request there: complete at once, never freed under us. When the library
 * cannot make one, generalized requests it is, as before. A pooled request carries no error: a
 * call whose epoch failed gets a generalized request (request.c, sync.c). All of them are freed
 * at MPI_Finalize (nbr_progress_finalize). */
static MPI_Status pool_status;       /* the library's empty status (an inactive request's) */
MPI_Request *nbr_pool_free;         /* handles not held by the application (a stack) */
int nbr_pool_nfree;
static int pool_capfree;
#define pool_free  nbr_pool_free
#define pool_nfree nbr_pool_nfree
static MPI_Request *pool_set;        /* every pooled handle (open addressing) */
static size_t pool_cap, pool_n;
static int pool_broken;              /* the library could not make one: generalized requests */
int nbr_req_pooled;                  /* handles were pooled: the wrappers must look */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
#define POOL_LOCK()                                                                                \
    do {                                                                                           \
        if (nbr_locking)                                                                           \
            pthread_mutex_lock(&pool_mu);                                                          \
    } while (0)
#define POOL_UNLOCK()                                                                              \
    do {                                                                                           \
        if (nbr_locking)                                                                           \
            pthread_mutex_unlock(&pool_mu);                                                        \
    } while (0)

static int done_query(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int done_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int done_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* Fibonacci hashing of the handle's bits: one multiply (this probe runs in every MPI_Wait). */
static inline size_t pool_slot(MPI_Request h, size_t cap)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return (size_t)((k * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

/* Is h a pooled handle? (pool lock held, or no other thread) */
static inline int pool_has(MPI_Request h)
{
    if (!pool_cap || h == MPI_REQUEST_NULL)
        return 0;
    for (size_t i = pool_slot(h, pool_cap); pool_set[i] != MPI_REQUEST_NULL;
         i = (i + 1) & (pool_cap - 1))
        if (pool_set[i] == h)
            return 1;
    return 0;
}

/* A new pooled request (pool lock held). 0 when the library or memory said no. */
static int pool_grow(void)
{
    if (pool_broken)
        return 0;
    if (!pool_cap) { /* first use: the library's empty status, for completions */
        MPI_Request n = MPI_REQUEST_NULL;
        PMPI_Status_set_elements(&pool_status, MPI_BYTE, 0);
        if (PMPI_Wait(&n, &pool_status) != MPI_SUCCESS)
            pool_status.MPI_SOURCE = MPI_ANY_SOURCE, pool_status.MPI_TAG = MPI_ANY_TAG;
    }
    if ((pool_n + 1) * 2 > pool_cap) {
        size_t cap = pool_cap ? 2 * pool_cap : 64;
        MPI_Request *t = malloc(cap * sizeof *t);
        if (!t)
            return 0;
        for (size_t i = 0; i < cap; i++)
            t[i] = MPI_REQUEST_NULL;
        for (size_t i = 0; i < pool_cap; i++)
            if (pool_set[i] != MPI_REQUEST_NULL) {
                size_t j = pool_slot(pool_set[i], cap);
                while (t[j] != MPI_REQUEST_NULL)
                    j = (j + 1) & (cap - 1);
                t[j] = pool_set[i];
            }
        free(pool_set);
        pool_set = t;
        pool_cap = cap;
    }
    if ((size_t)pool_capfree < pool_n + 1) { /* the stack must hold every pooled handle */
        int cap = pool_capfree ? 2 * pool_capfree : 64;
        MPI_Request *f = realloc(pool_free, (size_t)cap * sizeof *f);
        if (!f)
            return 0;
        pool_free = f;
        pool_capfree = cap;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    if (PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r) != MPI_SUCCESS ||
        r == MPI_REQUEST_NULL) {
        pool_broken = 1;
        return 0;
    }
    size_t j = pool_slot(r, pool_cap);
    while (pool_set[j] != MPI_REQUEST_NULL)
        j = (j + 1) & (pool_cap - 1);
    pool_set[j] = r;
    pool_n++;
    pool_free[pool_nfree++] = r;
    __atomic_store_n(&nbr_req_pooled, 1, __ATOMIC_RELEASE);
    return 1;
}

/* h back into the pool (it was handed out). */
static inline void pool_put(MPI_Request h)
{
    POOL_LOCK();
    pool_free[pool_nfree++] = h; /* room: the stack holds every pooled handle */
    POOL_UNLOCK();
}

int nbr_req_done_slow(MPI_Request *req)
{
    POOL_LOCK();
    if (pool_nfree || pool_grow()) {
        *req = pool_free[--pool_nfree];
        POOL_UNLOCK();
        return MPI_SUCCESS;
    }
    POOL_UNLOCK();
    int rc = PMPI_Grequest_start(done_query, done_free, done_cancel, NULL, req);
    return rc != MPI_SUCCESS ? rc : PMPI_Grequest_complete(*req);
}

int nbr_req_cheap(void)
{
    return !__atomic_load_n(&pool_broken, __ATOMIC_RELAXED);
}

/* Is h a pooled request the application holds? The common case (no pool yet, a null handle)
 * costs a load and a compare. */
static inline int is_tok(MPI_Request h)
{
    if (!__atomic_load_n(&nbr_req_pooled, __ATOMIC_ACQUIRE) || h == MPI_REQUEST_NULL)
        return 0;
    POOL_LOCK();
    int yes = pool_has(h);
    POOL_UNLOCK();
    return yes;
}

/* A pooled request completes: its status (MPI_ERROR is left as it was: single-completion calls
 * do not set it, MPI-3.1 §3.2.5), the handle back in the pool, the application's set to null. */
static inline void tok_status_out(MPI_Status *st, const MPI_Status *tmpl)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    int e = st->MPI_ERROR;
    *st = *tmpl;
    st->MPI_ERROR = e;
}

static inline void tok_complete(MPI_Request *h, MPI_Status *st)
{
    pool_put(*h);
    *h = MPI_REQUEST_NULL;
    tok_status_out(st, &pool_status);
}

static void pool_finalize(void)
{
    POOL_LOCK();
    for (size_t i = 0; i < pool_cap; i++)
        if (pool_set[i] != MPI_REQUEST_NULL)
            (void)PMPI_Request_free(&pool_set[i]); /* inactive: freed at once */
    free(pool_set);
    free(pool_free);
    pool_set = pool_free = NULL;
    pool_cap = pool_n = 0;
    pool_nfree = pool_capfree = 0;
    __atomic_store_n(&nbr_req_pooled, 0, __ATOMIC_RELEASE);
    POOL_UNLOCK();
}

/* ---- our requests among the application's: error routing ------------------------------------ */

/* libnbrma has something to progress or requests whose errors it routes. */
static inline int engaged(void)
{
    return nbr_nwins || nbr_req_registered();
}

/* The requests among reqs[0..n) that libnbrma exposed (references taken), or NULL when none. */
static nbr_req_t **ours(int n, const MPI_Request *reqs)
{
    if (!nbr_req_registered() || n <= 0)
        return NULL;
    nbr_req_t **v = NULL;
    for (int i = 0; i < n; i++) {
        nbr_req_t *r = nbr_req_lookup(reqs[i]);
        if (!r)
            continue;
        if (!v && !(v = calloc((size_t)n, sizeof *v))) {
            nbr_req_release(r); /* no error routing for this call; the requests still complete */
            return NULL;
        }
        v[i] = r;
    }
    return v;
}

static void ours_release(int n, nbr_req_t **v)
{
    if (!v)
        return;
    for (int i = 0; i < n; i++)
        if (v[i])
            nbr_req_release(v[i]);
    free(v);
}

/* A completed request of ours that failed: its error, through its window's handler. */
static int routed(nbr_req_t *r, int rc)
{
    if (rc != MPI_SUCCESS || !r || r->err == MPI_SUCCESS)
        return rc;
    return nbr_err_raise(r->win, r->err);
}

/* Multiple completion (Waitall, Waitsome, Testsome): the entries of `idx` (or 0..n-1) that
 * completed; a failed one of ours turns the result into MPI_ERR_IN_STATUS with every status's
 * MPI_ERROR set (MPI-3.1 §3.7.5), raised through the first failed request's window. */
static int routed_multi(int n, nbr_req_t **v, const int *idx, MPI_Status *sts, int rc)
{
    if (!v || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS))
        return rc;
    nbr_req_t *first = NULL;
    for (int k = 0; k < n; k++) {
        nbr_req_t *r = v[idx ? idx[k] : k];
        if (r && r->err != MPI_SUCCESS && !first)
            first = r;
    }
    if (!first)
        return rc;
    if (sts != MPI_STATUSES_IGNORE)
        for (int k = 0; k < n; k++) {
            nbr_req_t *r = v[idx ? idx[k] : k];
            if (r)
                sts[k].MPI_ERROR = r->err;
            else if (rc == MPI_SUCCESS)
                sts[k].MPI_ERROR = MPI_SUCCESS;
        }
    return nbr_err_raise(first->win, MPI_ERR_IN_STATUS);
}

/* ---- the wait/test family -------------------------------------------------------------------- */

static int inner_wait(MPI_Request *req, MPI_Status *st)
{
    if (!engaged())
        return PMPI_Wait(req, st);
    nbr_req_t *r = nbr_req_lookup(*req);
    int flag = 0, rc;
    long spins = 0;
    for (;;) {
        nbr_progress();
        rc = PMPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            break;
        nbr_wait_step(&spins);
    }
    rc = routed(r, rc);
    if (r)
        nbr_req_release(r);
    return rc;
}

static int inner_test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (!engaged())
        return PMPI_Test(req, flag, st);
    nbr_progress();
    nbr_req_t *r = nbr_req_lookup(*req);
    int rc = PMPI_Test(req, flag, st);
    if (r) {
        if (*flag)
            rc = routed(r, rc);
        nbr_req_release(r);
    }
    return rc;
}

static int inner_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!engaged())
        return PMPI_Waitall(n, reqs, sts);
    nbr_req_t **v = ours(n, reqs);
    long spins = 0;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) { /* one request at a time: O(n) in all */
        for (;;) {
            int flag = 0;
            nbr_progress();
            rc = PMPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || flag)
                break;
            nbr_wait_step(&spins);
        }
    }
    /* Every request is complete (or one failed to report): the MPI library sets the statuses,
     * and raises its own requests' errors itself. */
    rc = PMPI_Waitall(n, reqs, sts);
    rc = routed_multi(n, v, NULL, sts, rc);
    ours_release(n, v);
    return rc;
}

static int inner_testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    if (!engaged())
        return PMPI_Testall(n, reqs, flag, sts);
    nbr_progress();
    nbr_req_t **v = ours(n, reqs);
    int rc = PMPI_Testall(n, reqs, flag, sts);
    if (*flag)
        rc = routed_multi(n, v, NULL, sts, rc);
    ours_release(n, v);
    return rc;
}

static int inner_waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    if (!engaged())
        return PMPI_Waitany(n, reqs, idx, st);
    nbr_req_t **v = ours(n, reqs);
    int flag = 0, rc;
    long spins = 0;
    for (;;) {
        nbr_progress();
        rc = PMPI_Testany(n, reqs, idx, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            break;
        nbr_wait_step(&spins);
    }
    if (v && flag && *idx != MPI_UNDEFINED)
        rc = routed(v[*idx], rc);
    ours_release(n, v);
    return rc;
}

static int inner_testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    if (!engaged())
        return PMPI_Testany(n, reqs, idx, flag, st);
    nbr_progress();
    nbr_req_t **v = ours(n, reqs);
    int rc = PMPI_Testany(n, reqs, idx, flag, st);
    if (v && *flag && *idx != MPI_UNDEFINED)
        rc = routed(v[*idx], rc);
    ours_release(n, v);
    return rc;
}

static int inner_waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!engaged())
        return PMPI_Waitsome(n, reqs, outcount, idx, sts);
    nbr_req_t **v = ours(n, reqs);
    int rc;
    long spins = 0;
    for (;;) {
        nbr_progress();
        rc = PMPI_Testsome(n, reqs, outcount, idx, sts);
        if (rc != MPI_SUCCESS || *outcount != 0)
            break;
        nbr_wait_step(&spins);
    }
    if (*outcount != MPI_UNDEFINED)
        rc = routed_multi(*outcount, v, idx, sts, rc);
    ours_release(n, v);
    return rc;
}

static int inner_testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!engaged())
        return PMPI_Testsome(n, reqs, outcount, idx, sts);
    nbr_progress();
    nbr_req_t **v = ours(n, reqs);
    int rc = PMPI_Testsome(n, reqs, outcount, idx, sts);
    if (*outcount != MPI_UNDEFINED && *outcount > 0)
        rc = routed_multi(*outcount, v, idx, sts, rc);
    ours_release(n, v);
    return rc;
}

static int inner_request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (!engaged())
        return PMPI_Request_get_status(req, flag, st);
    nbr_progress();
    nbr_req_t *r = nbr_req_lookup(req);
    int rc = PMPI_Request_get_status(req, flag, st);
    if (r) {
        if (*flag)
            rc = routed(r, rc);
        nbr_req_release(r);
    }
    return rc;
}

/* A wait that completes a pooled request needs no progress of its own (the request is complete; the
 * libnbrma call that made it ran the engine, and every other call and wait still does): it only
 * serves other nodes' requests where windows have remote pairs and no progress thread does, as
 * every synchronization call does (sync.c's serve_others: passive-target progress across
 * nodes). */
static inline void tok_progress(void)
{
    if (NBR_UNLIKELY(__atomic_load_n(&nbr_tp_on, __ATOMIC_RELAXED)) && !nbr_thread_serves())
        nbr_progress();
}

/* ---- pooled requests among the application's (see "requests that are complete from birth")
 * A single completion call on one completes it here. Arrays: only pooled and null handles
 * complete here at once; mixed with other requests, the pooled ones are taken out for the
 * library's call (which would count an inactive request as complete, or skip it) and completed
 * after it — or, for MPI_Testall without every request complete, put back (MPI-3.1 §3.7.5: no
 * request is modified then). */

/* Where the pooled handles of reqs[0..n) are (malloc'ed, n bytes; taken out: MPI_REQUEST_NULL in
 * their place), or NULL when there are none. *rest: entries neither pooled nor null. *fail: out of
 * memory (then the caller leaves them to the library: inactive requests, complete there). */
static unsigned char *tok_take(int n, MPI_Request *reqs, int *rest, int *fail)
{
    unsigned char *map = NULL;
    *rest = 0;
    *fail = 0;
    if (!__atomic_load_n(&nbr_req_pooled, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < n; i++)
            *rest += reqs[i] != MPI_REQUEST_NULL;
        return NULL;
    }
    POOL_LOCK();
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        if (!pool_has(reqs[i])) {
            (*rest)++;
            continue;
        }
        if (!map && !(map = calloc((size_t)n, 1))) {
            *fail = 1;
            break;
        }
        map[i] = 1;
    }
    POOL_UNLOCK();
    return map;
}

/* The handles before taking them out (the caller's copy), to complete or put back. */
static void tok_finish(int n, MPI_Request *reqs, const unsigned char *map, const MPI_Request *orig,
                       MPI_Status *sts, int completed)
{
    for (int i = 0; i < n; i++) {
        if (!map[i])
            continue;
        if (completed) {
            pool_put(orig[i]);
            reqs[i] = MPI_REQUEST_NULL;
            if (sts != MPI_STATUSES_IGNORE)
                tok_status_out(&sts[i], &pool_status);
        } else {
            reqs[i] = orig[i];
        }
    }
}

/* Run `call` with the pooled handles of reqs taken out; `done` says whether they complete. */
#define WITH_TOKS(n, reqs, sts, call, done)                                                        \
    ({                                                                                             \
        int rest_, fail_, rc_;                                                                     \
        unsigned char *map_ = tok_take(n, reqs, &rest_, &fail_);                                   \
        MPI_Request *orig_ = map_ ? malloc((size_t)(n) * sizeof *orig_) : NULL;                    \
        if (map_ && !orig_) {                                                                      \
            free(map_);                                                                            \
            map_ = NULL;                                                                           \
        }                                                                                          \
        for (int i_ = 0; map_ && i_ < (n); i_++) {                                                 \
            orig_[i_] = (reqs)[i_];                                                                \
            if (map_[i_])                                                                          \
                (reqs)[i_] = MPI_REQUEST_NULL;                                                     \
        }                                                                                          \
        rc_ = call;                                                                                \
        if (map_)                                                                                  \
            tok_finish(n, reqs, map_, orig_, sts, (rc_ == MPI_SUCCESS || rc_ == MPI_ERR_IN_STATUS) \
                                                      && (done));                                  \
        free(map_);                                                                                \
        free(orig_);                                                                               \
        rc_;                                                                                       \
    })

/* A single pooled request completes: 1 when *req was one (now null, back in the pool). */
static inline int tok_take_one(MPI_Request *req, MPI_Status *st)
{
    MPI_Request h = *req;
    if (!__atomic_load_n(&nbr_req_pooled, __ATOMIC_ACQUIRE) || h == MPI_REQUEST_NULL)
        return 0;
    POOL_LOCK();
    int yes = pool_has(h);
    if (yes)
        pool_free[pool_nfree++] = h;
    POOL_UNLOCK();
    if (!yes)
        return 0;
    *req = MPI_REQUEST_NULL;
    tok_status_out(st, &pool_status);
    tok_progress();
    return 1;
}

NBR_API int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (tok_take_one(req, st))
        return MPI_SUCCESS;
    return inner_wait(req, st);
}

NBR_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (tok_take_one(req, st)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return inner_test(req, flag, st);
}

NBR_API int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (is_tok(req)) {
        tok_progress();
        *flag = 1;
        tok_status_out(st, &pool_status);
        return MPI_SUCCESS;
    }
    return inner_request_get_status(req, flag, st);
}

/* Freeing a pooled request gives it back (the library would free it for good). */
NBR_API int MPI_Request_free(MPI_Request *req)
{
    if (req && is_tok(*req)) {
        pool_put(*req);
        *req = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    return PMPI_Request_free(req);
}

/* A complete request cannot be cancelled, and nothing happens (MPI-3.1 §3.8.4); the library would
 * refuse an inactive persistent one. */
NBR_API int MPI_Cancel(MPI_Request *req)
{
    if (req && is_tok(*req))
        return MPI_SUCCESS;
    return PMPI_Cancel(req);
}

/* Every entry pooled or null: all complete (statuses: the library's empty one). 1 if so. */
static int toks_only(int n, MPI_Request *reqs, MPI_Status *sts)
{
    if (!__atomic_load_n(&nbr_req_pooled, __ATOMIC_ACQUIRE))
        return 0;
    POOL_LOCK();
    int i = 0;
    while (i < n && (reqs[i] == MPI_REQUEST_NULL || pool_has(reqs[i])))
        i++;
    if (i == n)
        for (i = 0; i < n; i++)
            if (reqs[i] != MPI_REQUEST_NULL) {
                pool_free[pool_nfree++] = reqs[i];
                reqs[i] = MPI_REQUEST_NULL;
            }
    POOL_UNLOCK();
    if (i < n)
        return 0;
    for (i = 0; sts != MPI_STATUSES_IGNORE && i < n; i++)
        tok_status_out(&sts[i], &pool_status);
    tok_progress();
    return 1;
}

NBR_API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (toks_only(n, reqs, sts))
        return MPI_SUCCESS;
    return WITH_TOKS(n, reqs, sts, inner_waitall(n, reqs, sts), 1);
}

NBR_API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    if (toks_only(n, reqs, sts)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return WITH_TOKS(n, reqs, sts, inner_testall(n, reqs, flag, sts), *flag);
}

static int first_tok(int n, MPI_Request *reqs)
{
    if (!__atomic_load_n(&nbr_req_pooled, __ATOMIC_ACQUIRE))
        return -1;
    int k = -1;
    POOL_LOCK();
    for (int i = 0; i < n && k < 0; i++)
        if (reqs[i] != MPI_REQUEST_NULL && pool_has(reqs[i]))
            k = i;
    POOL_UNLOCK();
    return k;
}

NBR_API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    int k = first_tok(n, reqs);
    if (k < 0)
        return inner_waitany(n, reqs, idx, st);
    tok_progress();
    tok_complete(&reqs[k], st);
    *idx = k;
    return MPI_SUCCESS;
}

NBR_API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    int k = first_tok(n, reqs);
    if (k < 0)
        return inner_testany(n, reqs, idx, flag, st);
    tok_progress();
    tok_complete(&reqs[k], st);
    *idx = k;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Waitsome/Testsome with pooled requests: those complete now; the others that completed too are
 * found by one MPI_Testsome (the library skips null entries). */
static int some_with_toks(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[],
                          int *handled)
{
    int rest, fail;
    unsigned char *map = tok_take(n, reqs, &rest, &fail);
    *handled = map != NULL;
    if (!map)
        return MPI_SUCCESS;
    MPI_Request *orig = malloc((size_t)n * sizeof *orig);
    if (!orig) {
        free(map);
        *handled = 0;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        orig[i] = reqs[i];
        if (map[i])
            reqs[i] = MPI_REQUEST_NULL;
    }
    tok_progress();
    int k = 0, rc = MPI_SUCCESS;
    if (rest) {
        rc = inner_testsome(n, reqs, &k, idx, sts);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
            k = 0; /* the pooled ones still complete */
        if (k == MPI_UNDEFINED)
            k = 0;
    }
    for (int i = 0; i < n; i++) {
        if (!map[i])
            continue;
        pool_put(orig[i]);
        reqs[i] = MPI_REQUEST_NULL;
        idx[k] = i;
        if (sts != MPI_STATUSES_IGNORE) {
            tok_status_out(&sts[k], &pool_status);
            if (rc == MPI_ERR_IN_STATUS)
                sts[k].MPI_ERROR = MPI_SUCCESS;
        }
        k++;
    }
    *outcount = k;
    free(map);
    free(orig);
    return rc;
}

NBR_API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int handled, rc = some_with_toks(n, reqs, outcount, idx, sts, &handled);
    return handled ? rc : inner_waitsome(n, reqs, outcount, idx, sts);
}

NBR_API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int handled, rc = some_with_toks(n, reqs, outcount, idx, sts, &handled);
    return handled ? rc : inner_testsome(n, reqs, outcount, idx, sts);
}
