/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * Rank 0 exposes its window to ranks 1 and 2 in one post/wait epoch; both put to element 0.
 * Twin: ..._safe.c exposes it to rank 1, waits, then to rank 2. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v;
    MPI_Win win;
    MPI_Group world, g0, g12, g1, g2;
    int r0 = 0, r12[2] = {1, 2}, r1 = 1, r2 = 2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r0, &g0);
    MPI_Group_incl(world, 2, r12, &g12);
    MPI_Group_incl(world, 1, &r1, &g1);
    MPI_Group_incl(world, 1, &r2, &g2);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        if (SAFE) {
            MPI_Win_post(g1, 0, win);
            MPI_Win_wait(win);
            MPI_Win_post(g2, 0, win);
            MPI_Win_wait(win);
        } else {
            MPI_Win_post(g12, 0, win);
            MPI_Win_wait(win);
        }
    } else {
        MPI_Win_start(g0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_complete(win);
    }
    MPI_Win_free(&win);
    MPI_Group_free(&g0);
    MPI_Group_free(&g12);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);
    MPI_Group_free(&world);
    MPI_Finalize();
    return 0;
}
