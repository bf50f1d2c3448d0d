/* nb_api.c — every call of the nonblocking synchronization API (nbrma.h, docs/nonblocking.md)
 * on the epoch kind it belongs to, on an MPI_Win_allocate and an MPI_Win_create window: the
 * requests of epoch-opening calls (ifence that only opens, ipost, istart, ilock, ilock_all) are
 * complete on their first MPI_Test; epoch-closing requests (ifence, icomplete, iwait, iunlock,
 * iunlock_all) and flush requests (iflush, iflush_local, iflush_all, iflush_local_all) complete,
 * and once they have, the data of the epoch is where it belongs: at the target for puts and
 * accumulates (checked by the target, after a message when the epoch is still open), in the
 * origin's buffer for gets. Ring pattern: every rank writes to its right neighbour and reads
 * from its left one; also PSCW with the rank itself in both groups and with MPI_MODE_NOCHECK.
 * MPIX_Win_epoch_counts reports nothing pending afterwards. Epoch requests that completed inside
 * their call (libnbrma hands out pooled requests of the MPI library for them) mixed
 * with a pending MPI_Irecv in the wait/test family: MPI_Testall leaves every handle as it was,
 * MPI_Waitany and MPI_Waitsome pick the epoch request, MPI_Request_get_status keeps it and
 * MPI_Request_free releases it, MPI_Waitall completes the rest; epoch statuses say 0 elements,
 * not cancelled; requests held at once are distinct handles. */
#include "nb_util.h"

#define N 24 /* int64 slots per rank; each section below uses its own */

static int64_t *base;
static MPI_Win win;
static const char *flavor;
static int spans; /* the ranks live on more than one node (conf_spans_nodes) */

static void init_window(void)
{
    for (int i = 0; i < N; i++)
        base[i] = 0;
    base[14] = conf_val(5, conf_rank, 14);
    base[15] = conf_val(5, conf_rank, 15);
    nbt_barrier();
}

/* Expected contents of slots [lo, lo+n) written with salt by `rank` */
static void vals(int64_t *a, int n, int salt, int rank, int lo)
{
    for (int i = 0; i < n; i++)
        a[i] = conf_val(salt, rank, lo + i);
}

static void fence_epochs(void)
{
    int64_t out[4], exp[4], got[4];
    MPI_Request r;
    vals(out, 4, 1, conf_rank, 0);

    MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r);
    int born = nbt_born_done(&r);
    if (!born)
        nbt_wait(&r, "opening MPIX_Win_ifence(MPI_MODE_NOPRECEDE)");
    tap_ok(born,
           "%s: MPIX_Win_ifence(MPI_MODE_NOPRECEDE) only opens: its request is complete "
           "at once",
           flavor);

    MPI_Put(out, 4, MPI_INT64_T, conf_right(), 0, 4, MPI_INT64_T, win);
    MPIX_Win_ifence(0, win, &r); /* closes epoch 1, opens epoch 2 */
    nbt_wait(&r, "MPIX_Win_ifence(0) closing fence epoch 1");
    vals(exp, 4, 1, conf_left(), 0);
    tap_ok(conf_check_i64(base, exp, 4, "rank %d's window after fence epoch 1", conf_rank),
           "%s: MPIX_Win_ifence(0) closing an epoch completes; the left neighbour's MPI_Put of "
           "that epoch is in this rank's window",
           flavor);

    MPI_Get(got, 4, MPI_INT64_T, conf_left(), 0, 4, MPI_INT64_T, win);
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r);
    nbt_wait(&r, "MPIX_Win_ifence(MPI_MODE_NOSUCCEED) closing fence epoch 2");
    vals(exp, 4, 1, (conf_left() + conf_size - 1) % conf_size, 0);
    tap_ok(
        conf_check_i64(got, exp, 4, "the MPI_Get result from rank %d (fence epoch 2)", conf_left()),
        "%s: MPIX_Win_ifence(MPI_MODE_NOSUCCEED) completes; the MPI_Get of epoch 2 "
        "returned the left neighbour's slots",
        flavor);

    /* With no fence epoch open, an ifence without MPI_MODE_NOPRECEDE only opens as well. */
    MPIX_Win_ifence(0, win, &r);
    born = nbt_born_done(&r);
    if (!born)
        nbt_wait(&r, "opening MPIX_Win_ifence(0) after MPI_MODE_NOSUCCEED");
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r);
    nbt_wait(&r, "MPIX_Win_ifence(MPI_MODE_NOSUCCEED) closing an empty fence epoch");
    tap_ok(born,
           "%s: MPIX_Win_ifence(0) with no fence epoch open only opens: complete at once; "
           "an empty fence epoch closes",
           flavor);
}

static void pscw_epochs(void)
{
    MPI_Group lg = nbt_group(conf_left(), -1), rg = nbt_group(conf_right(), -1);
    int64_t out[4], exp[5], one = conf_rank + 1;
    MPI_Request rp, rs, rc, rw;
    vals(out, 4, 2, conf_rank, 4);

    MPIX_Win_ipost(lg, 0, win, &rp);
    MPIX_Win_istart(rg, 0, win, &rs);
    int bp = nbt_born_done(&rp), bs = nbt_born_done(&rs);
    if (!bp)
        nbt_diag("the MPIX_Win_ipost request was not complete at once");
    if (!bs)
        nbt_diag("the MPIX_Win_istart request was not complete at once");
    nbt_wait(&rp, "MPIX_Win_ipost request");
    nbt_wait(&rs, "MPIX_Win_istart request");
    tap_ok(bp && bs, "%s: MPIX_Win_ipost and MPIX_Win_istart return complete requests", flavor);

    MPI_Put(out, 4, MPI_INT64_T, conf_right(), 4, 4, MPI_INT64_T, win);
    MPI_Accumulate(&one, 1, MPI_INT64_T, conf_right(), 8, 1, MPI_INT64_T, MPI_SUM, win);
    MPIX_Win_icomplete(win, &rc);
    MPIX_Win_iwait(win, &rw);
    nbt_wait(&rc, "MPIX_Win_icomplete (access epoch toward rank %d)", conf_right());
    nbt_wait(&rw, "MPIX_Win_iwait (exposure epoch to rank %d)", conf_left());
    vals(exp, 4, 2, conf_left(), 4);
    exp[4] = conf_left() + 1;
    tap_ok(conf_check_i64(base + 4, exp, 5, "rank %d's slots 4..8", conf_rank),
           "%s: MPIX_Win_icomplete and MPIX_Win_iwait complete; after iwait the left "
           "neighbour's MPI_Put and MPI_Accumulate are in the window",
           flavor);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

/* A rank in its own access and exposure groups; MPI_MODE_NOCHECK on ipost and istart. */
static void pscw_self_nocheck(void)
{
    MPI_Group me = nbt_group(conf_rank, -1), lg = nbt_group(conf_left(), -1),
              rg = nbt_group(conf_right(), -1);
    int64_t v = conf_val(6, conf_rank, 16), w = conf_val(7, conf_rank, 17);
    MPI_Request q[4];
    MPIX_Win_ipost(me, 0, win, &q[0]);
    MPIX_Win_istart(me, 0, win, &q[1]);
    MPI_Put(&v, 1, MPI_INT64_T, conf_rank, 16, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &q[2]);
    MPIX_Win_iwait(win, &q[3]);
    nbt_waitall(4, q, "PSCW epochs with this rank alone in both groups");
    int64_t got = nbt_load(&base[16]);
    if (got != v)
        nbt_diag("slot 16 holds %lld after a put to itself, expected %lld", (long long)got,
                 (long long)v);
    tap_ok(got == v,
           "%s: ipost/istart with the rank itself in both groups, put to itself, "
           "icomplete/iwait complete",
           flavor);

    /* NOCHECK: every post is opened before any start (ordered by a barrier) */
    MPIX_Win_ipost(lg, MPI_MODE_NOCHECK, win, &q[0]);
    nbt_barrier();
    MPIX_Win_istart(rg, MPI_MODE_NOCHECK, win, &q[1]);
    MPI_Put(&w, 1, MPI_INT64_T, conf_right(), 17, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &q[2]);
    MPIX_Win_iwait(win, &q[3]);
    nbt_waitall(4, q, "PSCW epochs with MPI_MODE_NOCHECK");
    got = nbt_load(&base[17]);
    if (got != conf_val(7, conf_left(), 17))
        nbt_diag("slot 17 holds %lld, expected %ld", (long long)got, conf_val(7, conf_left(), 17));
    tap_ok(got == conf_val(7, conf_left(), 17),
           "%s: MPIX_Win_ipost and MPIX_Win_istart with MPI_MODE_NOCHECK: the put arrived", flavor);
    MPI_Group_free(&me);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

static void lock_epochs(void)
{
    int64_t out[3], exp[3], got[3];
    MPI_Request r;
    vals(out, 3, 3, conf_rank, 9);

    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &r);
    int born = nbt_born_done(&r);
    nbt_wait(&r, "MPIX_Win_ilock(EXCLUSIVE, %d)", conf_right());
    /* Across nodes the grant is a round trip: the request completes in MPI_Wait instead. */
    tap_ok(born || spans, "%s: MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE) returns a complete request%s",
           flavor, spans ? " (or, across nodes, completes)" : "");

    MPI_Put(out, 3, MPI_INT64_T, conf_right(), 9, 3, MPI_INT64_T, win);
    MPIX_Win_iflush(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iflush(%d)", conf_right());
    /* Remote completion: the target sees the data while our lock is still held. */
    nbt_send(conf_right(), 1, 0);
    nbt_recv(conf_left(), 1);
    int64_t seen[3];
    for (int i = 0; i < 3; i++)
        seen[i] = nbt_load(&base[9 + i]);
    vals(exp, 3, 3, conf_left(), 9);
    tap_ok(conf_check_i64(seen, exp, 3, "rank %d's slots 9..11, read after rank %d's iflush",
                          conf_rank, conf_left()),
           "%s: MPIX_Win_iflush completes; the target then sees the MPI_Put (lock still held)",
           flavor);

    MPIX_Win_iflush_local(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iflush_local(%d)", conf_right());
    MPIX_Win_iunlock(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock(%d)", conf_right());
    nbt_barrier();

    /* A shared lock on the left neighbour: get what its left neighbour put there. */
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_left(), 0, win, &r);
    born = nbt_born_done(&r);
    nbt_wait(&r, "MPIX_Win_ilock(SHARED, %d)", conf_left());
    MPI_Get(got, 3, MPI_INT64_T, conf_left(), 9, 3, MPI_INT64_T, win);
    MPIX_Win_iflush_local(conf_left(), win, &r);
    nbt_wait(&r, "MPIX_Win_iflush_local(%d)", conf_left());
    vals(exp, 3, 3, (conf_left() + conf_size - 1) % conf_size, 9);
    int ok = conf_check_i64(got, exp, 3, "the MPI_Get result from rank %d", conf_left());
    MPIX_Win_iunlock(conf_left(), win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock(%d)", conf_left());
    tap_ok((born || spans) && ok,
           "%s: MPIX_Win_ilock(MPI_LOCK_SHARED) is complete at once (across nodes: completes); after "
           "MPIX_Win_iflush_local the MPI_Get result is in the buffer; MPIX_Win_iunlock "
           "completes",
           flavor);
}

static void lock_all_epochs(void)
{
    int64_t out = conf_val(4, conf_rank, 12), one = conf_rank + 1, got = -1;
    MPI_Request r;
    MPIX_Win_ilock_all(0, win, &r);
    int born = nbt_born_done(&r);
    nbt_wait(&r, "MPIX_Win_ilock_all");
    /* Across nodes the grant is a round trip to rank 0's global lock word (unless rank 0 is on
     * this node): the request completes in MPI_Wait instead. */
    if (!born && spans)
        nbt_diag("rank 0 is on another node: MPIX_Win_ilock_all completed in MPI_Wait");
    tap_ok(born || spans, "%s: MPIX_Win_ilock_all returns a complete request%s", flavor,
           spans ? " (or, across nodes, completes)" : "");

    MPI_Put(&out, 1, MPI_INT64_T, conf_right(), 12, 1, MPI_INT64_T, win);
    MPI_Accumulate(&one, 1, MPI_INT64_T, conf_left(), 13, 1, MPI_INT64_T, MPI_SUM, win);
    MPIX_Win_iflush_all(win, &r);
    nbt_wait(&r, "MPIX_Win_iflush_all");
    nbt_send(conf_right(), 2, 0);
    nbt_send(conf_left(), 3, 0);
    nbt_recv(conf_left(), 2);
    nbt_recv(conf_right(), 3);
    int64_t seen[2] = {nbt_load(&base[12]), nbt_load(&base[13])};
    int64_t exp[2] = {conf_val(4, conf_left(), 12), conf_right() + 1};
    tap_ok(conf_check_i64(seen, exp, 2,
                          "rank %d's slots 12..13, read after the neighbours' "
                          "iflush_all",
                          conf_rank),
           "%s: MPIX_Win_iflush_all completes; the targets then see the MPI_Put and "
           "MPI_Accumulate",
           flavor);

    MPI_Get(&got, 1, MPI_INT64_T, conf_right(), 14, 1, MPI_INT64_T, win);
    MPIX_Win_iflush_local_all(win, &r);
    nbt_wait(&r, "MPIX_Win_iflush_local_all");
    int ok = got == conf_val(5, conf_right(), 14);
    if (!ok)
        nbt_diag("MPI_Get of slot 14 of rank %d returned %lld, expected %ld", conf_right(),
                 (long long)got, conf_val(5, conf_right(), 14));
    MPIX_Win_iunlock_all(win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock_all");
    tap_ok(ok,
           "%s: after MPIX_Win_iflush_local_all the MPI_Get result is in the buffer; "
           "MPIX_Win_iunlock_all completes",
           flavor);
}

static int epoch_status_ok(const MPI_Status *st)
{
    int count = -1, cancelled = 1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    return count == 0 && !cancelled;
}

/* Epoch requests complete at birth (a lock on the rank itself is granted inside the call) among
 * the application's requests. No message reaches a rank before the barrier, so the receive
 * stays pending until then. */
static void mixed_requests(void)
{
    int in = -1, flag = 1, idx = -1, outc = 0, ids[2];
    MPI_Request q[2];
    MPI_Status st[2];
    MPI_Irecv(&in, 1, MPI_INT, conf_left(), 77, nbt_comm, &q[0]);
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_rank, 0, win, &q[1]);
    MPI_Request keep0 = q[0], keep1 = q[1];
    MPI_Testall(2, q, &flag, st);
    tap_ok(!flag && q[0] == keep0 && q[1] == keep1,
           "%s: MPI_Testall of a pending MPI_Irecv and a complete MPIX_Win_ilock request: flag "
           "false, no handle changed",
           flavor);
    MPI_Waitany(2, q, &idx, &st[0]);
    int ok = idx == 1 && q[1] == MPI_REQUEST_NULL && q[0] == keep0 && epoch_status_ok(&st[0]);
    MPIX_Win_iunlock(conf_rank, win, &q[1]);
    keep1 = q[1];
    flag = 0;
    MPI_Request_get_status(q[1], &flag, &st[1]);
    ok = ok && flag && q[1] == keep1 && epoch_status_ok(&st[1]);
    MPI_Request_free(&q[1]);
    tap_ok(ok && q[1] == MPI_REQUEST_NULL,
           "%s: MPI_Waitany picks the complete ilock request (index 1, status 0 elements); "
           "MPI_Request_get_status on the iunlock request: complete, handle kept; "
           "MPI_Request_free releases it",
           flavor);
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_rank, 0, win, &q[1]);
    MPI_Waitsome(2, q, &outc, ids, st);
    tap_ok(outc == 1 && ids[0] == 1 && q[1] == MPI_REQUEST_NULL && epoch_status_ok(&st[0]),
           "%s: MPI_Waitsome with a pending MPI_Irecv returns the complete ilock request alone "
           "(outcount %d)",
           flavor, outc);
    MPIX_Win_iunlock(conf_rank, win, &q[1]);
    /* Requests the application holds at once are distinct handles (tools follow requests by
     * handle), complete at birth or not. */
    MPI_Request d[4];
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_rank, 0, win, &d[0]);
    MPIX_Win_iunlock(conf_rank, win, &d[1]);
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_rank, 0, win, &d[2]);
    MPIX_Win_iunlock(conf_rank, win, &d[3]);
    int distinct = 1;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            distinct &= d[i] != d[j] && d[i] != MPI_REQUEST_NULL;
    distinct &= d[1] != q[1];
    MPI_Status ds[4];
    MPI_Waitall(4, d, ds);
    tap_ok(distinct && d[0] == MPI_REQUEST_NULL && d[3] == MPI_REQUEST_NULL,
           "%s: two ilock/iunlock epochs and an iunlock still held: five distinct request "
           "handles, all completed by MPI_Waitall",
           flavor);
    nbt_barrier();
    nbt_send(conf_right(), 77, conf_rank);
    MPI_Waitall(2, q, st);
    tap_ok(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL && in == conf_left() &&
               st[0].MPI_SOURCE == conf_left() && epoch_status_ok(&st[1]),
           "%s: MPI_Waitall of the MPI_Irecv and a complete iunlock request: both released, the "
           "receive's status is its own, the epoch's says 0 elements",
           flavor);
}

static void counts_idle(void)
{
    int d, p;
    nbt_counts(win, &d, &p);
    if (d != 0 || p != 0)
        nbt_diag("MPIX_Win_epoch_counts says deferred %d, pending %d", d, p);
    tap_ok(d == 0 && p == 0,
           "%s: MPIX_Win_epoch_counts reports 0 deferred and 0 pending epochs once every "
           "request completed",
           flavor);
}

static void run(int create)
{
    void *mem = NULL;
    flavor = create ? "MPI_Win_create" : conf_window_name();
    if (create) {
        mem = malloc(N * sizeof(int64_t));
        MPI_Win_create(mem, N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &win);
        base = mem;
    } else {
        conf_win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                         &win);
    }
    init_window();
    fence_epochs();
    pscw_epochs();
    pscw_self_nocheck();
    lock_epochs();
    lock_all_epochs();
    mixed_requests();
    counts_idle();
    conf_win_free(&win);
    free(mem);
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 2);
    spans = conf_spans_nodes(MPI_COMM_WORLD);
    tap_plan(2 * 20);
    run(0);
    run(1);
    return nbt_done();
}
