/* test_am_order.c — across nodes, what follows a large put never overtakes it (issue 10 §2).
 *
 * The am transport lets an origin send a PSCW done notification or its target's lock word right
 * behind its data (transport/am.c: a pair's requests take effect in order). A large put lands
 * when its payload's receive completes, after its header was served; the target keeps every
 * later request of that origin until then. Here the data is 2 MiB (a rendezvous transfer):
 *   1. PSCW: rank 1 puts a round's pattern into rank 0 and completes; rank 0's wait returns
 *      and every byte must be the round's.
 *   2. Locks: ranks 1 and 2 alternate exclusive epochs on rank 0, each writing its own pattern
 *      over the whole 2 MiB, and each first reading it back whole: a reader must never see a
 *      mix of two writers (a lock word released before the data landed would allow it).
 * Run on 3 ranks with NBRMA_RANKS_PER_NODE=1 (every pair over am). */
#include <stdlib.h>
#include <string.h>

#include "nbrma.h"
#include "tap.h"

#define BYTES  (2u << 20)
#define ROUNDS 8

/* The first byte index where buf is not all `v`, or -1. */
static long mixed(const unsigned char *buf, unsigned char v)
{
    for (size_t i = 0; i < BYTES; i++)
        if (buf[i] != v)
            return (long)i;
    return -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE");
    if (n != 3 || !rpn || strcmp(rpn, "1") != 0)
        tap_bail_out("run on 3 ranks with NBRMA_RANKS_PER_NODE=1 (see ref/tests/testlist)");
    MPIX_Nbrma_set_impl("ref");
    tap_plan(2);
    unsigned char *mem, *buf = malloc(BYTES);
    MPI_Win win;
    MPI_Win_allocate(me == 0 ? BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (me == 0)
        memset(mem, 0, BYTES);
    MPI_Group world, g0, g1;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int r0 = 0, r1 = 1;
    MPI_Group_incl(world, 1, &r0, &g0);
    MPI_Group_incl(world, 1, &r1, &g1);
    MPI_Barrier(MPI_COMM_WORLD);

    long bad = -1;
    for (int k = 0; k < ROUNDS; k++) {
        unsigned char v = (unsigned char)(10 + k);
        if (me == 0) {
            MPI_Win_post(g1, 0, win);
            MPI_Win_wait(win);
            long at = mixed(mem, v);
            if (at >= 0 && bad < 0) {
                bad = at;
                tap_diag("round %d: byte %ld is %d after MPI_Win_wait, expected %d", k, at, mem[at],
                         v);
            }
        } else if (me == 1) {
            memset(buf, v, BYTES);
            MPI_Win_start(g0, 0, win);
            MPI_Put(buf, BYTES, MPI_BYTE, 0, 0, BYTES, MPI_BYTE, win);
            MPI_Win_complete(win);
        }
    }
    long all;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    tap_ok(all < 0, "PSCW: after MPI_Win_wait all %u bytes of each of %d large puts are in", BYTES,
           ROUNDS);

    bad = -1;
    if (me > 0) {
        unsigned char *seen = malloc(BYTES);
        for (int k = 0; k < ROUNDS; k++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Get(seen, BYTES, MPI_BYTE, 0, 0, BYTES, MPI_BYTE, win);
            MPI_Win_flush(0, win);
            long at = mixed(seen, seen[0]);
            if (at >= 0 && bad < 0) {
                bad = at;
                tap_diag("rank %d, round %d: byte 0 is %d but byte %ld is %d: two writers mixed",
                         me, k, seen[0], at, seen[at]);
            }
            memset(buf, 100 * me + k, BYTES);
            MPI_Put(buf, BYTES, MPI_BYTE, 0, 0, BYTES, MPI_BYTE, win);
            MPI_Win_unlock(0, win);
        }
        free(seen);
    }
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    tap_ok(all < 0, "exclusive locks: no reader saw a mix of two writers' 2 MiB (%d rounds each)",
           ROUNDS);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    free(buf);
    int r = tap_done();
    MPI_Finalize();
    return r;
}
