/* acc_minmax_unsigned.c — MPI_Accumulate with MPI_MIN and MPI_MAX on every unsigned C integer
 * type, with contributions that have the top bit set (e.g. 0xfffffffb): an implementation that
 * compares them as signed picks the wrong one. Its own program because MPICH 4.0.2 does that for
 * every unsigned type and Open MPI 4.1.4 for MPI_UNSIGNED_LONG. */
#include "acc.h"

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    acc_case cases[64];
    int n = 0;
    acc_add(cases, &n, OP_MIN, acc_unsigned_ints);
    acc_add(cases, &n, OP_MAX, acc_unsigned_ints);
    tap_plan(n);
    acc_run(cases, n);
    return conf_done();
}
