/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3 env=OMPI_MCA_osc=sm
 * A lock built from MPI_Compare_and_swap: ranks 1 and 2 each take a spin lock on rank 0
 * (CAS 0 -> my rank until it succeeds), add to a counter there with get + put, and release the
 * lock with MPI_Fetch_and_op(MPI_REPLACE). The release comes before the put is flushed: the next
 * holder's get may run while the put is still in flight (a put and an accumulate of one epoch
 * are not ordered, MPI-3.1 §11.7.2), so the two critical sections race.
 * Twin: ..._safe.c flushes the put before the release. Open MPI's osc/rdma crashes on CAS +
 * flush under lock_all (known failure): osc/sm there. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
#define LOCKW 8
int main(int argc, char **argv)
{
    int rank;
    long *mem, zero = 0, me, old, v = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    mem[0] = mem[1] = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    me = rank;
    MPI_Win_lock_all(0, win);
    if (rank > 0) {
        do {
            MPI_Compare_and_swap(&me, &zero, &old, MPI_LONG, 0, LOCKW, win);
            MPI_Win_flush(0, win);
        } while (old != 0);
        MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        v += rank;
        MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        if (SAFE)
            MPI_Win_flush(0, win);
        MPI_Fetch_and_op(&zero, &old, MPI_LONG, 0, LOCKW, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
