/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=2 env=OMPI_MCA_osc=sm
 * Rank 0 compare-and-swaps a flag on rank 1 while rank 1 puts to its own flag through the window,
 * both in lock_all epochs: a put is not atomic with respect to the CAS.
 * Twin: ..._safe.c: rank 1 flushes its put and a barrier orders it before the CAS.
 * Open MPI 4.1.4's default one-sided component (osc/rdma) crashes on this program (CAS + flush
 * under lock_all; suites/conformance/known-failures), often before rank 1's put happens: the
 * case runs on osc/sm there. MPICH ignores the variable. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank;
    long *buf, one = 1, zero = 0, old = -1, v = 7;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_lock_all(0, win);
    if (rank == 1) {
        MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
        MPI_Win_flush(1, win);
    }
    if (SAFE)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Compare_and_swap(&one, &zero, &old, MPI_LONG, 1, 0, win);
        MPI_Win_flush(1, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return old == 12345;
}
