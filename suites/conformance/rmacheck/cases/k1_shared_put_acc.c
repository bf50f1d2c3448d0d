/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * A shared-memory window in fence epochs: rank 1 puts and rank 2 accumulates into the same
 * element of rank 0 in one epoch (a put is not an accumulate: no atomicity between them).
 * Twin: ..._safe.c: a fence between the put and the accumulate. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *mine, v = 1;
    MPI_Win win;
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
    if (SAFE)
        MPI_Win_fence(0, win);
    if (rank == 2)
        MPI_Accumulate(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
