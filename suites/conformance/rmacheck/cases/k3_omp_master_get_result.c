/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2 omp
 * OpenMP master: on rank 0, the master thread gets rank 1's int into its own window memory
 * (lock, MPI_Get, unlock); master implies no barrier, so the other thread's load of that int may
 * come before the get completed. Twin: ..._safe.c puts an omp barrier between the master
 * construct and the loads. Skips where MPI_THREAD_MULTIPLE is not provided. */
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
        {
            if (omp_get_num_threads() != 2)
                MPI_Abort(MPI_COMM_WORLD, 3);
#pragma omp master
            {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Get(&buf[0], 1, MPI_INT, 1, 1, 1, MPI_INT, win);
                MPI_Win_unlock(1, win);
            }
#if SAFE
#pragma omp barrier
#endif
            sink[omp_get_thread_num()] = buf[0];
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
