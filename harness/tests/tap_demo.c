/* tap_demo.c — a TAP program that fails on purpose, on non-root ranks only; test_tap.sh runs it
 * on 3 ranks and checks that rank 0 alone prints and that the failing ranks' words reach it. */
#include "tap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tap_plan(5);
    tap_ok(1, "passes everywhere");
    if (rank == 1)
        tap_diag("rank one was here");
    tap_ok(rank != 1, "fails on rank 1 only");
    tap_is_long(rank == 2 ? 41 : 42, 42, "the answer, wrong on rank 2");
    tap_ok(1, "passes everywhere again");
    tap_skip(1, "nothing to do");
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
