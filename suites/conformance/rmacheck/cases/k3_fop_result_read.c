/* rmacheck-case: expect=hazard kind=origin-buffer ranks=3
 * Ranks 1 and 2 fetch-and-add a counter on rank 0 and read the fetched value before a flush
 * completed the operation. Twin: ..._safe.c calls MPI_Win_flush_local first. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank;
    long *buf, one = 1, old = -1, x = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    *buf = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
        if (SAFE)
            MPI_Win_flush_local(0, win);
        x = *(volatile long *)&old;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
