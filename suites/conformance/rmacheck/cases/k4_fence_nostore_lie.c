/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=2
 * Rank 1 stores to its window and then closes the epoch with MPI_MODE_NOSTORE, asserting that
 * no local store updated the window since the last fence. Twin: ..._safe.c passes 0. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, got = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_fence(0, win);
    if (rank == 1)
        buf[0] = 3;
    MPI_Win_fence(rank == 1 && !SAFE ? MPI_MODE_NOSTORE : 0, win);
    if (rank == 0)
        MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return got == 12345;
}
