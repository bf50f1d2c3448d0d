/* rt_core.c — the log, the vector clock and the load/store hooks of rmacheck's runtime.
 *
 * The log is a sparse file in the directory the driver made under /dev/shm, mapped shared: a
 * line is in the page cache the moment it is written, so a rank that crashes or is killed still
 * leaves everything before the crash to the analysis. The hooks are the entry points GCC's
 * -fsanitize=thread instrumentation calls (rmacheck-cc compiles with it but links this runtime
 * instead of libtsan): an access is recorded only when it falls in window memory or in an
 * in-flight origin/result buffer, and consecutive accesses from one instruction to adjacent
 * bytes coalesce into one line, so a loop over a window costs one line per synchronization
 * interval. */
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

static char *log_base;
static size_t log_cap, log_off;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *vc;
static long seqno;

#define LOG_CAP ((size_t)1 << 30) /* sparse: only written pages take memory */
#define LOG_HDR 64                /* the first 8 bytes: length of the text that follows */

static void die(const char *what)
{
    fprintf(stderr, "rmacheck: rank %d: %s: %s\n", rc_wrank, what, strerror(errno));
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

void rc_lock(void) { pt_check(pthread_mutex_lock(&log_mu), "pthread_mutex_lock (log)"); }
void rc_unlock(void) { pt_check(pthread_mutex_unlock(&log_mu), "pthread_mutex_unlock (log)"); }

/* ---- the big lock -------------------------------------------------------------------------
 * Every wrapper of rt_mpi.c holds it while it reads or changes the runtime's state, so the
 * events of all threads of a process are totally ordered: one clock per process, ticked and
 * logged under it. A depth per thread makes it reentrant; the runtime's waits drop it entirely
 * (rc_big_release) and take it back at the same depth. */
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
        fprintf(stderr, "rmacheck: rank %d: internal error: big lock released twice\n",
                rc_wrank);
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
        _exit(2);
    }
    if (ftruncate(fd, (off_t)LOG_CAP) != 0)
        die("ftruncate of the log");
    log_base = mmap(NULL, LOG_CAP, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (log_base == MAP_FAILED)
        die("mmap of the log");
    close(fd);
    log_cap = LOG_CAP;
    log_off = LOG_HDR;
    vc = calloc((size_t)rc_wsize, sizeof *vc);
    if (!vc)
        die("calloc");
    rc_active = 1;
}

/* Appends one line (the caller holds the lock or is single-threaded with respect to it). */
static void log_raw(const char *s, size_t n)
{
    if (log_off + n + 1 > log_cap) {
        static int warned;
        if (!warned++)
            fprintf(stderr, "rmacheck: rank %d: log full, recording stops\n", rc_wrank);
        return;
    }
    memcpy(log_base + log_off, s, n);
    log_off += n;
    /* published after the text: a crash leaves the length of complete lines only */
    __atomic_store_n((uint64_t *)log_base, (uint64_t)(log_off - LOG_HDR), __ATOMIC_RELEASE);
}

/* Coalesced load/store record waiting for its neighbours. */
static struct {
    int valid, write, win, owner;
    uintptr_t lo, hi, pc;
} pend;

static void pend_flush_locked(void)
{
    if (!pend.valid)
        return;
    char b[512], v[256], p[256];
    int n = snprintf(b, sizeof b, "ls %s %c %d %d %lx %lu %s\n", rc_vc(v, sizeof v),
                     pend.write ? 'W' : 'R', pend.win, pend.owner, (unsigned long)pend.lo,
                     (unsigned long)(pend.hi - pend.lo), rc_pc((void *)pend.pc, p, sizeof p));
    pend.valid = 0;
    if (n > 0 && n < (int)sizeof b)
        log_raw(b, (size_t)n);
}

void rc_flush_pending(void)
{
    if (!rc_active)
        return;
    rc_lock();
    pend_flush_locked();
    rc_unlock();
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
    pend_flush_locked();
    log_raw(b, (size_t)n);
    rc_unlock();
}

/* Every event ticks first: a coalesced load/store record still pending belongs before it and
 * must carry the clock of its own interval. The clock changes under the log mutex too (its
 * writers hold the big lock as well): a hook of another thread that flushes a record reads a
 * whole clock, and a record pending before the tick is flushed with the clock before it. */
void rc_tick(void)
{
    if (!rc_active) {
        seqno++;
        return;
    }
    rc_lock();
    pend_flush_locked();
    if (vc)
        vc[rc_wrank]++;
    seqno++;
    rc_unlock();
}
long rc_seq(void) { return seqno; }
uint64_t *rc_vc_ptr(void) { return vc; }

void rc_vc_join(const uint64_t *o)
{
    rc_lock();
    pend_flush_locked(); /* a record made before the join carries the clock before it */
    for (int i = 0; i < rc_wsize; i++)
        if (o[i] > vc[i])
            vc[i] = o[i];
    rc_unlock();
}

const char *rc_vc(char *buf, size_t n)
{
    size_t off = 0;
    for (int i = 0; i < rc_wsize && off + 24 < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? ",%lu" : "%lu", (unsigned long)vc[i]);
    if (off == 0)
        snprintf(buf, n, "0");
    return buf;
}

/* A code address as "module+offset" (addr2line at report time). */
const char *rc_pc(const void *pc, char *buf, size_t n)
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
            snprintf(buf, n, "%s+%lx", exe,
                     (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase));
            return buf;
        }
    }
    snprintf(buf, n, "?+%lx", (unsigned long)(uintptr_t)pc);
    return buf;
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
    int k = 0;
    for (int i = 0; i < nranges; i++)
        if (!(ranges[i].win == win && ranges[i].lo == lo))
            ranges[k++] = ranges[i];
    nranges = k;
    bounds();
    rc_unlock();
}

void rc_inflight_add(uintptr_t lo, size_t len, int win, int target, long seq, int result,
                     MPI_Request req, uint64_t issued)
{
    if (len == 0)
        return;
    rc_lock();
    if (ninfl == capinfl) {
        int nc = capinfl ? 2 * capinfl : 64;
        rc_inflight_t *p = realloc(infl, (size_t)nc * sizeof *p);
        if (!p) {
            rc_unlock();
            return;
        }
        infl = p;
        capinfl = nc;
    }
    infl[ninfl++] = (rc_inflight_t){lo, lo + len, win, target, seq, result, req, 0, 0, issued};
    bounds();
    rc_unlock();
}

/* Entries are appended in seq order (op_record numbers and adds them under the big lock) and
 * removal keeps the order: the operation's own entries are near the end, after them only those
 * of calls other threads made since. O(those), not O(all in flight). */
void rc_inflight_issued(long seq, uint64_t issued)
{
    rc_lock();
    for (int i = ninfl - 1; i >= 0 && infl[i].seq >= seq; i--)
        if (infl[i].seq == seq && !infl[i].issued)
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
            char b[1024], v[256], p[256];
            pend_flush_locked();
            int k = snprintf(b, sizeof b, "hz %s %c %lx %lu %s %ld %d%s%s\n",
                             rc_vc(v, sizeof v), write ? 'W' : 'R', (unsigned long)a,
                             (unsigned long)n, rc_pc(pc, p, sizeof p), f->seq, f->closing,
                             call ? " " : "", call ? call : "");
            if (k > 0 && k < (int)sizeof b)
                log_raw(b, (size_t)k);
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
        uintptr_t oa = lo - r->lo + r->oaddr, m = hi - lo;
        if (pend.valid && pend.write == write && pend.win == r->win && pend.owner == r->owner &&
            pend.pc == (uintptr_t)pc && oa <= pend.hi && oa + m >= pend.lo) {
            if (oa < pend.lo)
                pend.lo = oa;
            if (oa + m > pend.hi)
                pend.hi = oa + m;
        } else {
            pend_flush_locked();
            pend.valid = 1;
            pend.write = write;
            pend.win = r->win;
            pend.owner = r->owner;
            pend.lo = oa;
            pend.hi = oa + m;
            pend.pc = (uintptr_t)pc;
        }
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
    void __tsan_read##sz(void *p) { access_hook(p, sz, 0, RA); }                                   \
    void __tsan_write##sz(void *p) { access_hook(p, sz, 1, RA); }                                  \
    void __tsan_unaligned_read##sz(void *p) { access_hook(p, sz, 0, RA); }                         \
    void __tsan_unaligned_write##sz(void *p) { access_hook(p, sz, 1, RA); }                        \
    void __tsan_volatile_read##sz(void *p) { access_hook(p, sz, 0, RA); }                          \
    void __tsan_volatile_write##sz(void *p) { access_hook(p, sz, 1, RA); }                         \
    void __tsan_read##sz##_pc(void *p, void *pc) { access_hook(p, sz, 0, pc); }                    \
    void __tsan_write##sz##_pc(void *p, void *pc) { access_hook(p, sz, 1, pc); }

/* Declarations first: -Wmissing-prototypes is not on, but keep the set explicit. */
HOOK(1)
HOOK(2)
HOOK(4)
HOOK(8)
HOOK(16)

void __tsan_read_range(void *p, unsigned long n) { access_hook(p, n, 0, RA); }
void __tsan_write_range(void *p, unsigned long n) { access_hook(p, n, 1, RA); }
/* The same with the caller's pc: the memcpy/memset/memmove wrappers of rt_mem.c use them. */
void __tsan_read_range_pc(void *p, unsigned long n, void *pc) { access_hook(p, n, 0, pc); }
void __tsan_write_range_pc(void *p, unsigned long n, void *pc) { access_hook(p, n, 1, pc); }
void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **p, void *v) { (void)p; (void)v; }
void __tsan_vptr_read(void **p) { (void)p; }
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}

/* Atomics: performed for real (the program relies on them), recorded as accesses. */
#define ATOM(bits, T)                                                                              \
    T __tsan_atomic##bits##_load(const volatile T *a, int mo)                                      \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 0, RA);                                            \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                               \
    }                                                                                              \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int mo)                                   \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                  \
    }                                                                                              \
    T __tsan_atomic##bits##_exchange(volatile T *a, T v, int mo)                                   \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                        \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int mo)                                  \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int mo)                                  \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int mo)                                  \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int mo)                                   \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                          \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int mo)                                  \
    {                                                                                              \
        (void)mo;                                                                                  \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)   \
    {                                                                                              \
        (void)mo;                                                                                  \
        (void)fmo;                                                                                 \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);        \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)     \
    {                                                                                              \
        (void)mo;                                                                                  \
        (void)fmo;                                                                                 \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);        \
    }                                                                                              \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)         \
    {                                                                                              \
        (void)mo;                                                                                  \
        (void)fmo;                                                                                 \
        access_hook((const void *)a, sizeof(T), 1, RA);                                            \
        __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
        return c;                                                                                  \
    }

ATOM(8, uint8_t)
ATOM(16, uint16_t)
ATOM(32, uint32_t)
ATOM(64, uint64_t)

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
