/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * Ranks 1 and 2 put to the same element of rank 0 in one fence epoch: the result is undefined.
 * Twin: k1_fence_put_put_safe.c puts them in two epochs. */
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
    if (rank > 0)
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
