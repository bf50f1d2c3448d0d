/* latepost.c — lab 3: a late target, and who pays for it (labs/03-late-post/README.md).
 *
 * Three ranks, one window each (SIZE bytes), general active-target synchronization (PSCW):
 *   P0 (rank 0)  the target: first computes for D milliseconds (its own work, on private data),
 *                then exposes its window to P2 (MPI_Win_post) and waits for P2's epoch to end
 *                (MPI_Win_wait).
 *   P2 (rank 2)  the origin: opens an access epoch to P0 (MPI_Win_start), puts SIZE bytes into
 *                P0's window, closes the epoch (MPI_Win_complete), then sends a short message to
 *                P1.
 *   P1 (rank 1)  never talks to P0: it only waits for P2's message, and notes when it came.
 *
 * Each sample starts on all ranks together (time 0). The program prints, over SAMPLES samples,
 * the median time from 0 until P1 had its message, and until P2's epoch was over.
 *
 *   mpiexec -n 3 ./latepost [-d D_ms] [-n SAMPLES] [-s SIZE]
 *
 * Instructor's solution: P0 posts before its computation (see the comment there).
 */
#include "labutil.h"

enum { P0 = 0, P1 = 1, P2 = 2, TAG = 7 };

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 3) {
        if (rank == 0)
            fprintf(stderr, "latepost: run me on 3 ranks (mpiexec -n 3)\n");
        MPI_Finalize();
        return 2;
    }
    const int delay_ms = lab_arg(argc, argv, "-d", 100);
    const int samples = lab_arg(argc, argv, "-n", 5);
    const int size = lab_arg(argc, argv, "-s", 65536);
    if (samples < 1 || size < 1) {
        if (rank == 0)
            fprintf(stderr, "latepost: -n and -s must be at least 1\n");
        MPI_Finalize();
        return 2;
    }

    char *win_mem, *block = malloc(size);
    int msg = 0;
    MPI_Win win;
    MPI_Group world, only_p0, only_p2;
    const int p0 = P0, p2 = P2;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &p0, &only_p0);
    MPI_Group_incl(world, 1, &p2, &only_p2);
    MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
    memset(win_mem, 0, size);
    double *p1_got = calloc(samples, sizeof(double)), *p2_epoch = calloc(samples, sizeof(double));
    int bad = 0;

    for (int s = 0; s < samples; s++) {
        memset(block, 'a' + s % 26, size);
        lab_barrier(MPI_COMM_WORLD);
        const double t0 = lab_now();
        if (rank == P0) {
            /* The fix: expose the window first, then compute, then wait. P0's computation
             * touches no window memory, so nothing forces the post to wait for it; posted
             * early, P2's epoch can run (and end) while P0 computes, and P2's message to P1
             * leaves at once. MPI_Win_wait stays after the computation: it is where P0 needs
             * P2's data. (Whether the put then really completes while P0 computes depends on
             * the MPI library: the README's step 5.) */
            MPI_Win_post(only_p2, 0, win);
            lab_work_ms(delay_ms); /* P0's own computation: it touches no window memory */
            MPI_Win_wait(win);
            if (win_mem[0] != 'a' + s % 26 || win_mem[size - 1] != 'a' + s % 26)
                bad = 1;
        } else if (rank == P2) {
            MPI_Win_start(only_p0, 0, win);
            MPI_Put(block, size, MPI_BYTE, P0, 0, size, MPI_BYTE, win);
            MPI_Win_complete(win);
            p2_epoch[s] = lab_now() - t0;
            msg = s;
            MPI_Send(&msg, 1, MPI_INT, P1, TAG, MPI_COMM_WORLD);
        } else {
            MPI_Request req;
            MPI_Irecv(&msg, 1, MPI_INT, P2, TAG, MPI_COMM_WORLD, &req);
            lab_wait(&req);
            p1_got[s] = lab_now() - t0;
            if (msg != s)
                bad = 1;
        }
    }

    /* P1's and P2's times to rank 0, which prints them */
    if (rank == P1)
        MPI_Send(p1_got, samples, MPI_DOUBLE, P0, TAG + 1, MPI_COMM_WORLD);
    if (rank == P2)
        MPI_Send(p2_epoch, samples, MPI_DOUBLE, P0, TAG + 2, MPI_COMM_WORLD);
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, P0, MPI_COMM_WORLD);
    if (rank == P0) {
        MPI_Recv(p1_got, samples, MPI_DOUBLE, P1, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(p2_epoch, samples, MPI_DOUBLE, P2, TAG + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double got = 1e3 * lab_median(p1_got, samples);
        const double epoch = 1e3 * lab_median(p2_epoch, samples);
        printf("P0 was late by D = %d ms (its computation before it exposed its window)\n",
               delay_ms);
        printf("P2's access epoch ended   %8.2f ms after time 0 (median of %d samples)\n", epoch,
               samples);
        printf("P1 had P2's message       %8.2f ms after time 0: %.0f%% of P0's delay reached "
               "P1\n",
               got, 100.0 * got / delay_ms);
        printf("data %s\n", anybad ? "WRONG" : "ok");
        printf("lab-result: delay_ms=%d p1_ms=%.3f p2_epoch_ms=%.3f data=%s\n", delay_ms, got,
               epoch, anybad ? "wrong" : "ok");
    }
    MPI_Win_free(&win);
    MPI_Group_free(&only_p0);
    MPI_Group_free(&only_p2);
    MPI_Group_free(&world);
    free(block);
    free(p1_got);
    free(p2_epoch);
    MPI_Finalize();
    return anybad;
}
