/* many_puts.c — 10^5 puts before one flush (MPI-3.1 §11.5.4: MPI_Win_flush completes every
 * operation the origin issued toward the target in the epoch, however many). Each rank puts
 * 100000 distinct 8-byte values into the window of its right neighbour, element by element into
 * a 100000-element window, then calls MPI_Win_flush once; after a barrier each rank checks its
 * own window. A transport that bounds operations in flight must wait inside the puts, never
 * lose one; one whose flush covers a fixed number of operations must cover them all. */
#include "conf.h"

#define N 100000

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(2);
    long *base;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < N; i++)
        base[i] = -1;
    long *src = malloc(N * sizeof *src);
    for (int i = 0; i < N; i++)
        src[i] = (long)conf_rank * 10000000 + i;
    nbh_barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    MPI_Win_lock(MPI_LOCK_SHARED, conf_right(), 0, win);
    for (int i = 0; i < N; i++)
        MPI_Put(&src[i], 1, MPI_LONG, conf_right(), i, 1, MPI_LONG, win);
    MPI_Win_flush(conf_right(), win);
    t = MPI_Wtime() - t;
    MPI_Win_unlock(conf_right(), win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    int wrong = 0, first = -1;
    for (int i = 0; i < N; i++)
        if (base[i] != (long)conf_left() * 10000000 + i) {
            wrong++;
            if (first < 0)
                first = i;
        }
    MPI_Win_unlock(conf_rank, win);
    int all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tap_ok(all == 0, "%d puts of 8 bytes before one flush all landed (%d wrong, first at %d here)",
           N, all, first);
    tap_diag("%d puts + flush in %.3f s", N, t);
    tap_ok(t > 0, "the puts and the flush completed");
    free(src);
    MPI_Win_free(&win);
    return conf_done();
}
