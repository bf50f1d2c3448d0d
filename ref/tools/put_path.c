/* put_path.c — a fixed number of 8-byte MPI_Put calls to the process's own allocated window
 * under lock_all: run under `valgrind --tool=callgrind --toggle-collect=MPI_Put` (see
 * ref/tools/callgrind-put.sh) to count the instructions of the put fast path. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    double *base, v = 1.0;
    MPI_Win win;
    MPI_Win_allocate(64, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < n; i++)
        MPI_Put(&v, 1, MPI_DOUBLE, 0, i & 7, 1, MPI_DOUBLE, win);
    MPI_Win_unlock_all(win);
    int ok = base[0] == 1.0;
    MPI_Win_free(&win);
    MPI_Finalize();
    if (!ok)
        fprintf(stderr, "put_path: the puts did not arrive\n");
    return !ok;
}
