/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 0 exposes its window to rank 1 (ipost, iwait), then opens a lock epoch toward rank 1 and
 * waits for the ilock request (the lock is granted) before reading element 0, which rank 1 puts.
 * Without a flag the lock epoch is activated, hence granted, only after the exposure completed,
 * so the put is in place. With MPIX_A_A_E_R the lock may be granted while the exposure is still
 * active: the read races with the put. Twin: ..._safe.c sets the flag to "false". */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v = 7, s = 0;
    MPI_Win win;
    MPI_Info info;
    MPI_Request rq[4];
    MPI_Group world, peer;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int other = 1 - rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &other, &peer);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIX_A_A_E_R, SAFE ? "false" : "true");
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &buf, &win);
    MPI_Info_free(&info);
    buf[0] = buf[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPIX_Win_ipost(peer, 0, win, &rq[0]);
        MPIX_Win_iwait(win, &rq[1]);
        MPIX_Win_ilock(MPI_LOCK_SHARED, 1, 0, win, &rq[2]);
        MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
        s = *(volatile int *)&buf[0];
        MPIX_Win_iunlock(1, win, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    } else {
        MPIX_Win_istart(peer, 0, win, &rq[0]);
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPIX_Win_icomplete(win, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Finalize();
    return s == 12345;
}
