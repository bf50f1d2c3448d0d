/* blocking.c — the MPI library's blocking point-to-point and collective calls, made waits that
 * serve other nodes while windows span nodes.
 *
 * Across nodes a target's CPU carries out the RMA that reaches it (transport/am.c), inside any
 * libnbrma call. A rank blocked inside the vendor's MPI_Barrier or MPI_Recv serves nothing, and
 * the peer waiting for its acknowledgement (an unlock, a flush, a fence arrival) may be the very
 * rank it waits for: a deadlock the shared-memory transport never had, since there the origin
 * does all the work. MPI-3.1 §11.7.3 asks that passive-target RMA make progress whatever the
 * target does, and §3.5 that blocked calls progress pending communication. So once a window with
 * remote pairs exists (nbr_am_on), each blocking call here becomes its nonblocking twin and a
 * wait that runs libnbrma's engine and yields (progress.c, nbr_wait_req) — also the cure for
 * MPICH's spinning blocking calls on oversubscribed nodes. Before that, every call goes straight
 * to the vendor, unchanged. (Sendrecv_replace has no nonblocking twin in MPI-3.1 and stays
 * blocking; a program that uses it while another rank waits on its RMA service needs
 * NBRMA_ASYNC_PROGRESS=1.) */
#include "nbr.h"
#include "transport/tp.h"

/* Run `nbcall` (which fills r_) and wait for it, or forward `vendor` before any remote pair. */
#define NBR_AS_NB(vendor, nbcall, st)                                                              \
    if (!__atomic_load_n(&nbr_am_on, __ATOMIC_RELAXED))                                            \
        return vendor;                                                                             \
    MPI_Request r_;                                                                                \
    int rc_ = nbcall;                                                                              \
    return rc_ != MPI_SUCCESS ? rc_ : nbr_wait_req_status(&r_, st)

/* The four send modes: MPI_X becomes MPI_IX + a wait. */
#define NBR_SEND(X)                                                                                \
    NBR_API int MPI_##X(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)       \
    {                                                                                              \
        NBR_AS_NB(PMPI_##X(b, n, t, dest, tag, c), PMPI_I##X(b, n, t, dest, tag, c, &r_),          \
                  MPI_STATUS_IGNORE);                                                              \
    }
#define PMPI_ISend  PMPI_Isend
#define PMPI_ISsend PMPI_Issend
#define PMPI_IRsend PMPI_Irsend
#define PMPI_IBsend PMPI_Ibsend
NBR_SEND(Send)
NBR_SEND(Ssend)
NBR_SEND(Rsend)
NBR_SEND(Bsend)

NBR_API int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *st)
{
    NBR_AS_NB(PMPI_Recv(b, n, t, src, tag, c, st), PMPI_Irecv(b, n, t, src, tag, c, &r_), st);
}

NBR_API int MPI_Mrecv(void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
    NBR_AS_NB(PMPI_Mrecv(b, n, t, m, st), PMPI_Imrecv(b, n, t, m, &r_), st);
}

NBR_API int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st_, int dest, int stag, void *rb,
                         int rn, MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status *st)
{
    if (!__atomic_load_n(&nbr_am_on, __ATOMIC_RELAXED))
        return PMPI_Sendrecv(sb, sn, st_, dest, stag, rb, rn, rt, src, rtag, c, st);
    MPI_Request r[2];
    int rc = PMPI_Irecv(rb, rn, rt, src, rtag, c, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Isend(sb, sn, st_, dest, stag, c, &r[1])) != MPI_SUCCESS) {
        (void)PMPI_Cancel(&r[0]);
        (void)PMPI_Request_free(&r[0]);
        return rc;
    }
    int rc2 = nbr_wait_req_status(&r[0], st);
    rc = nbr_wait_req(&r[1]);
    return rc2 != MPI_SUCCESS ? rc2 : rc;
}

/* Probes: a loop of the nonblocking probe that serves meanwhile. */
NBR_API int MPI_Probe(int src, int tag, MPI_Comm c, MPI_Status *st)
{
    if (!__atomic_load_n(&nbr_am_on, __ATOMIC_RELAXED))
        return PMPI_Probe(src, tag, c, st);
    int flag = 0, rc;
    long spins = 0;
    while ((rc = PMPI_Iprobe(src, tag, c, &flag, st)) == MPI_SUCCESS && !flag) {
        nbr_progress();
        nbr_wait_step(&spins);
    }
    return rc;
}

NBR_API int MPI_Mprobe(int src, int tag, MPI_Comm c, MPI_Message *m, MPI_Status *st)
{
    if (!__atomic_load_n(&nbr_am_on, __ATOMIC_RELAXED))
        return PMPI_Mprobe(src, tag, c, m, st);
    int flag = 0, rc;
    long spins = 0;
    while ((rc = PMPI_Improbe(src, tag, c, &flag, m, st)) == MPI_SUCCESS && !flag) {
        nbr_progress();
        nbr_wait_step(&spins);
    }
    return rc;
}

/* ---- collectives ----------------------------------------------------------------------------- */

NBR_API int MPI_Barrier(MPI_Comm c)
{
    NBR_AS_NB(PMPI_Barrier(c), PMPI_Ibarrier(c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Bcast(b, n, t, root, c), PMPI_Ibcast(b, n, t, root, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                       MPI_Comm c)
{
    NBR_AS_NB(PMPI_Reduce(s, r, n, t, op, root, c), PMPI_Ireduce(s, r, n, t, op, root, c, &r_),
              MPI_STATUS_IGNORE);
}

NBR_API int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Allreduce(s, r, n, t, op, c), PMPI_Iallreduce(s, r, n, t, op, c, &r_),
              MPI_STATUS_IGNORE);
}

NBR_API int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                                     MPI_Comm c)
{
    NBR_AS_NB(PMPI_Reduce_scatter_block(s, r, n, t, op, c),
              PMPI_Ireduce_scatter_block(s, r, n, t, op, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Reduce_scatter(const void *s, void *r, const int n[], MPI_Datatype t, MPI_Op op,
                               MPI_Comm c)
{
    NBR_AS_NB(PMPI_Reduce_scatter(s, r, n, t, op, c), PMPI_Ireduce_scatter(s, r, n, t, op, c, &r_),
              MPI_STATUS_IGNORE);
}

NBR_API int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Scan(s, r, n, t, op, c), PMPI_Iscan(s, r, n, t, op, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Exscan(s, r, n, t, op, c), PMPI_Iexscan(s, r, n, t, op, c, &r_),
              MPI_STATUS_IGNORE);
}

NBR_API int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                       int root, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Gather(s, sn, st, r, rn, rt, root, c),
              PMPI_Igather(s, sn, st, r, rn, rt, root, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                        const int disp[], MPI_Datatype rt, int root, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Gatherv(s, sn, st, r, rn, disp, rt, root, c),
              PMPI_Igatherv(s, sn, st, r, rn, disp, rt, root, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                        int root, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Scatter(s, sn, st, r, rn, rt, root, c),
              PMPI_Iscatter(s, sn, st, r, rn, rt, root, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Scatterv(const void *s, const int sn[], const int disp[], MPI_Datatype st, void *r,
                         int rn, MPI_Datatype rt, int root, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Scatterv(s, sn, disp, st, r, rn, rt, root, c),
              PMPI_Iscatterv(s, sn, disp, st, r, rn, rt, root, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                          MPI_Comm c)
{
    NBR_AS_NB(PMPI_Allgather(s, sn, st, r, rn, rt, c),
              PMPI_Iallgather(s, sn, st, r, rn, rt, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                           const int disp[], MPI_Datatype rt, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Allgatherv(s, sn, st, r, rn, disp, rt, c),
              PMPI_Iallgatherv(s, sn, st, r, rn, disp, rt, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                         MPI_Comm c)
{
    NBR_AS_NB(PMPI_Alltoall(s, sn, st, r, rn, rt, c), PMPI_Ialltoall(s, sn, st, r, rn, rt, c, &r_),
              MPI_STATUS_IGNORE);
}

NBR_API int MPI_Alltoallv(const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r,
                          const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c)
{
    NBR_AS_NB(PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c),
              PMPI_Ialltoallv(s, sn, sd, st, r, rn, rd, rt, c, &r_), MPI_STATUS_IGNORE);
}

NBR_API int MPI_Alltoallw(const void *s, const int sn[], const int sd[], const MPI_Datatype st[],
                          void *r, const int rn[], const int rd[], const MPI_Datatype rt[],
                          MPI_Comm c)
{
    NBR_AS_NB(PMPI_Alltoallw(s, sn, sd, st, r, rn, rd, rt, c),
              PMPI_Ialltoallw(s, sn, sd, st, r, rn, rd, rt, c, &r_), MPI_STATUS_IGNORE);
}
