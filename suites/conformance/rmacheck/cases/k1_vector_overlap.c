/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * Derived datatypes: rank 1 puts column 0 of a 4x4 matrix on rank 0 (a vector type), rank 2
 * puts row 2 in the same fence epoch; they share element (2,0). Disjoint parts of the two
 * footprints must not matter, the shared element must. Twin: ..._safe.c: a fence between. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, src[4] = {1, 2, 3, 4};
    MPI_Datatype col;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_vector(4, 1, 4, MPI_INT, &col);
    MPI_Type_commit(&col);
    MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Put(src, 4, MPI_INT, 0, 0, 1, col, win);
    if (SAFE)
        MPI_Win_fence(0, win);
    if (rank == 2)
        MPI_Put(src, 4, MPI_INT, 0, 8, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Type_free(&col);
    MPI_Finalize();
    return 0;
}
