/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 1 puts into element 1 of rank 0's window in a fence epoch; both close it with
 * MPIX_Win_ifence, and rank 0 stores to element 1 before its ifence request completed, while the
 * put may still be landing. Twin: ..._safe.c stores after waiting for the request. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 8;
    MPI_Win win;
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPIX_Win_ifence(0, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (rank == 1)
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &rq);
    if (SAFE)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (rank == 0)
        *(volatile int *)&buf[1] = 2;
    if (!SAFE)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
