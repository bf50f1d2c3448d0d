/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2
 * Rank 0 gets two different elements of rank 1 into the same local variable in one fence epoch:
 * both gets write that buffer until the epoch's closing fence, in any order — a race inside the
 * MPI library, with no load or store of the program involved.
 * Twin: ..._safe.c completes the first get (MPI_Win_flush inside lock_all) before the second. */
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
    buf[0] = 10 * rank;
    buf[1] = 10 * rank + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        if (SAFE)
            MPI_Win_flush(1, win);
        MPI_Get(&got, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return SAFE && rank == 0 && got != 11;
}
