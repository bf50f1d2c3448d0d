/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2
 * Rank 0 overwrites the origin buffer of a put before the put is complete locally.
 * Twin: ..._safe.c calls MPI_Win_flush_local first. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v[4] = {1, 2, 3, 4};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Put(v, 4, MPI_INT, 1, 0, 4, MPI_INT, win);
        if (SAFE)
            MPI_Win_flush_local(1, win);
        v[3] = 40;
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return v[3] == 0;
}
