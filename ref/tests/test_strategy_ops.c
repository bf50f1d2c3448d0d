/* test_strategy_ops.c — paper 004's operation strategies (§III-A; issue 26, experiments F1, F2)
 * across virtual nodes (NBRMA_RANKS_PER_NODE=1, 3 ranks, NBRMA_NET=ucx or am).
 *
 * Mapped pairs: over ucx with UCX's shared-memory transports, MPI_Win_allocate's memory of a rank
 * alone on its node is memory UCX allocated and maps into its peers (ucp_rkey_ptr); over TCP or
 * am nothing is. The test checks which it got (nbr_ucx_stats.pairs_mapped: 2 pairs at rank 0
 * under UCX_TLS=sm, none otherwise) and expects the auto strategies to follow it.
 *
 * NBRMA_NONCONTIG / nbrma_noncontig (F1): a put whose target side is 256 one-byte blocks
 * (stride 2) goes as one operation per block under `blocks` (UCP puts over ucx, am requests over
 * am) and packed (one am request the target scatters) under `packed`; under `auto` packed unless
 * the target is mapped (there a block is a copy: one operation each up to 256 blocks). 1024 such
 * blocks go packed under `auto` either way; a put of 4 blocks of 8 KiB is packed under `packed`
 * only. Each time the data is read back and the gaps between the blocks must be untouched (only
 * the bytes of the type map are written).
 *
 * NBRMA_ACC / nbrma_acc (F2): on a window created with nbrma_acc=hw, and on one created without
 * the key (auto), ranks 0 and 2 (and the target itself, rank 1, through shared memory) hammer one
 * target: MPI_Accumulate SUM, a get_accumulate SUM whose fetched values must all differ (a lock
 * that let two in would hand two of them the same one), a compare-and-swap increment loop, MIN
 * on doubles, and MINLOC on MPI_DOUBLE_INT (padded: its padding must stay as it was). Under hw
 * over ucx, and under auto toward a mapped target, the origins' pieces must have gone through
 * 004's lock + get + put protocol (nbr_ucx_stats.acc_locked); under auto toward an unmapped one,
 * and over am, none. MPI_Win_get_info reports both keys; bad values are refused with
 * MPI_ERR_INFO_VALUE; nbrma_acc keeps its creation value under MPI_Win_set_info. */
#include <stdlib.h>
#include <string.h>

#include "nbrma.h"
#include "tap.h"
#include "transport/tp.h"

#define NB  256  /* one-byte blocks of the small vector */
#define BIG 8192 /* bytes per block of the large vector */
#define N   500  /* hammer iterations per rank */

static int me, np, ucx, sm; /* sm: NBRMA_NET=ucx over UCX_TLS=sm (mapped pairs) */

static void info_is(MPI_Win win, const char *key, const char *want)
{
    MPI_Info got;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int found = 0;
    MPI_Win_get_info(win, &got);
    MPI_Info_get(got, key, MPI_MAX_INFO_VAL, val, &found);
    MPI_Info_free(&got);
    tap_ok(found && !strcmp(val, want), "MPI_Win_get_info reports %s=%s (got \"%s\")", key, want,
           found ? val : "(missing)");
}

/* One put of `count` x `tt` from rank 0 into rank 1 under nbrma_noncontig=mode; what crossed. */
static void put_under(MPI_Win win, char *base, size_t bytes, const char *mode, MPI_Datatype tt,
                      int blocks, int blen, int stride, int want_packed)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbrma_noncontig", mode);
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    if (me == 1)
        memset(base, 0x55, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    int n = blocks * blen;
    char *src = malloc((size_t)n), *back = malloc((size_t)n);
    for (int i = 0; i < n; i++)
        src[i] = (char)(i * 13 + 1);
    unsigned long p0 = nbr_am_sent_packed, a0 = nbr_am_sent, u0 = nbr_ucx_stats.puts;
    int ok_back = 1;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(src, n, MPI_CHAR, 1, 0, 1, tt, win);
        MPI_Win_unlock(1, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Get(back, n, MPI_CHAR, 1, 0, 1, tt, win);
        MPI_Win_unlock(1, win);
        ok_back = memcmp(src, back, (size_t)n) == 0;
    }
    unsigned long packed = nbr_am_sent_packed - p0, reqs = nbr_am_sent - a0,
                  uputs = nbr_ucx_stats.puts - u0;
    MPI_Barrier(MPI_COMM_WORLD);
    int gaps = 1;
    if (me == 1)
        for (int b = 0; b < blocks; b++)
            for (int i = blen; i < stride && gaps; i++)
                gaps = (unsigned char)base[(size_t)b * (size_t)stride + (size_t)i] == 0x55;
    MPI_Bcast(&gaps, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (me == 0) {
        tap_ok(ok_back && gaps,
               "nbrma_noncontig=%s: %d blocks of %d bytes put and read back, the gaps untouched",
               mode, blocks, blen);
        if (want_packed)
            tap_ok(packed >= 1 && uputs == 0,
                   "nbrma_noncontig=%s: packed (%lu packed requests, %lu UCP puts)", mode, packed,
                   uputs);
        else
            tap_ok(packed == 0 &&
                       (ucx ? uputs >= (unsigned long)blocks : reqs >= (unsigned long)blocks),
                   "nbrma_noncontig=%s: one operation per block (%lu UCP puts, %lu am requests, "
                   "%lu packed)",
                   mode, uputs, reqs, packed);
    } else {
        tap_ok(1, "rank %d serves", me);
        tap_ok(1, "rank %d serves", me);
    }
    free(src);
    free(back);
}

typedef struct {
    double v;
    int i;
} dint_t;

/* The accumulate hammer on a new window with nbrma_acc=acc (NULL: no key, the default); 8 TAP
 * points. Returns the window (the caller frees it). */
static MPI_Win hammer(const char *acc)
{
    MPI_Info info = MPI_INFO_NULL;
    if (acc) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "nbrma_acc", acc);
    }
    char *ab;
    MPI_Win aw;
    MPI_Win_allocate(64, 1, info, MPI_COMM_WORLD, &ab, &aw);
    if (acc)
        MPI_Info_free(&info);
    MPI_Win_set_errhandler(aw, MPI_ERRORS_RETURN);
    const char *name = acc ? acc : "auto";
    info_is(aw, "nbrma_acc", name);
    /* 004's protocol for the origins on other nodes: hw over ucx, auto toward mapped targets */
    int want_hw = ucx && (acc ? !strcmp(acc, "hw") : sm);
    /* layout: int sum @0, long long fetched @8, long long cas @16, double min @24, dint @32 */
    memset(ab, 0, 64);
    dint_t d0 = {1e300, -1};
    memcpy(ab + 32, &d0, sizeof d0);
    memset(ab + 32 + 12, 0x77, 4); /* MPI_DOUBLE_INT's padding */
    double dmax = 1e300;
    memcpy(ab + 24, &dmax, sizeof dmax);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long l0 = nbr_ucx_stats.acc_locked;
    long long *fetched = malloc(N * sizeof *fetched);
    int one = 1, casv_fail = 0;
    long long onell = 1;
    MPI_Win_lock_all(0, aw);
    for (int i = 0; i < N; i++) {
        MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, aw);
        MPI_Get_accumulate(&onell, 1, MPI_LONG_LONG, &fetched[i], 1, MPI_LONG_LONG, 1, 8, 1,
                           MPI_LONG_LONG, MPI_SUM, aw);
        double v = 1000.0 - 10 * me - i;
        MPI_Accumulate(&v, 1, MPI_DOUBLE, 1, 24, 1, MPI_DOUBLE, MPI_MIN, aw);
        dint_t dv = {v, me * 1000 + i};
        MPI_Accumulate(&dv, 1, MPI_DOUBLE_INT, 1, 32, 1, MPI_DOUBLE_INT, MPI_MINLOC, aw);
        if (i % 5 == 0) { /* a compare-and-swap increment */
            long long cur = 0, seen = -1;
            for (int tries = 0; tries < 100000; tries++) {
                long long nv = cur + 1;
                MPI_Compare_and_swap(&nv, &cur, &seen, MPI_LONG_LONG, 1, 16, aw);
                MPI_Win_flush(1, aw);
                if (seen == cur)
                    break;
                cur = seen;
                casv_fail++;
            }
        }
        MPI_Win_flush(1, aw);
    }
    MPI_Win_unlock_all(aw);
    unsigned long locked = nbr_ucx_stats.acc_locked - l0;
    MPI_Barrier(MPI_COMM_WORLD);
    long long *all = me == 0 ? malloc(3 * N * sizeof *all) : NULL;
    MPI_Gather(fetched, N, MPI_LONG_LONG, all, N, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    long long res[5] = {0};
    if (me == 1) {
        int s;
        memcpy(&s, ab, sizeof s);
        res[0] = s;
        memcpy(&res[1], ab + 8, 8);
        memcpy(&res[2], ab + 16, 8);
        double m;
        memcpy(&m, ab + 24, sizeof m);
        res[3] = (long long)m;
        dint_t got;
        memcpy(&got, ab + 32, 12);
        unsigned char pad[4];
        memcpy(pad, ab + 32 + 12, 4);
        res[4] = got.v == 1000.0 - 20 - (N - 1) && got.i == 2 * 1000 + N - 1 && pad[0] == 0x77 &&
                 pad[1] == 0x77 && pad[2] == 0x77 && pad[3] == 0x77;
    }
    MPI_Bcast(res, 5, MPI_LONG_LONG, 1, MPI_COMM_WORLD);
    unsigned long lk[3];
    MPI_Gather(&locked, 1, MPI_UNSIGNED_LONG, lk, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    if (me == 0) {
        tap_ok(res[0] == 3 * N,
               "nbrma_acc=%s: SUM from 3 ranks, 2 of them on other nodes: %lld (%d)", name, res[0],
               3 * N);
        tap_ok(res[1] == 3 * N, "get_accumulate SUM: %lld (%d)", res[1], 3 * N);
        int distinct = 1;
        char *seen = calloc(3 * N, 1);
        for (int i = 0; i < 3 * N && distinct; i++) {
            if (all[i] < 0 || all[i] >= 3 * N || seen[all[i]])
                distinct = 0;
            else
                seen[all[i]] = 1;
        }
        free(seen);
        tap_ok(distinct, "the %d fetched values are 0..%d, each once (atomic read-modify-write)",
               3 * N, 3 * N - 1);
        int cas_n = 3 * ((N + 4) / 5);
        tap_ok(res[2] == cas_n, "compare-and-swap increments: %lld (%d; %d retries here)", res[2],
               cas_n, casv_fail);
        tap_ok(res[3] == 1000 - 20 - (N - 1), "MIN on doubles: %lld (%d)", res[3],
               1000 - 20 - (N - 1));
        tap_ok(res[4], "MINLOC on MPI_DOUBLE_INT right, its padding untouched");
        if (want_hw)
            tap_ok(lk[0] >= 3 * N && lk[2] >= 3 * N && lk[1] == 0,
                   "nbrma_acc=%s over ucx%s: the origins' accumulates took 004's lock + get + put "
                   "path (%lu, %lu; the target's own: %lu)",
                   name, sm ? " (mapped)" : "", lk[0], lk[2], lk[1]);
        else
            tap_ok(lk[0] == 0 && lk[2] == 0,
                   "nbrma_acc=%s over %s: no accumulate took the hardware path (%lu, %lu)", name,
                   ucx ? "ucx, unmapped" : "am", lk[0], lk[2]);
        free(all);
    } else {
        for (int i = 0; i < 7; i++)
            tap_ok(1, "rank %d checked by rank 0", me);
    }
    free(fetched);
    return aw;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE"), *net = getenv("NBRMA_NET");
    if (!rpn || strcmp(rpn, "1") != 0 || np != 3 || !net)
        tap_bail_out("run on 3 ranks with NBRMA_RANKS_PER_NODE=1 and NBRMA_NET set");
    ucx = strcmp(net, "ucx") == 0;
    const char *tls = getenv("NBRMA_UCX_TLS");
    sm = ucx && tls && !strcmp(tls, "sm");
    MPIX_Nbrma_set_impl("ref");
    tap_plan(31);
    unsigned long mapped0 = nbr_ucx_stats.pairs_mapped;

    /* ---- F1: nbrma_noncontig ---- */
    size_t bytes = (size_t)4 * 2 * BIG;
    char *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    info_is(win, "nbrma_noncontig", "auto");
    unsigned long mapped = nbr_ucx_stats.pairs_mapped - mapped0;
    if (me == 0)
        tap_ok(mapped == (sm ? 2ul : 0ul),
               "rank 0 has %s (%lu pairs whose window memory UCX maps here)",
               sm ? "both peers mapped (UCX over shared memory)" : "no peer mapped", mapped);
    else
        tap_ok(1, "rank %d: %lu pairs mapped", me, mapped);
    MPI_Datatype small, mid, big;
    MPI_Type_vector(NB, 1, 2, MPI_CHAR, &small);
    MPI_Type_vector(4 * NB, 1, 2, MPI_CHAR, &mid);
    MPI_Type_vector(4, BIG, 2 * BIG, MPI_CHAR, &big);
    MPI_Type_commit(&small);
    MPI_Type_commit(&mid);
    MPI_Type_commit(&big);
    put_under(win, base, bytes, "blocks", small, NB, 1, 2, 0);
    put_under(win, base, bytes, "packed", small, NB, 1, 2, 1);
    put_under(win, base, bytes, "auto", small, NB, 1, 2, !sm);
    put_under(win, base, bytes, "auto", mid, 4 * NB, 1, 2, 1);
    put_under(win, base, bytes, "packed", big, 4, BIG, 2 * BIG, 1);
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "nbrma_noncontig", "zip");
    int rc = MPI_Win_set_info(win, bad), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    tap_ok(cls == MPI_ERR_INFO_VALUE, "nbrma_noncontig=zip is refused with MPI_ERR_INFO_VALUE");
    MPI_Info_free(&bad);
    MPI_Type_free(&small);
    MPI_Type_free(&mid);
    MPI_Type_free(&big);
    MPI_Win_free(&win);

    /* ---- F2: nbrma_acc=hw, and the default (auto) ---- */
    MPI_Win aw = hammer("hw");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbrma_acc", "am");
    MPI_Win_set_info(aw, info);
    MPI_Info_free(&info);
    info_is(aw, "nbrma_acc", "hw");
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "nbrma_acc", "gpu");
    rc = MPI_Win_set_info(aw, bad);
    MPI_Error_class(rc, &cls);
    tap_ok(cls == MPI_ERR_INFO_VALUE, "nbrma_acc=gpu is refused with MPI_ERR_INFO_VALUE");
    MPI_Info_free(&bad);
    MPI_Win_free(&aw);
    aw = hammer(NULL);
    MPI_Win_free(&aw);
    int ret = tap_done();
    MPI_Finalize();
    return ret;
}
