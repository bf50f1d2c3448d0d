/* win_shared.c — MPI_Win_allocate_shared + MPI_Win_shared_query: every rank's segment (size,
 * disp_unit, base) is visible, segments are contiguous in rank order unless
 * alloc_shared_noncontig is given, direct loads and stores of a neighbour's segment are seen after
 * MPI_Win_sync + barrier + MPI_Win_sync, MPI_Put/MPI_Get work on the same window, and querying
 * MPI_PROC_NULL returns the lowest rank with a non-empty segment. */
#include "conf.h"

static MPI_Comm shm;
static int me, n;

/* Rank r of the shared communicator owns (r+1)*16 ints. */
static int seg_len(int r)
{
    return (r + 1) * 16;
}

static void query_and_contiguity(MPI_Win win, int *base)
{
    int ok = 1, contig = 1;
    char *prev_end = NULL;
    for (int r = 0; r < n; r++) {
        MPI_Aint sz;
        int du;
        void *p;
        MPI_Win_shared_query(win, r, &sz, &du, &p);
        if (sz != (MPI_Aint)(seg_len(r) * sizeof(int)) || du != (int)sizeof(int) || !p ||
            (r == me && p != base)) {
            tap_diag("shared_query(rank %d): size %ld disp_unit %d base %p (own base %p), expected "
                     "size %zu disp_unit %zu",
                     r, (long)sz, du, p, (void *)base, seg_len(r) * sizeof(int), sizeof(int));
            ok = 0;
        }
        if (r > 0 && (char *)p != prev_end) {
            tap_diag("segment of rank %d starts at %p, rank %d's ends at %p", r, p, r - 1,
                     (void *)prev_end);
            contig = 0;
        }
        prev_end = (char *)p + sz;
    }
    tap_ok(ok, "Win_shared_query reports every rank's size, disp_unit and base (own = allocated)");
    tap_ok(contig, "segments are contiguous in rank order (no alloc_shared_noncontig)");
}

/* Direct stores into our own and the right neighbour's segment, loads of both. */
static void load_store(MPI_Win win, int *base, const char *what)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    MPI_Aint sz;
    int du;
    int *rbase;
    MPI_Win_shared_query(win, right, &sz, &du, &rbase);

    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    conf_fill_int(base, seg_len(me), 1, me);
    MPI_Win_sync(win);
    nbh_barrier(shm);
    MPI_Win_sync(win);
    int *exp = malloc(seg_len(n) * sizeof *exp);
    conf_fill_int(exp, seg_len(right), 1, right);
    tap_ok(conf_check_int(rbase, exp, seg_len(right), "rank %d's segment, loaded by rank %d", right,
                          me),
           "%s: loads of the right neighbour's segment see its stores after sync+barrier+sync",
           what);
    nbh_barrier(shm); /* everyone has read before anyone overwrites */

    for (int i = 0; i < 8; i++)
        rbase[i] = (int)conf_val(2, me, i);
    MPI_Win_sync(win);
    nbh_barrier(shm);
    MPI_Win_sync(win);
    for (int i = 0; i < seg_len(me); i++)
        exp[i] = i < 8 ? (int)conf_val(2, left, i) : (int)conf_val(1, me, i);
    tap_ok(conf_check_int(base, exp, seg_len(me), "rank %d's segment", me),
           "%s: stores by the left neighbour into our segment are seen after sync+barrier+sync",
           what);
    MPI_Win_unlock_all(win);
    free(exp);
}

static void put_get(MPI_Win win, int *base)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    int out[4], back[4];
    conf_fill_int(out, 4, 3, me);
    MPI_Win_fence(0, win);
    MPI_Put(out, 4, MPI_INT, right, 10, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(back, 4, MPI_INT, right, 10, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    int exp[4];
    conf_fill_int(exp, 4, 3, left);
    int ok = conf_check_int(base + 10, exp, 4, "rank %d's segment from element 10", me);
    ok &= conf_check_int(back, out, 4, "what was read back from rank %d", right);
    tap_ok(ok, "Win_allocate_shared: MPI_Put and MPI_Get at disp 10 (disp_unit 4) round-trip");
}

static void proc_null_query(void)
{
    int *base;
    MPI_Win win;
    MPI_Aint bytes = me == 0 ? 0 : seg_len(me) * sizeof(int);
    MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, shm, &base, &win);
    MPI_Aint sz, sz1;
    int du, du1;
    void *p, *p1;
    MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p);
    MPI_Win_shared_query(win, 1, &sz1, &du1, &p1);
    int ok = sz == sz1 && du == du1 && p == p1;
    if (!ok)
        tap_diag("MPI_PROC_NULL query: size %ld disp_unit %d base %p; rank 1: %ld %d %p", (long)sz,
                 du, p, (long)sz1, du1, p1);
    tap_ok(ok, "Win_shared_query(MPI_PROC_NULL) with rank 0 empty returns rank 1's segment");
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    shm = conf_shm_comm();
    MPI_Comm_rank(shm, &me);
    MPI_Comm_size(shm, &n);
    tap_plan(8);
    int few = n < 2;
    nbh_allreduce(&few, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (few) {
        tap_skip(8, "fewer than 2 ranks share a node");
        return conf_done();
    }

    int *base;
    MPI_Win win;
    MPI_Win_allocate_shared(seg_len(me) * sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &base,
                            &win);
    int *model, flag;
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    if (me == 0)
        tap_diag("shared window memory model: %s", !flag ? "(no attribute)"
                                                   : *model == MPI_WIN_UNIFIED
                                                       ? "MPI_WIN_UNIFIED"
                                                       : "MPI_WIN_SEPARATE");
    query_and_contiguity(win, base);
    load_store(win, base, "Win_allocate_shared");
    put_get(win, base);
    MPI_Win_free(&win);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Win_allocate_shared(seg_len(me) * sizeof(int), sizeof(int), info, shm, &base, &win);
    MPI_Info_free(&info);
    load_store(win, base, "Win_allocate_shared with alloc_shared_noncontig");
    MPI_Win_free(&win);

    proc_null_query();
    MPI_Comm_free(&shm);
    return conf_done();
}
