/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=3
 * Ranks 1 and 2 put to the same element of rank 0 inside one lock_all epoch each. Rank 1
 * flushes, then tells rank 2 with point-to-point messages of every kind (MPI_Ssend, MPI_Isend,
 * MPI_Bsend, a persistent send; received with MPI_Recv, MPI_Irecv + MPI_Waitall, MPI_Irecv from
 * MPI_ANY_SOURCE + MPI_Test) — but rank 2 puts before it receives them: the puts race.
 * Twin: k1_p2p_order_safe.c receives first, which orders the puts. */
#include <mpi.h>
#include <stdlib.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v, t[4] = {0, 0, 0, 0};
    MPI_Win win;
    MPI_Request q[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank;
    int bsz = 4096;
    char *bb = malloc((size_t)bsz);
    MPI_Buffer_attach(bb, bsz);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    MPI_Win_lock_all(0, win);
    if (rank == 1) {
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        MPI_Ssend(&v, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
        MPI_Isend(&v, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Bsend(&v, 1, MPI_INT, 2, 3, MPI_COMM_WORLD);
        MPI_Send_init(&v, 1, MPI_INT, 2, 4, MPI_COMM_WORLD, &q[1]);
        MPI_Start(&q[1]);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        MPI_Request_free(&q[1]);
    } else if (rank == 2) {
        if (!SAFE)
            MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        MPI_Recv(&t[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(&t[1], 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(&t[2], 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        int done = 0;
        MPI_Irecv(&t[3], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q[2]);
        while (!done)
            MPI_Test(&q[2], &done, MPI_STATUS_IGNORE);
        if (SAFE)
            MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Buffer_detach(&bb, &bsz);
    free(bb);
    MPI_Finalize();
    return 0;
}
