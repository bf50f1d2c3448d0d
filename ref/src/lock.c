/* lock.c — the lock words of passive target synchronization (paper 001 §2.3's two-level lock).
 *
 * Each rank's control block holds a local reader-writer word (writer bit | reader count); rank
 * 0's also holds the global word (lock_all holders in the low half | ranks holding an exclusive
 * lock in the high half). A shared lock is one atomic increment of the target's local word; an
 * exclusive lock first registers in the global word (only while no lock_all is held), then
 * takes the local word's writer bit; lock_all is one increment of the global word (only while
 * no exclusive lock is held). Every function here is one nonblocking try: the progress engine
 * (epoch.c, step 6 of 000 §VII-D) retries until it succeeds, so an ilock never blocks and a
 * lock grant is what turns a lock epoch ready. The accumulate lock serializes accumulate-family
 * work on one target (element-wise atomicity), a chunk of at most NBR_ACC_CHUNK bytes at a time. */
#include <sched.h>

#include "nbr.h"
#include "transport/tp.h"

#define NBR_GLOBAL_EXCL        (UINT64_C(1) << 32)
#define NBR_GLOBAL_SHARED_MASK (NBR_GLOBAL_EXCL - 1)

/* Each try is one atomic through the transport seam (transport/tp.h): a CPU atomic on a shm
 * peer's word, a round trip toward a remote one — then the try returns 0 until the old value is
 * back in the epoch's cell, and the engine asks again. The shm branch calls the CPU atomic on the
 * target's word directly (the lock fast path: one predictable test longer than before the seam). */

/* Add `add` to *word if no conflicting holder ((word & busy_mask) == 0). */
static inline int try_add(uint64_t *word, uint64_t add, uint64_t busy_mask)
{
    return !(nbr_tp_amo_shm(word, NBR_AMO_CADD, add, busy_mask) & busy_mask);
}

int nbr_try_lock_shared(nbr_win_t *w, int r, nbr_tp_cell_t *c)
{
    const nbr_target_t *t = &w->t[r];
    if (NBR_LIKELY(!nbr_tp_remote(t)))
        return try_add(&t->ctl->lock, 1, NBR_LOCK_WRITER);
    uint64_t old;
    return nbr_tp_amo(w, r, NBR_W_LOCK, NBR_AMO_CADD, 1, NBR_LOCK_WRITER, c, &old) &&
           !(old & NBR_LOCK_WRITER);
}

/* The first exclusive lock a rank holds keeps lock_all out through the global word. */
int nbr_try_lock_global_excl(nbr_win_t *w, nbr_tp_cell_t *c)
{
    if (w->excl_global && c->state == NBR_CELL_IDLE) {
        w->excl_global++;
        return 1;
    }
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[0]))) {
        if (!try_add(&w->t[0].ctl->global, NBR_GLOBAL_EXCL, NBR_GLOBAL_SHARED_MASK))
            return 0;
        w->excl_global = 1;
        return 1;
    }
    uint64_t old;
    if (!nbr_tp_amo(w, 0, NBR_W_GLOBAL, NBR_AMO_CADD, NBR_GLOBAL_EXCL, NBR_GLOBAL_SHARED_MASK, c,
                    &old) ||
        (old & NBR_GLOBAL_SHARED_MASK))
        return 0;
    /* Remote tries of two epochs may both be in flight: one registration is ours to keep. */
    if (w->excl_global)
        nbr_tp_amo(w, 0, NBR_W_GLOBAL, NBR_AMO_FADD, (uint64_t)0 - NBR_GLOBAL_EXCL, 0, NULL, NULL);
    w->excl_global++;
    return 1;
}

int nbr_try_lock_writer(nbr_win_t *w, int r, nbr_tp_cell_t *c)
{
    const nbr_target_t *t = &w->t[r];
    if (NBR_LIKELY(!nbr_tp_remote(t))) {
        return nbr_tp_amo_shm(&t->ctl->lock, NBR_AMO_CAS, NBR_LOCK_WRITER, 0) == 0;
    }
    uint64_t old;
    return nbr_tp_amo(w, r, NBR_W_LOCK, NBR_AMO_CAS, NBR_LOCK_WRITER, 0, c, &old) && old == 0;
}

int nbr_try_lock_all(nbr_win_t *w, nbr_tp_cell_t *c)
{
    if (NBR_LIKELY(!nbr_tp_remote(&w->t[0])))
        return try_add(&w->t[0].ctl->global, 1, ~NBR_GLOBAL_SHARED_MASK);
    uint64_t old;
    return nbr_tp_amo(w, 0, NBR_W_GLOBAL, NBR_AMO_CADD, 1, ~NBR_GLOBAL_SHARED_MASK, c, &old) &&
           !(old & ~NBR_GLOBAL_SHARED_MASK);
}

void nbr_unlock_shared(nbr_win_t *w, int r)
{
    nbr_tp_amo_nr(w, r, NBR_W_LOCK, NBR_AMO_FADD, (uint64_t)-1);
}

void nbr_unlock_writer(nbr_win_t *w, int r)
{
    nbr_tp_amo_nr(w, r, NBR_W_LOCK, NBR_AMO_SWAP, 0);
    if (!--w->excl_global)
        nbr_tp_amo_nr(w, 0, NBR_W_GLOBAL, NBR_AMO_FADD, (uint64_t)0 - NBR_GLOBAL_EXCL);
}

/* nbr_unlock_writer in two halves (an exclusive lock across nodes, epoch.c's remote_done): the
 * target's word, then the registration in the global word. */
void nbr_unlock_target(nbr_win_t *w, int r)
{
    nbr_tp_amo_nr(w, r, NBR_W_LOCK, NBR_AMO_SWAP, 0);
}

void nbr_unlock_global_excl(nbr_win_t *w)
{
    if (!--w->excl_global)
        nbr_tp_amo_nr(w, 0, NBR_W_GLOBAL, NBR_AMO_FADD, (uint64_t)0 - NBR_GLOBAL_EXCL);
}

void nbr_unlock_all_word(nbr_win_t *w)
{
    nbr_tp_amo_nr(w, 0, NBR_W_GLOBAL, NBR_AMO_FADD, (uint64_t)-1);
}

/* A ticket lock: take a ticket, wait for it to be served. First come, first served, which is
 * what chunked accumulates (rma.c) rely on: a waiter queued while a large accumulate works on a
 * chunk gets the lock before that accumulate's next chunk. The wait spins, then yields. The
 * holder may be an origin on another node (NBRMA_ACC=hw, ucx.c's hw_acc): over UCX's TCP its get,
 * put and release need this process's worker, which the wait therefore progresses. */
void nbr_acc_lock(nbr_target_t *t, int me)
{
    (void)me;
    uint32_t ticket = __atomic_fetch_add(&t->ctl->acc_next, 1, __ATOMIC_RELAXED);
    long spins = 0;
    while (__atomic_load_n(&t->ctl->acc_serving, __ATOMIC_ACQUIRE) != ticket)
        if (++spins > __atomic_load_n(&nbr_spin, __ATOMIC_RELAXED)) {
#if NBR_HAVE_UCX
            nbr_ucx_poke();
#endif
            nbr_relax();
        }
}

/* Only the holder writes acc_serving. */
void nbr_acc_unlock(nbr_target_t *t)
{
    uint32_t s = __atomic_load_n(&t->ctl->acc_serving, __ATOMIC_RELAXED);
    __atomic_store_n(&t->ctl->acc_serving, s + 1, __ATOMIC_RELEASE);
}

/* ---- the queued lock (NBRMA_LOCK=queued; paper 004 §III-C2, F5) ------------------------------
 *
 * 004 compares lock polling (foMPI, and the two-level lock above: an origin retries the target's
 * word until it is free, traffic at the target all the while, no order among waiters) with queued
 * locks (MPICH, MVAPICH: an origin asks once and waits; the holder's release grants the next in
 * FIFO order; O(P) memory for the queue). Here the queue is an MCS list (Mellor-Crummey and Scott,
 * ACM TOCS 9(1), 1991), so that it needs no CPU at the target either: the target's control block
 * holds the tail (qtail, the last origin's rank + 1), every process's holds one queue node per
 * target (nbr_qnode_t: 16 bytes per peer, and one more for the global word's queue below). An
 * exclusive lock swaps itself into the target's tail (one atomic at the target), writes its rank
 * into its predecessor's node (one write there) and then waits on its own node's grant word — in
 * its own memory: no traffic while it waits. The release hands the lock on: it grants its
 * successor, or swings the tail back to empty with one compare-and-swap when it has none (and waits
 * for the successor's link when one swapped in meanwhile).
 *
 * Exclusion itself stays with the writer bit of the target's word: the head of the queue takes it
 * as every exclusive lock does (nbr_try_lock_writer). It is free at once unless shared holders,
 * or an origin that polls (a process whose setting differs), have it; the grant may also arrive
 * before the releasing holder's writer bit is cleared (another path), and the head then polls a
 * few times. So the queue decides the order and where origins wait, never whether two hold the
 * lock at once.
 *
 * Shared locks queue too (a reader-writer queue, as Mellor-Crummey and Scott's fair reader-writer
 * lock orders its waiters): a reader swaps itself in and waits for its grant like a writer, then
 * takes the reader count of the target's word — and as soon as it holds the lock it hands the
 * queue on (epoch.c's try_lock), instead of at its unlock. Readers in a row so come in one after
 * the other without waiting for each other's unlock and share the lock; a writer that reaches the
 * head behind them polls the writer bit until the last of them has left (one origin polls, not
 * every waiter); readers that come after a waiting writer queue behind it, so writers are not
 * starved by a stream of readers, which the polling lock allows.
 *
 * The global word (001 §2.3, at rank 0) has a queue of its own, queue `size`: its tail is rank
 * 0's gqtail, every process's node for it qnode[size]. lock_all and the registration of an
 * exclusive lock (the first one a process holds: nbr_try_global_queued) wait in it, and both pass
 * it on as soon as they hold their share of the word, as a reader does at a target: lock_all
 * holders share the word, and so do registered exclusive lockers, but the two kinds exclude each
 * other, so the head of the queue polls the word until the other kind has left — one origin
 * polls, not every waiter — and whoever asks after it waits behind it (neither kind starves the
 * other, which the polling word allows).
 *
 * Both halves are steps the progress engine repeats (epoch.c), like every try here: a remote
 * atomic's result comes back in a cell, a wait is a load of a local word. */

static int q_rank_ok(const nbr_win_t *w, uint64_t v)
{
    return v >= 1 && v <= (uint64_t)w->size;
}

/* Queue t: target t's (t < size), or the global word's (t == size: its tail at rank 0, my node
 * qnode[size], its hand-off state beside rank 0's, nbr_lockq). */
static int tail_amo(nbr_win_t *w, int t, int op, uint64_t a, uint64_t b, nbr_tp_cell_t *c,
                    uint64_t *old)
{
    const int owner = t < w->size ? t : 0, word = t < w->size ? NBR_W_QTAIL : NBR_W_GQTAIL;
    if (!nbr_tp_remote(&w->t[owner])) {
        nbr_ctl_t *ctl = w->t[owner].ctl;
        *old = nbr_tp_amo_shm(t < w->size ? &ctl->qtail : &ctl->gqtail, op, a, b);
        return 1;
    }
    return nbr_tp_amo(w, owner, word, op, a, b, c, old);
}

/* The queue steps of queue t (*qstep from 0): 1 once I am at its head (*qstep 3). */
static int queue_enter(nbr_win_t *w, int t, unsigned char *qstep, nbr_tp_cell_t *cell)
{
    nbr_lockq_t *q = nbr_lockq(w, t); /* exists: made with the peer state (epoch.c, peer_q) */
    nbr_qnode_t *mine = &nbr_ctl_qnodes(w->ctl, w->size)[t];
    uint64_t me = (uint64_t)w->rank + 1, pred;
    if (*qstep == 0) {
        if (q->hstate != NBR_HO_NONE) /* my node is still in the queue (an earlier epoch) */
            return 0;
        __atomic_store_n(&mine->next, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&mine->grant, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my node is clear before anyone can see it */
        q->hstate = NBR_HO_QUEUED;
        *qstep = 1;
    }
    if (*qstep == 1) {
        if (!tail_amo(w, t, NBR_AMO_SWAP, me, 0, cell, &pred))
            return 0;
        if (pred && q_rank_ok(w, pred)) {
            nbr_tgt(w, (int)(pred - 1)); /* a rank I may not have used (a lazy window makes it) */
            nbr_tp_amo_nr(w, (int)(pred - 1), NBR_W_QNEXT(t), NBR_AMO_SWAP, me);
            *qstep = 2;
        } else {
            *qstep = 3; /* the queue was empty (a value no rank has cannot be waited for) */
        }
    }
    if (*qstep == 2) {
        if (!__atomic_load_n(&mine->grant, __ATOMIC_ACQUIRE))
            return 0;
        *qstep = 3;
    }
    return 1;
}

int nbr_try_lock_queued(nbr_win_t *w, nbr_epoch_t *e)
{
    int t = e->target;
    if (!queue_enter(w, t, &e->qstep, &e->cell))
        return 0;
    if (e->lock_type == MPI_LOCK_SHARED) /* a reader at the head: the reader count (epoch.c then
                                            passes the queue on) */
        return nbr_try_lock_shared(w, t, &e->cell);
    return nbr_try_lock_writer(w, t, &e->cell);
}

/* The global word through its queue: lock_all, or an exclusive lock's registration (1 when this
 * process holds its part of the word; epoch.c then passes the queue on at once). A registration
 * while another exclusive lock of mine is registered needs no queue. */
int nbr_try_global_queued(nbr_win_t *w, nbr_epoch_t *e)
{
    if (e->kind == NBR_EK_LOCK && w->excl_global && e->qstep == 0 &&
        e->cell.state == NBR_CELL_IDLE) {
        w->excl_global++;
        return 1;
    }
    if (!queue_enter(w, w->size, &e->qstep, &e->cell))
        return 0;
    return e->kind == NBR_EK_LOCK_ALL ? nbr_try_lock_all(w, &e->cell)
                                      : nbr_try_lock_global_excl(w, &e->cell);
}

/* One step of handing the lock of queue t on (q->hstate from NBR_HO_START): 1 when my node has
 * left the queue. */
int nbr_lock_handoff(nbr_win_t *w, int t)
{
    nbr_lockq_t *q = nbr_lockq(w, t);
    nbr_qnode_t *mine = &nbr_ctl_qnodes(w->ctl, w->size)[t];
    uint64_t me = (uint64_t)w->rank + 1, next = 0, old;
    switch (q->hstate) {
    case NBR_HO_START:
        if ((next = __atomic_load_n(&mine->next, __ATOMIC_ACQUIRE)))
            break;
        q->hstate = NBR_HO_CAS;
        /* fall through */
    case NBR_HO_CAS: /* no successor yet: swing the tail back to empty if it is still me */
        if (!tail_amo(w, t, NBR_AMO_CAS, 0, me, &q->hcell, &old))
            return 0;
        if (old == me) {
            q->hstate = NBR_HO_NONE;
            return 1;
        }
        q->hstate = NBR_HO_NEXT;
        /* fall through */
    case NBR_HO_NEXT: /* a successor swapped itself in: its link is on its way */
        if (!(next = __atomic_load_n(&mine->next, __ATOMIC_ACQUIRE)))
            return 0;
        break;
    default:
        return 1;
    }
    if (q_rank_ok(w, next)) {
        nbr_tgt(w, (int)(next - 1)); /* as the predecessor above */
        nbr_tp_amo_nr(w, (int)(next - 1), NBR_W_QGRANT(t), NBR_AMO_SWAP, 1);
    }
    q->hstate = NBR_HO_NONE;
    return 1;
}
