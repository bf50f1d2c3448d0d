/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * Ranks 1 and 2 accumulate into the same element of rank 0 concurrently, one with MPI_SUM and
 * one with MPI_MAX: only accumulates with the same operation (or MPI_NO_OP) may be concurrent
 * (accumulate_ops defaults to same_op_no_op). Twin: ..._safe.c separates them by a fence. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank;
    long *buf, v = 3;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
    if (SAFE)
        MPI_Win_fence(0, win);
    if (rank == 2)
        MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_MAX, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
