/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 0 closes a lock epoch with MPIX_Win_iunlock and overwrites the put's origin buffer before
 * the closing request completed. Twin: ..._safe.c waits for the request first. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v[2] = {1, 2};
    MPI_Win win;
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(v, 2, MPI_INT, 1, 0, 2, MPI_INT, win);
        MPIX_Win_iunlock(1, win, &rq);
        if (SAFE)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        v[0] = 5;
        if (!SAFE)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return v[0] == 12345;
}
