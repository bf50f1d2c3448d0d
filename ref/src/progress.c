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

/* ---- requests that are complete from birth (R-variants over shared memory) ------------------ */

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

int nbr_req_done(MPI_Request *req)
{
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

NBR_API int MPI_Wait(MPI_Request *req, MPI_Status *st)
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

NBR_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
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

NBR_API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
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

NBR_API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
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

NBR_API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
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

NBR_API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
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

NBR_API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
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

NBR_API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
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

NBR_API int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
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
