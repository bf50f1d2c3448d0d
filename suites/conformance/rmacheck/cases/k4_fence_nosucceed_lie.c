/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=2
 * A fence with MPI_MODE_NOSUCCEED (no epoch follows) is followed by a get before the next fence.
 * Twin: ..._safe.c passes assert 0 on that fence. */
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
    MPI_Win_fence(SAFE ? 0 : MPI_MODE_NOSUCCEED, win);
    if (rank == 0)
        MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
