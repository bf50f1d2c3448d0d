/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 1 puts into elements 2..3 of rank 0's window while rank 0 memcpy's four ints into
 * elements 0..3 in the same fence epoch: the store is a libc call, not a plain assignment. Twin:
 * ..._safe.c copies before the fence that opens the epoch. */
#include <mpi.h>
#include <string.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v[2] = {9, 9}, src[4] = {1, 2, 3, 4};
    size_t n = (size_t)(argc + 3) * sizeof(int); /* 16 bytes, unknown to the compiler */
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0 && SAFE)
        memcpy(buf, src, n);
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Put(v, 2, MPI_INT, 0, 2, 2, MPI_INT, win);
    if (rank == 0 && !SAFE)
        memcpy(buf, src, n);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
