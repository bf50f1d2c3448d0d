/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2
 * Rank 0 reads the result buffer of an MPI_Get before the get completed (before the unlock).
 * Twin: ..._safe.c reads it after MPI_Win_unlock. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, got[2] = {0, 0}, x = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Get(got, 2, MPI_INT, 1, 0, 2, MPI_INT, win);
        if (!SAFE)
            x = *(volatile int *)&got[1];
        MPI_Win_unlock(1, win);
        if (SAFE)
            x = *(volatile int *)&got[1];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
