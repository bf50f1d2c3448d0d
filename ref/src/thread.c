/* thread.c — threads: the MPI_Init/MPI_Init_thread wrappers that learn the thread level, the big
 * lock, the waits' yield step, and the progress thread (NBRMA_ASYNC_PROGRESS, and passive progress
 * across nodes).
 *
 * Under MPI_THREAD_MULTIPLE (or with the progress thread) every libnbrma entry point that touches
 * shared state takes one process-wide lock: windows, epochs, the engine's lists, requests and
 * the handle caches are all reached under it, which is how MPICH serializes its own global
 * critical section. The lock counts its depth per thread, so a wait can release it completely
 * while it yields and take it back at the same depth: a thread waiting for a peer never keeps
 * another thread (or the progress thread, which must release our locks) out. Without threads
 * the lock costs one predictable branch. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../harness/relax.h"
#include "nbr.h"
#include "transport/tp.h"

int nbr_locking;
int nbr_thread_level = MPI_THREAD_SINGLE;

/* The big lock is a futex word (Drepper, "Futexes Are Tricky", 2011, mutex 3): 0 free, 1 held,
 * 2 held and someone may sleep on it. Taking a free lock is one compare-and-swap and letting it go
 * one exchange, where pthread_mutex_lock/unlock cost ~110 instructions a pair: every entry point
 * takes it once a progress thread runs (windows across nodes), so a put + flush across nodes paid
 * ~220 for the lock alone. A waiter sleeps in the kernel (no spinning on an oversubscribed core);
 * acquire/release ordering on the word is what ThreadSanitizer sees.
 *
 * One caller at a time (nbr_big_single: the application asked for less than
 * MPI_THREAD_MULTIPLE, so only the progress thread contends with it). Then the application's
 * release is a plain store instead of the exchange — a locked instruction less per entry point,
 * 10-15 ns on this machine, two per put + flush across nodes (docs/ref-internals.md, "Fast paths
 * across nodes"). The exchange exists to see a sleeper (2) and wake it; the only thread that
 * could sleep on the word while the application holds it is the progress thread, and in this
 * mode it never sleeps on the word: it polls (nbr_big_contended), so the word is never 2 while
 * the application holds it — except when the application itself slept and took the lock with
 * 2, and nobody else sleeps then either. The progress thread's release stays the exchange
 * (the application may sleep on the word). Under MPI_THREAD_MULTIPLE every thread sleeps and
 * every release exchanges, as before. */
int nbr_big_word; /* the futex word */
_Thread_local int nbr_big_depth __attribute__((tls_model("initial-exec")));
_Thread_local int nbr_big_helper __attribute__((tls_model("initial-exec")));
int nbr_big_single;

static void futex_op(int op, int val)
{
    /* WAKE returns how many it woke; EAGAIN (the word changed before WAIT slept) and EINTR just
     * mean: look again */
    if (syscall(SYS_futex, &nbr_big_word, op, val, NULL, NULL, 0) < 0 && errno != EAGAIN &&
        errno != EINTR)
        abort();
}

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* The wait of a lock found taken (c: the value the compare-and-swap found). */
void nbr_big_contended(int c)
{
    if (nbr_big_helper && __atomic_load_n(&nbr_big_single, __ATOMIC_RELAXED)) {
        /* The progress thread beside one application caller: poll, never sleep on the word
         * (above). Read-only polling, so the holder's cache line stays put; after a short spin
         * the core goes to others (yields), then naps of 20 us: the application holds the
         * lock only inside its calls, and while it waits in one it serves other nodes itself
         * (progress_thread stays out), so a helper that finds it taken is in no hurry. */
        for (long spins = 0;; spins++) {
            if (spins < 64) {
                cpu_pause();
            } else if (spins < 80) {
                sched_yield();
            } else {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL); /* EINTR: early, fine */
            }
            c = 0;
            if (__atomic_load_n(&nbr_big_word, __ATOMIC_RELAXED) == 0 &&
                __atomic_compare_exchange_n(&nbr_big_word, &c, 1, 0, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return;
        }
    }
    if (c != 2)
        c = __atomic_exchange_n(&nbr_big_word, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        futex_op(FUTEX_WAIT_PRIVATE, 2);
        c = __atomic_exchange_n(&nbr_big_word, 2, __ATOMIC_ACQUIRE);
    }
}

void nbr_big_wake(void)
{
    futex_op(FUTEX_WAKE_PRIVATE, 1);
}

int nbr_relax_mode;

/* Giving the core away. With more ranks than cores (laptops, CI, teaching labs) the peer a wait
 * waits for may need our core, and sched_yield hands it over in microseconds. But since EEVDF
 * (Linux 6.6, and 6.18 charges the yielder the rest of its slice) a yield costs a whole slice of
 * virtual time whenever another task is runnable: beside other jobs' CPU-bound tasks a rank that
 * yields at every poll falls behind all of them and gets about 1% of a core. Measured here
 * (Linux 6.18, Open MPI, lock_loadstore on 4 ranks over 2 virtual nodes, one CPU hog per core):
 * yield 240 s and more, spin 12 s, sleep 19 s; without the hogs yield 1.2 s, spin 1.6 s, sleep
 * 16.9 s (the 50 us timer slack per nap). So auto is the policy of harness/relax.h, which the
 * benchmarks' and tests' own loops use too (one copy, dependency-free): yield while yields come
 * back at once; a late one starts a spell of polling without yielding, doubled per late yield
 * (harness/tests/test_relax measures the share it keeps beside a hog). */
void nbr_relax(void)
{
    switch (nbr_relax_mode) {
    case NBR_RELAX_SPIN:
        return;
    case NBR_RELAX_YIELD:
        sched_yield();
        return;
    case NBR_RELAX_SLEEP: {
        struct timespec ts = {0, nbr_cfg.RELAX_NS};
        nanosleep(&ts, NULL); /* EINTR: a signal ended the nap early, which is all we want */
        return;
    }
    default:
        nbh_relax();
        return;
    }
}

void nbr_wait_step(long *spins)
{
    if (NBR_UNLIKELY(nbr_locking) && !nbr_in_progress_thread())
        __atomic_add_fetch(&nbr_polls, 1, __ATOMIC_RELAXED);
    int yield = ++*spins > __atomic_load_n(&nbr_spin, __ATOMIC_RELAXED);
    if (!nbr_locking) {
        if (yield)
            nbr_relax();
        return;
    }
    int d = nbr_big_release(); /* let every other thread in, then come back at the same depth */
    if (yield)
        nbr_relax();
    nbr_big_reacquire(d);
}

int nbr_big_held(void)
{
    return nbr_big_depth > 0;
}

int nbr_big_release(void)
{
    int d = nbr_big_depth;
    if (d) {
        nbr_big_depth = 0;
        nbr_big_give();
    }
    return d;
}

void nbr_big_reacquire(int d)
{
    if (d) {
        nbr_big_take();
        nbr_big_depth = d;
    }
}

/* ---- initialization: the thread level decides whether the lock is needed -------------------- */

/* Passive-target progress across nodes (MPI-3.1 §11.7.3; docs/ref.md, "Progress across nodes").
 * Across nodes the target's CPU carries out what reaches it (transport/am.c), so a target sitting
 * in a blocking MPI call must still serve its origins — whichever call it is. A list of wrapped
 * calls always misses one (MPI_Comm_split has no nonblocking twin), and a blocking collective
 * turned into its nonblocking twin in some members of a communicator only never matches the
 * others' (MPI-3.1 §5.12). So:
 *   - where the job spans nodes, every process (a job-wide fact, agreed at MPI_Init) runs the
 *     blocking collectives blocking.c wraps as their nonblocking twins plus a wait that serves
 *     and yields, and once it has windows with remote pairs its blocking point-to-point calls
 *     too (also the cure for MPICH's blocking calls, which spin on oversubscribed nodes);
 *   - where, in addition, every process may run a thread that calls MPI (MPI_THREAD_MULTIPLE
 *     provided, NBRMA_ASYNC_PROGRESS not off), the progress thread starts with the first window
 *     that has pairs on other nodes and serves them whatever else the application's thread is
 *     doing — inside MPI_Comm_split, or computing; otherwise a target inside a blocking call
 *     libnbrma cannot wrap stalls its origins until it returns (warned once);
 *   - on one node nothing is needed: shared memory needs no target CPU.
 * To have MPI_THREAD_MULTIPLE, libnbrma asks for it at MPI_Init when the job may span nodes — a
 * decision taken before MPI can tell, from the launcher's environment (may_span_nodes). */
int nbr_xnode;       /* the job spans more than one (possibly virtual) node */
int nbr_xnode_thread; /* ... and the progress thread will serve other nodes */
int nbr_coll_serve;  /* blocking collectives become nonblocking + a serving wait (blocking.c) */
static int app_level = MPI_THREAD_SINGLE; /* what the application asked MPI_Init_thread for */

enum { ASYNC_AUTO, ASYNC_ON, ASYNC_OFF, ASYNC_BAD };
static int async_mode(void)
{
    const char *a = nbr_cfg.ASYNC_PROGRESS;
    if (!strcasecmp(a, "auto"))
        return ASYNC_AUTO;
    if (!strcasecmp(a, "on") || !strcmp(a, "1") || !strcasecmp(a, "true"))
        return ASYNC_ON;
    if (!strcasecmp(a, "off") || !strcmp(a, "0") || !strcasecmp(a, "false"))
        return ASYNC_OFF;
    return ASYNC_BAD;
}

const char *nbr_async_check(void)
{
    return async_mode() == ASYNC_BAD ? "NBRMA_ASYNC_PROGRESS must be auto, on, off, 1 or 0" : NULL;
}

/* A non-negative integer environment variable, or -1. */
static long env_count(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    long x = strtol(v, &end, 10);
    return *end || x < 0 ? -1 : x;
}

/* Before MPI_Init: may this job's processes sit on more than one node? From what the launchers
 * put in the environment (Open MPI's mpirun, MPICH's and Intel MPI's Hydra, Slurm's srun, IBM's
 * jsrun); when none is recognized but some launcher started us, yes (the safe answer: the price
 * of a needless MPI_THREAD_MULTIPLE is a few nanoseconds per MPI call, that of a missing one a
 * stalled origin). A singleton (no launcher) is one node. Virtual nodes count. */
static int may_span_nodes(void)
{
    long size = -1, local = -1;
    if ((size = env_count("OMPI_COMM_WORLD_SIZE")) >= 0)
        local = env_count("OMPI_COMM_WORLD_LOCAL_SIZE");
    else if ((size = env_count("PMI_SIZE")) >= 0)
        local = env_count("MPI_LOCALNRANKS");
    else if ((size = env_count("JSM_NAMESPACE_SIZE")) >= 0)
        local = env_count("JSM_NAMESPACE_LOCAL_SIZE");
    else if ((size = env_count("SLURM_STEP_NUM_TASKS")) >= 0) {
        long nodes = env_count("SLURM_STEP_NUM_NODES");
        local = nodes == 1 ? size : -1;
    }
    long rpn = nbr_cfg.RANKS_PER_NODE;
    if (size < 0) /* no launcher we know: a launcher's PMI says "several processes" */
        return getenv("PMI_RANK") || getenv("PMIX_RANK") || getenv("PMI_FD") ||
               getenv("PALS_RANKID") || getenv("SLURM_PROCID");
    if (rpn > 0 && size > rpn)
        return 1;
    return local < 0 || local < size;
}

/* The progress thread serves other nodes only if it may call the MPI library (MPI-3.1 §12.4.3: a
 * provided level above the required one is fine). */
static int wanted_level(int required)
{
    nbr_settings_load();
    app_level = required;
    int m = async_mode();
    if (required < MPI_THREAD_MULTIPLE &&
        (m == ASYNC_ON || ((m == ASYNC_AUTO || m == ASYNC_BAD) && may_span_nodes())))
        return MPI_THREAD_MULTIPLE;
    return required;
}

/* After MPI_Init: does the job span nodes, and can every process run the thread? Decided by all
 * processes together, so that the rule for blocking collectives is the same in every member of
 * every communicator. */
static void xnode_init(int provided)
{
    int nodes = nbr_world_nodes(); /* an allgather of node keys (win.c) */
    /* {can run the thread, -(spans nodes)}: the minimum is "all can" and "any says it spans"
     * (unknown, a failed allgather, counts as spanning). */
    int mine[2] = {provided == MPI_THREAD_MULTIPLE && async_mode() != ASYNC_OFF, -(nodes != 1)};
    int all[2] = {0, -1};
    MPI_Request r;
    if (PMPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
        nbr_wait_req(&r) != MPI_SUCCESS)
        all[0] = 0, all[1] = -1;
    nbr_xnode = all[1] != 0;
    nbr_xnode_thread = nbr_xnode && all[0];
    nbr_coll_serve = nbr_xnode;
}

/* Open MPI's mpirun turns on mpi_yield_when_idle when it oversubscribes a node: every
 * PMPI_Test, PMPI_Testsome or PMPI_Iprobe that finds nothing then calls sched_yield — and
 * libnbrma's waits poll with exactly those. Its yields would undo nbr_relax's choice: with the
 * vendor yielding, lock_loadstore on 4 ranks beside one CPU hog per core took more than 300 s
 * whatever libnbrma did (19 s with the vendor's yields off and NBRMA_RELAX=sleep). So while
 * libnbrma serves windows and decides how its waits relax (any NBRMA_RELAX but yield), the
 * vendor's yield is turned off through Open MPI's own setter; found by name, so MPICH (which
 * has no such yield) and builds without it are left alone. docs/ref.md, waiting on a busy node. */
static void vendor_yield_off(void)
{
    if (!nbr_impl_ref || nbr_relax_mode == NBR_RELAX_YIELD)
        return;
    void *sym = dlsym(RTLD_DEFAULT, "opal_progress_set_yield_when_idle");
    if (!sym)
        return;
    void (*set)(bool);
    memcpy(&set, &sym, sizeof set); /* POSIX: a dlsym result converts to a function pointer */
    set(false);
}

static void thread_init(int provided)
{
    nbr_settings_load();
    nbr_thread_level = provided;
    /* The lock is needed when the application's threads call MPI at once, or (later) when the
     * progress thread runs — not merely because libnbrma asked for MPI_THREAD_MULTIPLE. */
    if (provided == MPI_THREAD_MULTIPLE && app_level == MPI_THREAD_MULTIPLE)
        nbr_locking = 1;
    /* Only the progress thread can contend with the application's one caller at a time (the
     * big lock's comment): before any thread that takes the lock exists. */
    nbr_big_single = app_level < MPI_THREAD_MULTIPLE;
    vendor_yield_off();
    nbr_progress_init();
    nbr_tp_init();
    xnode_init(provided);
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
    int st = nbr_stats_finalize(); /* NBRMA_STATS: the memory accounting report */
    nbr_rec_pool_drain();
    nbr_arena_finalize(); /* peers mapped what they need: the names can go */
    nbr_tp_finalize();
    nbr_progress_finalize();
    int rc = PMPI_Finalize();
    return rc == MPI_SUCCESS ? st : rc;
}

/* ---- the progress thread (NBRMA_ASYNC_PROGRESS; passive progress across nodes) ---------------- */

static pthread_t thread; /* runs until the process exits */
static int thread_started, thread_running, warned;

/* Waits of the application's threads count their polls here: while they poll, they serve, and
 * the thread stays out of their way (and of their core). */
unsigned long nbr_polls;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The nap. With nothing to do the thread looks again every 200 us (other nodes' requests may come
 * at any time). A nonblocking synchronization call that leaves an epoch for the engine
 * (MPIX_Win_icomplete whose puts are still in flight toward a transport that needs a flush, an
 * iunlock waiting for its acknowledgements...) must not wait for the end of that nap: the
 * application computes now, and the epoch's next step — the flush's completion, then the done
 * notification or the lock release — is the thread's (over UCX's TCP transport A4's ref-nb target
 * waited ~200 us for it, the nap's length). So the nap is a ppoll on an eventfd, and the entry
 * point kicks it (sync.c, NBR_NB_ENTRY). No kick is lost: the thread sets nbr_thread_napping
 * before it takes the big lock to look at the engine one last time, and the entry point reads
 * the flag under that lock after its work — either the thread's look comes after the entry
 * point's section and sees the work, or the entry point's read comes after the flag was set and
 * kicks. A kick costs a write(2) and happens only when the thread naps and the engine has work. */
int nbr_thread_napping;
static int wake_fd = -1;

void nbr_thread_kick(void)
{
    uint64_t one = 1;
    /* EAGAIN: the counter is full, a wake-up is pending anyway. Anything else is a bug here;
     * the nap's timeout still bounds the delay, so say it once and go on. */
    if (write(wake_fd, &one, sizeof one) < 0 && errno != EAGAIN) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "libnbrma: waking the progress thread failed (write: %s)\n",
                    strerror(errno));
    }
}

static void nap(void)
{
    if (wake_fd < 0) {
        usleep(200);
        return;
    }
    __atomic_store_n(&nbr_thread_napping, 1, __ATOMIC_SEQ_CST);
    nbr_big_lock();
    int busy = nbr_engine_busy();
    nbr_big_unlock();
    if (!busy) {
        struct pollfd p = {.fd = wake_fd, .events = POLLIN};
        const struct timespec ts = {0, 200000};
        int n = ppoll(&p, 1, &ts, NULL); /* EINTR: a signal ended the nap early, fine */
        uint64_t v;
        if (n > 0 && read(wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
            usleep(200); /* cannot happen on an eventfd we own; nap the old way then */
    }
    __atomic_store_n(&nbr_thread_napping, 0, __ATOMIC_SEQ_CST);
}

static void *progress_thread(void *arg)
{
    (void)arg;
    nbr_mark_progress_thread();
    nbr_big_helper = 1; /* polls for the big lock beside one application caller */
    unsigned long seen = 0;
    double hot_until = 0;
    for (;;) {
        unsigned long polls = __atomic_load_n(&nbr_polls, __ATOMIC_RELAXED);
        if (polls != seen) { /* an application thread is waiting, and serving: stay out */
            seen = polls;
            usleep(200);
            continue;
        }
        nbr_big_lock();
        int busy = nbr_engine_busy();
        unsigned long served = nbr_tp_served;
        /* Other nodes' requests may come at any time (transport/am.c). */
        if (busy || nbr_tp_on)
            nbr_progress();
        int active = busy || nbr_tp_served != served;
        nbr_big_unlock();
        /* Hot while something moves and for a millisecond after (an origin's next request
         * follows its last answer within a round trip); then every 200 us. */
        double t = active || hot_until > 0 ? now_s() : 0;
        if (active)
            hot_until = t + 1e-3;
        if (active || t < hot_until) {
            nbr_relax();
        } else {
            hot_until = 0;
            nap();
        }
    }
    return NULL;
}

static void progress_maybe_start(int win_rank);

static void progress_start(void)
{
    __atomic_store_n(&thread_started, 1, __ATOMIC_RELEASE);
    nbr_locking = 1; /* before the thread exists: nobody is inside an entry point now */
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); /* -1: the thread naps with usleep */
    int err = pthread_create(&thread, NULL, progress_thread, NULL);
    if (err != 0)
        fprintf(stderr,
                "libnbrma: the progress thread could not start (pthread_create: error %d); "
                "epochs progress inside MPI calls only\n",
                err);
    else
        __atomic_store_n(&thread_running, nbr_thread_level == MPI_THREAD_MULTIPLE, __ATOMIC_RELEASE);
}

int nbr_thread_serves(void)
{
    return __atomic_load_n(&thread_running, __ATOMIC_ACQUIRE);
}

/* After a window was created, outside any entry point (so the lock may be switched on): start
 * the thread when NBRMA_ASYNC_PROGRESS=on (first window) or, by default, with the first window
 * that has pairs on other nodes; or say once why a target in a blocking call may stall. */
void nbr_progress_after_create(int win_rank)
{
    static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER; /* two threads creating windows */
    if (__atomic_load_n(&thread_started, __ATOMIC_ACQUIRE))
        return;
    if (pthread_mutex_lock(&start_mu) != 0)
        abort();
    progress_maybe_start(win_rank);
    if (pthread_mutex_unlock(&start_mu) != 0)
        abort();
}

static void progress_maybe_start(int win_rank)
{
    if (thread_started)
        return;
    int m = async_mode();
    if (m == ASYNC_ON || (__atomic_load_n(&nbr_tp_on, __ATOMIC_RELAXED) && nbr_xnode_thread)) {
        progress_start();
        return;
    }
    if (__atomic_load_n(&nbr_tp_on, __ATOMIC_RELAXED) && !warned && win_rank == 0) {
        warned = 1;
        fprintf(stderr,
                "libnbrma: windows span nodes, but the progress thread cannot serve other nodes "
                "(%s): a target inside a blocking MPI call other than those libnbrma turns into "
                "waits (e.g. MPI_Comm_split) stalls its origins until it returns; docs/ref.md, "
                "\"Progress across nodes\"\n",
                m == ASYNC_OFF ? "NBRMA_ASYNC_PROGRESS=off"
                               : "the MPI library did not provide MPI_THREAD_MULTIPLE to every "
                                 "process");
    }
}
