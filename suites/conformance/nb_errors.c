/* nb_errors.c — errors of the nonblocking synchronization API (docs/nonblocking.md), with
 * MPI_ERRORS_RETURN on the window and classes checked with MPI_Error_class:
 *   MPI_ERR_RMA_SYNC  closing an epoch that is not open (icomplete without start, iwait without
 *                     post, iunlock of a rank not locked, iunlock_all without lock_all, a
 *                     second icomplete after a nonblocking one); ilock of a rank already locked;
 *                     an RMA call after a nonblocking close (the epoch is closed even if it has
 *                     not completed); iflush* without a passive-target epoch toward the target;
 *                     MPI_Win_free while a nonblocking epoch has not completed (exposure,
 *                     access and lock epochs), which must not hang and must leave the window
 *                     usable: the epoch then completes with its data and the free succeeds
 *   MPI_ERR_RMA_RANGE an MPI_Put beyond the target's window in a deferred epoch, reported by the
 *                     call itself (calls are checked before they are recorded)
 *   MPI_ERR_WIN       every MPIX_ call on a window served by the vendor MPI
 * A fresh window per case, as an erroneous call may leave one in any state. 2 ranks or more. */
#include "nb_util.h"

#define N 8

static int64_t *base;
static MPI_Win win;

static void open_win(void)
{
    conf_win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; i++)
        base[i] = 0;
    nbt_barrier();
}

static void close_win(void)
{
    nbt_barrier();
    conf_win_free(&win);
}

/* Is rc of class cls? Queues "rank R: what returned X" when not. */
static int is_class(int rc, int cls, const char *what)
{
    char s[400];
    if (conf_class(rc) == cls)
        return 1;
    nbt_diag("%s returned %s, expected %s", what, conf_describe_rc(rc, s, sizeof s),
             conf_class_name(cls));
    return 0;
}

static void closing_without_open(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    open_win();
    int ok = is_class(MPIX_Win_icomplete(win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_icomplete");
    close_win();
    tap_ok(ok, "MPIX_Win_icomplete without an access epoch: MPI_ERR_RMA_SYNC");

    open_win();
    ok = is_class(MPIX_Win_iwait(win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_iwait");
    close_win();
    tap_ok(ok, "MPIX_Win_iwait without an exposure epoch: MPI_ERR_RMA_SYNC");

    open_win();
    ok = is_class(MPIX_Win_iunlock(conf_right(), win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_iunlock");
    close_win();
    tap_ok(ok, "MPIX_Win_iunlock of a rank that is not locked: MPI_ERR_RMA_SYNC");

    /* Lock the left neighbour, unlock the right one (with 2 ranks: lock self, unlock the other) */
    open_win();
    int other = conf_size == 2 ? conf_rank : conf_left();
    MPIX_Win_ilock(MPI_LOCK_SHARED, other, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock(SHARED, %d)", other);
    ok = is_class(MPIX_Win_iunlock(conf_right(), win, &r), MPI_ERR_RMA_SYNC,
                  "MPIX_Win_iunlock of the right neighbour while another rank is locked");
    MPIX_Win_iunlock(other, win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock(%d)", other);
    close_win();
    tap_ok(ok, "MPIX_Win_iunlock of a rank not locked while another rank is: MPI_ERR_RMA_SYNC");

    open_win();
    ok = is_class(MPIX_Win_iunlock_all(win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_iunlock_all");
    close_win();
    tap_ok(ok, "MPIX_Win_iunlock_all without lock_all: MPI_ERR_RMA_SYNC");

    /* A second icomplete: the first closed the epoch, even though it may not have completed. */
    open_win();
    MPI_Group lg = nbt_group(conf_left(), -1), rg = nbt_group(conf_right(), -1);
    MPI_Request q[4];
    MPIX_Win_ipost(lg, 0, win, &q[0]);
    MPIX_Win_istart(rg, 0, win, &q[1]);
    MPIX_Win_icomplete(win, &q[2]);
    ok = is_class(MPIX_Win_icomplete(win, &r), MPI_ERR_RMA_SYNC, "a second MPIX_Win_icomplete");
    ok &= is_class(MPI_Win_complete(win), MPI_ERR_RMA_SYNC,
                   "MPI_Win_complete after MPIX_Win_icomplete");
    MPIX_Win_iwait(win, &q[3]);
    ok &= is_class(MPIX_Win_iwait(win, &r), MPI_ERR_RMA_SYNC, "a second MPIX_Win_iwait");
    nbt_waitall(4, q, "the PSCW epoch");
    close_win();
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    tap_ok(ok, "a second icomplete / MPI_Win_complete / iwait after a nonblocking close: "
               "MPI_ERR_RMA_SYNC");
}

static void double_lock(void)
{
    MPI_Request r, r2 = MPI_REQUEST_NULL;
    open_win();
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_right(), 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    int ok = is_class(MPIX_Win_ilock(MPI_LOCK_SHARED, conf_right(), 0, win, &r2), MPI_ERR_RMA_SYNC,
                      "a second MPIX_Win_ilock of the same rank");
    ok &= is_class(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win), MPI_ERR_RMA_SYNC,
                   "MPI_Win_lock of a rank locked by MPIX_Win_ilock");
    int64_t v = conf_val(1, conf_rank, 0);
    MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 0, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock after the refused second lock");
    nbt_barrier();
    int64_t got = nbt_load(&base[0]);
    if (got != conf_val(1, conf_left(), 0)) {
        nbt_diag("slot 0 holds %lld after the lock epoch, expected %ld", (long long)got,
                 conf_val(1, conf_left(), 0));
        ok = 0;
    }
    close_win();
    tap_ok(ok, "MPIX_Win_ilock (and MPI_Win_lock) of a rank already locked: MPI_ERR_RMA_SYNC; "
               "the first lock epoch still works");
}

static void rma_outside(void)
{
    MPI_Request r;
    int64_t v = 5, g = -1;
    open_win();
    int ok = is_class(MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 0, 1, MPI_INT64_T, win),
                      MPI_ERR_RMA_SYNC, "MPI_Put with no epoch");
    close_win();
    tap_ok(ok, "MPI_Put outside any epoch: MPI_ERR_RMA_SYNC");

    open_win();
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 0, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock(conf_right(), win, &r);
    ok = is_class(MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 1, 1, MPI_INT64_T, win),
                  MPI_ERR_RMA_SYNC, "MPI_Put after MPIX_Win_iunlock");
    ok &= is_class(MPI_Get(&g, 1, MPI_INT64_T, conf_right(), 1, 1, MPI_INT64_T, win),
                   MPI_ERR_RMA_SYNC, "MPI_Get after MPIX_Win_iunlock");
    nbt_wait(&r, "MPIX_Win_iunlock");
    MPIX_Win_ilock_all(0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock_all");
    MPIX_Win_iunlock_all(win, &r);
    ok &=
        is_class(MPI_Accumulate(&v, 1, MPI_INT64_T, conf_right(), 1, 1, MPI_INT64_T, MPI_SUM, win),
                 MPI_ERR_RMA_SYNC, "MPI_Accumulate after MPIX_Win_iunlock_all");
    nbt_wait(&r, "MPIX_Win_iunlock_all");
    nbt_barrier();
    if (nbt_load(&base[1]) != 0) {
        nbt_diag("slot 1 holds %lld: a refused call wrote it", (long long)nbt_load(&base[1]));
        ok = 0;
    }
    close_win();
    tap_ok(ok, "MPI_Put, MPI_Get, MPI_Accumulate after a nonblocking close whose request has "
               "not been waited for: MPI_ERR_RMA_SYNC, nothing written");
}

static void flush_without_passive(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    open_win();
    int ok = is_class(MPIX_Win_iflush(conf_right(), win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_iflush");
    ok &= is_class(MPIX_Win_iflush_local(conf_right(), win, &r), MPI_ERR_RMA_SYNC,
                   "MPIX_Win_iflush_local");
    ok &= is_class(MPIX_Win_iflush_all(win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_iflush_all");
    ok &=
        is_class(MPIX_Win_iflush_local_all(win, &r), MPI_ERR_RMA_SYNC, "MPIX_Win_iflush_local_all");
    close_win();
    tap_ok(ok, "MPIX_Win_iflush, iflush_local, iflush_all, iflush_local_all with no epoch: "
               "MPI_ERR_RMA_SYNC");

    open_win();
    int other = conf_size == 2 ? conf_rank : conf_left();
    MPIX_Win_ilock(MPI_LOCK_SHARED, other, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    ok = is_class(MPIX_Win_iflush(conf_right(), win, &r), MPI_ERR_RMA_SYNC,
                  "MPIX_Win_iflush of a rank not locked (another one is)");
    ok &= is_class(MPIX_Win_iflush_local(conf_right(), win, &r), MPI_ERR_RMA_SYNC,
                   "MPIX_Win_iflush_local of a rank not locked (another one is)");
    MPIX_Win_iunlock(other, win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock");
    close_win();
    tap_ok(ok, "MPIX_Win_iflush / iflush_local toward a rank this rank has not locked, while "
               "it holds a lock on another: MPI_ERR_RMA_SYNC");

    open_win();
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    ok = is_class(MPIX_Win_iflush(conf_right(), win, &r), MPI_ERR_RMA_SYNC,
                  "MPIX_Win_iflush in a fence epoch");
    ok &= is_class(MPIX_Win_iflush_all(win, &r), MPI_ERR_RMA_SYNC,
                   "MPIX_Win_iflush_all in a fence epoch");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    close_win();
    tap_ok(ok, "MPIX_Win_iflush / iflush_all in an active-target (fence) epoch: "
               "MPI_ERR_RMA_SYNC");
}

/* MPI_Win_free while one of this rank's nonblocking epochs has not completed: error, no hang;
 * the peer then completes its side, the epoch completes, the data is there, free succeeds. */
enum pending_kind { EXPOSURE, ACCESS, LOCK };
static void free_pending(enum pending_kind k)
{
    static const char *const desc[] = {
        [EXPOSURE] = "an MPIX_Win_iwait whose origin has not started",
        [ACCESS] = "an MPIX_Win_icomplete whose target has not posted",
        [LOCK] = "an MPIX_Win_iunlock of a rank its owner holds locked",
    };
    const int me = 0, peer = 1;
    int ok_err = 1, ok_data = 1, ok_free = 1;
    int64_t v = conf_val(2, conf_rank, 0), h = 9;
    MPI_Request r = MPI_REQUEST_NULL, q[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    open_win();
    MPI_Group gp = nbt_group(peer, -1), gm = nbt_group(me, -1);
    if (conf_rank == peer && k == LOCK) {
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, peer, 0, win, &q[0]);
        MPI_Put(&h, 1, MPI_INT64_T, peer, 2, 1, MPI_INT64_T, win);
        MPIX_Win_iflush(peer, win, &r);
        nbt_wait(&r, "MPIX_Win_iflush on its own lock");
        nbt_send(me, 1, 0);
    }
    if (conf_rank == me) {
        switch (k) {
        case EXPOSURE:
            MPIX_Win_ipost(gp, 0, win, &q[0]);
            MPIX_Win_iwait(win, &q[1]);
            break;
        case ACCESS:
            MPIX_Win_istart(gp, 0, win, &q[0]);
            MPI_Put(&v, 1, MPI_INT64_T, peer, 1, 1, MPI_INT64_T, win);
            MPIX_Win_icomplete(win, &q[1]);
            break;
        case LOCK:
            nbt_recv(peer, 1);
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, peer, 0, win, &q[0]);
            MPI_Put(&v, 1, MPI_INT64_T, peer, 1, 1, MPI_INT64_T, win);
            MPIX_Win_iunlock(peer, win, &q[1]);
            break;
        }
        MPI_Win w = win;
        ok_err = is_class(conf_win_free(&w), MPI_ERR_RMA_SYNC, "MPI_Win_free");
        if (w == MPI_WIN_NULL) {
            nbt_diag("the refused MPI_Win_free set the handle to MPI_WIN_NULL");
            ok_err = 0;
        }
        nbt_send(peer, 2, 0);
    } else if (conf_rank == peer) {
        nbt_recv(me, 2);
        switch (k) {
        case EXPOSURE:
            MPIX_Win_istart(gm, 0, win, &q[1]);
            MPI_Put(&v, 1, MPI_INT64_T, me, 1, 1, MPI_INT64_T, win);
            MPIX_Win_icomplete(win, &q[2]);
            break;
        case ACCESS:
            MPIX_Win_ipost(gm, 0, win, &q[1]);
            MPIX_Win_iwait(win, &q[2]);
            break;
        case LOCK:
            MPIX_Win_iunlock(peer, win, &q[1]);
            break;
        }
    }
    nbt_waitall(3, q, "the epoch after the refused MPI_Win_free");
    nbt_barrier();
    if (conf_rank == me && k == EXPOSURE)
        ok_data = nbt_load(&base[1]) == conf_val(2, peer, 0);
    if (conf_rank == peer && k != EXPOSURE)
        ok_data = nbt_load(&base[1]) == conf_val(2, me, 0);
    if (!ok_data)
        nbt_diag("slot 1 holds %lld after the epoch completed", (long long)nbt_load(&base[1]));
    int rc = conf_win_free(&win);
    ok_free =
        is_class(rc, MPI_SUCCESS, "MPI_Win_free once the epoch completed") && win == MPI_WIN_NULL;
    MPI_Group_free(&gp);
    MPI_Group_free(&gm);
    tap_ok(ok_err, "MPI_Win_free with %s: MPI_ERR_RMA_SYNC, no hang, handle kept", desc[k]);
    tap_ok(ok_data && ok_free, "... the window stays usable: the epoch completes with its data "
                               "and MPI_Win_free then succeeds");
}

/* An erroneous RMA call in a deferred epoch is checked when it is recorded: the call itself
 * returns the error (docs/ref-internals.md: calls are checked, then recorded). */
static void error_in_deferred(void)
{
    enum { O = 0, X = 1 };
    int ok = 1;
    open_win();
    if (conf_rank == O) {
        int64_t v = 1;
        int d = -1, p = -1;
        MPI_Group gx = nbt_group(X, -1);
        MPI_Request q[4];
        MPIX_Win_istart(gx, 0, win, &q[0]);
        MPIX_Win_icomplete(win, &q[1]);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, X, 0, win, &q[2]);
        int rc = MPI_Put(&v, 1, MPI_INT64_T, X, 1000, 1, MPI_INT64_T, win);
        nbt_counts(win, &d, &p);
        MPIX_Win_iunlock(X, win, &q[3]);
        nbt_send(X, 3, 0);
        nbt_waitall(4, q, "rank 0's access and lock epochs");
        ok = is_class(rc, MPI_ERR_RMA_RANGE,
                      "MPI_Put to displacement 1000 of an 8-slot window in a deferred epoch");
        if (d < 1) {
            nbt_diag("the lock epoch was not deferred (epoch counts: deferred %d, pending %d)", d,
                     p);
            ok = 0;
        }
        MPI_Group_free(&gx);
    } else if (conf_rank == X) {
        MPI_Group go = nbt_group(O, -1);
        MPI_Request r[2];
        nbt_recv(O, 3);
        MPIX_Win_ipost(go, 0, win, &r[0]);
        MPIX_Win_iwait(win, &r[1]);
        nbt_waitall(2, r, "the exposure epoch");
        MPI_Group_free(&go);
    }
    close_win();
    tap_ok(ok, "MPI_Put beyond the target's window in a deferred lock epoch returns "
               "MPI_ERR_RMA_RANGE when called (it is checked before it is recorded)");
}

static void vendor_window(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int d, p, ok = 1;
    MPI_Group g = nbt_group(conf_right(), -1);
    int rc = MPIX_Nbrma_set_impl("vendor");
    if (rc != MPI_SUCCESS) {
        nbt_diag("MPIX_Nbrma_set_impl(\"vendor\") returned %d", rc);
        ok = 0;
    }
    open_win();
    MPIX_Nbrma_set_impl("ref");
    struct {
        const char *name;
        int rc;
    } c[14];
    int n = 0;
#define CALL(x) c[n].name = #x, c[n++].rc = (x)
    CALL(MPIX_Win_ifence(0, win, &r));
    CALL(MPIX_Win_ipost(g, 0, win, &r));
    CALL(MPIX_Win_istart(g, 0, win, &r));
    CALL(MPIX_Win_icomplete(win, &r));
    CALL(MPIX_Win_iwait(win, &r));
    CALL(MPIX_Win_ilock(MPI_LOCK_SHARED, conf_right(), 0, win, &r));
    CALL(MPIX_Win_iunlock(conf_right(), win, &r));
    CALL(MPIX_Win_ilock_all(0, win, &r));
    CALL(MPIX_Win_iunlock_all(win, &r));
    CALL(MPIX_Win_iflush(conf_right(), win, &r));
    CALL(MPIX_Win_iflush_local(conf_right(), win, &r));
    CALL(MPIX_Win_iflush_all(win, &r));
    CALL(MPIX_Win_iflush_local_all(win, &r));
    CALL(MPIX_Win_epoch_counts(win, &d, &p));
#undef CALL
    for (int i = 0; i < n; i++)
        ok &= is_class(c[i].rc, MPI_ERR_WIN, c[i].name);
    /* The vendor window itself is unharmed. */
    int64_t v = conf_val(3, conf_rank, 0);
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 0, 1, MPI_INT64_T, win);
    MPI_Win_fence(0, win);
    if (base[0] != conf_val(3, conf_left(), 0)) {
        nbt_diag("the vendor window's fence epoch left slot 0 = %lld", (long long)base[0]);
        ok = 0;
    }
    close_win();
    MPI_Group_free(&g);
    tap_ok(ok, "on a window served by the vendor (MPIX_Nbrma_set_impl(\"vendor\")), the 13 "
               "MPIX_Win_i* calls and MPIX_Win_epoch_counts return MPI_ERR_WIN");
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 2);
    tap_plan(6 + 1 + 2 + 3 + 3 * 2 + 1 + 1);
    closing_without_open();
    double_lock();
    rma_outside();
    flush_without_passive();
    free_pending(EXPOSURE);
    free_pending(ACCESS);
    free_pending(LOCK);
    error_in_deferred();
    vendor_window();
    return nbt_done();
}
