/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2 omp
 * OpenMP task: on rank 0, a task puts from window memory (buf[0], lock/put/unlock to rank 1) and
 * the thread that created it stores to buf[0] after creating it: the task may still be reading
 * its origin buffer, whichever thread runs it (tasks are checked as actors of their own, not as
 * part of the thread that happens to run them). Twin: ..._safe.c stores before creating the
 * task, which the task's creation orders first. Skips where MPI_THREAD_MULTIPLE is not
 * provided. */
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
            if (SAFE)
                buf[0] = 42;
#pragma omp task
            {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(&buf[0], 1, MPI_INT, 1, 1, 1, MPI_INT, win);
                MPI_Win_unlock(1, win);
            }
            if (!SAFE)
                buf[0] = 42;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
