/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * MPI_Win_create window: under shared locks rank 1 gets the bytes rank 2 puts, concurrently.
 * Twin: ..._safe.c takes exclusive locks, so the epochs exclude each other. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
#define LOCK (SAFE ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED)
int main(int argc, char **argv)
{
    int rank, v = 4, got = 0;
    long mem[4] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 1) {
        MPI_Win_lock(LOCK, 0, 0, win);
        MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    } else if (rank == 2) {
        MPI_Win_lock(LOCK, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return got == 12345;
}
