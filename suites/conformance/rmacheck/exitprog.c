/* exitprog.c — the program test-exit.sh runs under rmacheck to check its exit status: 2 ranks,
 * one mode from argv[1]:
 *   ok          runs clean and exits 0
 *   exit3       runs clean, every rank exits with status 3 after MPI_Finalize
 *   abort       rank 1 calls MPI_Abort(MPI_COMM_WORLD, 5)
 *   segv        rank 1 dies of SIGSEGV
 *   race        a put of rank 0 and a store of rank 1 to the same int race; exits 0
 *   race-exit3  the same race, then every rank exits with status 3
 *   hang        runs clean, then (after writing the file $EXITPROG_READY) sleeps until killed
 *   race-hang   the race, then the same
 * Built with rmacheck-cc at test time. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    int rank, *buf, one = 1;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    buf[0] = buf[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (strncmp(mode, "race", 4) == 0) {
        /* rank 0 puts into rank 1's buf[0] while rank 1 stores there: nothing orders them */
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPI_Win_unlock(1, win);
        } else {
            buf[0] = 2;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "abort") == 0 && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 5);
    if (strcmp(mode, "segv") == 0 && rank == 1)
        raise(SIGSEGV);
    if (strstr(mode, "hang")) {
        const char *ready = getenv("EXITPROG_READY");
        if (rank == 0 && ready) {
            FILE *f = fopen(ready, "w");
            if (f)
                fclose(f);
        }
        for (;;)
            sleep(1);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return strstr(mode, "exit3") ? 3 : 0;
}
