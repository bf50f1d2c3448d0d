/* test_nodes.c — windows across nodes (issue 10 §3): 4 ranks in two virtual nodes of
 * NBRMA_RANKS_PER_NODE=2. Every flavor but allocate_shared spans them, pairs inside a node over
 * shared memory and pairs across over active messages; MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
 * gives the virtual node; MPI_Win_allocate_shared across nodes fails with MPI_ERR_RMA_SHARED and
 * a message that names the way out. NBRMA_NET=am, ucx and auto serve the pairs across nodes;
 * NBRMA_NET=verbs (libnbrma's own verbs data path, retired: UCX reaches RDMA devices) is refused
 * naming NBRMA_NET=ucx; an unknown NBRMA_NET is refused as bad input. */
#include <stdlib.h>
#include <string.h>

#include "nbrma.h"
#include "tap.h"

static int me, n;

/* Each rank puts its id into slot `me` of every rank's window (fence), then checks its slots. */
static int exchange(MPI_Win win, const long *mem)
{
    long v[16]; /* an origin buffer stays untouched until the epoch completes */
    MPI_Win_fence(0, win);
    for (int r = 0; r < n; r++) {
        v[r] = 1000L * me + r;
        MPI_Put(&v[r], 1, MPI_LONG, r, me, 1, MPI_LONG, win);
    }
    MPI_Win_fence(0, win);
    int bad = 0;
    for (int r = 0; r < n; r++)
        if (mem[r] != 1000L * r + me && bad++ == 0)
            tap_diag("slot %d holds %ld, expected %ld", r, mem[r], 1000L * r + me);
    return bad;
}

static int create(int flavor, MPI_Win *win, long **mem)
{
    MPI_Aint bytes = n * (MPI_Aint)sizeof(long);
    int rc;
    switch (flavor) {
    case 0:
        return MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, mem, win);
    case 1:
        *mem = calloc((size_t)n, sizeof(long));
        return MPI_Win_create(*mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, win);
    default: /* dynamic: every rank attaches at the same offset 0 of its buffer; the puts then
                need the absolute address, exchanged first */
        *mem = calloc((size_t)n, sizeof(long));
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_attach(*win, *mem, bytes);
        return rc;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE"), *net = getenv("NBRMA_NET");
    if (!rpn || strcmp(rpn, "2") != 0 || n != 4)
        tap_bail_out("run on 4 ranks with NBRMA_RANKS_PER_NODE=2 (see ref/tests/testlist)");
    MPIX_Nbrma_set_impl("ref");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long *mem = NULL;
    MPI_Win win = MPI_WIN_NULL;

    if (net && strcmp(net, "am") != 0 && strcmp(net, "auto") != 0 && strcmp(net, "ucx") != 0) {
        /* Only the refusal is under test in these runs. */
        int verbs = !strcmp(net, "verbs");
        tap_plan(3);
        int rc = MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), cls = 0;
        MPI_Error_class(rc, &cls);
        tap_is_long(cls, MPI_ERR_ARG, "NBRMA_NET=%s: a window across nodes is refused with %s",
                    net, "MPI_ERR_ARG");
        const char *msg = MPIX_Nbrma_last_error();
        tap_ok(strstr(msg, "NBRMA_NET=") && (!verbs || strstr(msg, "NBRMA_NET=ucx")),
               "the message names the setting and the way out: %s", msg);
        tap_ok(win == MPI_WIN_NULL, "no window handle is returned");
        int r = tap_done();
        MPI_Finalize();
        return r;
    }

    tap_plan(9);
    static const char *const names[] = {"MPI_Win_allocate", "MPI_Win_create",
                                        "MPI_Win_create_dynamic"};
    for (int f = 0; f < 3; f++) {
        int rc = create(f, &win, &mem), bad = -1;
        if (rc == MPI_SUCCESS && f < 2)
            bad = exchange(win, mem);
        if (rc == MPI_SUCCESS && f == 2) { /* absolute addresses: every rank's buffer */
            MPI_Aint *addr = malloc((size_t)n * sizeof *addr), mine;
            MPI_Get_address(mem, &mine);
            MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
            long v[16];
            MPI_Win_fence(0, win);
            for (int r = 0; r < n; r++) {
                v[r] = 1000L * me + r;
                MPI_Put(&v[r], 1, MPI_LONG, r, addr[r] + me * (MPI_Aint)sizeof(long), 1, MPI_LONG,
                        win);
            }
            MPI_Win_fence(0, win);
            bad = 0;
            for (int r = 0; r < n; r++)
                bad += mem[r] != 1000L * r + me;
            free(addr);
            MPI_Win_detach(win, mem);
        }
        int worst = 0;
        int mine = rc != MPI_SUCCESS ? 1 : bad;
        MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        tap_ok(worst == 0,
               "%s over two virtual nodes: every rank's put reached every rank (shm within a "
               "node, active messages across)",
               names[f]);
        if (rc == MPI_SUCCESS)
            MPI_Win_free(&win);
        if (f > 0)
            free(mem);
    }

    /* MPI_Win_allocate_shared needs one node. */
    int rc = MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), cls = 0;
    MPI_Error_class(rc, &cls);
    tap_is_long(cls, MPI_ERR_RMA_SHARED,
                "MPI_Win_allocate_shared over two virtual nodes fails with MPI_ERR_RMA_SHARED");
    const char *msg = MPIX_Nbrma_last_error();
    tap_ok(strstr(msg, "MPI_Win_allocate_shared") && strstr(msg, "MPI_Comm_split_type"),
           "the message names the call and the way out: %s", msg);
    tap_ok(win == MPI_WIN_NULL, "no window handle is returned");

    /* The virtual node is what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nn, nr;
    MPI_Comm_size(node, &nn);
    MPI_Comm_rank(node, &nr);
    int ok = nn == 2 && nr == me % 2, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    tap_ok(all, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives the virtual node (2 ranks)");
    double *sh = NULL;
    rc = MPI_Win_allocate_shared(8, 8, MPI_INFO_NULL, node, &sh, &win);
    int good = rc == MPI_SUCCESS;
    if (good) {
        MPI_Aint sz;
        int du;
        double *peer;
        MPI_Win_lock_all(0, win);
        *sh = 40 + me;
        MPI_Win_sync(win);
        MPI_Barrier(node);
        MPI_Win_sync(win);
        MPI_Win_shared_query(win, 1 - nr, &sz, &du, &peer);
        good = *peer == 40 + (me % 2 ? me - 1 : me + 1);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    tap_ok(all, "MPI_Win_allocate_shared on it works: each rank loads its node peer's store");
    MPI_Comm_free(&node);

    MPIX_Nbrma_set_impl("vendor");
    rc = MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    tap_is_long(rc, MPI_SUCCESS, "with the vendor implementation the spanning window is forwarded");
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    int r = tap_done();
    MPI_Finalize();
    return r;
}
