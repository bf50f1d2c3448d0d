/* thread.c — threads: the MPI_Init/MPI_Init_thread wrappers that learn the thread level, the big
 * lock, the waits' yield step, and the NBRMA_ASYNC_PROGRESS thread.
 *
 * Under MPI_THREAD_MULTIPLE (or with the progress thread) every libnbrma entry point that touches
 * shared state takes one process-wide lock: windows, epochs, the engine's lists, requests and
 * the handle caches are all reached under it, which is how MPICH serializes its own global
 * critical section. The lock counts its depth per thread, so a wait can release it completely
 * while it yields and take it back at the same depth: a thread waiting for a peer never keeps
 * another thread (or the progress thread, which must release our locks) out. Without threads
 * the lock costs one predictable branch. */
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "nbr.h"
#include "transport/tp.h"

int nbr_locking;
int nbr_thread_level = MPI_THREAD_SINGLE;

static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int depth __attribute__((tls_model("initial-exec")));

void nbr_big_lock(void)
{
    if (depth++ == 0 && pthread_mutex_lock(&big) != 0)
        abort();
}

void nbr_big_unlock(void)
{
    /* depth 0: nbr_locking was switched on between this thread's NBR_ENTER and NBR_LEAVE */
    if (depth > 0 && --depth == 0 && pthread_mutex_unlock(&big) != 0)
        abort();
}

void nbr_wait_step(long *spins)
{
    int yield = ++*spins > __atomic_load_n(&nbr_spin, __ATOMIC_RELAXED);
    if (!nbr_locking) {
        if (yield)
            sched_yield();
        return;
    }
    int d = nbr_big_release(); /* let every other thread in, then come back at the same depth */
    if (yield)
        sched_yield();
    nbr_big_reacquire(d);
}

int nbr_big_release(void)
{
    int d = depth;
    if (d) {
        depth = 0;
        if (pthread_mutex_unlock(&big) != 0)
            abort();
    }
    return d;
}

void nbr_big_reacquire(int d)
{
    if (d) {
        if (pthread_mutex_lock(&big) != 0)
            abort();
        depth = d;
    }
}

/* ---- initialization: the thread level decides whether the lock is needed -------------------- */

static void thread_init(int provided)
{
    nbr_settings_load();
    nbr_thread_level = provided;
    if (provided == MPI_THREAD_MULTIPLE)
        nbr_locking = 1;
    nbr_progress_init();
    nbr_am_init();
}

/* The progress thread serves other nodes' requests (transport/am.c) only if it may call the MPI
 * library: with NBRMA_ASYNC_PROGRESS=1 we ask for MPI_THREAD_MULTIPLE (MPI-3.1 §12.4.3: a
 * provided level above the required one is fine). */
static int wanted_level(int required)
{
    const char *a = getenv("NBRMA_ASYNC_PROGRESS");
    return a && atoi(a) > 0 && required < MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
}

NBR_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, wanted_level(required), provided);
    if (rc == MPI_SUCCESS)
        thread_init(*provided);
    return rc;
}

NBR_API int MPI_Init(int *argc, char ***argv)
{
    int provided = MPI_THREAD_SINGLE, want = wanted_level(MPI_THREAD_SINGLE);
    int rc = want == MPI_THREAD_SINGLE ? PMPI_Init(argc, argv)
                                       : PMPI_Init_thread(argc, argv, want, &provided);
    if (rc == MPI_SUCCESS && PMPI_Query_thread(&provided) == MPI_SUCCESS)
        thread_init(provided);
    return rc;
}

NBR_API int MPI_Finalize(void)
{
    nbr_arena_finalize(); /* peers mapped what they need: the names can go */
    nbr_am_finalize();
    nbr_progress_finalize();
    return PMPI_Finalize();
}

/* ---- NBRMA_ASYNC_PROGRESS: a thread running the engine (passive progress) -------------------- */

static pthread_t thread; /* runs until the process exits */
static int thread_started;

static void *progress_thread(void *arg)
{
    (void)arg;
    nbr_mark_progress_thread();
    for (;;) {
        nbr_big_lock();
        int busy = nbr_engine_busy();
        /* Other nodes' requests may come at any time (transport/am.c): served every 200 us
         * while idle, at once while something of ours is in flight. */
        if (busy || nbr_am_on)
            nbr_progress();
        nbr_big_unlock();
        if (busy)
            sched_yield();
        else
            usleep(200);
    }
    return NULL;
}

void nbr_progress_start(void)
{
    if (thread_started)
        return;
    thread_started = 1;
    nbr_locking = 1; /* before the thread exists: nobody is inside an entry point now */
    int err = pthread_create(&thread, NULL, progress_thread, NULL);
    if (err != 0)
        fprintf(stderr,
                "libnbrma: NBRMA_ASYNC_PROGRESS=1 but the progress thread could not start "
                "(pthread_create: error %d); epochs progress inside MPI calls only\n",
                err);
}
