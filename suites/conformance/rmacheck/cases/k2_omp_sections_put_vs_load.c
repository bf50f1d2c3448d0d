/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2 omp
 * OpenMP sections: on rank 0, one section puts to rank 1 in a lock epoch (lock, MPI_Put,
 * unlock) and another section of the same construct calls MPI_Barrier, after which rank 1 loads
 * the int. Sections of one construct are not ordered, whichever threads run them (rmacheck runs
 * each section as an actor of its own), so the load may come before the put. Twin: ..._safe.c
 * puts the barrier in a second sections construct, after the first one's implied barrier. Skips
 * where MPI_THREAD_MULTIPLE is not provided. */
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
#pragma omp sections
            {
#pragma omp section
                {
                    int v = 42;
                    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                    MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
                    MPI_Win_unlock(1, win);
                }
#if !SAFE
#pragma omp section
                MPI_Barrier(MPI_COMM_WORLD);
#endif
            }
#if SAFE
#pragma omp sections
            {
#pragma omp section
                MPI_Barrier(MPI_COMM_WORLD);
            }
#endif
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        sink[0] = buf[0];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
