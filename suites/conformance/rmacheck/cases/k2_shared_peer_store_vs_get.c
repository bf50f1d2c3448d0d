/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=3
 * A shared-memory window: rank 2 stores into rank 0's segment through its own mapping while
 * rank 1 gets the same bytes with MPI_Get in a lock_all epoch. Twin: ..._safe.c: the store,
 * MPI_Win_sync and a barrier come before the get. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, got = 0, du;
    double *mine, *seg0;
    MPI_Aint sz;
    MPI_Win win;
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Win_allocate_shared(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, node, &mine, &win);
    MPI_Win_shared_query(win, 0, &sz, &du, &seg0);
    MPI_Win_lock_all(0, win);
    if (rank == 2)
        seg0[3] = 2.5;
    if (SAFE) {
        MPI_Win_sync(win);
        MPI_Barrier(node);
    }
    if (rank == 1) {
        double d;
        MPI_Get(&d, 1, MPI_DOUBLE, 0, 3, 1, MPI_DOUBLE, win);
        MPI_Win_flush(0, win);
        got = d > 0;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return got == 12345;
}
