/* blocking.c — the MPI library's blocking point-to-point and collective calls, made waits that
 * serve other nodes.
 *
 * Across nodes a target's CPU carries out the RMA that reaches it (transport/am.c), inside any
 * libnbrma call. A rank blocked inside the vendor's MPI_Barrier or MPI_Recv serves nothing, and
 * the peer waiting for its acknowledgement (an unlock, a flush, a fence arrival) may be the very
 * rank it waits for. MPI-3.1 §11.7.3 asks that passive-target RMA make progress whatever the
 * target does. So:
 *   - point-to-point calls become their nonblocking twin and a wait that runs libnbrma's engine
 *     and yields (progress.c, nbr_wait_req) once this process has windows with remote pairs
 *     (nbr_tp_on): MPI matches blocking and nonblocking point-to-point calls freely, so each
 *     process may decide alone. MPI_Sendrecv_replace, which has no twin, sends from a copy.
 *   - collectives become their nonblocking twin and such a wait in *every* process of a job
 *     that spans nodes (nbr_coll_serve, agreed by all processes at MPI_Init), from MPI_Init on:
 *     a blocking collective never matches a nonblocking one (MPI-3.1 §5.12), so the rule must
 *     not depend on what one process's windows are.
 * The waits yield the CPU, which also cures MPICH's blocking calls that spin on oversubscribed
 * nodes. Blocking calls without a nonblocking twin (MPI_Comm_split, MPI_Comm_create, ...) cannot
 * be served this way: the progress thread serves while the application sits in them (thread.c;
 * docs/ref.md, "Progress across nodes"). On one node every call goes straight to the vendor. */
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "transport/tp.h"

static inline int p2p_serves(void)
{
    return __atomic_load_n(&nbr_tp_on, __ATOMIC_RELAXED);
}

/* Run `nbcall` (which fills r_) and wait for it, or forward `vendor`. */
#define NBR_AS_NB_IF(cond, vendor, nbcall, st)                                                     \
    if (!(cond))                                                                                   \
        return vendor;                                                                             \
    MPI_Request r_;                                                                                \
    int rc_ = nbcall;                                                                              \
    return rc_ != MPI_SUCCESS ? rc_ : nbr_wait_req_status(&r_, st)
#define NBR_AS_NB(vendor, nbcall, st) NBR_AS_NB_IF(p2p_serves(), vendor, nbcall, st)
#define NBR_COLL(vendor, nbcall)      NBR_AS_NB_IF(nbr_coll_serve, vendor, nbcall, MPI_STATUS_IGNORE)

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
    if (!p2p_serves())
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
    if (!p2p_serves())
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
    if (!p2p_serves())
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
    NBR_COLL(PMPI_Barrier(c), PMPI_Ibarrier(c, &r_));
}

NBR_API int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    NBR_COLL(PMPI_Bcast(b, n, t, root, c), PMPI_Ibcast(b, n, t, root, c, &r_));
}

NBR_API int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                       MPI_Comm c)
{
    NBR_COLL(PMPI_Reduce(s, r, n, t, op, root, c), PMPI_Ireduce(s, r, n, t, op, root, c, &r_));
}

NBR_API int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    NBR_COLL(PMPI_Allreduce(s, r, n, t, op, c), PMPI_Iallreduce(s, r, n, t, op, c, &r_));
}

NBR_API int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                                     MPI_Comm c)
{
    NBR_COLL(PMPI_Reduce_scatter_block(s, r, n, t, op, c),
              PMPI_Ireduce_scatter_block(s, r, n, t, op, c, &r_));
}

NBR_API int MPI_Reduce_scatter(const void *s, void *r, const int n[], MPI_Datatype t, MPI_Op op,
                               MPI_Comm c)
{
    NBR_COLL(PMPI_Reduce_scatter(s, r, n, t, op, c), PMPI_Ireduce_scatter(s, r, n, t, op, c, &r_));
}

NBR_API int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    NBR_COLL(PMPI_Scan(s, r, n, t, op, c), PMPI_Iscan(s, r, n, t, op, c, &r_));
}

NBR_API int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    NBR_COLL(PMPI_Exscan(s, r, n, t, op, c), PMPI_Iexscan(s, r, n, t, op, c, &r_));
}

NBR_API int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                       int root, MPI_Comm c)
{
    NBR_COLL(PMPI_Gather(s, sn, st, r, rn, rt, root, c),
              PMPI_Igather(s, sn, st, r, rn, rt, root, c, &r_));
}

NBR_API int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                        const int disp[], MPI_Datatype rt, int root, MPI_Comm c)
{
    NBR_COLL(PMPI_Gatherv(s, sn, st, r, rn, disp, rt, root, c),
              PMPI_Igatherv(s, sn, st, r, rn, disp, rt, root, c, &r_));
}

NBR_API int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                        int root, MPI_Comm c)
{
    NBR_COLL(PMPI_Scatter(s, sn, st, r, rn, rt, root, c),
              PMPI_Iscatter(s, sn, st, r, rn, rt, root, c, &r_));
}

NBR_API int MPI_Scatterv(const void *s, const int sn[], const int disp[], MPI_Datatype st, void *r,
                         int rn, MPI_Datatype rt, int root, MPI_Comm c)
{
    NBR_COLL(PMPI_Scatterv(s, sn, disp, st, r, rn, rt, root, c),
              PMPI_Iscatterv(s, sn, disp, st, r, rn, rt, root, c, &r_));
}

NBR_API int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                          MPI_Comm c)
{
    NBR_COLL(PMPI_Allgather(s, sn, st, r, rn, rt, c),
              PMPI_Iallgather(s, sn, st, r, rn, rt, c, &r_));
}

NBR_API int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                           const int disp[], MPI_Datatype rt, MPI_Comm c)
{
    NBR_COLL(PMPI_Allgatherv(s, sn, st, r, rn, disp, rt, c),
              PMPI_Iallgatherv(s, sn, st, r, rn, disp, rt, c, &r_));
}

NBR_API int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                         MPI_Comm c)
{
    NBR_COLL(PMPI_Alltoall(s, sn, st, r, rn, rt, c), PMPI_Ialltoall(s, sn, st, r, rn, rt, c, &r_));
}

NBR_API int MPI_Alltoallv(const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r,
                          const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c)
{
    NBR_COLL(PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c),
              PMPI_Ialltoallv(s, sn, sd, st, r, rn, rd, rt, c, &r_));
}

NBR_API int MPI_Alltoallw(const void *s, const int sn[], const int sd[], const MPI_Datatype st[],
                          void *r, const int rn[], const int rd[], const MPI_Datatype rt[],
                          MPI_Comm c)
{
    NBR_COLL(PMPI_Alltoallw(s, sn, sd, st, r, rn, rd, rt, c),
              PMPI_Ialltoallw(s, sn, sd, st, r, rn, rd, rt, c, &r_));
}

NBR_API int MPI_Neighbor_allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn,
                                   MPI_Datatype rt, MPI_Comm c)
{
    NBR_COLL(PMPI_Neighbor_allgather(s, sn, st, r, rn, rt, c),
             PMPI_Ineighbor_allgather(s, sn, st, r, rn, rt, c, &r_));
}

NBR_API int MPI_Neighbor_allgatherv(const void *s, int sn, MPI_Datatype st, void *r,
                                    const int rn[], const int disp[], MPI_Datatype rt, MPI_Comm c)
{
    NBR_COLL(PMPI_Neighbor_allgatherv(s, sn, st, r, rn, disp, rt, c),
             PMPI_Ineighbor_allgatherv(s, sn, st, r, rn, disp, rt, c, &r_));
}

NBR_API int MPI_Neighbor_alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn,
                                  MPI_Datatype rt, MPI_Comm c)
{
    NBR_COLL(PMPI_Neighbor_alltoall(s, sn, st, r, rn, rt, c),
             PMPI_Ineighbor_alltoall(s, sn, st, r, rn, rt, c, &r_));
}

NBR_API int MPI_Neighbor_alltoallv(const void *s, const int sn[], const int sd[], MPI_Datatype st,
                                   void *r, const int rn[], const int rd[], MPI_Datatype rt,
                                   MPI_Comm c)
{
    NBR_COLL(PMPI_Neighbor_alltoallv(s, sn, sd, st, r, rn, rd, rt, c),
             PMPI_Ineighbor_alltoallv(s, sn, sd, st, r, rn, rd, rt, c, &r_));
}

NBR_API int MPI_Neighbor_alltoallw(const void *s, const int sn[], const MPI_Aint sd[],
                                   const MPI_Datatype st[], void *r, const int rn[],
                                   const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm c)
{
    NBR_COLL(PMPI_Neighbor_alltoallw(s, sn, sd, st, r, rn, rd, rt, c),
             PMPI_Ineighbor_alltoallw(s, sn, sd, st, r, rn, rd, rt, c, &r_));
}

/* MPI_Comm_idup is MPI_Comm_dup made nonblocking (attributes copied alike, MPI-3.1 §6.4.2). */
NBR_API int MPI_Comm_dup(MPI_Comm c, MPI_Comm *n)
{
    NBR_COLL(PMPI_Comm_dup(c, n), PMPI_Comm_idup(c, n, &r_));
}

/* MPI_Sendrecv_replace has no nonblocking twin: the outgoing data is copied first (the bytes its
 * type map spans, with the same type map, addressed from MPI_BOTTOM so that no pointer leaves
 * its object), then sent from the copy while the reply lands in the buffer. */
NBR_API int MPI_Sendrecv_replace(void *b, int n, MPI_Datatype t, int dest, int stag, int src,
                                 int rtag, MPI_Comm c, MPI_Status *st)
{
    if (!p2p_serves() || n <= 0)
        return PMPI_Sendrecv_replace(b, n, t, dest, stag, src, rtag, c, st);
    MPI_Aint lb, ext, tlb, text, lo, hi, span;
    int rc = PMPI_Type_get_extent(t, &lb, &ext);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_true_extent(t, &tlb, &text);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the bytes n elements span: [tlb + min(0, (n-1) ext), tlb + text + max(0, (n-1) ext)) */
    MPI_Aint step;
    if (__builtin_mul_overflow((MPI_Aint)(n - 1), ext, &step) ||
        __builtin_add_overflow(tlb, step < 0 ? step : 0, &lo) ||
        __builtin_add_overflow(tlb + text, step > 0 ? step : 0, &hi) ||
        __builtin_sub_overflow(hi, lo, &span) || span < 0)
        return MPI_ERR_COUNT;
    char *copy = malloc(span ? (size_t)span : 1);
    if (!copy)
        return MPI_ERR_NO_MEM;
    memcpy(copy, (char *)b + lo, (size_t)span);
    MPI_Aint at;
    MPI_Datatype from = MPI_DATATYPE_NULL;
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if ((rc = PMPI_Get_address(copy, &at)) == MPI_SUCCESS) {
        MPI_Aint disp = at - lo; /* where `b` would be in the copy, as an address */
        rc = PMPI_Type_create_struct(1, &n, &disp, &t, &from);
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&from);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(MPI_BOTTOM, 1, from, dest, stag, c, &r[0]);
    if (rc == MPI_SUCCESS && (rc = PMPI_Irecv(b, n, t, src, rtag, c, &r[1])) != MPI_SUCCESS) {
        (void)PMPI_Cancel(&r[0]);
        (void)PMPI_Request_free(&r[0]);
    }
    if (rc == MPI_SUCCESS) {
        int rc2 = nbr_wait_req(&r[0]);
        rc = nbr_wait_req_status(&r[1], st);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    if (from != MPI_DATATYPE_NULL)
        (void)PMPI_Type_free(&from);
    free(copy);
    return rc;
}

/* A process that polls with MPI_Iprobe (MPICH's linked-list benchmarks back off with it) serves
 * other nodes there too: MPI-3.1 §11.7.3 lets passive-target progress wait for the target's next
 * MPI call, and this is one. */
NBR_API int MPI_Iprobe(int src, int tag, MPI_Comm c, int *flag, MPI_Status *st)
{
    if (p2p_serves())
        nbr_progress();
    return PMPI_Iprobe(src, tag, c, flag, st);
}

NBR_API int MPI_Improbe(int src, int tag, MPI_Comm c, int *flag, MPI_Message *m, MPI_Status *st)
{
    if (p2p_serves())
        nbr_progress();
    return PMPI_Improbe(src, tag, c, flag, m, st);
}
