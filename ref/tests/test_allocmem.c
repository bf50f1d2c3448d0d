/* test_allocmem.c — MPI_Alloc_mem / MPI_Free_mem from node-shared memory (mem.c, issue 24), and
 * MPI_Win_create windows over it. Any number of ranks, on one node or across virtual nodes
 * (NBRMA_RANKS_PER_NODE): node peers must reach a window over Alloc_mem memory by load/store (a
 * mapping, no CMA), other nodes through the transport, and every access must land where it
 * belongs in either case.
 *
 *   - sizes 0, 1, 100, 4 KiB, 1 MiB: distinct, usable, 64-byte aligned; the MPI-4.0 info key
 *     mpi_minimum_memory_alignment honoured (64 KiB), a value that is no power of two refused;
 *   - errors through MPI_COMM_WORLD's handler (MPI_ERRORS_RETURN): negative size MPI_ERR_ARG,
 *     sizes beyond the machine (2^50, the largest MPI_Aint) MPI_ERR_NO_MEM; MPI_Free_mem of a
 *     stack address, of malloc'ed memory, of a pointer into a block and of a block freed twice
 *     MPI_ERR_BASE; MPI_Free_mem(NULL) succeeds;
 *   - windows: over a whole block, over part of one (base + 64, 64 bytes short), over two blocks
 *     side by side, and over malloc'ed memory: every rank puts, accumulates, fetch-and-ops and
 *     compare-and-swaps into its right neighbour under a shared lock, gets back what it wrote,
 *     and each owner finds exactly the expected bytes (and none outside the window's range);
 *     which peers were mapped is checked against the node layout; the same over the memory of
 *     an MPI_Win_allocate window, which across nodes must be node-shared where node peers are in
 *     the window (mapped, no CMA), UCX's (NBRMA_NET=ucx) or private where its rank is alone on
 *     its node, and which MPI_Free_mem refuses (MPI_ERR_BASE); MPI_Win_shared_query gives the
 *     memory of this node's ranks and NULL for other nodes';
 *   - growth and release with 1 MiB segments (nbr_mem_seg_order): 6 blocks of 512 KiB need 3
 *     segments or more; once freed one segment remains, its pages given back (resident bytes
 *     fall to what the remaining blocks hold);
 *   - four threads allocating and freeing 2000 blocks each at once (every block filled and
 *     checked before it is freed);
 *   - under MPIX_Nbrma_set_impl("vendor") the memory is the MPI library's (not in a segment),
 *     and MPI_Free_mem gives it back to the library. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"

static int me, np;

static int is_class(int rc, int cls)
{
    int c = -1;
    if (rc == MPI_SUCCESS)
        return cls == MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c == cls;
}

/* 1 on every rank if cond held on every rank. */
static int all(int cond)
{
    MPI_Allreduce(MPI_IN_PLACE, &cond, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return cond;
}

static void sizes_and_alignment(void)
{
    static const MPI_Aint sz[] = {0, 1, 100, 4096, 1 << 20};
    void *p[5];
    int ok = 1;
    for (int i = 0; i < 5; i++) {
        ok &= MPI_Alloc_mem(sz[i], MPI_INFO_NULL, &p[i]) == MPI_SUCCESS && p[i] != NULL &&
              (uintptr_t)p[i] % 64 == 0;
        if (ok && sz[i])
            memset(p[i], 0x5a, (size_t)sz[i]);
    }
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < i; j++)
            ok &= p[i] != p[j];
    long segs = nbr_mem_segments();
    for (int i = 0; i < 5; i++)
        ok &= MPI_Free_mem(p[i]) == MPI_SUCCESS;
    tap_ok(all(ok && segs >= 1),
           "MPI_Alloc_mem of 0, 1, 100, 4096 and 1 MiB bytes: distinct, 64-byte aligned, usable "
           "node-shared blocks (%ld segment(s)); MPI_Free_mem takes each back",
           segs);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "65536");
    void *a = NULL;
    int rc = MPI_Alloc_mem(100, info, &a);
    ok = rc == MPI_SUCCESS && a && (uintptr_t)a % 65536 == 0;
    if (rc == MPI_SUCCESS)
        MPI_Free_mem(a);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "3");
    rc = MPI_Alloc_mem(100, info, &a);
    MPI_Info_free(&info);
    tap_ok(all(ok && is_class(rc, MPI_ERR_INFO_VALUE)),
           "info mpi_minimum_memory_alignment=65536 is honoured; =3 (no power of two) is "
           "MPI_ERR_INFO_VALUE");
}

static void errors(void)
{
    void *p = NULL;
    int ok = is_class(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_ARG);
    tap_ok(all(ok), "MPI_Alloc_mem(-1): MPI_ERR_ARG through MPI_COMM_WORLD's handler");
    int r1 = MPI_Alloc_mem((MPI_Aint)1 << 50, MPI_INFO_NULL, &p);
    int r2 = MPI_Alloc_mem(NBR_AINT_MAX, MPI_INFO_NULL, &p);
    if (!is_class(r1, MPI_ERR_NO_MEM) || !is_class(r2, MPI_ERR_NO_MEM))
        tap_diag("rank %d: 2^50 bytes gave %d, the largest MPI_Aint %d", me, r1, r2);
    tap_ok(all(is_class(r1, MPI_ERR_NO_MEM) && is_class(r2, MPI_ERR_NO_MEM)),
           "MPI_Alloc_mem of 2^50 bytes and of the largest MPI_Aint: MPI_ERR_NO_MEM");

    long on_stack = 0;
    void *heap = malloc(64), *b = NULL;
    MPI_Alloc_mem(256, MPI_INFO_NULL, &b);
    int e1 = MPI_Free_mem(&on_stack), e2 = MPI_Free_mem(heap), e3 = MPI_Free_mem((char *)b + 64);
    int f1 = MPI_Free_mem(b), e4 = MPI_Free_mem(b), n = MPI_Free_mem(NULL);
    free(heap);
    ok = is_class(e1, MPI_ERR_BASE) && is_class(e2, MPI_ERR_BASE) && is_class(e3, MPI_ERR_BASE) &&
         f1 == MPI_SUCCESS && is_class(e4, MPI_ERR_BASE) && n == MPI_SUCCESS;
    if (!ok)
        tap_diag("rank %d: stack %d, malloc %d, interior %d, free %d, twice %d, NULL %d", me, e1,
                 e2, e3, f1, e4, n);
    tap_ok(all(ok), "MPI_Free_mem of a stack address, of malloc'ed memory, of a pointer into a "
                    "block and of a block freed already: MPI_ERR_BASE; MPI_Free_mem(NULL): "
                    "MPI_SUCCESS");
}

/* A window over `bytes` bytes at `mem` (disp unit 8); every rank works on its right neighbour's
 * slots [8*me, 8*me+8) under a shared lock, then each owner checks its memory. `mapped`: node
 * peers must have been mapped. */
static void window_case(const char *what, int64_t *mem, MPI_Aint bytes, int mapped)
{
    const int right = (me + 1) % np, left = (me + np - 1) % np;
    const int n = (int)(bytes / 8);
    const int alloc = mem == NULL; /* MPI_Win_allocate's memory (no guards around it) */
    int64_t guards[16], *guard_lo = alloc ? guards : mem - 8, *guard_hi = alloc ? guards + 8 : mem + n;
    MPI_Win win;
    if (alloc)
        MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < n; i++)
        mem[i] = -1;
    for (int i = 0; i < 8; i++)
        guard_lo[i] = guard_hi[i] = 777;
    MPI_Barrier(MPI_COMM_WORLD); /* every owner's -1s are in before anyone writes */
    if (!alloc)
        MPI_Win_create(mem, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    nbr_win_t *w = nbr_win_find(win);
    int layout = w != NULL;
    for (int r = 0; w && r < np; r++) {
        const nbr_target_t *t = &w->t[r];
        int expect = r == me || (mapped && t->net == NBR_NET_SHM);
        layout &= (t->base != NULL) == expect;
    }
    int cma_ok = !w || (w->cma == !mapped);
    /* MPI_Win_allocate's memory (win.c's priv_alloc): node-shared where node peers are in the
     * window, the transport's (UCX) or private where this rank is alone on its node; never a
     * block MPI_Free_mem would take. */
    int kind_ok = 1;
    if (alloc && w) {
        const char *net = getenv("NBRMA_NET");
        int peers = w->size - w->nremote - 1, cls = -1;
        kind_ok = !w->nremote ? w->priv_kind == NBR_PRIV_NONE
                  : peers     ? w->priv_kind == NBR_PRIV_SHM
                  : net && !strcmp(net, "ucx") ? w->priv_kind == NBR_PRIV_TP
                              : w->priv_kind == NBR_PRIV_TP || w->priv_kind == NBR_PRIV_HEAP;
        MPI_Error_class(MPI_Free_mem(mem), &cls);
        kind_ok &= cls == MPI_ERR_BASE;
        /* MPI_Win_shared_query: memory of this node's ranks (mine and my node peers'), none of
         * other nodes' */
        for (int r = 0; r < np; r++) {
            MPI_Aint qsz = -1;
            int qdu = -1;
            void *qp = NULL;
            int here = r == me || w->t[r].net == NBR_NET_SHM;
            kind_ok &= MPI_Win_shared_query(win, r, &qsz, &qdu, &qp) == MPI_SUCCESS &&
                       qsz == bytes && qdu == 8 && (qp != NULL) == here;
        }
        if (!kind_ok)
            tap_diag("rank %d: MPI_Win_allocate memory of kind %d (nremote %d, node peers %d), "
                     "MPI_Free_mem of it: class %d", me, w->priv_kind, w->nremote, peers, cls);
    }
    int64_t v[8], got[8], one = 1, old = -2, cmp = 1000 + me, swp = 2000 + me, res = -3;
    for (int i = 0; i < 8; i++)
        v[i] = 100 * me + i;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(v, 4, MPI_INT64_T, right, 8 * me, 4, MPI_INT64_T, win);
    MPI_Accumulate(&v[4], 2, MPI_INT64_T, right, 8 * me + 4, 2, MPI_INT64_T, MPI_REPLACE, win);
    MPI_Win_flush(right, win);
    MPI_Accumulate(&one, 1, MPI_INT64_T, right, 8 * me + 4, 1, MPI_INT64_T, MPI_SUM, win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, right, 8 * me + 5, MPI_SUM, win);
    MPI_Put(&cmp, 1, MPI_INT64_T, right, 8 * me + 6, 1, MPI_INT64_T, win);
    MPI_Win_flush(right, win);
    MPI_Compare_and_swap(&swp, &cmp, &res, MPI_INT64_T, right, 8 * me + 6, win);
    MPI_Win_flush(right, win);
    MPI_Get(got, 7, MPI_INT64_T, right, 8 * me, 7, MPI_INT64_T, win);
    MPI_Win_unlock(right, win);
    int ok = old == v[5] && res == cmp;
    for (int i = 0; i < 4; i++)
        ok &= got[i] == v[i];
    ok &= got[4] == v[4] + 1 && got[5] == v[5] + 1 && got[6] == swp;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
    int owner_ok = 1;
    for (int i = 0; i < n; i++) {
        int64_t want = -1;
        int slot = i - 8 * left;
        if (slot >= 0 && slot < 4)
            want = 100 * left + slot;
        else if (slot == 4 || slot == 5)
            want = 100 * left + slot + 1;
        else if (slot == 6)
            want = 2000 + left;
        owner_ok &= mem[i] == want;
    }
    MPI_Win_unlock(me, win);
    for (int i = 0; i < 8; i++)
        owner_ok &= guard_lo[i] == 777 && guard_hi[i] == 777;
    MPI_Win_free(&win);
    if (!(layout && cma_ok && ok && owner_ok))
        tap_diag("rank %d, %s: layout %d, cma %d, origin %d, owner %d", me, what, layout, cma_ok,
                 ok, owner_ok);
    tap_ok(all(layout && cma_ok && kind_ok && ok && owner_ok),
           "%s: node peers %s; put, accumulate, fetch_and_op, compare_and_swap and get to the "
           "right neighbour land exactly (nothing outside the window changed)",
           what, mapped ? "map the memory (no CMA)" : "use CMA (memory not node-shared)");
}

static void windows(void)
{
    const MPI_Aint bytes = 8 * 8 * (MPI_Aint)np; /* 8 slots per rank */
    char *blk = NULL;
    /* a whole block (with 64 bytes of guard on each side) */
    MPI_Alloc_mem(bytes + 128, MPI_INFO_NULL, &blk);
    window_case("window over a whole MPI_Alloc_mem block", (int64_t *)(blk + 64), bytes, 1);
    MPI_Free_mem(blk);
    /* MPI_Win_allocate: across nodes its memory is node-shared too (or UCX's, alone on a node) */
    window_case("MPI_Win_allocate window", NULL, bytes, 1);
    /* part of a block */
    MPI_Alloc_mem(bytes + 4096, MPI_INFO_NULL, &blk);
    window_case("window over part of a block (base + 1024)", (int64_t *)(blk + 1024), bytes, 1);
    MPI_Free_mem(blk);
    /* two blocks side by side: buddies of 4 KiB are adjacent */
    char *b[6];
    int pair = -1;
    for (int i = 0; i < 6; i++)
        MPI_Alloc_mem(4096, MPI_INFO_NULL, &b[i]);
    for (int i = 0; i < 6 && pair < 0; i++)
        for (int j = 0; j < 6 && pair < 0; j++)
            if (b[j] == b[i] + 4096)
                pair = i * 8 + j;
    int have = all(pair >= 0);
    if (have) { /* the window starts 128 bytes before the seam: ranks >= 2 write past it */
        char *lo = b[pair / 8];
        window_case("window spanning two blocks side by side", (int64_t *)(lo + 4096 - 128), bytes,
                    1);
    } else {
        tap_skip(1, "no two 4 KiB blocks came out side by side");
    }
    for (int i = 0; i < 6; i++)
        MPI_Free_mem(b[i]);
    /* plain malloc memory: CMA, as before */
    char *m = malloc((size_t)bytes + 128);
    window_case("window over malloc'ed memory", (int64_t *)(m + 64), bytes, 0);
    free(m);
}

static void growth(void)
{
    void *p[6];
    int ok = 1;
    long before = nbr_mem_segments();
    for (int i = 0; i < 6; i++) {
        ok &= MPI_Alloc_mem(512 * 1024, MPI_INFO_NULL, &p[i]) == MPI_SUCCESS;
        if (ok)
            memset(p[i], i, 512 * 1024);
    }
    long grown = nbr_mem_segments();
    size_t held = nbr_mem_resident();
    for (int i = 0; i < 6; i++)
        ok &= ((unsigned char *)p[i])[512 * 1024 - 1] == i && MPI_Free_mem(p[i]) == MPI_SUCCESS;
    long after = nbr_mem_segments();
    size_t left = nbr_mem_resident();
    if (!ok || grown < 3 || after > 1 || held < 6 * 512 * 1024 || left > 64 * 1024)
        tap_diag("rank %d: segments %ld -> %ld -> %ld, resident %zu -> %zu bytes", me, before,
                 grown, after, held, left);
    tap_ok(all(ok && grown >= 3 && after <= 1 && held >= 6 * 512 * 1024 && left <= 64 * 1024),
           "1 MiB segments: 6 blocks of 512 KiB grow the arena to >= 3 segments (%ld); freed, "
           "one segment is left and its pages are given back (%zu bytes resident)",
           grown, left);
}

typedef struct {
    unsigned seed;
    int ok;
} th_t;

static void *churn(void *arg)
{
    th_t *t = arg;
    void *live[32] = {0};
    size_t len[32] = {0};
    for (int i = 0; i < 2000; i++) {
        int k = (int)(rand_r(&t->seed) % 32);
        if (live[k]) {
            for (size_t j = 0; j < len[k]; j += 97)
                t->ok &= ((unsigned char *)live[k])[j] == (unsigned char)k;
            t->ok &= MPI_Free_mem(live[k]) == MPI_SUCCESS;
            live[k] = NULL;
        } else {
            len[k] = 1 + rand_r(&t->seed) % 20000;
            t->ok &= MPI_Alloc_mem((MPI_Aint)len[k], MPI_INFO_NULL, &live[k]) == MPI_SUCCESS;
            if (live[k])
                memset(live[k], k, len[k]);
        }
    }
    for (int k = 0; k < 32; k++)
        if (live[k])
            t->ok &= MPI_Free_mem(live[k]) == MPI_SUCCESS;
    return NULL;
}

static void threads(int provided)
{
    if (provided < MPI_THREAD_MULTIPLE) {
        tap_skip(1, "no MPI_THREAD_MULTIPLE");
        return;
    }
    pthread_t th[4];
    th_t a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (th_t){.seed = 1234u + 17u * (unsigned)i + 1000u * (unsigned)me, .ok = 1};
        pthread_create(&th[i], NULL, churn, &a[i]);
    }
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ok &= a[i].ok;
    }
    tap_ok(all(ok && nbr_mem_segments() <= 1),
           "4 threads x 2000 MPI_Alloc_mem/MPI_Free_mem at once: every block intact, all taken "
           "back");
}

static void vendor(void)
{
    MPIX_Nbrma_set_impl("vendor");
    void *p = NULL;
    nbr_mem_ref_t ref;
    int ok =
        MPI_Alloc_mem(4096, MPI_INFO_NULL, &p) == MPI_SUCCESS && p && !nbr_mem_find(p, 4096, &ref);
    if (p)
        memset(p, 1, 4096);
    MPIX_Nbrma_set_impl("ref");
    ok &= MPI_Free_mem(p) == MPI_SUCCESS; /* freed where it came from, whatever the choice now */
    tap_ok(all(ok), "NBRMA_IMPL=vendor: the MPI library's memory (not node-shared), which "
                    "MPI_Free_mem gives back to it");
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    nbr_mem_seg_order = 20; /* 1 MiB segments: growth without committing gigabytes */
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tap_plan(13);
    sizes_and_alignment();
    errors();
    windows();
    growth();
    threads(provided);
    vendor();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
