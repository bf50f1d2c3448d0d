/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 0 sends rank 1 two messages with the same tag on two communicators: an early one on
 * MPI_COMM_WORLD, then (lock, put into rank 1's window) a "done" one on a split of it, still
 * inside the lock epoch, so the put may not have reached rank 1's memory. Rank 1 receives "done"
 * first (messages of different communicators are not ordered) and loads the element: a race.
 * The communicator is made by MPI_Comm_split and a dup of it, the freed dup's handle reused.
 * Twin: ..._safe.c sends "done" after the unlock. Its clock must pair with the "done" message,
 * not with the early one (one clock channel for all communicators paired them in send order, a
 * false alarm). */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 42, early = 1, done = 2, got = 0;
    volatile int seen = 0; /* keeps the load */
    MPI_Win win;
    MPI_Comm split, dup;
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split);
    MPI_Comm_dup(split, &dup); /* freed at once: its handle may come back for the next one */
    MPI_Comm_free(&dup);
    MPI_Comm_dup(split, &dup);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    buf[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Isend(&early, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &rq);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        if (!SAFE)
            MPI_Send(&done, 1, MPI_INT, 1, 0, dup);
        MPI_Win_unlock(1, win);
        if (SAFE)
            MPI_Send(&done, 1, MPI_INT, 1, 0, dup);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(&got, 1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE);
        seen = buf[0];
        MPI_Recv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Finalize();
    return SAFE && rank == 1 && seen != 42;
}
