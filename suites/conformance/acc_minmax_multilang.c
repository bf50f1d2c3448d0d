/* acc_minmax_multilang.c — MPI_Accumulate with MPI_MIN and MPI_MAX on the multi-language types
 * MPI_AINT, MPI_OFFSET and MPI_COUNT (all signed in C) with negative contributions. Its own
 * program because Open MPI 4.1.4 compares MPI_OFFSET as unsigned (MPI_Allreduce does too). */
#include "acc.h"

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    acc_case cases[16];
    int n = 0;
    acc_add(cases, &n, OP_MIN, acc_multilang);
    acc_add(cases, &n, OP_MAX, acc_multilang);
    tap_plan(n);
    acc_run(cases, n);
    return conf_done();
}
