/* test_ucx.c — the bytes go through the transport NBRMA_NET names (issue 22): 2 ranks on two
 * virtual nodes (NBRMA_RANKS_PER_NODE=1). Rank 0 puts 1 MiB into rank 1's window, flushes, gets
 * it back and takes and releases locks; the per-transport counters (nbr_ucx_stats: UCP puts,
 * gets, atomics, flushes and their bytes; nbr_am_sent: active-message requests) must show the
 * data on UCX and not on am with NBRMA_NET=ucx, and the reverse with NBRMA_NET=am. On a default
 * window (NBRMA_ACC=auto) an accumulate goes through am, the target's CPU — except toward a
 * target whose window memory UCX maps here (UCX_TLS=sm: nbr_ucx_stats.pairs_mapped), where it
 * takes 004's lock + get + put (acc_locked); both under the target's accumulate lock, one path
 * per location (MPI-3.1 §11.7.1) — which is checked too — and, on a window whose info says
 * accumulate_ops=same_op, that eligible accumulates were UCP atomics over ucx (counters accs,
 * bytes_acc) and still took effect in order. The data must be right either way. The window's
 * metadata gauge (MPIX_Win_get_stats) must be exactly its parts, the ucx pair table included, and
 * a dynamic window's region_bytes must hold ucx's key caches (none over am). */
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"
#include "transport/tp.h"
#include "win_stats.h"

static int all_ok(int ok)
{
    int r = 0;
    MPI_Allreduce(&ok, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return r;
}

#define BYTES (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE"), *net = getenv("NBRMA_NET");
    if (!rpn || strcmp(rpn, "1") != 0 || n != 2 || !net)
        tap_bail_out("run on 2 ranks with NBRMA_RANKS_PER_NODE=1 and NBRMA_NET set");
    const int ucx = strcmp(net, "ucx") == 0;
    MPIX_Nbrma_set_impl("ref");
    tap_plan(19);
    char *base;
    MPI_Win win;
    unsigned long wa0 = nbr_ucx_stats.win_allocs, ca0 = nbr_ucx_stats.ctl_allocs;
    long long um0 = nbr_ucx_stats.meta_bytes;
    MPI_Win_allocate(BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    /* Alone on its node, a rank's MPI_Win_allocate memory and its control block (lock words,
     * notifications) are UCX's under ucx (UCX's shared-memory transports map them into the
     * origin: no target CPU), private memory and an arena block under am. */
    const nbr_win_t *wobj = nbr_win_find(win);
    int kind = wobj ? wobj->priv_kind : -1, want = ucx ? NBR_PRIV_TP : NBR_PRIV_HEAP;
    int ckd = wobj ? wobj->ctl_kind : -1, cwant = ucx ? NBR_CTL_TP : NBR_CTL_ARENA;
    unsigned long wa = nbr_ucx_stats.win_allocs - wa0, ca = nbr_ucx_stats.ctl_allocs - ca0;
    int kind_ok = kind == want && wa == (ucx ? 1ul : 0ul) && ckd == cwant && ca == wa;
    tap_ok(all_ok(kind_ok),
           "MPI_Win_allocate's memory and control block are %s (kinds %d, %d; UCX allocations "
           "%lu, %lu)",
           ucx ? "UCX's (UCP_MEM_MAP_ALLOCATE)" : "private and the arena's", kind, ckd, wa, ca);
    /* The ucx state of the window (its pair table, O(P)) is part of its metadata: the gauge is
     * exactly its parts — object, descriptors, control block, engine queues made so far, and the
     * transport's state. */
    MPIX_Win_stats st = win_stats(win);
    long long um = nbr_ucx_stats.meta_bytes - um0, parts = 0;
    if (wobj) {
        parts = (long long)sizeof *wobj + (long long)n * (long long)sizeof(nbr_target_t) +
                (long long)wobj->ctl_size + um;
        for (int r = 0; r < n; r++)
            parts += wobj->t[r].q ? (long long)sizeof(nbr_peer_q_t) : 0;
    }
    tap_ok(all_ok((ucx ? um > 0 : um == 0) && st.meta.bytes == parts),
           "the window's metadata (%lld B) is its parts (%lld B), the transport's state (%lld B) "
           "included",
           st.meta.bytes, parts, um);
    memset(base, 0, BYTES);
    char *src = malloc(BYTES), *back = malloc(BYTES);
    for (int i = 0; i < BYTES; i++)
        src[i] = (char)(i * 7 + 3);
    memset(back, 0, BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    nbr_ucx_stats_t u0 = nbr_ucx_stats;
    unsigned long a0 = nbr_am_sent, a1 = 0;
    nbr_ucx_stats_t um1 = u0;
    int ok_data = 1;
    long sum = 0, one = 1;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(src, BYTES, MPI_BYTE, 1, 0, BYTES, MPI_BYTE, win);
        MPI_Win_flush(1, win);
        MPI_Get(back, BYTES, MPI_BYTE, 1, 0, BYTES, MPI_BYTE, win);
        MPI_Win_unlock(1, win);
        ok_data = memcmp(src, back, BYTES) == 0;
        a1 = nbr_am_sent;
        um1 = nbr_ucx_stats; /* before the accumulate, which may take UCX's get + put */
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Accumulate(&one, 1, MPI_LONG, 1, BYTES - 8, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1)
        memcpy(&sum, base + BYTES - 8, sizeof sum);
    MPI_Bcast(&sum, 1, MPI_LONG, 1, MPI_COMM_WORLD);
    nbr_ucx_stats_t u1 = um1;
    unsigned long put = u1.bytes_put - u0.bytes_put, got = u1.bytes_got - u0.bytes_got,
                  amos = u1.amos - u0.amos, am_data = a1 - a0, am_acc = nbr_am_sent - a1,
                  locked = nbr_ucx_stats.acc_locked - u1.acc_locked;
    const int mapped = ucx && nbr_ucx_stats.pairs_mapped > 0; /* NBRMA_ACC=auto: hw there */
    if (me == 0) {
        tap_ok(ok_data, "1 MiB put, flushed, read back whole (NBRMA_NET=%s)", net);
        if (ucx) {
            tap_ok(put == BYTES && got == BYTES, "UCX carried the put and the get: %lu and %lu "
                                                 "bytes",
                   put, got);
            tap_ok(u1.flushes > u0.flushes, "the flush was a UCP endpoint flush (%lu)",
                   u1.flushes - u0.flushes);
            tap_ok(amos >= 2, "the lock and its release were UCP atomics (%lu)", amos);
            tap_ok(am_data == 0, "no active message carried the data or the locks (%lu)",
                   am_data);
        } else {
            tap_ok(put == 0 && got == 0, "UCX carried nothing (%lu, %lu bytes)", put, got);
            tap_ok(u1.flushes == u0.flushes, "no UCP flush");
            tap_ok(amos == 0, "no UCP atomic");
            tap_ok(am_data >= 2, "active messages carried the data and the locks (%lu requests)",
                   am_data);
        }
        long was;
        memcpy(&was, src + BYTES - 8, sizeof was);
        if (mapped)
            tap_ok(locked >= 1 && am_acc == 0 && sum == was + 1,
                   "toward mapped memory the accumulate took 004's lock + get + put (%lu pieces, "
                   "%lu am requests) and landed (%ld, %ld + 1 expected)",
                   locked, am_acc, sum, was);
        else
            tap_ok(am_acc >= 1 && locked == 0 && sum == was + 1,
                   "the accumulate went through am (%lu requests) and landed (%ld, %ld + 1 "
                   "expected)",
                   am_acc, sum, was);
    } else {
        for (int i = 0; i < 6; i++)
            tap_ok(1, "rank 1 serves");
    }
    int dflt_accs = (int)(u1.accs - u0.accs);
    MPI_Bcast(&dflt_accs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    tap_ok(dflt_accs == 0, "without accumulate_ops=same_op no accumulate was a UCP atomic (%d)",
           dflt_accs);

    /* accumulate_ops=same_op (MPI-3.1 §11.2.1): over ucx the eligible accumulates are UCP
     * atomics (ucx.c), over am the target's CPU applies them; issued back to back with no flush
     * in between, they still take effect in program order (accumulate_ordering's default). */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", "same_op");
    long long *sb;
    MPI_Win sw;
    MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &sb, &sw);
    memset(sb, 0, 64);
    MPI_Info ginfo;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int found = 0;
    MPI_Win_get_info(sw, &ginfo);
    MPI_Info_get(ginfo, "accumulate_ops", MPI_MAX_INFO_VAL, val, &found);
    MPI_Info_free(&ginfo);
    tap_ok(found && !strcmp(val, "same_op"), "MPI_Win_get_info reports accumulate_ops=%s",
           found ? val : "(missing)");
    MPI_Barrier(MPI_COMM_WORLD);
    nbr_ucx_stats_t s0 = nbr_ucx_stats;
    unsigned long m0 = nbr_am_sent;
    long long r[4] = {-1, -1, -1, -1}, onell = 1, cmpv = 2, newv = 7;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, sw);
        MPI_Accumulate(&onell, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, MPI_SUM, sw);
        MPI_Fetch_and_op(&onell, &r[0], MPI_LONG_LONG, 1, 0, MPI_SUM, sw);
        MPI_Compare_and_swap(&newv, &cmpv, &r[1], MPI_LONG_LONG, 1, 0, sw);
        MPI_Fetch_and_op(NULL, &r[2], MPI_LONG_LONG, 1, 0, MPI_NO_OP, sw);
        MPI_Win_unlock(1, sw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1)
        r[3] = sb[0];
    MPI_Bcast(r, 3, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Bcast(&r[3], 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD);
    unsigned long v[3] = {nbr_ucx_stats.accs - s0.accs, nbr_ucx_stats.bytes_acc - s0.bytes_acc,
                          nbr_am_sent - m0};
    MPI_Bcast(v, 3, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    tap_ok(r[0] == 1 && r[1] == 2 && r[2] == 7 && r[3] == 7,
           "SUM, fetch_and_op SUM, CAS, fetch_and_op NO_OP in order, unflushed: fetched %lld, "
           "%lld, %lld (1, 2, 7), final %lld (7)",
           r[0], r[1], r[2], r[3]);
    if (ucx)
        tap_ok(v[0] == 4 && v[1] == 32 && v[2] == 0,
               "under same_op the 4 accumulates were UCP atomics (%lu, %lu bytes), no active "
               "message (%lu)",
               v[0], v[1], v[2]);
    else
        tap_ok(v[0] == 0 && v[2] >= 4, "over am the target's CPU applied them (%lu requests)",
               v[2]);
    unsigned long fenced = nbr_ucx_stats.fences - s0.fences;
    MPI_Bcast(&fenced, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    if (ucx)
        tap_ok(fenced >= 1, "with the default accumulate_ordering they were ordered by "
                            "ucp_worker_fence (%lu)",
               fenced);
    else
        tap_ok(fenced == 0, "over am no UCP fence (%lu): am keeps a pair's order", fenced);
    MPI_Win_free(&sw);

    /* accumulate_ordering=none (MPI-3.1 §11.7.2): no fence between them; reported back. */
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &sb, &sw);
    memset(sb, 0, 64);
    MPI_Win_get_info(sw, &ginfo);
    found = 0;
    MPI_Info_get(ginfo, "accumulate_ordering", MPI_MAX_INFO_VAL, val, &found);
    MPI_Info_free(&ginfo);
    tap_ok(found && !strcmp(val, "none"), "MPI_Win_get_info reports accumulate_ordering=%s",
           found ? val : "(missing)");
    MPI_Barrier(MPI_COMM_WORLD);
    s0 = nbr_ucx_stats;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, sw);
        for (int i = 0; i < 8; i++)
            MPI_Accumulate(&onell, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, MPI_SUM, sw);
        MPI_Win_unlock(1, sw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long long total = me == 1 ? sb[0] : 0;
    MPI_Bcast(&total, 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD);
    fenced = nbr_ucx_stats.fences - s0.fences;
    MPI_Bcast(&fenced, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    tap_ok(total == 8 && fenced == 0,
           "accumulate_ordering=none: 8 unflushed SUMs landed (%lld), no fence between them (%lu)",
           total, fenced);
    MPI_Win_free(&sw);
    MPI_Info_set(info, "accumulate_ordering", "raw,rar,raw");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int badord = MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &sb, &sw), ocls = -1;
    if (badord == MPI_SUCCESS)
        MPI_Win_free(&sw);
    else
        MPI_Error_class(badord, &ocls);
    tap_ok(ocls == MPI_ERR_INFO_VALUE, "accumulate_ordering=raw,rar,raw (raw twice) refused with "
                                       "MPI_ERR_INFO_VALUE (class %d)",
           ocls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_set(info, "accumulate_ordering", "rar,raw,war,waw");
    /* Any other value is refused with MPI_ERR_INFO_VALUE (on every rank alike). */
    MPI_Info_set(info, "accumulate_ops", "sum_only");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad = MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &sb, &sw), cls = -1;
    if (bad == MPI_SUCCESS)
        MPI_Win_free(&sw);
    else
        MPI_Error_class(bad, &cls);
    tap_ok(cls == MPI_ERR_INFO_VALUE, "accumulate_ops=sum_only refused with MPI_ERR_INFO_VALUE "
                                      "(class %d)",
           cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);

    /* Past the cap of live UCX allocations (lowered here below the two the open window holds)
     * the next window's memory is private and registered, its control block the arena's, and
     * its data and lock words still go through UCX. */
    int cap = nbr_ucx_alloc_max;
    nbr_ucx_alloc_max = 1;
    char *cb;
    MPI_Win cw;
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &cb, &cw);
    const nbr_win_t *cwo = nbr_win_find(cw);
    int ckind = cwo ? cwo->priv_kind : -1, cctl = cwo ? cwo->ctl_kind : -1;
    unsigned long cput0 = nbr_ucx_stats.bytes_put;
    int cdata = 1;
    if (me == 0) {
        char v[256], r[256];
        for (int i = 0; i < 256; i++)
            v[i] = (char)(i ^ 0x5a);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, cw);
        MPI_Put(v, 256, MPI_BYTE, 1, 1000, 256, MPI_BYTE, cw);
        MPI_Win_flush(1, cw);
        MPI_Get(r, 256, MPI_BYTE, 1, 1000, 256, MPI_BYTE, cw);
        MPI_Win_unlock(1, cw);
        cdata = memcmp(v, r, 256) == 0 && (!ucx || nbr_ucx_stats.bytes_put - cput0 == 256);
    }
    MPI_Win_free(&cw);
    nbr_ucx_alloc_max = cap;
    tap_ok(all_ok(ckind == NBR_PRIV_HEAP && cctl == NBR_CTL_ARENA && cdata),
           "past the cap of UCX allocations: private memory and an arena control block (kinds "
           "%d, %d), data and locks %s",
           ckind, cctl, cdata ? "right" : "wrong or not through UCX");

    /* Dynamic windows: what ucx keeps about regions (my registrations with their packed keys,
     * per pair the owner's regions whose keys were fetched) counts in region_bytes beside the
     * region tables; nothing of it over am. */
    MPI_Win dw;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw);
    long *reg = calloc(512, sizeof(long));
    MPI_Aint at = 0;
    if (me == 1) {
        MPI_Win_attach(dw, reg, 512 * (MPI_Aint)sizeof(long));
        MPI_Get_address(reg, &at);
    }
    MPI_Bcast(&at, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    long dv = 77, dr = 0;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, dw);
        MPI_Put(&dv, 1, MPI_LONG, 1, at + 8, 1, MPI_LONG, dw);
        MPI_Win_flush(1, dw);
        MPI_Get(&dr, 1, MPI_LONG, 1, at + 8, 1, MPI_LONG, dw);
        MPI_Win_unlock(1, dw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    nbr_win_t *dwo = nbr_win_find(dw);
    long long tables = (long long)dwo->rcap * (long long)sizeof(nbr_region_t) +
                       (long long)dwo->zcap * (long long)sizeof(void *);
    for (int r = 0; r < n; r++)
        tables += (long long)dwo->t[r].rcache_cap * (long long)sizeof(nbr_region_t);
    long long extra = win_stats(dw).region_bytes - tables;
    tap_ok(all_ok((me == 1 || dr == 77) && (ucx ? extra > 0 : extra == 0)),
           "dynamic window: the put landed (%ld), and region_bytes holds %lld bytes beside the "
           "region tables (%s)",
           dr, extra, ucx ? "ucx's registrations and fetched keys" : "none over am");
    if (me == 1)
        MPI_Win_detach(dw, reg);
    MPI_Win_free(&dw);
    free(reg);
    MPI_Win_free(&win);
    free(src), free(back);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
