/* nb_rules.c — the semantic rules of nonblocking synchronization (paper 000 §VI-A as refined in
 * docs/nonblocking.md), on one MPI_Win_allocate window, 3 or 4 ranks:
 *   mixing    any mix of blocking and nonblocking calls makes one epoch (rule 1); MPI_Win_test
 *             keeps its meaning
 *   complete  once a closing request completed, puts are at the target, gets in the buffer, and
 *             the origin buffer may be reused (rule 2)
 *   chain     after a nonblocking close any epoch opens at once: 100 ilock/put/iunlock in a row
 *             and one wait (the same slot, written by all 100, ends with the last value), 20
 *             fence epochs chained by ifence(0), and every kind of epoch with one wait
 *   serial    an epoch opened after an earlier one was closed is deferred until that one
 *             completed, its RMA calls recorded and carried out on activation (rules 4 and 5)
 *   overlap   epochs whose application-level lifetimes overlap progress concurrently
 *   fifo      access and exposure epochs match first-in first-out per pair of processes (rule
 *             3), with many epochs pending on either side, and the 6-epoch example of 000 §VII-B
 *   flush     an iflush in a deferred lock epoch completes only once the lock is granted and the
 *             recorded calls are carried out; then the target sees the data. Origin buffers
 *             reused after an iflush_local, and datatypes freed after the call, do not matter
 *   ifence    a closing ifence has barrier semantics: the next fence epoch's calls of an early
 *             rank do not reach memory before every rank closed the previous epoch (rule 5)
 *   requests  epoch requests mix with others in MPI_Waitall, MPI_Waitsome, MPI_Testany, and
 *             MPI_Request_free leaves the epoch to complete
 * Ranks are ordered by messages (nb_util.h); "must not complete" is watched for NBT_QUIET. */
#include "relax.h"
#include "nb_util.h"

#define N 256

static int64_t *base;
static MPI_Win win;

static int64_t cv(int salt, int rank, int i)
{
    return conf_val(salt, rank, i);
}

static void vals(int64_t *a, int n, int salt, int rank, int lo)
{
    for (int i = 0; i < n; i++)
        a[i] = cv(salt, rank, lo + i);
}

/* Does local slot i hold exp? Queues a diagnostic naming `what` when not. */
static int slot_is(int i, int64_t exp, const char *what)
{
    int64_t v = nbt_load(&base[i]);
    if (v != exp)
        nbt_diag("slot %d holds %lld, expected %lld (%s)", i, (long long)v, (long long)exp, what);
    return v == exp;
}

static int is_val(int64_t got, int64_t exp, const char *what)
{
    if (got != exp)
        nbt_diag("%s is %lld, expected %lld", what, (long long)got, (long long)exp);
    return got == exp;
}

/* ---- rule 1: mixing, and MPI_Win_test ------------------------------------------------------- */

static void mixing(void)
{
    MPI_Group lg = nbt_group(conf_left(), -1), rg = nbt_group(conf_right(), -1);
    int64_t out[2], exp[2];
    MPI_Request r;

    vals(out, 2, 11, conf_rank, 0);
    MPIX_Win_ipost(lg, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ipost");
    MPI_Win_start(rg, 0, win);
    MPI_Put(out, 2, MPI_INT64_T, conf_right(), 0, 2, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &r);
    nbt_wait(&r, "MPIX_Win_icomplete after MPI_Win_start");
    MPI_Win_wait(win);
    vals(exp, 2, 11, conf_left(), 0);
    tap_ok(conf_check_i64(base, exp, 2, "rank %d's slots 0..1", conf_rank),
           "rule 1: MPIX_Win_ipost closed by MPI_Win_wait, MPI_Win_start closed by "
           "MPIX_Win_icomplete: the put arrived");

    vals(out, 2, 12, conf_rank, 0);
    MPI_Win_post(lg, 0, win);
    MPIX_Win_istart(rg, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_istart");
    MPI_Put(out, 2, MPI_INT64_T, conf_right(), 0, 2, MPI_INT64_T, win);
    MPI_Win_complete(win);
    MPIX_Win_iwait(win, &r);
    nbt_wait(&r, "MPIX_Win_iwait after MPI_Win_post");
    vals(exp, 2, 12, conf_left(), 0);
    tap_ok(conf_check_i64(base, exp, 2, "rank %d's slots 0..1", conf_rank),
           "rule 1: MPI_Win_post closed by MPIX_Win_iwait, MPIX_Win_istart closed by "
           "MPI_Win_complete: the put arrived");

    /* MPI_Win_test ends an exposure epoch opened by MPIX_Win_ipost, as in MPI-3. */
    vals(out, 2, 13, conf_rank, 0);
    MPIX_Win_ipost(lg, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ipost");
    MPIX_Win_istart(rg, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_istart");
    MPI_Put(out, 2, MPI_INT64_T, conf_right(), 0, 2, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &r);
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < NBT_LIMIT) {
        MPI_Win_test(win, &flag);
        nbh_relax();
    }
    nbt_wait(&r, "MPIX_Win_icomplete");
    vals(exp, 2, 13, conf_left(), 0);
    int ok = conf_check_i64(base, exp, 2, "rank %d's slots 0..1", conf_rank);
    if (!flag)
        nbt_diag("MPI_Win_test never returned flag = 1 in %.0f s", NBT_LIMIT);
    tap_ok(ok && flag, "rule 9: MPI_Win_test polling ends an exposure epoch opened with "
                       "MPIX_Win_ipost; the put arrived");

    int64_t a = cv(14, conf_rank, 3), b = cv(14, conf_rank, 4);
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    MPI_Put(&a, 1, MPI_INT64_T, conf_right(), 3, 1, MPI_INT64_T, win);
    MPI_Win_flush(conf_right(), win);
    MPI_Win_unlock(conf_right(), win);
    MPI_Win_lock(MPI_LOCK_SHARED, conf_right(), 0, win);
    MPI_Put(&b, 1, MPI_INT64_T, conf_right(), 4, 1, MPI_INT64_T, win);
    MPIX_Win_iflush(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iflush in an MPI_Win_lock epoch");
    MPIX_Win_iunlock(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock after MPI_Win_lock");
    nbt_barrier();
    ok = slot_is(3, cv(14, conf_left(), 3), "ilock + MPI_Win_flush + MPI_Win_unlock");
    ok &= slot_is(4, cv(14, conf_left(), 4), "MPI_Win_lock + iflush + iunlock");
    tap_ok(ok, "rule 1: MPIX_Win_ilock + MPI_Win_flush + MPI_Win_unlock, MPI_Win_lock + "
               "MPIX_Win_iflush + MPIX_Win_iunlock: the puts arrived");

    a = cv(15, conf_rank, 5);
    b = cv(15, conf_rank, 6);
    MPI_Win_lock_all(0, win);
    MPI_Put(&a, 1, MPI_INT64_T, conf_right(), 5, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock_all(win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock_all after MPI_Win_lock_all");
    MPIX_Win_ilock_all(0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock_all");
    MPI_Put(&b, 1, MPI_INT64_T, conf_right(), 6, 1, MPI_INT64_T, win);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    nbt_barrier();
    ok = slot_is(5, cv(15, conf_left(), 5), "MPI_Win_lock_all + iunlock_all");
    ok &= slot_is(6, cv(15, conf_left(), 6), "ilock_all + MPI_Win_flush_all + MPI_Win_unlock_all");
    tap_ok(ok, "rule 1: MPI_Win_lock_all + MPIX_Win_iunlock_all, MPIX_Win_ilock_all + "
               "MPI_Win_flush_all + MPI_Win_unlock_all: the puts arrived");

    /* One fence epoch, opened and closed by ifence on even ranks and by MPI_Win_fence on odd. */
    a = cv(16, conf_rank, 7);
    if (conf_rank % 2 == 0) {
        MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r);
        nbt_wait(&r, "MPIX_Win_ifence(NOPRECEDE)");
    } else {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    }
    MPI_Put(&a, 1, MPI_INT64_T, conf_right(), 7, 1, MPI_INT64_T, win);
    if (conf_rank % 2 == 0) {
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    } else {
        MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r);
        nbt_wait(&r, "MPIX_Win_ifence(NOSUCCEED)");
    }
    tap_ok(slot_is(7, cv(16, conf_left(), 7), "fence epoch"),
           "rule 1: MPIX_Win_ifence and MPI_Win_fence mixed within an epoch and across ranks "
           "(even ranks open with ifence and close with fence, odd ranks the reverse)");
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

/* ---- rule 2: what completion guarantees ------------------------------------------------------ */

static void completion(void)
{
    int64_t buf = cv(17, conf_rank, 8), got = -1;
    MPI_Request r;
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    MPI_Put(&buf, 1, MPI_INT64_T, conf_right(), 8, 1, MPI_INT64_T, win);
    MPI_Get(&got, 1, MPI_INT64_T, conf_right(), 9, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock(%d)", conf_right());
    buf = -7; /* the origin buffer is ours again */
    nbt_send(conf_right(), 1, 0);
    nbt_recv(conf_left(), 1);
    int ok = slot_is(8, cv(17, conf_left(), 8), "put, read after the origin's iunlock completed");
    ok &= is_val(got, cv(18, conf_right(), 9), "the MPI_Get result after iunlock completed");
    tap_ok(ok, "rule 2: once MPIX_Win_iunlock completed, the put is at the target (the origin "
               "buffer, overwritten since, does not matter) and the get result in the buffer");
}

/* ---- back to back: a new epoch right after a nonblocking close ---------------------------- */

static void chain(void)
{
    enum { K = 100 };
    static int64_t out[K], seq[K];
    MPI_Request q[2 * K];
    for (int i = 0; i < K; i++) {
        out[i] = cv(19, conf_rank, 128 + i);
        seq[i] = i + 1;
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &q[2 * i]);
        MPI_Put(&out[i], 1, MPI_INT64_T, conf_right(), 128 + i, 1, MPI_INT64_T, win);
        MPI_Put(&seq[i], 1, MPI_INT64_T, conf_right(), 10, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock(conf_right(), win, &q[2 * i + 1]);
    }
    int done = nbt_testall(2 * K, q, NBT_LIMIT);
    if (!done)
        tap_bail_out("100 ilock/put/iunlock epochs not complete after %.0f s", NBT_LIMIT);
    nbt_send(conf_right(), 2, 0);
    nbt_recv(conf_left(), 2);
    int64_t exp[K], got[K];
    for (int i = 0; i < K; i++) {
        exp[i] = cv(19, conf_left(), 128 + i);
        got[i] = nbt_load(&base[128 + i]);
    }
    int ok = conf_check_i64(got, exp, K, "rank %d's slots 128..227", conf_rank);
    ok &= slot_is(10, K, "slot 10, written by each of the 100 epochs in turn");
    tap_ok(ok, "chain: 100 MPIX_Win_ilock/MPI_Put/MPIX_Win_iunlock epochs back to back, one "
               "MPI_Testall: every put arrived, and the slot all of them wrote holds the last "
               "epoch's value");

    /* 20 fence epochs back to back, each closed and the next opened by one ifence(0). */
    enum { F = 20 };
    static int64_t fv[F], fseq[F];
    MPI_Request fr[F + 1];
    MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &fr[0]);
    for (int k = 0; k < F; k++) {
        fv[k] = cv(43, conf_rank, 80 + k);
        fseq[k] = k + 1;
        MPI_Put(&fv[k], 1, MPI_INT64_T, conf_right(), 80 + k, 1, MPI_INT64_T, win);
        MPI_Put(&fseq[k], 1, MPI_INT64_T, conf_right(), 79, 1, MPI_INT64_T, win);
        MPIX_Win_ifence(k == F - 1 ? MPI_MODE_NOSUCCEED : 0, win, &fr[k + 1]);
    }
    nbt_waitall(F + 1, fr, "20 fence epochs opened and closed by MPIX_Win_ifence");
    int64_t fe[F], fg[F];
    for (int k = 0; k < F; k++) {
        fe[k] = cv(43, conf_left(), 80 + k);
        fg[k] = nbt_load(&base[80 + k]);
    }
    ok = conf_check_i64(fg, fe, F, "rank %d's slots 80..99", conf_rank);
    ok &= slot_is(79, F, "slot 79, written in each of the 20 fence epochs");
    tap_ok(ok, "chain: 20 fence epochs chained by MPIX_Win_ifence(0) without waiting: every put "
               "arrived, the slot all of them wrote holds the last epoch's value");

    /* Every kind of epoch back to back, then one wait. */
    MPI_Group lg = nbt_group(conf_left(), -1), rg = nbt_group(conf_right(), -1);
    int64_t o[4], g[4] = {-1, -1, -1, -1};
    vals(o, 4, 20, conf_rank, 11);
    MPI_Request c[12];
    MPIX_Win_ipost(lg, 0, win, &c[0]);
    MPIX_Win_istart(rg, 0, win, &c[1]);
    MPI_Put(&o[0], 1, MPI_INT64_T, conf_right(), 11, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &c[2]);
    MPIX_Win_iwait(win, &c[3]);
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &c[4]);
    MPI_Put(&o[1], 1, MPI_INT64_T, conf_right(), 12, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock(conf_right(), win, &c[5]);
    MPIX_Win_ilock_all(0, win, &c[6]);
    MPI_Put(&o[2], 1, MPI_INT64_T, conf_right(), 13, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock_all(win, &c[7]);
    MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &c[8]);
    MPI_Put(&o[3], 1, MPI_INT64_T, conf_right(), 14, 1, MPI_INT64_T, win);
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &c[9]);
    /* The fence epoch completed everywhere before this one activates, so the left neighbour's
     * slots hold what its left neighbour put in all four epochs. */
    MPIX_Win_ilock(MPI_LOCK_SHARED, conf_left(), 0, win, &c[10]);
    MPI_Get(g, 4, MPI_INT64_T, conf_left(), 11, 4, MPI_INT64_T, win);
    MPIX_Win_iunlock(conf_left(), win, &c[11]);
    nbt_waitall(12, c, "the chain of every epoch kind");
    int ll = (conf_left() + conf_size - 1) % conf_size;
    int64_t e[4], mine[4];
    vals(e, 4, 20, ll, 11);
    ok = conf_check_i64(g, e, 4, "the MPI_Get result from rank %d's slots 11..14", conf_left());
    nbt_barrier();
    vals(e, 4, 20, conf_left(), 11);
    for (int i = 0; i < 4; i++)
        mine[i] = nbt_load(&base[11 + i]);
    ok &= conf_check_i64(mine, e, 4, "rank %d's slots 11..14", conf_rank);
    tap_ok(ok, "chain: PSCW, lock, lock_all, fence and lock epochs opened back to back with "
               "nonblocking calls, one wait at the end: all puts arrived, in epoch order "
               "(the last epoch's get saw the four earlier ones complete)");
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

/* ---- rules 4 and 5: deferred epochs activate in order, after the earlier ones completed ---- */

static void serial(void)
{
    enum { O = 0, T0 = 1, T1 = 2 };
    int ok_counts = 1, ok_quiet = 1, ok_data = 1;
    int64_t v0 = cv(21, O, 30), v1 = cv(22, O, 30), v2 = cv(23, O, 31);
    if (conf_rank == O) {
        MPI_Group g0 = nbt_group(T0, -1);
        MPI_Request q[6];
        MPIX_Win_istart(g0, 0, win, &q[0]);
        MPI_Put(&v0, 1, MPI_INT64_T, T0, 30, 1, MPI_INT64_T, win);
        MPIX_Win_icomplete(win, &q[1]);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, T1, 0, win, &q[2]);
        MPI_Put(&v1, 1, MPI_INT64_T, T1, 30, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock(T1, win, &q[3]);
        MPIX_Win_ilock_all(0, win, &q[4]);
        MPI_Put(&v2, 1, MPI_INT64_T, T1, 31, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock_all(win, &q[5]);
        nbt_send(T1, 10, 0); /* opened */
        nbt_recv(T1, 11);    /* T1 has watched its memory */
        int d, p, f[3];
        nbt_counts(win, &d, &p);
        for (int i = 0; i < 3; i++)
            MPI_Test(&q[2 * i + 1], &f[i], MPI_STATUS_IGNORE);
        ok_counts = d >= 2 && p == 3 && !f[0] && !f[1] && !f[2];
        if (!ok_counts)
            nbt_diag("rank %d not posted yet: epoch counts deferred %d (expected >= 2), "
                     "pending %d (expected 3); closing requests complete: icomplete %d, "
                     "iunlock %d, iunlock_all %d (expected 0 0 0)",
                     T0, d, p, f[0], f[1], f[2]);
        nbt_send(T0, 12, 0); /* go: post */
        nbt_waitall(6, q, "rank 0's PSCW, lock and lock_all epochs");
        nbt_send(T1, 13, 0); /* done */
        MPI_Group_free(&g0);
    } else if (conf_rank == T0) {
        MPI_Group go = nbt_group(O, -1);
        MPI_Request r;
        nbt_recv(O, 12);
        MPIX_Win_ipost(go, 0, win, &r);
        nbt_wait(&r, "MPIX_Win_ipost");
        MPIX_Win_iwait(win, &r);
        nbt_wait(&r, "MPIX_Win_iwait for rank %d's access epoch", O);
        ok_data = slot_is(30, v0, "rank 0's put in its PSCW epoch");
        MPI_Group_free(&go);
    } else if (conf_rank == T1) {
        int which;
        int64_t seen;
        nbt_recv(O, 10);
        ok_quiet = nbt_stays(&base[30], 2, 0, NBT_QUIET, &which, &seen);
        if (!ok_quiet)
            nbt_diag("slot %d became %lld while rank 0's first epoch (toward rank %d, "
                     "not posted yet) could not complete",
                     30 + which, (long long)seen, T0);
        nbt_send(O, 11, 0);
        nbt_recv(O, 13);
        ok_data = slot_is(30, v1, "rank 0's put in its lock epoch");
        ok_data &= slot_is(31, v2, "rank 0's put in its lock_all epoch");
    }
    tap_ok(ok_counts, "rules 4-5: rank 0's lock and lock_all epochs, opened after its PSCW epoch "
                      "(toward a rank that has not posted) was closed, are deferred "
                      "(MPIX_Win_epoch_counts) and their closing requests incomplete");
    tap_ok(ok_quiet,
           "rules 4-5: the puts recorded in those deferred epochs do not reach rank "
           "%d's memory for %.1f s",
           T1, NBT_QUIET);
    tap_ok(ok_data,
           "rules 4-5: once rank %d posted, all three epochs completed and every "
           "recorded put was carried out",
           T0);
}

/* ---- overlapping application-level lifetimes progress concurrently ------------------------ */

static void overlap(void)
{
    MPI_Group lg = nbt_group(conf_left(), -1), rg = nbt_group(conf_right(), -1);
    MPI_Request q[4];
    int64_t o = cv(24, conf_rank, 32);
    MPIX_Win_ipost(lg, 0, win, &q[0]);
    MPIX_Win_istart(rg, 0, win, &q[1]);
    MPI_Put(&o, 1, MPI_INT64_T, conf_right(), 32, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &q[2]);
    MPIX_Win_iwait(win, &q[3]);
    nbt_waitall(4, q, "a ring of ipost/istart/icomplete/iwait (access and exposure overlap)");
    tap_ok(slot_is(32, cv(24, conf_left(), 32), "ring put"),
           "overlap: in a ring, each rank's exposure and access epochs (start before wait) "
           "progress concurrently and complete");
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);

    /* Rank 0 holds lock epochs on ranks 1 and 2 at once; rank 2 holds rank 1's exclusive lock,
     * so rank 0's flush toward 1 must wait while its flush toward 2 completes. */
    enum { O = 0, A = 1, H = 2 };
    int ok_other = 1, ok_held = 1, ok_data = 1;
    int64_t x = cv(25, O, 34), y = cv(26, O, 34), h = cv(27, H, 33);
    MPI_Request r;
    if (conf_rank == H) {
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, A, 0, win, &r);
        nbt_wait(&r, "MPIX_Win_ilock(EXCLUSIVE, %d)", A);
        MPI_Put(&h, 1, MPI_INT64_T, A, 33, 1, MPI_INT64_T, win);
        MPIX_Win_iflush(A, win, &r);
        nbt_wait(&r, "MPIX_Win_iflush(%d) in its own exclusive lock epoch", A);
        nbt_send(O, 20, 0); /* holding it */
        nbt_recv(O, 21);    /* release */
        MPIX_Win_iunlock(A, win, &r);
        nbt_wait(&r, "MPIX_Win_iunlock(%d)", A);
    } else if (conf_rank == O) {
        MPI_Request la, lh, fa, fh, ua, uh;
        nbt_recv(H, 20);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, A, 0, win, &la);
        MPIX_Win_ilock(MPI_LOCK_SHARED, H, 0, win, &lh);
        MPI_Put(&x, 1, MPI_INT64_T, A, 34, 1, MPI_INT64_T, win);
        MPI_Put(&y, 1, MPI_INT64_T, H, 34, 1, MPI_INT64_T, win);
        MPIX_Win_iflush(H, win, &fh);
        MPIX_Win_iflush(A, win, &fa);
        ok_other = nbt_poll(&fh, NBT_LIMIT / 2);
        if (!ok_other)
            nbt_diag("MPIX_Win_iflush(%d) did not complete in %.0f s while rank %d's "
                     "lock is held by rank %d",
                     H, NBT_LIMIT / 2, A, H);
        ok_held = !nbt_poll(&fa, NBT_QUIET);
        if (!ok_held)
            nbt_diag("MPIX_Win_iflush(%d) completed while rank %d holds an exclusive "
                     "lock on rank %d",
                     A, H, A);
        nbt_send(H, 21, 0);
        nbt_wait(&fa, "MPIX_Win_iflush(%d) after the release", A);
        nbt_wait(&fh, "MPIX_Win_iflush(%d)", H);
        MPIX_Win_iunlock(A, win, &ua);
        MPIX_Win_iunlock(H, win, &uh);
        nbt_wait(&la, "ilock request");
        nbt_wait(&lh, "ilock request");
        nbt_wait(&ua, "MPIX_Win_iunlock(%d)", A);
        nbt_wait(&uh, "MPIX_Win_iunlock(%d)", H);
    }
    nbt_barrier();
    if (conf_rank == A)
        ok_data = slot_is(33, h, "rank 2's put") & slot_is(34, x, "rank 0's put");
    if (conf_rank == H)
        ok_data = slot_is(34, y, "rank 0's put");
    tap_ok(ok_other, "overlap: two lock epochs open at once progress concurrently: rank 0's "
                     "MPIX_Win_iflush toward rank 2 completes while its lock on rank 1 waits");
    tap_ok(ok_held,
           "overlap: ... and its MPIX_Win_iflush toward rank 1 waits for the exclusive "
           "lock rank 2 holds (watched %.1f s)",
           NBT_QUIET);
    tap_ok(ok_data, "overlap: after the release every put arrived");
}

/* ---- rule 3: FIFO matching of access and exposure epochs ---------------------------------- */

/* Target 2 opens exposures toward {0}, {1}, {0,1}, {0}; origins 0 and 1 open 3 and 2 access
 * epochs toward 2, each putting a tag into its own slot. When exposure j completes, the access
 * epochs it matches (per pair, k-th with k-th) must have put their tag. */
static void fifo_two_origins(int exposures_first, int lo, int salt)
{
    enum { T = 2 };
    static const unsigned groups[4] = {1u, 2u, 3u, 1u};
    int ok = 1;
    if (conf_rank == T) {
        MPI_Request pr[4], wr[4];
        if (!exposures_first) {
            nbt_recv(0, 30);
            nbt_recv(1, 30);
        }
        for (int j = 0; j < 4; j++) {
            MPI_Group g = nbt_group_mask(groups[j]);
            MPIX_Win_ipost(g, 0, win, &pr[j]);
            MPIX_Win_iwait(win, &wr[j]);
            MPI_Group_free(&g);
        }
        nbt_waitall(4, pr, "ipost requests");
        if (exposures_first) {
            nbt_send(0, 30, 0);
            nbt_send(1, 30, 0);
        }
        int k[2] = {0, 0};
        for (int j = 0; j < 4; j++) {
            nbt_wait(&wr[j], "MPIX_Win_iwait of exposure %d", j);
            for (int o = 0; o < 2; o++)
                if (groups[j] & (1u << o)) {
                    int s = lo + o * 4 + k[o];
                    int64_t v = nbt_load(&base[s]);
                    if (v != cv(salt, o, k[o])) {
                        nbt_diag("exposure %d (group mask %u) completed but slot %d, "
                                 "written by access epoch %d of rank %d, holds %lld, expected "
                                 "%ld",
                                 j, groups[j], s, k[o], o, (long long)v, cv(salt, o, k[o]));
                        ok = 0;
                    }
                    k[o]++;
                }
        }
    } else if (conf_rank < 2) {
        int o = conf_rank, n = o == 0 ? 3 : 2;
        int64_t out[3];
        MPI_Request q[6];
        MPI_Group gt = nbt_group(T, -1);
        if (exposures_first)
            nbt_recv(T, 30);
        for (int k = 0; k < n; k++) {
            out[k] = cv(salt, o, k);
            MPIX_Win_istart(gt, 0, win, &q[2 * k]);
            MPI_Put(&out[k], 1, MPI_INT64_T, T, lo + o * 4 + k, 1, MPI_INT64_T, win);
            MPIX_Win_icomplete(win, &q[2 * k + 1]);
        }
        if (!exposures_first)
            nbt_send(T, 30, 0);
        nbt_waitall(2 * n, q, "access epochs toward rank 2");
        MPI_Group_free(&gt);
    }
    tap_ok(ok,
           "rule 3: %s; rank 2 exposes to {0}, {1}, {0,1}, {0} while ranks 0 and 1 open 3 "
           "and 2 access epochs toward it: each exposure completes with the puts of exactly "
           "the access epochs that match it first-in first-out per pair",
           exposures_first ? "all exposures pending before any access epoch is opened"
                           : "all access epochs pending before any exposure is opened");
}

/* Paper 000 §VII-B: rank 0 opens six access epochs toward T0..T5 = {1}, {1}, {1}, {1}, {2},
 * {1,2}; rank 2 posts its two exposures first, rank 1 its five last. Rank 2's first exposure
 * matches rank 0's fifth epoch, deferred behind four epochs that wait for rank 1. */
static void fifo_paper(void)
{
    enum { P0 = 0, P1 = 1, P2 = 2, LO = 50, SALT = 28 };
    static const unsigned groups[6] = {2u, 2u, 2u, 2u, 4u, 6u};
    int ok_quiet = 1, ok = 1;
    if (conf_rank == P0) {
        int64_t out[6];
        MPI_Request q[12];
        nbt_recv(P2, 31);
        for (int k = 0; k < 6; k++) {
            MPI_Group g = nbt_group_mask(groups[k]);
            out[k] = cv(SALT, P0, k);
            MPIX_Win_istart(g, 0, win, &q[2 * k]);
            for (int t = 1; t <= 2; t++)
                if (groups[k] & (1u << t))
                    MPI_Put(&out[k], 1, MPI_INT64_T, t, LO + k, 1, MPI_INT64_T, win);
            MPIX_Win_icomplete(win, &q[2 * k + 1]);
            MPI_Group_free(&g);
        }
        nbt_send(P2, 32, 0);
        nbt_waitall(12, q, "rank 0's six access epochs");
    } else if (conf_rank == P1 || conf_rank == P2) {
        int n = conf_rank == P1 ? 5 : 2;
        static const int match1[5] = {0, 1, 2, 3, 5}, match2[2] = {4, 5};
        const int *match = conf_rank == P1 ? match1 : match2;
        MPI_Request pr[5], wr[5];
        MPI_Group g0 = nbt_group(P0, -1);
        if (conf_rank == P1)
            nbt_recv(P2, 33);
        for (int j = 0; j < n; j++) {
            MPIX_Win_ipost(g0, 0, win, &pr[j]);
            MPIX_Win_iwait(win, &wr[j]);
        }
        nbt_waitall(n, pr, "ipost requests");
        if (conf_rank == P2) {
            nbt_send(P0, 31, 0);
            nbt_recv(P0, 32);
            ok_quiet = !nbt_poll(&wr[0], NBT_QUIET);
            if (!ok_quiet)
                tap_diag("rank 2: its first exposure completed before rank 1 posted (rank 0's "
                         "5th access epoch must wait for its first four)");
            nbt_send(P1, 33, 0);
        }
        for (int j = 0; j < n; j++) {
            nbt_wait(&wr[j], "MPIX_Win_iwait of exposure %d", j);
            int s = LO + match[j];
            int64_t v = nbt_load(&base[s]);
            if (v != cv(SALT, P0, match[j])) {
                nbt_diag("exposure %d completed but slot %d (rank 0's access epoch %d) "
                         "holds %lld, expected %ld",
                         j, s, match[j], (long long)v, cv(SALT, P0, match[j]));
                ok = 0;
            }
        }
        MPI_Group_free(&g0);
    }
    tap_ok(ok_quiet, "rule 3/4 (000 §VII-B example): rank 2's first exposure, matching rank 0's "
                     "5th access epoch, does not complete while rank 1 has not posted");
    tap_ok(ok, "rule 3 (000 §VII-B example): rank 1's 5 and rank 2's 2 exposures match rank 0's "
               "epochs {0,1,2,3,5} and {4,5}, each completing with its epoch's put");
}

/* ---- rule 8: a flush in a deferred epoch ------------------------------------------------ */

/* Rank 0's lock epoch on rank 2 is deferred behind its access epoch toward rank 1, which has not
 * posted. An iflush toward rank 2 waits until the lock is granted and the recorded put and get
 * are carried out; then the get result is in the buffer and rank 2 sees the put, while the lock
 * is still held. */
static void deferred_flush(void)
{
    enum { O = 0, X = 1, Y = 2 };
    int ok_quiet = 1, ok = 1;
    int64_t v0 = cv(38, O, 35), v = cv(39, O, 36), g = -1;
    if (conf_rank == O) {
        MPI_Group gx = nbt_group(X, -1);
        MPI_Request q[5], f;
        MPIX_Win_istart(gx, 0, win, &q[0]);
        MPI_Put(&v0, 1, MPI_INT64_T, X, 35, 1, MPI_INT64_T, win);
        MPIX_Win_icomplete(win, &q[1]);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, Y, 0, win, &q[2]);
        MPI_Put(&v, 1, MPI_INT64_T, Y, 36, 1, MPI_INT64_T, win);
        MPI_Get(&g, 1, MPI_INT64_T, Y, 37, 1, MPI_INT64_T, win);
        MPIX_Win_iflush(Y, win, &f);
        ok_quiet = !nbt_poll(&f, NBT_QUIET);
        if (!ok_quiet)
            nbt_diag("MPIX_Win_iflush(%d) completed while its lock epoch was deferred behind an "
                     "access epoch toward rank %d, which has not posted",
                     Y, X);
        nbt_send(X, 60, 0); /* post now */
        nbt_wait(&f, "MPIX_Win_iflush(%d) after rank %d posted", Y, X);
        ok &= is_val(g, cv(40, Y, 37), "the MPI_Get result once the iflush completed");
        nbt_send(Y, 61, 0); /* flushed: look */
        nbt_recv(Y, 62);    /* looked */
        MPIX_Win_iunlock(Y, win, &q[3]);
        nbt_waitall(4, q, "rank 0's access and lock epochs");
        MPI_Group_free(&gx);
    } else if (conf_rank == X) {
        MPI_Group go = nbt_group(O, -1);
        MPI_Request r;
        nbt_recv(O, 60);
        MPIX_Win_ipost(go, 0, win, &r);
        nbt_wait(&r, "MPIX_Win_ipost");
        MPIX_Win_iwait(win, &r);
        nbt_wait(&r, "MPIX_Win_iwait");
        ok = slot_is(35, v0, "rank 0's put in its access epoch");
        MPI_Group_free(&go);
    } else if (conf_rank == Y) {
        nbt_recv(O, 61);
        ok = slot_is(36, v, "rank 0's put, read after its iflush completed (lock still held)");
        nbt_send(O, 62, 0);
    }
    tap_ok(ok_quiet,
           "rule 8: an MPIX_Win_iflush in a deferred lock epoch does not complete while "
           "the epoch is deferred (watched %.1f s)",
           NBT_QUIET);
    tap_ok(ok, "rule 8: once the epoch activated, the iflush completes; the recorded get's "
               "result is in the buffer and the target sees the recorded put");
}

/* Rank 0's lock epoch on rank 2 is deferred again. Its put's origin buffer is overwritten as soon
 * as an iflush_local completes, and the target datatype of a second put is freed right after the
 * call: what arrives is still what was put, where the datatype said. */
static void deferred_buffers(void)
{
    enum { O = 0, X = 1, Y = 2 };
    int ok = 1;
    int64_t b = cv(41, O, 70), src[3] = {cv(42, O, 72), cv(42, O, 74), cv(42, O, 76)};
    if (conf_rank == O) {
        MPI_Group gx = nbt_group(X, -1);
        MPI_Request q[4], f;
        MPI_Datatype vec;
        MPIX_Win_istart(gx, 0, win, &q[0]);
        MPIX_Win_icomplete(win, &q[1]);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, Y, 0, win, &q[2]);
        MPI_Put(&b, 1, MPI_INT64_T, Y, 70, 1, MPI_INT64_T, win);
        MPI_Type_vector(3, 1, 2, MPI_INT64_T, &vec);
        MPI_Type_commit(&vec);
        MPI_Put(src, 3, MPI_INT64_T, Y, 72, 1, vec, win);
        MPI_Type_free(&vec);
        MPIX_Win_iflush_local(Y, win, &f);
        int early = nbt_poll(&f, NBT_QUIET / 3);
        nbt_send(X, 63, 0); /* post now */
        nbt_wait(&f, "MPIX_Win_iflush_local(%d) after rank %d posted", Y, X);
        b = -99; /* the origin buffers are ours again */
        src[0] = src[1] = src[2] = -99;
        MPIX_Win_iunlock(Y, win, &q[3]);
        nbt_waitall(4, q, "rank 0's access and lock epochs");
        nbt_send(Y, 64, early);
        MPI_Group_free(&gx);
    } else if (conf_rank == X) {
        MPI_Group go = nbt_group(O, -1);
        MPI_Request r[2];
        nbt_recv(O, 63);
        MPIX_Win_ipost(go, 0, win, &r[0]);
        MPIX_Win_iwait(win, &r[1]);
        nbt_waitall(2, r, "the exposure epoch");
        MPI_Group_free(&go);
    } else if (conf_rank == Y) {
        int early = nbt_recv(O, 64);
        static const int at[7] = {70, 71, 72, 73, 74, 75, 76};
        int64_t exp[7] = {b, 0, src[0], 0, src[1], 0, src[2]}, got[7];
        for (int i = 0; i < 7; i++)
            got[i] = nbt_load(&base[at[i]]);
        ok = conf_check_i64(got, exp, 7, "rank %d's slots 70..76 (iflush_local %s)", Y,
                            early ? "completed before the epoch activated"
                                  : "completed after activation");
    }
    tap_ok(ok, "deferred epoch: origin buffers overwritten once MPIX_Win_iflush_local completed, "
               "and a target datatype freed right after MPI_Put, do not change what arrives");
}

/* ---- rule 5: ifence barrier semantics -------------------------------------------------------- */

static void ifence_barrier(void)
{
    const int early = 0, observer = 1, late = conf_size - 1;
    int ok_early = 1, ok_quiet = 1, ok = 1;
    MPI_Request r, r1, r2;
    int64_t v = cv(29, conf_rank, 60), w = cv(30, early, 61);
    MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r);
    nbt_wait(&r, "MPIX_Win_ifence(NOPRECEDE)");
    MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 60, 1, MPI_INT64_T, win);
    if (conf_rank == late) {
        nbt_recv(early, 40);
        nbt_recv(observer, 41);
    }
    MPIX_Win_ifence(0, win, &r1);
    if (conf_rank == early)
        MPI_Put(&w, 1, MPI_INT64_T, observer, 61, 1, MPI_INT64_T, win);
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r2);
    if (conf_rank == early) {
        ok_early = !nbt_poll(&r1, NBT_QUIET);
        if (!ok_early)
            nbt_diag("its closing MPIX_Win_ifence completed before rank %d called it", late);
        nbt_send(late, 40, 0);
    } else if (conf_rank == observer) {
        int which;
        int64_t seen;
        ok_quiet = nbt_stays(&base[61], 1, 0, NBT_QUIET, &which, &seen);
        if (!ok_quiet)
            nbt_diag("slot 61 became %lld (rank %d's put of the second fence epoch) "
                     "before rank %d closed the first",
                     (long long)seen, early, late);
        nbt_send(late, 41, 0);
    }
    nbt_wait(&r1, "MPIX_Win_ifence(0)");
    nbt_wait(&r2, "MPIX_Win_ifence(NOSUCCEED)");
    ok = slot_is(60, cv(29, conf_left(), 60), "first fence epoch's put");
    if (conf_rank == observer)
        ok &= slot_is(61, w, "second fence epoch's put");
    tap_ok(ok_early,
           "rule 5: a closing MPIX_Win_ifence does not complete before every rank "
           "closed the epoch (rank %d waited for rank %d for %.1f s)",
           early, late, NBT_QUIET);
    tap_ok(ok_quiet,
           "rule 5: the put rank %d issued in the next fence epoch does not reach "
           "rank %d before rank %d closed the previous epoch",
           early, observer, late);
    tap_ok(ok, "rule 5: both fence epochs complete with their data");
}

/* ---- epoch requests among other requests ---------------------------------------------------- */

static void requests(void)
{
    MPI_Group lg = nbt_group(conf_left(), -1), rg = nbt_group(conf_right(), -1);
    MPI_Request q[6];
    int in = -1, outm = conf_rank;
    int64_t o = cv(31, conf_rank, 20);
    MPI_Irecv(&in, 1, MPI_INT, conf_left(), 50, nbt_comm, &q[0]);
    MPIX_Win_ipost(lg, 0, win, &q[1]);
    MPIX_Win_istart(rg, 0, win, &q[2]);
    MPI_Put(&o, 1, MPI_INT64_T, conf_right(), 20, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &q[3]);
    MPIX_Win_iwait(win, &q[4]);
    MPI_Isend(&outm, 1, MPI_INT, conf_right(), 50, nbt_comm, &q[5]);
    MPI_Status st[6];
    MPI_Waitall(6, q, st);
    int ok = slot_is(20, cv(31, conf_left(), 20), "PSCW put") &
             is_val(in, conf_left(), "the message received in the same MPI_Waitall");
    tap_ok(ok, "requests: one MPI_Waitall over ipost/istart/icomplete/iwait requests, an "
               "MPI_Irecv and an MPI_Isend");

    /* Lock epochs toward every other rank, completed through MPI_Waitsome, then accumulate
     * epochs completed through MPI_Testany. */
    MPI_Request lr[2 * 4], ar[2 * 4];
    int64_t mine = cv(32, conf_rank, 21 + conf_rank), one = 1;
    int n = 0;
    for (int t = 0; t < conf_size; t++)
        if (t != conf_rank) {
            MPIX_Win_ilock(MPI_LOCK_SHARED, t, 0, win, &lr[n++]);
            MPI_Put(&mine, 1, MPI_INT64_T, t, 21 + conf_rank, 1, MPI_INT64_T, win);
            MPIX_Win_iunlock(t, win, &lr[n++]);
        }
    int left = n, idx[8];
    MPI_Status sts[8];
    double t0 = MPI_Wtime();
    while (left > 0 && MPI_Wtime() - t0 < NBT_LIMIT) {
        int cnt = 0;
        MPI_Waitsome(n, lr, &cnt, idx, sts);
        if (cnt == MPI_UNDEFINED)
            break;
        left -= cnt;
    }
    int ok_some = left == 0;
    if (!ok_some)
        nbt_diag("MPI_Waitsome left %d of %d requests", left, n);
    n = 0;
    for (int t = 0; t < conf_size; t++)
        if (t != conf_rank) {
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, t, 0, win, &ar[n++]);
            MPI_Accumulate(&one, 1, MPI_INT64_T, t, 25, 1, MPI_INT64_T, MPI_SUM, win);
            MPIX_Win_iunlock(t, win, &ar[n++]);
        }
    left = n;
    t0 = MPI_Wtime();
    while (left > 0 && MPI_Wtime() - t0 < NBT_LIMIT) {
        int i = -1, flag = 0;
        MPI_Testany(n, ar, &i, &flag, MPI_STATUS_IGNORE);
        if (flag && i == MPI_UNDEFINED)
            break;
        if (flag)
            left--;
        else
            nbh_relax();
    }
    int ok_any = left == 0;
    if (!ok_any)
        nbt_diag("MPI_Testany left %d of %d requests", left, n);
    nbt_barrier();
    ok = 1;
    for (int s = 0; s < conf_size; s++)
        if (s != conf_rank)
            ok &= slot_is(21 + s, cv(32, s, 21 + s), "put completed through MPI_Waitsome");
    ok &= slot_is(25, conf_size - 1, "accumulates completed through MPI_Testany");
    tap_ok(ok && ok_some && ok_any,
           "requests: ilock/iunlock requests toward every rank complete through MPI_Waitsome "
           "and MPI_Testany; the puts and accumulates arrived");

    /* MPI_Request_free on a closing request: the epoch still completes (the next epoch, which
     * activates only after it, reads its put back). */
    MPI_Request r;
    int64_t p = cv(33, conf_rank, 26), got = -1;
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    MPI_Put(&p, 1, MPI_INT64_T, conf_right(), 26, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock(conf_right(), win, &r);
    MPI_Request_free(&r);
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, conf_right(), 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ilock");
    MPI_Get(&got, 1, MPI_INT64_T, conf_right(), 26, 1, MPI_INT64_T, win);
    MPIX_Win_iflush(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iflush after a freed iunlock request");
    MPIX_Win_iunlock(conf_right(), win, &r);
    nbt_wait(&r, "MPIX_Win_iunlock");
    ok = is_val(got, p, "the value read back after the freed epoch");

    /* ... and PSCW closing requests freed, followed by a fence epoch that completes after them. */
    int64_t f = cv(34, conf_rank, 27);
    MPIX_Win_ipost(lg, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_ipost");
    MPIX_Win_istart(rg, 0, win, &r);
    nbt_wait(&r, "MPIX_Win_istart");
    MPI_Put(&f, 1, MPI_INT64_T, conf_right(), 27, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, &r);
    MPI_Request_free(&r);
    MPIX_Win_iwait(win, &r);
    MPI_Request_free(&r);
    MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r);
    nbt_wait(&r, "MPIX_Win_ifence(NOPRECEDE)");
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r);
    nbt_wait(&r, "MPIX_Win_ifence(NOSUCCEED) after freed PSCW requests");
    ok &= slot_is(27, cv(34, conf_left(), 27), "PSCW put whose requests were freed");
    nbt_barrier();
    ok &= slot_is(26, cv(33, conf_left(), 26), "put of the epoch whose iunlock request was freed");
    tap_ok(ok, "requests: MPI_Request_free on iunlock, icomplete and iwait requests; the epochs "
               "still complete (later epochs see their puts)");
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 3);
    tap_plan(6 + 1 + 3 + 3 + 4 + 2 + 2 + 2 + 1 + 3 + 3);
    conf_win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    for (int i = 0; i < N; i++)
        base[i] = 0;
    base[9] = cv(18, conf_rank, 9);
    base[37] = cv(40, conf_rank, 37);
    nbt_barrier();
    mixing();
    completion();
    chain();
    serial();
    overlap();
    fifo_two_origins(1, 40, 35);
    fifo_two_origins(0, 40, 36);
    fifo_paper();
    deferred_flush();
    deferred_buffers();
    ifence_barrier();
    requests();
    conf_win_free(&win);
    return nbt_done();
}
