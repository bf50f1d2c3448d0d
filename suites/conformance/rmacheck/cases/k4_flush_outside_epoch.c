/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=2
 * MPI_Win_flush toward rank 1 after the lock_all epoch was closed.
 * Twin: ..._safe.c flushes before MPI_Win_unlock_all. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 3;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        if (SAFE)
            MPI_Win_flush(1, win);
        MPI_Win_unlock_all(win);
        if (!SAFE)
            MPI_Win_flush(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
