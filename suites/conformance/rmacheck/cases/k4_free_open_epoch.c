/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=2
 * Rank 0 frees the window while its lock epoch toward rank 1 is still open.
 * Twin: ..._safe.c unlocks before MPI_Win_free. */
#include <mpi.h>
#include <stdlib.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, v = 1, *mem = calloc(8, sizeof(int));
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&v, 1, MPI_INT, 1, 3, 1, MPI_INT, win);
        if (SAFE)
            MPI_Win_unlock(1, win);
    }
    MPI_Win_free(&win);
    free(mem);
    MPI_Finalize();
    return 0;
}
