/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=2
 * Rank 0 issues two MPI_Rput to the same bytes; waiting for the first request only completes it
 * locally, so the two puts may still reach the target in either order.
 * Twin: ..._safe.c flushes between them. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, a = 1, b = 2;
    MPI_Request rq;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        MPI_Rput(&a, 1, MPI_INT, 1, 0, 1, MPI_INT, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (SAFE)
            MPI_Win_flush(1, win);
        MPI_Rput(&b, 1, MPI_INT, 1, 0, 1, MPI_INT, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
