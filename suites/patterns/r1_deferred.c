/* r1_deferred.c — R1: what a deferred epoch costs as the queue grows (issue #9 item 5; paper 000
 * §VII-A's deferred epochs, §VII-D's engine). ref-nb only.
 *
 * Origin rank 0, target rank 1. The target posts late: the origin's first epoch (istart, put,
 * icomplete) waits for that post, and K lock epochs queued behind it (ilock exclusive,
 * accumulate, iunlock) all stay deferred. Measured per epoch: queue_us (the calls that queue
 * them, divided by K), drain_us (from the target's post to the last request completing,
 * divided by K) and total_us; bytes_per_epoch is what the heap grew by while they were queued,
 * divided by K (epoch objects, recorded calls, the generalized requests of the MPI library).
 * An engine whose work per call does not depend on the queue gives flat figures from K = 100 to
 * K = 100000 (--sizes gives the K values). The target checks that all K accumulates landed. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { ORIGIN = 0, TARGET = 1 };

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank;
    const long K = (long)c->size;
    nbh_win_t w;
    nbh_win_open(&w, c, 64);
    const MPI_Aint disp = nbh_win_disp(&w, TARGET, 0);
    MPI_Group world, peer;
    NBH_MPI(c, MPI_Comm_group(c->ctx->comm, &world));
    int other = 1 - me;
    NBH_MPI(c, MPI_Group_incl(world, 1, &other, &peer));
    MPI_Request *r = me == ORIGIN ? malloc((size_t)(2 * K + 2) * sizeof *r) : NULL;
    /* (statuses, not MPI_STATUSES_IGNORE, which trips gcc's -Wstringop-overflow in MPICH's
     * header) */
    MPI_Status *sts = me == ORIGIN ? malloc((size_t)(2 * K + 2) * sizeof *sts) : NULL;
    if (me == ORIGIN && (!r || !sts))
        nbh_mpi_fail(c, "malloc of the request array", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    static const char *const q[] = {"total", "queue", "drain"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 3, q);
    const int64_t one = 1;
    long rounds = 0;
    double bytes = 0;
    while (gb_keep_running(st)) {
        double t[3] = {0, 0, 0};
        int go = 1;
        if (me == ORIGIN) {
            struct mallinfo2 m0 = mallinfo2();
            double t0 = MPI_Wtime();
            NBH_MPI(c, MPIX_Win_istart(peer, 0, w.win, &r[0]));
            NBH_MPI(c, MPI_Put(&one, 1, MPI_INT64_T, TARGET, disp + 8, 1, MPI_INT64_T, w.win));
            NBH_MPI(c, MPIX_Win_icomplete(w.win, &r[1]));
            for (long i = 0; i < K; i++) {
                NBH_MPI(c, MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, TARGET, 0, w.win, &r[2 + 2 * i]));
                NBH_MPI(c, MPI_Accumulate(&one, 1, MPI_INT64_T, TARGET, disp, 1, MPI_INT64_T,
                                          MPI_SUM, w.win));
                NBH_MPI(c, MPIX_Win_iunlock(TARGET, w.win, &r[3 + 2 * i]));
            }
            double t1 = MPI_Wtime();
            struct mallinfo2 m1 = mallinfo2();
            if (rounds == 0)
                bytes = ((double)m1.uordblks - (double)m0.uordblks) / (double)K;
            MPI_Request s;
            NBH_MPI(c, MPI_Isend(&go, 1, MPI_INT, TARGET, 0, c->ctx->comm, &s));
            NBH_MPI(c, nbh_wait(&s));
            NBH_MPI(c, MPI_Waitall((int)(2 * K + 2), r, sts));
            double t2 = MPI_Wtime();
            t[0] = (t2 - t0) / (double)K;
            t[1] = (t1 - t0) / (double)K;
            t[2] = (t2 - t1) / (double)K;
        } else if (me == TARGET) {
            MPI_Request s[2];
            NBH_MPI(c, MPI_Irecv(&go, 1, MPI_INT, ORIGIN, 0, c->ctx->comm, &s[0]));
            NBH_MPI(c, nbh_wait(&s[0]));
            NBH_MPI(c, MPIX_Win_ipost(peer, 0, w.win, &s[0]));
            NBH_MPI(c, MPIX_Win_iwait(w.win, &s[1]));
            NBH_MPI(c, nbh_wait(&s[0]));
            NBH_MPI(c, nbh_wait(&s[1]));
        }
        rounds++;
        nbh_rec_sample(&rec, st, t);
    }
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    int64_t got = 0;
    int ok = 1;
    if (me == TARGET) {
        nbh_win_self_lock(&w, c);
        memcpy(&got, w.base, sizeof got);
        nbh_win_self_unlock(&w, c);
        ok = got == K * rounds;
    }
    if (nbh_verify(st, c, ok, "target holds %lld after %ld rounds of %ld accumulates",
                   (long long)got, rounds, K)) {
        nbh_rec_report(&rec, st);
        NBH_MPI(c, nbh_bcast(&bytes, 1, MPI_DOUBLE, ORIGIN, c->ctx->comm));
        gb_set_counter(st, "bytes_per_epoch", bytes);
    }
    nbh_rec_free(&rec);
    free(r);
    free(sts);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    nbh_win_close(&w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    for (int i = 0; i < ctx->opts.nsizes; i++)
        nbh_add_case(ctx, s, 0, ctx->opts.sizes[i], run, "R1_deferred_epochs/%s/epochs:%zu",
                     nbh_series_name(s), ctx->opts.sizes[i]);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "R1",
        .title = "deferred epochs: cost per epoch as the queue grows (000 §VII-A, §VII-D)",
        .header = "origin rank 0, target rank 1; --sizes gives K, the number of queued epochs\n"
                  "origin: istart+put+icomplete (the target posts late), then K x (ilock, "
                  "accumulate, iunlock), all deferred\n"
                  "then the target posts; the origin MPI_Waitall's every request\n"
                  "measured per epoch: queue_us (queueing calls / K), drain_us (post to last "
                  "completion / K), total_us; bytes_per_epoch (heap growth / K)\n"
                  "flat from small K to large K = per-call work independent of the queue",
        .min_ranks = 2,
        .max_ranks = 2,
        .uses = NBH_USE_SIZES | NBH_USE_WINDOW,
        .default_sizes = "100,1000,10000,100000",
        .quick_sizes = "100,10000",
        .default_iters = 5,
        .register_cases = register_cases,
        .series = 1u << NBH_REF_NB,
        .series_why = "deferred epochs exist only with libnbrma's nonblocking synchronization",
    };
    return nbh_main(argc, argv, &ex);
}
