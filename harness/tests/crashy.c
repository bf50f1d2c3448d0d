/* crashy.c — a benchmark binary with a case that crashes and one that moves wrong data, as a
 * buggy vendor MPI would, and with --hang 1 one that hangs silently. The bench driver's test
 * checks that each is reported by name and that the healthy cases around them still produce
 * results. */
#include <signal.h>

#include "bench.h"

#include <unistd.h>

enum { OK_A, CRASH, WRONG, HANG, OK_B };
static long crash = 1, wrong = 1, hang = 0;

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    static const char *const q[] = {"latency"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    if (c->op == HANG && c->ctx->rank == 0)
        for (;;)
            pause(); /* silent forever; the other ranks wait for it in the first sample */
    while (gb_keep_running(st)) {
        double t0 = MPI_Wtime();
        nbh_work_us(2);
        double t = MPI_Wtime() - t0;
        nbh_rec_sample(&rec, st, &t);
    }
    if (c->op == CRASH && crash && c->ctx->rank == c->ctx->nranks - 1)
        raise(SIGSEGV);
    int ok = !(c->op == WRONG && wrong && c->ctx->rank == 1);
    if (nbh_verify(st, c, ok, "rank 1 pretends element 3 holds 7, expected 8"))
        nbh_rec_report(&rec, st);
    nbh_rec_free(&rec);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    static const char *const names[] = {"ok_a", "crash", "wrong", "hang", "ok_b"};
    for (int op = OK_A; op <= OK_B; op++)
        if (op != HANG || hang)
            nbh_add_case(ctx, s, op, 0, run, "X1_%s/%s", names[op], nbh_series_name(s));
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"crash", "1: the crash case raises SIGSEGV on the last rank", &crash, 0, 1},
        {"wrong", "1: the wrong case fails validation on rank 1", &wrong, 0, 1},
        {"hang", "1: add a case X1_hang whose rank 0 sleeps forever without a word", &hang, 0, 1},
        {0, 0, 0, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "X1",
        .title = "test binary: a crashing case and a wrong-data case",
        .header = "for the bench driver's tests only",
        .min_ranks = 2,
        .default_iters = 5,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
