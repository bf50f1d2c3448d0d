/* test_sched.c — intra-epoch message scheduling (paper 002 §4; issue 13): 4 ranks in two
 * virtual nodes of NBRMA_RANKS_PER_NODE=2, so rank 0's node peer is rank 1 and ranks 2, 3 are
 * another node. With the scheduler on, a Put/Get of at least th bytes toward a node peer or self
 * in a ready epoch is held (recorded, not carried out) until the closing call or a flush; smaller
 * ones, calls toward other nodes and Rput/Rget are carried out in the call. Every held call's data
 * arrives by the time MPI says it must (flush, flush_local, unlock_all, unlock, fence, complete).
 * Settings: the info keys nbrma_sched and nbrma_sched_th at creation, in MPI_Win_get_info and
 * MPI_Win_set_info; bad values are refused with the class MPI gives bad input. */
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"
#include "win_stats.h"

enum { TH = 4096, BIG = 8192, SMALL = 1024, NSLOT = 8 };

static int me, n;

/* The window's memory: NSLOT slots of BIG bytes. A slot's value at byte i for writer w, tag t. */
static unsigned char val(int w, int t, size_t i)
{
    return (unsigned char)(w * 31 + t * 7 + (int)(i % 251));
}

static void fill(unsigned char *b, size_t len, int w, int t)
{
    for (size_t i = 0; i < len; i++)
        b[i] = val(w, t, i);
}

/* 1 if b holds writer w's tag t pattern; otherwise a diagnostic. */
static int holds(const unsigned char *b, size_t len, int w, int t, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != val(w, t, i)) {
            tap_diag("%s: byte %zu is %u, expected %u", what, i, b[i], val(w, t, i));
            return 0;
        }
    return 1;
}

static MPI_Win make_win(const char *sched, const char *th, unsigned char **mem, MPI_Comm comm)
{
    MPI_Info info = MPI_INFO_NULL;
    if (sched || th) {
        MPI_Info_create(&info);
        if (sched)
            MPI_Info_set(info, "nbrma_sched", sched);
        if (th)
            MPI_Info_set(info, "nbrma_sched_th", th);
    }
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate((MPI_Aint)NSLOT * BIG, 1, info, comm, mem, &win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        tap_bail_out("MPI_Win_allocate failed (%d)", rc);
    memset(*mem, 0, (size_t)NSLOT * BIG);
    MPI_Barrier(comm);
    return win;
}

static nbr_win_t *ref_of(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        tap_bail_out("the window is not served by libnbrma");
    return w;
}

/* lock_all: what is held, what is not, and what flushes release. */
static void passive(void)
{
    unsigned char *mem, src[5][BIG], got[BIG];
    MPI_Win win = make_win("on", "4096", &mem, MPI_COMM_WORLD);
    nbr_win_t *w = ref_of(win);
    tap_ok(win_info_is(win, "nbrma_sched", "on") && win_info_is(win, "nbrma_sched_th", "4096") &&
               w->sched_th == TH,
           "nbrma_sched=on, nbrma_sched_th=4096: MPI_Win_get_info reports them, the window "
           "schedules");
    int ok = 1;
    long p1 = 0, p2 = 0, p0 = 0, p1b = 0, p1c = 0, p1d = 0, p1e = 0;
    MPI_Win_lock_all(0, win);
    if (me == 0) {
        for (int t = 0; t < 5; t++)
            fill(src[t], BIG, me, t);
        MPI_Put(src[0], BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win); /* iR: held */
        p1 = nbr_pending_calls(w, 1);
        MPI_Put(src[1], SMALL, MPI_BYTE, 1, BIG, SMALL, MPI_BYTE, win); /* ir: at once */
        p1b = nbr_pending_calls(w, 1);
        MPI_Put(src[2], BIG, MPI_BYTE, 2, 0, BIG, MPI_BYTE, win); /* IR: issued at once */
        p2 = nbr_pending_calls(w, 2);
        MPI_Put(src[3], BIG, MPI_BYTE, 0, 2 * BIG, BIG, MPI_BYTE, win); /* to self: iR */
        p0 = nbr_pending_calls(w, 0);
        MPI_Request r;
        MPI_Rput(src[4], BIG, MPI_BYTE, 1, 3 * BIG, BIG, MPI_BYTE, win, &r); /* R-variant */
        p1c = nbr_pending_calls(w, 1);
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* must not wait for the epoch's end */
        MPI_Win_flush(2, win); /* toward the other node: the held calls stay held */
        p1d = nbr_pending_calls(w, 1);
        MPI_Win_flush(1, win);
        p1e = nbr_pending_calls(w, 1) + nbr_pending_calls(w, 0);
    }
    MPI_Win_unlock_all(win);
    ok = me != 0 || (p1 == 1 && p1b == 1 && p2 == 0 && p0 == 1 && p1c == 1);
    if (!ok)
        tap_diag("pending toward 1 after the big put %ld, after the small %ld, after the Rput %ld; "
                 "toward 2 %ld; toward self %ld",
                 p1, p1b, p1c, p2, p0);
    tap_ok(ok, "held: a Put of >= th bytes to a node peer and to self; not held: < th, toward "
               "another node, MPI_Rput (its MPI_Wait returns inside the epoch)");
    ok = me != 0 || (p1d == 1 && p1e == 0);
    if (!ok)
        tap_diag("pending toward 1 after flush(2): %ld; toward 0 and 1 after flush(1): %ld", p1d,
                 p1e);
    tap_ok(ok, "MPI_Win_flush toward the other node keeps them held; a flush toward the node "
               "peer carries them out");
    MPI_Barrier(MPI_COMM_WORLD);
    ok = 1;
    if (me == 1)
        ok = holds(mem, BIG, 0, 0, "rank 1 slot 0") &&
             holds(mem + BIG, SMALL, 0, 1, "rank 1 slot 1") &&
             holds(mem + 3 * BIG, BIG, 0, 4, "rank 1 slot 3");
    if (me == 2)
        ok = holds(mem, BIG, 0, 2, "rank 2 slot 0");
    if (me == 0)
        ok = holds(mem + 2 * BIG, BIG, 0, 3, "rank 0 slot 2 (put to self)");
    tap_ok(ok, "every put's data is in place after the epoch");

    /* A held put completes at unlock_all without a flush; a held get at flush_local. */
    MPI_Win_lock_all(0, win);
    long held_get = 0;
    if (me == 0) {
        fill(src[0], BIG, me, 9);
        MPI_Put(src[0], BIG, MPI_BYTE, 1, 4 * BIG, BIG, MPI_BYTE, win);
        memset(got, 0, sizeof got);
        MPI_Get(got, BIG, MPI_BYTE, 1, 3 * BIG, BIG, MPI_BYTE, win);
        held_get = nbr_pending_calls(w, 1);
        MPI_Win_flush_local(1, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok = me != 0 || (held_get == 2 && holds(got, BIG, 0, 4, "the held get's buffer"));
    if (me == 1)
        ok = holds(mem + 4 * BIG, BIG, 0, 9, "rank 1 slot 4 after unlock_all");
    tap_ok(ok, "a held MPI_Get completes at MPI_Win_flush_local, a held MPI_Put at "
               "MPI_Win_unlock_all");

    /* A derived datatype freed before the held call is carried out. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    if (me == 0) {
        MPI_Datatype vec;
        MPI_Type_vector(BIG / 64, 32, 64, MPI_BYTE, &vec); /* 4096 bytes of every other 32 */
        MPI_Type_commit(&vec);
        fill(src[1], BIG, me, 5);
        MPI_Put(src[1], 1, vec, 1, 5 * BIG, 1, vec, win);
        MPI_Type_free(&vec);
        ok = nbr_pending_calls(w, 1) == 1;
    }
    MPI_Win_unlock(1, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1)
        for (size_t i = 0; i < BIG && ok; i++)
            if (mem[5 * BIG + i] != ((i / 32) % 2 ? 0 : val(0, 5, i)))
                ok = 0, tap_diag("rank 1 slot 5 byte %zu is %u", i, mem[5 * BIG + i]);
    tap_ok(ok, "a held strided put (its datatype freed before the unlock) lands at MPI_Win_unlock");
    MPI_Win_free(&win);
}

/* Active target: fence and PSCW carry out held calls before the targets' epochs end. */
static void active(void)
{
    unsigned char *mem, src[4][BIG];
    MPI_Win win = make_win("on", "8K", &mem, MPI_COMM_WORLD);
    int ok = ref_of(win)->sched_th == BIG;
    tap_ok(ok, "nbrma_sched_th accepts 8K");
    for (int t = 0; t < 4; t++)
        fill(src[t], BIG, me, t);
    MPI_Win_fence(0, win);
    if (me == 0)
        for (int r = 0; r < n; r++)
            MPI_Put(src[r], BIG, MPI_BYTE, r, 0, BIG, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    ok = holds(mem, BIG, 0, me, "slot 0 after the fence");
    tap_ok(ok, "fence: rank 0's puts to self, its node peer and the other node are in place");

    MPI_Group world, others;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (me == 0) {
        int t[3] = {1, 2, 3};
        MPI_Group_incl(world, 3, t, &others);
        MPI_Win_start(others, 0, win);
        for (int r = 1; r < n; r++)
            MPI_Put(src[r], BIG, MPI_BYTE, r, BIG, BIG, MPI_BYTE, win);
        MPI_Win_complete(win);
    } else {
        int o = 0;
        MPI_Group_incl(world, 1, &o, &others);
        MPI_Win_post(others, 0, win);
        MPI_Win_wait(win);
    }
    ok = me == 0 || holds(mem + BIG, BIG, 0, me, "slot 1 after MPI_Win_wait");
    tap_ok(ok, "PSCW: the targets' MPI_Win_wait returns with the held put in place");
    MPI_Group_free(&others);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
}

/* Off, the default, one-node windows, set_info, bad values. */
static void settings(void)
{
    unsigned char *mem, src[BIG];
    fill(src, BIG, me, 0);
    MPI_Win win = make_win("off", NULL, &mem, MPI_COMM_WORLD);
    nbr_win_t *w = ref_of(win);
    int ok = w->sched_th == NBR_AINT_MAX && win_info_is(win, "nbrma_sched", "off");
    MPI_Win_lock_all(0, win);
    if (me == 0) {
        MPI_Put(src, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
        ok &= nbr_pending_calls(w, 1) == 0;
    }
    MPI_Win_unlock_all(win);
    tap_ok(ok, "nbrma_sched=off: nothing is held");

    MPI_Info on;
    MPI_Info_create(&on);
    MPI_Info_set(on, "nbrma_sched", "on");
    MPI_Win_set_info(win, on);
    ok = w->sched_th == 8192 && win_info_is(win, "nbrma_sched", "on");
    MPI_Info_set(on, "nbrma_sched_th", "100");
    MPI_Win_set_info(win, on);
    ok &= w->sched_th == 100 && win_info_is(win, "nbrma_sched_th", "100");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "nbrma_sched", "sometimes");
    int rc = MPI_Win_set_info(win, bad), cls = -1;
    MPI_Error_class(rc, &cls);
    ok &= cls == MPI_ERR_INFO_VALUE && w->sched_th == 100;
    MPI_Info_free(&bad);
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "nbrma_sched_th", "-5");
    rc = MPI_Win_set_info(win, bad);
    MPI_Error_class(rc, &cls);
    ok &= cls == MPI_ERR_INFO_VALUE && w->sched_th == 100;
    MPI_Win_free(&win);
    tap_ok(ok, "MPI_Win_set_info turns it on and sets th (NBRMA_SCHED_TH's 8192 until then); "
               "nbrma_sched=sometimes and nbrma_sched_th=-5 fail with MPI_ERR_INFO_VALUE and "
               "change nothing");

    win = make_win(NULL, NULL, &mem, MPI_COMM_WORLD);
    ok = ref_of(win)->sched_th == NBR_AINT_MAX && win_info_is(win, "nbrma_sched", "off");
    MPI_Win_free(&win);
    tap_ok(ok, "no key, no NBRMA_SCHED: the scheduler is off");

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    win = make_win("on", NULL, &mem, node);
    w = ref_of(win);
    ok = w->sched && w->sched_th == NBR_AINT_MAX;
    MPI_Win_lock_all(0, win);
    int nme;
    MPI_Comm_rank(node, &nme);
    if (nme == 0) {
        MPI_Put(src, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
        ok &= nbr_pending_calls(w, 1) == 0;
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    tap_ok(ok, "a window within one node holds nothing (no inter-node transfer to overlap)");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info_free(&on);
    MPI_Info_create(&on);
    MPI_Info_set(on, "nbrma_sched_th", "12Q");
    MPI_Win win2 = MPI_WIN_NULL;
    rc = MPI_Win_allocate(BIG, 1, on, MPI_COMM_WORLD, &mem, &win2);
    MPI_Error_class(rc, &cls);
    ok = cls == MPI_ERR_INFO_VALUE && win2 == MPI_WIN_NULL;
    MPI_Info_free(&on);
    const char *saved = nbr_cfg.SCHED;
    nbr_cfg.SCHED = "maybe";
    rc = MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win2);
    nbr_cfg.SCHED = saved;
    MPI_Error_class(rc, &cls);
    ok &= cls == MPI_ERR_ARG && win2 == MPI_WIN_NULL;
    tap_ok(ok, "creation refuses nbrma_sched_th=12Q (MPI_ERR_INFO_VALUE) and NBRMA_SCHED=maybe "
               "(MPI_ERR_ARG)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *rpn = getenv("NBRMA_RANKS_PER_NODE"), *sched = getenv("NBRMA_SCHED");
    if (!rpn || strcmp(rpn, "2") != 0 || n != 4 || (sched && *sched))
        tap_bail_out("run on 4 ranks with NBRMA_RANKS_PER_NODE=2 and NBRMA_SCHED unset (see "
                     "ref/tests/testlist)");
    tap_plan(14);
    passive();
    active();
    settings();
    tap_done();
    MPI_Finalize();
    return 0;
}
