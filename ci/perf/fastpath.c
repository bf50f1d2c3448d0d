/* fastpath.c — the reference's fast paths, driven a fixed number of times, for the deterministic
 * CI gate (ci/perf/perfgate.py, docs/models.md).
 *
 *   fastpath ops N     one process, an allocated window of 64 doubles; N calls each of MPI_Put,
 *                      MPI_Get, MPI_Accumulate(SUM), MPI_Fetch_and_op(SUM) and
 *                      MPI_Compare_and_swap under lock_all, then N (MPI_Put + MPI_Win_flush)
 *                      pairs, then N (MPI_Win_lock exclusive + MPI_Win_unlock) pairs on itself,
 *                      then N (MPI_Win_lock_all + MPI_Win_unlock_all) pairs, then the same epochs
 *                      nonblocking: N (MPIX_Win_ilock exclusive + MPIX_Win_iunlock + two MPI_Wait)
 *                      and N (MPIX_Win_ilock_all + MPIX_Win_iunlock_all + MPI_Waitall).
 *                      Run under callgrind twice with different N: the difference of the
 *                      inclusive cost per function, divided by the difference of N, is the
 *                      instruction count of one call, free of first-call and setup costs.
 *   fastpath meta      heap bytes (glibc mallinfo2) that creating one window of each flavour
 *                      costs under the reference, as "ref_FLAVOUR BYTES" lines. That includes
 *                      the vendor window the reference keeps underneath each of its windows: a
 *                      baseline is per MPI. (The vendor's own windows are not measured: Open
 *                      MPI 4.1's osc/rdma refuses MPI_Win_create on a single process.)
 *                      Then the window metadata MPIX_Win_get_stats reports in this process for
 *                      one window of each flavour over MPI_COMM_WORLD, as "meta_FLAVOUR P
 *                      BYTES" lines (paper 004 §III-B, experiment F3): exact counts, so
 *                      perfgate.py runs this on 1 and on 2 processes and gates the bytes per
 *                      window and the bytes per added peer (docs/experiments-f.md).
 *
 *   fastpath xnode OP N  two processes, each its own node (run with NBRMA_RANKS_PER_NODE=1,
 *                      NBRMA_NET=ucx): rank 0 does N (OP + MPI_Win_flush) toward rank 1 under
 *                      lock_all on an MPI_Win_allocate window of 64 longs with
 *                      accumulate_ops=same_op, OP one of put (8 bytes), get (8 bytes), fop
 *                      (MPI_Fetch_and_op MPI_SUM on a long): the across-node fast paths of issue
 *                      22 (docs/ref-internals.md, "Fast paths"). Only rank 0 runs under callgrind.
 *
 * One process (xnode: one measured process), so that no peer's timing enters the counts. Every
 * result is verified. */
#include <malloc.h>
#include <mpi.h>
#include <nbrma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            fprintf(stderr, "fastpath: %s failed (%d)\n", #call, rc_);                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int run_ops(long n)
{
    double *base, v = 1.0, r = 0.0;
    long cmp = 0, swp = 1, old = 0;
    int ok = 1;
    MPI_Win win;
    CHECK(MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_SELF, &base,
                           &win));
    memset(base, 0, 64 * sizeof(double));
    CHECK(MPI_Win_lock_all(0, win));
    for (long i = 0; i < n; i++)
        CHECK(MPI_Put(&v, 1, MPI_DOUBLE, 0, i & 7, 1, MPI_DOUBLE, win));
    CHECK(MPI_Win_flush_all(win));
    for (long i = 0; i < n; i++)
        CHECK(MPI_Get(&r, 1, MPI_DOUBLE, 0, i & 7, 1, MPI_DOUBLE, win));
    CHECK(MPI_Win_flush_all(win));
    for (long i = 0; i < n; i++)
        CHECK(MPI_Accumulate(&v, 1, MPI_DOUBLE, 0, 8, 1, MPI_DOUBLE, MPI_SUM, win));
    CHECK(MPI_Win_flush_all(win));
    for (long i = 0; i < n; i++)
        CHECK(MPI_Fetch_and_op(&v, &r, MPI_DOUBLE, 0, 9, MPI_SUM, win));
    CHECK(MPI_Win_flush_all(win));
    for (long i = 0; i < n; i++) {
        CHECK(MPI_Compare_and_swap(&swp, &cmp, &old, MPI_LONG, 0, 10, win));
        swp ^= 1, cmp ^= 1; /* alternate 0 -> 1 -> 0: every swap succeeds */
    }
    CHECK(MPI_Win_flush_all(win));
    for (long i = 0; i < n; i++) {
        CHECK(MPI_Put(&v, 1, MPI_DOUBLE, 0, 11, 1, MPI_DOUBLE, win));
        CHECK(MPI_Win_flush(0, win));
    }
    CHECK(MPI_Win_unlock_all(win));
    for (long i = 0; i < n; i++) {
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK(MPI_Win_unlock(0, win));
    }
    for (long i = 0; i < n; i++) {
        CHECK(MPI_Win_lock_all(0, win));
        CHECK(MPI_Win_unlock_all(win));
    }
    for (long i = 0; i < n; i++) {
        MPI_Request r[2];
        CHECK(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &r[0]));
        CHECK(MPIX_Win_iunlock(0, win, &r[1]));
        CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        CHECK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        ok = ok && r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL;
    }
    for (long i = 0; i < n; i++) {
        MPI_Request r[2];
        MPI_Status st[2]; /* (MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
        CHECK(MPIX_Win_ilock_all(0, win, &r[0]));
        CHECK(MPIX_Win_iunlock_all(win, &r[1]));
        CHECK(MPI_Waitall(2, r, st));
        ok = ok && r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL;
    }
    ok = ok && base[0] == 1.0 && base[8] == (double)n && base[9] == (double)n && base[11] == 1.0;
    long cell;
    memcpy(&cell, &base[10], sizeof cell);
    ok = ok && cell == (n & 1);
    CHECK(MPI_Win_free(&win));
    if (!ok)
        fprintf(stderr, "fastpath: the operations did not arrive\n");
    return ok ? 0 : 1;
}

/* OP + flush toward the other node, n times (rank 0); rank 1 checks what arrived. */
static int run_xnode(const char *op, long n)
{
    int me, np, ok = 1;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    if (np != 2) {
        if (me == 0)
            fprintf(stderr, "fastpath: xnode runs on 2 processes, not %d\n", np);
        return 2;
    }
    MPI_Info info;
    CHECK(MPI_Info_create(&info));
    CHECK(MPI_Info_set(info, "accumulate_ops", "same_op"));
    long *base, v = 7, r = 0, got = -1;
    MPI_Win win;
    CHECK(MPI_Win_allocate(64 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base, &win));
    CHECK(MPI_Info_free(&info));
    for (int i = 0; i < 64; i++)
        base[i] = me == 1 ? 40 + i : 0;
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(MPI_Win_lock_all(0, win));
    if (me == 0)
        for (long i = 0; i < n; i++) {
            if (op[0] == 'p')
                CHECK(MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
            else if (op[0] == 'g')
                CHECK(MPI_Get(&r, 1, MPI_LONG, 1, 1, 1, MPI_LONG, win));
            else
                CHECK(MPI_Fetch_and_op(&v, &r, MPI_LONG, 1, 2, MPI_SUM, win));
            CHECK(MPI_Win_flush(1, win));
        }
    CHECK(MPI_Win_unlock_all(win));
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* what rank 1 holds (put, fop) or what rank 0 read (get), gathered at rank 0 */
    long mine = op[0] == 'p' ? base[0] : op[0] == 'f' ? base[2] : r;
    long want = op[0] == 'p' ? 7 : op[0] == 'f' ? 42 + 7 * n : 41;
    CHECK(MPI_Reduce(&mine, &got, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (me == 0 && got != want) {
        fprintf(stderr, "fastpath: xnode %s: %ld arrived, %ld expected\n", op, got, want);
        ok = 0;
    }
    CHECK(MPI_Win_free(&win));
    return ok ? 0 : 1;
}

/* Heap bytes in use now (glibc). */
static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static const char *flavours[] = {"create", "allocate", "dynamic"};

/* One window of flavour f over comm (memory `mem`, 64 doubles, for create). */
static void win_new(int f, double *mem, MPI_Comm comm, MPI_Win *win)
{
    void *base;
    if (f == 0)
        CHECK(MPI_Win_create(mem, 64 * sizeof(double), sizeof(double), MPI_INFO_NULL, comm, win));
    else if (f == 1)
        CHECK(MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, comm, &base,
                               win));
    else
        CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, win));
}

/* The window metadata of each flavour over MPI_COMM_WORLD, as MPIX_Win_get_stats counts it in
 * rank 0 (every rank counts the same bytes: docs/experiments-f.md, F3). */
static int run_meta_stats(double *mem)
{
    int me, np;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    for (int f = 0; f < 3; f++) {
        MPI_Win win;
        win_new(f, mem, MPI_COMM_WORLD, &win);
        MPIX_Win_stats st = {.version = MPIX_WIN_STATS_VERSION};
        CHECK(MPIX_Win_get_stats(win, &st));
        if (st.ranks != np || st.meta.count != 1 || st.meta.bytes <= 0) {
            fprintf(stderr, "fastpath: MPIX_Win_get_stats on a %s window: ranks %d (want %d), "
                    "meta count %lld (want 1), bytes %lld\n", flavours[f], st.ranks, np,
                    st.meta.count, st.meta.bytes);
            return 1;
        }
        if (me == 0)
            printf("meta_%s %d %lld\n", flavours[f], np, st.meta.bytes);
        CHECK(MPI_Win_free(&win));
    }
    return 0;
}

static int run_meta(void)
{
    static const char *impls[] = {"ref"};
    static double mem[64];
    int me;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    for (int i = 0; i < 1; i++) {
        if (MPIX_Nbrma_set_impl(impls[i]) != MPI_SUCCESS) {
            fprintf(stderr, "fastpath: MPIX_Nbrma_set_impl(%s) failed\n", impls[i]);
            return 1;
        }
        for (int f = 0; f < 3; f++) {
            MPI_Win win;
            /* The first window of a kind may set up state that later ones share: measure the
             * second. */
            for (int rep = 0; rep < 2; rep++) {
                size_t before = heap_bytes();
                win_new(f, mem, MPI_COMM_SELF, &win);
                size_t after = heap_bytes();
                if (rep == 1 && me == 0)
                    printf("%s_%s %ld\n", impls[i], flavours[f], (long)after - (long)before);
                CHECK(MPI_Win_free(&win));
            }
        }
    }
    return run_meta_stats(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = 2;
    if (argc == 3 && strcmp(argv[1], "ops") == 0) {
        char *end;
        long n = strtol(argv[2], &end, 10);
        if (*end || n < 1 || n > 100000000)
            fprintf(stderr, "fastpath: N must be 1 .. 1e8, not '%s'\n", argv[2]);
        else
            rc = run_ops(n);
    } else if (argc == 2 && strcmp(argv[1], "meta") == 0) {
        rc = run_meta();
    } else if (argc == 4 && strcmp(argv[1], "xnode") == 0 &&
               (!strcmp(argv[2], "put") || !strcmp(argv[2], "get") || !strcmp(argv[2], "fop"))) {
        char *end;
        long n = strtol(argv[3], &end, 10);
        if (*end || n < 1 || n > 100000000)
            fprintf(stderr, "fastpath: N must be 1 .. 1e8, not '%s'\n", argv[3]);
        else
            rc = run_xnode(argv[2], n);
    } else {
        fprintf(stderr, "usage: fastpath ops N | fastpath meta | fastpath xnode put|get|fop N\n");
    }
    MPI_Finalize();
    return rc;
}
