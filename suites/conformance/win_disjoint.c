/* win_disjoint.c — windows of disjoint communicators are independent (MPI-3.1 §11.2: a window
 * is created collectively over its own communicator and nothing else). Four ranks split into two
 * pairs; both pairs create and free windows of every flavor at the same time, many times over.
 * Every creation must succeed and every window must carry its own pair's data.
 *
 * Why a program of its own: Open MPI 4.1.4 (osc/rdma, osc/sm) names the shared-memory segment of a
 * window after host, job and communicator context id. Two disjoint communicators on one host can
 * hold the same context id, so their windows' segments collide: one pair unlinks or truncates the
 * other's file and MPI_Win_allocate / MPI_Win_create fail with MPI_ERR_WIN (or an open(2) error
 * from opal shmem). This happens whenever a job splits one node's ranks into groups that create
 * windows concurrently, and with libnbrma's virtual nodes (NBRMA_RANKS_PER_NODE). */
#include "conf.h"

#define ROUNDS 60

static int create_one(int flavor, MPI_Comm comm, MPI_Win *win, long **base)
{
    switch (flavor) {
    case 0:
        return MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, base, win);
    case 1:
        *base = calloc(8, sizeof(long));
        return MPI_Win_create(*base, 8 * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, win);
    default:
        return MPI_Win_allocate_shared(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, base,
                                       win);
    }
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 4);
    tap_plan(3);
    static const char *const names[] = {"MPI_Win_allocate", "MPI_Win_create",
                                        "MPI_Win_allocate_shared"};
    int pair = conf_rank / 2 % 2; /* ranks beyond 4 join the pairs alternately */
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, pair, conf_rank, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    int spans = conf_spans_nodes(comm), any_spans;
    MPI_Allreduce(&spans, &any_spans, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    for (int flavor = 0; flavor < 3; flavor++) {
        if (flavor == 2 && any_spans) { /* every rank decides alike */
            tap_skip(1, "a pair spans nodes: MPI_Win_allocate_shared needs one node");
            continue;
        }
        int failed = 0, wrong = 0, first_rc = MPI_SUCCESS, first_round = -1;
        for (int r = 0; r < ROUNDS && !failed; r++) {
            MPI_Win win = MPI_WIN_NULL;
            long *base = NULL;
            int rc = create_one(flavor, comm, &win, &base);
            /* a rank whose creation failed cannot take part in the window's collectives; the
             * pair agrees before touching it (over the communicator, not the window) */
            int ok = rc == MPI_SUCCESS, all_ok;
            MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
            if (!all_ok) {
                failed = 1;
                first_rc = rc;
                first_round = r;
                if (flavor == 1)
                    free(base);
                break; /* the half-created window cannot be freed collectively: leave it */
            }
            long v = 1000L * pair + r;
            MPI_Win_fence(0, win);
            MPI_Put(&v, 1, MPI_LONG, (crank + 1) % csize, crank, 1, MPI_LONG, win);
            MPI_Win_fence(0, win);
            int from = (crank + csize - 1) % csize;
            if (base[from] != v)
                wrong++;
            MPI_Win_free(&win);
            if (flavor == 1)
                free(base);
        }
        if (failed) {
            char s[MPI_MAX_ERROR_STRING] = "(this rank's creation succeeded)";
            int len;
            if (first_rc != MPI_SUCCESS)
                MPI_Error_string(first_rc, s, &len);
            tap_diag("pair %d, round %d: %s failed on some rank of the pair: %s", pair,
                     first_round, names[flavor], s);
        }
        if (wrong)
            tap_diag("pair %d: %d rounds of %s read another pair's or a stale value", pair, wrong,
                     names[flavor]);
        tap_ok(!failed && !wrong,
               "%d rounds of %s on two disjoint communicators at once: all created, data their own",
               ROUNDS, names[flavor]);
        /* once a creation failed the vendor's state is suspect: every rank stops together and
         * the remaining flavors are reported as not run rather than risk a hang */
        int any_failed;
        MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (any_failed) {
            if (flavor < 2)
                tap_skip(2 - flavor, "an earlier flavor's creation failed");
            break;
        }
    }
    MPI_Comm_free(&comm);
    return conf_done();
}
