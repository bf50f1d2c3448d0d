/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 1 puts into element 5 of rank 0's window (lock epoch) while rank 0 memcpy's elements 4..7
 * out of its window (a load through libc) with nothing ordering the copy after the unlock. Twin:
 * ..._safe.c copies after a barrier that follows the unlock. */
#include <mpi.h>
#include <string.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, v = 11, out[4] = {0};
    size_t n = (size_t)(argc + 3) * sizeof(int); /* 16 bytes, unknown to the compiler */
    int *mem;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    if (SAFE)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        memcpy(out, mem + 4, n);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return out[1] == 12345;
}
