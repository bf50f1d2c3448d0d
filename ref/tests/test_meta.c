/* test_meta.c — window metadata, table vs lazy (NBRMA_META / nbrma_meta; paper 004 §III-B, F3;
 * win.c, nbr.h's nbr_tgt).
 *
 * 1. The info key: MPI_Win_get_info reports the layout in force — lazy for MPI_Win_allocate on
 *    one node (symmetric: sizes and disp_units that differ too, the stride the largest size)
 *    and for MPI_Win_create on one node (a directory that rank 0 holds); table by default and
 *    for allocate whose sizes differ so much that the largest stride would reserve over twice
 *    the bytes asked for; a bad value is refused with MPI_ERR_INFO_VALUE at creation and in
 *    MPI_Win_set_info, which cannot switch the layout; a bad NBRMA_META with MPI_ERR_ARG.
 * Then for each lazy kind — MPI_Win_allocate (symmetric), the same with a size per rank
 * (4 + P + rank longs), MPI_Win_create over malloc memory (CMA) and over MPI_Alloc_mem memory
 * (mapped when first used):
 * 2. Descriptors are made on first use: a fresh lazy window has made rank 0's and its own only
 *    (its made flags and count), and MPIX_Win_get_stats counts the pages they backed; a table
 *    window holds P descriptors.
 * 3. O(1): a lazy window's metadata outside the control block is the same on a communicator of
 *    2 ranks and of P (the table's grows by a descriptor per rank); a create window's directory
 *    is rank 0's, counted there: P entries.
 * 4. Epochs of every kind between neighbours (fence, PSCW, lock, lock_all) move the right data
 *    and make exactly the neighbours' descriptors: the fence's scan of every peer makes none.
 * 5. Every rank puts to every rank: P descriptors, every value in place. With sizes per rank:
 *    every descriptor has its rank's size, a put to each rank's last element lands and one just
 *    past it is refused with MPI_ERR_RMA_RANGE.
 * 6. Freeing the windows returns every byte they counted (the process's gauge).
 * (tap_ok is collective: a point fails when it fails on any rank.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"
#include "win_stats.h"

enum { K_ALLOCATE, K_UNEQUAL, K_CREATE, K_ALLOCMEM, K_N };
static const char *kname[K_N] = {"MPI_Win_allocate", "MPI_Win_allocate (a size per rank)",
                                 "MPI_Win_create (malloc)", "MPI_Win_create (MPI_Alloc_mem)"};

/* A window of n longs (K_UNEQUAL: n + its rank in comm), zeroed, of the kind's flavor; *base is
 * what unmake frees. */
static MPI_Win make_kind(int kind, const char *meta, MPI_Aint n, MPI_Comm comm, long **base)
{
    if (kind == K_UNEQUAL) {
        int r;
        MPI_Comm_rank(comm, &r);
        n += r;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    if (meta)
        MPI_Info_set(info, "nbrma_meta", meta);
    MPI_Win win = MPI_WIN_NULL;
    MPI_Aint bytes = n * (MPI_Aint)sizeof(long);
    int rc = MPI_ERR_OTHER;
    if (kind == K_ALLOCATE || kind == K_UNEQUAL)
        rc = MPI_Win_allocate(bytes, sizeof(long), info, comm, base, &win);
    else if ((kind == K_CREATE && (*base = malloc((size_t)bytes))) ||
             (kind == K_ALLOCMEM && MPI_Alloc_mem(bytes, MPI_INFO_NULL, base) == MPI_SUCCESS))
        rc = MPI_Win_create(*base, bytes, sizeof(long), info, comm, &win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        tap_bail_out("%s with nbrma_meta=%s failed", kname[kind], meta ? meta : "(none)");
    memset(*base, 0, (size_t)n * sizeof(long));
    MPI_Barrier(comm);
    return win;
}

static MPI_Win make(const char *meta, MPI_Aint n, MPI_Comm comm, long **base)
{
    return make_kind(K_ALLOCATE, meta, n, comm, base);
}

static void unmake(int kind, MPI_Win *win, long *base)
{
    MPI_Win_free(win);
    if (kind == K_CREATE)
        free(base);
    else if (kind == K_ALLOCMEM)
        MPI_Free_mem(base);
}

/* Descriptors a lazy window made (the library's own count, and a walk of the reservation). */
static long long made(MPI_Win win, int p)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w || !w->lazy)
        tap_bail_out("the window is not a lazy libnbrma window");
    long long n = 0;
    for (int r = 0; r < p; r++)
        n += w->t[r].made;
    return n == w->lazy->made ? n : -1;
}

/* Points 2-5 for one kind of lazy window (beside a table window of the same kind). */
static void kind_points(int kind, int me, int p)
{
    const char *k = kname[kind];
    long *lb, *tb;
    MPI_Win wl = make_kind(kind, "lazy", 4 + p, MPI_COMM_WORLD, &lb),
            wt = make_kind(kind, NULL, 4 + p, MPI_COMM_WORLD, &tb);
    if (!win_info_is(wl, "nbrma_meta", "lazy"))
        tap_bail_out("%s with nbrma_meta=lazy is not lazy", k);

    /* 2. made on first use; their memory is the pages they backed */
    MPIX_Win_stats st = win_stats(wt), sl0 = win_stats(wl);
    long long m0 = made(wl, p), ps = sysconf(_SC_PAGESIZE);
    long long pages = nbr_win_find(wl)->lazy->pages;
    tap_ok(m0 == (me == 0 ? 1 : 2) && pages >= 1 && pages <= 2 &&
               sl0.peer_bytes[MPIX_NBRMA_TP_SHM] == pages * ps &&
               st.peer_bytes[MPIX_NBRMA_TP_SHM] == p * (long long)sizeof(nbr_target_t),
           "%s: a fresh lazy window made %lld descriptors (rank 0's and its own) on %lld "
           "page(s), counted as %lld bytes; the table holds %d of %zu bytes",
           k, m0, pages, sl0.peer_bytes[MPIX_NBRMA_TP_SHM], p, sizeof(nbr_target_t));

    /* 3. O(1): beside a lazy window of 2 ranks (ranks 2k, 2k+1; compared where neither window
     *    put rank 0 and itself in one descriptor); a create window's directory is rank 0's */
    /* One half at a time: Open MPI 4.1.4 names a window's shared segment after host, job and
     * context id, which the two halves share, so their windows created (or freed) at the same
     * time collide and the creation fails (win_disjoint, a known vendor failure, reports it). */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &half);
    int hn;
    MPI_Comm_size(half, &hn);
    long *hb = NULL;
    MPI_Win wh = MPI_WIN_NULL;
    for (int turn = 0; turn < (p + 1) / 2; turn++) {
        if (me / 2 == turn)
            wh = make_kind(kind, "lazy", 4 + p, half, &hb);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPIX_Win_stats sl = win_stats(wl), sh = win_stats(wh);
    long long big = sl.meta.bytes - sl.ctl_bytes, small = sh.meta.bytes - sh.ctl_bytes;
    const int sym = kind == K_ALLOCATE || kind == K_UNEQUAL;
    long long dir = sym || me != 0 ? 0 : (p - hn) * (long long)sizeof(nbr_cdirent_t);
    int cmp = hn == 2 && (me % 2 == 1 || (me == 0 && !sym));
    tap_ok(!cmp || big - small == dir,
           "%s: lazy metadata outside the control block: %lld bytes at P = %d, %lld at P = %d "
           "(rank 0's create directory: %lld more; the table's: %lld at P = %d)",
           k, big, p, small, hn, dir, st.meta.bytes - st.ctl_bytes, p);
    for (int turn = 0; turn < (p + 1) / 2; turn++) {
        if (me / 2 == turn)
            unmake(kind, &wh, hb);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&half);

    /* 4. every kind of epoch toward the right neighbour, the same on both windows */
    int right = (me + 1) % p, left = (me + p - 1) % p;
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    int data_ok = 1;
    MPI_Win ws[2] = {wl, wt};
    long *bs[2] = {lb, tb};
    for (int j = 0; j < 2; j++) {
        long v = 1000 + me;
        MPI_Win_fence(0, ws[j]);
        MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, ws[j]);
        MPI_Win_fence(0, ws[j]);
        data_ok &= bs[j][0] == 1000 + left;
        v = 2000 + me;
        MPI_Win_post(gl, 0, ws[j]);
        MPI_Win_start(gr, 0, ws[j]);
        MPI_Put(&v, 1, MPI_LONG, right, 1, 1, MPI_LONG, ws[j]);
        MPI_Win_complete(ws[j]);
        MPI_Win_wait(ws[j]);
        data_ok &= bs[j][1] == 2000 + left;
        v = 3000 + me;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, ws[j]);
        MPI_Put(&v, 1, MPI_LONG, right, 2, 1, MPI_LONG, ws[j]);
        MPI_Win_unlock(right, ws[j]);
        v = 4000 + me;
        MPI_Win_lock_all(0, ws[j]);
        MPI_Put(&v, 1, MPI_LONG, right, 3, 1, MPI_LONG, ws[j]);
        MPI_Win_flush_all(ws[j]);
        MPI_Win_unlock_all(ws[j]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, ws[j]);
        data_ok &= bs[j][2] == 3000 + left && bs[j][3] == 4000 + left;
        MPI_Win_unlock(me, ws[j]);
    }
    long long m1 = made(wl, p), want = 1 + (me != 0) + (right != 0 && right != me) +
                                       (left != 0 && left != me && left != right);
    tap_ok(data_ok && m1 == want,
           "%s: fence, PSCW, lock and lock_all epochs between neighbours: data in place, %lld "
           "descriptors (want %lld: rank 0, itself, its neighbours)",
           k, m1, want);
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);

    /* 5. every rank to every rank, and a get back of what it put */
    MPI_Win_fence(0, wl);
    long *vals = calloc((size_t)p, sizeof(long)), *back = calloc((size_t)p, sizeof(long));
    for (int r = 0; r < p; r++) {
        vals[r] = 100 * me + r;
        MPI_Put(&vals[r], 1, MPI_LONG, r, 4 + me, 1, MPI_LONG, wl);
    }
    MPI_Win_fence(0, wl);
    for (int r = 0; r < p; r++)
        MPI_Get(&back[r], 1, MPI_LONG, r, 4 + me, 1, MPI_LONG, wl);
    MPI_Win_fence(0, wl);
    int all_ok = 1;
    for (int r = 0; r < p; r++)
        all_ok &= lb[4 + r] == 100 * r + me && back[r] == 100 * me + r;
    free(vals);
    free(back);
    long long m2 = made(wl, p);
    /* how each peer's memory is reached: mapped (symmetric segment, MPI_Alloc_mem), else CMA */
    int reach_ok = 1;
    const nbr_win_t *w = nbr_win_find(wl);
    for (int r = 0; r < p; r++)
        reach_ok &= (w->t[r].base != NULL) == (kind != K_CREATE || r == me);
    tap_ok(all_ok && m2 == p && reach_ok,
           "%s: every rank puts to and gets from every rank: every value in place, all %d "
           "descriptors made (%lld), peers' memory %s",
           k, p, m2, kind == K_CREATE ? "reached with CMA" : "mapped");
    tap_ok(win_stats(wl).peers[MPIX_NBRMA_TP_SHM] == p,
           "%s: the lazy window still counts its %d pairs on this node", k, p);
    if (kind == K_UNEQUAL) { /* each rank's own size, from the directory */
        int sizes_ok = 1, last_ok = 1, past_ok = 1;
        for (int r = 0; r < p; r++)
            sizes_ok &= w->t[r].size == (4 + p + r) * (MPI_Aint)sizeof(long) &&
                        w->t[r].disp_unit == (int)sizeof(long);
        MPI_Win_set_errhandler(wl, MPI_ERRORS_RETURN);
        MPI_Win_fence(0, wl);
        long v = -1 - me;
        int right = (me + 1) % p;
        MPI_Put(&v, 1, MPI_LONG, right, 4 + p + right - 1, 1, MPI_LONG, wl);
        int rc = MPI_Put(&v, 1, MPI_LONG, right, 4 + p + right, 1, MPI_LONG, wl), cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        past_ok = cls == MPI_ERR_RMA_RANGE;
        MPI_Win_fence(0, wl);
        last_ok = lb[4 + p + me - 1] == -1 - (me + p - 1) % p;
        tap_ok(sizes_ok && last_ok && past_ok,
               "%s: every descriptor has its rank's size; a put to the neighbour's last element "
               "lands (%s), one just past it is refused with MPI_ERR_RMA_RANGE (class %d)",
               k, last_ok ? "yes" : "no", cls);
    }
    unmake(kind, &wl, lb);
    unmake(kind, &wt, tb);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    tap_plan(3 + 5 * K_N + 1 + 1);
    long *wb;
    MPI_Win witness = make("table", 1, MPI_COMM_WORLD, &wb);
    long long before = win_stats(witness).proc_windows.bytes;

    /* 1. the info key */
    long *lb, *tb, *cb = calloc((size_t)p, sizeof(long)), *ub;
    MPI_Win wl = make("lazy", 4 + p, MPI_COMM_WORLD, &lb),
            wt = make(NULL, 4 + p, MPI_COMM_WORLD, &tb);
    MPI_Info li;
    MPI_Info_create(&li);
    MPI_Info_set(li, "nbrma_meta", "lazy");
    MPI_Win wc, wu, wct;
    MPI_Win_create(cb, p * (MPI_Aint)sizeof(long), sizeof(long), li, MPI_COMM_WORLD, &wc);
    MPI_Win_create(cb, p * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &wct);
    MPI_Win_allocate((me + 1) * (MPI_Aint)sizeof(long), me % 2 ? 1 : (int)sizeof(long), li,
                     MPI_COMM_WORLD, &ub, &wu);
    /* rank 0 asks 1 MiB, the others 8 bytes: a stride of 1 MiB each would reserve P MiB */
    long *vb;
    MPI_Win wv;
    MPI_Win_allocate(me == 0 ? 1 << 20 : 8, 8, li, MPI_COMM_WORLD, &vb, &wv);
    tap_ok(win_info_is(wl, "nbrma_meta", "lazy") && win_info_is(wt, "nbrma_meta", "table") &&
               win_info_is(wc, "nbrma_meta", "lazy") && win_info_is(wct, "nbrma_meta", "table") &&
               win_info_is(wu, "nbrma_meta", "lazy") &&
               win_info_is(wv, "nbrma_meta", p >= 3 ? "table" : "lazy"),
           "nbrma_meta: lazy in force for MPI_Win_allocate (sizes and disp_units per rank too) "
           "and for MPI_Win_create on one node; table by default and for allocate whose largest "
           "size is over twice the average");
    MPI_Win_free(&wv);
    MPI_Win_free(&wu);
    MPI_Win_free(&wct);
    MPI_Win_free(&wc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info_set(li, "nbrma_meta", "tree");
    long *xb;
    MPI_Win wx = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(8, 8, li, MPI_COMM_WORLD, &xb, &wx), cls = -1, cls2 = -1, cls3 = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (wx != MPI_WIN_NULL)
        MPI_Win_free(&wx);
    MPI_Win_set_errhandler(wl, MPI_ERRORS_RETURN);
    if ((rc = MPI_Win_set_info(wl, li)) != MPI_SUCCESS)
        MPI_Error_class(rc, &cls2);
    MPI_Info_set(li, "nbrma_meta", "table");
    int rc3 = MPI_Win_set_info(wl, li);
    tap_ok(cls == MPI_ERR_INFO_VALUE && cls2 == MPI_ERR_INFO_VALUE && rc3 == MPI_SUCCESS &&
               win_info_is(wl, "nbrma_meta", "lazy"),
           "nbrma_meta=tree refused with MPI_ERR_INFO_VALUE at creation (%d) and in "
           "MPI_Win_set_info (%d); set_info(table) keeps the lazy layout",
           cls, cls2);
    const char *saved = nbr_cfg.META;
    nbr_cfg.META = "bogus";
    wx = MPI_WIN_NULL;
    if ((rc = MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &xb, &wx)) != MPI_SUCCESS)
        MPI_Error_class(rc, &cls3);
    if (wx != MPI_WIN_NULL)
        MPI_Win_free(&wx);
    nbr_cfg.META = saved;
    tap_ok(cls3 == MPI_ERR_ARG, "NBRMA_META=bogus refused with MPI_ERR_ARG (%d)", cls3);
    MPI_Info_free(&li);

    MPI_Win_free(&wl);
    MPI_Win_free(&wt);

    for (int kind = 0; kind < K_N; kind++) /* 2-5 */
        kind_points(kind, me, p);

    /* 6. every byte back */
    long long after = win_stats(witness).proc_windows.bytes;
    tap_ok(after == before, "freeing the windows returns every byte they counted (%lld, %lld)",
           before, after);
    MPI_Win_free(&witness);
    free(cb);
    int rc_all = tap_done();
    MPI_Finalize();
    return rc_all;
}
