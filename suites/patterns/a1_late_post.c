/* a1_late_post.c — A1: Late Post (paper 000 §III, §IV-C1, §VIII-A1, Fig. 2).
 *
 * Rank 0 (P0) is a target that posts D late; rank 1 (P1) is a peer for two-sided communication;
 * rank 2 (P2) is the origin: at time 0 it opens an access epoch to P0, puts `size` bytes,
 * closes the epoch, then sends `size` bytes to P1 (the "subsequent activity"). Blocking series:
 * start, put, complete (which must wait for the late post), then the send. ref-nb (§IV-C1):
 * istart, put, icomplete, then the send at once, then the epoch's request; both completions are
 * observed by polling MPI_Test. Measured at P2, all from time 0: epoch_us (access epoch
 * completed), subsequent_us (send completed), cumulative_us (both). */
#include "ab.h"

enum { P0 = 0, P1 = 1, P2 = 2, TAG = 17 };

typedef struct {
    ab_t a;
    unsigned char *msg; /* the subsequent message */
} a1_t;

static void sample(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us, double *t)
{
    a1_t *x = arg;
    ab_t *a = &x->a;
    const int n = (int)a->size;
    MPI_Request r[3];
    double done[3] = {0, 0, 0};
    double t0 = nbh_align(al);
    switch (c->ctx->rank) {
    case P0: /* late target */
        nbh_work_us(delay_us);
        ab_post(c, a, P2, &r[0]);
        ab_wait(c, a, &r[1]);
        ab_complete_all(c, 2, r, done);
        break;
    case P1: /* the subsequent activity's peer */
        NBH_MPI(c, MPI_Irecv(x->msg, n, MPI_BYTE, P2, TAG, c->ctx->comm, &r[0]));
        ab_complete_all(c, 1, r, done);
        break;
    case P2: /* origin */
        ab_start(c, a, P0, &r[0]);
        ab_put(c, a, P0, 0);
        ab_complete(c, a, &r[1]);
        if (!ab_nb(c))
            done[1] = MPI_Wtime(); /* the blocking complete returned: the epoch is over */
        NBH_MPI(c, MPI_Isend(x->msg, n, MPI_BYTE, P1, TAG, c->ctx->comm, &r[2]));
        if (ab_nb(c)) {
            ab_complete_all(c, 3, r, done);
        } else {
            ab_complete_all(c, 1, r, done);
            ab_complete_all(c, 1, &r[2], &done[2]);
        }
        t[1] = done[1] - t0;
        t[2] = done[2] - t0;
        t[0] = t[1] > t[2] ? t[1] : t[2];
        break;
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"cumulative", "epoch", "subsequent"};
    const nbh_pattern_t p = {3, q, 2, sample, ab_reset};
    a1_t x;
    ab_open(&x.a, c, 1);
    ab_pin_late(c, P0);
    ab_expect(&x.a, P0, 0);
    x.msg = calloc(1, c->size ? c->size : 1);
    if (!x.msg)
        nbh_mpi_fail(c, "calloc (message)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    nbh_pattern_run(st, c, &p, &x);
    ab_verify(st, c, &x.a);
    free(x.msg);
    ab_close(&x.a);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    ab_register_a(ctx, s, 0, "A1_late_post", "delay_us", run);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {AB_PIN_OPT, {NULL, NULL, NULL, 0, 0}};
    static const nbh_experiment_t ex = {
        .id = "A1",
        .title = "Late Post: a late target delays the origin's next activity (000 Fig. 2)",
        .header =
            "rank 0 = P0, a target that busy-works D (--delay-us) before MPI_Win_post\n"
            "rank 1 = P1, receives a SIZE-byte two-sided message from P2\n"
            "rank 2 = P2, the origin, at time 0: start(P0), put SIZE bytes, complete, then\n"
            "  MPI_Isend of SIZE bytes to P1 (the subsequent activity)\n"
            "  ref-nb: istart, put, icomplete, the send at once, then both requests (MPI_Test)\n"
            "measured at P2 from time 0: epoch_us (access epoch completed), subsequent_us (send\n"
            "  completed), cumulative_us (both); propagated_delay_us = subsequent_us - the same\n"
            "  without the delay (same run)\n"
            "paper 000 saw: epoch ~ D + transfer in every series; subsequent ~ D + 2 transfers\n"
            "  blocking, ~ one transfer with ref-nb (the delay stays in the late epoch)",
        .min_ranks = 3,
        .max_ranks = 3,
        .uses = NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW,
        .default_sizes = "1M",
        .quick_sizes = "1M",
        .default_iters = 100,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
