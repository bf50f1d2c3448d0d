/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 0 puts into rank 1's element 0 in a lock epoch closed by MPIX_Win_iunlock, then exposes
 * its window to rank 1. Without a flag the exposure is announced only after the lock epoch
 * completed, so once rank 1's matching access epoch completed the put is in place and rank 1 may
 * read element 0. With MPIX_E_A_A_R the exposure may pass the lock epoch: the read races with the
 * put. Twin: ..._safe.c sets the flag to "false". */
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
    MPI_Request rq[3];
    MPI_Group world, peer;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int other = 1 - rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &other, &peer);
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIX_E_A_A_R, SAFE ? "false" : "true");
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &buf, &win);
    MPI_Info_free(&info);
    buf[0] = buf[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &rq[0]);
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPIX_Win_iunlock(1, win, &rq[0]);
        MPIX_Win_ipost(peer, 0, win, &rq[1]);
        MPIX_Win_iwait(win, &rq[2]);
        MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    } else {
        MPIX_Win_istart(peer, 0, win, &rq[0]);
        MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        MPIX_Win_icomplete(win, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        s = *(volatile int *)&buf[0];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Finalize();
    return s == 12345;
}
