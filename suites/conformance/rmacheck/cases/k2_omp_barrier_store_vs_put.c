/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2 omp
 * OpenMP barrier: on rank 1, thread 1 stores to window memory and the master then calls
 * MPI_Barrier to let rank 0 put there; no barrier separates the two threads, so the store and
 * the put race. Twin: ..._safe.c has an omp barrier between the store and the master's call.
 * Skips where MPI_THREAD_MULTIPLE is not provided. */
#define N 4
#define PUTAT 0
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
            if (omp_get_thread_num() == 1)
                buf[0] = 7;
#if SAFE
#pragma omp barrier
#endif
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
