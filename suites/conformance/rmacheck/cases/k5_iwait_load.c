/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=3 lib=nbrma
 * Rank 0 closes its exposure epoch with MPIX_Win_iwait and reads the window before that request
 * completed, while ranks 1 and 2 put into it. Twin: ..._safe.c reads after MPI_Wait. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v, s = 0;
    MPI_Win win;
    MPI_Request rq[2];
    MPI_Group world, g0, g12;
    int r0 = 0, r12[2] = {1, 2};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r0, &g0);
    MPI_Group_incl(world, 2, r12, &g12);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    buf[0] = buf[1] = buf[2] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPIX_Win_ipost(g12, 0, win, &rq[0]);
        MPIX_Win_iwait(win, &rq[1]);
        if (SAFE)
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE), MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        s = *(volatile int *)&buf[1];
        if (!SAFE)
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE), MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    } else {
        MPIX_Win_istart(g0, 0, win, &rq[0]);
        MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
        MPIX_Win_icomplete(win, &rq[1]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE), MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Group_free(&g0);
    MPI_Group_free(&g12);
    MPI_Group_free(&world);
    MPI_Finalize();
    return s == 12345;
}
