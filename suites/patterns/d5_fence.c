/* d5_fence.c — D5: fence cost vs process count (paper 001 §3.2; fit P_fence = 2.9 us*log2 p).
 *
 * Every rank runs a loop of MPI_Win_fence(0) on an allocated window with no communication; a
 * sample is one fence, the maximum across ranks. Run it at several rank counts (the benchmark
 * list does 2, 3 and 4 here) to see the growth with p. */
#include "bench.h"

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    nbh_win_t w;
    nbh_win_open(&w, c, 64);
    NBH_MPI(c, MPI_Win_fence(0, w.win));
    for (int i = 0; i < c->ctx->opts.warmup; i++)
        NBH_MPI(c, MPI_Win_fence(0, w.win));
    static const char *const q[] = {"fence"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double t0 = MPI_Wtime();
        MPI_Win_fence(0, w.win);
        double t = MPI_Wtime() - t0;
        nbh_rec_sample(&rec, st, &t);
    }
    NBH_MPI(c, MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
    nbh_win_close(&w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    nbh_add_case(ctx, s, 0, 0, run, "D5_fence/%s/procs:%d", nbh_series_name(s), ctx->nranks);
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "D5",
        .title = "fence cost vs number of processes (paper 001 §3.2)",
        .header = "every rank: loop of MPI_Win_fence(0), no communication\n"
                  "sample = one fence, maximum across ranks (a collective: no one-way/round-trip)",
        .min_ranks = 2,
        .uses = NBH_USE_WINDOW,
        .default_iters = 1000,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "it measures the blocking calls (the nonblocking epochs are A1-A7, B1-B5)",
    };
    return nbh_main(argc, argv, &ex);
}
