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

/* Calibrate the work loop; returns nanoseconds per loop iteration. Idempotent. */
double nbh_work_calibrate(void);
double nbh_work_ns_per_iter(void);
/* Burn the CPU for about `us` microseconds of calibrated work (no clock reads inside). */
void nbh_work_us(double us);
/* Burn `iters` iterations of the work loop (used by calibration and tests). */
void nbh_work_iters(uint64_t iters);

/* Complete a request with MPI_Test + sched_yield (never MPI_Wait). */
int nbh_wait(MPI_Request *req);
int nbh_barrier(MPI_Comm comm);
/* All-reduce in place with MPI_Iallreduce + nbh_wait. */
int nbh_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int nbh_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);

#endif
