/* rmacheck-case: expect=hazard kind=epoch-misuse ranks=3
 * Rank 0 starts an access epoch toward rank 1 only and then gets from rank 2 in it.
 * Twin: ..._safe.c starts the epoch toward ranks 1 and 2 (both post to rank 0). */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, got = 0, r0 = 0, r1 = 1, r12[2] = {1, 2};
    MPI_Win win;
    MPI_Group world, g0, g1, g12;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r0, &g0);
    MPI_Group_incl(world, 1, &r1, &g1);
    MPI_Group_incl(world, 2, r12, &g12);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_start(SAFE ? g12 : g1, 0, win);
        MPI_Get(&got, 1, MPI_INT, 2, 0, 1, MPI_INT, win);
        MPI_Win_complete(win);
    } else if (rank == 1 || SAFE) {
        MPI_Win_post(g0, 0, win);
        MPI_Win_wait(win);
    }
    MPI_Win_free(&win);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&g12);
    MPI_Group_free(&world);
    MPI_Finalize();
    return got == 12345;
}
