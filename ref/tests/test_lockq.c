/* test_lockq.c — the queued lock (NBRMA_LOCK / nbrma_lock=queued; paper 004 §III-C2, F5; lock.c).
 *
 * 1. The info key: MPI_Win_get_info reports the strategy in force, a bad value is refused with
 *    MPI_ERR_INFO_VALUE at creation and in MPI_Win_set_info, and MPI_Win_set_info cannot switch
 *    it (the queue nodes are laid out at creation).
 * 2. Memory: MPIX_Win_get_stats' lock_queue holds one node per target and one for the global
 *    word's queue under queued, nothing under polling, and the control block grows by that.
 * 3. FIFO order (3 or more ranks): rank 0 holds its own window's exclusive lock; rank 1 queues
 *    behind it, then rank 2 behind rank 1 — each step checked in the target's queue itself (its
 *    tail word and its node's link), so nothing is left to timing. Rank 0 unlocks; rank 1 then
 *    sleeps before it waits for its lock while rank 2 waits at once. A queue hands the lock to
 *    rank 1 first whatever rank 2 does (a polling lock would let rank 2 in during the sleep): each
 *    takes a ticket with MPI_Fetch_and_op under the lock, rank 1 must hold 0, rank 2 1.
 * 4. Exclusion when the ranks' strategies differ (even ranks queued, odd ones polling): every rank
 *    increments one counter by get + flush + put under exclusive locks; the sum is exact.
 *    The same with rank 2 asking for a shared lock: a reader queues behind a waiting writer.
 * 5. Lock epochs of one origin back to back without waiting (nonblocking: ilock, put, iunlock,
 *    ilock, ...): a later epoch waits for the earlier one's node to leave the queue.
 * 6. Readers share through the queue: a queued shared lock is granted while another reader holds
 *    the lock (a reader passes the queue on when it gets the lock), and the queue empties.
 * 7. On one node a hand-off finishes in the releasing call, even when the successor's link comes
 *    late: the releaser may block in MPI_Recv next, where nothing runs the engine.
 * 8. The global word's queue: rank 1's lock_all, waiting for rank 0's exclusive lock to leave,
 *    goes before rank 2's exclusive lock that asked after it (global_fifo).
 * Run on one node and across virtual nodes (am, ucx): ref/tests/testlist. */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nbr.h"
#include "nbrma.h"
#include "relax.h"
#include "tap.h"
#include "timing.h"
#include "win_stats.h"

#define ITERS 200
#define BACK  8

static MPI_Win make(const char *lock, long **base)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (lock)
        MPI_Info_set(info, "nbrma_lock", lock);
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(4 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, base, &win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        tap_bail_out("MPI_Win_allocate with nbrma_lock=%s failed", lock ? lock : "(none)");
    memset(*base, 0, 4 * sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

/* Progress until *word (in this process's memory) equals want, for at most the suite's scaled
 * limit: a fatal failure names what did not happen. */
static void await_word(const uint64_t *word, uint64_t want, const char *what)
{
    double end = MPI_Wtime() + nbh_limit(60.0);
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != want) {
        nbr_progress();
        if (MPI_Wtime() > end)
            tap_bail_out("%s: the word is %llu, not %llu", what,
                         (unsigned long long)__atomic_load_n(word, __ATOMIC_ACQUIRE),
                         (unsigned long long)want);
        sched_yield();
    }
}

/* Test *req while waiting for a zero-byte message from rank `from` (tag 7). */
static void test_until_told(MPI_Request *req, int from)
{
    MPI_Request m;
    int got = 0, done = 0;
    MPI_Irecv(NULL, 0, MPI_BYTE, from, 7, MPI_COMM_WORLD, &m);
    while (!got) {
        MPI_Test(&m, &got, MPI_STATUS_IGNORE);
        if (!got && !done && *req != MPI_REQUEST_NULL)
            MPI_Test(req, &done, MPI_STATUS_IGNORE);
        sched_yield();
    }
    if (done) /* rank 0 unlocks only after my answer */
        tap_bail_out("the queued lock was granted while rank 0 still held it");
    MPI_Send(NULL, 0, MPI_BYTE, from, 9, MPI_COMM_WORLD);
}

/* 3. FIFO order through the queue of rank 0: rank 1 queues an exclusive lock behind rank 0's,
 * rank 2 a lock of type `type2` behind rank 1. */
static void fifo(MPI_Win wq, long *qb, int me, int p, int type2)
{
    const char *what = type2 == MPI_LOCK_SHARED ? "a shared lock" : "an exclusive lock";
    if (p < 3) {
        tap_skip(1, "FIFO order needs 3 ranks");
    } else {
        nbr_win_t *w = nbr_win_find(wq);
        long ticket = -1, one = 1;
        MPI_Request req = MPI_REQUEST_NULL;
        if (me == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wq);
            qb[0] = 0; /* the ticket counter, under my own exclusive lock */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            nbr_qnode_t *mine = &nbr_ctl_qnodes(w->ctl, p)[0];
            await_word(&w->ctl->qtail, 1, "rank 0 at the tail of its own queue");
            MPI_Send(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD); /* rank 1: queue */
            await_word(&mine->next, 2, "rank 1 linked behind rank 0");
            await_word(&w->ctl->qtail, 2, "rank 1 at the tail");
            MPI_Send(NULL, 0, MPI_BYTE, 2, 8, MPI_COMM_WORLD); /* rank 2: queue */
            await_word(&w->ctl->qtail, 3, "rank 2 at the tail");
            MPI_Send(NULL, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD); /* both: stop testing */
            MPI_Send(NULL, 0, MPI_BYTE, 2, 7, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 2, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_unlock(0, wq);
        } else if (me <= 2) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPIX_Win_ilock(me == 2 ? type2 : MPI_LOCK_EXCLUSIVE, 0, 0, wq, &req);
            test_until_told(&req, 0); /* my swap and my link need my progress (am) */
            if (me == 1)
                usleep(200000); /* a polling rank 2 would take the lock now (a shared one too) */
            if (req != MPI_REQUEST_NULL)
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 0, MPI_SUM, wq);
            MPI_Win_unlock(0, wq);
        }
        long t1 = ticket;
        MPI_Bcast(&t1, 1, MPI_LONG, 1, MPI_COMM_WORLD);
        long t2 = ticket;
        MPI_Bcast(&t2, 1, MPI_LONG, 2, MPI_COMM_WORLD);
        tap_ok(t1 == 0 && t2 == 1,
               "the queue grants in FIFO order, %s behind an exclusive one: rank 1 took ticket "
               "%ld (want 0), rank 2 %ld (want 1)",
               what, t1, t2);
    }
}

/* 8. The global word's queue: lock_all and the registration of exclusive locks (001 §2.3's
 * global word, at rank 0) wait in one FIFO queue. Rank 0 holds an exclusive lock (registered in
 * the global word); rank 1's lock_all queues (the head: it polls the word until rank 0 leaves);
 * rank 2's exclusive lock on its own window queues behind it — the queue's tail at rank 0 is
 * checked each time. Polling, rank 2's registration would be granted at once (exclusive locks of
 * different targets share the word), and it would take the ticket at rank 2 first; queued, rank 1
 * goes first even though it sleeps 200 ms before it waits. */
static void global_fifo(MPI_Win wq, long *qb, int me, int p)
{
    if (p < 3) {
        tap_skip(1, "FIFO order needs 3 ranks");
        return;
    }
    nbr_win_t *w = nbr_win_find(wq);
    long ticket = -1, one = 1;
    int early = 0; /* my lock was granted while rank 0 still held its exclusive lock */
    if (me == 2)
        qb[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wq);
        await_word(&w->ctl->gqtail, 0, "rank 0's registration passed the global queue on");
        MPI_Send(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD); /* rank 1: lock_all */
        await_word(&w->ctl->gqtail, 2, "rank 1's lock_all at the global queue's tail");
        MPI_Send(NULL, 0, MPI_BYTE, 2, 8, MPI_COMM_WORLD); /* rank 2: exclusive lock */
        await_word(&w->ctl->gqtail, 3, "rank 2's registration behind rank 1");
        MPI_Send(NULL, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_BYTE, 2, 7, MPI_COMM_WORLD);
        MPI_Recv(&early, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int e2 = 0;
        MPI_Recv(&e2, 1, MPI_INT, 2, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        early |= e2;
        MPI_Win_unlock(0, wq);
    } else if (me <= 2) {
        MPI_Request req = MPI_REQUEST_NULL, m;
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (me == 1)
            MPIX_Win_ilock_all(0, wq, &req);
        else
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 2, 0, wq, &req);
        int got = 0;
        MPI_Irecv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &m);
        while (!got) { /* my swap and my link need my progress (am) */
            MPI_Test(&m, &got, MPI_STATUS_IGNORE);
            if (!got && !early && req != MPI_REQUEST_NULL)
                MPI_Test(&req, &early, MPI_STATUS_IGNORE);
            nbh_relax();
        }
        MPI_Send(&early, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
        if (me == 1)
            usleep(200000); /* a polling rank 2 would take the lock now */
        if (req != MPI_REQUEST_NULL)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 2, 0, MPI_SUM, wq);
        if (me == 1)
            MPI_Win_unlock_all(wq);
        else
            MPI_Win_unlock(2, wq);
    }
    MPI_Bcast(&early, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long t1 = ticket;
    MPI_Bcast(&t1, 1, MPI_LONG, 1, MPI_COMM_WORLD);
    long t2 = ticket;
    MPI_Bcast(&t2, 1, MPI_LONG, 2, MPI_COMM_WORLD);
    tap_ok(!early && t1 == 0 && t2 == 1,
           "the global queue grants in FIFO order: rank 1's lock_all took ticket %ld (want 0), "
           "rank 2's exclusive lock %ld (want 1)%s",
           t1, t2, early ? "; a lock was granted while rank 0 held its exclusive lock" : "");
}

/* 6. Readers share through the queue: rank 0 holds a shared lock on its own window; rank 1's
 * shared lock is granted while rank 0 still holds it (a reader hands the queue on as soon as it
 * holds the lock, not at its unlock), and the queue is empty again once both hold. */
static void readers(MPI_Win wq, int me)
{
    nbr_win_t *w = nbr_win_find(wq);
    int granted = 0;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wq);
        await_word(&w->ctl->qtail, 0, "rank 0's queue empty once its reader holds the lock");
        MPI_Send(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD); /* rank 1: lock shared */
        MPI_Request m;
        MPI_Irecv(&granted, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &m);
        int got = 0;
        while (!got) { /* progress for rank 1's swap and lock (am) while holding the lock */
            MPI_Test(&m, &got, MPI_STATUS_IGNORE);
            sched_yield();
        }
        MPI_Win_unlock(0, wq);
    } else if (me == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request req;
        MPIX_Win_ilock(MPI_LOCK_SHARED, 0, 0, wq, &req);
        double end = MPI_Wtime() + nbh_limit(20.0);
        while (!granted && MPI_Wtime() < end) {
            MPI_Test(&req, &granted, MPI_STATUS_IGNORE);
            sched_yield();
        }
        MPI_Send(&granted, 1, MPI_INT, 0, 9, MPI_COMM_WORLD); /* rank 0 unlocks now */
        if (!granted)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Win_unlock(0, wq);
    }
    MPI_Bcast(&granted, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int empty = me != 0 || __atomic_load_n(&w->ctl->qtail, __ATOMIC_ACQUIRE) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &empty, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    tap_ok(granted && empty,
           "readers share through the queue: rank 1's shared lock granted while rank 0 held its "
           "shared lock (%d), rank 0's queue empty after both (%d)",
           granted, empty);
}

/* 7. A hand-off on one node finishes in the releasing call. Rank 1 holds the exclusive lock of its
 * own window; rank 0 plays a successor caught between its two steps: it swaps itself into rank
 * 1's tail by hand and writes its link only later. Rank 1 unlocks, and then blocks in MPI_Recv
 * for a message rank 0 sends once it has been granted the lock — on one node MPI_Recv goes
 * straight to the MPI library and runs no libnbrma engine, so a hand-off left to the engine would
 * never grant it. */
static void handoff_in_call(MPI_Win wq, int me, int p)
{
    nbr_win_t *w = nbr_win_find(wq);
    int one_node = !w->nremote;
    MPI_Allreduce(MPI_IN_PLACE, &one_node, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (p < 2 || !one_node) {
        tap_skip(1, "the hand-off in the releasing call is the one-node path");
        return;
    }
    int granted = 0;
    if (me == 1)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, wq);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        nbr_ctl_t *tc = w->t[1].ctl;                       /* rank 1's control block */
        nbr_qnode_t *mine = &nbr_ctl_qnodes(w->ctl, p)[1]; /* my node in its queue */
        __atomic_store_n(&mine->next, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&mine->grant, 0, __ATOMIC_RELAXED);
        uint64_t pred = __atomic_exchange_n(&tc->qtail, 1, __ATOMIC_SEQ_CST); /* my swap */
        MPI_Send(NULL, 0, MPI_BYTE, 1, 10, MPI_COMM_WORLD); /* rank 1: unlock now */
        usleep(100000); /* rank 1 is in its hand-off by now, waiting for my link */
        __atomic_store_n(&nbr_ctl_qnodes(tc, p)[1].next, pred == 2 ? 1 : 0, __ATOMIC_RELEASE);
        double end = MPI_Wtime() + nbh_limit(10.0);
        while (!(granted = (int)__atomic_load_n(&mine->grant, __ATOMIC_ACQUIRE)) &&
               MPI_Wtime() < end)
            sched_yield();
        uint64_t me1 = 1; /* leave the queue as its last member */
        __atomic_compare_exchange_n(&tc->qtail, &me1, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        MPI_Send(&granted, 1, MPI_INT, 1, 11, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_unlock(1, wq);
        MPI_Recv(&granted, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&granted, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (double end = MPI_Wtime() + nbh_limit(10.0); w->nhandoff && MPI_Wtime() < end;)
        nbr_progress(); /* without the fix, the hand-off is still pending: let it go */
    MPI_Barrier(MPI_COMM_WORLD);
    tap_ok(granted, "one node: the unlock hands the lock to a successor whose link came late "
                    "before it returns (the successor granted while the releaser sat in "
                    "MPI_Recv)");
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
    tap_plan(13);

    /* 1. the info key */
    long *qb, *pb;
    MPI_Win wq = make("queued", &qb), wp = make("polling", &pb);
    tap_ok(win_info_is(wq, "nbrma_lock", "queued") && win_info_is(wp, "nbrma_lock", "polling"),
           "MPI_Win_get_info reports nbrma_lock=queued and =polling as created");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "nbrma_lock", "fifo");
    long *xb;
    MPI_Win wx = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(8, 8, bad, MPI_COMM_WORLD, &xb, &wx), cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    int refused = cls == MPI_ERR_INFO_VALUE && wx == MPI_WIN_NULL;
    if (wx != MPI_WIN_NULL)
        MPI_Win_free(&wx);
    MPI_Win_set_errhandler(wq, MPI_ERRORS_RETURN);
    int rc2 = MPI_Win_set_info(wq, bad), cls2 = -1;
    if (rc2 != MPI_SUCCESS)
        MPI_Error_class(rc2, &cls2);
    MPI_Info_set(bad, "nbrma_lock", "polling");
    int rc3 = MPI_Win_set_info(wq, bad);
    MPI_Info_free(&bad);
    tap_ok(refused && cls2 == MPI_ERR_INFO_VALUE,
           "nbrma_lock=fifo is refused with MPI_ERR_INFO_VALUE at creation (%d) and in "
           "MPI_Win_set_info (%d)",
           cls, cls2);
    tap_ok(rc3 == MPI_SUCCESS && win_info_is(wq, "nbrma_lock", "queued"),
           "MPI_Win_set_info(nbrma_lock=polling) keeps the queued lock of the creation");

    /* 2. memory */
    MPIX_Win_stats sq = win_stats(wq), sp = win_stats(wp);
    long long node = (long long)sizeof(nbr_qnode_t), nq = p + 1;
    tap_ok(sq.lock_queue.count == nq && sq.lock_queue.bytes == nq * node &&
               sq.lock_queue.bytes_hwm == nq * node && sp.lock_queue.count == 0 &&
               sp.lock_queue.bytes == 0,
           "lock_queue: %lld nodes, %lld bytes queued (want %lld, %lld); %lld, %lld polling",
           sq.lock_queue.count, sq.lock_queue.bytes, nq, nq * node, sp.lock_queue.count,
           sp.lock_queue.bytes);
    tap_ok(sq.ctl_bytes - sp.ctl_bytes >= nq * node &&
               sq.ctl_bytes - sp.ctl_bytes < nq * node + NBR_CACHELINE,
           "the control block holds the queue nodes (%lld more bytes)",
           sq.ctl_bytes - sp.ctl_bytes);

    fifo(wq, qb, me, p, MPI_LOCK_EXCLUSIVE);
    fifo(wq, qb, me, p, MPI_LOCK_SHARED);
    readers(wq, me);
    handoff_in_call(wq, me, p);
    global_fifo(wq, qb, me, p);
    MPI_Win_free(&wq);
    MPI_Win_free(&wp);

    /* 4. exclusion with mixed strategies */
    long *mb;
    MPI_Win wm = make(me % 2 ? "polling" : "queued", &mb);
    for (int i = 0; i < ITERS; i++) {
        long v = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wm);
        MPI_Get(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, wm);
        MPI_Win_flush(0, wm);
        v++;
        MPI_Put(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, wm);
        MPI_Win_unlock(0, wm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long sum = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wm);
    MPI_Get(&sum, 1, MPI_LONG, 0, 1, 1, MPI_LONG, wm);
    MPI_Win_unlock(0, wm);
    tap_ok(sum == (long)p * ITERS,
           "even ranks queued, odd ones polling: %ld increments under exclusive locks (want %ld)",
           sum, (long)p * ITERS);
    MPI_Win_free(&wm);

    /* 5. back-to-back lock epochs of one origin, nonblocking */
    long *bb;
    MPI_Win wb = make("queued", &bb);
    MPI_Request r[2 * BACK];
    MPI_Status st[2 * BACK];
    long vals[BACK];
    int target = (me + 1) % p, ok = 1;
    for (int i = 0; i < BACK; i++) {
        vals[i] = 1000 * me + i;
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, wb, &r[2 * i]);
        MPI_Put(&vals[i], 1, MPI_LONG, target, 2, 1, MPI_LONG, wb);
        MPIX_Win_iunlock(target, wb, &r[2 * i + 1]);
    }
    ok = MPI_Waitall(2 * BACK, r, st) == MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    int from = (me + p - 1) % p;
    long got = __atomic_load_n(&bb[2], __ATOMIC_ACQUIRE);
    tap_ok(ok && got == 1000 * from + BACK - 1,
           "%d lock epochs back to back toward one target complete, the last put last (%ld)", BACK,
           got);
    nbr_win_t *w = nbr_win_find(wb);
    double end = MPI_Wtime() + nbh_limit(60.0);
    while (w->nhandoff && MPI_Wtime() < end) /* a last CAS of a tail may still be on its way */
        nbr_progress();
    MPI_Barrier(MPI_COMM_WORLD);
    tap_ok(w->nhandoff == 0 && __atomic_load_n(&w->ctl->qtail, __ATOMIC_ACQUIRE) == 0,
           "every lock handed on, every queue empty again");
    MPI_Win_free(&wb);
    int rc_all = tap_done();
    MPI_Finalize();
    return rc_all;
}
