/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=2
 * One origin puts and then gets the same bytes in one lock_all epoch: without a flush between
 * them MPI does not order a put and a get. Twin: ..._safe.c flushes between them. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 42, got = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        MPI_Put(&v, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
        if (SAFE)
            MPI_Win_flush(1, win);
        MPI_Get(&got, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
