/* tap_demo.c — a TAP program that fails on purpose, on non-root ranks only; test_tap.sh runs it
 * on 3 ranks and checks that rank 0 alone prints and that the failing ranks' words reach it.
 *   --hang    after two points, rank 1 sleeps forever and the others wait for it (a hung test,
 *             for test_check.sh: the watchdog must kill it and report it as one failed test)
 *   --fatal   after two points, rank 1 gives up with tap_bail_out (a bounded wait that ran out) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int hang = argc > 1 && !strcmp(argv[1], "--hang");
    int fatal = argc > 1 && !strcmp(argv[1], "--fatal");
    tap_plan(5);
    tap_ok(1, "passes everywhere");
    if (hang || fatal) {
        tap_ok(1, "passes everywhere, before the %s", hang ? "hang" : "fatal failure");
        if (rank == 1) {
            if (fatal)
                tap_bail_out("the request did not complete within 1 s (hang?)");
            for (;;)
                pause(); /* silent, forever */
        }
        tap_ok(1, "never reached: rank 1 does not take part");
        MPI_Finalize();
        return 0;
    }
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
