/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * Ranks 0 and 2 accumulate (MPI_SUM) one MPI_INT each into rank 1's byte-addressed window
 * (disp_unit 1), at displacements 0 and 2: same op, same basic type, but the two ints share only
 * two bytes. MPI makes accumulates atomic per element at the same location (MPI-3.1 §11.7.1);
 * elements that partly overlap are not, so the concurrent updates race.
 * Twin: ..._safe.c: rank 2 accumulates only after rank 0's flush and a barrier. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, one = 1;
    char *buf;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    for (int i = 0; i < 16; i++)
        buf[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
        if (SAFE)
            MPI_Win_flush(1, win);
    }
    if (SAFE)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2)
        MPI_Accumulate(&one, 1, MPI_INT, 1, 2, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
