/* pscw.c — general active target synchronization (post/start/complete/wait/test).
 *
 * Matching uses monotonic per-peer counters that are never reset (paper 000 §VII-B): the k-th
 * exposure epoch a target opens toward an origin matches the k-th access epoch that origin opens
 * toward it, whatever other epochs lie between. Post writes, one-sidedly into the origin's
 * control block, how many exposures it has opened toward it (the origin's g for this target);
 * start gives each access an id A = ++a and may proceed once A <= g. Complete increments the
 * target's completion counter for this origin; wait returns once it has counted one completion
 * per exposure it opened. Time and memory O(group size) per call, O(1) per peer pair. */
#include <stdlib.h>

#include "nbr.h"

int nbr_group_ranks(nbr_win_t *w, MPI_Group g, int **ranks, int *n)
{
    MPI_Group wg;
    int rc = PMPI_Comm_group(w->comm, &wg);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Group_size(g, n);
    int *in = malloc((size_t)*n * sizeof *in), *out = malloc((size_t)*n * sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        PMPI_Group_free(&wg);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < *n; i++)
        in[i] = i;
    rc = PMPI_Group_translate_ranks(g, *n, in, wg, out);
    free(in);
    PMPI_Group_free(&wg);
    for (int i = 0; rc == MPI_SUCCESS && i < *n; i++)
        if (out[i] == MPI_UNDEFINED)
            rc = MPI_ERR_GROUP;
    if (rc != MPI_SUCCESS) {
        free(out);
        return rc;
    }
    *ranks = out;
    return MPI_SUCCESS;
}

int nbr_pscw_post(nbr_win_t *w, MPI_Group group, int assert)
{
    static const char call[] = "MPI_Win_post";
    if (w->exposure == NBR_EP_PSCW)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "an exposure epoch is already open (call "
                       "MPI_Win_wait first)");
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits post does not define",
                       assert);
    int rc = nbr_fence_yield(w, call);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = nbr_group_ranks(w, group, &w->exp_group, &w->nexp);
    if (rc != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_GROUP, "the group has ranks outside the window");
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my local stores are visible before I expose */
    for (int i = 0; i < w->nexp; i++) {
        int o = w->exp_group[i];
        uint64_t e = ++w->t[o].e;
        __atomic_store_n(&w->t[o].peer[w->rank].posted, e, __ATOMIC_RELEASE);
    }
    w->exposure = NBR_EP_PSCW;
    return MPI_SUCCESS;
}

/* My own control block's slot for peer r: what r wrote about me. */
static inline nbr_peer_ctr_t *mine(nbr_win_t *w, int r)
{
    return &w->t[w->rank].peer[r];
}

static int all_posted(void *arg)
{
    nbr_win_t *w = arg;
    for (int i = 0; i < w->nacc; i++) {
        int t = w->acc_group[i];
        if (__atomic_load_n(&mine(w, t)->posted, __ATOMIC_ACQUIRE) < w->t[t].a)
            return 0;
    }
    return 1;
}

int nbr_pscw_start(nbr_win_t *w, MPI_Group group, int assert)
{
    static const char call[] = "MPI_Win_start";
    if (w->access != NBR_EP_NONE || w->nlocked)
        return nbr_err(w, call, MPI_ERR_RMA_SYNC, "an access epoch is already open (%s)",
                       w->access == NBR_EP_PSCW ? "call MPI_Win_complete first"
                                                : "a passive target epoch");
    if (assert & ~MPI_MODE_NOCHECK)
        return nbr_err(w, call, MPI_ERR_ASSERT, "assert 0x%x has bits start does not define",
                       assert);
    int rc = nbr_fence_yield(w, call);
    if (rc != MPI_SUCCESS)
        return rc;
    free(w->acc_group);
    w->acc_group = NULL;
    rc = nbr_group_ranks(w, group, &w->acc_group, &w->nacc);
    if (rc != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_GROUP, "the group has ranks outside the window");
    for (int i = 0; i < w->nacc; i++) {
        nbr_target_t *t = &w->t[w->acc_group[i]];
        t->a++; /* access id A_i = ++a (000 §VII-B) */
        t->in_access = 1;
    }
    w->access = NBR_EP_PSCW;
    /* With NOCHECK the application guarantees the matching posts already happened; the ids
     * still advance so later epochs stay matched. */
    if (!(assert &MPI_MODE_NOCHECK))
        nbr_wait_until(all_posted, w);
    return MPI_SUCCESS;
}

int nbr_pscw_complete(nbr_win_t *w)
{
    if (w->access != NBR_EP_PSCW)
        return nbr_err(w, "MPI_Win_complete", MPI_ERR_RMA_SYNC,
                       "no access epoch of MPI_Win_start is open");
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* my operations are visible before I say done */
    for (int i = 0; i < w->nacc; i++) {
        int r = w->acc_group[i];
        w->t[r].in_access = 0;
        __atomic_add_fetch(&w->t[r].peer[w->rank].completed, 1, __ATOMIC_RELEASE);
    }
    w->access = NBR_EP_NONE;
    return MPI_SUCCESS;
}

static int all_completed(void *arg)
{
    nbr_win_t *w = arg;
    for (int i = 0; i < w->nexp; i++) {
        int o = w->exp_group[i];
        if (__atomic_load_n(&mine(w, o)->completed, __ATOMIC_ACQUIRE) < w->t[o].e)
            return 0;
    }
    return 1;
}

static void end_exposure(nbr_win_t *w)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    free(w->exp_group);
    w->exp_group = NULL;
    w->nexp = 0;
    w->exposure = NBR_EP_NONE;
}

int nbr_pscw_wait(nbr_win_t *w)
{
    if (w->exposure != NBR_EP_PSCW)
        return nbr_err(w, "MPI_Win_wait", MPI_ERR_RMA_SYNC,
                       "no exposure epoch of MPI_Win_post "
                       "is open");
    nbr_wait_until(all_completed, w);
    end_exposure(w);
    return MPI_SUCCESS;
}

int nbr_pscw_test(nbr_win_t *w, int *flag)
{
    if (w->exposure != NBR_EP_PSCW)
        return nbr_err(w, "MPI_Win_test", MPI_ERR_RMA_SYNC,
                       "no exposure epoch of MPI_Win_post "
                       "is open");
    nbr_progress();
    *flag = all_completed(w);
    if (*flag)
        end_exposure(w);
    return MPI_SUCCESS;
}

NBR_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_pscw_post(w, group, assert) : PMPI_Win_post(group, assert, win);
}

NBR_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_pscw_start(w, group, assert) : PMPI_Win_start(group, assert, win);
}

NBR_API int MPI_Win_complete(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_pscw_complete(w) : PMPI_Win_complete(win);
}

NBR_API int MPI_Win_wait(MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_pscw_wait(w) : PMPI_Win_wait(win);
}

NBR_API int MPI_Win_test(MPI_Win win, int *flag)
{
    nbr_win_t *w = nbr_win_find(win);
    return w ? nbr_pscw_test(w, flag) : PMPI_Win_test(win, flag);
}
