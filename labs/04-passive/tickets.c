/* tickets.c — lab 4: a shared ticket dispenser, passive target (labs/04-passive/README.md).
 *
 * Rank 0's window holds one int, the dispenser: the number of the next ticket. Every rank takes
 * K tickets, one at a time: it reads the dispenser, moves it on by one, and serves the customer
 * with that ticket number (W milliseconds of work). No rank knows when the others take theirs:
 * the dispenser is a passive target, accessed in lock epochs.
 *
 * At the end rank 0 collects every rank's tickets and checks that they are 0 .. nranks*K-1,
 * each handed out exactly once, and prints how long it all took next to how long serving took
 * in all (the sum of every serve, as measured: a busy machine makes a serve last longer than
 * W). If the ranks serve at the same time, the first is about 1/nranks of the second; if they
 * serve one customer at a time, it is at least the second.
 *
 *   mpiexec -n 3 ./tickets [-k K] [-w W_ms]
 */
#include "labutil.h"

static double served_s; /* the time this rank spent serving, in seconds */

/* Serve a customer: W ms of work that needs the ticket number and nothing else. */
static void serve(int ticket, int work_ms)
{
    const double t = lab_now();
    (void)ticket;
    lab_work_ms(work_ms);
    served_s += lab_now() - t;
}

/* Take the next ticket from the dispenser in rank 0's window, and serve its customer. */
static int take_ticket_and_serve(MPI_Win win, int work_ms)
{
    int ticket, next;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&ticket, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_flush(0, win); /* the get is complete: `ticket` holds the dispenser's value */
    next = ticket + 1;
    MPI_Put(&next, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    serve(ticket, work_ms);
    MPI_Win_unlock(0, win);
    return ticket;
}

int main(int argc, char **argv)
{
    int rank, nranks, *dispenser;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const int k = lab_arg(argc, argv, "-k", 8), work_ms = lab_arg(argc, argv, "-w", 10);
    if (k < 1) {
        if (rank == 0)
            fprintf(stderr, "tickets: -k must be at least 1\n");
        MPI_Finalize();
        return 2;
    }
    /* 16 bytes, not 4: MPICH 4.0.2 misplaces RMA on MPI_Win_allocate windows whose size is not
     * a multiple of 16 bytes (a vendor bug, suites/conformance/known-failures) */
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &dispenser, &win);
    dispenser[0] = 0;
    int *mine = malloc(k * sizeof(int)), *all = malloc((size_t)nranks * k * sizeof(int));
    lab_barrier(MPI_COMM_WORLD); /* the dispenser is set before anybody takes a ticket */

    const double t0 = lab_now();
    for (int i = 0; i < k; i++)
        mine[i] = take_ticket_and_serve(win, work_ms);
    double mytime = lab_now() - t0, maxtime = 0, served_all = 0;

    MPI_Reduce(&mytime, &maxtime, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&served_s, &served_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(mine, k, MPI_INT, all, k, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const int n = nranks * k;
        int *count = calloc(n, sizeof(int)), dup = 0, out = 0, missing = 0;
        for (int i = 0; i < n; i++) {
            if (all[i] < 0 || all[i] >= n)
                out++;
            else if (count[all[i]]++)
                dup++;
        }
        for (int t = 0; t < n; t++)
            missing += count[t] == 0;
        printf("tickets: %d ranks took %d tickets each: %d handed out twice, %d never, %d out of"
               " range\n",
               nranks, k, dup, missing, out);
        printf("tickets: %.1f ms in all; serving took %.1f ms summed over the ranks (%d x W ="
               " %d ms on an idle machine): %.2f of it\n",
               1e3 * maxtime, 1e3 * served_all, nranks * k, nranks * k * work_ms,
               maxtime / served_all);
        printf("lab-result: nranks=%d k=%d work_ms=%d twice=%d never=%d outside=%d total_ms=%.3f"
               " served_ms=%.3f\n",
               nranks, k, work_ms, dup, missing, out, 1e3 * maxtime, 1e3 * served_all);
        free(count);
    }
    free(mine);
    free(all);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
