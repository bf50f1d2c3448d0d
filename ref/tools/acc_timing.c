/* acc_timing.c — latency of one large MPI_SUM accumulate on MPI_DOUBLE + MPI_Win_flush, rank 0
 * toward rank 1 under an exclusive lock: the figure of issue 9 item 17 (docs/ref.md). Link with
 * libnbrma; NBRMA_IMPL=vendor|ref picks the implementation. Prints, per size, the median over
 * REPS repetitions of each repetition's median over ITERS operations, and checks the sums.
 *
 *   mpicc -O2 -Iref/include acc_timing.c -Lbuild/<mpi>/lib -lnbrma -Wl,-rpath,...
 *   NBRMA_IMPL=ref mpiexec -n 2 ./acc_timing [REPS [ITERS [BYTES...]]]   (default 7 200 512K 1M) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "acc_timing: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int reps = argc > 1 ? atoi(argv[1]) : 7, iters = argc > 2 ? atoi(argv[2]) : 200;
    long def[] = {512L << 10, 1L << 20}, *sizes = def;
    int nsizes = 2;
    if (argc > 3) {
        nsizes = argc - 3;
        sizes = malloc((size_t)nsizes * sizeof *sizes);
        for (int i = 0; i < nsizes; i++)
            sizes[i] = atol(argv[3 + i]);
    }
    if (np < 2 || reps < 1 || reps > 1000 || iters < 1 || iters > 100000 || !sizes) {
        if (me == 0)
            fprintf(stderr, "usage: mpiexec -n 2 acc_timing [REPS [ITERS [BYTES...]]]\n");
        MPI_Finalize();
        return 1;
    }
    const char *impl = getenv("NBRMA_IMPL");
    int bad = 0;
    for (int s = 0; s < nsizes; s++) {
        int n = (int)(sizes[s] / 8);
        double *win_base, *buf = malloc((size_t)n * sizeof *buf), *t = malloc((size_t)iters * sizeof *t),
                          *med = malloc((size_t)reps * sizeof *med), lo = 1e30;
        if (!buf || !t || !med || n < 1)
            check(MPI_ERR_NO_MEM, "malloc");
        for (int i = 0; i < n; i++)
            buf[i] = 1.0;
        MPI_Win win;
        check(MPI_Win_allocate((MPI_Aint)n * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win_base, &win),
              "MPI_Win_allocate");
        check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win), "MPI_Win_lock (self)");
        for (int i = 0; i < n; i++)
            win_base[i] = 0;
        check(MPI_Win_unlock(me, win), "MPI_Win_unlock (self)");
        MPI_Barrier(MPI_COMM_WORLD);
        long ops = 0;
        if (me == 0) {
            check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win), "MPI_Win_lock");
            for (int r = 0; r < reps; r++) {
                for (int i = -10; i < iters; i++, ops++) {
                    double t0 = MPI_Wtime();
                    check(MPI_Accumulate(buf, n, MPI_DOUBLE, 1, 0, n, MPI_DOUBLE, MPI_SUM, win),
                          "MPI_Accumulate");
                    check(MPI_Win_flush(1, win), "MPI_Win_flush");
                    if (i >= 0)
                        t[i] = MPI_Wtime() - t0;
                }
                for (int i = 0; i < iters; i++)
                    lo = t[i] < lo ? t[i] : lo;
                med[r] = median(t, iters);
            }
            check(MPI_Win_unlock(1, win), "MPI_Win_unlock");
        }
        MPI_Bcast(&ops, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (me == 1) {
            check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win), "MPI_Win_lock (self)");
            for (int i = 0; i < n; i++)
                if (win_base[i] != (double)ops) {
                    fprintf(stderr, "acc_timing: element %d is %g after %ld accumulates\n", i,
                            win_base[i], ops);
                    bad = 1;
                    break;
                }
            check(MPI_Win_unlock(me, win), "MPI_Win_unlock (self)");
        }
        if (me == 0) {
            double m = median(med, reps); /* sorts med: min and max of the repetitions follow */
            printf("acc_timing impl=%s bytes=%ld reps=%d iters=%d median_us=%.2f min_us=%.2f "
                   "rep_medians_us=%.2f..%.2f\n",
                   impl ? impl : "ref", sizes[s], reps, iters, m * 1e6, lo * 1e6, med[0] * 1e6,
                   med[reps - 1] * 1e6);
        }
        check(MPI_Win_free(&win), "MPI_Win_free");
        free(buf), free(t), free(med);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad;
}
