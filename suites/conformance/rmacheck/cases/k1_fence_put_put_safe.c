/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_fence_put_put.c: rank 1 puts in the first fence epoch, rank 2 in the second. */
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, *buf, v;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (rank == 2)
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
