/* rmacheck-case: expect=hazard kind=origin-buffer ranks=3
 * Rank 0 reuses the origin buffer of an MPI_Rput before its request completed.
 * Twin: ..._safe.c waits for the request first. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf;
    double src[4] = {1, 2, 3, 4};
    MPI_Request rq;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(8 * sizeof(double), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        MPI_Rput(src, 4, MPI_DOUBLE, 2, 0, 4, MPI_DOUBLE, win, &rq);
        if (SAFE)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        src[0] = 10;
        if (!SAFE)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return src[0] == 12345;
}
