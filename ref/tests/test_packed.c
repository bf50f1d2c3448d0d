/* test_packed.c — packed transfers across nodes (issue 21 item 6; ref-internals.md, "Packed
 * transfers"). 4 ranks in two virtual nodes of NBRMA_RANKS_PER_NODE=2: rank 0 reaches rank 1 over
 * shared memory and rank 2 over active messages. For targets laid out as a transpose, a vector
 * of single ints, a subarray, a struct and a resized vector with a negative lower bound, rank 0
 * puts, gets, accumulates and get_accumulates the same data toward rank 1 and toward rank 2: the
 * bytes must be the same, and toward rank 2 the call must cross as few packed messages (the
 * request counters of transport/am.c), not one per block. A target of large blocks keeps the
 * per-block path (each block a zero-copy transfer). */
#include <stdlib.h>
#include <string.h>

#include "nbrma.h"
#include "tap.h"
#include "transport/tp.h"

#define N 200 /* transpose of N x N ints: N*N blocks of 4 bytes */

static int me;

enum { T_TRANSPOSE, T_VECTOR1, T_SUBARRAY, T_STRUCT, T_RESIZED, T_BIGBLOCKS, T_N };
static const char *const tname[T_N] = {"a transpose of 200 x 200 ints",
                                       "a vector of 30000 single ints, stride 2",
                                       "a 100 x 50 subarray of a 120 x 300 int array",
                                       "a struct of 1000 ints and 1000 ints, reversed",
                                       "2 x resized(vector(5000, 1, 3)), lower bound -12",
                                       "a vector of 4 blocks of 8192 ints (large blocks)"};

/* The target type, its count, the ints it moves, and where its span starts (bytes from the
 * target displacement). */
static MPI_Datatype make(int k, int *count, int *nints, MPI_Aint *lo)
{
    MPI_Datatype t, a, b;
    *count = 1, *lo = 0;
    switch (k) {
    case T_TRANSPOSE:
        MPI_Type_vector(N, 1, N, MPI_INT, &a);
        MPI_Type_create_hvector(N, 1, sizeof(int), a, &t);
        MPI_Type_free(&a);
        *nints = N * N;
        break;
    case T_VECTOR1:
        MPI_Type_vector(30000, 1, 2, MPI_INT, &t);
        *nints = 30000;
        break;
    case T_SUBARRAY: {
        int sizes[2] = {120, 300}, sub[2] = {100, 50}, start[2] = {7, 31};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t);
        *nints = 5000;
        break;
    }
    case T_STRUCT: {
        int len[2] = {1000, 1000};
        MPI_Aint d[2] = {8000, 0};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        MPI_Type_create_struct(2, len, d, ty, &t);
        *nints = 2000;
        break;
    }
    case T_RESIZED:
        MPI_Type_vector(5000, 1, 3, MPI_INT, &a);
        MPI_Type_create_resized(a, -12, 15000 * sizeof(int), &b);
        MPI_Type_free(&a);
        t = b;
        *count = 2, *nints = 10000, *lo = 0; /* the type map starts at byte 0 (lb is a bound) */
        break;
    default:
        MPI_Type_vector(4, 8192, 9000, MPI_INT, &t);
        *nints = 4 * 8192;
        break;
    }
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE");
    if (!rpn || strcmp(rpn, "2") != 0 || n != 4)
        tap_bail_out("run on 4 ranks with NBRMA_RANKS_PER_NODE=2 (see ref/tests/testlist)");
    MPIX_Nbrma_set_impl("ref");
    const MPI_Aint wbytes = 4 << 20;
    int *wmem = malloc((size_t)wbytes), *org = malloc((size_t)wbytes),
        *res1 = malloc((size_t)wbytes), *res2 = malloc((size_t)wbytes);
    MPI_Win win;
    MPI_Win_create(wmem, wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    tap_plan(T_N * 4);
    const MPI_Aint disp = 64; /* every span starts at or above byte 64 - 12 */
    for (int k = 0; k < T_N; k++) {
        int count, nints;
        MPI_Aint lo;
        MPI_Datatype t = make(k, &count, &nints, &lo);
        for (int op = 0; op < 4; op++) { /* put, get, accumulate SUM, get_accumulate SUM */
            for (MPI_Aint i = 0; i < wbytes / 4; i++)
                wmem[i] = (int)(i * 3 + 1) * (me == 1 || me == 2 ? 1 : 0); /* ranks 1, 2 alike */
            for (int i = 0; i < nints; i++)
                org[i] = 1000000 + i * 7;
            memset(res1, 0xa5, (size_t)wbytes);
            memset(res2, 0xa5, (size_t)wbytes);
            MPI_Barrier(MPI_COMM_WORLD);
            unsigned long sent = 0, packed = 0;
            if (me == 0) {
                for (int peer = 1; peer <= 2; peer++) {
                    int *res = peer == 1 ? res1 : res2;
                    unsigned long s0 = nbr_am_sent, p0 = nbr_am_sent_packed;
                    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
                    if (op == 0)
                        MPI_Put(org, nints, MPI_INT, peer, disp, count, t, win);
                    else if (op == 1)
                        MPI_Get(res, nints, MPI_INT, peer, disp, count, t, win);
                    else if (op == 2)
                        MPI_Accumulate(org, nints, MPI_INT, peer, disp, count, t, MPI_SUM, win);
                    else
                        MPI_Get_accumulate(org, nints, MPI_INT, res, nints, MPI_INT, peer, disp,
                                           count, t, MPI_SUM, win);
                    MPI_Win_unlock(peer, win);
                    if (peer == 2) /* the lock's own messages are few: count the call's */
                        sent = nbr_am_sent - s0, packed = nbr_am_sent_packed - p0;
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
            /* Ranks 1 and 2 compare their windows; rank 0 its two results. */
            int bad = 0;
            if (me == 1 || me == 2) {
                int *other = malloc((size_t)wbytes);
                MPI_Sendrecv(wmem, (int)(wbytes / 4), MPI_INT, 3 - me, 0, other,
                             (int)(wbytes / 4), MPI_INT, 3 - me, 0, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                if (memcmp(wmem, other, (size_t)wbytes) != 0)
                    bad = 1, tap_diag("ranks 1 (shared memory) and 2 (other node) differ");
                free(other);
            }
            if (me == 0 && (op == 1 || op == 3) && memcmp(res1, res2, (size_t)wbytes) != 0)
                bad = 1, tap_diag("the results from rank 1 and rank 2 differ");
            static const char *const oname[] = {"MPI_Put", "MPI_Get", "MPI_Accumulate(SUM)",
                                                "MPI_Get_accumulate(SUM)"};
            /* Packed: 12 KiB of data per eager message at least, or one rendezvous message. */
            unsigned long bytes = (unsigned long)nints * 4, most = bytes / 12288 + 4;
            int want_packed = k != T_BIGBLOCKS;
            MPI_Bcast(&sent, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
            MPI_Bcast(&packed, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
            int shape = want_packed ? packed >= 1 && sent <= most : packed == 0;
            tap_ok(!bad && shape,
                   "%s onto %s: same bytes over shared memory and across nodes; %lu requests "
                   "(%lu packed)%s",
                   oname[op], tname[k], sent, packed,
                   want_packed ? "" : ": large blocks keep the per-block path");
        }
        MPI_Type_free(&t);
    }
    MPI_Win_free(&win);
    free(wmem), free(org), free(res1), free(res2);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
