/* g3_radix.c — G3: one-sided radix sort of 64-bit keys (paper 002 §3, §5).
 *
 * Every rank holds --keys uniformly random 64-bit keys; the sort is least-significant digit
 * first, --bits per digit, and after every pass each rank again holds --keys of them, rank 0 the
 * smallest. One pass: a local counting sort by the digit; MPI_Iexscan / MPI_Iallreduce of the
 * bucket counts give every key its global position; inside one fence epoch each rank MPI_Puts
 * every run of a bucket straight into the window of the rank that owns those positions and,
 * while the puts are in flight, counts the *next* digit of the keys it sends per destination and
 * MPI_Accumulates those counts into the destination's histogram area — so the next pass's
 * histogram arrives with the data instead of being computed after it (the overlap of 002 §3).
 * ref-nb: both fences are MPIX_Win_ifence, so the puts and that counting need not wait for the
 * slowest rank to reach the fence. Sample: one complete sort (max over ranks); keys_per_s =
 * ranks x keys / median sample.
 * Verified after every sample: each rank's keys ascend, each rank's last key <= the next rank's
 * first, and the count and two order-independent checksums of all keys equal the input's. */
#include <stdlib.h>
#include <string.h>

#include "apps.h"

static long n_keys = 1L << 16, bits = 8;

typedef struct {
    const nbh_case_t *c;
    nbh_win_t w; /* n_keys keys, then R int64 next-digit counts */
    uint64_t *keys, *perm;
    int64_t *cnt, *sent, *before, *tot, *nh; /* R each; nh: R x ranks */
    long R, passes;
} g3_t;

static inline long digit(uint64_t k, long pass, long R)
{
    return (long)((k >> (pass * bits)) & (uint64_t)(R - 1));
}

static void fence(const g3_t *g, int assert, MPI_Request *r)
{
    *r = MPI_REQUEST_NULL;
    if (g->c->series == NBH_REF_NB)
        NBH_MPI(g->c, MPIX_Win_ifence(assert, g->w.win, r));
    else
        NBH_MPI(g->c, MPI_Win_fence(assert, g->w.win));
}

/* Order-independent checksums: a sum of a mixing function, and an xor of another. */
static void checksum(const uint64_t *k, long n, uint64_t out[2])
{
    for (long i = 0; i < n; i++) {
        nba_rng_t r = {k[i]};
        out[0] += nba_rng_next(&r);
        out[1] ^= k[i] * 0xff51afd7ed558ccdull + (k[i] >> 17);
    }
}

static void sort(g3_t *g)
{
    const nbh_case_t *c = g->c;
    const int n = c->ctx->nranks, me = c->ctx->rank;
    const long R = g->R;
    int64_t *hist = (int64_t *)(g->w.base + (size_t)n_keys * 8);
    memset(g->cnt, 0, (size_t)R * sizeof *g->cnt);
    for (long i = 0; i < n_keys; i++)
        g->cnt[digit(g->keys[i], 0, R)]++;
    for (long p = 0; p < g->passes; p++) {
        MPI_Request r[2];
        memcpy(g->sent, g->cnt, (size_t)R * sizeof *g->sent); /* cnt changes below */
        NBH_MPI(c,
                MPI_Iexscan(g->sent, g->before, (int)R, MPI_INT64_T, MPI_SUM, c->ctx->comm, &r[0]));
        NBH_MPI(c,
                MPI_Iallreduce(g->sent, g->tot, (int)R, MPI_INT64_T, MPI_SUM, c->ctx->comm, &r[1]));
        /* Local counting sort by this digit while the counts travel. */
        int64_t start = 0;
        for (long b = 0; b < R; b++) {
            int64_t t = g->cnt[b];
            g->cnt[b] = start;
            start += t;
        }
        for (long i = 0; i < n_keys; i++)
            g->perm[g->cnt[digit(g->keys[i], p, R)]++] = g->keys[i];
        NBH_MPI(c, nbh_wait(&r[0]));
        NBH_MPI(c, nbh_wait(&r[1]));
        if (me == 0)
            memset(g->before, 0, (size_t)R * sizeof *g->before); /* Exscan leaves rank 0's */

        MPI_Request open, close;
        fence(g, 0, &open);
        const int last = p + 1 == g->passes;
        if (!last)
            memset(g->nh, 0, (size_t)R * (size_t)n * sizeof *g->nh);
        int64_t global = 0, i = 0; /* first global position of bucket b; index into perm */
        for (long b = 0; b < R; b++) {
            int64_t pos = global + g->before[b], end = i + (g->cnt[b] - (b ? g->cnt[b - 1] : 0));
            while (i < end) { /* one run per destination rank */
                int dest = (int)(pos / n_keys);
                int64_t off = pos % n_keys, len = n_keys - off;
                if (len > end - i)
                    len = end - i;
                NBH_MPI(c, MPI_Put(&g->perm[i], (int)len, MPI_UINT64_T, dest,
                                   nbh_win_disp(&g->w, dest, (MPI_Aint)off * 8), (int)len,
                                   MPI_UINT64_T, g->w.win));
                if (!last) /* the next pass's histogram, while the put is in flight */
                    for (int64_t j = i; j < i + len; j++)
                        g->nh[(size_t)dest * (size_t)R + (size_t)digit(g->perm[j], p + 1, R)]++;
                i += len;
                pos += len;
            }
            global += g->tot[b];
        }
        if (!last)
            for (int d = 0; d < n; d++)
                NBH_MPI(c, MPI_Accumulate(&g->nh[(size_t)d * (size_t)R], (int)R, MPI_INT64_T, d,
                                          nbh_win_disp(&g->w, d, (MPI_Aint)n_keys * 8), (int)R,
                                          MPI_INT64_T, MPI_SUM, g->w.win));
        fence(g, MPI_MODE_NOSUCCEED, &close);
        NBH_MPI(c, nbh_wait(&open));
        NBH_MPI(c, nbh_wait(&close));
        /* Between epochs: take the keys and the next histogram out of the window. */
        memcpy(g->keys, g->w.base, (size_t)n_keys * 8);
        if (!last) {
            memcpy(g->cnt, hist, (size_t)R * sizeof *g->cnt);
            memset(hist, 0, (size_t)R * sizeof *hist);
        }
    }
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int n = c->ctx->nranks, me = c->ctx->rank;
    g3_t g = {.c = c, .R = 1L << bits, .passes = (64 + bits - 1) / bits};
    const uint64_t seed = nba_case_seed();
    nbh_win_open(&g.w, c, (MPI_Aint)(n_keys + g.R) * 8);
    g.keys = malloc((size_t)n_keys * 8);
    g.perm = malloc((size_t)n_keys * 8);
    g.cnt = malloc((size_t)g.R * 8);
    g.sent = malloc((size_t)g.R * 8);
    g.before = malloc((size_t)g.R * 8);
    g.tot = malloc((size_t)g.R * 8);
    g.nh = malloc((size_t)g.R * (size_t)n * 8);
    if (!g.keys || !g.perm || !g.cnt || !g.sent || !g.before || !g.tot || !g.nh)
        nbh_mpi_fail(c, "malloc (G3 state)", MPI_ERR_NO_MEM, __FILE__, __LINE__);

    static const char *const q[] = {"sort"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    long sample = 0;
    int ok = 1;
    char why[160] = "";
    for (int warm = c->ctx->opts.warmup > 0 ? 1 : 0; warm || gb_keep_running(st); warm = 0) {
        nba_rng_t rng;
        nba_rng_init(&rng, seed + (uint64_t)sample++, me);
        for (long i = 0; i < n_keys; i++)
            g.keys[i] = nba_rng_next(&rng);
        uint64_t in[2] = {0, 0}, out[2] = {0, 0};
        checksum(g.keys, n_keys, in);
        NBH_MPI(c, nbh_barrier(c->ctx->comm));
        double t0 = MPI_Wtime();
        sort(&g);
        double t = MPI_Wtime() - t0;
        if (!warm)
            nbh_rec_sample(&rec, st, &t);
        if (nba_corrupt && me == 0 && !warm) {
            if (sample == 2)
                nba_corrupt_note(c, "one key of rank 0 (+1) after each sort");
            g.keys[n_keys / 2] += 1;
        }
        /* Verify: local order, order across ranks, same multiset (count + checksums). */
        long bad = -1;
        for (long i = 1; i < n_keys && bad < 0; i++)
            if (g.keys[i - 1] > g.keys[i])
                bad = i;
        uint64_t mine[2] = {g.keys[0], g.keys[n_keys - 1]}, prev_last = 0;
        MPI_Request r[2];
        NBH_MPI(c,
                MPI_Irecv(&prev_last, 1, MPI_UINT64_T, (me + n - 1) % n, 7, c->ctx->comm, &r[0]));
        NBH_MPI(c, MPI_Isend(&mine[1], 1, MPI_UINT64_T, (me + 1) % n, 7, c->ctx->comm, &r[1]));
        NBH_MPI(c, nbh_wait(&r[0]));
        NBH_MPI(c, nbh_wait(&r[1]));
        checksum(g.keys, n_keys, out);
        uint64_t sums[4] = {in[0], out[0], 0, 0};
        NBH_MPI(c, nbh_allreduce(sums, 2, MPI_UINT64_T, MPI_SUM, c->ctx->comm));
        uint64_t xs[2] = {in[1], out[1]};
        NBH_MPI(c, nbh_allreduce(xs, 2, MPI_UINT64_T, MPI_BXOR, c->ctx->comm));
        if (ok && bad >= 0) {
            ok = 0;
            snprintf(why, sizeof why, "keys %ld and %ld of rank %d descend", bad - 1, bad, me);
        } else if (ok && me > 0 && prev_last > mine[0]) {
            ok = 0;
            snprintf(why, sizeof why, "rank %d's first key is below rank %d's last", me, me - 1);
        } else if (ok && (sums[0] != sums[1] || xs[0] != xs[1])) {
            ok = 0;
            snprintf(why, sizeof why,
                     "the sorted keys are not a permutation of the input "
                     "(checksums differ)");
        }
    }
    if (nbh_verify(st, c, ok, "sample %ld: %s", sample, why)) {
        nbh_rec_report(&rec, st);
        double med = nbh_rec_median(&rec, 0);
        if (med > 0)
            gb_set_counter(st, "keys_per_s", (double)n * (double)n_keys / med);
        gb_set_counter(st, "passes", (double)g.passes);
    }
    nbh_rec_free(&rec);
    free(g.keys), free(g.perm), free(g.cnt), free(g.sent), free(g.before), free(g.tot), free(g.nh);
    nbh_win_close(&g.w);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    nbh_add_case(ctx, s, 0, (size_t)n_keys * 8, run, "G3_radix/%s/procs:%d/keys:%ld/bits:%ld",
                 nbh_series_name(s), ctx->nranks, n_keys, bits);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"keys", "64-bit keys per rank (default 65536)", &n_keys, 2, 1L << 26},
        {"bits", "bits per digit: 64/bits passes (default 8)", &bits, 1, 16},
        NBA_COMMON_OPTS,
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "G3",
        .title = "one-sided radix sort of 64-bit keys (paper 002 §3, §5)",
        .header =
            "every rank: --keys random 64-bit keys; LSD radix sort, --bits per digit; per pass a\n"
            "  local counting sort, exscan/allreduce of bucket counts, then one fence epoch of\n"
            "  puts straight to the owners of the global positions, with the next digit's\n"
            "  histogram counted during the puts and accumulated to the destinations\n"
            "ref-nb: MPIX_Win_ifence for both fences\n"
            "sample = one sort (max over ranks); keys_per_s = ranks x keys / median sample\n"
            "verified: ascending within and across ranks; count and checksums = the input's",
        .min_ranks = 2,
        .uses = NBH_USE_WINDOW,
        .default_iters = 10,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
