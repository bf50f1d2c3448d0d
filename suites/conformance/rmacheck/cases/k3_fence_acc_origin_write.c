/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2
 * Rank 1 updates the origin buffer of an MPI_Accumulate before the fence that completes it.
 * Twin: ..._safe.c updates it after the fence. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank;
    long *buf, v[2] = {1, 1};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_fence(0, win);
    if (rank == 1) {
        MPI_Accumulate(v, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, win);
        if (!SAFE)
            v[1] = 2;
    }
    MPI_Win_fence(0, win);
    if (rank == 1 && SAFE)
        v[1] = 2;
    MPI_Win_free(&win);
    MPI_Finalize();
    return v[1] == 12345;
}
