/* nb_threads.c — libnbrma's nonblocking epochs driven from several threads of each process
 * (MPI_THREAD_MULTIPLE): each thread owns a window and queues epochs on it with MPIX_Win_i*,
 * completing them with MPI_Waitall/MPI_Test while the other threads do the same; with
 * NBRMA_ASYNC_PROGRESS=1 the progress thread advances them too.
 *   1. lock epochs: --iters rounds of (ilock exclusive, accumulate, iunlock) toward the next
 *      rank, 8 queued at a time, then MPI_Waitall: every increment lands;
 *   2. fence epochs: rounds of (put, ifence) on the thread's window, completed by polling with
 *      MPI_Test: every put arrives.
 * Every thread's requests are generalized requests in one registry shared by all threads, and
 * the engine the threads take turns in is one: this is where races would show. */
#include <pthread.h>

#include "nb_util.h"

#define NT    2
#define BATCH 8
static int iters = 400;

typedef struct {
    int id;
    MPI_Win win;
    int64_t *base;
    int bad;
} thr_t;

static void *lock_epochs(void *arg)
{
    thr_t *t = arg;
    const int target = conf_right();
    const int64_t one = 1;
    MPI_Request r[2 * BATCH];
    for (int i = 0; i < iters; i += BATCH) {
        int n = 0;
        for (int k = 0; k < BATCH; k++) {
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, t->win, &r[n++]);
            MPI_Accumulate(&one, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, MPI_SUM, t->win);
            MPIX_Win_iunlock(target, t->win, &r[n++]);
        }
        MPI_Status st[2 * BATCH];
        t->bad += MPI_Waitall(n, r, st) != MPI_SUCCESS;
    }
    return NULL;
}

static void *fence_epochs(void *arg)
{
    thr_t *t = arg;
    MPI_Request r;
    MPIX_Win_ifence(0, t->win, &r);
    t->bad += !nbt_poll(&r, NBT_LIMIT);
    for (int i = 0; i < iters; i++) {
        /* Slot 1 + i % 2: the left rank's next put (its next epoch) may already be landing in
         * the other slot while this one is read. */
        int64_t v = (int64_t)conf_rank * 1000000 + i;
        MPI_Put(&v, 1, MPI_INT64_T, conf_right(), 1 + i % 2, 1, MPI_INT64_T, t->win);
        MPIX_Win_ifence(0, t->win, &r);
        t->bad += !nbt_poll(&r, NBT_LIMIT);
        t->bad += nbt_load(&t->base[1 + i % 2]) != (int64_t)conf_left() * 1000000 + i;
    }
    MPIX_Win_ifence(MPI_MODE_NOSUCCEED, t->win, &r);
    t->bad += !nbt_poll(&r, NBT_LIMIT);
    return NULL;
}

int main(int argc, char **argv)
{
    iters = conf_init_threads(&argc, &argv, "nb_threads", iters);
    iters = (iters + BATCH - 1) / BATCH * BATCH;
    MPI_Comm_dup(MPI_COMM_WORLD, &nbt_comm);
    MPI_Comm_group(MPI_COMM_WORLD, &nbt_world);
    thr_t t[NT];
    memset(t, 0, sizeof t);
    for (int i = 0; i < NT; i++) {
        t[i].id = i;
        conf_win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &t[i].base, &t[i].win);
        memset(t[i].base, 0, 4 * sizeof(int64_t));
    }
    nbt_barrier();
    conf_run_threads(lock_epochs, t, sizeof *t, NT);
    nbt_barrier();
    int lost = 0, bad = 0;
    for (int i = 0; i < NT; i++) {
        lost += nbt_load(&t[i].base[0]) != iters;
        bad += t[i].bad;
        t[i].bad = 0;
    }
    tap_is_long(bad, 0, "%d threads x %d queued lock epochs: every MPI_Waitall succeeds", NT,
                iters);
    tap_is_long(lost, 0, "every accumulate of every thread landed");
    conf_run_threads(fence_epochs, t, sizeof *t, NT);
    bad = 0;
    for (int i = 0; i < NT; i++)
        bad += t[i].bad;
    tap_is_long(bad, 0, "%d threads x %d nonblocking fence epochs: each completes, its put "
                        "arrives", NT, iters);
    for (int i = 0; i < NT; i++)
        conf_win_free(&t[i].win);
    return nbt_done();
}
