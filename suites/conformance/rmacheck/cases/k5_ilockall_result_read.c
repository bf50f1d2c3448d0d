/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 0 gets two ints from rank 1 in an MPIX_Win_ilock_all epoch, closes it with
 * MPIX_Win_iunlock_all and reads the result buffer before the closing request completed. Twin:
 * ..._safe.c waits for the request first. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, res[2] = {0, 0}, s = 0;
    MPI_Win win;
    MPI_Request rq[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    buf[0] = buf[1] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPIX_Win_ilock_all(0, win, &rq[0]);
        MPI_Get(res, 2, MPI_INT, 1, 0, 2, MPI_INT, win);
        MPIX_Win_iunlock_all(win, &rq[1]);
        if (SAFE)
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        s = *(volatile int *)&res[1];
        if (!SAFE)
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return s == 12345;
}
