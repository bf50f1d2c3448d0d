/* lock.c — passive target synchronization: lock/unlock, lock_all/unlock_all, flush, sync.
 *
 * The two-level lock of paper 001 §2.3. Each rank's control block holds a local reader-writer
 * word (writer bit | reader count); rank 0's also holds the global word (lock_all holders in the
 * low half | ranks holding an exclusive lock in the high half). A shared lock is one atomic
 * increment of the target's local word; an exclusive lock first registers in the global word
 * (only while no lock_all is held), then takes the local word's writer bit; lock_all is one
 * increment of the global word (only while no exclusive lock is held). Waiting polls and
 * yields. Operations complete inside their calls, so flush is a memory fence (001: "all flush
 * operations share the same implementation") and unlock a fence plus the release. */
#include "nbr.h"

#define NBR_GLOBAL_EXCL        (UINT64_C(1) << 32)
#define NBR_GLOBAL_SHARED_MASK (NBR_GLOBAL_EXCL - 1)

typedef struct {
    uint64_t *word;
    uint64_t add, busy_mask; /* increment to apply once (word & busy_mask) == 0 */
} acquire_t;

/* One try: add `add` if no conflicting holder; optimistic increment, undone on conflict. */
static int try_acquire(void *arg)
{
    acquire_t *a = arg;
    uint64_t v = __atomic_load_n(a->word, __ATOMIC_RELAXED);
    while (!(v & a->busy_mask))
        if (__atomic_compare_exchange_n(a->word, &v, v + a->add, 1, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
    return 0;
}

static void acquire(uint64_t *word, uint64_t add, uint64_t busy_mask)
{
    acquire_t a = {word, add, busy_mask};
    if (!try_acquire(&a))
        nbr_wait_until(try_acquire, &a);
}

static int try_writer(void *arg)
{
    uint64_t zero = 0;
    return __atomic_compare_exchange_n((uint64_t *)arg, &zero, NBR_LOCK_WRITER, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

void nbr_acc_lock(nbr_target_t *t, int me)
{
    uint64_t zero = 0;
    if (NBR_LIKELY(__atomic_compare_exchange_n(&t->ctl->acc, &zero, (uint64_t)me + 1, 0,
                                               __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
        return;
    acquire(&t->ctl->acc, (uint64_t)me + 1, ~UINT64_C(0));
}

void nbr_acc_unlock(nbr_target_t *t)
{
    __atomic_store_n(&t->ctl->acc, 0, __ATOMIC_RELEASE);
}

int nbr_lock(nbr_win_t *w, int type, int rank, int assert)
{
    static const char call[] = "MPI_Win_lock";
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return nbr_err(w, call, MPI_ERR_LOCKTYPE,
                       "lock_type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return nbr_err(w, call, MPI_ERR_RANK, "rank %d is not in the window's group of %d", rank,
                       w->size);
    if (assert & ~MPI_MODE_NOCHECK)
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits lock does not define",
                       assert);
    nbr_target_t *t = &w->t[rank];
    if (t->locked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "rank %d is already locked by this process "
                       "(nested lock)",
                       rank);
    if (w->access == NBR_EP_PSCW || w->access == NBR_EP_LOCK_ALL)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "an access epoch of %s is open",
                       w->access == NBR_EP_PSCW ? "MPI_Win_start" : "MPI_Win_lock_all");
    int rc = nbr_fence_yield(w, call);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(assert & MPI_MODE_NOCHECK)) {
        if (type == MPI_LOCK_SHARED) {
            acquire(&t->ctl->lock, 1, NBR_LOCK_WRITER);
        } else {
            if (!w->excl_global++) /* first exclusive lock: keep lock_all out (global word) */
                acquire(&w->t[0].ctl->global, NBR_GLOBAL_EXCL, NBR_GLOBAL_SHARED_MASK);
            if (!try_writer(&t->ctl->lock))
                nbr_wait_until(try_writer, &t->ctl->lock);
        }
    }
    t->locked = type == MPI_LOCK_SHARED ? NBR_LK_SHARED : NBR_LK_EXCL;
    t->locked |= (assert &MPI_MODE_NOCHECK) ? 0x80 : 0;
    w->nlocked++;
    w->access = NBR_EP_LOCK;
    return MPI_SUCCESS;
}

int nbr_unlock(nbr_win_t *w, int rank)
{
    static const char call[] = "MPI_Win_unlock";
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return nbr_err(w, call, MPI_ERR_RANK, "rank %d is not in the window's group of %d", rank,
                       w->size);
    nbr_target_t *t = &w->t[rank];
    if (!t->locked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "rank %d is not locked by this process", rank);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the epoch's operations are complete and visible */
    int nocheck = t->locked & 0x80, kind = t->locked & 0x7f;
    if (!nocheck) {
        if (kind == NBR_LK_SHARED) {
            __atomic_sub_fetch(&t->ctl->lock, 1, __ATOMIC_RELEASE);
        } else {
            __atomic_store_n(&t->ctl->lock, 0, __ATOMIC_RELEASE);
            if (!--w->excl_global)
                __atomic_sub_fetch(&w->t[0].ctl->global, NBR_GLOBAL_EXCL, __ATOMIC_RELEASE);
        }
    }
    t->locked = NBR_LK_NONE;
    if (!--w->nlocked)
        w->access = NBR_EP_NONE;
    return MPI_SUCCESS;
}

int nbr_lock_all(nbr_win_t *w, int assert)
{
    if (w->access != NBR_EP_NONE || w->nlocked)
        return nbr_err(w, "MPI_Win_lock_all", MPI_ERR_RMA_SYNC, "an access epoch is already open");
    if (assert & ~MPI_MODE_NOCHECK)
        return nbr_err(w, "MPI_Win_lock_all", MPI_ERR_ASSERT,
                       "assert 0x%x has bits lock_all does not define", assert);
    int rc = nbr_fence_yield(w, "MPI_Win_lock_all");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(assert & MPI_MODE_NOCHECK))
        acquire(&w->t[0].ctl->global, 1, ~NBR_GLOBAL_SHARED_MASK);
    w->access = NBR_EP_LOCK_ALL;
    w->lockall_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    return MPI_SUCCESS;
}

int nbr_unlock_all(nbr_win_t *w)
{
    if (w->access != NBR_EP_LOCK_ALL)
        return nbr_err(w, "MPI_Win_unlock_all", MPI_ERR_RMA_SYNC,
                       "MPI_Win_lock_all was not called");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!w->lockall_nocheck)
        __atomic_sub_fetch(&w->t[0].ctl->global, 1, __ATOMIC_RELEASE);
    w->access = NBR_EP_NONE;
    return MPI_SUCCESS;
}

int nbr_flush(nbr_win_t *w, const char *call, int rank)
{
    int any = w->access == NBR_EP_LOCK_ALL;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank == NBR_FLUSH_ALL) {
        if (!any && !w->nlocked)
            return nbr_err(w, call, MPI_ERR_RMA_SYNC, "no passive target epoch is open");
    } else if (rank < 0 || rank >= w->size) {
        return nbr_err(w, call, MPI_ERR_RANK, "rank %d is not in the window's group of %d", rank,
                       w->size);
    } else if (!any && !w->t[rank].locked) {
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "no passive target epoch toward rank %d is open",
                       rank);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_lock(w, type, rank, assert) : PMPI_Win_lock(type, rank, assert, win);
}

NBR_API int MPI_Win_unlock(int rank, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_unlock(w, rank) : PMPI_Win_unlock(rank, win);
}

NBR_API int MPI_Win_lock_all(int assert, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_lock_all(w, assert) : PMPI_Win_lock_all(assert, win);
}

NBR_API int MPI_Win_unlock_all(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_unlock_all(w) : PMPI_Win_unlock_all(win);
}

NBR_API int MPI_Win_flush(int rank, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_flush(w, "MPI_Win_flush", rank) : PMPI_Win_flush(rank, win);
}

NBR_API int MPI_Win_flush_local(int rank, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_flush(w, "MPI_Win_flush_local", rank) : PMPI_Win_flush_local(rank, win);
}

NBR_API int MPI_Win_flush_all(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_flush(w, "MPI_Win_flush_all", NBR_FLUSH_ALL) : PMPI_Win_flush_all(win);
}

NBR_API int MPI_Win_flush_local_all(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_flush(w, "MPI_Win_flush_local_all", NBR_FLUSH_ALL)
             : PMPI_Win_flush_local_all(win);
}

NBR_API int MPI_Win_sync(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_sync(win);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}
