/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 0 puts into rank 1's window in one lock/unlock epoch per round; then both ranks call one
 * collective (MPI_Alltoallv, MPI_Alltoallw, MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv,
 * MPI_Reduce_scatter, MPI_Reduce_scatter_block, MPI_Scan, MPI_Exscan; with NONBLOCKING their
 * MPI_I... forms and MPI_Iscatter, MPI_Ialltoall, completed with MPI_Wait) and rank 1 reads the
 * element with a plain load: the collective is the only thing ordering the load after the put.
 * In the MPI_Alltoallv round rank 0 unlocks only after the collective: the put may still be in
 * flight when rank 1 loads. Twin: k1_coll_alltoallv_safe.c unlocks first in every round;
 * k1_coll_ialltoallv.c and its twin are the nonblocking forms. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
#ifndef NONBLOCKING
#define NONBLOCKING 0
#endif
#define ROUNDS 11
#define HAZARD_ROUND 0 /* MPI_Alltoallv */

static void coll(int k)
{
    int s[2] = {1, 2}, r[2] = {0, 0}, one[2] = {1, 1}, d[2] = {0, 1};
    int dw[2] = {0, (int)sizeof(int)};
    MPI_Datatype ti[2] = {MPI_INT, MPI_INT};
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Request q = MPI_REQUEST_NULL;
    if (!NONBLOCKING) {
        switch (k) {
        case 0: MPI_Alltoallv(s, one, d, MPI_INT, r, one, d, MPI_INT, c); break;
        case 1: MPI_Alltoallw(s, one, dw, ti, r, one, dw, ti, c); break;
        case 2: MPI_Allgatherv(s, 1, MPI_INT, r, one, d, MPI_INT, c); break;
        case 3: MPI_Gatherv(s, 1, MPI_INT, r, one, d, MPI_INT, 1, c); break;
        case 4: MPI_Scatterv(s, one, d, MPI_INT, r, 1, MPI_INT, 0, c); break;
        case 5: MPI_Reduce_scatter(s, r, one, MPI_INT, MPI_SUM, c); break;
        case 6: MPI_Reduce_scatter_block(s, r, 1, MPI_INT, MPI_SUM, c); break;
        case 7: MPI_Scan(s, r, 2, MPI_INT, MPI_SUM, c); break;
        case 8: MPI_Exscan(s, r, 2, MPI_INT, MPI_SUM, c); break;
        case 9: MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INT, r, one, d, MPI_INT, c); break;
        default: MPI_Alltoallv(s, one, d, MPI_INT, r, one, d, MPI_INT, c); break;
        }
        return;
    }
    switch (k) {
    case 0: MPI_Ialltoallv(s, one, d, MPI_INT, r, one, d, MPI_INT, c, &q); break;
    case 1: MPI_Ialltoallw(s, one, dw, ti, r, one, dw, ti, c, &q); break;
    case 2: MPI_Iallgatherv(s, 1, MPI_INT, r, one, d, MPI_INT, c, &q); break;
    case 3: MPI_Igatherv(s, 1, MPI_INT, r, one, d, MPI_INT, 1, c, &q); break;
    case 4: MPI_Iscatterv(s, one, d, MPI_INT, r, 1, MPI_INT, 0, c, &q); break;
    case 5: MPI_Ireduce_scatter(s, r, one, MPI_INT, MPI_SUM, c, &q); break;
    case 6: MPI_Ireduce_scatter_block(s, r, 1, MPI_INT, MPI_SUM, c, &q); break;
    case 7: MPI_Iscan(s, r, 2, MPI_INT, MPI_SUM, c, &q); break;
    case 8: MPI_Iexscan(s, r, 2, MPI_INT, MPI_SUM, c, &q); break;
    case 9: MPI_Iscatter(s, 1, MPI_INT, r, 1, MPI_INT, 1, c, &q); break;
    default: MPI_Ialltoall(s, 1, MPI_INT, r, 1, MPI_INT, c, &q); break;
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, v;
    long x = 0;
    int mem[ROUNDS] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int k = 0; k < ROUNDS; k++) {
        int late = !SAFE && k == HAZARD_ROUND;
        if (rank == 0) {
            v = 100 + k;
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Put(&v, 1, MPI_INT, 1, k, 1, MPI_INT, win);
            if (!late)
                MPI_Win_unlock(1, win);
        }
        coll(k);
        if (rank == 0 && late)
            MPI_Win_unlock(1, win);
        if (rank == 1)
            x += *(volatile int *)&mem[k];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
