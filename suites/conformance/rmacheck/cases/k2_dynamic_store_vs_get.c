/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * A dynamic window: rank 1 attaches a buffer and stores to it while rank 0 gets it in a
 * lock_all epoch, with nothing ordering the two. Twin: ..._safe.c stores before the barrier that
 * publishes the address. */
#include <mpi.h>
#include <stdlib.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank;
    long *mem = calloc(8, sizeof(long)), got = 0;
    MPI_Aint addr = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, mem, 8 * sizeof(long));
    MPI_Get_address(mem, &addr);
    MPI_Bcast(&addr, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    if (rank == 1 && SAFE)
        mem[2] = 77;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0)
        MPI_Get(&got, 1, MPI_LONG, 1, addr + 2 * (MPI_Aint)sizeof(long), 1, MPI_LONG, win);
    if (rank == 1 && !SAFE)
        mem[2] = 77;
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    free(mem);
    MPI_Finalize();
    return got == 12345;
}
