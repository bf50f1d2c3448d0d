/* scaling.c — the program of rmacheck's scaling benchmark (bench-scaling.py, docs/rmacheck.md
 * "Scaling"): 2 ranks; each iteration opens a fence epoch, puts one int into the other rank's
 * window, closes it with a second fence, then loads and zeroes every int of its own window
 * (loads and stores alternate, the pattern that defeated the old runtime's merging). Correct
 * code: rmacheck must say "no hazard".
 *   scaling [--iters N] [--ints M]      (defaults 100 and 1024)
 * Prints "scaling: ITERS INTS LOADS+STORES SECONDS" (rank 0; the loop's time). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long arg(int argc, char **argv, const char *name, long def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < 1) {
                fprintf(stderr, "scaling: %s needs a positive integer, not '%s'\n", name,
                        argv[i + 1]);
                exit(2);
            }
            return v;
        }
    return def;
}

int main(int argc, char **argv)
{
    int rank, size, *buf;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    long iters = arg(argc, argv, "--iters", 100), n = arg(argc, argv, "--ints", 1024);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "scaling: runs on 2 ranks, not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (MPI_Win_allocate((MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &buf, &win) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (long i = 0; i < n; i++)
        buf[i] = 0;
    long sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        int v = (int)it;
        MPI_Win_fence(0, win);
        MPI_Put(&v, 1, MPI_INT, 1 - rank, (MPI_Aint)(it % n), 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        for (long i = 0; i < n; i++) {
            sum += buf[i];
            buf[i] = 0;
        }
    }
    MPI_Win_fence(0, win);
    t = MPI_Wtime() - t;
    long expect = iters * (iters - 1) / 2, all = 0;
    MPI_Reduce(&sum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all != 2 * expect) {
            fprintf(stderr, "scaling: read %ld, expected %ld\n", all, 2 * expect);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("scaling: %ld %ld %ld %.6f\n", iters, n, 4 * iters * n, t);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
