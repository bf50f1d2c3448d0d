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
