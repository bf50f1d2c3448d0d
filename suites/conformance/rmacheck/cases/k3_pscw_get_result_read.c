/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2
 * Rank 1 reads the result of an MPI_Get in a start/complete epoch before MPI_Win_complete.
 * Twin: ..._safe.c reads it after MPI_Win_complete. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, peer, *buf, got = 0, x = 0;
    MPI_Win win;
    MPI_Group world, g;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &g);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_post(g, 0, win);
        MPI_Win_wait(win);
    } else {
        MPI_Win_start(g, 0, win);
        MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        if (!SAFE)
            x = *(volatile int *)&got;
        MPI_Win_complete(win);
        if (SAFE)
            x = *(volatile int *)&got;
    }
    MPI_Win_free(&win);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Finalize();
    return x == 12345;
}
