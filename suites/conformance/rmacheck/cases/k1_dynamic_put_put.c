/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * A dynamic window: ranks 1 and 2 put to the same attached bytes of rank 0 in lock_all epochs
 * with nothing ordering them. Twin: ..._safe.c: rank 1 flushes, then a barrier, then rank 2. */
#include <mpi.h>
#include <stdlib.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, v;
    int *mem = calloc(16, sizeof(int));
    MPI_Aint addr;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 0)
        MPI_Win_attach(win, mem, 16 * sizeof(int));
    MPI_Get_address(mem + 4, &addr);
    MPI_Bcast(&addr, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 1) {
        MPI_Put(&v, 1, MPI_INT, 0, addr, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
    }
    if (SAFE)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2)
        MPI_Put(&v, 1, MPI_INT, 0, addr, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    free(mem);
    MPI_Finalize();
    return 0;
}
