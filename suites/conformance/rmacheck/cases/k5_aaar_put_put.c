/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * With MPIX_A_A_A_R on the window, two consecutive lock epochs of rank 0 toward rank 1 may run
 * out of order; both put to the same element, so the final value is undefined (legal without
 * the flag). Twin: ..._safe.c waits for the first epoch's iunlock before opening the second. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, a = 1, b = 2;
    MPI_Win win;
    MPI_Info info;
    MPI_Request rq[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIX_A_A_A_R, "true");
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &buf, &win);
    MPI_Info_free(&info);
    if (rank == 0) {
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &rq[0]);
        MPI_Put(&a, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPIX_Win_iunlock(1, win, &rq[0]);
        if (SAFE)
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &rq[1]);
        MPI_Put(&b, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPIX_Win_iunlock(1, win, &rq[1]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE), MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
