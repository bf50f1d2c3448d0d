/* rt.h — rmacheck's runtime, shared by the MPI wrappers (rt_mpi.c), the load/store hooks and the
 * log (rt_core.c), the thread-synchronization wrappers (rt_thread.c) and memcpy/memset (rt_mem.c).
 * The runtime only records: every RMA call, synchronization call, the synchronization between
 * threads and the loads and stores that touch window memory or an in-flight origin buffer become
 * lines in this rank's log, a file the driver created in node-shared memory (/dev/shm). The driver
 * analyzes the logs after the program exits, so a crash keeps everything recorded up to it
 * (docs/rmacheck.md).
 *
 * Actors: every thread of an instrumented program (built with rmacheck-cc) is an actor with its
 * own sequence of events, and so is every explicit OpenMP task while it runs (on a "strand", an
 * actor of its own). An event is named by (world rank, actor, seq). The runtime never computes a
 * vector clock: it logs each event with the events it joins (a message's send event, the members'
 * events of a collective, the release of a mutex, ...), and the analysis builds the clocks from
 * those edges. A program that was not built with rmacheck-cc is one actor per process. */
#ifndef RMACHECK_RT_H
#define RMACHECK_RT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define RC_MAXWIN 256

/* An event: world rank, actor, seq (1, 2, ... per actor; 0: no event). Over MPI it travels as
 * RC_REF_WORDS uint64 words. */
typedef struct {
    uint64_t r, a, s;
} rc_ref_t;
#define RC_REF_WORDS 3

/* In-flight buffers (origin or result buffers of issued, locally incomplete operations). */
typedef struct {
    uintptr_t lo, hi; /* [lo, hi) in this process */
    int win;          /* rt window index */
    int target;       /* world rank of the target, -1 for any */
    long no;          /* the operation's number (rc_opno order) */
    rc_ref_t op;      /* the operation's event */
    int result;       /* 1: MPI writes it (get result), 0: MPI reads it (put origin) */
    MPI_Request req;  /* request-based operation, else MPI_REQUEST_NULL */
    int closing;      /* a nonblocking closing/flushing call covering it was issued */
    int reported;
    uint64_t issued; /* issue stamp (rc_stamp order): the call had returned; 0: not yet */
} rc_inflight_t;

/* A memory range of window memory visible to this process: window `win`, owned by world rank
 * `owner`, mapped here at [lo, hi), starting at owner-address `oaddr`. */
typedef struct {
    uintptr_t lo, hi, oaddr;
    int win, owner;
} rc_range_t;

extern int rc_active;          /* logging on (RMACHECK_DIR set and MPI initialized) */
extern __thread int rc_inside; /* inside a wrapper: loads/stores are MPI's own */
extern int rc_wrank, rc_wsize;
extern int rc_instrumented; /* the program was built with rmacheck-cc (__tsan_init ran) */

/* ---- the log ------------------------------------------------------------------------------
 * Event lines read "<kind> <actor>.<seq> <joins> <rest>": joins is "-" or a comma-separated list
 * of what the event acquires: e<rank>.<actor>.<seq> (an event), s<rank>.<n> (the clock an atomic
 * location had after rank's n-th atomic release, see rt_mpi.c), o<key> (this process's
 * synchronization object key). Other lines (init, node, ls, hz, al, th, leak) are not events. */
void rc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rc_log_open(void);
/* One event of the calling thread's actor; rest (printf format) may be "". Returns its name. */
rc_ref_t rc_event(const char *kind, const char *joins, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An event ("j") that joins the events refs[0..n) (those of the calling actor and empty ones are
 * left out; nothing is logged when none is left). */
void rc_join(const rc_ref_t *refs, int n);
/* An event ("j") that joins the atomic slot values vals[0..n) (0: empty, left out). */
void rc_join_slots(const uint64_t *vals, int n);
/* This process's synchronization objects: rc_rel releases the calling actor's clock into the
 * object(s) named by the comma-separated keys (event "rel"); rc_acq joins the object (event
 * "acq"). The analysis replays them in log order, so a release must be logged before the real
 * operation that lets another thread proceed, and an acquire after the one that waited. */
void rc_rel(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rc_acq(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The calling actor's last event (s = 0: none yet). */
rc_ref_t rc_last(void);
const char *rc_pc(const void *pc, char *buf, size_t n);
/* Flushes every actor's pending load/store records (MPI_Finalize). */
void rc_flush_all(void);

void rc_lock(void);
void rc_unlock(void);

/* ---- actors (rt_core.c) --------------------------------------------------------------------
 * The calling thread's actor is found through thread-local state: the thread that called MPI_Init,
 * a thread started by the program's pthread_create (rt_thread.c), a thread inside an OpenMP region
 * or task the runtime wrapped. A thread none of these covers (a thread started by another library,
 * a construct the runtime does not follow) gets an actor marked unknown: the analysis then takes
 * that process's events in log order, as one actor (more order, never less). */
typedef struct rc_actor rc_actor_t;
rc_actor_t *rc_actor_new(void); /* a fresh actor (id assigned) */
int rc_actor_id(const rc_actor_t *a);
rc_actor_t *rc_actor_cur(void);           /* the calling thread's actor (NULL: none set) */
rc_actor_t *rc_actor_swap(rc_actor_t *a); /* the calling thread's actor := a; returns the old */
rc_actor_t *rc_strand_get(void);          /* an actor for an explicit task, from a pool */
void rc_strand_put(rc_actor_t *a);
/* Marks the process as having a thread or construct the runtime cannot order (the analysis
 * falls back to log order for it); `what` names it once in the log. */
void rc_unknown(const char *what);
/* The calling thread is the one that initialized MPI: actor 0. */
void rc_actor_main(void);

/* The runtime's big lock (rt_core.c): one process-wide mutex around all of the runtime's state
 * (windows, handle tables, clock-message queues). Lock order: the big lock, then the log mutex
 * (rc_lock); never the other way. It is never held across a call that can wait for another
 * thread or process: wrappers drop it around the call they forward, and the runtime's own waits
 * drop it while they test and yield (rc_big_release / rc_big_reacquire). Reentrant per thread (a
 * callback from inside a call made under it, an error handler say, takes it again). */
void rc_big_lock(void);
void rc_big_unlock(void);
int rc_big_release(void); /* drops it whatever the depth; returns the depth */
void rc_big_reacquire(int depth);

/* Stamps that order issues of RMA calls against the start of closing calls (rt_mpi.c). */
#define RC_STAMP_ALL UINT64_MAX

/* Ranges and in-flight buffers, searched by the hooks. */
void rc_range_add(uintptr_t lo, size_t len, uintptr_t oaddr, int win, int owner);
void rc_range_del_win(int win);
void rc_range_del(uintptr_t lo, int win);
/* The window pieces [lo, lo+len) of this process's memory touches: fn(ctx, win, owner, owner
 * address, length) for each (an origin or result buffer that is window memory). */
void rc_range_each(uintptr_t lo, size_t len, void (*fn)(void *, int, int, uintptr_t, size_t),
                   void *ctx);
/* An RMA call's own local buffer: read (origin) or written (result) while others are in flight. */
void rc_inflight_check(uintptr_t a, size_t n, int write, void *pc, const char *call);
void rc_inflight_add(uintptr_t lo, size_t len, int win, int target, long no, rc_ref_t op,
                     int result, MPI_Request req, uint64_t issued);
/* The operation `no` was issued (its call returned) at stamp `issued`. */
void rc_inflight_issued(long no, uint64_t issued);
/* Local completion: of the operations on `win` toward `target` (-1: all) issued before the
 * closing call started (stamp `before`; RC_STAMP_ALL: all, issued or not), or of the one with
 * request `req` (req_only). */
void rc_inflight_release(int win, int target, int req_only, MPI_Request req, uint64_t before);
void rc_inflight_mark_closing(int win, int target);

#endif
