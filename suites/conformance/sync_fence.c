/* sync_fence.c — active-target synchronization with MPI_Win_fence: a ring shift over several
 * epochs using the assertions MPI_MODE_NOPRECEDE, NOSTORE and NOSUCCEED where they hold, a
 * get-only epoch opened with MPI_MODE_NOPUT, local stores between fences seen by the next epoch's
 * MPI_Get, concurrent accumulates + puts + gets in one epoch, and a large (256 KiB) transfer. */
#include "conf.h"

#define N      32
#define ROUNDS 3
#define BIG    (256 * 1024 / (int)sizeof(int))

static int *base;
static MPI_Win win;

/* Ring shift: epoch k sends window half (k-1)%2 to the right neighbour's half k%2, straight
 * from window memory, so the half being read is never written in the same epoch. No rank stores
 * to the window between fences, so every closing fence may assert MPI_MODE_NOSTORE. */
static void ring_shift(void)
{
    int exp[N];
    conf_fill_int(base, N, 1, conf_rank);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int k = 1; k <= ROUNDS; k++) {
        int src = (k - 1) % 2 * N, dst = k % 2 * N;
        MPI_Put(base + src, N, MPI_INT, conf_right(), dst, N, MPI_INT, win);
        MPI_Win_fence(MPI_MODE_NOSTORE | (k == ROUNDS ? MPI_MODE_NOSUCCEED : 0), win);
        int from = ((conf_rank - k) % conf_size + conf_size) % conf_size;
        conf_fill_int(exp, N, 1, from);
        tap_ok(conf_check_int(base + dst, exp, N, "rank %d's window half %d", conf_rank, k % 2),
               "fence ring shift, epoch %d of %d (asserts NOPRECEDE, NOSTORE%s): window holds the "
               "data of the rank %d place%s left",
               k, ROUNDS, k == ROUNDS ? ", NOSUCCEED" : "", k, k > 1 ? "s" : "");
    }
}

/* A get-only epoch: nobody puts or accumulates, so the opening fence asserts MPI_MODE_NOPUT. */
static void get_only(void)
{
    conf_fill_int(base, N, 2, conf_rank);
    int l[8], r[8], el[8], er[8];
    MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT, win);
    MPI_Get(l, 8, MPI_INT, conf_left(), 0, 8, MPI_INT, win);
    MPI_Get(r, 8, MPI_INT, conf_right(), 24, 8, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    conf_fill_int(el, 8, 2, conf_left());
    for (int i = 0; i < 8; i++)
        er[i] = (int)conf_val(2, conf_right(), 24 + i);
    int ok = conf_check_int(l, el, 8, "the MPI_Get result from rank %d", conf_left());
    ok &= conf_check_int(r, er, 8, "the MPI_Get result from rank %d", conf_right());
    tap_ok(ok, "fence epoch asserting NOPRECEDE|NOPUT: MPI_Get from both neighbours");
}

/* Stores between two fences are what the next epoch reads. */
static void store_then_get(void)
{
    int got[N], exp[N];
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    conf_fill_int(base, N, 3, conf_rank); /* local stores inside an (empty) epoch */
    MPI_Win_fence(MPI_MODE_NOPUT, win);   /* no NOSTORE: we stored */
    MPI_Get(got, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    conf_fill_int(exp, N, 3, conf_right());
    tap_ok(conf_check_int(got, exp, N, "the MPI_Get result from rank %d", conf_right()),
           "local stores before a fence are what the next epoch's MPI_Get reads");
}

/* Everyone accumulates into rank 0's element 0, puts into its right neighbour's element
 * 1+rank and gets element 31 of its left neighbour, all in one epoch. */
static void mixed_epoch(void)
{
    for (int i = 0; i < N; i++)
        base[i] = -1;
    base[N - 1] = 1000 + conf_rank;
    int one = conf_rank + 1, tag = 500 + conf_rank, got = 0;
    MPI_Win_fence(0, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&tag, 1, MPI_INT, conf_right(), 1 + conf_rank % (N - 2), 1, MPI_INT, win);
    MPI_Get(&got, 1, MPI_INT, conf_left(), N - 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    int exp[N];
    for (int i = 0; i < N; i++)
        exp[i] = -1;
    exp[N - 1] = 1000 + conf_rank;
    exp[1 + conf_left() % (N - 2)] = 500 + conf_left();
    if (conf_rank == 0)
        exp[0] = -1 + conf_size * (conf_size + 1) / 2;
    int ok = conf_check_int(base, exp, N, "rank %d's window", conf_rank);
    if (got != 1000 + conf_left()) {
        tap_diag("MPI_Get from rank %d returned %d, expected %d", conf_left(), got,
                 1000 + conf_left());
        ok = 0;
    }
    tap_ok(ok, "one fence epoch with MPI_Accumulate(SUM) to rank 0, MPI_Put and MPI_Get");
}

static void big_transfer(void)
{
    int *big, *out = malloc(BIG * sizeof *out), *back = malloc(BIG * sizeof *back);
    MPI_Win bw;
    conf_win_allocate(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big, &bw);
    conf_fill_int(out, BIG, 4, conf_rank);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, bw);
    MPI_Put(out, BIG, MPI_INT, conf_right(), 0, BIG, MPI_INT, bw);
    MPI_Win_fence(MPI_MODE_NOSTORE, bw);
    MPI_Get(back, BIG, MPI_INT, conf_right(), 0, BIG, MPI_INT, bw);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, bw);
    int *exp = malloc(BIG * sizeof *exp);
    conf_fill_int(exp, BIG, 4, conf_left());
    int ok = conf_check_int(big, exp, BIG, "rank %d's window", conf_rank);
    ok &= conf_check_int(back, out, BIG, "what was read back from rank %d", conf_right());
    tap_ok(ok, "fence: a 256 KiB MPI_Put and MPI_Get round-trip");
    conf_win_free(&bw);
    free(out);
    free(back);
    free(exp);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(ROUNDS + 4);
    conf_win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    ring_shift();
    get_only();
    store_then_get();
    mixed_epoch();
    conf_win_free(&win);
    big_transfer();
    return conf_done();
}
