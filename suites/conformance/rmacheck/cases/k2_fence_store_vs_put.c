/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 1 puts into element 2 of rank 0's window while rank 0 stores to the same element in the
 * same fence epoch. Twin: ..._safe.c stores before the fence that opens the epoch. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 9;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0 && SAFE)
        buf[2] = 1;
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
    if (rank == 0 && !SAFE)
        buf[2] = 1;
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
