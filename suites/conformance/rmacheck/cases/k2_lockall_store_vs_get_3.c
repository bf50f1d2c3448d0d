/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=3
 * Rank 0 updates its MPI_Win_allocate window while ranks 1 and 2 read it with MPI_Get in a
 * lock_all epoch. Twin: ..._safe.c: rank 0 updates inside an exclusive lock on itself and the
 * readers take shared locks, so the epochs exclude each other. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, got = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    buf[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (SAFE)
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        buf[1] = 8;
        if (SAFE)
            MPI_Win_unlock(0, win);
    } else {
        if (SAFE)
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        else
            MPI_Win_lock_all(0, win);
        MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        if (SAFE)
            MPI_Win_unlock(0, win);
        else
            MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return got == 12345;
}
