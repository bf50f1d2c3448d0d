/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Ranks 1 and 2 put to the same bytes of rank 0 under exclusive locks: the epochs exclude each other.
 * Twin of k1_lock_shared_put_put.c. */
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, v;
    double mem[8] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank > 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 8, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
