/* overlap.c — lab 5, part A: a late target you cannot fix (labs/05-nonblocking/README.md).
 *
 * Three ranks, one window each (SIZE bytes), general active-target synchronization (PSCW):
 *   P0 (rank 0)  computes its result for D ms *into its window*, then exposes the window to P2
 *                (MPI_Win_post) and waits (MPI_Win_wait). It cannot post earlier: P2 would read a
 *                half-computed result.
 *   P1 (rank 1)  exposes its window to P2 at once and waits for P2's message to land in it;
 *                it notes when its epoch ended.
 *   P2 (rank 2)  epoch 1: reads P0's result (MPI_Win_start, MPI_Get, MPI_Win_complete);
 *                epoch 2: writes its own message, which does not depend on P0's result, into
 *                P1's window (MPI_Win_start, MPI_Put, MPI_Win_complete); then checks the result.
 * Each sample starts on all ranks together (time 0). The program prints the median, over
 * SAMPLES samples, of when P1's epoch ended and when P2 was done, from time 0.
 *
 *   mpiexec -n 3 ./overlap [-d D_ms] [-n SAMPLES] [-s SIZE]
 */
#include "labutil.h"

enum { P0 = 0, P1 = 1, P2 = 2, TAG = 7 };

/* The byte at position i of P0's result, or P2's message, in sample s. */
static char result_byte(int s, int i)
{
    return (char)('A' + (s + i) % 26);
}
static char message_byte(int s, int i)
{
    return (char)('a' + (s * 7 + i) % 26);
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const int delay_ms = lab_arg(argc, argv, "-d", 100);
    const int samples = lab_arg(argc, argv, "-n", 5);
    const int size = lab_arg(argc, argv, "-s", 65536);
    if (nranks != 3 || samples < 1 || size < 1) {
        if (rank == 0)
            fprintf(stderr, "overlap: run me on 3 ranks, with -n and -s at least 1\n");
        MPI_Finalize();
        return 2;
    }
    char *win_mem, *result = malloc(size), *message = malloc(size);
    MPI_Win win;
    MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
    MPI_Group world, g0, g1, g2;
    const int p0 = P0, p1 = P1, p2 = P2;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &p0, &g0);
    MPI_Group_incl(world, 1, &p1, &g1);
    MPI_Group_incl(world, 1, &p2, &g2);
    double *p1_done = calloc(samples, sizeof(double)), *p2_done = calloc(samples, sizeof(double));
    int bad = 0;

    for (int s = 0; s < samples; s++) {
        lab_barrier(MPI_COMM_WORLD);
        const double t0 = lab_now();
        if (rank == P0) {
            lab_work_ms(delay_ms); /* computing the result ... */
            for (int i = 0; i < size; i++)
                win_mem[i] = result_byte(s, i); /* ... into the window */
            MPI_Win_post(g2, 0, win);
            MPI_Win_wait(win);
        } else if (rank == P1) {
            MPI_Win_post(g2, 0, win);
            MPI_Win_wait(win);
            p1_done[s] = lab_now() - t0;
            for (int i = 0; i < size; i++)
                bad |= win_mem[i] != message_byte(s, i);
        } else {
            for (int i = 0; i < size; i++)
                message[i] = message_byte(s, i);
            MPI_Win_start(g0, 0, win); /* epoch 1: P0's result */
            MPI_Get(result, size, MPI_BYTE, P0, 0, size, MPI_BYTE, win);
            MPI_Win_complete(win);
            MPI_Win_start(g1, 0, win); /* epoch 2: P2's message to P1 */
            MPI_Put(message, size, MPI_BYTE, P1, 0, size, MPI_BYTE, win);
            MPI_Win_complete(win);
            for (int i = 0; i < size; i++)
                bad |= result[i] != result_byte(s, i);
            p2_done[s] = lab_now() - t0;
        }
    }

    if (rank == P1)
        MPI_Send(p1_done, samples, MPI_DOUBLE, P0, TAG, MPI_COMM_WORLD);
    if (rank == P2)
        MPI_Send(p2_done, samples, MPI_DOUBLE, P0, TAG, MPI_COMM_WORLD);
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, P0, MPI_COMM_WORLD);
    if (rank == P0) {
        MPI_Recv(p1_done, samples, MPI_DOUBLE, P1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(p2_done, samples, MPI_DOUBLE, P2, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double t1 = 1e3 * lab_median(p1_done, samples);
        const double t2 = 1e3 * lab_median(p2_done, samples);
        printf("P0 was late by D = %d ms (computing its result into its window)\n", delay_ms);
        printf("P1's epoch (P2's message) ended %8.2f ms after time 0: %.0f%% of D\n", t1,
               100.0 * t1 / delay_ms);
        printf("P2 was done with both epochs    %8.2f ms after time 0\n", t2);
        printf("data %s\n", anybad ? "WRONG" : "ok");
        printf("lab-result: delay_ms=%d p1_ms=%.3f p2_ms=%.3f data=%s\n", delay_ms, t1, t2,
               anybad ? "wrong" : "ok");
    }
    MPI_Win_free(&win);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);
    MPI_Group_free(&world);
    free(result);
    free(message);
    free(p1_done);
    free(p2_done);
    MPI_Finalize();
    return anybad;
}
