/* rmacheck-case: expect=hazard kind=origin-buffer ranks=3
 * A shared-memory window; rank 2 overwrites the result buffer of its MPI_Get_accumulate toward
 * rank 1 before the operation completed. Twin: ..._safe.c flushes first. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *mine, in = 4, res = 0;
    MPI_Win win;
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    MPI_Win_lock_all(0, win);
    if (rank == 2) {
        MPI_Get_accumulate(&in, 1, MPI_INT, &res, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
        if (SAFE)
            MPI_Win_flush(1, win);
        res = 0;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return res == 12345;
}
