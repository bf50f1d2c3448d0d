/* nbrma.h — the extensions libnbrma adds to MPI. Include it after <mpi.h>; link with -lnbrma
 * (before the MPI library) or run with libnbrma preloaded. See docs/ref.md. */
#ifndef NBRMA_H
#define NBRMA_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Choose who serves the windows created from now on: "ref" (libnbrma, the default) or
 * "vendor" (every call on those windows is forwarded to the MPI library unchanged). The
 * NBRMA_IMPL setting gives the initial choice. Returns MPI_SUCCESS or MPI_ERR_ARG. */
int MPIX_Nbrma_set_impl(const char *impl);

/* The message of the last error libnbrma raised in this process ("MPI_Put (rank 0): ..."), or
 * "". MPI_Error_string on the returned code gives the same text where the MPI library keeps
 * strings for codes of predefined classes (Open MPI); elsewhere (MPICH 4.0.2) it is also printed
 * on stderr when raised. */
const char *MPIX_Nbrma_last_error(void);

/* Print the NBRMA_* settings with their current values and meaning to `stream` (a FILE *). */
void MPIX_Nbrma_print_settings(void *stream);
/* What carries traffic between nodes: the UCX version libnbrma was built with and runs, UCX's
 * own variables; with `verbose`, the UCX transports chosen toward a peer and the RDMA devices
 * libibverbs sees (nbrma-settings --net). May be called before MPI_Init. */
void MPIX_Nbrma_print_net(void *stream, int verbose);

/* ---- nonblocking synchronization (paper 000 §V; semantics §VI, docs/nonblocking.md) ----------
 * Each call takes the arguments of its blocking twin plus an MPI_Request completed by the
 * standard wait/test family (MPI_Wait, MPI_Test, MPI_Waitall, ... mixed freely with other
 * requests). Epoch-opening calls (ipost, istart, ilock, ilock_all, and an ifence that only opens)
 * return a request that is already complete; epoch-closing calls (icomplete, iwait, iunlock,
 * iunlock_all, an ifence that closes) return one that completes when the epoch has completed
 * internally; an iflush* request completes when every RMA call issued before it toward its
 * target(s) has completed. Buffers an epoch touches are unsafe until its request completed.
 * On windows served by the vendor these calls return MPI_ERR_WIN (the MPI library has no
 * nonblocking epochs). */
int MPIX_Win_ifence(int assert, MPI_Win win, MPI_Request *request);
int MPIX_Win_ipost(MPI_Group group, int assert, MPI_Win win, MPI_Request *request);
int MPIX_Win_istart(MPI_Group group, int assert, MPI_Win win, MPI_Request *request);
int MPIX_Win_icomplete(MPI_Win win, MPI_Request *request);
int MPIX_Win_iwait(MPI_Win win, MPI_Request *request);
int MPIX_Win_ilock(int lock_type, int rank, int assert, MPI_Win win, MPI_Request *request);
int MPIX_Win_iunlock(int rank, MPI_Win win, MPI_Request *request);
int MPIX_Win_ilock_all(int assert, MPI_Win win, MPI_Request *request);
int MPIX_Win_iunlock_all(MPI_Win win, MPI_Request *request);
int MPIX_Win_iflush(int rank, MPI_Win win, MPI_Request *request);
int MPIX_Win_iflush_local(int rank, MPI_Win win, MPI_Request *request);
int MPIX_Win_iflush_all(MPI_Win win, MPI_Request *request);
int MPIX_Win_iflush_local_all(MPI_Win win, MPI_Request *request);

/* Reorder flags (paper 000 §VI-B): info keys of a window (at creation or MPI_Win_set_info),
 * values "1"/"true" (on) or "0"/"false" (off, the default). Each lets the progress engine
 * activate an epoch while the named kind of epoch that precedes it is still active; none applies
 * across an epoch opened by fence, ifence, lock_all or ilock_all. The RMA calls of the two epochs
 * may then reach memory out of order: use a flag only when they touch disjoint memory.
 * Open MPI 4.1 refuses info keys longer than 35 characters (MPI_MAX_INFO_KEY 36), so each flag
 * also has a short key, the paper's abbreviation (MPIX_A_A_A_R, ...), accepted on every MPI;
 * MPI_Win_get_info reports the short key, and the long one where the MPI library can hold it. */
#define MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER     "MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER"
#define MPIX_WIN_ACCESS_AFTER_EXPOSURE_REORDER   "MPIX_WIN_ACCESS_AFTER_EXPOSURE_REORDER"
#define MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER "MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER"
#define MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER   "MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER"
#define MPIX_A_A_A_R "MPIX_A_A_A_R" /* short keys: the same four flags */
#define MPIX_A_A_E_R "MPIX_A_A_E_R"
#define MPIX_E_A_E_R "MPIX_E_A_E_R"
#define MPIX_E_A_A_R "MPIX_E_A_A_R"

/* Epochs of a ref window that are open, deferred, active or awaiting completion (diagnostics
 * and tests): *deferred = opened but not yet activated, *pending = not yet completed
 * internally (deferred included). MPI_ERR_WIN on a vendor window. */
int MPIX_Win_epoch_counts(MPI_Win win, int *deferred, int *pending);


/* ---- memory accounting (paper 004 §III-IV; docs/ref.md, "Memory accounting") ----------------
 * What libnbrma's RMA machinery holds in this process, from counters updated where the memory
 * is allocated and freed (never estimated). A gauge gives the objects and bytes held now and the
 * most ever held at once (high-water) since MPI_Init. Set stats->version to
 * MPIX_WIN_STATS_VERSION before the call: a library that does not know the caller's version
 * refuses it with MPI_ERR_ARG rather than write a struct of another shape. MPI_ERR_WIN on a
 * window the vendor serves; MPI_WIN_NULL fills the process part only (the window part is 0).
 * NBRMA_STATS=path writes the process part as JSON at MPI_Finalize (docs/ref.md). */
#define MPIX_WIN_STATS_VERSION 2 /* 2 added proc_ops_pooled; a version-1 caller gets the rest */
/* Transports of a pair of ranks: indices of peers[] and peer_bytes[]. */
enum { MPIX_NBRMA_TP_SHM = 0, MPIX_NBRMA_TP_AM, MPIX_NBRMA_TP_VERBS, MPIX_NBRMA_TP_UCX,
       MPIX_NBRMA_NTP = 4 };
typedef struct {
    long long count, count_hwm; /* objects held now / at most */
    long long bytes, bytes_hwm; /* their bytes now / at most */
} MPIX_Nbrma_gauge;
typedef struct {
    int version; /* in: MPIX_WIN_STATS_VERSION */
    int ranks;   /* the window's group size */
    /* ---- the window (its metadata in this process) ---- */
    long long peers[MPIX_NBRMA_NTP];      /* pairs (me, r) by transport, me included (shm) */
    long long peer_bytes[MPIX_NBRMA_NTP]; /* per-peer state toward them: target descriptor and,
                                             once used, engine queues, by transport */
    MPIX_Nbrma_gauge meta; /* window metadata: object, per-peer descriptors, engine queues,
                              control block (node-shared); count = 1 */
    long long ctl_bytes;   /* of which this rank's node-shared control block (lock words, fence
                              counter, per-peer matching counters) */
    long long region_bytes; /* dynamic windows: attached-region table and cached copies of peers'
                               tables (capacity, now) */
    long long lock_word_bytes;  /* passive-target lock state at this rank as a target: the lock
                                   words (one cache line each) */
    MPIX_Nbrma_gauge lock_queue; /* the queued lock's nodes in this process (NBRMA_LOCK=queued:
                                    one per target, where a waiting origin is linked and
                                    granted; 0 with the polling lock, where nothing queues) */
    MPIX_Nbrma_gauge epochs;     /* epoch objects (allocated; recycled ones stay counted) and
                                    their PSCW groups */
    MPIX_Nbrma_gauge ops;        /* operation objects: RMA calls recorded (deferred epoch, held
                                    by the scheduler or by delayed issue) not yet carried out */
    MPIX_Nbrma_gauge flushes;    /* flush objects waiting */
    long long ops_in_flight;     /* operations issued to other nodes, not yet acknowledged */
    /* ---- the process (every window, and what belongs to none) ---- */
    MPIX_Nbrma_gauge proc_windows; /* ref windows (count) and their metadata (bytes) */
    MPIX_Nbrma_gauge proc_epochs, proc_ops, proc_flushes;
    MPIX_Nbrma_gauge proc_requests; /* request objects (closing, flush and R-variant requests) */
    /* ---- version 2 ---- */
    MPIX_Nbrma_gauge proc_ops_pooled; /* operation objects freed and kept for reuse (up to
                                         NBRMA_OP_POOL objects): memory the process holds that the
                                         ops gauges, objects in use, do not count */
} MPIX_Win_stats;
int MPIX_Win_get_stats(MPI_Win win, MPIX_Win_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
