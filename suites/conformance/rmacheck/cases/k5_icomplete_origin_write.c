/* rmacheck-case: expect=hazard kind=nonblocking-epoch ranks=2 lib=nbrma
 * Rank 1 puts a buffer to rank 0 in an MPIX_Win_istart epoch, closes it with
 * MPIX_Win_icomplete and overwrites the origin buffer before the closing request completed. Twin:
 * ..._safe.c waits for the request first. */
#include <mpi.h>
#include <nbrma.h>
#ifndef SAFE
#define SAFE 0
#endif
int main(int argc, char **argv)
{
    int rank, *buf, v[2] = {3, 4};
    MPI_Win win;
    MPI_Request rq[2];
    MPI_Group world, peer;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int other = 1 - rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &other, &peer);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        MPIX_Win_ipost(peer, 0, win, &rq[0]);
        MPIX_Win_iwait(win, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    } else {
        MPIX_Win_istart(peer, 0, win, &rq[0]);
        MPI_Put(v, 2, MPI_INT, 0, 0, 2, MPI_INT, win);
        MPIX_Win_icomplete(win, &rq[1]);
        if (SAFE)
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        v[1] = 5;
        if (!SAFE)
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Finalize();
    return v[1] == 12345;
}
