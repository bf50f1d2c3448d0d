/* acc_same_op.c — accumulates on a window whose info says accumulate_ops=same_op (MPI-3.1
 * §11.2.1: "the implementation will assume that all concurrent accumulate calls to the same
 * target address will use the same operation"), where an implementation may serve some (op,
 * type) pairs with hardware atomics (libnbrma: UCP atomics toward other nodes, CPU atomic
 * instructions on every other path; docs/ref-internals.md). §11.7.1's element-wise atomicity must
 * still hold, so every rank hammers rank 0's window, under lock_all, each location with one op
 * (the user's same_op promise), and every result is exact:
 *   SUM +1 on a 64-bit and on a 32-bit integer        the count of increments
 *   fetch_and_op SUM +1 on a 64-bit integer            its old values are a permutation of 0..N-1
 *   BOR, BAND, BXOR on 32/64-bit unsigned integers     the OR/AND/XOR of every operand
 *   fetch_and_op REPLACE (a swap) of unique tokens     the old values and the final one are the
 *                                                      initial 0 and every token, each once
 *   compare-and-swap tickets on 64 and 32 bits, read   the won old values are 0..T-1
 *     with get_accumulate(MPI_NO_OP)
 *   SUM on a double (a compare-and-swap loop in ref)   exact
 *   PROD x3 on a 64-bit unsigned integer               3^N mod 2^64 (a lost update shows);
 *     then every rank hammers one element with PROD   again 3^N, and N on the SUM element:
 *     x3 and another with SUM +1 (one instruction,    the ranks run at once on every core, so
 *     a UCP atomic toward another node) for 200 ms,   a read-modify-write that is not atomic,
 *     flushing every 64                               or two paths that do not compose, lose
 *                                                     updates
 *   MIN on a 64-bit integer and on a double, MAX by    the global minimum and maximum
 *     fetch_and_op on a 32-bit one (CAS loops in ref)
 *   SUM through a vector type and a contiguous one     exact (both must take one path)
 *   SUM on a 64-bit integer at an address that is not  exact (no atomic on every path either)
 *     8-byte aligned
 * The window is MPI_Win_create over MPI_Alloc_mem memory, which a node's peers map (issue 24),
 * so with NBRMA_RANKS_PER_NODE=2 the node peer's load/store path, the target's own and the UCX
 * or am path of the other node all reach the same elements. MPI_Win_get_info must report the
 * key's value. */
#include "conf.h"
#include <limits.h>

#ifndef ROUNDS
#define ROUNDS 120
#endif

enum { /* byte offsets in rank 0's window (disp_unit 1) */
    O_SUM64 = 0,
    O_FOP = 8,
    O_SUM32 = 16,
    O_BOR32 = 20,
    O_BXOR = 24,
    O_BAND = 32,
    O_SWAP = 40,
    O_CAS64 = 48,
    O_DBL = 56,
    O_VEC = 64, /* and O_VEC + 16 */
    O_UNAL = 100,
    O_CAS32 = 112,
    O_MIN64 = 128,
    O_MAX32 = 136,
    O_PROD = 144,
    O_DMIN = 152,
    O_HAMMER = 160,
    O_HSUM = 168,
    WIN_BYTES = 176
};

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* Are the n values of v (sorted here) exactly 0..n-1? */
static int is_perm(long long *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    for (int i = 0; i < n; i++)
        if (v[i] != i) {
            tap_diag("sorted value %d is %lld", i, v[i]);
            return 0;
        }
    return 1;
}

static long long rd64(const unsigned char *b, int off)
{
    long long v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(16);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", "same_op");
    unsigned char *base;
    MPI_Win win;
    MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &base);
    memset(base, 0, WIN_BYTES);
    unsigned long long ones = ~0ULL;
    memcpy(base + O_BAND, &ones, 8);
    const long long min0 = LLONG_MAX;
    const int max0 = INT_MIN;
    const unsigned long long prod0 = 1;
    const double dmin0 = 1e300;
    memcpy(base + O_MIN64, &min0, 8), memcpy(base + O_MAX32, &max0, 4);
    memcpy(base + O_PROD, &prod0, 8), memcpy(base + O_DMIN, &dmin0, 8);
    memcpy(base + O_HAMMER, &prod0, 8);
    MPI_Win_create(base, WIN_BYTES, 1, info, MPI_COMM_WORLD, &win);
    MPI_Info_free(&info);

    MPI_Info got;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int found = 0;
    MPI_Win_get_info(win, &got);
    MPI_Info_get(got, "accumulate_ops", MPI_MAX_INFO_VAL, val, &found);
    MPI_Info_free(&got);
    /* A vendor may drop hints it does not use; where it reports the key, the value is ours. */
    tap_ok(!found || !strcmp(val, "same_op"), "MPI_Win_get_info reports accumulate_ops=%s",
           found ? val : "(not reported)");

    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_LONG_LONG, &vec); /* elements O_VEC and O_VEC + 16 */
    MPI_Type_commit(&vec);
    long long fop_old[ROUNDS], swap_old[ROUNDS], cas64_won[ROUNDS], my_tokens[ROUNDS];
    long long cas32_won[ROUNDS];
    int ncas32 = 0, nvec = 0;
    unsigned my_or = 0;
    unsigned long long my_xor = 0, my_and = ~0ULL;
    const long long one = 1, vone[2] = {1, 1};
    const int one32 = 1;
    const double done = 1.0;
    const unsigned long long three = 3;
    long long my_min = LLONG_MAX;
    int my_max = INT_MIN, max_old = 0;
    double my_dmin = 1e300;
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ROUNDS; i++) {
        unsigned bit = 1u << ((conf_rank * 7 + i) % 32);
        unsigned long long x = 0x9e3779b97f4a7c15ULL * (unsigned long long)(conf_rank * ROUNDS + i + 1);
        unsigned long long andv = ~(1ULL << ((conf_rank * 13 + i * 5) % 64));
        long long tok = (long long)(conf_rank + 1) * 1000000 + i + 1;
        my_or |= bit, my_xor ^= x, my_and &= andv, my_tokens[i] = tok;
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, O_SUM64, 1, MPI_LONG_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &fop_old[i], MPI_LONG_LONG, 0, O_FOP, MPI_SUM, win);
        MPI_Accumulate(&one32, 1, MPI_INT, 0, O_SUM32, 1, MPI_INT, MPI_SUM, win);
        MPI_Accumulate(&bit, 1, MPI_UNSIGNED, 0, O_BOR32, 1, MPI_UNSIGNED, MPI_BOR, win);
        MPI_Accumulate(&x, 1, MPI_UINT64_T, 0, O_BXOR, 1, MPI_UINT64_T, MPI_BXOR, win);
        MPI_Accumulate(&andv, 1, MPI_UNSIGNED_LONG_LONG, 0, O_BAND, 1, MPI_UNSIGNED_LONG_LONG,
                       MPI_BAND, win);
        MPI_Fetch_and_op(&tok, &swap_old[i], MPI_LONG_LONG, 0, O_SWAP, MPI_REPLACE, win);
        MPI_Accumulate(&done, 1, MPI_DOUBLE, 0, O_DBL, 1, MPI_DOUBLE, MPI_SUM, win);
        if (i % 2) {
            MPI_Accumulate(vone, 2, MPI_LONG_LONG, 0, O_VEC, 1, vec, MPI_SUM, win);
            nvec++;
        } else {
            MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, O_VEC, 1, MPI_LONG_LONG, MPI_SUM, win);
        }
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, O_UNAL, 1, MPI_LONG_LONG, MPI_SUM, win);
        /* MIN and MAX: each rank's operands move toward the extreme, so every update counts */
        long long mn = (long long)((x >> 8) % 1000000007ULL) - 1000000LL * i;
        int mx = (int)((x >> 40) % 1000003ULL) + 1000 * i;
        double dm = (double)(x >> 20) * 0x1p-20 - 1000.0 * i;
        my_min = mn < my_min ? mn : my_min, my_max = mx > my_max ? mx : my_max;
        my_dmin = dm < my_dmin ? dm : my_dmin;
        MPI_Accumulate(&mn, 1, MPI_LONG_LONG, 0, O_MIN64, 1, MPI_LONG_LONG, MPI_MIN, win);
        MPI_Fetch_and_op(&mx, &max_old, MPI_INT, 0, O_MAX32, MPI_MAX, win);
        MPI_Accumulate(&three, 1, MPI_UNSIGNED_LONG_LONG, 0, O_PROD, 1, MPI_UNSIGNED_LONG_LONG,
                       MPI_PROD, win);
        MPI_Accumulate(&dm, 1, MPI_DOUBLE, 0, O_DMIN, 1, MPI_DOUBLE, MPI_MIN, win);
        /* a ticket: read with an atomic fetch, then compare-and-swap old -> old + 1 until won */
        long long cmp, nv, old;
        MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &cmp, 1, MPI_LONG_LONG, 0, O_CAS64, 1,
                           MPI_LONG_LONG, MPI_NO_OP, win);
        MPI_Win_flush(0, win);
        for (;;) {
            nv = cmp + 1;
            MPI_Compare_and_swap(&nv, &cmp, &old, MPI_LONG_LONG, 0, O_CAS64, win);
            MPI_Win_flush(0, win);
            if (old == cmp)
                break;
            cmp = old;
        }
        cas64_won[i] = old;
        if (i % 3 == 0) {
            int c32, n32, o32;
            MPI_Fetch_and_op(NULL, &c32, MPI_INT32_T, 0, O_CAS32, MPI_NO_OP, win);
            MPI_Win_flush(0, win);
            for (;;) {
                n32 = c32 + 1;
                MPI_Compare_and_swap(&n32, &c32, &o32, MPI_INT32_T, 0, O_CAS32, win);
                MPI_Win_flush(0, win);
                if (o32 == c32)
                    break;
                c32 = o32;
            }
            cas32_won[ncas32++] = o32;
        }
    }
    MPI_Win_unlock_all(win);
    /* The hammer: every rank at once, one element, nothing else in between. */
    long long hammered = 0, all_hammered = 0;
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (double t_end = MPI_Wtime() + 0.2; MPI_Wtime() < t_end;) {
        for (int k = 0; k < 64; k++, hammered++) {
            MPI_Accumulate(&three, 1, MPI_UNSIGNED_LONG_LONG, 0, O_HAMMER, 1,
                           MPI_UNSIGNED_LONG_LONG, MPI_PROD, win);
            MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, O_HSUM, 1, MPI_LONG_LONG, MPI_SUM, win);
        }
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);

    int n = conf_size, total = n * ROUNDS;
    unsigned all_or = 0;
    unsigned long long all_xor = 0, all_and = 0;
    int tvec = 0, tcas32 = 0;
    MPI_Allreduce(&my_or, &all_or, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
    MPI_Allreduce(&my_xor, &all_xor, 1, MPI_UNSIGNED_LONG_LONG, MPI_BXOR, MPI_COMM_WORLD);
    MPI_Allreduce(&my_and, &all_and, 1, MPI_UNSIGNED_LONG_LONG, MPI_BAND, MPI_COMM_WORLD);
    MPI_Allreduce(&nvec, &tvec, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&ncas32, &tcas32, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long long all_min = 0;
    int all_max = 0;
    double all_dmin = 0;
    MPI_Allreduce(&my_min, &all_min, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&my_max, &all_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&my_dmin, &all_dmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hammered, &all_hammered, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long *fops = malloc((size_t)total * sizeof *fops), *swaps = malloc(((size_t)total + 1) * sizeof *swaps),
              *toks = malloc(((size_t)total + 1) * sizeof *toks), *cas = malloc((size_t)total * sizeof *cas),
              *c32 = malloc((size_t)total * sizeof *c32);
    int *counts = malloc((size_t)n * sizeof *counts), *displs = malloc((size_t)n * sizeof *displs);
    MPI_Gather(fop_old, ROUNDS, MPI_LONG_LONG, fops, ROUNDS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(swap_old, ROUNDS, MPI_LONG_LONG, swaps, ROUNDS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(my_tokens, ROUNDS, MPI_LONG_LONG, toks, ROUNDS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(cas64_won, ROUNDS, MPI_LONG_LONG, cas, ROUNDS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(&ncas32, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0, d = 0; r < n && conf_rank == 0; d += counts[r], r++)
        displs[r] = d;
    MPI_Gatherv(cas32_won, ncas32, MPI_LONG_LONG, c32, counts, displs, MPI_LONG_LONG, 0,
                MPI_COMM_WORLD);

    /* Rank 0's window after every epoch closed (the unified model: its own memory). */
    unsigned char w[WIN_BYTES];
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(w, WIN_BYTES, MPI_BYTE, 0, 0, WIN_BYTES, MPI_BYTE, win);
    MPI_Win_unlock(0, win);
    int ok[15] = {0};
    if (conf_rank == 0) {
        int s32;
        unsigned o32;
        unsigned long long x64, a64;
        double d;
        memcpy(&s32, w + O_SUM32, 4), memcpy(&o32, w + O_BOR32, 4);
        memcpy(&x64, w + O_BXOR, 8), memcpy(&a64, w + O_BAND, 8), memcpy(&d, w + O_DBL, 8);
        ok[0] = rd64(w, O_SUM64) == total && s32 == total;
        if (!ok[0])
            tap_diag("SUM: 64-bit %lld, 32-bit %d, expected %d", rd64(w, O_SUM64), s32, total);
        ok[1] = rd64(w, O_FOP) == total && is_perm(fops, total);
        ok[2] = o32 == all_or && a64 == all_and && x64 == all_xor;
        if (!ok[2])
            tap_diag("BOR %#x (%#x), BAND %#llx (%#llx), BXOR %#llx (%#llx)", o32, all_or, a64,
                     all_and, x64, all_xor);
        /* swaps: {olds} + {final} == {0} + {tokens} */
        swaps[total] = rd64(w, O_SWAP);
        toks[total] = 0;
        qsort(swaps, (size_t)total + 1, sizeof *swaps, cmp_ll);
        qsort(toks, (size_t)total + 1, sizeof *toks, cmp_ll);
        ok[3] = memcmp(swaps, toks, ((size_t)total + 1) * sizeof *swaps) == 0;
        ok[4] = rd64(w, O_CAS64) == total && is_perm(cas, total);
        int f32;
        memcpy(&f32, w + O_CAS32, 4);
        ok[5] = f32 == tcas32 && is_perm(c32, tcas32);
        ok[6] = d == (double)total;
        ok[7] = rd64(w, O_VEC) == total && rd64(w, O_VEC + 16) == tvec;
        if (!ok[7])
            tap_diag("vector SUM: %lld (%d), %lld (%d)", rd64(w, O_VEC), total,
                     rd64(w, O_VEC + 16), tvec);
        ok[8] = rd64(w, O_UNAL) == total;
        if (!ok[8])
            tap_diag("unaligned SUM %lld, expected %d", rd64(w, O_UNAL), total);
        int m32;
        double dm;
        unsigned long long pr, want = 1;
        memcpy(&m32, w + O_MAX32, 4), memcpy(&pr, w + O_PROD, 8), memcpy(&dm, w + O_DMIN, 8);
        for (int i = 0; i < total; i++)
            want *= 3;
        ok[11] = rd64(w, O_MIN64) == all_min && m32 == all_max;
        if (!ok[11])
            tap_diag("MIN %lld (%lld), MAX %d (%d)", rd64(w, O_MIN64), all_min, m32, all_max);
        ok[12] = pr == want;
        if (!ok[12])
            tap_diag("PROD %#llx, expected 3^%d mod 2^64 = %#llx", pr, total, want);
        ok[13] = dm == all_dmin;
        unsigned long long hm, hwant = 1;
        memcpy(&hm, w + O_HAMMER, 8);
        for (long long i = 0; i < all_hammered; i++)
            hwant *= 3;
        ok[14] = hm == hwant && rd64(w, O_HSUM) == all_hammered;
        if (rd64(w, O_HSUM) != all_hammered)
            tap_diag("hammered SUM %lld, expected %lld", rd64(w, O_HSUM), all_hammered);
        if (!ok[14]) {
            long long lost = 0; /* how many factors of 3 short: the updates lost */
            for (unsigned long long v = hm; v != hwant && lost < all_hammered; lost++)
                v *= 3;
            tap_diag("hammered PROD %#llx, expected 3^%lld mod 2^64 = %#llx (%lld updates lost)",
                     hm, all_hammered, hwant, lost);
        }
        if (!ok[13])
            tap_diag("MIN on MPI_DOUBLE %.17g, expected %.17g", dm, all_dmin);
    }
    MPI_Bcast(ok, 15, MPI_INT, 0, MPI_COMM_WORLD);
    tap_ok(ok[0], "%d SUM +1 from %d ranks on a 64-bit and a 32-bit integer: exact", total, n);
    tap_ok(ok[1], "fetch_and_op SUM +1: the %d old values are a permutation of 0..%d", total,
           total - 1);
    tap_ok(ok[2], "BOR (32-bit), BAND and BXOR (64-bit): the OR/AND/XOR of every operand");
    tap_ok(ok[3], "fetch_and_op REPLACE swaps: every token and the initial 0 seen exactly once");
    tap_ok(ok[4], "64-bit compare-and-swap tickets read by get_accumulate(MPI_NO_OP): %d won, "
                  "each value once",
           total);
    tap_ok(ok[5], "32-bit compare-and-swap tickets read by fetch_and_op(MPI_NO_OP): %d won, "
                  "each value once",
           tcas32);
    tap_ok(ok[6], "SUM on MPI_DOUBLE (no single atomic instruction serves it): exact");
    tap_ok(ok[7], "SUM through a vector type and a contiguous one on the same element: exact");
    tap_ok(ok[8], "SUM on a 64-bit integer at an address 4 bytes off alignment: exact");
    tap_ok(ok[11], "MIN on a 64-bit integer, MAX by fetch_and_op on a 32-bit one, from %d ranks: "
                   "the global minimum and maximum",
           n);
    tap_ok(ok[12], "PROD x3 on a 64-bit unsigned integer, %d times: 3^%d mod 2^64 exactly", total,
           total);
    tap_ok(ok[13], "MIN on MPI_DOUBLE from %d ranks: the global minimum", n);
    tap_ok(ok[14], "%lld PROD x3 and SUM +1 each from %d ranks at once for 200 ms: none lost",
           all_hammered, n);
    tap_ok(tvec > 0 && tcas32 > 0, "the vector and the 32-bit CAS paths ran (%d, %d)", tvec,
           tcas32);

    /* A default window reports MPI-3.1's default, same_op_no_op, where the key is reported. */
    MPI_Win dflt;
    MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &dflt);
    found = 0;
    MPI_Win_get_info(dflt, &got);
    MPI_Info_get(got, "accumulate_ops", MPI_MAX_INFO_VAL, val, &found);
    MPI_Info_free(&got);
    tap_ok(!found || !strcmp(val, "same_op_no_op"),
           "a window without the key reports accumulate_ops=%s", found ? val : "(not reported)");
    MPI_Win_free(&dflt);
    MPI_Type_free(&vec);
    free(fops), free(swaps), free(toks), free(cas), free(c32), free(counts), free(displs);
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    return conf_done();
}
