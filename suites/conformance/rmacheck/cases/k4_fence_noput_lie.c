/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=3
 * Rank 0 asserts MPI_MODE_NOPUT (its window is not updated by puts in the next epoch), yet rank
 * 2 accumulates into it in that epoch. Twin: ..._safe.c: rank 0 does not assert it. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 5;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_fence(rank == 0 && !SAFE ? MPI_MODE_NOPUT : 0, win);
    if (rank == 2)
        MPI_Accumulate(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
