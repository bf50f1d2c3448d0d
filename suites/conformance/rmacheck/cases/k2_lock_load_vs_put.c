/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 1 puts into rank 0's window in a passive-target epoch; rank 0 reads that element with no
 * synchronization ordering the read after the unlock. Twin: ..._safe.c reads after a barrier that
 * follows the unlock. */
#include <mpi.h>
#include <stdio.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, v = 11;
    long x = 0;
    int mem[16] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    if (SAFE)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        x = *(volatile int *)&mem[5];
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
