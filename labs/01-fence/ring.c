/* ring.c — lab 1: your first epochs (labs/01-fence/README.md).
 *
 * The ranks form a ring: rank r's right neighbour is r+1, its left neighbour r-1 (modulo the
 * number of ranks). Every rank exposes a window of two ints, its "mailbox":
 *   mailbox[0]  written by the left neighbour, with MPI_Put
 *   mailbox[1]  this rank's own number, 1000 + rank, which the right neighbour reads with MPI_Get
 * In one fence epoch every rank puts 100 + rank into its right neighbour's mailbox[0] and gets
 * its left neighbour's mailbox[1] into the local variable `got`. Then every rank prints what it
 * received. Something is wrong with this program: the lab's README says how to find out what.
 *
 *   mpiexec -n 3 ./ring
 */
#include "labutil.h"

int main(int argc, char **argv)
{
    int rank, nranks, *mailbox;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;

    /* A window of 4 ints per rank (2 used); displacements count ints (disp_unit = sizeof(int)).
     * Why 4: MPICH 4.0.2 misplaces RMA on MPI_Win_allocate windows whose size is not a multiple
     * of 16 bytes (a vendor bug: win_allocate_odd in suites/conformance/known-failures). */
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mailbox, &win);
    mailbox[0] = -1;          /* nothing received yet */
    mailbox[1] = 1000 + rank; /* what the right neighbour will get */
    int mine = 100 + rank, got = -1;

    MPI_Win_fence(0, win); /* opens the epoch: from here on, RMA to every rank's window */
    MPI_Put(&mine, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Get(&got, 1, MPI_INT, left, 1, 1, MPI_INT, win);

    printf("ring: rank %d received %d from its left neighbour (expected %d) and got %d from it"
           " (expected %d)\n",
           rank, mailbox[0], 100 + left, got, 1000 + left);

    MPI_Win_fence(0, win); /* closes the epoch */

    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
