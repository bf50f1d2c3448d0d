/* fence.c — MPI_Win_fence: complete the previous epoch everywhere, open the next one.
 * Over shared memory every operation is complete when its call returns, so a fence is a memory
 * fence plus a barrier (paper 001 §2.3: mfence + barrier, O(1) memory). The barrier is a
 * counter and a generation number in rank 0's control block: arrivals increment the counter, the
 * last one resets it and advances the generation, the others wait (yielding) for that. */
#include "nbr.h"

typedef struct {
    const uint64_t *gen;
    uint64_t seen;
} gen_wait_t;

static int gen_moved(void *arg)
{
    gen_wait_t *g = arg;
    return __atomic_load_n(g->gen, __ATOMIC_ACQUIRE) != g->seen;
}

static void shm_barrier(nbr_win_t *w)
{
    nbr_ctl_t *c0 = w->t[0].ctl;
    gen_wait_t g = {&c0->bar_gen, __atomic_load_n(&c0->bar_gen, __ATOMIC_ACQUIRE)};
    if (__atomic_add_fetch(&c0->bar_count, 1, __ATOMIC_ACQ_REL) == (uint64_t)w->size) {
        __atomic_store_n(&c0->bar_count, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&c0->bar_gen, 1, __ATOMIC_RELEASE);
        return;
    }
    nbr_wait_until(gen_moved, &g);
}

int nbr_fence(nbr_win_t *w, int assert)
{
    static const char call[] = "MPI_Win_fence";
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits fence does not define",
                       assert);
    if (w->access == NBR_EP_PSCW || w->exposure == NBR_EP_PSCW || w->access == NBR_EP_LOCK_ALL ||
        w->nlocked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "a %s epoch is open on this window; fence cannot start or end it",
                       w->nlocked || w->access == NBR_EP_LOCK_ALL ? "passive target"
                                                                  : "post/start/complete/wait");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    shm_barrier(w);
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    w->epoch_ops = 0;
    return MPI_SUCCESS;
}

int nbr_fence_yield(nbr_win_t *w, const char *call)
{
    if (w->fence_open && w->epoch_ops)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "%lu RMA call(s) were issued in the epoch the last MPI_Win_fence opened; "
                       "close it with MPI_Win_fence first (MPI_MODE_NOSUCCEED when no fence "
                       "epoch follows)",
                       w->epoch_ops);
    w->fence_open = 0;
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_fence(int assert, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_fence(w, assert) : PMPI_Win_fence(assert, win);
}
