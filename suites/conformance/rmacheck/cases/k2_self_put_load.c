/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Each rank puts into its own window and loads the element before the put is complete.
 * Twin: ..._safe.c flushes before the load. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 3, x;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    MPI_Put(&v, 1, MPI_INT, rank, 0, 1, MPI_INT, win);
    if (SAFE)
        MPI_Win_flush(rank, win);
    x = buf[0];
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
