/* labutil.h — the few helpers the lab programs share (labs/README.md).
 *
 * Everything here is plain MPI and C; read it once, then ignore it:
 *   lab_now()           wall-clock seconds (MPI_Wtime)
 *   lab_work_ms(ms)     keep the CPU busy for `ms` milliseconds of wall-clock time, making no MPI
 *                       call: a rank that "computes" and does nothing else meanwhile
 *   lab_wait(&req)      complete a request by MPI_Test + nbh_relax (harness/relax.h: yield
 *                       the core while yields come back at once, poll without yielding for a
 *                       while when one came back late). MPI_Wait would do the same, but some MPI
 *                       libraries spin without ever giving the core away while they wait, which
 *                       hurts when there are more ranks than cores (a laptop, a shared login
 *                       node); this loop lets the other ranks run, and does not starve itself
 *                       beside other jobs' busy tasks as a yield at every turn would on Linux 6.6+.
 *   lab_barrier(comm)   a barrier built the same way (MPI_Ibarrier + lab_wait)
 *   lab_median(v, n)    the median of n doubles (sorts v)
 *   lab_arg(argc, argv, "-d", 100)   the integer after option "-d", or the default (after
 *                       MPI_Init: a bad value ends the run with MPI_Abort)
 */
#ifndef LABUTIL_H
#define LABUTIL_H

#include "../../harness/relax.h" /* nbh_relax: found next to this file whatever -I says */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline double lab_now(void)
{
    return MPI_Wtime();
}

static inline void lab_work_ms(double ms)
{
    const double end = MPI_Wtime() + ms * 1e-3;
    volatile unsigned long x = 0;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i;
}

static inline void lab_check(int rc, const char *call)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "%s failed: %s\n", call, msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static inline void lab_wait(MPI_Request *req)
{
    int done = 0;
    while (!done) {
        lab_check(MPI_Test(req, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (!done)
            nbh_relax();
    }
}

static inline void lab_barrier(MPI_Comm comm)
{
    MPI_Request req;
    lab_check(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
    lab_wait(&req);
}

static int lab_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double lab_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, lab_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline int lab_arg(int argc, char **argv, const char *name, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < 0 || v > 1000000) {
                fprintf(stderr, "option %s: '%s' is not an integer in 0..1000000\n", name,
                        argv[i + 1]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            return (int)v;
        }
    return def;
}

#endif
