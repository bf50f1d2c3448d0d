/* f1_noncontig.c — F1: contiguous vs noncontiguous put, hardware-style vs active-message
 * (paper 004 §III-A, §IV-A, Figure 3a/3b; issue 26).
 *
 * Origin rank 0 holds lock_all on a window of target rank 1; a sample is one MPI_Put of SIZE
 * bytes of payload followed by MPI_Win_flush (remote completion), timed at the origin. Layouts:
 * contig, SIZE MPI_BYTEs on both sides; noncontig, 004's datatype on both sides — a vector of
 * SIZE blocks of one byte at a stride of two bytes (004 §IV-A, footnote 1), SIZE blocks per put.
 * libnbrma runs 004's two strategies for a put whose target side is noncontiguous, per window
 * with the info key nbrma_noncontig: blocks (one operation per contiguous block: one RDMA put per
 * block over the ucx transport, foMPI's hardware-based way) and packed (one message the target's
 * CPU scatters, the active-message way), and the default (no key: auto, which packs toward a
 * target whose memory UCX maps only above 256 blocks, elsewhere below 4 KiB a block on average).
 * Within a node (shm) all copy directly: 004 counts
 * shared memory as hardware. Across virtual nodes (NBRMA_RANKS_PER_NODE=1) NBRMA_NET picks the
 * wire: ucx (hardware RDMA, here UCX's shared-memory transports) or am (every operation a message
 * over the MPI library; a contiguous put too: 004's AM-based contiguous put). The name's net: is
 * checked against the window's pair (MPIX_Win_get_stats), the strategy against MPI_Win_get_info
 * (a libnbrma without the key skips the case, saying so). Vendor: the MPI library's own RMA.
 *
 * Each sample puts fresh data (a seeded pattern per sample, written outside the timed part);
 * after the loop the target checks the last sample's payload landed at the even bytes and that
 * no other byte of its window changed (only a type map's bytes are ever written). */
#include <stdio.h>

#include "strategy.h"

enum { L_CONTIG, L_NONCONTIG };
/* direct: ref with no key — contig, and noncontig under the default nbrma_noncontig=auto (which
 * per pair picks blocks or packed: its column shows which) */
enum { S_VENDOR, S_BLOCKS, S_PACKED, S_DIRECT };
static const char *const sname[] = {"vendor", "blocks", "packed", "default"};
#define SENTINEL 0x5a
#define GARBAGE 0xee /* the origin's gap bytes: must never arrive */

/* op = layout * 4 + strategy */

/* The origin's buffer for sample seed `seed`: payload bytes (contiguous, or at even offsets with
 * garbage between). */
static void fill_origin(unsigned char *buf, unsigned char *pay, size_t n, int nc, unsigned seed)
{
    nbh_pattern_fill(pay, n, seed);
    if (!nc) {
        memcpy(buf, pay, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        buf[2 * i] = pay[i], buf[2 * i + 1] = GARBAGE;
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank, origin = 0, target = 1;
    const int nc = c->op / 4 == L_NONCONTIG, strat = c->op % 4;
    const size_t n = c->size;
    if (n > (size_t)1 << 29) {
        gb_skip_with_error(st, "payload above 512 MiB (the vector's count is an int)");
        return;
    }
    const size_t span = nc ? 2 * n : n, wbytes = (span + 63) & ~(size_t)63;
    if (MPIX_Nbrma_set_impl)
        NBH_MPI(c, MPIX_Nbrma_set_impl(c->series == NBH_VENDOR ? "vendor" : "ref"));
    MPI_Info info = MPI_INFO_NULL;
    if (strat == S_BLOCKS || strat == S_PACKED) {
        NBH_MPI(c, MPI_Info_create(&info));
        NBH_MPI(c, MPI_Info_set(info, "nbrma_noncontig", sname[strat]));
    }
    unsigned char *base;
    MPI_Win win;
    NBH_MPI(c, MPI_Win_allocate((MPI_Aint)wbytes, 1, info, c->ctx->comm, &base, &win));
    if (info != MPI_INFO_NULL)
        NBH_MPI(c, MPI_Info_free(&info));
    int run_it = 1;
    if (strat == S_BLOCKS || strat == S_PACKED)
        run_it = strat_info_is(c, st, win, "nbrma_noncontig", sname[strat]);
    if (run_it && c->series != NBH_VENDOR)
        run_it = strat_pair_is_named(c, st, win);
    if (!run_it) {
        NBH_MPI(c, MPI_Win_free(&win));
        return;
    }
    unsigned char *buf = malloc(span), *pay = malloc(n);
    if (!buf || !pay)
        nbh_mpi_fail(c, "malloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    MPI_Datatype t = MPI_BYTE;
    int count = (int)n;
    if (nc) {
        NBH_MPI(c, MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &t));
        NBH_MPI(c, MPI_Type_commit(&t));
        count = 1;
    }
    if (me == target) { /* the sentinel in every byte, in an epoch of its own */
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
        memset(base, SENTINEL, wbytes);
        NBH_MPI(c, MPI_Win_unlock(me, win));
    }
    const unsigned seed = nbh_next_seed();
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    long k = 0; /* samples put so far (warm-up included) */
    if (me == origin) {
        NBH_MPI(c, MPI_Win_lock_all(0, win));
        for (int i = 0; i < c->ctx->opts.warmup; i++, k++) {
            fill_origin(buf, pay, n, nc, seed + (unsigned)k);
            NBH_MPI(c, MPI_Put(buf, count, t, target, 0, count, t, win));
            NBH_MPI(c, MPI_Win_flush(target, win));
        }
    }
    nbh_case_begin(c);
    static const char *const q[] = {"put"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    while (gb_keep_running(st)) {
        double d = 0;
        if (me == origin) {
            fill_origin(buf, pay, n, nc, seed + (unsigned)k);
            double t0 = MPI_Wtime();
            MPI_Put(buf, count, t, target, 0, count, t, win);
            MPI_Win_flush(target, win);
            d = MPI_Wtime() - t0;
            k++;
        }
        nbh_rec_sample(&rec, st, &d);
    }
    if (me == origin)
        NBH_MPI(c, MPI_Win_unlock_all(win));
    NBH_MPI(c, nbh_barrier(c->ctx->comm));
    /* The last sample's payload, at the target: every other byte still the sentinel. */
    NBH_MPI(c, nbh_bcast(&k, 1, MPI_LONG, origin, c->ctx->comm));
    long bad = -1;
    unsigned got = 0, want = 0;
    if (me == target && k > 0) {
        nbh_pattern_fill(pay, n, seed + (unsigned)(k - 1));
        NBH_MPI(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
        for (size_t i = 0; i < wbytes && bad < 0; i++) {
            const int in = nc ? i % 2 == 0 && i / 2 < n : i < n;
            const unsigned w = in ? pay[nc ? i / 2 : i] : SENTINEL;
            if (base[i] != w)
                bad = (long)i, got = base[i], want = w;
        }
        NBH_MPI(c, MPI_Win_unlock(me, win));
    }
    if (nbh_verify(st, c, bad < 0 && (k > 0 || me != target),
                   "after %ld puts, byte %ld of the target window holds 0x%02x, expected 0x%02x",
                   k, bad, got, want)) {
        nbh_rec_report(&rec, st);
        const double med = nbh_rec_median(&rec, 0);
        gb_set_counter(st, "bandwidth_MBps", med > 0 ? (double)n / med / 1e6 : 0);
        gb_set_counter(st, "blocks", nc ? (double)n : 1);
    }
    nbh_rec_free(&rec);
    if (nc)
        NBH_MPI(c, MPI_Type_free(&t));
    NBH_MPI(c, MPI_Win_free(&win));
    free(buf), free(pay);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    static const char *const lname[] = {"contig", "noncontig"};
    const char *net = strat_net(ctx);
    for (int i = 0; i < ctx->opts.nsizes; i++)
        for (int l = 0; l < 2; l++) {
            int first = s == NBH_VENDOR ? S_VENDOR : l == L_CONTIG ? S_DIRECT : S_BLOCKS,
                last = s == NBH_VENDOR ? S_VENDOR : S_DIRECT;
            for (int k = first; k <= last; k++)
                nbh_add_case(ctx, s, l * 4 + k, ctx->opts.sizes[i], run,
                             "F1_put/%s/layout:%s/strategy:%s/size:%zu/nodes:%d/net:%s",
                             nbh_series_name(s), lname[l], sname[k], ctx->opts.sizes[i],
                             ctx->nnodes, s == NBH_VENDOR ? "vendor" : net);
        }
}

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "F1",
        .title = "contiguous vs noncontiguous put, hardware-style vs active-message (paper 004 "
                 "§III-A, §IV-A)",
        .header = "origin rank 0, target rank 1, lock_all held across the loop\n"
                  "sample = one MPI_Put of SIZE payload bytes + MPI_Win_flush (at the origin)\n"
                  "contig: SIZE bytes; noncontig: vector of SIZE 1-byte blocks, stride 2, both "
                  "sides\n"
                  "ref noncontig per window: info nbrma_noncontig=blocks (one operation per "
                  "block) | packed (one message) | default (no key: auto)",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "8,64,512,4K,64K",
        .quick_sizes = "8,512",
        .default_iters = 30,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR | 1u << NBH_REF,
        .series_why = "one put and a flush in a passive epoch held open: nothing nonblocking to "
                      "measure",
    };
    return nbh_main(argc, argv, &ex);
}
