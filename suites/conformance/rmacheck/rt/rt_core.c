/* rt_core.c — the log, the actors and the load/store hooks of rmacheck's runtime.
 *
 * The log is a sparse file in the directory the driver made under /dev/shm, mapped shared: a
 * line is in the page cache the moment it is written, so a rank that crashes or is killed still
 * leaves everything before the crash to the analysis.
 *
 * Actors (rt.h): each thread of an instrumented program, and each running explicit OpenMP task,
 * has its own sequence of events. An event line names its actor and sequence number and what it
 * joins; the analysis computes vector clocks from those edges, so the runtime keeps no clock.
 *
 * The hooks are the entry points GCC's -fsanitize=thread instrumentation calls (rmacheck-cc
 * compiles with it but links this runtime instead of libtsan): an access is recorded only when it
 * falls in window memory or in an in-flight origin/result buffer. Between two events of an actor
 * its accesses are kept per (window, owner, read/write, instruction) as a sorted set of merged
 * byte intervals, and written when the actor's next event comes: a loop that loads and stores a
 * whole window between two synchronization calls is two lines, however its loads and stores
 * alternate. */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int rc_active;
__thread int rc_inside;
int rc_wrank = -1, rc_wsize;
int rc_instrumented;

static char *log_base;
static size_t log_cap, log_off;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

#define LOG_CAP ((size_t)1 << 32) /* sparse: only written pages take memory */
#define LOG_HDR 64                /* the first 8 bytes: length of the text that follows */

static void die(const char *what)
{
    fprintf(stderr, "rmacheck: rank %d: %s: %s\n", rc_wrank, what, strerror(errno));
    _exit(2);
}

static void oom(void)
{
    fprintf(stderr, "rmacheck: rank %d: out of memory for the runtime's records; stopping\n",
            rc_wrank);
    _exit(2);
}

/* pthread calls return the error instead of setting errno */
static void pt_check(int err, const char *what)
{
    if (err) {
        errno = err;
        die(what);
    }
}

void rc_lock(void)
{
    pt_check(pthread_mutex_lock(&log_mu), "pthread_mutex_lock (log)");
}
void rc_unlock(void)
{
    pt_check(pthread_mutex_unlock(&log_mu), "pthread_mutex_unlock (log)");
}

/* ---- the big lock -------------------------------------------------------------------------
 * Every wrapper of rt_mpi.c holds it while it reads or changes the runtime's state. A depth per
 * thread makes it reentrant; the runtime's waits drop it entirely (rc_big_release) and take it
 * back at the same depth. */
static pthread_mutex_t big_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int big_depth;

void rc_big_lock(void)
{
    if (big_depth++ == 0)
        pt_check(pthread_mutex_lock(&big_mu), "pthread_mutex_lock");
}

void rc_big_unlock(void)
{
    if (big_depth <= 0) {
        fprintf(stderr, "rmacheck: rank %d: internal error: big lock released twice\n", rc_wrank);
        _exit(2);
    }
    if (--big_depth == 0)
        pt_check(pthread_mutex_unlock(&big_mu), "pthread_mutex_unlock");
}

int rc_big_release(void)
{
    int d = big_depth;
    if (d) {
        big_depth = 0;
        pt_check(pthread_mutex_unlock(&big_mu), "pthread_mutex_unlock");
    }
    return d;
}

void rc_big_reacquire(int depth)
{
    if (depth) {
        pt_check(pthread_mutex_lock(&big_mu), "pthread_mutex_lock");
        big_depth = depth;
    }
}

/* ---- the log file ------------------------------------------------------------------------- */

void rc_log_open(void)
{
    const char *dir = getenv("RMACHECK_DIR");
    if (!dir || !*dir)
        return;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/rank.%d", dir, rc_wrank) >= (int)sizeof path) {
        fprintf(stderr, "rmacheck: RMACHECK_DIR too long\n");
        _exit(2);
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        char host[256] = "?";
        int e = errno;
        if (gethostname(host, sizeof host) != 0)
            strcpy(host, "?");
        host[sizeof host - 1] = 0;
        fprintf(stderr,
                "rmacheck: rank %d on %s cannot create its log %s: %s (ranks on several hosts "
                "need a directory every host reaches: rmacheck --dir DIR)\n",
                rc_wrank, host, path, strerror(e));
        /* Meet the other ranks in their first collective of the runtime (the MPI_Comm_dup after
         * their "init" line) before leaving: the launcher stops the job when this rank exits,
         * and a rank still inside MPI_Init then would leave no log either, so the driver could
         * not even say which rank failed. */
        MPI_Comm c;
        if (PMPI_Comm_dup(MPI_COMM_WORLD, &c) == MPI_SUCCESS)
            PMPI_Comm_free(&c);
        _exit(2);
    }
    size_t cap = LOG_CAP;
    while (ftruncate(fd, (off_t)cap) != 0) /* a file system with a smaller file size limit */
        if ((cap >>= 1) < ((size_t)1 << 26))
            die("ftruncate of the log");
    log_base = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (log_base == MAP_FAILED)
        die("mmap of the log");
    close(fd);
    log_cap = cap;
    log_off = LOG_HDR;
    rc_active = 1;
}

/* Appends bytes of the line being written (caller holds the log mutex); log_end publishes them,
 * log_drop forgets them. A line that does not fit is dropped whole. */
static size_t line_start;
static int line_full;

static void log_begin(void)
{
    line_start = log_off;
    line_full = 0;
}

static void log_put(const char *s, size_t n)
{
    if (line_full || log_off + n + 1 > log_cap) {
        line_full = 1;
        return;
    }
    memcpy(log_base + log_off, s, n);
    log_off += n;
}

static void log_end(void)
{
    if (line_full) {
        static int warned;
        log_off = line_start;
        if (!warned++)
            fprintf(stderr, "rmacheck: rank %d: log full, recording stops\n", rc_wrank);
        return;
    }
    /* published after the text: a crash leaves the length of complete lines only */
    __atomic_store_n((uint64_t *)log_base, (uint64_t)(log_off - LOG_HDR), __ATOMIC_RELEASE);
}

static void log_line(const char *s, size_t n)
{
    log_begin();
    log_put(s, n);
    log_end();
}

void rc_log(const char *fmt, ...)
{
    if (!rc_active)
        return;
    char b[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n >= (int)sizeof b) {
        n = (int)sizeof b - 1;
        b[n - 1] = '\n';
    }
    rc_lock();
    log_line(b, (size_t)n);
    rc_unlock();
}

/* A code address as "module+offset" (addr2line at report time). dladdr is slow: the strings of
 * recent addresses are kept (caller holds the log mutex or is alone with the cache). */
static const char *pc_uncached(const void *pc, char *buf, size_t n)
{
    Dl_info di;
    if (pc && dladdr(pc, &di) && di.dli_fname && di.dli_fname[0]) {
        snprintf(buf, n, "%s+%lx", di.dli_fname,
                 (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase));
        return buf;
    }
    if (pc && dladdr(pc, &di)) {
        /* the main program: dli_fname may be empty */
        char exe[4096];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = 0;
            if (snprintf(buf, n, "%s+%lx", exe,
                         (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase)) < (int)n)
                return buf;
        }
    }
    snprintf(buf, n, "?+%lx", (unsigned long)(uintptr_t)pc);
    return buf;
}

#define PCC 512
static struct {
    uintptr_t pc;
    char s[512];
} pcc[PCC];

static const char *pc_str_locked(uintptr_t pc)
{
    unsigned h = (unsigned)((pc >> 2) ^ (pc >> 13)) % PCC;
    if (pcc[h].pc != pc || !pcc[h].s[0]) {
        pc_uncached((const void *)pc, pcc[h].s, sizeof pcc[h].s);
        pcc[h].pc = pc;
    }
    return pcc[h].s;
}

const char *rc_pc(const void *pc, char *buf, size_t n)
{
    rc_lock();
    snprintf(buf, n, "%s", pc_str_locked((uintptr_t)pc));
    rc_unlock();
    return buf;
}

/* ---- actors ------------------------------------------------------------------------------- */

typedef struct {
    uintptr_t lo, hi;
} rc_iv_t;

/* Pending accesses of one key: sorted, disjoint, non-adjacent intervals of owner addresses. */
typedef struct {
    int win, owner, write;
    uintptr_t pc;
    rc_iv_t *iv;
    int n, cap, last;
} rc_pkey_t;

#define NPKEY    16   /* keys per actor; a seventeenth flushes them all */
#define PKEY_MAX 1024 /* intervals per key before it is written out */
#define ACACHE   64   /* atomic locations whose release version an actor remembers */

struct rc_actor {
    int id;
    uint64_t seq;
    int dirty; /* accesses recorded since its last event */
    rc_pkey_t pk[NPKEY];
    int npk;
    struct {
        uintptr_t addr;
        uint64_t ver;
    } ac[ACACHE];
    rc_actor_t *next_free;
};

static rc_actor_t **actors;
static int nactors, capactors;
/* Strands no task or chunk runs on, least recently used first: a strand's next task is ordered
 * after its previous one (a strand is sequential), so the pool keeps STRANDS_SPARE of them idle
 * before it hands one out again; two tasks or chunks run one after the other stay unordered, a
 * task and one run STRANDS_SPARE later may not. */
#define STRANDS_SPARE 8
static rc_actor_t *strands_head, *strands_tail;
static int nstrands_free;
static __thread rc_actor_t *t_actor;
static int unknown_seen; /* a thread or construct the runtime cannot order: see rc_unknown */

static rc_actor_t *actor_push_locked(void)
{
    if (nactors == capactors) {
        int nc = capactors ? 2 * capactors : 16;
        rc_actor_t **p = realloc(actors, (size_t)nc * sizeof *p);
        if (!p)
            oom();
        actors = p;
        capactors = nc;
    }
    rc_actor_t *a = calloc(1, sizeof *a);
    if (!a)
        oom();
    a->id = nactors;
    actors[nactors++] = a;
    return a;
}

/* Actor 0 is reserved for the thread that initializes MPI (rc_actor_main), whatever threads
 * were started before. */
static rc_actor_t *actor_new_locked(void)
{
    if (!nactors)
        actor_push_locked();
    return actor_push_locked();
}

rc_actor_t *rc_actor_new(void)
{
    rc_lock();
    rc_actor_t *a = actor_new_locked();
    rc_unlock();
    return a;
}

int rc_actor_id(const rc_actor_t *a)
{
    return a->id;
}

rc_actor_t *rc_actor_cur(void)
{
    return t_actor;
}

rc_actor_t *rc_actor_swap(rc_actor_t *a)
{
    rc_actor_t *o = t_actor;
    t_actor = a;
    return o;
}

rc_actor_t *rc_strand_get(void)
{
    rc_lock();
    rc_actor_t *a = NULL;
    if (nstrands_free > STRANDS_SPARE) {
        a = strands_head;
        strands_head = a->next_free;
        if (!strands_head)
            strands_tail = NULL;
        nstrands_free--;
    } else {
        a = actor_new_locked();
    }
    rc_unlock();
    return a;
}

void rc_strand_put(rc_actor_t *a)
{
    rc_lock();
    a->next_free = NULL;
    if (strands_tail)
        strands_tail->next_free = a;
    else
        strands_head = a;
    strands_tail = a;
    nstrands_free++;
    rc_unlock();
}

/* Actor 0: the thread that initialized MPI, and every thread of a program not built with
 * rmacheck-cc (one actor per process, its events in log order). */
static rc_actor_t *actor0_locked(void)
{
    if (!nactors)
        actor_push_locked();
    return actors[0];
}

void rc_actor_main(void)
{
    rc_lock();
    rc_actor_t *a0 = actor0_locked();
    if (!t_actor)
        t_actor = a0;
    rc_unlock();
}

static void unknown_locked(const char *what)
{
    char b[256];
    int n = snprintf(b, sizeof b, "th - unknown %s\n", what);
    if (n > 0 && n < (int)sizeof b && rc_active)
        log_line(b, (size_t)n);
    unknown_seen = 1;
}

/* Each construct is named once. */
void rc_unknown(const char *what)
{
    static char said[16][48];
    static int nsaid;
    rc_lock();
    int seen = 0;
    for (int i = 0; i < nsaid; i++)
        seen |= strcmp(said[i], what) == 0;
    if (!seen) {
        if (nsaid < 16)
            snprintf(said[nsaid++], sizeof said[0], "%s", what);
        unknown_locked(what);
    }
    unknown_seen = 1;
    rc_unlock();
}

/* The calling thread's actor (log mutex held). */
static rc_actor_t *self_locked(void)
{
    if (!rc_instrumented)
        return actor0_locked();
    if (t_actor)
        return t_actor;
    /* a thread the runtime did not see start */
    rc_actor_t *a = actor_new_locked();
    t_actor = a;
    char b[64];
    snprintf(b, sizeof b, "thread-%d", a->id);
    unknown_locked(b);
    return a;
}

/* ---- pending load/store intervals --------------------------------------------------------- */

static void pkey_write(rc_actor_t *a, rc_pkey_t *k)
{
    if (!k->n)
        return;
    const char *pc = pc_str_locked(k->pc);
    char b[8192];
    int i = 0;
    while (i < k->n) {
        int n = snprintf(b, sizeof b, "ls %d.%lu %c %d %d %s ", a->id, (unsigned long)a->seq,
                         k->write ? 'W' : 'R', k->win, k->owner, pc);
        if (n <= 0 || n >= (int)sizeof b - 64)
            return;
        int first = 1;
        while (i < k->n && n < (int)sizeof b - 48) {
            n += snprintf(b + n, sizeof b - (size_t)n, first ? "%lx:%lu" : ",%lx:%lu",
                          (unsigned long)k->iv[i].lo, (unsigned long)(k->iv[i].hi - k->iv[i].lo));
            first = 0;
            i++;
        }
        b[n++] = '\n';
        log_line(b, (size_t)n);
    }
    k->n = 0;
    k->last = 0;
}

static void actor_flush(rc_actor_t *a)
{
    for (int i = 0; i < a->npk; i++)
        pkey_write(a, &a->pk[i]);
    a->npk = 0;
}

void rc_flush_all(void)
{
    if (!rc_active)
        return;
    rc_lock();
    for (int i = 0; i < nactors; i++)
        actor_flush(actors[i]);
    rc_unlock();
}

static void iv_remove(rc_pkey_t *k, int i)
{
    memmove(&k->iv[i], &k->iv[i + 1], (size_t)(k->n - i - 1) * sizeof *k->iv);
    k->n--;
}

/* Interval i grew: absorb the neighbours it now touches. */
static void iv_merge_around(rc_pkey_t *k, int i)
{
    while (i + 1 < k->n && k->iv[i + 1].lo <= k->iv[i].hi) {
        if (k->iv[i + 1].hi > k->iv[i].hi)
            k->iv[i].hi = k->iv[i + 1].hi;
        iv_remove(k, i + 1);
    }
    while (i > 0 && k->iv[i - 1].hi >= k->iv[i].lo) {
        if (k->iv[i].lo < k->iv[i - 1].lo)
            k->iv[i - 1].lo = k->iv[i].lo;
        if (k->iv[i].hi > k->iv[i - 1].hi)
            k->iv[i - 1].hi = k->iv[i].hi;
        iv_remove(k, i);
        i--;
    }
    k->last = i;
}

static void iv_add(rc_actor_t *a, rc_pkey_t *k, uintptr_t lo, uintptr_t hi)
{
    if (k->n) { /* the common case: next to the interval touched last */
        rc_iv_t *l = &k->iv[k->last];
        if (lo <= l->hi && hi >= l->lo) {
            if (lo >= l->lo && hi <= l->hi)
                return;
            if (lo < l->lo)
                l->lo = lo;
            if (hi > l->hi)
                l->hi = hi;
            iv_merge_around(k, k->last);
            return;
        }
    }
    int lo_i = 0, hi_i = k->n; /* the first interval whose end reaches lo */
    while (lo_i < hi_i) {
        int m = (lo_i + hi_i) / 2;
        if (k->iv[m].hi < lo)
            lo_i = m + 1;
        else
            hi_i = m;
    }
    if (lo_i < k->n && k->iv[lo_i].lo <= hi) {
        if (lo < k->iv[lo_i].lo)
            k->iv[lo_i].lo = lo;
        if (hi > k->iv[lo_i].hi)
            k->iv[lo_i].hi = hi;
        iv_merge_around(k, lo_i);
        return;
    }
    if (k->n == PKEY_MAX) {
        pkey_write(a, k);
        lo_i = 0;
    }
    if (k->n == k->cap) {
        int nc = k->cap ? 2 * k->cap : 8;
        rc_iv_t *p = realloc(k->iv, (size_t)nc * sizeof *p);
        if (!p)
            oom();
        k->iv = p;
        k->cap = nc;
    }
    memmove(&k->iv[lo_i + 1], &k->iv[lo_i], (size_t)(k->n - lo_i) * sizeof *k->iv);
    k->iv[lo_i] = (rc_iv_t){lo, hi};
    k->n++;
    k->last = lo_i;
}

static void pending_add(int win, int owner, int write, uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
    rc_actor_t *a = self_locked();
    a->dirty = 1;
    rc_pkey_t *k = NULL;
    for (int i = a->npk - 1; i >= 0; i--) {
        rc_pkey_t *c = &a->pk[i];
        if (c->pc == pc && c->write == write && c->win == win && c->owner == owner) {
            k = c;
            break;
        }
    }
    if (!k) {
        if (a->npk == NPKEY)
            actor_flush(a);
        k = &a->pk[a->npk++];
        k->win = win;
        k->owner = owner;
        k->write = write;
        k->pc = pc;
        k->n = 0;
        k->last = 0;
    }
    iv_add(a, k, lo, hi);
}

/* ---- events ------------------------------------------------------------------------------- */

/* Starts an event line of the calling actor (log mutex held): its pending accesses go first,
 * with the sequence number of the interval they were made in. */
static rc_actor_t *event_begin(const char *kind)
{
    rc_actor_t *a = self_locked();
    if (unknown_seen) {
        /* logged positions order accesses of threads the runtime cannot order (rt.h) */
        for (int i = 0; i < nactors; i++)
            actor_flush(actors[i]);
    } else {
        actor_flush(a);
    }
    a->seq++;
    a->dirty = 0;
    char b[128];
    int n = snprintf(b, sizeof b, "%s %d.%lu ", kind, a->id, (unsigned long)a->seq);
    log_begin();
    log_put(b, (size_t)n);
    return a;
}

rc_ref_t rc_event(const char *kind, const char *joins, const char *fmt, ...)
{
    rc_ref_t r = {(uint64_t)rc_wrank, 0, 0};
    if (!rc_active)
        return r;
    char b[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if (n >= (int)sizeof b)
        n = (int)sizeof b - 1;
    /* the rest ends in a newline in the callers' formats; one is added where it does not */
    while (n > 0 && b[n - 1] == '\n')
        n--;
    rc_lock();
    rc_actor_t *a = event_begin(kind);
    const char *j = joins && *joins ? joins : "-";
    log_put(j, strlen(j));
    if (n) {
        log_put(" ", 1);
        log_put(b, (size_t)n);
    }
    log_put("\n", 1);
    log_end();
    r.a = (uint64_t)a->id;
    r.s = a->seq;
    rc_unlock();
    return r;
}

rc_ref_t rc_last(void)
{
    rc_ref_t r = {(uint64_t)rc_wrank, 0, 0};
    rc_lock();
    rc_actor_t *a = self_locked();
    r.a = (uint64_t)a->id;
    r.s = a->seq;
    rc_unlock();
    return r;
}

/* "j" events: the joins written piece by piece (a collective over many ranks joins many). */
static void join_line(const char *const *parts, int n)
{
    rc_lock();
    event_begin("j");
    for (int i = 0; i < n; i++) {
        if (i)
            log_put(",", 1);
        log_put(parts[i], strlen(parts[i]));
    }
    log_put("\n", 1);
    log_end();
    rc_unlock();
}

void rc_join(const rc_ref_t *refs, int n)
{
    if (!rc_active || n <= 0)
        return;
    char(*s)[72] = malloc((size_t)n * sizeof *s);
    const char **p = malloc((size_t)n * sizeof *p);
    if (!s || !p)
        oom();
    rc_ref_t me = rc_last();
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!refs[i].s || (refs[i].r == me.r && refs[i].a == me.a))
            continue;
        snprintf(s[k], sizeof s[k], "e%lu.%lu.%lu", (unsigned long)refs[i].r,
                 (unsigned long)refs[i].a, (unsigned long)refs[i].s);
        p[k] = s[k];
        k++;
    }
    if (k)
        join_line(p, k);
    free(s);
    free(p);
}

/* Slot values: (rank + 1) << 40 | release number (rt_mpi.c). */
void rc_join_slots(const uint64_t *vals, int n)
{
    if (!rc_active || n <= 0)
        return;
    char(*s)[48] = malloc((size_t)n * sizeof *s);
    const char **p = malloc((size_t)n * sizeof *p);
    if (!s || !p)
        oom();
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!vals[i])
            continue;
        snprintf(s[k], sizeof s[k], "s%lu.%lu", (unsigned long)((vals[i] >> 40) - 1),
                 (unsigned long)(vals[i] & (((uint64_t)1 << 40) - 1)));
        p[k] = s[k];
        k++;
    }
    if (k)
        join_line(p, k);
    free(s);
    free(p);
}

void rc_rel(const char *fmt, ...)
{
    if (!rc_active)
        return;
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n <= 0 || n >= (int)sizeof b)
        return;
    rc_event("rel", "-", "%s", b);
}

/* keys: one or several, comma-separated */
void rc_acq(const char *fmt, ...)
{
    if (!rc_active)
        return;
    char k[512], b[600];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(k, sizeof k, fmt, ap);
    va_end(ap);
    if (n <= 0 || n >= (int)sizeof k)
        return;
    size_t o = 0;
    char *sv = NULL;
    for (char *t = strtok_r(k, ",", &sv); t && o + strlen(t) + 3 < sizeof b;
         t = strtok_r(NULL, ",", &sv))
        o += (size_t)snprintf(b + o, sizeof b - o, o ? ",o%s" : "o%s", t);
    if (o)
        rc_event("acq", b, "%s", "");
}

/* ---- ranges ------------------------------------------------------------------------------ */

#define MAXR 1024
static rc_range_t ranges[MAXR];
static int nranges;
static rc_inflight_t *infl;
static int ninfl, capinfl;
static uintptr_t lo_bound = UINTPTR_MAX, hi_bound;

/* The hooks read the bounds without a lock (relaxed atomics: one compare on the fast path); a
 * hook that sees bounds a moment old either takes the slow path, which decides under the lock,
 * or misses an access racing with the call that adds the range. */
static void bounds(void)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < nranges; i++) {
        if (ranges[i].lo < lo)
            lo = ranges[i].lo;
        if (ranges[i].hi > hi)
            hi = ranges[i].hi;
    }
    for (int i = 0; i < ninfl; i++) {
        if (infl[i].lo < lo)
            lo = infl[i].lo;
        if (infl[i].hi > hi)
            hi = infl[i].hi;
    }
    __atomic_store_n(&lo_bound, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&hi_bound, hi, __ATOMIC_RELAXED);
}

void rc_range_add(uintptr_t lo, size_t len, uintptr_t oaddr, int win, int owner)
{
    if (len == 0 || nranges == MAXR)
        return;
    rc_lock();
    ranges[nranges++] = (rc_range_t){lo, lo + len, oaddr, win, owner};
    bounds();
    rc_unlock();
}

void rc_range_del_win(int win)
{
    rc_lock();
    /* accesses recorded to the window go out before it does (its index may be reused) */
    for (int i = 0; i < nactors; i++)
        actor_flush(actors[i]);
    int k = 0;
    for (int i = 0; i < nranges; i++)
        if (ranges[i].win != win)
            ranges[k++] = ranges[i];
    nranges = k;
    bounds();
    rc_unlock();
}

void rc_range_del(uintptr_t lo, int win)
{
    rc_lock();
    for (int i = 0; i < nactors; i++)
        actor_flush(actors[i]);
    int k = 0;
    for (int i = 0; i < nranges; i++)
        if (!(ranges[i].win == win && ranges[i].lo == lo))
            ranges[k++] = ranges[i];
    nranges = k;
    bounds();
    rc_unlock();
}

void rc_range_each(uintptr_t a, size_t n, void (*fn)(void *, int, int, uintptr_t, size_t),
                   void *ctx)
{
    if (!n)
        return;
    /* the pieces are collected under the lock and handed out without it (fn may log) */
    struct {
        int win, owner;
        uintptr_t oa;
        size_t len;
    } *pc = NULL;
    int k = 0;
    rc_lock();
    for (int i = 0; i < nranges; i++) {
        rc_range_t *r = &ranges[i];
        if (a >= r->hi || a + n <= r->lo)
            continue;
        if (!pc && !(pc = malloc((size_t)nranges * sizeof *pc)))
            oom();
        uintptr_t lo = a > r->lo ? a : r->lo, hi = a + n < r->hi ? a + n : r->hi;
        pc[k].win = r->win;
        pc[k].owner = r->owner;
        pc[k].oa = lo - r->lo + r->oaddr;
        pc[k].len = hi - lo;
        k++;
    }
    rc_unlock();
    for (int i = 0; i < k; i++)
        fn(ctx, pc[i].win, pc[i].owner, pc[i].oa, pc[i].len);
    free(pc);
}

void rc_inflight_add(uintptr_t lo, size_t len, int win, int target, long no, rc_ref_t op,
                     int result, MPI_Request req, uint64_t issued)
{
    if (len == 0)
        return;
    rc_lock();
    if (ninfl == capinfl) {
        int nc = capinfl ? 2 * capinfl : 64;
        rc_inflight_t *p = realloc(infl, (size_t)nc * sizeof *p);
        if (!p)
            oom(); /* a buffer not followed would be a hazard missed without a word */
        infl = p;
        capinfl = nc;
    }
    infl[ninfl++] = (rc_inflight_t){lo, lo + len, win, target, no, op, result, req, 0, 0, issued};
    bounds();
    rc_unlock();
}

/* Entries are appended in number order (op_record numbers and adds them under the big lock) and
 * removal keeps the order: the operation's own entries are near the end, after them only those
 * of calls other threads made since. O(those), not O(all in flight). */
void rc_inflight_issued(long no, uint64_t issued)
{
    rc_lock();
    for (int i = ninfl - 1; i >= 0 && infl[i].no >= no; i--)
        if (infl[i].no == no && !infl[i].issued)
            infl[i].issued = issued;
    rc_unlock();
}

/* Local completion (see rt.h). An operation another thread issued after the closing call
 * started is not covered by it: it stays in flight until a later one. */
void rc_inflight_release(int win, int target, int req_only, MPI_Request req, uint64_t before)
{
    rc_lock();
    int k = 0;
    for (int i = 0; i < ninfl; i++) {
        rc_inflight_t *f = &infl[i];
        int done;
        if (req_only)
            done = f->req == req;
        else
            done = f->win == win && (target < 0 || f->target == target) &&
                   f->req == MPI_REQUEST_NULL &&
                   (before == RC_STAMP_ALL || (f->issued && f->issued < before));
        if (!done)
            infl[k++] = *f;
    }
    ninfl = k;
    bounds();
    rc_unlock();
}

void rc_inflight_mark_closing(int win, int target)
{
    rc_lock();
    for (int i = 0; i < ninfl; i++)
        if (infl[i].win == win && (target < 0 || infl[i].target == target))
            infl[i].closing = 1;
    rc_unlock();
}

/* ---- the hooks --------------------------------------------------------------------------- */

/* An access to [a, a+n) while operations are in flight: a write to any of their local buffers,
 * or a read of a result buffer, is an origin-buffer hazard (once per in-flight buffer). `call`:
 * the RMA call whose own local buffer this is, NULL for a load/store. Caller holds the lock. */
static void inflight_hit(uintptr_t a, size_t n, int write, void *pc, const char *call)
{
    for (int i = 0; i < ninfl; i++) {
        rc_inflight_t *f = &infl[i];
        if (a < f->hi && a + n > f->lo && (write || f->result) && !f->reported) {
            f->reported = 1;
            rc_actor_t *me = self_locked();
            char b[1024];
            int k = snprintf(b, sizeof b, "hz %d.%lu %c %lx %lu %s %lu.%lu %d%s%s\n", me->id,
                             (unsigned long)me->seq, write ? 'W' : 'R', (unsigned long)a,
                             (unsigned long)n, pc_str_locked((uintptr_t)pc), (unsigned long)f->op.a,
                             (unsigned long)f->op.s, f->closing, call ? " " : "", call ? call : "");
            if (k > 0 && k < (int)sizeof b)
                log_line(b, (size_t)k);
        }
    }
}

void rc_inflight_check(uintptr_t a, size_t n, int write, void *pc, const char *call)
{
    if (!rc_active || n == 0)
        return;
    rc_lock();
    inflight_hit(a, n, write, pc, call);
    rc_unlock();
}

static void access_slow(uintptr_t a, size_t n, int write, void *pc)
{
    rc_lock();
    inflight_hit(a, n, write, pc, NULL);
    for (int i = 0; i < nranges; i++) {
        rc_range_t *r = &ranges[i];
        if (a >= r->hi || a + n <= r->lo)
            continue;
        /* a range access (memcpy, __tsan_*_range) may start before or end after the region */
        uintptr_t lo = a > r->lo ? a : r->lo, hi = a + n < r->hi ? a + n : r->hi;
        uintptr_t oa = lo - r->lo + r->oaddr;
        pending_add(r->win, r->owner, write, (uintptr_t)pc, oa, oa + (hi - lo));
        break;
    }
    rc_unlock();
}

static inline void access_hook(const void *addr, size_t n, int write, void *pc)
{
    uintptr_t a = (uintptr_t)addr;
    if (__builtin_expect(a >= __atomic_load_n(&hi_bound, __ATOMIC_RELAXED) ||
                             a + n <= __atomic_load_n(&lo_bound, __ATOMIC_RELAXED),
                         1) ||
        !__atomic_load_n(&rc_active, __ATOMIC_RELAXED) || rc_inside)
        return;
    access_slow(a, n, write, pc);
}

#define RA __builtin_return_address(0)
#define HOOK(sz)                                                                                   \
    void __tsan_read##sz(void *p)                                                                  \
    {                                                                                              \
        access_hook(p, sz, 0, RA);                                                                 \
    }                                                                                              \
    void __tsan_write##sz(void *p)                                                                 \
    {                                                                                              \
        access_hook(p, sz, 1, RA);                                                                 \
    }                                                                                              \
    void __tsan_unaligned_read##sz(void *p)                                                        \
    {                                                                                              \
        access_hook(p, sz, 0, RA);                                                                 \
    }                                                                                              \
    void __tsan_unaligned_write##sz(void *p)                                                       \
    {                                                                                              \
        access_hook(p, sz, 1, RA);                                                                 \
    }                                                                                              \
    void __tsan_volatile_read##sz(void *p)                                                         \
    {                                                                                              \
        access_hook(p, sz, 0, RA);                                                                 \
    }                                                                                              \
    void __tsan_volatile_write##sz(void *p)                                                        \
    {                                                                                              \
        access_hook(p, sz, 1, RA);                                                                 \
    }                                                                                              \
    void __tsan_read##sz##_pc(void *p, void *pc)                                                   \
    {                                                                                              \
        access_hook(p, sz, 0, pc);                                                                 \
    }                                                                                              \
    void __tsan_write##sz##_pc(void *p, void *pc)                                                  \
    {                                                                                              \
        access_hook(p, sz, 1, pc);                                                                 \
    }

/* Declarations first: -Wmissing-prototypes is not on, but keep the set explicit. */
HOOK(1)
HOOK(2)
HOOK(4)
HOOK(8)
HOOK(16)

void __tsan_read_range(void *p, unsigned long n)
{
    access_hook(p, n, 0, RA);
}
void __tsan_write_range(void *p, unsigned long n)
{
    access_hook(p, n, 1, RA);
}
/* The same with the caller's pc: the memcpy/memset/memmove wrappers of rt_mem.c use them. */
void __tsan_read_range_pc(void *p, unsigned long n, void *pc)
{
    access_hook(p, n, 0, pc);
}
void __tsan_write_range_pc(void *p, unsigned long n, void *pc)
{
    access_hook(p, n, 1, pc);
}
/* Every object compiled with -fsanitize=thread calls it from a constructor: the program was
 * built with rmacheck-cc, so its threads and their synchronization are followed (rt_thread.c). */
void __tsan_init(void)
{
    rc_instrumented = 1;
}
void __tsan_func_entry(void *pc)
{
    (void)pc;
}
void __tsan_func_exit(void)
{
}
void __tsan_vptr_update(void **p, void *v)
{
    (void)p;
    (void)v;
}
void __tsan_vptr_read(void **p)
{
    (void)p;
}
void __tsan_ignore_thread_begin(void)
{
}
void __tsan_ignore_thread_end(void)
{
}

/* ---- atomics as synchronization between threads -------------------------------------------
 * As in C11 (and ThreadSanitizer): an atomic store or read-modify-write with release semantics
 * releases the thread's clock into the location, a load or read-modify-write with acquire
 * semantics joins it; relaxed ones order nothing. The release is logged before the operation and
 * the acquire after it, so the log order of the two is the order in which the acquire could see
 * the release. Lines are saved where they would add nothing: a release when the actor made no
 * event and recorded no access since its own previous release there, an acquire of a version the
 * actor has joined already (a spin loop is one line). */
#define ASHADOW 16384
static struct {
    uintptr_t addr;
    uint64_t ver;
    int actor;
    uint64_t seq;
} ashadow[ASHADOW];

static unsigned ahash(uintptr_t a)
{
    return (unsigned)((a >> 3) ^ (a >> 17)) % ASHADOW;
}

/* GCC passes its memory model (0 relaxed, 1 consume, 2 acquire, 3 release, 4 acq_rel, 5 seq_cst,
 * possibly with flag bits above). */
static int mo_of(int mo)
{
    int m = mo & 0xff;
    return m > 5 ? 5 : m;
}

static int sync_on(void)
{
    return __atomic_load_n(&rc_active, __ATOMIC_RELAXED) && rc_instrumented && !rc_inside;
}

static void atomic_release(const volatile void *p, int mo)
{
    int m = mo_of(mo);
    if (!(m == 3 || m == 4 || m == 5) || !sync_on())
        return;
    uintptr_t a = (uintptr_t)p;
    unsigned h = ahash(a);
    rc_lock();
    rc_actor_t *me = self_locked();
    if (ashadow[h].addr == a && ashadow[h].actor == me->id && ashadow[h].seq == me->seq &&
        me->seq && !me->dirty) {
        rc_unlock();
        return;
    }
    uint64_t ver = ashadow[h].addr == a ? ashadow[h].ver + 1 : 1;
    rc_unlock();
    rc_rel("x%lx", (unsigned long)a);
    rc_lock();
    me = self_locked();
    ashadow[h].addr = a;
    ashadow[h].ver = ver;
    ashadow[h].actor = me->id;
    ashadow[h].seq = me->seq;
    rc_unlock();
}

static void atomic_acquire(const volatile void *p, int mo)
{
    int m = mo_of(mo);
    if (!(m == 1 || m == 2 || m == 4 || m == 5) || !sync_on())
        return;
    uintptr_t a = (uintptr_t)p;
    unsigned h = ahash(a), c = (unsigned)((a >> 3) % ACACHE);
    rc_lock();
    rc_actor_t *me = self_locked();
    if (ashadow[h].addr == 0) { /* nothing was ever released here */
        rc_unlock();
        return;
    }
    uint64_t ver = ashadow[h].addr == a ? ashadow[h].ver : 0;
    if (ver && me->ac[c].addr == a && me->ac[c].ver == ver) {
        rc_unlock();
        return;
    }
    rc_unlock();
    rc_acq("x%lx", (unsigned long)a);
    if (ver) {
        rc_lock();
        me->ac[c].addr = a;
        me->ac[c].ver = ver;
        rc_unlock();
    }
}

#define ARMW(bits, T, name, op)                                                                    \
    T __tsan_atomic##bits##_##name(volatile T *a, T v, int mo)                                     \
    {                                                                                              \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        atomic_release(a, mo);                                                                     \
        T r = op(a, v, __ATOMIC_SEQ_CST);                                                          \
        atomic_acquire(a, mo);                                                                     \
        return r;                                                                                  \
    }

/* Atomics: performed for real (the program relies on them), recorded as accesses, and their
 * synchronization followed. */
#define ATOM(bits, T)                                                                              \
    T __tsan_atomic##bits##_load(const volatile T *a, int mo)                                      \
    {                                                                                              \
        access_hook((const void *)a, sizeof(T), 0, RA);                                            \
        T r = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                \
        atomic_acquire(a, mo);                                                                     \
        return r;                                                                                  \
    }                                                                                              \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int mo)                                   \
    {                                                                                              \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        atomic_release(a, mo);                                                                     \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                  \
    }                                                                                              \
    ARMW(bits, T, exchange, __atomic_exchange_n)                                                   \
    ARMW(bits, T, fetch_add, __atomic_fetch_add)                                                   \
    ARMW(bits, T, fetch_sub, __atomic_fetch_sub)                                                   \
    ARMW(bits, T, fetch_and, __atomic_fetch_and)                                                   \
    ARMW(bits, T, fetch_or, __atomic_fetch_or)                                                     \
    ARMW(bits, T, fetch_xor, __atomic_fetch_xor)                                                   \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)   \
    {                                                                                              \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        atomic_release(a, mo);                                                                     \
        int r = __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
        atomic_acquire(a, r ? mo : fmo);                                                           \
        return r;                                                                                  \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)     \
    {                                                                                              \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        atomic_release(a, mo);                                                                     \
        int r = __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
        atomic_acquire(a, r ? mo : fmo);                                                           \
        return r;                                                                                  \
    }                                                                                              \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)         \
    {                                                                                              \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        atomic_release(a, mo);                                                                     \
        int r = __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);      \
        atomic_acquire(a, r ? mo : fmo);                                                           \
        return c;                                                                                  \
    }

ATOM(8, uint8_t)
ATOM(16, uint16_t)
ATOM(32, uint32_t)
ATOM(64, uint64_t)

/* Fences: a release fence followed by a relaxed store (and a relaxed load followed by an acquire
 * fence) synchronize in C11; the runtime does not follow fences (a limit, docs/rmacheck.md). */
void __tsan_atomic_thread_fence(int mo)
{
    (void)mo;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int mo)
{
    (void)mo;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
