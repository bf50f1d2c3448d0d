/* rmacheck-case: expect=hazard kind=conflicting-rma ranks=2
 * Threads (MPI_THREAD_MULTIPLE): in one lock_all epoch of rank 0, a thread puts to bytes of rank
 * 1 and returns, then another thread (started after the join) puts to the same bytes. The join
 * orders the calls, not the puts: MPI orders two puts of one origin only through a flush between
 * them. Twin: ..._safe.c has the first thread flush before it returns. Skips (prints
 * rmacheck-case-skip) where MPI_THREAD_MULTIPLE is not provided. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#ifndef SAFE
#define SAFE 0
#endif
static MPI_Win win;
static int first = 1, second = 2;

static void *put_first(void *arg)
{
    (void)arg;
    MPI_Put(&first, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    if (SAFE)
        MPI_Win_flush(1, win);
    return NULL;
}

static void *put_second(void *arg)
{
    (void)arg;
    MPI_Put(&second, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
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
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        pthread_t a, b;
        if (pthread_create(&a, NULL, put_first, NULL) != 0 || pthread_join(a, NULL) != 0 ||
            pthread_create(&b, NULL, put_second, NULL) != 0 || pthread_join(b, NULL) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
