/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 0 gets from rank 1 inside a lock epoch, calls MPIX_Win_iflush and reads the result buffer
 * before the iflush request completed (the lock is still held). Twin: ..._safe.c waits for the
 * iflush request first. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, res = 0, s = 0;
    MPI_Win win;
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    buf[2] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Get(&res, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
        MPIX_Win_iflush(1, win, &rq);
        if (SAFE)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        s = *(volatile int *)&res;
        if (!SAFE)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return s == 12345;
}
