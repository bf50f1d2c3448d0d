/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=3
 * Rank 0 exposes its window to ranks 1 and 2, which put into it; rank 0 reads the window before
 * MPI_Win_wait. Twin: ..._safe.c reads after MPI_Win_wait. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v, sum = 0;
    MPI_Win win;
    MPI_Group world, g0, g12;
    int r0 = 0, r12[2] = {1, 2};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r0, &g0);
    MPI_Group_incl(world, 2, r12, &g12);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPI_Win_post(g12, 0, win);
        if (!SAFE)
            sum = buf[1] + buf[2];
        MPI_Win_wait(win);
        if (SAFE)
            sum = buf[1] + buf[2];
    } else {
        MPI_Win_start(g0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
        MPI_Win_complete(win);
    }
    MPI_Win_free(&win);
    MPI_Group_free(&g0);
    MPI_Group_free(&g12);
    MPI_Group_free(&world);
    MPI_Finalize();
    return sum == 12345;
}
