/* progress.c — waiting without blocking inside the vendor MPI, and the wait/test family.
 *
 * Every wait in libnbrma is a poll loop that yields the CPU after NBRMA_SPIN polls: with more
 * ranks than cores (laptops, CI, teaching labs) a peer we wait for needs our core. The MPI
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

void nbr_progress_finalize(void)
{
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
 * left to wait for, every opening call but the locks, an R-variant over shared memory) needs a
 * request that is complete from birth. A generalized request made and completed for it cost more
 * than the epoch itself (MPICH: ~900 instructions in the MPI_Test that releases it, twice per
 * ilock/iunlock epoch: issue 24). Both MPI libraries already have such a request: what they
 * return for an operation complete at birth, MPI_Isend to MPI_PROC_NULL — MPICH 4 a builtin
 * handle, Open MPI &ompi_request_empty — the same handle every time, never freed, completed and
 * set to MPI_REQUEST_NULL by every call of the wait/test family, MPI_Request_free and MPI_Cancel
 * like any request. When the library returns one handle twice (checked once), libnbrma hands that
 * handle out ("the token") and its wait/test wrappers recognize it without entering the library.
 * Otherwise (a library that allocates each such request) it falls back to a generalized request.
 * The token carries no error: a call whose epoch failed gets a generalized request (request.c). */
MPI_Request nbr_req_tok = MPI_REQUEST_NULL; /* the token, or MPI_REQUEST_NULL (none: fall back) */
static MPI_Status tok_status, null_status; /* what a wait reports for the token, for NULL */
static pthread_once_t tok_once = PTHREAD_ONCE_INIT;

static int done_query(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static void tok_init(void)
{
    MPI_Request a = MPI_REQUEST_NULL, b = MPI_REQUEST_NULL, n = MPI_REQUEST_NULL;
    memset(&tok_status, 0, sizeof tok_status);
    memset(&null_status, 0, sizeof null_status);
    /* The status the library gives the token (an application's own MPI_Isend to MPI_PROC_NULL
     * returns the same handle, and its wait must not change): Open MPI's is that of an operation
     * with MPI_PROC_NULL (source MPI_PROC_NULL, tag MPI_ANY_TAG, 0 elements); MPICH leaves a send
     * request's status alone, which then keeps this same value. */
    PMPI_Status_set_elements(&tok_status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(&tok_status, 0);
    tok_status.MPI_SOURCE = MPI_PROC_NULL;
    tok_status.MPI_TAG = MPI_ANY_TAG;
    if (PMPI_Wait(&n, &null_status) != MPI_SUCCESS) /* the library's empty status */
        null_status = tok_status;
    if (PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &a) != MPI_SUCCESS)
        return;
    int same = PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &b) == MPI_SUCCESS &&
               a == b && a != MPI_REQUEST_NULL;
    MPI_Request keep = a;
    MPI_Status st = tok_status;
    if (PMPI_Wait(&a, &st) == MPI_SUCCESS) /* a shared one stays alive: it is the library's */
        tok_status = st;
    if (b != MPI_REQUEST_NULL)
        (void)PMPI_Wait(&b, MPI_STATUS_IGNORE);
    if (same)
        __atomic_store_n(&nbr_req_tok, keep, __ATOMIC_RELEASE);
}

MPI_Request nbr_req_token_slow(void)
{
    if (pthread_once(&tok_once, tok_init) != 0)
        return MPI_REQUEST_NULL;
    return __atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE);
}

/* Is h the token? (Before any was handed out, nothing is.) */
static inline int is_tok(MPI_Request h)
{
    MPI_Request t = __atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE);
    return h == t && t != MPI_REQUEST_NULL;
}

/* The status of a completed token; MPI_ERROR is left as it was (single-completion calls do not
 * set it, MPI-3.1 §3.2.5). */
static inline void tok_status_out(MPI_Status *st, const MPI_Status *tmpl)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    int e = st->MPI_ERROR;
    *st = *tmpl;
    st->MPI_ERROR = e;
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

int nbr_req_done(MPI_Request *req)
{
    MPI_Request t = nbr_req_token();
    if (NBR_LIKELY(t != MPI_REQUEST_NULL)) {
        *req = t;
        return MPI_SUCCESS;
    }
    int rc = PMPI_Grequest_start(done_query, done_free, done_cancel, NULL, req);
    return rc != MPI_SUCCESS ? rc : PMPI_Grequest_complete(*req);
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

/* A wait that completes the token needs no progress of its own (the request is complete; the
 * libnbrma call that made it ran the engine, and every other call and wait still does): it only
 * serves other nodes' requests where windows have remote pairs, as every libnbrma call does
 * (passive-target progress across nodes). */
static inline void tok_progress(void)
{
    if (NBR_UNLIKELY(nbr_am_on))
        nbr_progress();
}

/* ---- the token among the application's requests (see "requests that are complete from birth")
 * A single completion call on the token completes it here; arrays holding it complete it here
 * (all of them tokens or null) or take it out for the library call and give it its status after. */

/* Tokens in reqs[0..n); *rest: the entries that are neither a token nor MPI_REQUEST_NULL. */
static int tok_scan(int n, const MPI_Request *reqs, int *rest)
{
    int k = 0, o = 0;
    *rest = n;
    if (__atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE) == MPI_REQUEST_NULL)
        return 0;
    for (int i = 0; i < n; i++)
        if (is_tok(reqs[i]))
            k++;
        else if (reqs[i] != MPI_REQUEST_NULL)
            o++;
    *rest = o;
    return k;
}

/* Every entry a token or null: all complete. */
static void tok_complete_all(int n, MPI_Request *reqs, MPI_Status *sts)
{
    for (int i = 0; i < n; i++) {
        int t = reqs[i] != MPI_REQUEST_NULL; /* the caller saw only tokens and nulls */
        reqs[i] = MPI_REQUEST_NULL;
        if (sts != MPI_STATUSES_IGNORE)
            tok_status_out(&sts[i], t ? &tok_status : &null_status);
    }
}

/* Where the tokens are (malloc'ed, n bytes), optionally replacing them by MPI_REQUEST_NULL; NULL
 * when out of memory (then they stay: the library completes them like any request). */
static unsigned char *tok_map(int n, MPI_Request *reqs, int take)
{
    unsigned char *map = calloc((size_t)n, 1);
    for (int i = 0; map && i < n; i++)
        if (is_tok(reqs[i])) {
            map[i] = 1;
            if (take)
                reqs[i] = MPI_REQUEST_NULL;
        }
    return map;
}

static void tok_put_back(int n, MPI_Request *reqs, const unsigned char *map)
{
    MPI_Request t = __atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (map[i])
            reqs[i] = t;
}

static void tok_statuses(int n, const unsigned char *map, MPI_Status *sts)
{
    for (int i = 0; sts != MPI_STATUSES_IGNORE && i < n; i++)
        if (map[i])
            tok_status_out(&sts[i], &tok_status);
}

static int first_tok(int n, const MPI_Request *reqs)
{
    for (int i = 0; i < n; i++)
        if (is_tok(reqs[i]))
            return i;
    return -1;
}

NBR_API int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (is_tok(*req)) {
        tok_progress();
        *req = MPI_REQUEST_NULL;
        tok_status_out(st, &tok_status);
        return MPI_SUCCESS;
    }
    return inner_wait(req, st);
}

NBR_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (is_tok(*req)) {
        tok_progress();
        *req = MPI_REQUEST_NULL;
        *flag = 1;
        tok_status_out(st, &tok_status);
        return MPI_SUCCESS;
    }
    return inner_test(req, flag, st);
}

NBR_API int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (is_tok(req)) {
        tok_progress();
        *flag = 1;
        tok_status_out(st, &tok_status);
        return MPI_SUCCESS;
    }
    return inner_request_get_status(req, flag, st);
}

NBR_API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    MPI_Request t = __atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE);
    int i = 0;
    if (t != MPI_REQUEST_NULL) /* all tokens or null (one pass for the common cases) */
        while (i < n && (reqs[i] == t || reqs[i] == MPI_REQUEST_NULL))
            i++;
    if (t != MPI_REQUEST_NULL && i == n) {
        tok_progress();
        tok_complete_all(n, reqs, sts);
        return MPI_SUCCESS;
    }
    int rest;
    if (t == MPI_REQUEST_NULL || !tok_scan(n, reqs, &rest))
        return inner_waitall(n, reqs, sts);
    unsigned char *map = tok_map(n, reqs, 1);
    int rc = inner_waitall(n, reqs, sts);
    if (map && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS))
        tok_statuses(n, map, sts);
    free(map);
    return rc;
}

NBR_API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    int rest, ntok = tok_scan(n, reqs, &rest);
    if (!ntok)
        return inner_testall(n, reqs, flag, sts);
    if (!rest) {
        tok_progress();
        tok_complete_all(n, reqs, sts);
        *flag = 1;
        return MPI_SUCCESS;
    }
    unsigned char *map = tok_map(n, reqs, 1);
    int rc = inner_testall(n, reqs, flag, sts);
    if (map) {
        if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *flag)
            tok_statuses(n, map, sts);
        else /* MPI-3.1 §3.7.5: no request is modified unless all completed */
            tok_put_back(n, reqs, map);
    }
    free(map);
    return rc;
}

NBR_API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    int k = __atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE) != MPI_REQUEST_NULL ? first_tok(n, reqs) : -1;
    if (k < 0)
        return inner_waitany(n, reqs, idx, st);
    tok_progress();
    reqs[k] = MPI_REQUEST_NULL;
    *idx = k;
    tok_status_out(st, &tok_status);
    return MPI_SUCCESS;
}

NBR_API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    int k = __atomic_load_n(&nbr_req_tok, __ATOMIC_ACQUIRE) != MPI_REQUEST_NULL ? first_tok(n, reqs) : -1;
    if (k < 0)
        return inner_testany(n, reqs, idx, flag, st);
    tok_progress();
    reqs[k] = MPI_REQUEST_NULL;
    *idx = k;
    *flag = 1;
    tok_status_out(st, &tok_status);
    return MPI_SUCCESS;
}

/* Waitsome/Testsome: the library completes tokens itself (they are complete requests); only
 * their statuses are set here. */
NBR_API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int rest, ntok = tok_scan(n, reqs, &rest);
    unsigned char *map = ntok ? tok_map(n, reqs, 0) : NULL;
    int rc = inner_waitsome(n, reqs, outcount, idx, sts);
    if (map && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED &&
        sts != MPI_STATUSES_IGNORE)
        for (int k = 0; k < *outcount; k++)
            if (map[idx[k]])
                tok_status_out(&sts[k], &tok_status);
    free(map);
    return rc;
}

NBR_API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int rest, ntok = tok_scan(n, reqs, &rest);
    unsigned char *map = ntok ? tok_map(n, reqs, 0) : NULL;
    int rc = inner_testsome(n, reqs, outcount, idx, sts);
    if (map && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED &&
        sts != MPI_STATUSES_IGNORE)
        for (int k = 0; k < *outcount; k++)
            if (map[idx[k]])
                tok_status_out(&sts[k], &tok_status);
    free(map);
    return rc;
}
