/* thread_rma.c — RMA from several threads of each process (MPI_THREAD_MULTIPLE, MPI-3.1 §12.4).
 *   1. own windows: each thread has its own window and runs --iters passive-target epochs
 *      (lock exclusive, accumulate, get, flush, unlock) toward the next rank; every increment
 *      must land and every get must see a value no older than the thread's previous one;
 *   2. one window, shared: the main thread holds lock_all; every thread accumulates into its own
 *      slots of every rank and flushes, concurrently; the sums must be exact;
 *   3. windows created and freed by several threads at once, each on its own communicator;
 *   4. visibility: rank 0 locks rank 1, accumulates, unlocks, then tells rank 1 by message; rank
 *      1 must already see the increment (MPI_Win_unlock completes it at the target, §11.5.3) —
 *      run with NBRMA_ASYNC_PROGRESS=1 too, where a progress thread runs the engine;
 *   5. noncontiguous accumulates from every thread inside one lock_all epoch, more in flight
 *      toward one target than an origin may have (across nodes the origin then waits for
 *      credit, letting the other threads in): each must land with its own bytes;
 *   6. request-based gets from every thread inside one lock_all epoch, as many in flight: when
 *      MPI_Wait returns, the data is in the buffer (MPI-3.1 §11.3.5).
 * Skipped (TAP SKIP) when the MPI library does not provide MPI_THREAD_MULTIPLE. */
#include <pthread.h>

#include "conf.h"

#define NT 2
/* Window sizes are multiples of 16 bytes: MPICH 4.0.2 misplaces MPI_Win_allocate memory
 * otherwise (win_allocate_odd, a known vendor failure). */
#define WIN_BYTES (2 * sizeof(long))
static int iters = 2000;

typedef struct {
    int id;
    MPI_Win win;
    long *base;
    int lost, stale;
    MPI_Comm comm;
} thr_t;

/* 1. Each thread, its own window. */
static void *own_window(void *arg)
{
    thr_t *t = arg;
    const int target = conf_right();
    const long one = 1;
    long seen = 0;
    for (int i = 0; i < iters; i++) {
        long got = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, t->win);
        MPI_Accumulate(&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, t->win);
        MPI_Win_flush(target, t->win);
        MPI_Get(&got, 1, MPI_LONG, target, 0, 1, MPI_LONG, t->win);
        MPI_Win_flush(target, t->win);
        MPI_Win_unlock(target, t->win);
        t->stale += got < seen + 1; /* my own increment is in, and nothing went backwards */
        seen = got;
    }
    return NULL;
}

/* 2. One window, lock_all held by the main thread; threads accumulate and flush. */
static void *shared_window(void *arg)
{
    thr_t *t = arg;
    const long one = 1;
    for (int i = 0; i < iters; i++) {
        int target = (conf_rank + i) % conf_size;
        MPI_Accumulate(&one, 1, MPI_LONG, target, conf_rank * NT + t->id, 1, MPI_LONG, MPI_SUM,
                       t->win);
        if (i % 16 == 15)
            MPI_Win_flush(target, t->win);
    }
    MPI_Win_flush_all(t->win);
    return NULL;
}

/* 3. Threads create and free windows at once, each on its own communicator. */
static void *churn(void *arg)
{
    thr_t *t = arg;
    for (int i = 0; i < 50; i++) {
        MPI_Win w;
        long *b;
        if (conf_win_allocate(WIN_BYTES, sizeof(long), MPI_INFO_NULL, t->comm, &b, &w) !=
            MPI_SUCCESS) {
            t->lost++;
            continue;
        }
        MPI_Win_fence(0, w);
        long v = conf_rank + 1;
        MPI_Put(&v, 1, MPI_LONG, conf_right(), 0, 1, MPI_LONG, w);
        MPI_Win_fence(0, w);
        t->lost += *b != conf_left() + 1;
        conf_win_free(&w);
    }
    return NULL;
}

/* 5. Strided accumulates (every other int, on both sides) into the thread's own slots of the
 * right neighbour, flushed only at the end. */
#define NACC 200 /* per thread: more than libnbrma's 64 requests in flight toward one process */
#define ASTRIDE 16
static MPI_Datatype every_other;
static void *strided(void *arg)
{
    thr_t *t = arg;
    int *src = malloc(NACC * ASTRIDE * sizeof *src);
    if (!src)
        tap_bail_out("out of memory");
    for (int i = 0; i < NACC * ASTRIDE; i++)
        src[i] = i % 2 ? -1 : (conf_rank * NT + t->id) * 1000000 + i;
    for (int i = 0; i < NACC; i++)
        MPI_Accumulate(src + i * ASTRIDE, 1, every_other, conf_right(),
                       (MPI_Aint)(t->id * NACC + i) * ASTRIDE, 1, every_other, MPI_REPLACE,
                       t->win);
    MPI_Win_flush(conf_right(), t->win);
    free(src);
    return NULL;
}

/* 6. Rgets of the right neighbour's slots, all issued, then each completed and checked at once. */
static void *rgets(void *arg)
{
    thr_t *t = arg;
    long *dst = malloc(NACC * sizeof *dst);
    MPI_Request *rq = malloc(NACC * sizeof *rq);
    if (!dst || !rq)
        tap_bail_out("out of memory");
    /* Each tested as soon as it is issued (a request completed too early shows before its data
     * can have arrived), the rest waited for. */
    for (int i = 0; i < NACC; i++) {
        int done = 0;
        dst[i] = -1;
        MPI_Rget(dst + i, 1, MPI_LONG, conf_right(), t->id * NACC + i, 1, MPI_LONG, t->win,
                 rq + i);
        MPI_Test(rq + i, &done, MPI_STATUS_IGNORE);
        if (done)
            t->stale += dst[i] != (long)conf_right() * 100000 + t->id * NACC + i;
    }
    for (int i = 0; i < NACC; i++)
        if (rq[i] != MPI_REQUEST_NULL) {
            MPI_Wait(rq + i, MPI_STATUS_IGNORE);
            t->stale += dst[i] != (long)conf_right() * 100000 + t->id * NACC + i;
        }
    free(dst), free(rq);
    return NULL;
}

int main(int argc, char **argv)
{
    iters = conf_init_threads(&argc, &argv, "thread_rma", iters);
    thr_t t[NT];
    memset(t, 0, sizeof t);

    /* 1 */
    for (int i = 0; i < NT; i++) {
        t[i].id = i;
        conf_win_allocate(WIN_BYTES, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &t[i].base,
                         &t[i].win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, t[i].win);
        *t[i].base = 0;
        MPI_Win_unlock(conf_rank, t[i].win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    conf_run_threads(own_window, t, sizeof *t, NT);
    MPI_Barrier(MPI_COMM_WORLD);
    int lost = 0, stale = 0;
    for (int i = 0; i < NT; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, t[i].win);
        lost += *t[i].base != iters;
        MPI_Win_unlock(conf_rank, t[i].win);
        stale += t[i].stale;
        conf_win_free(&t[i].win);
    }
    tap_is_long(lost, 0, "%d threads x %d lock/accumulate/get/flush/unlock epochs, each on its own "
                         "window: no increment lost", NT, iters);
    tap_is_long(stale, 0, "every get after its flush saw the thread's own increment");

    /* 2 */
    MPI_Win win;
    long *base;
    conf_win_allocate(((conf_size * NT + 1) / 2) * WIN_BYTES, sizeof(long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    for (int i = 0; i < conf_size * NT; i++)
        base[i] = 0;
    MPI_Win_unlock(conf_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < NT; i++) {
        t[i].win = win;
        t[i].id = i;
    }
    conf_run_threads(shared_window, t, sizeof *t, NT);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
    long want_total = 0, got_total = 0;
    int wrong = 0;
    for (int o = 0; o < conf_size; o++)
        for (int k = 0; k < NT; k++) {
            long want = 0;
            for (int i = 0; i < iters; i++)
                want += (o + i) % conf_size == conf_rank;
            wrong += base[o * NT + k] != want;
            want_total += want;
            got_total += base[o * NT + k];
        }
    MPI_Win_unlock(conf_rank, win);
    conf_win_free(&win);
    tap_ok(wrong == 0,
           "%d threads accumulate concurrently inside one lock_all epoch: %ld of %ld arrived",
           NT, got_total, want_total);

    /* 3 */
    for (int i = 0; i < NT; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &t[i].comm);
        t[i].lost = 0;
    }
    conf_run_threads(churn, t, sizeof *t, NT);
    lost = 0;
    for (int i = 0; i < NT; i++) {
        lost += t[i].lost;
        MPI_Comm_free(&t[i].comm);
    }
    tap_is_long(lost, 0, "%d threads create, use and free 50 windows each at once", NT);

    /* 4 */
    conf_win_allocate(WIN_BYTES, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    *base = 0;
    MPI_Win_unlock(conf_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    int late = 0;
    const long one = 1;
    for (int i = 0; i < 4 * iters && conf_rank < 2; i++) {
        int msg = i;
        if (conf_rank == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_unlock(1, win);
            MPI_Send(&msg, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&msg, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            late += *base < i + 1;
            MPI_Win_unlock(1, win);
        }
    }
    conf_win_free(&win);
    tap_is_long(late, 0, "%d accumulates were visible at the target when their unlock's message "
                         "arrived", 4 * iters);

    /* 5 */
    int *ints;
    MPI_Type_vector(ASTRIDE / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    conf_win_allocate(NT * NACC * ASTRIDE * sizeof(int), sizeof(int), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &ints, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    memset(ints, 0, NT * NACC * ASTRIDE * sizeof(int));
    MPI_Win_unlock(conf_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < NT; i++) {
        t[i].win = win;
        t[i].id = i;
    }
    conf_run_threads(strided, t, sizeof *t, NT);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
    wrong = 0;
    for (int k = 0; k < NT; k++)
        for (int i = 0; i < NACC * ASTRIDE; i++) {
            int want = i % 2 ? 0 : (conf_left() * NT + k) * 1000000 + i;
            wrong += ints[k * NACC * ASTRIDE + i] != want;
        }
    MPI_Win_unlock(conf_rank, win);
    conf_win_free(&win);
    MPI_Type_free(&every_other);
    tap_is_long(wrong, 0, "%d threads x %d strided accumulates in one lock_all epoch, unflushed: "
                          "every int where it belongs", NT, NACC);

    /* 6 */
    conf_win_allocate(NT * NACC * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    for (int i = 0; i < NT * NACC; i++)
        base[i] = (long)conf_rank * 100000 + i;
    MPI_Win_unlock(conf_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < NT; i++) {
        t[i].win = win;
        t[i].id = i;
        t[i].stale = 0;
    }
    conf_run_threads(rgets, t, sizeof *t, NT);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    conf_win_free(&win);
    stale = 0;
    for (int i = 0; i < NT; i++)
        stale += t[i].stale;
    tap_is_long(stale, 0, "%d threads x %d MPI_Rget in one lock_all epoch: each buffer holds its "
                          "data when MPI_Wait returns", NT, NACC);
    return conf_done();
}
