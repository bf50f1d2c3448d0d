/* rt.h — rmacheck's runtime, shared by the MPI wrappers (rt_mpi.c) and the load/store hooks
 * (rt_tsan.c). The runtime only records: every RMA call, synchronization call and the loads and
 * stores that touch window memory or an in-flight origin buffer become one text line in this
 * rank's log, a file the driver created in node-shared memory (/dev/shm). The driver analyzes
 * the logs after the program exits, so a crash keeps everything recorded up to it
 * (docs/rmacheck.md). */
#ifndef RMACHECK_RT_H
#define RMACHECK_RT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define RC_MAXWIN 256

/* In-flight buffers (origin or result buffers of issued, locally incomplete operations). */
typedef struct {
    uintptr_t lo, hi;   /* [lo, hi) in this process */
    int win;            /* rt window index */
    int target;         /* world rank of the target, -1 for any */
    long seq;           /* the operation's event number */
    int result;         /* 1: MPI writes it (get result), 0: MPI reads it (put origin) */
    MPI_Request req;    /* request-based operation, else MPI_REQUEST_NULL */
    int closing;        /* a nonblocking closing/flushing call covering it was issued */
    int reported;
    uint64_t issued;    /* issue stamp (rc_stamp order): the call had returned; 0: not yet */
} rc_inflight_t;

/* A memory range of window memory visible to this process: window `win`, owned by world rank
 * `owner`, mapped here at [lo, hi), starting at owner-address `oaddr`. */
typedef struct {
    uintptr_t lo, hi, oaddr;
    int win, owner;
} rc_range_t;

extern int rc_active;                 /* logging on (RMACHECK_DIR set and MPI initialized) */
extern __thread int rc_inside;        /* inside a wrapper: loads/stores are MPI's own */
extern int rc_wrank, rc_wsize;

void rc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rc_log_open(void);
void rc_flush_pending(void);
const char *rc_pc(const void *pc, char *buf, size_t n);
const char *rc_vc(char *buf, size_t n);
void rc_tick(void);
void rc_vc_join(const uint64_t *other);
uint64_t *rc_vc_ptr(void);

void rc_lock(void);
void rc_unlock(void);

/* The runtime's big lock (rt_core.c): one process-wide mutex around all of the runtime's state
 * (windows, handle tables, clock-message queues, the clock). Lock order: the big lock, then the
 * log mutex (rc_lock); never the other way. It is never held across a call that can wait for
 * another thread or process: wrappers drop it around the call they forward, and the runtime's
 * own waits drop it while they test and yield (rc_big_release / rc_big_reacquire). Reentrant
 * per thread (a callback from inside a call made under it, an error handler say, takes it
 * again). */
void rc_big_lock(void);
void rc_big_unlock(void);
int rc_big_release(void);        /* drops it whatever the depth; returns the depth */
void rc_big_reacquire(int depth);

/* Stamps that order issues of RMA calls against the start of closing calls (rt_mpi.c). */
#define RC_STAMP_ALL UINT64_MAX

/* Ranges and in-flight buffers, searched by the hooks. */
void rc_range_add(uintptr_t lo, size_t len, uintptr_t oaddr, int win, int owner);
void rc_range_del_win(int win);
void rc_range_del(uintptr_t lo, int win);
/* An RMA call's own local buffer: read (origin) or written (result) while others are in flight. */
void rc_inflight_check(uintptr_t a, size_t n, int write, void *pc, const char *call);
void rc_inflight_add(uintptr_t lo, size_t len, int win, int target, long seq, int result,
                     MPI_Request req, uint64_t issued);
/* The operation `seq` was issued (its call returned) at stamp `issued`. */
void rc_inflight_issued(long seq, uint64_t issued);
/* Local completion: of the operations on `win` toward `target` (-1: all) issued before the
 * closing call started (stamp `before`; RC_STAMP_ALL: all, issued or not), or of the one with
 * request `req` (req_only). */
void rc_inflight_release(int win, int target, int req_only, MPI_Request req, uint64_t before);
void rc_inflight_mark_closing(int win, int target);
long rc_seq(void);

#endif
