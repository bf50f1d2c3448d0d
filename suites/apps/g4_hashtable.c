/* g4_hashtable.c — G4: distributed hashtable (paper 001 §4.1, Fig. 9a).
 *
 * Every rank owns one volume of the table: --slots table cells, each with the head of a chain of
 * overflow cells, and an overflow heap with its next-free counter (8-byte words, 0 = empty).
 * Each rank inserts --inserts distinct 8-byte keys per sample, each owned by the rank and slot a
 * hash of the key names. One-sided (impl:rma, every series), inside one lock_all epoch:
 *   MPI_Compare_and_swap(0 -> key) on the slot + flush; if the slot was taken,
 *   MPI_Fetch_and_op(+1) on the heap's free counter + flush claims a cell, the key and the chain
 *   head are written into it (MPI_Accumulate REPLACE), and MPI_Compare_and_swap links it as the
 *   slot's new chain head (retried while another insert got there first).
 * ref-nb: the slot CASes of --batch inserts are issued together and completed by one
 * MPIX_Win_iflush per owner (polled); collisions then take the path above with iflush.
 * Point-to-point active messages (impl:am, vendor series only: no RMA): each key is sent to its
 * owner, which inserts it locally; a 0 tells an owner that a sender is done.
 * Sample: one batch of inserts on every rank (max over ranks); inserts_per_s = ranks x inserts /
 * median sample. Verified after every sample: walking its table and chains, each owner finds
 * every key exactly once — each is a valid (sender, sample, index) encoding, none twice, every
 * heap cell claimed is on a chain — and its count and checksum equal what the senders inserted. */
#include "relax.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"

enum { IMPL_RMA, IMPL_AM };

static long n_slots = 2048, n_inserts = 1024, batch = 16;

/* Volume layout, in 8-byte words: [0] next free heap cell, [1, 1+S) slots, [1+S, 1+2S) chain
 * heads (heap index + 1, 0 = none), then H heap keys and H heap next links (index + 1). */
typedef struct {
    long S, H;
} layout_t;
#define W_FREE        0
#define W_SLOT(L, s)  (1 + (s))
#define W_HEAD(L, s)  (1 + (L).S + (s))
#define W_HKEY(L, i)  (1 + 2 * (L).S + (i))
#define W_HNEXT(L, i) (1 + 2 * (L).S + (L).H + (i))
#define W_TOTAL(L)    (1 + 2 * (L).S + 2 * (L).H)

/* Keys: a bijection (odd multiplier, then xor-shift) of (sender + 1, sample, index), so they are
 * distinct and never 0, and an owner can decode and check every key it holds. */
#define KEY_MUL 0x9e3779b97f4a7c15ull
#define KEY_INV 0xf1de83e19937733dull /* KEY_MUL^-1 mod 2^64 */
static uint64_t key_make(int src, long sample, long i)
{
    uint64_t x = ((uint64_t)(src + 1) << 44) | ((uint64_t)(sample & 0xfff) << 32) | (uint64_t)i;
    x *= KEY_MUL;
    return x ^ (x >> 29);
}
static uint64_t key_decode(uint64_t k)
{
    uint64_t x = k ^ (k >> 29) ^ (k >> 58); /* inverts x ^ (x >> 29) */
    return x * KEY_INV;
}
static uint64_t key_hash(uint64_t k)
{
    nba_rng_t r = {k};
    return nba_rng_next(&r);
}

typedef struct {
    const nbh_case_t *c;
    layout_t L;
    nbh_win_t w;                  /* impl:rma */
    int64_t *vol;                 /* this rank's volume (window memory or, impl:am, plain memory) */
    int64_t *sent_cnt, *sent_sum; /* per owner */
    uint64_t *keys, *res;
    int *owner;
    MPI_Request *req;
    long sample;
} g4_t;

static void flush(g4_t *g, int target)
{
    if (g->c->series == NBH_REF_NB) {
        MPI_Request r;
        NBH_MPI(g->c, MPIX_Win_iflush(target, g->w.win, &r));
        NBH_MPI(g->c, nbh_wait(&r));
    } else {
        NBH_MPI(g->c, MPI_Win_flush(target, g->w.win));
    }
}

static MPI_Aint wdisp(const g4_t *g, int target, long word)
{
    return nbh_win_disp(&g->w, target, (MPI_Aint)word * 8);
}

/* The slot was taken (by `taken`): put the key in a heap cell and link it as the chain head. */
static void insert_overflow(g4_t *g, uint64_t k, int o, long s)
{
    const nbh_case_t *c = g->c;
    MPI_Win win = g->w.win;
    int64_t one = 1, cell = 0;
    NBH_MPI(c, MPI_Fetch_and_op(&one, &cell, MPI_INT64_T, o, wdisp(g, o, W_FREE), MPI_SUM, win));
    flush(g, o);
    if (cell < 0 || cell >= g->L.H)
        nbh_mpi_fail(c, "overflow heap full (raise --slots: the heap is as large as the table)",
                     MPI_ERR_NO_MEM, __FILE__, __LINE__);
    int64_t key = (int64_t)k, head = 0, got = -1, link = cell + 1;
    NBH_MPI(c, MPI_Accumulate(&key, 1, MPI_INT64_T, o, wdisp(g, o, W_HKEY(g->L, cell)), 1,
                              MPI_INT64_T, MPI_REPLACE, win));
    for (;;) { /* next := head; CAS(head: head -> cell); retry with what was there */
        NBH_MPI(c, MPI_Accumulate(&head, 1, MPI_INT64_T, o, wdisp(g, o, W_HNEXT(g->L, cell)), 1,
                                  MPI_INT64_T, MPI_REPLACE, win));
        NBH_MPI(c, MPI_Compare_and_swap(&link, &head, &got, MPI_INT64_T, o,
                                        wdisp(g, o, W_HEAD(g->L, s)), win));
        flush(g, o);
        if (got == head)
            return;
        head = got;
    }
}

static void place(const g4_t *g, uint64_t k, int *o, long *s)
{
    uint64_t h = key_hash(k);
    *o = (int)(h % (uint64_t)g->c->ctx->nranks);
    *s = (long)((h >> 20) % (uint64_t)g->L.S);
}

static void inserts_rma(g4_t *g)
{
    const nbh_case_t *c = g->c;
    const int n = c->ctx->nranks;
    const long B = c->series == NBH_REF_NB ? batch : 1;
    for (long i0 = 0; i0 < n_inserts; i0 += B) {
        long nb = n_inserts - i0 < B ? n_inserts - i0 : B;
        for (long j = 0; j < nb; j++) {
            int64_t zero = 0, key = (int64_t)g->keys[i0 + j];
            long s;
            place(g, g->keys[i0 + j], &g->owner[j], &s);
            NBH_MPI(c, MPI_Compare_and_swap(&key, &zero, (int64_t *)&g->res[j], MPI_INT64_T,
                                            g->owner[j], wdisp(g, g->owner[j], W_SLOT(g->L, s)),
                                            g->w.win));
        }
        if (c->series == NBH_REF_NB) { /* one iflush per owner of the batch, polled together */
            for (int o = 0; o < n; o++) {
                g->req[o] = MPI_REQUEST_NULL;
                for (long j = 0; j < nb; j++)
                    if (g->owner[j] == o) {
                        NBH_MPI(c, MPIX_Win_iflush(o, g->w.win, &g->req[o]));
                        break;
                    }
            }
            for (int o = 0; o < n; o++)
                NBH_MPI(c, nbh_wait(&g->req[o]));
        } else {
            NBH_MPI(c, MPI_Win_flush(g->owner[0], g->w.win));
        }
        for (long j = 0; j < nb; j++)
            if (g->res[j] != 0) {
                int o;
                long s;
                place(g, g->keys[i0 + j], &o, &s);
                insert_overflow(g, g->keys[i0 + j], o, s);
            }
    }
}

/* impl:am — the owner's side: insert into its own volume (no one else touches it). */
static void insert_local(g4_t *g, uint64_t k)
{
    int o;
    long s;
    place(g, k, &o, &s);
    int64_t *v = g->vol;
    if (v[W_SLOT(g->L, s)] == 0) {
        v[W_SLOT(g->L, s)] = (int64_t)k;
        return;
    }
    int64_t cell = v[W_FREE]++;
    if (cell >= g->L.H)
        nbh_mpi_fail(g->c, "overflow heap full (raise --slots)", MPI_ERR_NO_MEM, __FILE__,
                     __LINE__);
    v[W_HKEY(g->L, cell)] = (int64_t)k;
    v[W_HNEXT(g->L, cell)] = v[W_HEAD(g->L, s)];
    v[W_HEAD(g->L, s)] = cell + 1;
}

static void inserts_am(g4_t *g)
{
    const nbh_case_t *c = g->c;
    const int n = c->ctx->nranks, me = c->ctx->rank, tag = 40 + (int)(g->sample & 1);
    int done_from = 0;
    long next = 0, inflight = 0;
    uint64_t in = 0, zero = 0;
    MPI_Request rr, *sr = g->req; /* sr: --batch sends in flight, then n "done" messages */
    NBH_MPI(c, MPI_Irecv(&in, 1, MPI_UINT64_T, MPI_ANY_SOURCE, tag, c->ctx->comm, &rr));
    while (done_from < n - 1 || next < n_inserts + n) {
        int f = 0;
        if (done_from < n - 1) /* else rr is MPI_REQUEST_NULL, which always tests true */
            NBH_MPI(c, MPI_Test(&rr, &f, MPI_STATUS_IGNORE));
        if (f) { /* handle one message, re-post */
            if (in == 0)
                done_from++;
            else
                insert_local(g, in);
            if (done_from < n - 1)
                NBH_MPI(c, MPI_Irecv(&in, 1, MPI_UINT64_T, MPI_ANY_SOURCE, tag, c->ctx->comm, &rr));
            continue;
        }
        if (inflight == batch || next == n_inserts) { /* recycle the send slots */
            for (long j = 0; j < inflight; j++)
                NBH_MPI(c, nbh_wait(&sr[j]));
            inflight = 0;
        }
        if (next < n_inserts) {
            int o;
            long s;
            place(g, g->keys[next], &o, &s);
            if (o == me)
                insert_local(g, g->keys[next]);
            else
                NBH_MPI(c, MPI_Isend(&g->keys[next], 1, MPI_UINT64_T, o, tag, c->ctx->comm,
                                     &sr[inflight++]));
            next++;
        } else if (next < n_inserts + n) { /* then a 0 to every other rank: "I am done" */
            int d = (int)(next - n_inserts);
            if (d != me)
                NBH_MPI(c,
                        MPI_Isend(&zero, 1, MPI_UINT64_T, d, tag, c->ctx->comm, &sr[inflight++]));
            next++;
        } else {
            nbh_relax();
        }
    }
    for (long j = 0; j < inflight; j++)
        NBH_MPI(c, nbh_wait(&sr[j]));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Walk the own volume; returns 0 and explains in why when a key is wrong or found twice. */
static int check_volume(g4_t *g, int64_t *cnt, int64_t *sum, char *why, size_t len)
{
    const int n = g->c->ctx->nranks, me = g->c->ctx->rank;
    const int64_t *v = g->vol;
    long found = 0, chained = 0, cap = g->L.S + g->L.H;
    uint64_t *seen = malloc((size_t)cap * sizeof *seen);
    if (!seen)
        nbh_mpi_fail(g->c, "malloc (G4 check)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    int ok = 1;
    for (long s = 0; s < g->L.S && ok; s++) {
        if (v[W_SLOT(g->L, s)])
            seen[found++] = (uint64_t)v[W_SLOT(g->L, s)];
        for (int64_t e = v[W_HEAD(g->L, s)]; e && ok; e = v[W_HNEXT(g->L, e - 1)]) {
            if (e < 1 || e > v[W_FREE] || e > g->L.H || ++chained > g->L.H) {
                ok = 0;
                snprintf(why, len, "rank %d: slot %ld's chain is broken (cell %lld)", me, s,
                         (long long)e);
            } else {
                seen[found++] = (uint64_t)v[W_HKEY(g->L, e - 1)];
            }
        }
    }
    if (ok && chained != v[W_FREE]) {
        ok = 0;
        snprintf(why, len, "rank %d: %lld heap cells claimed, %ld on chains", me,
                 (long long)v[W_FREE], chained);
    }
    *cnt = found;
    *sum = 0;
    for (long i = 0; i < found && ok; i++) {
        uint64_t x = key_decode(seen[i]);
        long src = (long)(x >> 44) - 1, smp = (long)((x >> 32) & 0xfff),
             idx = (long)(x & 0xffffffffu);
        int o;
        long s;
        place(g, seen[i], &o, &s);
        if (src < 0 || src >= n || smp != (g->sample & 0xfff) || idx >= n_inserts || o != me) {
            ok = 0;
            snprintf(why, len, "rank %d holds key %#llx that no rank inserted here", me,
                     (unsigned long long)seen[i]);
        }
        *sum += (int64_t)(seen[i] & 0xffffffffu);
    }
    if (ok) /* duplicates: sort, then compare neighbours */
        qsort(seen, (size_t)found, sizeof *seen, cmp_u64);
    for (long i = 1; i < found && ok; i++)
        if (seen[i] == seen[i - 1]) {
            ok = 0;
            snprintf(why, len, "rank %d holds key %#llx twice", me, (unsigned long long)seen[i]);
        }
    free(seen);
    return ok;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int n = c->ctx->nranks, me = c->ctx->rank;
    g4_t g = {.c = c};
    g.L.S = n_slots;
    g.L.H = n_slots;
    const size_t words = (size_t)W_TOTAL(g.L);
    const uint64_t seed = nba_case_seed();
    if (c->op == IMPL_RMA) {
        nbh_win_open(&g.w, c, (MPI_Aint)words * 8);
        g.vol = (int64_t *)g.w.base;
    } else {
        g.vol = calloc(words, 8);
    }
    g.sent_cnt = calloc((size_t)n, 8);
    g.sent_sum = calloc((size_t)n, 8);
    g.keys = malloc((size_t)n_inserts * 8);
    g.res = malloc((size_t)batch * 8);
    g.owner = malloc((size_t)batch * sizeof *g.owner);
    g.req = malloc(((size_t)batch + (size_t)n) * sizeof *g.req);
    if (!g.vol || !g.sent_cnt || !g.sent_sum || !g.keys || !g.res || !g.owner || !g.req)
        nbh_mpi_fail(c, "malloc (G4 state)", MPI_ERR_NO_MEM, __FILE__, __LINE__);

    static const char *const q[] = {"batch"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    int ok = 1;
    char why[200] = "";
    for (int warm = c->ctx->opts.warmup > 0 ? 1 : 0; warm || gb_keep_running(st); warm = 0) {
        nba_rng_t rng;
        nba_rng_init(&rng, seed + (uint64_t)g.sample, me);
        for (long i = 0; i < n_inserts; i++) /* a random order of this sample's keys */
            g.keys[i] = key_make(me, g.sample, i);
        for (long i = n_inserts - 1; i > 0; i--) {
            long j = (long)nba_rng_below(&rng, (uint64_t)i + 1);
            uint64_t t = g.keys[i];
            g.keys[i] = g.keys[j];
            g.keys[j] = t;
        }
        memset(g.sent_cnt, 0, (size_t)n * 8);
        memset(g.sent_sum, 0, (size_t)n * 8);
        for (long i = 0; i < n_inserts; i++) {
            int o;
            long s;
            place(&g, g.keys[i], &o, &s);
            g.sent_cnt[o]++;
            g.sent_sum[o] += (int64_t)(g.keys[i] & 0xffffffffu);
        }
        NBH_MPI(c, nbh_barrier(c->ctx->comm));
        double t0 = MPI_Wtime();
        if (c->op == IMPL_RMA) {
            NBH_MPI(c, MPI_Win_lock_all(0, g.w.win));
            inserts_rma(&g);
            NBH_MPI(c, MPI_Win_unlock_all(g.w.win));
        } else {
            inserts_am(&g);
        }
        double t = MPI_Wtime() - t0;
        NBH_MPI(c, nbh_barrier(c->ctx->comm)); /* every insert landed */
        if (!warm)
            nbh_rec_sample(&rec, st, &t);

        if (c->op == IMPL_RMA)
            nbh_win_self_lock(&g.w, c);
        if (nba_corrupt && me == 0 && !warm) {
            if (g.sample == 1)
                nba_corrupt_note(c, "one stored key of rank 0 (+1) after each sample");
            for (long s = 0; s < g.L.S; s++)
                if (g.vol[W_SLOT(g.L, s)]) {
                    g.vol[W_SLOT(g.L, s)] += 1;
                    break;
                }
        }
        int64_t cnt, sum;
        char w[200] = "";
        int vok = check_volume(&g, &cnt, &sum, w, sizeof w);
        memset(g.vol, 0, words * 8); /* empty for the next sample */
        if (c->op == IMPL_RMA)
            nbh_win_self_unlock(&g.w, c);
        NBH_MPI(c, nbh_allreduce(g.sent_cnt, n, MPI_INT64_T, MPI_SUM, c->ctx->comm));
        NBH_MPI(c, nbh_allreduce(g.sent_sum, n, MPI_INT64_T, MPI_SUM, c->ctx->comm));
        if (ok && !vok) {
            ok = 0;
            snprintf(why, sizeof why, "sample %ld: %s", g.sample, w);
        } else if (ok && (cnt != g.sent_cnt[me] || sum != g.sent_sum[me])) {
            ok = 0;
            snprintf(why, sizeof why,
                     "sample %ld: rank %d holds %lld keys (sum %lld), %lld (sum %lld) were "
                     "inserted",
                     g.sample, me, (long long)cnt, (long long)sum, (long long)g.sent_cnt[me],
                     (long long)g.sent_sum[me]);
        }
        g.sample++;
        NBH_MPI(c, nbh_barrier(c->ctx->comm)); /* emptied everywhere before the next sample */
    }
    if (nbh_verify(st, c, ok, "%s", why)) {
        nbh_rec_report(&rec, st);
        double med = nbh_rec_median(&rec, 0);
        if (med > 0)
            gb_set_counter(st, "inserts_per_s", (double)n * (double)n_inserts / med);
    }
    nbh_rec_free(&rec);
    if (c->op == IMPL_RMA)
        nbh_win_close(&g.w);
    else
        free(g.vol);
    free(g.sent_cnt), free(g.sent_sum), free(g.keys), free(g.res), free(g.owner), free(g.req);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    const char *sn = nbh_series_name(s);
    nbh_add_case(ctx, s, IMPL_RMA, 8, run, "G4_hashtable/%s/impl:rma/procs:%d/inserts:%ld", sn,
                 ctx->nranks, n_inserts);
    if (s == NBH_VENDOR)
        nbh_add_case(ctx, s, IMPL_AM, 8, run, "G4_hashtable/%s/impl:am/procs:%d/inserts:%ld", sn,
                     ctx->nranks, n_inserts);
}

int main(int argc, char **argv)
{
    static const nbh_extra_opt_t extra[] = {
        {"slots", "table slots per rank; the overflow heap has as many cells (default 2048)",
         &n_slots, 16, 1L << 24},
        {"inserts", "keys each rank inserts per sample (default 1024)", &n_inserts, 1, 1L << 24},
        {"batch",
         "ref-nb: slot CASes issued before one iflush per owner; am: sends in flight "
         "(default 16)",
         &batch, 1, 4096},
        NBA_COMMON_OPTS,
        {NULL, NULL, NULL, 0, 0},
    };
    static const nbh_experiment_t ex = {
        .id = "G4",
        .title = "distributed hashtable: inserts by CAS and fetch-and-op (paper 001 §4.1)",
        .header =
            "every rank: --inserts distinct 8-byte keys into the volumes of their owners\n"
            "impl:rma (every series), one lock_all epoch: CAS on the slot + flush; on collision\n"
            "  fetch_and_op on the heap counter, key and link into the cell, CAS on the chain\n"
            "  head; ref-nb: slot CASes of --batch inserts, one iflush per owner\n"
            "impl:am (vendor only): each key sent to its owner, which inserts it locally\n"
            "sample = one batch of inserts (max over ranks); inserts_per_s = ranks x inserts /\n"
            "  median sample; verified: every key found exactly once at its owner\n"
            "paper 001 saw: MPI-1 active messages competitive within a node, RMA (foMPI) ahead\n"
            "  across nodes",
        .min_ranks = 2,
        .max_ranks = 4095,
        .uses = NBH_USE_WINDOW,
        .default_iters = 20,
        .extra = extra,
        .register_cases = register_cases,
    };
    return nbh_main(argc, argv, &ex);
}
