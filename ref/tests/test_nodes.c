/* test_nodes.c — windows whose group spans nodes are refused by the shared-memory reference,
 * with MPI_ERR_UNSUPPORTED_OPERATION and a message that says what to do, while windows inside
 * one node work. Run on 4 ranks with NBRMA_RANKS_PER_NODE=2: two virtual nodes on one machine.
 * With NBRMA_IMPL=vendor (MPIX_Nbrma_set_impl) the same window is forwarded and works. */
#include <stdlib.h>
#include <string.h>

#include "nbrma.h"
#include "tap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE");
    if (!rpn || strcmp(rpn, "2") != 0)
        tap_bail_out("run with NBRMA_RANKS_PER_NODE=2 (see ref/tests/testlist)");
    MPIX_Nbrma_set_impl("ref");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    double *base;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    tap_is_long(cls, MPI_ERR_UNSUPPORTED_OPERATION,
                "a window over two virtual nodes is refused with MPI_ERR_UNSUPPORTED_OPERATION");
    const char *msg = MPIX_Nbrma_last_error();
    tap_ok(strstr(msg, "MPI_Win_allocate") && strstr(msg, "spans nodes") &&
               strstr(msg, "NBRMA_IMPL=vendor"),
           "the message names the call, the cause and the way out: %s", msg);
    tap_ok(win == MPI_WIN_NULL, "no window handle is returned");

    /* The two virtual nodes create their windows one after the other: Open MPI 4.1.4 names a
     * window's shared segment after host, job and context id, and two disjoint communicators on
     * one host may share a context id, so concurrent creations collide (vendor finding, see
     * suites/conformance/win_disjoint.c). The ref window's handle is a vendor window. */
    MPI_Comm node;
    MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &node);
    int served = MPI_SUCCESS;
    double got = -1;
    for (int turn = 0; turn < 2; turn++) {
        if (me / 2 == turn) {
            served = MPI_Win_allocate(64, 8, MPI_INFO_NULL, node, &base, &win);
            if (served == MPI_SUCCESS) {
                int nr;
                MPI_Comm_rank(node, &nr);
                double v = 40 + me;
                MPI_Win_fence(0, win);
                MPI_Put(&v, 1, MPI_DOUBLE, 1 - nr, 0, 1, MPI_DOUBLE, win);
                MPI_Win_fence(0, win);
                got = base[0];
                MPI_Win_free(&win);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    tap_is_long(served, MPI_SUCCESS, "a window inside one virtual node is served");
    if (served == MPI_SUCCESS) {
        int partner = me % 2 ? me - 1 : me + 1;
        tap_ok(got == 40 + partner, "and moves data (got %g from rank %d)", got, partner);
    } else {
        tap_skip(1, "no window");
    }
    MPI_Comm_free(&node);

    MPIX_Nbrma_set_impl("vendor");
    rc = MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    tap_is_long(rc, MPI_SUCCESS, "with the vendor implementation the spanning window is forwarded");
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    int r = tap_done();
    MPI_Finalize();
    return r;
}
