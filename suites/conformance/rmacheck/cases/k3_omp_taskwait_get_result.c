/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2 omp
 * OpenMP taskwait: on rank 0, a task gets rank 1's int into window memory (lock, MPI_Get,
 * unlock) and the thread that created it loads that int without waiting for the task: the get
 * may not have completed. Twin: ..._safe.c loads after #pragma omp taskwait. Skips where
 * MPI_THREAD_MULTIPLE is not provided. */
#define N 4
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
    if (rank == 0) {
#pragma omp parallel num_threads(2)
#pragma omp single
        {
#pragma omp task
            {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Get(&buf[0], 1, MPI_INT, 1, 1, 1, MPI_INT, win);
                MPI_Win_unlock(1, win);
            }
#if SAFE
#pragma omp taskwait
#endif
            sink[0] = buf[0];
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
