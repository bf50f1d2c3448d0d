/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=3 lib=nbrma
 * With MPIX_E_A_E_R on rank 0's window, its second exposure epoch (to rank 2) may be activated
 * while the first (to rank 1) is still active, so the puts of ranks 1 and 2 to element 0 may land
 * together; without the flag the second exposure is announced only after the first completed
 * (legal). Twin: ..._safe.c sets the flag to "false". */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v;
    MPI_Win win;
    MPI_Info info;
    MPI_Request rq[4];
    MPI_Group world, g0, g1, g2;
    int r0 = 0, r1 = 1, r2 = 2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r0, &g0);
    MPI_Group_incl(world, 1, &r1, &g1);
    MPI_Group_incl(world, 1, &r2, &g2);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIX_E_A_E_R, SAFE ? "false" : "true");
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &buf, &win);
    MPI_Info_free(&info);
    if (rank == 0) {
        MPIX_Win_ipost(g1, 0, win, &rq[0]);
        MPIX_Win_iwait(win, &rq[1]);
        MPIX_Win_ipost(g2, 0, win, &rq[2]);
        MPIX_Win_iwait(win, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    } else {
        MPIX_Win_istart(g0, 0, win, &rq[0]);
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPIX_Win_icomplete(win, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);
    MPI_Group_free(&world);
    MPI_Finalize();
    return 0;
}
