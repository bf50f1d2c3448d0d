/* mailbox.c — lab 5, part B: a reorder flag, and when it is unsafe (labs/05-nonblocking/README.md).
 *
 * Two ranks. Rank 1's window is a mailbox of one int. Rank 0 publishes STEPS values into it,
 * 1, 2, ..., STEPS, one nonblocking passive-target epoch each (MPIX_Win_ilock, MPI_Put,
 * MPIX_Win_iunlock), without waiting for one epoch before it opens the next: it completes all
 * the requests at the end. A colleague created the window with the reorder flag MPIX_A_A_A_R
 * "so that the epochs do not wait for each other". After rank 0 is done, rank 1 reads its
 * mailbox: it must hold the last value, STEPS.
 *
 *   mpiexec -n 2 ./mailbox [-n STEPS]
 */
#include "labutil.h"
#include <nbrma.h> /* libnbrma's MPIX_Win_i* calls and reorder flags (docs/nonblocking.md) */

enum { MAXSTEPS = 64 };

int main(int argc, char **argv)
{
    int rank, nranks, *mailbox;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const int steps = lab_arg(argc, argv, "-n", 8);
    if (nranks != 2 || steps < 1 || steps > MAXSTEPS) {
        if (rank == 0)
            fprintf(stderr, "mailbox: run me on 2 ranks, with -n from 1 to %d\n", MAXSTEPS);
        MPI_Finalize();
        return 2;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIX_A_A_A_R, "true"); /* the colleague's "speed-up" */
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mailbox, &win);
    MPI_Info_free(&info);
    mailbox[0] = 0;
    lab_barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        int value[MAXSTEPS];
        MPI_Request rq[2 * MAXSTEPS];
        for (int i = 0; i < steps; i++) {
            value[i] = i + 1; /* one buffer per step: each is read until its epoch completes */
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &rq[2 * i]);
            MPI_Put(&value[i], 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPIX_Win_iunlock(1, win, &rq[2 * i + 1]);
        }
        for (int i = 0; i < 2 * steps; i++)
            lab_wait(&rq[i]);
    }
    lab_barrier(MPI_COMM_WORLD); /* rank 0's epochs are complete */
    if (rank == 1) {
        printf("mailbox: rank 1 holds %d (expected %d)\n", mailbox[0], steps);
        printf("lab-result: mailbox=%d expected=%d\n", mailbox[0], steps);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
