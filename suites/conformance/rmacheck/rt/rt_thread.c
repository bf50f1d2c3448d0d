/* rt_thread.c — the synchronization between threads of a program built with rmacheck-cc.
 *
 * rmacheck-cc links the program with -Wl,--wrap= for the POSIX thread calls and the entry points
 * of GCC's OpenMP runtime (libgomp's GOMP_* ABI and the omp_*_lock calls), so the program's own
 * calls, and only those (not the MPI library's, libgomp's or libc's), land here. Each wrapper
 * logs what the call means for happens-before (rt.h: a release into a synchronization object
 * before the call that lets another thread go on, an acquire after the call that waited) and
 * forwards to the real function. libgomp (GCC 12) implements no OMPT, so its entry points are the
 * one place where its synchronization shows.
 *
 * Actors: a thread started by the program's pthread_create is an actor from its first
 * instruction (created by the creator, who releases into "c<id>", acquired by the new thread);
 * pthread_join acquires what the thread released when it ended ("x<id>"). An OpenMP parallel
 * region runs its body through a trampoline: the encountering thread releases "p<region>", each
 * team thread (its own actor; libgomp's pool threads get one each) acquires it, releases
 * "q<region>" when its implicit task ends, and the encountering thread acquires that when the
 * region returns. Team barriers (explicit, and the implied ones of for, sections, single) are
 * generations "b<region>.<n>" every team thread releases into and then acquires. An explicit task
 * runs on a strand, an actor of its own taken from a pool, so two tasks are never ordered by the
 * thread that happened to run them: it acquires its creation "t<id>", and releases, when it ends,
 * into what waits for it — "W<parent>" (taskwait), "g<taskgroup>", "k<region>.<n>" (the barrier
 * that ends its generation), "u<id>" (the encountering task, for an undeferred task), "d<addr>"
 * (tasks that depend on the same address). Constructs this file does not follow (taskloop,
 * doacross loops, detached tasks, target nowait, GOMP's pre-4.9 ABI) mark the process: its threads
 * are then checked in log order, as one actor (rc_unknown). */
#include "rt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int on(void)
{
    return __atomic_load_n(&rc_active, __ATOMIC_RELAXED) && rc_instrumented;
}

static uint64_t ids;
static uint64_t new_id(void)
{
    return __atomic_add_fetch(&ids, 1, __ATOMIC_RELAXED);
}

static void fail(const char *what)
{
    fprintf(stderr, "rmacheck: rank %d: %s; stopping\n", rc_wrank, what);
    _exit(2);
}

/* The real function of a wrapped symbol: the program's references were renamed to __wrap_NAME,
 * so NAME itself is the library's. */
#define REAL(T, name)                                                                              \
    static __typeof__(T) real_fp_;                                                                 \
    __typeof__(T) real_ = __atomic_load_n(&real_fp_, __ATOMIC_ACQUIRE);                            \
    if (!real_) {                                                                                  \
        real_ = (T)real_sym(name);                                                                 \
        __atomic_store_n(&real_fp_, real_, __ATOMIC_RELEASE);                                      \
    }

/* When every call of the program into libgomp is wrapped, the linker (--as-needed) may have left
 * libgomp out: it is opened then. */
static void *real_sym(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) {
        void *h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (h)
            f = dlsym(h, name);
    }
    if (!f) {
        fprintf(stderr, "rmacheck: rank %d: cannot find %s (%s); stopping\n", rc_wrank, name,
                dlerror());
        _exit(2);
    }
    return f;
}

/* ---- POSIX threads -------------------------------------------------------------------------- */

typedef struct {
    void *(*fn)(void *);
    void *arg;
    rc_actor_t *actor;
} rc_start_t;

/* pthread_t -> the actor of the thread, until it is joined */
#define TMAP 1024
static struct {
    pthread_t t;
    int id, used;
} tmap[TMAP];
static pthread_mutex_t tmap_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int t_started = -1; /* this thread's actor, when the program started it */

static unsigned thash(pthread_t t)
{
    unsigned long v = 0;
    memcpy(&v, &t, sizeof t < sizeof v ? sizeof t : sizeof v);
    return (unsigned)((v >> 12) ^ v) % TMAP;
}

static void tmap_put(pthread_t t, int id)
{
    pthread_mutex_lock(&tmap_mu);
    unsigned h = thash(t);
    for (unsigned i = 0; i < TMAP; i++) {
        unsigned j = (h + i) % TMAP;
        if (!tmap[j].used || pthread_equal(tmap[j].t, t)) {
            tmap[j].t = t;
            tmap[j].id = id;
            tmap[j].used = 1;
            break;
        }
    }
    pthread_mutex_unlock(&tmap_mu);
}

/* the actor of t (-1: unknown), forgotten */
static int tmap_take(pthread_t t)
{
    int id = -1;
    pthread_mutex_lock(&tmap_mu);
    unsigned h = thash(t);
    for (unsigned i = 0; i < TMAP; i++) {
        unsigned j = (h + i) % TMAP;
        if (!tmap[j].used)
            break;
        if (pthread_equal(tmap[j].t, t) && tmap[j].used == 1) {
            id = tmap[j].id;
            tmap[j].used = 2; /* a tombstone keeps the probe chains of the others */
            break;
        }
    }
    pthread_mutex_unlock(&tmap_mu);
    return id;
}

static void thread_ended(void)
{
    if (t_started >= 0 && on())
        rc_rel("x%d", t_started);
}

static void *thread_start(void *p)
{
    rc_start_t s = *(rc_start_t *)p;
    free(p);
    rc_actor_swap(s.actor);
    t_started = rc_actor_id(s.actor);
    if (on())
        rc_acq("c%d", t_started);
    void *r = s.fn(s.arg);
    thread_ended();
    return r;
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    rc_start_t *s = malloc(sizeof *s);
    if (!s)
        return pthread_create(t, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->actor = rc_actor_new();
    int id = rc_actor_id(s->actor);
    if (on())
        rc_rel("c%d", id); /* before the thread can run */
    int rc = pthread_create(t, attr, thread_start, s);
    if (rc)
        free(s);
    else
        tmap_put(*t, id);
    return rc;
}

void __wrap_pthread_exit(void *r) __attribute__((noreturn));
void __wrap_pthread_exit(void *r)
{
    thread_ended();
    pthread_exit(r);
}

static void joined(pthread_t t)
{
    int id = tmap_take(t);
    if (id >= 0 && on())
        rc_acq("x%d", id);
}

int __wrap_pthread_join(pthread_t t, void **r);
int __wrap_pthread_join(pthread_t t, void **r)
{
    int rc = pthread_join(t, r);
    if (!rc)
        joined(t);
    return rc;
}

int __wrap_pthread_tryjoin_np(pthread_t t, void **r);
int __wrap_pthread_tryjoin_np(pthread_t t, void **r)
{
    int rc = pthread_tryjoin_np(t, r);
    if (!rc)
        joined(t);
    return rc;
}

int __wrap_pthread_timedjoin_np(pthread_t t, void **r, const struct timespec *ts);
int __wrap_pthread_timedjoin_np(pthread_t t, void **r, const struct timespec *ts)
{
    int rc = pthread_timedjoin_np(t, r, ts);
    if (!rc)
        joined(t);
    return rc;
}

/* Locks: the release before the unlock, the acquire after the lock is held. */
#define LK(p) (unsigned long)(uintptr_t)(p)
#define ACQ_WRAP(RT, NAME, DECL, ARGS, KEY, OBJ)                                                   \
    RT __wrap_##NAME DECL;                                                                         \
    RT __wrap_##NAME DECL                                                                          \
    {                                                                                              \
        RT rc = NAME ARGS;                                                                         \
        if (rc == 0 && on())                                                                       \
            rc_acq(KEY "%lx", LK(OBJ));                                                            \
        return rc;                                                                                 \
    }
#define REL_WRAP(RT, NAME, DECL, ARGS, KEY, OBJ)                                                   \
    RT __wrap_##NAME DECL;                                                                         \
    RT __wrap_##NAME DECL                                                                          \
    {                                                                                              \
        if (on())                                                                                  \
            rc_rel(KEY "%lx", LK(OBJ));                                                            \
        return NAME ARGS;                                                                          \
    }

ACQ_WRAP(int, pthread_mutex_lock, (pthread_mutex_t * m), (m), "m", m)
ACQ_WRAP(int, pthread_mutex_trylock, (pthread_mutex_t * m), (m), "m", m)
ACQ_WRAP(int, pthread_mutex_timedlock, (pthread_mutex_t * m, const struct timespec *ts), (m, ts),
         "m", m)
REL_WRAP(int, pthread_mutex_unlock, (pthread_mutex_t * m), (m), "m", m)
ACQ_WRAP(int, pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l), "r", l)
ACQ_WRAP(int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l), "r", l)
ACQ_WRAP(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t * l), (l), "r", l)
ACQ_WRAP(int, pthread_rwlock_trywrlock, (pthread_rwlock_t * l), (l), "r", l)
ACQ_WRAP(int, pthread_rwlock_timedrdlock, (pthread_rwlock_t * l, const struct timespec *ts),
         (l, ts), "r", l)
ACQ_WRAP(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t * l, const struct timespec *ts),
         (l, ts), "r", l)
REL_WRAP(int, pthread_rwlock_unlock, (pthread_rwlock_t * l), (l), "r", l)
ACQ_WRAP(int, pthread_spin_lock, (pthread_spinlock_t * l), (l), "s", l)
ACQ_WRAP(int, pthread_spin_trylock, (pthread_spinlock_t * l), (l), "s", l)
REL_WRAP(int, pthread_spin_unlock, (pthread_spinlock_t * l), (l), "s", l)
REL_WRAP(int, sem_post, (sem_t * s), (s), "S", s)
ACQ_WRAP(int, sem_wait, (sem_t * s), (s), "S", s)
ACQ_WRAP(int, sem_trywait, (sem_t * s), (s), "S", s)
ACQ_WRAP(int, sem_timedwait, (sem_t * s, const struct timespec *ts), (s, ts), "S", s)
REL_WRAP(int, pthread_cond_signal, (pthread_cond_t * c), (c), "v", c)
REL_WRAP(int, pthread_cond_broadcast, (pthread_cond_t * c), (c), "v", c)

/* A wait unlocks the mutex and locks it again: a release before, acquires (mutex and condition)
 * after, whatever it returns (the mutex is held again even on a timeout). */
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (on())
        rc_rel("m%lx", LK(m));
    int rc = pthread_cond_wait(c, m);
    if (on())
        rc_acq("m%lx,v%lx", LK(m), LK(c));
    return rc;
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts);
int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
    if (on())
        rc_rel("m%lx", LK(m));
    int rc = pthread_cond_timedwait(c, m, ts);
    if (on())
        rc_acq("m%lx,v%lx", LK(m), LK(c));
    return rc;
}

/* Barriers: generation n of barrier b is everything released into "B<b>.<n>". Arrivals are
 * numbered in order under a lock; a thread of generation n+1 arrives only after all of n did, so
 * the generation is the arrival number over the count (known from pthread_barrier_init). */
#define BMAP 256
typedef struct {
    uintptr_t b;
    unsigned count;
    uint64_t arrivals;
} rc_bar_t;
static rc_bar_t bmap[BMAP];
static pthread_mutex_t bmap_mu = PTHREAD_MUTEX_INITIALIZER;

int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                unsigned count);
int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                unsigned count)
{
    int rc = pthread_barrier_init(b, a, count);
    if (rc)
        return rc;
    pthread_mutex_lock(&bmap_mu);
    int free_i = -1, i;
    for (i = 0; i < BMAP; i++) {
        if (bmap[i].b == (uintptr_t)b)
            break;
        if (!bmap[i].b && free_i < 0)
            free_i = i;
    }
    if (i == BMAP)
        i = free_i;
    if (i >= 0)
        bmap[i] = (rc_bar_t){(uintptr_t)b, count, 0};
    pthread_mutex_unlock(&bmap_mu);
    if (i < 0)
        rc_unknown("pthread_barrier (more than 256)");
    return rc;
}

int __wrap_pthread_barrier_destroy(pthread_barrier_t *b);
int __wrap_pthread_barrier_destroy(pthread_barrier_t *b)
{
    pthread_mutex_lock(&bmap_mu);
    for (int i = 0; i < BMAP; i++)
        if (bmap[i].b == (uintptr_t)b)
            bmap[i].b = 0;
    pthread_mutex_unlock(&bmap_mu);
    return pthread_barrier_destroy(b);
}

int __wrap_pthread_barrier_wait(pthread_barrier_t *b);
int __wrap_pthread_barrier_wait(pthread_barrier_t *b)
{
    uint64_t gen = 0;
    int known = 0;
    pthread_mutex_lock(&bmap_mu);
    for (int i = 0; i < BMAP; i++)
        if (bmap[i].b == (uintptr_t)b) {
            gen = bmap[i].arrivals++ / (bmap[i].count ? bmap[i].count : 1);
            known = 1;
            break;
        }
    pthread_mutex_unlock(&bmap_mu);
    if (!known && on())
        rc_unknown("pthread_barrier initialized outside the program");
    if (known && on())
        rc_rel("B%lx.%lu", LK(b), (unsigned long)gen);
    int rc = pthread_barrier_wait(b);
    if (known && on())
        rc_acq("B%lx.%lu", LK(b), (unsigned long)gen);
    return rc;
}

/* pthread_once: what the init routine did precedes every return of pthread_once on that control.
 * The routine runs in the calling thread, so a thread-local names the routine to a trampoline. */
static __thread void (*once_fn)(void);
static __thread pthread_once_t *once_ctl;

static void once_tramp(void)
{
    void (*f)(void) = once_fn;
    pthread_once_t *c = once_ctl;
    f();
    if (on())
        rc_rel("O%lx", LK(c));
}

int __wrap_pthread_once(pthread_once_t *c, void (*fn)(void));
int __wrap_pthread_once(pthread_once_t *c, void (*fn)(void))
{
    void (*of)(void) = once_fn;
    pthread_once_t *oc = once_ctl;
    once_fn = fn;
    once_ctl = c;
    int rc = pthread_once(c, once_tramp);
    once_fn = of;
    once_ctl = oc;
    if (!rc && on())
        rc_acq("O%lx", LK(c));
    return rc;
}

/* ---- OpenMP (GCC's libgomp) ------------------------------------------------------------------ */

typedef struct rc_tg {
    uint64_t id;
    struct rc_tg *up;
} rc_tg_t;

/* The task a thread is executing: an implicit task (of a parallel region, or the initial one) or
 * an explicit task. */
typedef struct {
    uint64_t id;       /* its children release "W<id>" when they end (taskwait) */
    uint64_t team;     /* the region of its team; 0: the initial (sequential) team */
    uint64_t *bar;     /* implicit task: its thread's count of team barriers */
    uint64_t gen;      /* explicit task: the barrier generation it belongs to */
    uint64_t tg_in;    /* the taskgroup it belongs to (0: none) */
    rc_tg_t *tg;       /* taskgroups it opened, innermost first */
    uint64_t sc;       /* single-copy constructs it encountered */
    int final;         /* a final task: its children are included (undeferred) */
    rc_actor_t *self;  /* implicit task: its thread's actor */
    rc_actor_t *chunk; /* the strand of the section or loop chunk it executes (NULL: none) */
} rc_task_t;

static __thread rc_task_t *t_task;
static __thread rc_task_t t_initial;
static __thread uint64_t t_initial_bar;
static __thread rc_actor_t *t_pool_actor;

static rc_task_t *cur_task(void)
{
    if (t_task)
        return t_task;
    if (!t_initial.id) {
        t_initial.id = new_id();
        t_initial.bar = &t_initial_bar;
    }
    return &t_initial;
}

static uint64_t task_gen(const rc_task_t *t)
{
    return t->bar ? *t->bar : t->gen;
}
static uint64_t task_tg(const rc_task_t *t)
{
    return t->tg ? t->tg->id : t->tg_in;
}

/* ---- parallel regions */

typedef struct {
    void (*fn)(void *);
    void *data;
    uint64_t id;
} rc_par_t;

/* The actor of a team thread: the encountering thread keeps its own; a pool thread of libgomp
 * gets one of its own, kept across regions. */
static rc_actor_t *team_actor(void)
{
    rc_actor_t *a = rc_actor_cur();
    if (a)
        return a;
    if (!t_pool_actor)
        t_pool_actor = rc_actor_new();
    return t_pool_actor;
}

static void par_tramp(void *p)
{
    rc_par_t *P = p;
    rc_actor_t *old = rc_actor_swap(team_actor());
    rc_task_t *oldt = t_task;
    uint64_t bar = 0;
    rc_task_t ctx = {.id = new_id(), .team = P->id, .bar = &bar, .self = rc_actor_cur()};
    t_task = &ctx;
    if (on())
        rc_acq("p%lu", (unsigned long)P->id);
    P->fn(P->data);
    if (on())
        rc_rel("q%lu", (unsigned long)P->id);
    while (ctx.tg) { /* a taskgroup left open (cancellation) */
        rc_tg_t *u = ctx.tg->up;
        free(ctx.tg);
        ctx.tg = u;
    }
    t_task = oldt;
    rc_actor_swap(old);
}

static void par_begin(rc_par_t *P, void (*fn)(void *), void *data)
{
    P->fn = fn;
    P->data = data;
    P->id = new_id();
    if (on())
        rc_rel("p%lu", (unsigned long)P->id);
}

static void par_end(const rc_par_t *P)
{
    if (on())
        rc_acq("q%lu", (unsigned long)P->id);
}

void __wrap_GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags);
void __wrap_GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags)
{
    REAL(void (*)(void (*)(void *), void *, unsigned, unsigned), "GOMP_parallel");
    rc_par_t P;
    par_begin(&P, fn, data);
    real_(par_tramp, &P, n, flags);
    par_end(&P);
}

unsigned __wrap_GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n,
                                         unsigned flags);
unsigned __wrap_GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n, unsigned flags)
{
    REAL(unsigned (*)(void (*)(void *), void *, unsigned, unsigned), "GOMP_parallel_reductions");
    rc_par_t P;
    par_begin(&P, fn, data);
    unsigned r = real_(par_tramp, &P, n, flags);
    par_end(&P);
    return r;
}

void __wrap_GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned n, unsigned count,
                                   unsigned flags);
void __wrap_GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned n, unsigned count,
                                   unsigned flags)
{
    REAL(void (*)(void (*)(void *), void *, unsigned, unsigned, unsigned),
         "GOMP_parallel_sections");
    rc_par_t P;
    par_begin(&P, fn, data);
    real_(par_tramp, &P, n, count, flags);
    par_end(&P);
}

void __wrap_GOMP_teams_reg(void (*fn)(void *), void *data, unsigned nteams, unsigned limit,
                           unsigned flags);
void __wrap_GOMP_teams_reg(void (*fn)(void *), void *data, unsigned nteams, unsigned limit,
                           unsigned flags)
{
    REAL(void (*)(void (*)(void *), void *, unsigned, unsigned, unsigned), "GOMP_teams_reg");
    rc_par_t P;
    par_begin(&P, fn, data);
    real_(par_tramp, &P, nteams, limit, flags);
    par_end(&P);
}

/* combined parallel loops: (fn, data, threads, start, end, incr, chunk, flags), without chunk
 * for the runtime schedules */
#define PAR_LOOP(NAME)                                                                             \
    void __wrap_##NAME(void (*fn)(void *), void *data, unsigned n, long s, long e, long i, long c, \
                       unsigned flags);                                                            \
    void __wrap_##NAME(void (*fn)(void *), void *data, unsigned n, long s, long e, long i, long c, \
                       unsigned flags)                                                             \
    {                                                                                              \
        REAL(void (*)(void (*)(void *), void *, unsigned, long, long, long, long, unsigned),       \
             #NAME);                                                                               \
        rc_par_t P;                                                                                \
        par_begin(&P, fn, data);                                                                   \
        real_(par_tramp, &P, n, s, e, i, c, flags);                                                \
        par_end(&P);                                                                               \
    }
#define PAR_LOOP_RT(NAME)                                                                          \
    void __wrap_##NAME(void (*fn)(void *), void *data, unsigned n, long s, long e, long i,         \
                       unsigned flags);                                                            \
    void __wrap_##NAME(void (*fn)(void *), void *data, unsigned n, long s, long e, long i,         \
                       unsigned flags)                                                             \
    {                                                                                              \
        REAL(void (*)(void (*)(void *), void *, unsigned, long, long, long, unsigned), #NAME);     \
        rc_par_t P;                                                                                \
        par_begin(&P, fn, data);                                                                   \
        real_(par_tramp, &P, n, s, e, i, flags);                                                   \
        par_end(&P);                                                                               \
    }
PAR_LOOP(GOMP_parallel_loop_static)
PAR_LOOP(GOMP_parallel_loop_dynamic)
PAR_LOOP(GOMP_parallel_loop_guided)
PAR_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PAR_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PAR_LOOP_RT(GOMP_parallel_loop_runtime)
PAR_LOOP_RT(GOMP_parallel_loop_nonmonotonic_runtime)
PAR_LOOP_RT(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* ---- barriers: GOMP_barrier, and the ends of for and sections (single's is a GOMP_barrier) */

/* ---- sections and loop chunks: a strand each
 * Which thread runs a section, or a chunk of a dynamic, guided or runtime schedule, is the
 * runtime's choice: two of them on one thread are not ordered by that (the program may not rely
 * on it), so each runs on a strand of its own, like a task. It acquires what its implicit task
 * did before ("i<task>"), and releases, when it ends, into the barrier that ends its generation
 * ("k<region>.<n>", as a task does); the implicit task goes on without it (with nowait, only a
 * later barrier orders it). Chunks of a static schedule stay on the thread's own actor: OpenMP
 * assigns them to threads deterministically, and programs may rely on that. */
static void chunk_end(rc_task_t *t)
{
    if (!t->chunk)
        return;
    if (on())
        rc_rel("k%lu.%lu", (unsigned long)t->team, (unsigned long)*t->bar);
    rc_actor_swap(t->self);
    rc_strand_put(t->chunk);
    t->chunk = NULL;
}

static void chunk_begin(rc_task_t *t)
{
    if (!t->bar || !t->team || !t->self)
        return; /* outside a parallel region: one thread runs it all, in order */
    chunk_end(t);
    if (on())
        rc_rel("i%lu", (unsigned long)t->id);
    t->chunk = rc_strand_get();
    rc_actor_swap(t->chunk);
    if (on())
        rc_acq("i%lu", (unsigned long)t->id);
}

/* after a call that hands out the next section or chunk (r: there is one) */
static void chunk_next(bool r)
{
    rc_task_t *t = cur_task();
    if (r)
        chunk_begin(t);
    else
        chunk_end(t);
}

/* Every team thread counts every barrier, logging on or not, so generations pair up. */
static uint64_t bar_arrive(void)
{
    rc_task_t *t = cur_task();
    chunk_end(t);
    if (!t->bar || !t->team)
        return UINT64_MAX; /* the initial team has one thread; explicit tasks meet no barrier */
    uint64_t g = (*t->bar)++;
    if (on())
        rc_rel("b%lu.%lu", (unsigned long)t->team, (unsigned long)g);
    return g;
}

static void bar_leave(uint64_t g)
{
    if (g == UINT64_MAX || !on())
        return;
    uint64_t team = cur_task()->team;
    /* the generation's arrivals, and the tasks it had to finish */
    rc_acq("b%lu.%lu,k%lu.%lu", (unsigned long)team, (unsigned long)g, (unsigned long)team,
           (unsigned long)g);
}

#define BAR_WRAP(RT, NAME)                                                                         \
    RT __wrap_##NAME(void);                                                                        \
    RT __wrap_##NAME(void)                                                                         \
    {                                                                                              \
        REAL(RT (*)(void), #NAME);                                                                 \
        uint64_t g = bar_arrive();                                                                 \
        RT r = (RT)real_();                                                                        \
        bar_leave(g);                                                                              \
        return r;                                                                                  \
    }
#define BAR_WRAP_V(NAME)                                                                           \
    void __wrap_##NAME(void);                                                                      \
    void __wrap_##NAME(void)                                                                       \
    {                                                                                              \
        REAL(void (*)(void), #NAME);                                                               \
        uint64_t g = bar_arrive();                                                                 \
        real_();                                                                                   \
        bar_leave(g);                                                                              \
    }
BAR_WRAP_V(GOMP_barrier)
BAR_WRAP(bool, GOMP_barrier_cancel)
BAR_WRAP_V(GOMP_loop_end)
BAR_WRAP(bool, GOMP_loop_end_cancel)
BAR_WRAP_V(GOMP_sections_end)
BAR_WRAP(bool, GOMP_sections_end_cancel)

#define NOWAIT_END(NAME)                                                                           \
    void __wrap_##NAME(void);                                                                      \
    void __wrap_##NAME(void)                                                                       \
    {                                                                                              \
        REAL(void (*)(void), #NAME);                                                               \
        chunk_end(cur_task());                                                                     \
        real_();                                                                                   \
    }
NOWAIT_END(GOMP_loop_end_nowait)
NOWAIT_END(GOMP_sections_end_nowait)

/* sections: start and next return the section to run (0: none left) */
unsigned __wrap_GOMP_sections_start(unsigned n);
unsigned __wrap_GOMP_sections_start(unsigned n)
{
    REAL(unsigned (*)(unsigned), "GOMP_sections_start");
    unsigned r = real_(n);
    chunk_next(r != 0);
    return r;
}

unsigned __wrap_GOMP_sections2_start(unsigned n, uintptr_t *red, void **mem);
unsigned __wrap_GOMP_sections2_start(unsigned n, uintptr_t *red, void **mem)
{
    REAL(unsigned (*)(unsigned, uintptr_t *, void **), "GOMP_sections2_start");
    unsigned r = real_(n, red, mem);
    chunk_next(r != 0);
    return r;
}

unsigned __wrap_GOMP_sections_next(void);
unsigned __wrap_GOMP_sections_next(void)
{
    REAL(unsigned (*)(void), "GOMP_sections_next");
    chunk_end(cur_task());
    unsigned r = real_();
    chunk_next(r != 0);
    return r;
}

/* loops whose chunks the runtime hands out: start and next return whether a chunk was given */
#define L_START(NAME)                                                                              \
    bool __wrap_##NAME(long s, long e, long i, long c, long *is, long *ie);                        \
    bool __wrap_##NAME(long s, long e, long i, long c, long *is, long *ie)                         \
    {                                                                                              \
        REAL(bool (*)(long, long, long, long, long *, long *), #NAME);                             \
        bool r = real_(s, e, i, c, is, ie);                                                        \
        chunk_next(r);                                                                             \
        return r;                                                                                  \
    }
#define L_START_RT(NAME)                                                                           \
    bool __wrap_##NAME(long s, long e, long i, long *is, long *ie);                                \
    bool __wrap_##NAME(long s, long e, long i, long *is, long *ie)                                 \
    {                                                                                              \
        REAL(bool (*)(long, long, long, long *, long *), #NAME);                                   \
        bool r = real_(s, e, i, is, ie);                                                           \
        chunk_next(r);                                                                             \
        return r;                                                                                  \
    }
#define L_NEXT(NAME, T)                                                                            \
    bool __wrap_##NAME(T *is, T *ie);                                                              \
    bool __wrap_##NAME(T *is, T *ie)                                                               \
    {                                                                                              \
        REAL(bool (*)(T *, T *), #NAME);                                                           \
        chunk_end(cur_task());                                                                     \
        bool r = real_(is, ie);                                                                    \
        chunk_next(r);                                                                             \
        return r;                                                                                  \
    }
#define ULL unsigned long long
#define LU_START(NAME)                                                                             \
    bool __wrap_##NAME(bool up, ULL s, ULL e, ULL i, ULL c, ULL *is, ULL *ie);                     \
    bool __wrap_##NAME(bool up, ULL s, ULL e, ULL i, ULL c, ULL *is, ULL *ie)                      \
    {                                                                                              \
        REAL(bool (*)(bool, ULL, ULL, ULL, ULL, ULL *, ULL *), #NAME);                             \
        bool r = real_(up, s, e, i, c, is, ie);                                                    \
        chunk_next(r);                                                                             \
        return r;                                                                                  \
    }
#define LU_START_RT(NAME)                                                                          \
    bool __wrap_##NAME(bool up, ULL s, ULL e, ULL i, ULL *is, ULL *ie);                            \
    bool __wrap_##NAME(bool up, ULL s, ULL e, ULL i, ULL *is, ULL *ie)                             \
    {                                                                                              \
        REAL(bool (*)(bool, ULL, ULL, ULL, ULL *, ULL *), #NAME);                                  \
        bool r = real_(up, s, e, i, is, ie);                                                       \
        chunk_next(r);                                                                             \
        return r;                                                                                  \
    }
L_START(GOMP_loop_dynamic_start)
L_START(GOMP_loop_guided_start)
L_START(GOMP_loop_nonmonotonic_dynamic_start)
L_START(GOMP_loop_nonmonotonic_guided_start)
L_START(GOMP_loop_ordered_dynamic_start)
L_START(GOMP_loop_ordered_guided_start)
L_START_RT(GOMP_loop_runtime_start)
L_START_RT(GOMP_loop_nonmonotonic_runtime_start)
L_START_RT(GOMP_loop_maybe_nonmonotonic_runtime_start)
L_START_RT(GOMP_loop_ordered_runtime_start)
L_NEXT(GOMP_loop_dynamic_next, long)
L_NEXT(GOMP_loop_guided_next, long)
L_NEXT(GOMP_loop_runtime_next, long)
L_NEXT(GOMP_loop_nonmonotonic_dynamic_next, long)
L_NEXT(GOMP_loop_nonmonotonic_guided_next, long)
L_NEXT(GOMP_loop_nonmonotonic_runtime_next, long)
L_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next, long)
L_NEXT(GOMP_loop_ordered_dynamic_next, long)
L_NEXT(GOMP_loop_ordered_guided_next, long)
L_NEXT(GOMP_loop_ordered_runtime_next, long)
LU_START(GOMP_loop_ull_dynamic_start)
LU_START(GOMP_loop_ull_guided_start)
LU_START(GOMP_loop_ull_nonmonotonic_dynamic_start)
LU_START(GOMP_loop_ull_nonmonotonic_guided_start)
LU_START(GOMP_loop_ull_ordered_dynamic_start)
LU_START(GOMP_loop_ull_ordered_guided_start)
LU_START_RT(GOMP_loop_ull_runtime_start)
LU_START_RT(GOMP_loop_ull_nonmonotonic_runtime_start)
LU_START_RT(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
LU_START_RT(GOMP_loop_ull_ordered_runtime_start)
L_NEXT(GOMP_loop_ull_dynamic_next, ULL)
L_NEXT(GOMP_loop_ull_guided_next, ULL)
L_NEXT(GOMP_loop_ull_runtime_next, ULL)
L_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next, ULL)
L_NEXT(GOMP_loop_ull_nonmonotonic_guided_next, ULL)
L_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next, ULL)
L_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next, ULL)
L_NEXT(GOMP_loop_ull_ordered_dynamic_next, ULL)
L_NEXT(GOMP_loop_ull_ordered_guided_next, ULL)
L_NEXT(GOMP_loop_ull_ordered_runtime_next, ULL)

/* the generic entry points (GCC 9+, loops with reductions or an explicit schedule kind): sched
 * 1 is GFS_STATIC (bit 31 marks monotonic) */
#define GFS_STATIC 1
bool __wrap_GOMP_loop_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                            uintptr_t *red, void **mem);
bool __wrap_GOMP_loop_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                            uintptr_t *red, void **mem)
{
    REAL(bool (*)(long, long, long, long, long, long *, long *, uintptr_t *, void **),
         "GOMP_loop_start");
    bool r = real_(s, e, i, sched, c, is, ie, red, mem);
    if ((sched & 0x7fffffffL) != GFS_STATIC)
        chunk_next(r);
    return r;
}

bool __wrap_GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                                    uintptr_t *red, void **mem);
bool __wrap_GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                                    uintptr_t *red, void **mem)
{
    REAL(bool (*)(long, long, long, long, long, long *, long *, uintptr_t *, void **),
         "GOMP_loop_ordered_start");
    bool r = real_(s, e, i, sched, c, is, ie, red, mem);
    if ((sched & 0x7fffffffL) != GFS_STATIC)
        chunk_next(r);
    return r;
}

bool __wrap_GOMP_loop_ull_start(bool up, ULL s, ULL e, ULL i, long sched, ULL c, ULL *is, ULL *ie,
                                uintptr_t *red, void **mem);
bool __wrap_GOMP_loop_ull_start(bool up, ULL s, ULL e, ULL i, long sched, ULL c, ULL *is, ULL *ie,
                                uintptr_t *red, void **mem)
{
    REAL(bool (*)(bool, ULL, ULL, ULL, long, ULL, ULL *, ULL *, uintptr_t *, void **),
         "GOMP_loop_ull_start");
    bool r = real_(up, s, e, i, sched, c, is, ie, red, mem);
    if ((sched & 0x7fffffffL) != GFS_STATIC)
        chunk_next(r);
    return r;
}

bool __wrap_GOMP_loop_ull_ordered_start(bool up, ULL s, ULL e, ULL i, long sched, ULL c, ULL *is,
                                        ULL *ie, uintptr_t *red, void **mem);
bool __wrap_GOMP_loop_ull_ordered_start(bool up, ULL s, ULL e, ULL i, long sched, ULL c, ULL *is,
                                        ULL *ie, uintptr_t *red, void **mem)
{
    REAL(bool (*)(bool, ULL, ULL, ULL, long, ULL, ULL *, ULL *, uintptr_t *, void **),
         "GOMP_loop_ull_ordered_start");
    bool r = real_(up, s, e, i, sched, c, is, ie, red, mem);
    if ((sched & 0x7fffffffL) != GFS_STATIC)
        chunk_next(r);
    return r;
}

/* ---- mutual exclusion: critical, atomic (the non-lock-free kind), ordered, locks */

#define CS_WRAP(START, END, KEY, KFMT)                                                             \
    void __wrap_##START(void);                                                                     \
    void __wrap_##START(void)                                                                      \
    {                                                                                              \
        REAL(void (*)(void), #START);                                                              \
        real_();                                                                                   \
        if (on())                                                                                  \
            rc_acq(KFMT, KEY);                                                                     \
    }                                                                                              \
    void __wrap_##END(void);                                                                       \
    void __wrap_##END(void)                                                                        \
    {                                                                                              \
        REAL(void (*)(void), #END);                                                                \
        if (on())                                                                                  \
            rc_rel(KFMT, KEY);                                                                     \
        real_();                                                                                   \
    }
CS_WRAP(GOMP_critical_start, GOMP_critical_end, "C", "%s")
CS_WRAP(GOMP_atomic_start, GOMP_atomic_end, "A", "%s")
CS_WRAP(GOMP_ordered_start, GOMP_ordered_end, (unsigned long)cur_task()->team, "o%lu")

void __wrap_GOMP_critical_name_start(void **p);
void __wrap_GOMP_critical_name_start(void **p)
{
    REAL(void (*)(void **), "GOMP_critical_name_start");
    real_(p);
    if (on())
        rc_acq("C%lx", LK(p));
}

void __wrap_GOMP_critical_name_end(void **p);
void __wrap_GOMP_critical_name_end(void **p)
{
    REAL(void (*)(void **), "GOMP_critical_name_end");
    if (on())
        rc_rel("C%lx", LK(p));
    real_(p);
}

#define OMPLOCK_ACQ(NAME, T)                                                                       \
    void __wrap_##NAME(T *l);                                                                      \
    void __wrap_##NAME(T *l)                                                                       \
    {                                                                                              \
        REAL(void (*)(T *), #NAME);                                                                \
        real_(l);                                                                                  \
        if (on())                                                                                  \
            rc_acq("L%lx", LK(l));                                                                 \
    }
#define OMPLOCK_REL(NAME, T)                                                                       \
    void __wrap_##NAME(T *l);                                                                      \
    void __wrap_##NAME(T *l)                                                                       \
    {                                                                                              \
        REAL(void (*)(T *), #NAME);                                                                \
        if (on())                                                                                  \
            rc_rel("L%lx", LK(l));                                                                 \
        real_(l);                                                                                  \
    }
#define OMPLOCK_TEST(NAME, T)                                                                      \
    int __wrap_##NAME(T *l);                                                                       \
    int __wrap_##NAME(T *l)                                                                        \
    {                                                                                              \
        REAL(int (*)(T *), #NAME);                                                                 \
        int r = real_(l);                                                                          \
        if (r && on())                                                                             \
            rc_acq("L%lx", LK(l));                                                                 \
        return r;                                                                                  \
    }
/* omp_lock_t and omp_nest_lock_t are opaque here: only their addresses matter */
OMPLOCK_ACQ(omp_set_lock, void)
OMPLOCK_REL(omp_unset_lock, void)
OMPLOCK_TEST(omp_test_lock, void)
OMPLOCK_ACQ(omp_set_nest_lock, void)
OMPLOCK_REL(omp_unset_nest_lock, void)
OMPLOCK_TEST(omp_test_nest_lock, void)

/* ---- single with copyprivate: the executing thread publishes, the others copy */

void *__wrap_GOMP_single_copy_start(void);
void *__wrap_GOMP_single_copy_start(void)
{
    REAL(void *(*)(void), "GOMP_single_copy_start");
    rc_task_t *t = cur_task();
    uint64_t n = t->sc++;
    void *d = real_();
    if (d && on())
        rc_acq("s%lu.%lu", (unsigned long)t->team, (unsigned long)n);
    return d;
}

void __wrap_GOMP_single_copy_end(void *d);
void __wrap_GOMP_single_copy_end(void *d)
{
    REAL(void (*)(void *), "GOMP_single_copy_end");
    rc_task_t *t = cur_task();
    if (on())
        rc_rel("s%lu.%lu", (unsigned long)t->team, (unsigned long)(t->sc - 1));
    real_(d);
}

/* ---- explicit tasks */

#define TF_FINAL  (1u << 1)
#define TF_DEPEND (1u << 3)
#define TF_DETACH (1u << 13)

/* What a task's trampoline needs, in front of the program's task data (libgomp copies both). */
typedef struct {
    void (*fn)(void *);
    void (*cpyfn)(void *, void *);
    const void *src; /* cpyfn's source */
    long off;        /* the program's data, from the start of this header */
    uint64_t id, parent, team, gen, tg;
    int undeferred, final, ndeps;
    uintptr_t *deps; /* dependence addresses (heap; freed when the task ends) */
} rc_thdr_t;

/* the addresses of a GOMP depend array (libgomp's two layouts; depobj entries point to the
 * address) */
static int deps_parse(void **depend, uintptr_t **out)
{
    *out = NULL;
    if (!depend)
        return 0;
    size_t n = (uintptr_t)depend[0], first = 2, normal = n;
    if (!n) {
        n = (uintptr_t)depend[1];
        normal = (uintptr_t)depend[2] + (uintptr_t)depend[3] + (uintptr_t)depend[4];
        first = 5;
    }
    if (!n)
        return 0;
    uintptr_t *a = malloc(n * sizeof *a);
    if (!a)
        fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        void *d = depend[first + i];
        a[i] = i >= normal ? (uintptr_t)((void **)d)[0] : (uintptr_t)d;
    }
    *out = a;
    return (int)n;
}

/* One event per object: "d<addr>" for each dependence (acquire or release). */
static void deps_sync(const uintptr_t *d, int n, int rel)
{
    for (int i = 0; i < n; i++) {
        if (rel)
            rc_rel("d%lx", (unsigned long)d[i]);
        else
            rc_acq("d%lx", (unsigned long)d[i]);
    }
}

static void task_tramp(void *p)
{
    rc_thdr_t h;
    memcpy(&h, p, sizeof h);
    rc_actor_t *st = rc_strand_get();
    rc_actor_t *old = rc_actor_swap(st);
    rc_task_t *oldt = t_task;
    rc_task_t ctx = {.id = h.id, .team = h.team, .gen = h.gen, .tg_in = h.tg, .final = h.final};
    t_task = &ctx;
    int tracked = on();
    if (tracked) {
        rc_acq("t%lu", (unsigned long)h.id);
        deps_sync(h.deps, h.ndeps, 0);
    }
    h.fn((char *)p + h.off);
    if (tracked && on()) {
        char k[256];
        int n = snprintf(k, sizeof k, "W%lu,k%lu.%lu", (unsigned long)h.parent,
                         (unsigned long)h.team, (unsigned long)h.gen);
        if (h.tg)
            n += snprintf(k + n, sizeof k - (size_t)n, ",g%lu", (unsigned long)h.tg);
        if (h.undeferred)
            snprintf(k + n, sizeof k - (size_t)n, ",u%lu", (unsigned long)h.id);
        deps_sync(h.deps, h.ndeps, 1);
        rc_rel("%s", k);
    }
    while (ctx.tg) {
        rc_tg_t *u = ctx.tg->up;
        free(ctx.tg);
        ctx.tg = u;
    }
    t_task = oldt;
    rc_actor_swap(old);
    rc_strand_put(st);
    free(h.deps);
}

/* libgomp copies the task's data with cpyfn into the buffer it allocated (size and alignment as
 * passed): the header, then the program's copy constructor on the rest. */
static void task_cpy(void *dst, void *src)
{
    rc_thdr_t *h = src;
    memcpy(dst, h, sizeof *h);
    h->cpyfn((char *)dst + h->off, (void *)h->src);
}

typedef void (*gomp_task_fn)(void (*)(void *), void *, void (*)(void *, void *), long, long, bool,
                             unsigned, void **, int, void *);

void __wrap_GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                      long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
                      void *detach);
void __wrap_GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                      long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
                      void *detach)
{
    REAL(gomp_task_fn, "GOMP_task");
    if (!rc_instrumented || (flags & TF_DETACH)) {
        /* a detached task completes when its event is fulfilled, which is not followed */
        if (flags & TF_DETACH)
            rc_unknown("task detach");
        real_(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
        return;
    }
    rc_task_t *cur = cur_task();
    rc_thdr_t h = {.fn = fn,
                   .cpyfn = cpyfn,
                   .src = data,
                   .id = new_id(),
                   .parent = cur->id,
                   .team = cur->team,
                   .gen = task_gen(cur),
                   .tg = task_tg(cur)};
    h.final = (flags & TF_FINAL) || cur->final;
    h.undeferred = !if_clause || cur->final; /* included tasks of a final task, or if(0) */
    if (flags & TF_DEPEND)
        h.ndeps = deps_parse(depend, &h.deps);
    long align = arg_align > (long)alignof(max_align_t) ? arg_align : (long)alignof(max_align_t);
    long hsz = ((long)sizeof h + align - 1) / align * align;
    h.off = hsz;
    if (on())
        rc_rel("t%lu", (unsigned long)h.id); /* what the task's body follows */
    if (cpyfn) {
        real_(task_tramp, &h, task_cpy, hsz + arg_size, align, if_clause, flags, depend, priority,
              detach);
    } else {
        char *raw = __builtin_alloca((size_t)(hsz + arg_size + align));
        char *blk = (char *)(((uintptr_t)raw + (uintptr_t)align - 1) & ~((uintptr_t)align - 1));
        memcpy(blk, &h, sizeof h);
        if (arg_size)
            memcpy(blk + hsz, data, (size_t)arg_size);
        real_(task_tramp, blk, NULL, hsz + arg_size, align, if_clause, flags, depend, priority,
              detach);
    }
    if (h.undeferred && on())
        rc_acq("u%lu", (unsigned long)h.id);
}

void __wrap_GOMP_taskwait(void);
void __wrap_GOMP_taskwait(void)
{
    REAL(void (*)(void), "GOMP_taskwait");
    real_();
    if (on())
        rc_acq("W%lu", (unsigned long)cur_task()->id);
}

void __wrap_GOMP_taskwait_depend(void **depend);
void __wrap_GOMP_taskwait_depend(void **depend)
{
    REAL(void (*)(void **), "GOMP_taskwait_depend");
    real_(depend);
    if (on()) {
        uintptr_t *d;
        int n = deps_parse(depend, &d);
        deps_sync(d, n, 0);
        free(d);
    }
}

void __wrap_GOMP_taskgroup_start(void);
void __wrap_GOMP_taskgroup_start(void)
{
    REAL(void (*)(void), "GOMP_taskgroup_start");
    rc_task_t *t = cur_task();
    rc_tg_t *g = malloc(sizeof *g);
    if (!g)
        fail("out of memory");
    g->id = new_id();
    g->up = t->tg;
    t->tg = g;
    real_();
}

void __wrap_GOMP_taskgroup_end(void);
void __wrap_GOMP_taskgroup_end(void)
{
    REAL(void (*)(void), "GOMP_taskgroup_end");
    real_();
    rc_task_t *t = cur_task();
    rc_tg_t *g = t->tg;
    if (!g)
        return;
    if (on())
        rc_acq("g%lu", (unsigned long)g->id);
    t->tg = g->up;
    free(g);
}

/* ---- what is not followed: the process falls back to log order (rt.h, rc_unknown) */

typedef void (*gomp_taskloop_fn)(void (*)(void *), void *, void (*)(void *, void *), long, long,
                                 unsigned, unsigned long, int, long, long, long);
void __wrap_GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                          long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                          int priority, long start, long end, long step);
void __wrap_GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                          long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                          int priority, long start, long end, long step)
{
    REAL(gomp_taskloop_fn, "GOMP_taskloop");
    rc_unknown("taskloop");
    real_(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}

typedef void (*gomp_taskloop_ull_fn)(void (*)(void *), void *, void (*)(void *, void *), long, long,
                                     unsigned, unsigned long, int, unsigned long long,
                                     unsigned long long, unsigned long long);
void __wrap_GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                              long arg_size, long arg_align, unsigned flags,
                              unsigned long num_tasks, int priority, unsigned long long start,
                              unsigned long long end, unsigned long long step);
void __wrap_GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                              long arg_size, long arg_align, unsigned flags,
                              unsigned long num_tasks, int priority, unsigned long long start,
                              unsigned long long end, unsigned long long step)
{
    REAL(gomp_taskloop_ull_fn, "GOMP_taskloop_ull");
    rc_unknown("taskloop");
    real_(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}

void __wrap_GOMP_doacross_post(long *c);
void __wrap_GOMP_doacross_post(long *c)
{
    REAL(void (*)(long *), "GOMP_doacross_post");
    rc_unknown("ordered depend (doacross)");
    real_(c);
}

void __wrap_GOMP_doacross_ull_post(unsigned long long *c);
void __wrap_GOMP_doacross_ull_post(unsigned long long *c)
{
    REAL(void (*)(unsigned long long *), "GOMP_doacross_ull_post");
    rc_unknown("ordered depend (doacross)");
    real_(c);
}

void __wrap_GOMP_parallel_start(void (*fn)(void *), void *data, unsigned n);
void __wrap_GOMP_parallel_start(void (*fn)(void *), void *data, unsigned n)
{
    REAL(void (*)(void (*)(void *), void *, unsigned), "GOMP_parallel_start");
    rc_unknown("GOMP_parallel_start (objects compiled by GCC before 4.9)");
    real_(fn, data, n);
}

#define GOMP_TARGET_FLAG_NOWAIT (1u << 0)
typedef void (*gomp_target_ext_fn)(int, void (*)(void *), size_t, void **, size_t *,
                                   unsigned short *, unsigned int, void **, void **);
void __wrap_GOMP_target_ext(int dev, void (*fn)(void *), size_t n, void **a, size_t *s,
                            unsigned short *k, unsigned int flags, void **d, void **args);
void __wrap_GOMP_target_ext(int dev, void (*fn)(void *), size_t n, void **a, size_t *s,
                            unsigned short *k, unsigned int flags, void **d, void **args)
{
    REAL(gomp_target_ext_fn, "GOMP_target_ext");
    if (flags & GOMP_TARGET_FLAG_NOWAIT)
        rc_unknown("target nowait");
    real_(dev, fn, n, a, s, k, flags, d, args);
}
