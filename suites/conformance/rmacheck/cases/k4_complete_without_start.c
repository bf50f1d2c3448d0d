/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=2
 * Rank 1 calls MPI_Win_complete without MPI_Win_start (the start was forgotten; rank 0 exposes
 * nothing either). Twin: ..._safe.c has the matching start and post. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, peer;
    MPI_Win win;
    MPI_Group world, g;
    void *base;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &g);
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (rank == 1) {
        if (SAFE)
            MPI_Win_start(g, 0, win);
        MPI_Win_complete(win);
    } else if (SAFE) {
        MPI_Win_post(g, 0, win);
        MPI_Win_wait(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Finalize();
    return 0;
}
