/* nb_flags.c — the four reorder flags (window info keys, paper 000 §VI-B, docs/nonblocking.md).
 *
 * Each flag is tested off and on with the same three-rank scenario: rank 0 (O) opens an epoch
 * that cannot complete because rank 1 (X) is late, closes it, then opens a second epoch of the
 * kind the flag names, matched by rank 2 (Y):
 *   ACCESS_AFTER_ACCESS      O: start {X} / complete, then start {Y} (or: lock X held by X
 *                            itself, then lock Y)
 *   ACCESS_AFTER_EXPOSURE    O: post {X} / wait, then start {Y}
 *   EXPOSURE_AFTER_EXPOSURE  O: post {X} / wait, then post {Y}
 *   EXPOSURE_AFTER_ACCESS    O: start {X} / complete, then post {Y}
 * Flag off: Y's side of the second epoch (its exposure or access request, or for locks its
 * memory) must show no progress for NBT_QUIET while X holds back, and O's MPIX_Win_epoch_counts
 * must report a deferred epoch. Flag on: Y's side completes while X still holds back, and O has
 * nothing deferred. Then X is released and everything must complete with its data. A wrong
 * implementation fails a point rather than hangs: X is released whatever Y saw.
 * With all four flags on, epochs opened by fence/ifence or lock_all/ilock_all stay serial, in
 * both directions. With ACCESS_AFTER_ACCESS, a flush in a shared-lock epoch that follows an
 * exclusive-lock epoch on the same target (not yet granted) completes. Flags are set at creation
 * and with MPI_Win_set_info ("1"/"true" on, "0"/"false" off; any other value is
 * MPI_ERR_INFO_VALUE); MPI_Win_get_info reports them. */
#include "relax.h"
#include "nb_util.h"

#define N 16

enum { O = 0, X = 1, Y = 2 };
enum { T_OPENED = 1, T_POLLED, T_GO, T_HELD };

static int64_t *base;
static MPI_Win win;

/* The short keys work on every MPI; the long ones only where MPI_MAX_INFO_KEY holds them
 * (not Open MPI 4.1: 36), so they are tested where it does. */
static const char *const short_keys[4] = {MPIX_A_A_A_R, MPIX_A_A_E_R, MPIX_E_A_E_R, MPIX_E_A_A_R};
static const char *const long_keys[4] = {
    MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER,
    MPIX_WIN_ACCESS_AFTER_EXPOSURE_REORDER,
    MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER,
    MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER,
};
#define LONG_KEYS_FIT (MPI_MAX_INFO_KEY > 40)
static const char *const *keys = short_keys;
static const char *const short_names[4] = {"ACCESS_AFTER_ACCESS", "ACCESS_AFTER_EXPOSURE",
                                           "EXPOSURE_AFTER_EXPOSURE", "EXPOSURE_AFTER_ACCESS"};

/* values[i] == NULL: key i not given. */
static void open_win(const char *const values[4])
{
    MPI_Info info = MPI_INFO_NULL;
    if (values) {
        MPI_Info_create(&info);
        for (int i = 0; i < 4; i++)
            if (values[i])
                MPI_Info_set(info, keys[i], values[i]);
    }
    conf_win_allocate(N * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD, &base, &win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    for (int i = 0; i < N; i++)
        base[i] = 0;
    nbt_barrier();
}

static void set_flags(const char *const values[4])
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < 4; i++)
        if (values[i])
            MPI_Info_set(info, keys[i], values[i]);
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
}

static void close_win(void)
{
    nbt_barrier();
    conf_win_free(&win);
}

static int64_t cv(int salt, int rank, int i)
{
    return conf_val(salt, rank, i);
}

static int slot_is(int i, int64_t exp, const char *what)
{
    int64_t v = nbt_load(&base[i]);
    if (v != exp)
        nbt_diag("slot %d holds %lld, expected %lld (%s)", i, (long long)v, (long long)exp, what);
    return v == exp;
}

/* ---- one flag, off or on -------------------------------------------------------------------- */

enum scen { AAA_PSCW, AAA_LOCK, AAE, EAE, EAA };
static const char *const scen_desc[] = {
    [AAA_PSCW] = "start {1} + complete, then start {2}",
    [AAA_LOCK] = "lock 1 (held by rank 1) + unlock, then lock 2",
    [AAE] = "post {1} + wait, then start {2}",
    [EAE] = "post {1} + wait, then post {2}",
    [EAA] = "start {1} + complete, then post {2}",
};
static const int scen_flag[] = {[AAA_PSCW] = 0, [AAA_LOCK] = 0, [AAE] = 1, [EAE] = 2, [EAA] = 3};

/* The epochs the scenarios open, closed without waiting: an access epoch carrying one put of *v
 * into `peer`'s slot `disp` (PSCW or an exclusive lock), or an exposure epoch. */
static void pscw_put(MPI_Group g, int peer, const int64_t *v, int disp, MPI_Request *open,
                     MPI_Request *close)
{
    MPIX_Win_istart(g, 0, win, open);
    MPI_Put(v, 1, MPI_INT64_T, peer, disp, 1, MPI_INT64_T, win);
    MPIX_Win_icomplete(win, close);
}

static void lock_put(int peer, const int64_t *v, int disp, MPI_Request *open, MPI_Request *close)
{
    MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, peer, 0, win, open);
    MPI_Put(v, 1, MPI_INT64_T, peer, disp, 1, MPI_INT64_T, win);
    MPIX_Win_iunlock(peer, win, close);
}

static void expose(MPI_Group g, MPI_Request *open, MPI_Request *close)
{
    MPIX_Win_ipost(g, 0, win, open);
    MPIX_Win_iwait(win, close);
}

static void scenario(enum scen s, int on, const char *how)
{
    const char *flag = short_names[scen_flag[s]];
    int ok_y = 1, ok_counts = 1, ok_data = 1, d = -1, p = -1;
    int64_t vo0 = cv(1, O, 0), vo1 = cv(2, O, 1), vy = cv(3, Y, 2), vx = cv(4, X, 3), vh = 7;
    MPI_Group go = nbt_group(O, -1), gx = nbt_group(X, -1), gy = nbt_group(Y, -1);
    MPI_Request q[8];
    int nq = 0;
    for (int i = 0; i < 8; i++)
        q[i] = MPI_REQUEST_NULL;

    if (conf_rank == X && s == AAA_LOCK) { /* X holds its own exclusive lock */
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, X, 0, win, &q[nq++]);
        MPI_Put(&vh, 1, MPI_INT64_T, X, 5, 1, MPI_INT64_T, win);
        MPI_Request f;
        MPIX_Win_iflush(X, win, &f);
        nbt_wait(&f, "MPIX_Win_iflush in its lock on itself");
        nbt_send(O, T_HELD, 0);
    }

    if (conf_rank == O) {
        /* the first epoch, which X holds back */
        switch (s) {
        case AAA_PSCW:
        case EAA:
            pscw_put(gx, X, &vo0, 0, &q[nq], &q[nq + 1]);
            break;
        case AAA_LOCK:
            nbt_recv(X, T_HELD);
            lock_put(X, &vo0, 0, &q[nq], &q[nq + 1]);
            break;
        case AAE:
        case EAE:
            expose(gx, &q[nq], &q[nq + 1]);
            break;
        }
        nq += 2;
        /* the second epoch, with Y */
        switch (s) {
        case AAA_PSCW:
        case AAE:
            pscw_put(gy, Y, &vo1, 1, &q[nq], &q[nq + 1]);
            break;
        case AAA_LOCK:
            lock_put(Y, &vo1, 1, &q[nq], &q[nq + 1]);
            break;
        case EAE:
        case EAA:
            expose(gy, &q[nq], &q[nq + 1]);
            break;
        }
        nq += 2;
        nbt_send(Y, T_OPENED, 0);
        nbt_recv(Y, T_POLLED);
        nbt_counts(win, &d, &p);
        ok_counts = on ? d == 0 : d >= 1;
        if (!ok_counts)
            nbt_diag("(%s, flag %s, rank %d held back): MPIX_Win_epoch_counts says "
                     "deferred %d, pending %d; expected deferred %s",
                     scen_desc[s], on ? "on" : "off", X, d, p, on ? "0" : ">= 1");
        /* On: the second epoch completes out of order, before the first (000 §VI-B). Its
         * closing request is the last one opened above. */
        if (on && !nbt_poll(&q[nq - 1], NBT_LIMIT / 2)) {
            nbt_diag("(%s, flag on, rank %d held back): the second epoch's closing request did "
                     "not complete in %.0f s",
                     scen_desc[s], X, NBT_LIMIT / 2);
            ok_counts = 0;
        }
        nbt_send(X, T_GO, 0);
    } else if (conf_rank == Y) {
        MPI_Request obs = MPI_REQUEST_NULL;
        const char *what = "its memory";
        switch (s) {
        case AAA_PSCW:
        case AAE:
            expose(go, &q[nq++], &obs);
            what = "its MPIX_Win_iwait request";
            break;
        case EAE:
        case EAA:
            pscw_put(go, O, &vy, 2, &q[nq++], &obs);
            what = "its MPIX_Win_icomplete request";
            break;
        case AAA_LOCK:
            break;
        }
        nbt_recv(O, T_OPENED);
        int progressed;
        if (s == AAA_LOCK) {
            int which;
            int64_t seen;
            if (on) {
                double t0 = MPI_Wtime();
                while (nbt_load(&base[1]) != vo1 && MPI_Wtime() - t0 < NBT_LIMIT / 2) {
                    nbt_progress();
                    nbh_relax();
                }
                progressed = nbt_load(&base[1]) == vo1;
            } else {
                progressed = !nbt_stays(&base[1], 1, 0, NBT_QUIET, &which, &seen);
            }
        } else {
            progressed = nbt_poll(&obs, on ? NBT_LIMIT / 2 : NBT_QUIET);
        }
        ok_y = on ? progressed : !progressed;
        if (!ok_y)
            nbt_diag("(%s, flag %s, rank %d held back): %s %s", scen_desc[s], on ? "on" : "off", X,
                     what,
                     on ? "showed no progress in 10 s" : "showed progress (completed/changed)");
        nbt_send(O, T_POLLED, 0);
        if (obs != MPI_REQUEST_NULL)
            q[nq++] = obs;
    } else if (conf_rank == X) {
        nbt_recv(O, T_GO);
        switch (s) {
        case AAA_PSCW:
        case EAA:
            expose(go, &q[nq], &q[nq + 1]);
            nq += 2;
            break;
        case AAA_LOCK:
            MPIX_Win_iunlock(X, win, &q[nq++]);
            break;
        case AAE:
        case EAE:
            pscw_put(go, O, &vx, 3, &q[nq], &q[nq + 1]);
            nq += 2;
            break;
        }
    }
    nbt_waitall(nq, q, "the scenario's epochs after the release");
    nbt_barrier();
    if (conf_rank == X && (s == AAA_PSCW || s == AAA_LOCK || s == EAA))
        ok_data = slot_is(0, vo0, "rank 0's put in its first epoch");
    if (conf_rank == Y && s != EAE && s != EAA)
        ok_data = slot_is(1, vo1, "rank 0's put in its second epoch");
    if (conf_rank == O && (s == EAE || s == EAA))
        ok_data = slot_is(2, vy, "rank 2's put into rank 0's second exposure");
    if (conf_rank == O && (s == AAE || s == EAE))
        ok_data &= slot_is(3, vx, "rank 1's put into rank 0's first exposure");
    tap_ok(ok_y,
           "%s %s (%s): rank 0 %s; rank 2's side of the second epoch %s while rank 1 "
           "holds back the first",
           flag, on ? "on" : "off", how, scen_desc[s],
           on ? "completes" : "shows no progress for 0.3 s");
    tap_ok(ok_counts, "%s %s: rank 0's MPIX_Win_epoch_counts reports %s", flag, on ? "on" : "off",
           on ? "no deferred epoch, and the second epoch's closing request completes before the "
                "first epoch"
              : "the second epoch deferred");
    tap_ok(ok_data, "%s %s: after rank 1's release every epoch completes with its data", flag,
           on ? "on" : "off");
    MPI_Group_free(&go);
    MPI_Group_free(&gx);
    MPI_Group_free(&gy);
}

static void one_flag(enum scen s)
{
    const char *values[4] = {NULL, NULL, NULL, NULL};
    const int f = scen_flag[s];
    /* Off: by default, explicitly "0" at creation, or switched off by MPI_Win_set_info; on: at
     * creation ("true" or "1") or by MPI_Win_set_info. Which one varies with the flag. */
    switch (s) {
    case AAA_PSCW:
        values[f] = "true";
        open_win(values);
        values[f] = "false";
        set_flags(values);
        scenario(s, 0, "created \"true\", MPI_Win_set_info \"false\"");
        close_win();
        values[f] = "true";
        open_win(values);
        scenario(s, 1, "info \"true\" at creation");
        close_win();
        break;
    case AAE:
        values[f] = "0";
        open_win(values);
        scenario(s, 0, "info \"0\" at creation");
        close_win();
        values[f] = "1";
        keys = LONG_KEYS_FIT ? long_keys : short_keys;
        open_win(values);
        keys = short_keys;
        scenario(s, 1,
                 LONG_KEYS_FIT ? "long key, info \"1\" at creation" : "info \"1\" at creation");
        close_win();
        break;
    default:
        open_win(NULL);
        scenario(s, 0, "default");
        values[f] = s == EAE ? "true" : "1";
        set_flags(values);
        nbt_barrier();
        for (int i = 0; i < N; i++)
            base[i] = 0;
        nbt_barrier();
        scenario(s, 1, s == EAE ? "MPI_Win_set_info \"true\"" : "MPI_Win_set_info \"1\"");
        close_win();
        break;
    }
}

/* ---- all flags on: fence and lock_all epochs stay serial ------------------------------------ */

enum across { PSCW_THEN_LOCK_ALL, LOCK_ALL_THEN_LOCK, FENCE_THEN_LOCK, PSCW_THEN_FENCE };
static const char *const across_desc[] = {
    [PSCW_THEN_LOCK_ALL] = "start {1} + complete, then lock_all",
    [LOCK_ALL_THEN_LOCK] = "lock_all (rank 1 locked by itself) + unlock_all, then lock 2",
    [FENCE_THEN_LOCK] = "fence epoch (rank 1 late to close it), then lock 2",
    [PSCW_THEN_FENCE] = "start {1} + complete, then a fence epoch",
};

static void across(enum across a)
{
    int ok_y = 1, ok_counts = 1, ok_data = 1, d = -1, p = -1;
    int64_t v0 = cv(5, O, 0), v1 = cv(6, O, 1), vh = 7, ring = cv(8, conf_rank, 4);
    MPI_Group go = nbt_group(O, -1), gx = nbt_group(X, -1);
    MPI_Request q[8];
    int nq = 0;
    for (int i = 0; i < 8; i++)
        q[i] = MPI_REQUEST_NULL;

    if (a == LOCK_ALL_THEN_LOCK && conf_rank == X) {
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, X, 0, win, &q[nq++]);
        MPI_Put(&vh, 1, MPI_INT64_T, X, 5, 1, MPI_INT64_T, win);
        MPI_Request f;
        MPIX_Win_iflush(X, win, &f);
        nbt_wait(&f, "MPIX_Win_iflush in its lock on itself");
        nbt_send(O, T_HELD, 0);
    }
    if (a == FENCE_THEN_LOCK) { /* everyone opens; X closes only when released */
        MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &q[nq++]);
        MPI_Put(&ring, 1, MPI_INT64_T, conf_right(), 4, 1, MPI_INT64_T, win);
        if (conf_rank != X)
            MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &q[nq++]);
    }

    if (conf_rank == O) {
        switch (a) {
        case PSCW_THEN_LOCK_ALL:
            MPIX_Win_istart(gx, 0, win, &q[nq++]);
            MPI_Put(&v0, 1, MPI_INT64_T, X, 0, 1, MPI_INT64_T, win);
            MPIX_Win_icomplete(win, &q[nq++]);
            MPIX_Win_ilock_all(0, win, &q[nq++]);
            MPI_Put(&v1, 1, MPI_INT64_T, Y, 1, 1, MPI_INT64_T, win);
            MPIX_Win_iunlock_all(win, &q[nq++]);
            break;
        case LOCK_ALL_THEN_LOCK:
            nbt_recv(X, T_HELD);
            MPIX_Win_ilock_all(0, win, &q[nq++]);
            MPI_Put(&v0, 1, MPI_INT64_T, X, 0, 1, MPI_INT64_T, win);
            MPIX_Win_iunlock_all(win, &q[nq++]);
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, Y, 0, win, &q[nq++]);
            MPI_Put(&v1, 1, MPI_INT64_T, Y, 1, 1, MPI_INT64_T, win);
            MPIX_Win_iunlock(Y, win, &q[nq++]);
            break;
        case FENCE_THEN_LOCK:
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, Y, 0, win, &q[nq++]);
            MPI_Put(&v1, 1, MPI_INT64_T, Y, 1, 1, MPI_INT64_T, win);
            MPIX_Win_iunlock(Y, win, &q[nq++]);
            break;
        case PSCW_THEN_FENCE:
            MPIX_Win_istart(gx, 0, win, &q[nq++]);
            MPI_Put(&v0, 1, MPI_INT64_T, X, 0, 1, MPI_INT64_T, win);
            MPIX_Win_icomplete(win, &q[nq++]);
            MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &q[nq++]);
            MPI_Put(&v1, 1, MPI_INT64_T, Y, 1, 1, MPI_INT64_T, win);
            MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &q[nq++]);
            break;
        }
        nbt_send(Y, T_OPENED, 0);
        nbt_recv(Y, T_POLLED);
        nbt_counts(win, &d, &p);
        ok_counts = d >= 1;
        if (!ok_counts)
            nbt_diag("(%s, all flags on, rank %d held back): MPIX_Win_epoch_counts says "
                     "deferred %d, pending %d; expected deferred >= 1",
                     across_desc[a], X, d, p);
        nbt_send(X, T_GO, 0);
    } else if (conf_rank == Y) {
        int which;
        int64_t seen;
        if (a == PSCW_THEN_FENCE) {
            MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &q[nq++]);
            MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &q[nq++]);
        }
        nbt_recv(O, T_OPENED);
        ok_y = nbt_stays(&base[1], 1, 0, NBT_QUIET, &which, &seen);
        if (!ok_y)
            nbt_diag("(%s, all flags on): slot 1 became %lld while rank 0's first epoch "
                     "could not complete",
                     across_desc[a], (long long)seen);
        nbt_send(O, T_POLLED, 0);
    } else if (conf_rank == X) {
        nbt_recv(O, T_GO);
        switch (a) {
        case PSCW_THEN_LOCK_ALL:
            MPIX_Win_ipost(go, 0, win, &q[nq++]);
            MPIX_Win_iwait(win, &q[nq++]);
            break;
        case LOCK_ALL_THEN_LOCK:
            MPIX_Win_iunlock(X, win, &q[nq++]);
            break;
        case FENCE_THEN_LOCK:
            MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &q[nq++]);
            break;
        case PSCW_THEN_FENCE:
            MPIX_Win_ipost(go, 0, win, &q[nq++]);
            MPIX_Win_iwait(win, &q[nq++]);
            MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &q[nq++]);
            MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &q[nq++]);
            break;
        }
    } else if (a == PSCW_THEN_FENCE) { /* ranks beyond 2 take part in the fence */
        MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &q[nq++]);
        MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &q[nq++]);
    }
    nbt_waitall(nq, q, "the epochs after the release");
    nbt_barrier();
    if (conf_rank == Y)
        ok_data = slot_is(1, v1, "rank 0's put in its second epoch");
    if (conf_rank == X && a != FENCE_THEN_LOCK)
        ok_data = slot_is(0, v0, "rank 0's put in its first epoch");
    if (a == FENCE_THEN_LOCK)
        ok_data &= slot_is(4, cv(8, conf_left(), 4), "the fence epoch's ring put");
    tap_ok(ok_y,
           "all flags on, %s: rank 0's put of the second epoch does not reach rank 2 "
           "while rank 1 holds back the first (watched 0.3 s)",
           across_desc[a]);
    tap_ok(ok_counts, "all flags on, %s: rank 0's second epoch is deferred", across_desc[a]);
    tap_ok(ok_data, "all flags on, %s: after the release everything completes with its data",
           across_desc[a]);
    MPI_Group_free(&go);
    MPI_Group_free(&gx);
}

static void all_on(void)
{
    const char *values[4] = {"1", "true", "1", "true"};
    open_win(values);
    for (int a = PSCW_THEN_LOCK_ALL; a <= PSCW_THEN_FENCE; a++) {
        across((enum across)a);
        for (int i = 0; i < N; i++)
            base[i] = 0;
        nbt_barrier();
    }
    close_win();
}

/* ---- no epoch is skipped --------------------------------------------------------------------- */

/* ACCESS_AFTER_ACCESS on, ACCESS_AFTER_EXPOSURE off. Rank 0: post {1} + wait (rank 1 late),
 * start {2} + complete (deferred: access after an active exposure), lock 2 + unlock. The lock
 * epoch is an access after an access, which the flag would allow, but the epoch before it is
 * deferred, so it must be too (epochs activate in order, 000 §VI-A rule 4). */
static void no_skip(void)
{
    const char *values[4] = {"true", "false", NULL, NULL};
    open_win(values);
    int ok_y = 1, ok_counts = 1, ok_data = 1, d = -1, p = -1;
    int64_t va = cv(9, O, 1), vl = cv(10, O, 2), vx = cv(11, X, 3);
    MPI_Group go = nbt_group(O, -1), gx = nbt_group(X, -1), gy = nbt_group(Y, -1);
    MPI_Request q[8];
    int nq = 0;
    if (conf_rank == O) {
        MPIX_Win_ipost(gx, 0, win, &q[nq++]);
        MPIX_Win_iwait(win, &q[nq++]);
        MPIX_Win_istart(gy, 0, win, &q[nq++]);
        MPI_Put(&va, 1, MPI_INT64_T, Y, 1, 1, MPI_INT64_T, win);
        MPIX_Win_icomplete(win, &q[nq++]);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, Y, 0, win, &q[nq++]);
        MPI_Put(&vl, 1, MPI_INT64_T, Y, 2, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock(Y, win, &q[nq++]);
        nbt_send(Y, T_OPENED, 0);
        nbt_recv(Y, T_POLLED);
        nbt_counts(win, &d, &p);
        ok_counts = d >= 2;
        if (!ok_counts)
            nbt_diag("MPIX_Win_epoch_counts says deferred %d, pending %d; expected "
                     "deferred >= 2 (the start and the lock epoch)",
                     d, p);
        nbt_send(X, T_GO, 0);
    } else if (conf_rank == Y) {
        int which;
        int64_t seen;
        MPIX_Win_ipost(go, 0, win, &q[nq++]);
        MPIX_Win_iwait(win, &q[nq++]);
        nbt_recv(O, T_OPENED);
        ok_y = nbt_stays(&base[1], 2, 0, NBT_QUIET, &which, &seen);
        if (!ok_y)
            nbt_diag("slot %d became %lld while rank 0's exposure to rank 1 was held "
                     "back",
                     1 + which, (long long)seen);
        nbt_send(O, T_POLLED, 0);
    } else if (conf_rank == X) {
        nbt_recv(O, T_GO);
        MPIX_Win_istart(go, 0, win, &q[nq++]);
        MPI_Put(&vx, 1, MPI_INT64_T, O, 3, 1, MPI_INT64_T, win);
        MPIX_Win_icomplete(win, &q[nq++]);
    }
    nbt_waitall(nq, q, "the epochs after the release");
    nbt_barrier();
    if (conf_rank == Y)
        ok_data = slot_is(1, va, "PSCW put") & slot_is(2, vl, "lock put");
    if (conf_rank == O)
        ok_data = slot_is(3, vx, "rank 1's put");
    tap_ok(ok_y, "no skipping (ACCESS_AFTER_ACCESS on, ACCESS_AFTER_EXPOSURE off): rank 0's "
                 "lock epoch after a deferred access epoch does not reach rank 2's memory");
    tap_ok(ok_counts, "no skipping: both of rank 0's access epochs are deferred");
    tap_ok(ok_data, "no skipping: after the release all epochs complete with their data");
    MPI_Group_free(&go);
    MPI_Group_free(&gx);
    MPI_Group_free(&gy);
    close_win();
}

/* ---- ACCESS_AFTER_ACCESS, two lock epochs on one target ------------------------------------- */

/* Rank 0 closes an exclusive-lock epoch on rank 2 that cannot be granted yet (rank 1 holds a
 * shared lock there), then opens a shared-lock epoch on rank 2 (the flag lets it activate) and
 * flushes it while rank 1 releases. The flush covers every call issued before it toward rank 2
 * (rule 8), the first epoch's put included: the engine must not let the second epoch's shared
 * lock shut out the first epoch's exclusive one for good. Expected: the flush completes. */
static void same_target_locks(void)
{
    const char *values[4] = {"1", NULL, NULL, NULL};
    open_win(values);
    enum { H = 1, T = 2 };
    int ok = 1, ok_data = 1;
    int64_t x = cv(12, O, 8), y = cv(13, O, 9), h = 5;
    MPI_Request r, f;
    if (conf_rank == H) {
        MPIX_Win_ilock(MPI_LOCK_SHARED, T, 0, win, &r);
        nbt_wait(&r, "MPIX_Win_ilock(SHARED, %d)", T);
        MPI_Put(&h, 1, MPI_INT64_T, T, 10, 1, MPI_INT64_T, win);
        MPIX_Win_iflush(T, win, &f);
        nbt_wait(&f, "MPIX_Win_iflush(%d): rank 1's shared lock granted", T);
        nbt_send(O, T_HELD, 0);
        nbt_recv(O, T_GO);
        MPIX_Win_iunlock(T, win, &r);
        nbt_wait(&r, "MPIX_Win_iunlock(%d)", T);
    } else if (conf_rank == O) {
        MPI_Request q[4];
        nbt_recv(H, T_HELD);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, T, 0, win, &q[0]);
        MPI_Put(&x, 1, MPI_INT64_T, T, 8, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock(T, win, &q[1]);
        MPIX_Win_ilock(MPI_LOCK_SHARED, T, 0, win, &q[2]);
        MPI_Put(&y, 1, MPI_INT64_T, T, 9, 1, MPI_INT64_T, win);
        nbt_send(H, T_GO, 0); /* rank 1 releases its lock now */
        MPIX_Win_iflush(T, win, &f);
        ok = nbt_poll(&f, NBT_LIMIT / 2);
        if (!ok)
            nbt_diag("MPIX_Win_iflush(%d) in the shared-lock epoch did not complete in %.0f s "
                     "after rank %d released its lock (the earlier exclusive-lock epoch on the "
                     "same target waits for this epoch's shared lock)",
                     T, NBT_LIMIT / 2, H);
        MPIX_Win_iunlock(T, win, &q[3]); /* releases the shared lock: all completes then */
        nbt_waitall(4, q, "rank 0's two lock epochs on rank 2");
        nbt_wait(&f, "MPIX_Win_iflush(%d) after the shared lock's release", T);
    }
    nbt_barrier();
    if (conf_rank == T)
        ok_data = slot_is(8, x, "the exclusive epoch's put") & slot_is(9, y, "the shared one's");
    tap_ok(ok, "ACCESS_AFTER_ACCESS on: an exclusive-lock epoch on rank 2 waiting for rank 1's "
               "shared lock, then a shared-lock epoch on rank 2: its MPIX_Win_iflush completes "
               "once rank 1 released (no self-deadlock)");
    tap_ok(ok_data, "ACCESS_AFTER_ACCESS on, two lock epochs on one target: both puts arrived");
    close_win();
}

/* ---- MPI_Win_get_info ------------------------------------------------------------------------ */

static const char *state(const char *val, int flag)
{
    if (!flag)
        return "absent";
    if (!strcmp(val, "1") || !strcmp(val, "true"))
        return "on";
    if (!strcmp(val, "0") || !strcmp(val, "false"))
        return "off";
    return "unparsable";
}

/* "on", "off", "absent" (or "unparsable") for flag i in the window's info, under its short key.
 * Where the long key fits, it must be reported alike: else "long key differs" (val says how). */
static const char *reported(MPI_Win w, int i, char *val, int len)
{
    MPI_Info info;
    int flag = 0, lflag = 0;
    char lval[MPI_MAX_INFO_VAL + 1] = "";
    MPI_Win_get_info(w, &info);
    MPI_Info_get(info, short_keys[i], len - 1, val, &flag);
    if (!flag)
        val[0] = '\0';
    if (LONG_KEYS_FIT)
        MPI_Info_get(info, long_keys[i], (int)sizeof lval - 1, lval, &lflag);
    MPI_Info_free(&info);
    const char *r = state(val, flag);
    if (LONG_KEYS_FIT && strcmp(state(lval, lflag), r) != 0) {
        snprintf(val, (size_t)len, "short key: %s, long key: %s", r, state(lval, lflag));
        return "long key differs";
    }
    return r;
}

/* A reported state matches the expected one; a flag that is off may also be left out. */
static int matches(const char *r, const char *expect)
{
    return !strcmp(r, expect) || (!strcmp(expect, "off") && !strcmp(r, "absent"));
}

static void get_info(void)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int ok = 1;
    open_win(NULL);
    for (int i = 0; i < 4; i++) {
        const char *r = reported(win, i, val, sizeof val);
        if (!matches(r, "off")) {
            nbt_diag("default window: %s is %s ('%s')", short_names[i], r, val);
            ok = 0;
        } else if (conf_rank == 0 && i == 0) {
            tap_diag("default window reports %s: %s%s%s%s", short_names[i], r,
                     strcmp(r, "absent") ? " ('" : "", strcmp(r, "absent") ? val : "",
                     strcmp(r, "absent") ? "')" : "");
        }
    }
    close_win();
    tap_ok(ok, "MPI_Win_get_info on a window created without the keys: every flag off or absent");

    const char *values[4] = {"true", "0", NULL, "1"};
    const char *expect[4] = {"on", "off", NULL, "on"};
    keys = LONG_KEYS_FIT ? long_keys : short_keys; /* given by long key where it fits */
    open_win(values);
    keys = short_keys;
    ok = 1;
    for (int i = 0; i < 4; i++) {
        const char *r = reported(win, i, val, sizeof val);
        if (!matches(r, expect[i] ? expect[i] : "off")) {
            nbt_diag("created with %s=%s: MPI_Win_get_info reports %s ('%s')", short_names[i],
                     values[i] ? values[i] : "(not given)", r, val);
            ok = 0;
        }
    }
    tap_ok(ok,
           "MPI_Win_get_info reports flags given at creation (\"true\" and \"1\" on, \"0\" "
           "off; %s)",
           LONG_KEYS_FIT ? "given by long keys, reported by both" : "short keys");

    const char *change[4] = {"false", NULL, "true", NULL};
    const char *expect2[4] = {"off", "off", "on", "on"};
    set_flags(change);
    ok = 1;
    for (int i = 0; i < 4; i++) {
        const char *r = reported(win, i, val, sizeof val);
        if (!matches(r, expect2[i])) {
            nbt_diag("after MPI_Win_set_info: %s reported %s ('%s'), expected %s", short_names[i],
                     r, val, expect2[i]);
            ok = 0;
        }
    }
    tap_ok(ok, "MPI_Win_get_info reports flags changed by MPI_Win_set_info, the others "
               "unchanged");

    /* A value that is neither 1/0 nor true/false is refused and changes nothing. */
    const char *bad[4] = {"maybe", NULL, NULL, NULL};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, keys[0], bad[0]);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int rc = MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    char why[400];
    ok = conf_class(rc) == MPI_ERR_INFO_VALUE;
    if (!ok)
        nbt_diag("MPI_Win_set_info(%s=maybe) returned %s", short_names[0],
                 conf_describe_rc(rc, why, sizeof why));
    const char *r = reported(win, 0, val, sizeof val);
    if (!matches(r, "off")) {
        nbt_diag("after the refused value, %s is reported %s ('%s')", short_names[0], r, val);
        ok = 0;
    }
    tap_ok(ok, "MPI_Win_set_info with a flag value other than 1/0/true/false: MPI_ERR_INFO_VALUE, "
               "the flag unchanged");
    close_win();
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 3);
    tap_plan(4 + 5 * 2 * 3 + 4 * 3 + 3 + 2);
    get_info();
    one_flag(AAA_PSCW);
    one_flag(AAA_LOCK);
    one_flag(AAE);
    one_flag(EAE);
    one_flag(EAA);
    all_on();
    no_skip();
    same_target_locks();
    return nbt_done();
}
