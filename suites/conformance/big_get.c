/* big_get.c — one MPI_Get of 256 MiB (MPI-3.1 §11.3.3 puts no limit on an operation's size
 * below int count × type size). Rank 1 exposes a 256 MiB window filled with a position-dependent
 * pattern; rank 0 reads it whole with one MPI_Get of 32 Mi MPI_LONG (and, under the same lock,
 * a second get of the last 8 bytes into a separate buffer), flushes, and checks every element.
 * Transports that cut large transfers into pieces (rendezvous messages of at most 1 GiB, RDMA
 * reads limited by a port's max message size) must reassemble exactly. Needs 512 MiB of memory
 * over the two processes; other ranks only join the collectives. */
#include "conf.h"

#define BYTES ((MPI_Aint)256 << 20)
#define N     (BYTES / (MPI_Aint)sizeof(long))

static long pattern(MPI_Aint i)
{
    return (long)(i * 2654435761u) ^ (long)i << 20;
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(2);
    long *base;
    MPI_Win win;
    MPI_Aint mine = conf_rank == 1 ? BYTES : 0;
    MPI_Win_allocate(mine, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (MPI_Aint i = 0; conf_rank == 1 && i < N; i++)
        base[i] = pattern(i);
    long *dst = conf_rank == 0 ? malloc((size_t)BYTES) : NULL, last = 0;
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Aint wrong = 0, first = -1;
    double t = 0;
    if (conf_rank == 0) {
        if (!dst)
            tap_bail_out("no memory for 256 MiB");
        memset(dst, 0, (size_t)BYTES);
        t = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Get(dst, (int)N, MPI_LONG, 1, 0, (int)N, MPI_LONG, win);
        MPI_Get(&last, 1, MPI_LONG, 1, N - 1, 1, MPI_LONG, win);
        MPI_Win_unlock(1, win);
        t = MPI_Wtime() - t;
        for (MPI_Aint i = 0; i < N; i++)
            if (dst[i] != pattern(i)) {
                wrong++;
                if (first < 0)
                    first = i;
            }
    }
    MPI_Bcast(&wrong, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&last, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    tap_ok(wrong == 0, "one MPI_Get of 256 MiB: every element right (%ld wrong, first at %ld)",
           (long)wrong, (long)first);
    tap_ok(last == pattern(N - 1), "a second get of the last element under the same lock");
    if (conf_rank == 0)
        tap_diag("256 MiB get + unlock in %.3f s (%.0f MB/s)", t, t > 0 ? BYTES / t / 1e6 : 0);
    free(dst);
    MPI_Win_free(&win);
    return conf_done();
}
