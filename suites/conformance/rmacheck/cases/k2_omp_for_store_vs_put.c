/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2 omp
 * OpenMP for: on rank 1 a worksharing loop (static schedule, two threads) stores every window
 * int, with nowait; then the master calls MPI_Barrier to let rank 0 put into the last int, which
 * thread 1's iterations store: they may not have run yet. Twin: ..._safe.c keeps the loop's
 * implied barrier, which orders every iteration before the master goes on. Skips where
 * MPI_THREAD_MULTIPLE is not provided. */
#define N 64
#define PUTAT (N - 1)
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#ifndef SAFE
#define SAFE 0
#endif
int sink[2];

int main(int argc, char **argv)
{
    int rank, provided, *buf;
    MPI_Win win;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("rmacheck-case-skip: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Finalize();
        return 0;
    }
    omp_set_dynamic(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    for (int i = 0; i < N; i++)
        buf[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
#pragma omp parallel num_threads(2)
        {
            if (omp_get_num_threads() != 2)
                MPI_Abort(MPI_COMM_WORLD, 3);
#if SAFE
#pragma omp for schedule(static)
#else
#pragma omp for schedule(static) nowait
#endif
            for (int i = 0; i < N; i++)
                buf[i] = i;
#pragma omp master
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        int v = 1;
        MPI_Barrier(MPI_COMM_WORLD); /* rank 1 says its window may be written */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&v, 1, MPI_INT, 1, PUTAT, 1, MPI_INT, win);
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
