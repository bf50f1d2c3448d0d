/* r3_noncontig.c — R3: a noncontiguous transfer within a node and across nodes, in one run
 * (issue 21 item 6; paper 004 §III-A: one packed message vs one operation per block).
 *
 * Rank 0 reads or writes an N x N int matrix of rank 1 (its node peer) and of rank 2 (another
 * node with NBRMA_RANKS_PER_NODE=2) through a target datatype that transposes it — N*N blocks of
 * 4 bytes — or through a vector of N*N single ints at stride 2. Per sample: lock exclusive, one
 * MPI_Get or MPI_Put of the whole matrix, unlock (all ranks: the maximum across ranks). The
 * origin's side is contiguous. Counters: xfer_us. Run on 4 ranks in two virtual nodes of two,
 * the ratio of a peer's figure to the other's is what crossing nodes costs; before packing, a
 * 1000 x 1000 transpose across nodes was a million requests (30 s). Every case checks the
 * transposed data once. --sizes gives N (default 100, 300, 1000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { P_TRANSPOSE, P_VECTOR1, P_N };
static const char *const pname[P_N] = {"transpose", "vector1"};
enum { O_GET, O_PUT };

/* Rank 0's epoch: lock, the transfer, unlock. */
static void one(const nbh_case_t *c, int put, int peer, int *buf, MPI_Aint elems, MPI_Datatype t,
                MPI_Win win)
{
    NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win));
    NBH_MPI(c, put ? MPI_Put(buf, (int)elems, MPI_INT, peer, 0, 1, t, win)
                   : MPI_Get(buf, (int)elems, MPI_INT, peer, 0, 1, t, win));
    NBH_MPI(c, MPI_Win_unlock(peer, win));
}

/* op = pattern * 4 + dir * 2 + (peer - 1) */
static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int pat = c->op / 4, put = c->op / 2 % 2 == O_PUT, peer = 1 + c->op % 2;
    const int n = (int)c->size, me = c->ctx->rank;
    if (MPIX_Nbrma_set_impl)
        NBH_MPI(c, MPIX_Nbrma_set_impl(c->series == NBH_VENDOR ? "vendor" : "ref"));
    const MPI_Aint elems = (MPI_Aint)n * n, span = pat == P_TRANSPOSE ? elems : 2 * elems;
    int *mem = malloc((size_t)span * sizeof(int)), *buf = malloc((size_t)elems * sizeof(int));
    if (!mem || !buf)
        nbh_mpi_fail(c, "malloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    for (MPI_Aint i = 0; i < span; i++)
        mem[i] = (int)i;
    for (MPI_Aint i = 0; i < elems; i++)
        buf[i] = put ? -(int)i - 1 : 0;
    MPI_Win win;
    NBH_MPI(c, MPI_Win_create(mem, span * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                              c->ctx->comm, &win));
    MPI_Datatype t, col;
    if (pat == P_TRANSPOSE) {
        NBH_MPI(c, MPI_Type_vector(n, 1, n, MPI_INT, &col));
        NBH_MPI(c, MPI_Type_create_hvector(n, 1, sizeof(int), col, &t));
        NBH_MPI(c, MPI_Type_free(&col));
    } else {
        NBH_MPI(c, MPI_Type_vector((int)elems, 1, 2, MPI_INT, &t));
    }
    NBH_MPI(c, MPI_Type_commit(&t));
    /* The transfer once, checked: element i of the origin buffer is target element
     * (i % n) * n + i / n (transpose) or 2 i (vector). */
    MPI_Barrier(c->ctx->comm);
    if (me == 0)
        one(c, put, peer, buf, elems, t, win);
    MPI_Barrier(c->ctx->comm);
    int ok = 1;
    for (MPI_Aint i = 0; i < elems && ((me == 0 && !put) || (me == peer && put)); i++) {
        MPI_Aint at = pat == P_TRANSPOSE ? (i % n) * n + i / n : 2 * i;
        ok &= put ? mem[at] == -(int)i - 1 : buf[i] == (int)at;
    }
    nbh_case_begin(c);
    static const char *const q[] = {"xfer"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    for (int i = 0; i < c->ctx->opts.warmup && me == 0; i++)
        one(c, put, peer, buf, elems, t, win);
    while (gb_keep_running(st)) {
        double t0 = MPI_Wtime(), d = 0;
        if (me == 0) {
            one(c, put, peer, buf, elems, t, win);
            d = MPI_Wtime() - t0;
        }
        nbh_rec_sample(&rec, st, &d);
    }
    if (nbh_verify(st, c, ok, "the %s %s of %d x %d ints toward rank %d moved wrong data",
                   pname[pat], put ? "put" : "get", n, n, peer))
        nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
    NBH_MPI(c, MPI_Type_free(&t));
    NBH_MPI(c, MPI_Win_free(&win));
    free(mem), free(buf);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int i = 0; i < ctx->opts.nsizes; i++)
        for (int pat = 0; pat < P_N; pat++)
            for (int dir = 0; dir < 2; dir++)
                for (int peer = 1; peer <= 2; peer++)
                    nbh_add_case(ctx, s, pat * 4 + dir * 2 + (peer - 1), ctx->opts.sizes[i], run,
                                 "R3_%s_%s/%s/peer:%s/n:%zu", pname[pat], dir ? "put" : "get",
                                 nbh_series_name(s),
                                 ctx->node[peer] == ctx->node[0] ? "same_node" : "other_node",
                                 ctx->opts.sizes[i]);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "R3",
        .title = "noncontiguous transfers within a node and across nodes (004 §III-A)",
        .header = "rank 0: lock rank 1 (or 2), one MPI_Get/MPI_Put of an N x N int matrix through\n"
                  "a transposing (or stride-2 vector) target type, unlock; origin contiguous\n"
                  "measured: xfer_us per transfer (max across ranks); peers: node peer, other node",
        .min_ranks = 3,
        .uses = NBH_USE_SIZES,
        .default_sizes = "100,300,1000",
        .quick_sizes = "100",
        .default_iters = 20,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "the transfer is one call in a lock epoch; synchronization is not measured",
    };
    return nbh_main(argc, argv, &ex);
}
