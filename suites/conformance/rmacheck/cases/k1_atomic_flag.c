/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3 env=OMPI_MCA_osc=sm
 * A flag raised with an atomic: rank 1 puts data into rank 0's window and raises a flag there
 * with MPI_Fetch_and_op; rank 2 polls the flag with MPI_Fetch_and_op(MPI_NO_OP) and, once it is
 * up, gets the data. Rank 1 raises the flag before flushing its put: MPI does not order a put
 * and an accumulate of one epoch (MPI-3.1 §11.7.2), so the put may still be in flight when rank
 * 2 sees the flag, and its get races with it.
 * Twin: ..._safe.c flushes the put before raising the flag; the atomic then orders the get after
 * it (rmacheck follows atomics as synchronization: the flag's clock). Open MPI's osc/rdma
 * crashes on fetch-and-op + flush under lock_all (known failure): osc/sm there. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
#define FLAG (4 * sizeof(int))
int main(int argc, char **argv)
{
    int rank, data[4] = {1, 2, 3, 4}, got[4] = {0};
    long *base, one = 1, old = 0;
    char *mem;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(32, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    base = (long *)(mem + FLAG);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *base = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 1) {
        MPI_Put(data, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
        if (SAFE)
            MPI_Win_flush(0, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, FLAG, MPI_SUM, win);
        MPI_Win_flush(0, win);
    } else if (rank == 2) {
        do {
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, FLAG, MPI_NO_OP, win);
            MPI_Win_flush(0, win);
        } while (old == 0);
        MPI_Get(got, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
