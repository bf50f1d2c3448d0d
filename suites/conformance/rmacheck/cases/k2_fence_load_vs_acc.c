/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=3
 * Ranks 1 and 2 accumulate into rank 0's window in a fence epoch; rank 0 reads it inside the
 * same epoch (MPI_Win_create memory). Twin: ..._safe.c reads after the closing fence. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, v = 1, s = 0;
    int mem[4] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank > 0)
        MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    if (rank == 0 && !SAFE)
        s = *(volatile int *)&mem[0];
    MPI_Win_fence(0, win);
    if (rank == 0 && SAFE)
        s = *(volatile int *)&mem[0];
    MPI_Win_free(&win);
    MPI_Finalize();
    return s == 12345;
}
