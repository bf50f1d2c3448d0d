/* timing.h — time, calibrated CPU work, and waits that never block inside the vendor MPI.
 *
 * Work is a busy loop whose iteration count per microsecond is calibrated at start-up (never a
 * sleep): it occupies the CPU like computation does, so it competes with shared-memory
 * communication exactly as an application's work would. Waits are MPI_Test loops that yield the
 * CPU after a short spin, so runs with more ranks than cores stay fast (MPICH's own blocking
 * calls spin without yielding when oversubscribed). */
#ifndef NBH_TIMING_H
#define NBH_TIMING_H

#include <mpi.h>
#include <stdint.h>

/* Calibrate the work loop on this thread's CPU time (immune to preemption while calibrating);
 * returns nanoseconds per loop iteration. Idempotent. */
double nbh_work_calibrate(void);
double nbh_work_ns_per_iter(void);
/* Burn the CPU for about `us` microseconds of calibrated work (no clock reads inside). */
void nbh_work_us(double us);
/* Burn `iters` iterations of the work loop (used by calibration and tests). */
void nbh_work_iters(uint64_t iters);

/* The factor by which a test's own time limits (bounded waits, watchdogs) are scaled on a loaded
 * machine: NBRMA_TIMEOUT_SCALE when set (run-test.sh exports the factor it applied to its own
 * watchdog, so the test's limits stay inside it), else TIMEOUT_SCALE (default 1) times the load
 * measured now per online core (1-minute load average or runnable tasks, whichever is higher;
 * at least 1, at most 8). Computed once per process; thread-safe. */
double nbh_timeout_scale(void);
/* seconds * nbh_timeout_scale(): a limit sized for a quiet machine, scaled. */
double nbh_limit(double seconds);

/* Complete a request with MPI_Test + nbh_relax (relax.h; never MPI_Wait). */
int nbh_wait(MPI_Request *req);
int nbh_barrier(MPI_Comm comm);
/* All-reduce in place with MPI_Iallreduce + nbh_wait. */
int nbh_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int nbh_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);

/* Complete n requests with MPI_Test + nbh_relax; done[i] = MPI_Wtime() when request i was first
 * seen complete (an epoch's completion time, observed by polling as MPI_Test does). */
int nbh_wait_times(int n, MPI_Request *reqs, double *done);

/* Aligned sample starts (paper 000 §VIII-A: "a time origin taken at 0" on every process).
 * MPI_Wtime is not global on MPICH 4.0.2 or Open MPI 4.1.4 here (MPI_WTIME_IS_GLOBAL = 0), so
 * nbh_align_init estimates each rank's offset to rank 0's clock by ping-pong (the exchange with
 * the smallest round trip; error <= half of it) unless the attribute says the clock is global.
 * nbh_align: a yielding barrier, rank 0 broadcasts "start at my now + margin", every rank spins
 * (yielding the CPU on every turn) until that instant on its own clock. Returns the start on the
 * caller's clock: time 0 of the sample; a->late says how far past it this rank got there (a
 * descheduled rank on an oversubscribed node arrives late). */
typedef struct {
    MPI_Comm comm;
    int rank;
    int global;    /* MPI_WTIME_IS_GLOBAL was set */
    double offset; /* rank 0's clock minus this rank's clock (seconds) */
    double margin; /* seconds between agreeing on the start and the start */
    double late;   /* last nbh_align: seconds this rank arrived after the start */
} nbh_align_t;

int nbh_align_init(nbh_align_t *a, MPI_Comm comm);
double nbh_align(nbh_align_t *a);

#endif
