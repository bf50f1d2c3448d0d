/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=2
 * Rank 0 puts to rank 1 with no epoch open (a fence is missing before it; the vendor may abort).
 * Twin: ..._safe.c opens a passive-target epoch around the put. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 7;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        if (SAFE)
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        if (SAFE)
            MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
