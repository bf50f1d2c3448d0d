/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 1 gets 64 bytes of rank 0's window in a passive-target epoch while rank 0 clears its
 * window with memset (a constant size GCC would otherwise expand inline, unhooked); nothing orders
 * the memset before the get. Twin: ..._safe.c clears it before a barrier that precedes the lock. */
#include <mpi.h>
#include <string.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, res[16];
    int mem[16] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 0 && SAFE)
        memset(mem, 0xff, sizeof mem);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(res, 16, MPI_INT, 0, 0, 16, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    if (rank == 0 && !SAFE)
        memset(mem, 0xff, sizeof mem);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return rank == 1 && res[3] == 12345;
}
