/* d6_pscw.c — D6: general active target synchronization on a ring (paper 001 §3.2).
 *
 * Each rank exposes its window to and accesses the windows of its two ring neighbours (k = 2;
 * with 2 ranks both neighbours are the same rank, k = 1). A sample is one
 * post, start, complete, wait sequence with no communication; each call is timed separately
 * and reported as the maximum across ranks. Paper's fits: P_post = P_complete = 350 ns*k,
 * P_start = 0.7 us, P_wait = 1.8 us. */
#include "bench.h"

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, p = c->ctx->nranks;
    int nb[2] = {(me + p - 1) % p, (me + 1) % p};
    int k = nb[0] == nb[1] ? 1 : 2;
    MPI_Group world, ring;
    NBH_MPI(c, MPI_Comm_group(c->ctx->comm, &world));
    NBH_MPI(c, MPI_Group_incl(world, k, nb, &ring));
    nbh_win_t w;
    nbh_win_open(&w, c, 64);

    for (int i = 0; i < c->ctx->opts.warmup; i++) {
        NBH_MPI(c, MPI_Win_post(ring, 0, w.win));
        NBH_MPI(c, MPI_Win_start(ring, 0, w.win));
        NBH_MPI(c, MPI_Win_complete(w.win));
        NBH_MPI(c, MPI_Win_wait(w.win));
    }
    static const char *const q[] = {"epoch", "post", "start", "complete", "wait"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 5, q);
    while (gb_keep_running(st)) {
        double t[5];
        double t0 = MPI_Wtime();
        MPI_Win_post(ring, 0, w.win);
        double t1 = MPI_Wtime();
        MPI_Win_start(ring, 0, w.win);
        double t2 = MPI_Wtime();
        MPI_Win_complete(w.win);
        double t3 = MPI_Wtime();
        MPI_Win_wait(w.win);
        double t4 = MPI_Wtime();
        t[0] = t4 - t0;
        t[1] = t1 - t0;
        t[2] = t2 - t1;
        t[3] = t3 - t2;
        t[4] = t4 - t3;
        nbh_rec_sample(&rec, st, t);
    }
    nbh_rec_report(&rec, st);
    gb_set_counter(st, "k", k);
    nbh_rec_free(&rec);
    nbh_win_close(&w);
    MPI_Group_free(&ring);
    MPI_Group_free(&world);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    int k = ctx->nranks > 2 ? 2 : 1;
    nbh_add_case(ctx, s, 0, 0, run, "D6_pscw_ring/%s/procs:%d/k:%d", nbh_series_name(s),
                 ctx->nranks, k);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "D6",
        .title = "PSCW on a ring, each rank with two neighbours (paper 001 §3.2)",
        .header =
            "every rank: post(neighbours), start(neighbours), complete, wait; no communication\n"
            "each call timed separately, maximum across ranks; epoch_us = the whole sequence\n"
            "k = 2 needs 3 or more ranks (with 2 ranks both neighbours coincide: k = 1)",
        .min_ranks = 2,
        .uses = NBH_USE_WINDOW,
        .default_iters = 1000,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures the blocking calls (the nonblocking epochs are A1-A7, B1-B5)",
    };
    return nbh_main(argc, argv, &ex);
}
