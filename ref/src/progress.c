/* progress.c — waiting without blocking inside the vendor MPI, and the wait/test family.
 *
 * Every wait in libnbrma is a poll loop that yields the CPU after NBRMA_SPIN polls: with more
 * ranks than cores (laptops, CI, teaching labs) a peer we wait for needs our core. The MPI
 * wait/test family is intercepted so that, while ref windows exist, MPI_Wait on any request
 * (an epoch's closing request, an MPI_Rput's, or a plain MPI_Irecv's) also polls and yields,
 * and drives the progress engine (epoch.c, paper 000 §VII-D): a nonblocking epoch completes
 * under plain MPI_Wait/MPI_Test. */
#include <sched.h>
#include <string.h>

#include "nbr.h"

/* Until a window tells us whether its node is oversubscribed, yield early (the safe choice). */
long nbr_spin = 100;

int nbr_wait_req(MPI_Request *req)
{
    int done = 0, rc;
    long spins = 0;
    while ((rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done) {
        nbr_progress();
        if (++spins > nbr_spin)
            sched_yield();
    }
    return rc;
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

/* ---- the wait/test family -------------------------------------------------------------------- */

/* Poll `test` until it reports completion; forward unchanged when no ref window exists. */
#define NBR_POLL(test_call, flag)                                                                  \
    do {                                                                                           \
        long spins_ = 0;                                                                           \
        for (;;) {                                                                                 \
            nbr_progress();                                                                        \
            int rc_ = (test_call);                                                                 \
            if (rc_ != MPI_SUCCESS || (flag))                                                      \
                return rc_;                                                                        \
            if (++spins_ > nbr_spin)                                                               \
                sched_yield();                                                                     \
        }                                                                                          \
    } while (0)

NBR_API int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (!nbr_nwins)
        return PMPI_Wait(req, st);
    int flag = 0;
    NBR_POLL(PMPI_Test(req, &flag, st), flag);
}

NBR_API int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!nbr_nwins)
        return PMPI_Waitall(n, reqs, sts);
    int flag = 0;
    NBR_POLL(PMPI_Testall(n, reqs, &flag, sts), flag);
}

NBR_API int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    if (!nbr_nwins)
        return PMPI_Waitany(n, reqs, idx, st);
    int flag = 0;
    NBR_POLL(PMPI_Testany(n, reqs, idx, &flag, st), flag);
}

NBR_API int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!nbr_nwins)
        return PMPI_Waitsome(n, reqs, outcount, idx, sts);
    NBR_POLL(PMPI_Testsome(n, reqs, outcount, idx, sts), *outcount != 0);
}

NBR_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (nbr_nwins)
        nbr_progress();
    return PMPI_Test(req, flag, st);
}

NBR_API int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    if (nbr_nwins)
        nbr_progress();
    return PMPI_Testall(n, reqs, flag, sts);
}

NBR_API int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    if (nbr_nwins)
        nbr_progress();
    return PMPI_Testany(n, reqs, idx, flag, st);
}

NBR_API int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (nbr_nwins)
        nbr_progress();
    return PMPI_Testsome(n, reqs, outcount, idx, sts);
}

NBR_API int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (nbr_nwins)
        nbr_progress();
    return PMPI_Request_get_status(req, flag, st);
}
