/* nb_util.h — helpers shared by the nb_* programs, the conformance tests of libnbrma's
 * nonblocking synchronization API (ref/include/nbrma.h, docs/nonblocking.md).
 *
 * The nb_* tests order ranks with messages, never with timing: "T1 polls for 300 ms and must
 * still see its exposure incomplete, then tells T0 to post". Every wait is bounded: a request
 * that must complete and does not within NBT_LIMIT seconds fails the test (tap_bail_out: one
 * failing point naming the rank and the request, then the job is aborted; never a TAP "Bail
 * out!", which would stop prove's whole suite) instead of hanging; a request that must stay
 * incomplete is polled for a fixed time and the verdict goes to a test point, after which the
 * peers are released anyway. NBT_LIMIT is 20 s on a quiet machine, scaled by
 * nbh_timeout_scale() (TIMEOUT_SCALE and the measured load, as run-test.sh's watchdog).
 * Polling uses MPI_Test, which libnbrma intercepts to drive its progress engine. */
#ifndef NBRMA_NB_UTIL_H
#define NBRMA_NB_UTIL_H

#include "relax.h"
#include "conf.h"
#include "nbrma.h"

/* Seconds a request that must complete may take before the test fails: 20 on a quiet machine. */
#define NBT_LIMIT nbh_limit(20.0)
/* Seconds a request (or a memory word) that must NOT change is watched. */
#define NBT_QUIET 0.3

static MPI_Comm nbt_comm; /* point-to-point ordering messages, apart from the TAP collectives */
static MPI_Group nbt_world;

static inline void nbt_init(int *argc, char ***argv, int min_procs)
{
    conf_init(argc, argv, min_procs);
    MPI_Comm_dup(MPI_COMM_WORLD, &nbt_comm);
    MPI_Comm_group(MPI_COMM_WORLD, &nbt_world);
}

static inline int nbt_done(void)
{
    MPI_Group_free(&nbt_world);
    MPI_Comm_free(&nbt_comm);
    return conf_done();
}

/* tap_diag naming this rank: tap.c prefixes the other ranks' text with "rank R: " when it
 * reaches rank 0, and prints rank 0's own as is. */
__attribute__((format(printf, 1, 2))) static inline void nbt_diag(const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (conf_rank == 0)
        tap_diag("rank 0: %s", msg);
    else
        tap_diag("%s", msg);
}

/* Drive libnbrma's progress engine once (MPI_Test is intercepted; a null request is complete). */
static inline void nbt_progress(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int flag;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
}

/* Poll *req with MPI_Test for at most `secs` seconds; 1 if it completed. */
static inline int nbt_poll(MPI_Request *req, double secs)
{
    double t0 = MPI_Wtime();
    for (long n = 0;; n++) {
        int flag = 0;
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return 1;
        if (MPI_Wtime() - t0 > secs)
            return 0;
        if (n > 16)
            nbh_relax();
    }
}

/* A request that must complete: fail the test if it does not within NBT_LIMIT seconds. */
__attribute__((format(printf, 2, 3))) static inline void nbt_wait(MPI_Request *req, const char *fmt,
                                                                  ...)
{
    if (nbt_poll(req, NBT_LIMIT))
        return;
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tap_bail_out("%s did not complete within %.0f s (hang?)", what, NBT_LIMIT);
}

/* Several requests that must complete, with MPI_Waitall semantics but bounded. */
static inline void nbt_waitall(int n, MPI_Request *reqs, const char *what)
{
    for (int i = 0; i < n; i++)
        nbt_wait(&reqs[i], "%s (request %d of %d)", what, i, n);
}

/* MPI_Testall until all completed or `secs` passed: 1 if all completed. (A status array, since
 * MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow in MPICH's header.) */
static inline int nbt_testall(int n, MPI_Request *reqs, double secs)
{
    MPI_Status *st = malloc((size_t)(n > 0 ? n : 1) * sizeof *st);
    double t0 = MPI_Wtime();
    int flag = 0;
    for (long k = 0;; k++) {
        MPI_Testall(n, reqs, &flag, st);
        if (flag || MPI_Wtime() - t0 > secs)
            break;
        if (k > 16)
            nbh_relax();
    }
    free(st);
    return flag;
}

/* Is a request complete on its first MPI_Test? (opening requests are born complete) */
static inline int nbt_born_done(MPI_Request *req)
{
    int flag = 0;
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* Ordering messages: one int on nbt_comm, bounded waits (the peer may itself be polling). */
static inline void nbt_send(int to, int tag, int value)
{
    MPI_Request r;
    MPI_Isend(&value, 1, MPI_INT, to, tag, nbt_comm, &r);
    nbt_wait(&r, "MPI_Isend to rank %d (tag %d)", to, tag);
}

static inline int nbt_recv(int from, int tag)
{
    int v = 0;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, from, tag, nbt_comm, &r);
    nbt_wait(&r, "MPI_Irecv from rank %d (tag %d): the peer never sent", from, tag);
    return v;
}

/* All ranks' outstanding work done: a yielding barrier on the test's communicator. */
static inline void nbt_barrier(void)
{
    MPI_Request r;
    MPI_Ibarrier(nbt_comm, &r);
    nbt_wait(&r, "MPI_Ibarrier");
}

/* The barrier after a phase in which each rank may take up to `secs` (scaled) for its own part:
 * a rank that finished early waits that long for the others, not NBT_LIMIT (issue 23: on a
 * loaded machine nb_stress's rank 0 gave up at the 20 s barrier while rank 1 was still, within
 * its own 60 s, draining 2500 queued epochs). */
static inline void nbt_barrier_within(double secs, const char *after)
{
    MPI_Request r;
    MPI_Ibarrier(nbt_comm, &r);
    if (!nbt_poll(&r, secs))
        tap_bail_out("MPI_Ibarrier after %s did not complete within %.0f s (hang?)", after, secs);
}

/* Watch words [0, n) of local window memory for `secs` seconds while driving progress: 1 if
 * all kept the value `expect` throughout, else 0 with *which and *seen naming the first change. */
static inline int nbt_stays(const int64_t *words, int n, int64_t expect, double secs, int *which,
                            int64_t *seen)
{
    double t0 = MPI_Wtime();
    *which = -1;
    *seen = expect;
    for (long k = 0; MPI_Wtime() - t0 < secs; k++) {
        nbt_progress();
        for (int i = 0; i < n; i++) {
            int64_t v = __atomic_load_n(&words[i], __ATOMIC_ACQUIRE);
            if (v != expect) {
                *which = i;
                *seen = v;
                return 0;
            }
        }
        if (k > 16)
            nbh_relax();
    }
    return 1;
}

/* A group of one or two ranks of MPI_COMM_WORLD (b < 0: just a). */
static inline MPI_Group nbt_group(int a, int b)
{
    int ranks[2] = {a, b};
    MPI_Group g;
    MPI_Group_incl(nbt_world, b < 0 || b == a ? 1 : 2, ranks, &g);
    return g;
}

/* A group of the ranks whose bit is set in `mask`. */
static inline MPI_Group nbt_group_mask(unsigned mask)
{
    int ranks[32], n = 0;
    for (int r = 0; r < conf_size && r < 32; r++)
        if (mask & (1u << r))
            ranks[n++] = r;
    MPI_Group g;
    MPI_Group_incl(nbt_world, n, ranks, &g);
    return g;
}

/* The window's epoch counts; -1/-1 when the call fails. */
static inline void nbt_counts(MPI_Win win, int *deferred, int *pending)
{
    if (MPIX_Win_epoch_counts(win, deferred, pending) != MPI_SUCCESS)
        *deferred = *pending = -1;
}

/* Load a word of local window memory as other processes' stores left it. */
static inline int64_t nbt_load(const int64_t *word)
{
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

#endif
