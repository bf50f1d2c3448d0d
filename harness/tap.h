/* tap.h — TAP output for MPI tests: rank 0 alone prints, every test point is collective.
 *
 * Each test point all-reduces the ranks' verdicts, so a failure on any rank fails the point;
 * what a failing rank has to say (its diagnostic and any tap_diag() text it queued) is gathered
 * to rank 0 and printed under the point as "# rank R: ...". Pattern after MPICH's mtest, which
 * reduces per-rank error counts to rank 0. */
#ifndef NBH_TAP_H
#define NBH_TAP_H

#include <mpi.h>

void tap_init(MPI_Comm comm);
void tap_plan(int n);

/* Collective test points; return the global verdict (1 = passed everywhere). */
int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tap_is_long(long got, long expected, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tap_is_double(double got, double expected, double tol, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tap_is_str(const char *got, const char *expected, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Collective: n points skipped for `reason`. */
void tap_skip(int n, const char *reason);

/* Local: rank 0 prints "# ..." now; other ranks queue it for rank 0 at the next test point. */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Local, any rank: a fatal failure (a bounded wait ran out, a call that cannot fail did): say
 * "rank R: fatal: <why>" on stderr (rank 0 also prints the failing point "not ok N - rank 0:
 * <why>", N following the last collective point) and abort the job. Never a TAP "Bail out!":
 * prove would skip every later test file. run-test.sh closes the aborted stream with a plan and
 * a failing point quoting the fatal lines. */
_Noreturn void tap_bail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Collective: print the plan if none was given, return the exit status (0 = all passed). */
int tap_done(void);

#endif
