/* test_stats.c — MPIX_Win_get_stats (issue 26; paper 004 §III-IV): every gauge moves where its
 * memory is allocated and returns where it is freed. For each window flavor: creating a window
 * adds one window and exactly its metadata to the process, freeing it takes both back; the
 * per-transport split covers every rank. Epoch objects (PSCW groups included) are counted and
 * given back at free. Operation objects: none with eager issue; with delayed issue (nbrma_issue)
 * one per queued call, the data not in place until the flush, all returned after it, the
 * high-water mark at N; freed ones kept in the process's pool up to NBRMA_OP_POOL (version 2's
 * proc_ops_pooled) and taken from it first. Request objects: an R-variant's is held until MPI_Wait
 * frees it. Bad versions and vendor windows are refused; a version-1 caller's shorter struct is
 * filled and nothing past it written. Run on 2 ranks, and on virtual nodes (NBRMA_RANKS_PER_NODE=1:
 * the am transport's split, operations in flight). ARGS: none, or
 * "--fail-finalize": exit non-zero when MPI_Finalize reports an error (NBRMA_STATS checks). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"
#include "win_stats.h"

#define N 64

static MPI_Win make(int flavor, MPI_Info info, long **base, long *mem)
{
    MPI_Win win = MPI_WIN_NULL;
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE:
        MPI_Win_create(mem, N * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &win);
        *base = mem;
        break;
    case MPI_WIN_FLAVOR_ALLOCATE:
        MPI_Win_allocate(N * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, base, &win);
        break;
    case MPI_WIN_FLAVOR_SHARED:
        MPI_Win_allocate_shared(N * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, base, &win);
        break;
    case MPI_WIN_FLAVOR_DYNAMIC:
        MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, mem, N * sizeof(long));
        *base = mem;
        break;
    }
    return win;
}

static const char *flavor_name(int f)
{
    return f == MPI_WIN_FLAVOR_CREATE     ? "create"
           : f == MPI_WIN_FLAVOR_ALLOCATE ? "allocate"
           : f == MPI_WIN_FLAVOR_SHARED   ? "allocate_shared"
                                          : "dynamic";
}

int main(int argc, char **argv)
{
    int fail_finalize = argc > 1 && !strcmp(argv[1], "--fail-finalize");
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    static long mem[N];
    int rc_v1;
    /* NBRMA_OP_POOL: the operation objects the process keeps for reuse (16384 unless set) */
    const char *pool_env = getenv("NBRMA_OP_POOL");
    const long long pool_cap = pool_env && *pool_env ? atoll(pool_env) : 16384;

    MPIX_Win_stats s = {.version = MPIX_WIN_STATS_VERSION + 1};
    tap_is_long(MPIX_Win_get_stats(MPI_WIN_NULL, &s), MPI_ERR_ARG,
                "a stats struct of an unknown version is refused with MPI_ERR_ARG");
    s.version = 0;
    tap_is_long(MPIX_Win_get_stats(MPI_WIN_NULL, &s), MPI_ERR_ARG, "and so is version 0");
    /* A program built against version 1 holds a struct that ends before proc_ops_pooled: it is
     * filled, and not a byte past its end is written. */
    memset(&s, 0xab, sizeof s);
    s.version = 1;
    const size_t v1 = offsetof(MPIX_Win_stats, proc_ops_pooled);
    int untouched = 1;
    rc_v1 = MPIX_Win_get_stats(MPI_WIN_NULL, &s);
    for (size_t i = v1; i < sizeof s; i++)
        untouched &= ((unsigned char *)&s)[i] == 0xab;
    tap_ok(rc_v1 == MPI_SUCCESS && s.version == 1 && s.ranks == 0 && s.proc_windows.count >= 0 &&
               s.proc_requests.count_hwm >= 0 && untouched,
           "a version-1 caller gets the %zu bytes of its struct, nothing after them", v1);
    MPIX_Nbrma_set_impl("vendor");
    MPI_Win vw;
    long *vb;
    MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &vb, &vw);
    MPI_Win_set_errhandler(vw, MPI_ERRORS_RETURN);
    s.version = MPIX_WIN_STATS_VERSION;
    int rc = MPIX_Win_get_stats(vw, &s), cls = -1;
    MPI_Error_class(rc, &cls);
    tap_is_long(cls, MPI_ERR_WIN, "a window the vendor serves: MPI_ERR_WIN");
    MPI_Win_free(&vw);
    MPIX_Nbrma_set_impl("ref");

    /* ---- window metadata, each flavor ---- */
    static const int flavors[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                  MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC};
    int nodes = nbr_world_nodes();
    for (int f = 0; f < 4; f++) {
        if (flavors[f] == MPI_WIN_FLAVOR_SHARED && nodes > 1) {
            tap_skip(4, "allocate_shared needs one node");
            continue;
        }
        MPIX_Win_stats before = win_stats(MPI_WIN_NULL);
        long *base;
        MPI_Win win = make(flavors[f], MPI_INFO_NULL, &base, mem);
        MPIX_Win_stats in = win_stats(win);
        long long peers = 0, pbytes = 0;
        for (int k = 0; k < MPIX_NBRMA_NTP; k++)
            peers += in.peers[k], pbytes += in.peer_bytes[k];
        tap_ok(in.proc_windows.count == before.proc_windows.count + 1 &&
                   in.proc_windows.bytes == before.proc_windows.bytes + in.meta.bytes &&
                   in.meta.count == 1,
               "%s: one window more, and exactly its %lld bytes of metadata", flavor_name(flavors[f]),
               in.meta.bytes);
        tap_ok(peers == p && in.ranks == p && pbytes > 0 && in.meta.bytes >= pbytes + in.ctl_bytes &&
                   in.ctl_bytes > 0 && in.meta.bytes_hwm >= in.meta.bytes,
               "%s: peers by transport cover the %d ranks (shm %lld, am %lld), their %lld bytes and "
               "the %lld-byte control block are in the metadata",
               flavor_name(flavors[f]), p, in.peers[MPIX_NBRMA_TP_SHM], in.peers[MPIX_NBRMA_TP_AM],
               pbytes, in.ctl_bytes);
        /* a PSCW epoch with a group, and lock epochs: epoch objects come and stay pooled */
        MPI_Group wg, other;
        MPI_Win_get_group(win, &wg);
        int peer = (me + 1) % p, from = (me + p - 1) % p;
        MPI_Group_incl(wg, 1, &peer, &other);
        MPI_Group og;
        MPI_Group_incl(wg, 1, &from, &og);
        MPI_Win_post(og, 0, win);
        MPI_Win_start(other, 0, win);
        long v = me;
        MPI_Aint disp = 0;
        if (flavors[f] == MPI_WIN_FLAVOR_DYNAMIC) {
            MPI_Aint a;
            MPI_Get_address(mem, &a);
            MPI_Aint all[64];
            MPI_Allgather(&a, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
            disp = all[peer];
        }
        MPI_Put(&v, 1, MPI_LONG, peer, disp, 1, MPI_LONG, win);
        MPIX_Win_stats ep = win_stats(win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        MPI_Group_free(&other);
        MPI_Group_free(&og);
        MPI_Group_free(&wg);
        tap_ok(ep.epochs.count >= 2 && ep.epochs.bytes > ep.epochs.count * (long long)sizeof(nbr_epoch_t) &&
                   ep.proc_epochs.count >= ep.epochs.count,
               "%s: start and post epochs counted with their groups (%lld objects, %lld bytes)",
               flavor_name(flavors[f]), ep.epochs.count, ep.epochs.bytes);
        MPI_Win_free(&win);
        MPIX_Win_stats after = win_stats(MPI_WIN_NULL);
        tap_ok(after.proc_windows.count == before.proc_windows.count &&
                   after.proc_windows.bytes == before.proc_windows.bytes &&
                   after.proc_epochs.count == before.proc_epochs.count &&
                   after.proc_epochs.bytes == before.proc_epochs.bytes &&
                   after.proc_windows.count_hwm >= before.proc_windows.count + 1,
               "%s: MPI_Win_free gives back the window, its metadata and its epoch objects "
               "(%lld windows, %lld bytes, %lld epochs left)",
               flavor_name(flavors[f]), after.proc_windows.count, after.proc_windows.bytes,
               after.proc_epochs.count);
    }

    /* ---- operation objects: eager vs delayed issue ---- */
    for (int delayed = 0; delayed < 2; delayed++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "nbrma_issue", delayed ? "delayed" : "eager");
        long *base;
        MPI_Win win = make(MPI_WIN_FLAVOR_ALLOCATE, info, &base, mem);
        MPI_Info_free(&info);
        MPI_Info got;
        MPI_Win_get_info(win, &got);
        char val[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        MPI_Info_get(got, "nbrma_issue", MPI_MAX_INFO_VAL, val, &found);
        MPI_Info_free(&got);
        tap_ok(found && !strcmp(val, delayed ? "delayed" : "eager"),
               "MPI_Win_get_info reports nbrma_issue=%s (got \"%s\")",
               delayed ? "delayed" : "eager", val);
        for (int i = 0; i < N; i++)
            base[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        int peer = (me + 1) % p;
        MPIX_Win_stats s0 = win_stats(win);
        long vals[N];
        MPI_Win_lock_all(0, win); /* ready when it returns (it covers this rank too) */
        for (int i = 0; i < N; i++) {
            vals[i] = 1000 * me + i;
            MPI_Put(&vals[i], 1, MPI_LONG, peer, i, 1, MPI_LONG, win);
        }
        MPIX_Win_stats s1 = win_stats(win);
        /* the target's memory before the flush, where this rank can read it (same node) */
        nbr_win_t *w = nbr_win_find(win);
        long seen = w->t[peer].base ? ((long *)w->t[peer].base)[N - 1] : -2;
        MPI_Win_flush(peer, win);
        MPIX_Win_stats s2 = win_stats(win);
        long seen2 = w->t[peer].base ? ((long *)w->t[peer].base)[N - 1] : -2;
        MPI_Request r;
        long rv = 7;
        MPI_Rput(&rv, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win, &r);
        MPIX_Win_stats s3 = win_stats(win);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPIX_Win_stats s4 = win_stats(win);
        MPI_Win_unlock_all(win);
        if (delayed) {
            tap_ok(s1.ops.count == s0.ops.count + N &&
                       s1.ops.bytes == s0.ops.bytes + N * (long long)sizeof(nbr_rec_t) &&
                       s1.proc_ops.count >= N,
                   "delayed: %d queued puts are %d operation objects (%lld bytes)", N, N,
                   s1.ops.bytes);
            tap_ok(seen == -1 || seen == -2, "delayed: the data is not at the target before the flush");
            tap_ok(s2.ops.count == s0.ops.count && s2.ops.bytes == s0.ops.bytes &&
                       s2.ops.count_hwm >= N && s2.ops.bytes_hwm >= N * (long long)sizeof(nbr_rec_t),
                   "delayed: the flush carries them out and frees them (high-water %lld objects)",
                   s2.ops.count_hwm);
            /* The pool (NBRMA_OP_POOL): recording takes objects from it, freeing gives them
             * back up to its capacity; its gauge is exact. */
            long long p0 = s0.proc_ops_pooled.count, p1 = s1.proc_ops_pooled.count;
            long long want1 = p0 > N ? p0 - N : 0;
            long long want2 = p1 + N < pool_cap ? p1 + N : pool_cap > p1 ? pool_cap : p1;
            tap_ok(p1 == want1 && s2.proc_ops_pooled.count == want2 &&
                       s2.proc_ops_pooled.bytes == want2 * (long long)sizeof(nbr_rec_t) &&
                       s2.proc_ops_pooled.count_hwm >= want2,
                   "delayed: recording takes pooled objects (%lld -> %lld) and freeing keeps up to "
                   "NBRMA_OP_POOL=%lld of them (%lld, want %lld)",
                   p0, p1, pool_cap, s2.proc_ops_pooled.count, want2);
        } else {
            tap_ok(s1.ops.count == 0 && s1.ops.count_hwm == 0,
                   "eager: %d puts in a ready epoch allocate no operation object", N);
            tap_ok(seen == 1000 * me + N - 1 || seen == -2,
                   "eager: the data is in place at once where this rank can see it");
            tap_ok(s2.ops.count == 0, "eager: nothing to free at the flush");
        }
        tap_ok(seen2 == -2 || seen2 == 1000 * me + N - 1,
               "%s: after the flush the last put is at the target (%ld)",
               delayed ? "delayed" : "eager", seen2);
        tap_ok(s3.proc_requests.count >= s2.proc_requests.count + (delayed ? 1 : 0) &&
                   s4.proc_requests.count <= s3.proc_requests.count - (delayed ? 1 : 0) &&
                   s4.proc_requests.count_hwm >= s3.proc_requests.count,
               "%s: an MPI_Rput's request object is counted until MPI_Wait frees it (%lld -> %lld "
               "-> %lld)",
               delayed ? "delayed" : "eager", s2.proc_requests.count, s3.proc_requests.count,
               s4.proc_requests.count);
        MPI_Barrier(MPI_COMM_WORLD);
        int good = 1;
        for (int i = 1; i < N; i++)
            good &= base[i] == 1000 * ((me + p - 1) % p) + i;
        good &= base[0] == 7;
        tap_ok(good, "%s: every put and the Rput reached the target in order", delayed ? "delayed" : "eager");
        MPI_Win_free(&win);
    }

    /* ---- MPI_Win_set_info: delayed -> eager inside an epoch carries out what is queued ---- */
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "nbrma_issue", "delayed");
        long *base;
        MPI_Win win = make(MPI_WIN_FLAVOR_ALLOCATE, info, &base, mem);
        for (int i = 0; i < N; i++)
            base[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        int peer = (me + 1) % p;
        long vals[N];
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < N; i++) {
            vals[i] = 5000 + i;
            MPI_Put(&vals[i], 1, MPI_LONG, peer, i, 1, MPI_LONG, win);
        }
        MPIX_Win_stats q = win_stats(win);
        MPI_Info_set(info, "nbrma_issue", "eager");
        MPI_Win_set_info(win, info);
        MPIX_Win_stats e = win_stats(win);
        nbr_win_t *w = nbr_win_find(win);
        long seen = w->t[peer].base ? ((long *)w->t[peer].base)[N - 1] : -2;
        long one = 1;
        MPI_Put(&one, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win); /* eager now: no object */
        MPIX_Win_stats e2 = win_stats(win);
        MPI_Win_unlock_all(win);
        MPI_Info_free(&info);
        MPI_Info got;
        MPI_Win_get_info(win, &got);
        char val[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        MPI_Info_get(got, "nbrma_issue", MPI_MAX_INFO_VAL, val, &found);
        MPI_Info_free(&got);
        tap_ok(q.ops.count == N && e.ops.count == 0 && e2.ops.count == 0 &&
                   (seen == 5000 + N - 1 || seen == -2) && found && !strcmp(val, "eager"),
               "MPI_Win_set_info(nbrma_issue=eager) inside an epoch carries out the %d queued puts "
               "(%lld -> %lld objects) and later puts are eager; get_info says \"%s\"",
               N, q.ops.count, e.ops.count, val);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&win);
    }

    /* ---- delayed issue under fence, a bad info value ---- */
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "nbrma_issue", "lazy");
        MPI_Win win;
        long *base;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Win_allocate(8, 8, info, MPI_COMM_WORLD, &base, &win);
        MPI_Error_class(rc, &cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        tap_is_long(cls, MPI_ERR_INFO_VALUE, "nbrma_issue=lazy is refused with MPI_ERR_INFO_VALUE");
        MPI_Info_set(info, "nbrma_issue", "delayed");
        win = make(MPI_WIN_FLAVOR_ALLOCATE, info, &base, mem);
        MPI_Info_free(&info);
        for (int i = 0; i < N; i++)
            base[i] = 0;
        MPI_Win_fence(0, win);
        long one = 1;
        for (int i = 0; i < N; i++)
            for (int t = 0; t < p; t++)
                MPI_Accumulate(&one, 1, MPI_LONG, t, i, 1, MPI_LONG, MPI_SUM, win);
        MPIX_Win_stats f1 = win_stats(win);
        MPI_Win_fence(0, win);
        MPIX_Win_stats f2 = win_stats(win);
        tap_ok(f1.ops.count >= (long long)N * p && f2.ops.count == 0,
               "delayed, fence: %d accumulates queued until the closing fence (%lld), none after",
               N * p, f1.ops.count);
        MPI_Win_fence(0, win);
        int good = 1;
        for (int i = 0; i < N; i++)
            good &= base[i] == p;
        tap_ok(good, "delayed, fence: every element counts the %d ranks' accumulates", p);
        MPI_Win_free(&win);
    }

    /* ---- the reduce-scatter fence (NBRMA_FENCE / nbrma_fence; 004 Fig. 2a, 003 §4) ---- */
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "nbrma_fence", "ring");
        MPI_Win win;
        long *base;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Win_allocate(8, 8, info, MPI_COMM_WORLD, &base, &win);
        MPI_Error_class(rc, &cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        tap_is_long(cls, MPI_ERR_INFO_VALUE, "nbrma_fence=ring is refused with MPI_ERR_INFO_VALUE");
        MPI_Win bwin = make(MPI_WIN_FLAVOR_ALLOCATE, MPI_INFO_NULL, &base, mem);
        MPIX_Win_stats sb = win_stats(bwin);
        MPI_Win_free(&bwin);
        MPI_Info_set(info, "nbrma_fence", "reduce_scatter");
        win = make(MPI_WIN_FLAVOR_ALLOCATE, info, &base, mem);
        MPIX_Win_stats sr = win_stats(win);
        tap_is_long((long)(sr.meta.bytes - sb.meta.bytes), (long)(p * (long)sizeof(int)),
                    "reduce_scatter: the window's metadata holds P ints of per-target flags more");
        MPI_Info got;
        char val[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        MPI_Win_get_info(win, &got);
        MPI_Info_get(got, "nbrma_fence", MPI_MAX_INFO_VAL, val, &found);
        MPI_Info_free(&got);
        tap_ok(found && !strcmp(val, "reduce_scatter"),
               "MPI_Win_get_info reports nbrma_fence=reduce_scatter (got \"%s\")", val);
        for (int i = 0; i < N; i++)
            base[i] = 0;
        /* Three fence epochs back to back (no barrier between them): each rank adds to every
         * element at every target, and puts its rank into its successor's slot me. */
        int peer = (me + 1) % p, good = 1, held = 1;
        long one = 1, mine = me;
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        for (int round = 1; round <= 3; round++) {
            for (int i = p; i < N; i++)
                for (int t = 0; t < p; t++)
                    MPI_Accumulate(&one, 1, MPI_LONG, t, i, 1, MPI_LONG, MPI_SUM, win);
            MPI_Put(&mine, 1, MPI_LONG, peer, me, 1, MPI_LONG, win);
            MPIX_Win_stats f1 = win_stats(win);
            held &= f1.ops.count >= (long long)(N - p) * p + 1; /* held to the closing fence */
            MPI_Win_fence(0, win);
            for (int i = p; i < N; i++)
                good &= base[i] == (long)round * p;
            good &= base[(me + p - 1) % p] == (me + p - 1) % p;
        }
        tap_ok(held, "reduce_scatter: a fence epoch's calls are held until its closing fence");
        tap_ok(good, "reduce_scatter: after each of 3 fences every element counts the %d ranks' "
                     "accumulates, and the predecessor's put is there", p);
        /* A fence epoch ended by a lock (no calls in it): the lock's get sees the last epoch's
         * data at the target. */
        long seen = -1;
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        MPI_Get(&seen, 1, MPI_LONG, peer, N - 1, 1, MPI_LONG, win);
        MPI_Win_unlock(peer, win);
        tap_is_long(seen, 3L * p, "reduce_scatter: a lock after the fence reads its epoch's data");
        MPI_Barrier(MPI_COMM_WORLD);
        /* A fence epoch that a lock ends on rank 0 only, while the others close it with a
         * fence after accumulates in it (toward ranks other than 0): rank 0's next fence takes
         * part in the same reduce-scatter (else every rank would wait forever). */
        MPI_Win_fence(0, win);
        if (me == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Win_unlock(0, win);
        } else if (peer != 0) {
            MPI_Accumulate(&one, 1, MPI_LONG, peer, N - 2, 1, MPI_LONG, MPI_SUM, win);
        }
        MPI_Win_fence(0, win);
        tap_is_long(base[N - 2], 3L * p + (me > 1 ? 1 : 0),
                    "reduce_scatter: a fence epoch a lock ended on rank 0 only, closed elsewhere");
        MPI_Barrier(MPI_COMM_WORLD);
        /* The nonblocking fence under it, and a switch to the barrier fence. */
        MPI_Request rq;
        MPIX_Win_ifence(0, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Accumulate(&one, 1, MPI_LONG, peer, N - 1, 1, MPI_LONG, MPI_SUM, win);
        MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        tap_is_long(base[N - 1], 3L * p + 1, "reduce_scatter: MPIX_Win_ifence closes an epoch");
        MPI_Info_set(info, "nbrma_fence", "barrier");
        MPI_Win_set_info(win, info);
        MPI_Win_get_info(win, &got);
        MPI_Info_get(got, "nbrma_fence", MPI_MAX_INFO_VAL, val, &found);
        MPI_Info_free(&got);
        tap_ok(found && !strcmp(val, "barrier"), "MPI_Win_set_info switches to nbrma_fence=barrier");
        MPI_Win_fence(0, win);
        MPI_Accumulate(&one, 1, MPI_LONG, peer, N - 1, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        tap_is_long(base[N - 1], 3L * p + 2, "after the switch, the barrier fence closes an epoch");
        MPI_Win_free(&win);
        MPI_Info_free(&info);
    }
    int st = tap_done();
    rc = MPI_Finalize();
    if (fail_finalize && rc != MPI_SUCCESS)
        return 3;
    return st;
}
