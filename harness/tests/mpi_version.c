/* mpi_version.c — print the first line of MPI_Get_library_version: the MPI library a build runs
 * on, for the conditions make check records with its results (harness/check.sh). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_library_version(v, &len);
    v[strcspn(v, "\n,")] = '\0';
    for (char *p = v; *p; p++)
        if (*p == '\t')
            *p = ' ';
    if (rank == 0)
        printf("%s\n", v);
    MPI_Finalize();
    return 0;
}
