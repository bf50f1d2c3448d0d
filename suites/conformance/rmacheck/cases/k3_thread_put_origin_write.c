/* rmacheck-case: expect=hazard kind=origin-buffer ranks=2
 * Threads (MPI_THREAD_MULTIPLE): a thread of rank 0 puts from v and returns; the main thread
 * joins it and overwrites v before anything completed the put locally: joining the thread that
 * issued a put does not complete the put. Twin: ..._safe.c has the main thread call
 * MPI_Win_flush_local first (a flush completes the puts of every thread of the process). Skips
 * (prints rmacheck-case-skip) where MPI_THREAD_MULTIPLE is not provided. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#ifndef SAFE
#define SAFE 0
#endif
static MPI_Win win;
static int v[4] = {1, 2, 3, 4};

static void *putter(void *arg)
{
    (void)arg;
    MPI_Put(v, 4, MPI_INT, 1, 0, 4, MPI_INT, win);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, provided, *buf;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("rmacheck-case-skip: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    if (rank == 0) {
        pthread_t th;
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        if (pthread_create(&th, NULL, putter, NULL) != 0 || pthread_join(th, NULL) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        if (SAFE)
            MPI_Win_flush_local(1, win);
        v[3] = 40;
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return v[3] == 0;
}
