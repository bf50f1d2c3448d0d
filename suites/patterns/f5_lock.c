/* f5_lock.c — F5: queued vs polling locks (paper 004 §III-C2, §IV-C, Figure 6; issue 26).
 *
 * All-to-one, as in 004's experiment: every rank takes an exclusive lock on rank 0's window, does
 * SIZE one-byte puts into it, and unlocks, --epochs times in a row (so that the ranks' epochs
 * overlap and contend, whatever the skew with which they leave the barrier before the round); a
 * sample is one such round of all ranks, timed per rank and divided by the epochs (maximum across
 * ranks). The same libnbrma binary runs both strategies, per window with the info key
 * nbrma_lock: polling (001 §2.3's two-level lock: a waiting origin retries the target's lock word)
 * and queued (an MCS queue: one swap at the target, then a wait in the origin's own memory for the
 * releasing holder's grant; lock.c). Vendor: the MPI library's own lock (004: MPICH queues at the
 * target's CPU). Counters: epoch_us (median of the rounds, per epoch), queue_bytes
 * (MPIX_Win_get_stats' lock_queue in the process, maximum across ranks; 004 Fig. 6c: 32 B per
 * origin per window in MPICH; 0 for the vendor, which does not say).
 *
 * Data: an epoch writes the same byte (its rank and round) into each of its SIZE bytes; epochs
 * under an exclusive lock never interleave, so after every round the target finds its SIZE bytes
 * all equal, and equal to the value of some rank's epoch of that round. */
#include <stdint.h>
#include <stdio.h>

#include "strategy.h"

enum { S_VENDOR, S_POLLING, S_QUEUED };
static const char *const sname[] = {"vendor", "polling", "queued"};

static long epochs = 100;

static unsigned char tag(int rank, long round)
{
    return (unsigned char)(1 + (rank * 37 + round) % 251);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, p = c->ctx->nranks, target = 0, strat = c->op;
    const size_t n = c->size;
    if (n > (size_t)1 << 24) {
        gb_skip_with_error(st, "more than 16 Mi puts per epoch");
        return;
    }
    if (MPIX_Nbrma_set_impl)
        NBH_MPI(c, MPIX_Nbrma_set_impl(strat == S_VENDOR ? "vendor" : "ref"));
    else if (strat != S_VENDOR) {
        gb_skip_with_error(st, "not running on libnbrma");
        return;
    }
    MPI_Info info = MPI_INFO_NULL;
    if (strat != S_VENDOR) {
        NBH_MPI(c, MPI_Info_create(&info));
        NBH_MPI(c, MPI_Info_set(info, "nbrma_lock", sname[strat]));
    }
    unsigned char *base;
    MPI_Win win;
    NBH_MPI(c,
            MPI_Win_allocate((MPI_Aint)(me == target ? n : 0), 1, info, c->ctx->comm, &base, &win));
    if (info != MPI_INFO_NULL)
        NBH_MPI(c, MPI_Info_free(&info));
    if (strat != S_VENDOR && !strat_info_is(c, st, win, "nbrma_lock", sname[strat])) {
        NBH_MPI(c, MPI_Win_free(&win));
        return;
    }
    unsigned char *src = malloc(n);
    if (!src)
        nbh_mpi_fail(c, "malloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    if (me == target) {
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
        memset(base, 0, n);
        NBH_MPI(c, MPI_Win_unlock(me, win));
    }
    static const char *const q[] = {"epoch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    long round = 0, bad_round = -1;
    while (gb_keep_running(st)) {
        round++;
        memset(src, tag(me, round), n);
        double t0 = MPI_Wtime();
        for (long e = 0; e < epochs; e++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
            for (size_t i = 0; i < n; i++)
                MPI_Put(&src[i], 1, MPI_BYTE, target, (MPI_Aint)i, 1, MPI_BYTE, win);
            MPI_Win_unlock(target, win);
        }
        double t = (MPI_Wtime() - t0) / (double)epochs;
        NBH_MPI(c, nbh_barrier(c->ctx->comm));
        nbh_rec_sample(&rec, st, &t);
        if (me == target && bad_round < 0) { /* every holder of the round is done */
            NBH_MPI(c, MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
            int ok = 0;
            for (int r = 0; r < p && !ok; r++)
                ok = base[0] == tag(r, round);
            for (size_t i = 1; i < n && ok; i++)
                ok = base[i] == base[0];
            NBH_MPI(c, MPI_Win_unlock(me, win));
            if (!ok)
                bad_round = round;
        }
        NBH_MPI(c, nbh_barrier(c->ctx->comm)); /* the next round waits for the check */
    }
    double qb = 0;
    if (strat != S_VENDOR)
        qb = (double)strat_stats(c, win).lock_queue.bytes;
    NBH_MPI(c, MPI_Allreduce(MPI_IN_PLACE, &qb, 1, MPI_DOUBLE, MPI_MAX, c->ctx->comm));
    NBH_MPI(c, MPI_Bcast(&bad_round, 1, MPI_LONG, target, c->ctx->comm));
    nbh_verify(st, c, bad_round < 0,
               "round %ld: the target's bytes are not one epoch's (two exclusive epochs "
               "interleaved, or a put was lost)",
               bad_round);
    nbh_rec_report(&rec, st);
    gb_set_counter(st, "queue_bytes", qb);
    nbh_rec_free(&rec);
    NBH_MPI(c, MPI_Win_free(&win));
    free(src);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    int first = s == NBH_VENDOR ? S_VENDOR : S_POLLING,
        last = s == NBH_VENDOR ? S_VENDOR : S_QUEUED;
    for (int i = 0; i < ctx->opts.nsizes; i++)
        for (int k = first; k <= last; k++)
            nbh_add_case(ctx, s, k, ctx->opts.sizes[i], run,
                         "F5_lock/%s/lock:%s/ops:%zu/epochs:%ld/procs:%d/nodes:%d",
                         nbh_series_name(s), sname[k], ctx->opts.sizes[i], epochs, ctx->nranks,
                         ctx->nnodes);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"epochs", "exclusive lock epochs of each rank per sample, back to back", &epochs, 1,
         1000000},
        {0, 0, 0, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "F5",
        .title = "queued vs polling locks, all ranks lock one target exclusively (paper 004 "
                 "§III-C2, §IV-C Fig. 6)",
        .header =
            "every rank: MPI_Win_lock(EXCLUSIVE, rank 0); SIZE puts of 1 B; MPI_Win_unlock\n"
            "sample = one round of all ranks: lock .. unlock per rank, maximum across ranks;\n"
            "queue_bytes: MPIX_Win_get_stats lock_queue, maximum across ranks;\n"
            "ref per window: info nbrma_lock=polling | queued",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "1,64,4096",
        .quick_sizes = "1,64",
        .default_iters = 50,
        .extra = extra,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "the experiment's locks are blocking (ref-nb: nothing nonblocking to "
                      "measure)",
    };
    return nbh_main(argc, argv, &ex);
}
