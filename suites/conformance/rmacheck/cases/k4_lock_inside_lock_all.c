/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=3
 * Rank 0 locks rank 2 while its lock_all epoch (which covers rank 2) is open.
 * Twin: ..._safe.c closes the lock_all epoch first. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        if (SAFE)
            MPI_Win_unlock_all(win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
        MPI_Win_unlock(2, win);
        if (!SAFE)
            MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
