/* tap.c — collective TAP test points (see tap.h). Collectives are nonblocking + yielding waits
 * (timing.h), so tests with more ranks than cores stay fast. */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"

static MPI_Comm tap_comm = MPI_COMM_NULL;
static int tap_rank, tap_size, tap_planned = -1, tap_count, tap_failed;
static char *pending; /* this rank's text for rank 0 */
static size_t pending_len, pending_cap;

void tap_init(MPI_Comm comm)
{
    tap_comm = comm;
    MPI_Comm_rank(comm, &tap_rank);
    MPI_Comm_size(comm, &tap_size);
    setvbuf(stdout, NULL, _IOLBF, 0);
}

void tap_plan(int n)
{
    tap_planned = n;
    if (tap_rank == 0)
        printf("1..%d\n", n);
}

static void queue(const char *fmt, va_list ap)
{
    char line[1024];
    int n = vsnprintf(line, sizeof line, fmt, ap);
    if (n < 0)
        return;
    size_t len = strlen(line);
    if (pending_len + len + 2 > pending_cap) {
        size_t cap = (pending_len + len + 2) * 2;
        char *p = realloc(pending, cap);
        if (!p)
            return;
        pending = p;
        pending_cap = cap;
    }
    memcpy(pending + pending_len, line, len);
    pending_len += len;
    pending[pending_len++] = '\n';
    pending[pending_len] = '\0';
}

void tap_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (tap_rank == 0) {
        char line[1024];
        vsnprintf(line, sizeof line, fmt, ap);
        printf("# %s\n", line);
    } else {
        queue(fmt, ap);
    }
    va_end(ap);
}

/* Print every rank's queued text at rank 0, one "# rank R: " line each. */
static void flush_pending(void)
{
    int len = (int)pending_len;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (tap_rank == 0) {
        lens = calloc((size_t)tap_size, sizeof *lens);
        displs = calloc((size_t)tap_size, sizeof *displs);
    }
    MPI_Request r;
    MPI_Igather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, tap_comm, &r);
    nbh_wait(&r);
    int total = 0;
    if (tap_rank == 0) {
        for (int i = 0; i < tap_size; i++) {
            displs[i] = total;
            total += lens[i];
        }
        all = malloc((size_t)total + 1);
    }
    MPI_Igatherv(pending ? pending : "", len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, tap_comm,
                 &r);
    nbh_wait(&r);
    if (tap_rank == 0) {
        for (int i = 0; i < tap_size; i++) {
            const char *p = all + displs[i], *end = p + lens[i];
            while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                printf("# rank %d: %.*s\n", i, (int)n, p);
                p += n + 1;
            }
        }
        free(all);
        free(lens);
        free(displs);
    }
    pending_len = 0;
    if (pending)
        pending[0] = '\0';
}

/* The collective core of every test point: `why` is this rank's reason when cond is false. */
static int point(int cond, const char *why, const char *fmt, va_list ap)
{
    char desc[512];
    vsnprintf(desc, sizeof desc, fmt, ap);
    if (!cond && why)
        tap_diag("%s", why);
    int v[2] = {cond ? 1 : 0, pending_len > 0};
    int sums[2] = {v[0], v[1]};
    MPI_Request r;
    /* One all-reduce: how many ranks passed, how many have text for rank 0. */
    MPI_Iallreduce(v, sums, 2, MPI_INT, MPI_SUM, tap_comm, &r);
    nbh_wait(&r);
    int ok = sums[0] == tap_size;
    tap_count++;
    if (!ok)
        tap_failed++;
    if (tap_rank == 0) {
        printf("%sok %d - %s\n", ok ? "" : "not ", tap_count, desc);
        if (!ok)
            printf("# failed on %d of %d ranks\n", tap_size - sums[0], tap_size);
    }
    if (sums[1] > 0)
        flush_pending();
    return ok;
}

int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int ok = point(cond, NULL, fmt, ap);
    va_end(ap);
    return ok;
}

int tap_is_long(long got, long expected, const char *fmt, ...)
{
    char why[128];
    snprintf(why, sizeof why, "got %ld, expected %ld", got, expected);
    va_list ap;
    va_start(ap, fmt);
    int ok = point(got == expected, why, fmt, ap);
    va_end(ap);
    return ok;
}

int tap_is_double(double got, double expected, double tol, const char *fmt, ...)
{
    char why[160];
    snprintf(why, sizeof why, "got %g, expected %g within %g", got, expected, tol);
    double d = got - expected;
    va_list ap;
    va_start(ap, fmt);
    int ok = point(d <= tol && -d <= tol, why, fmt, ap);
    va_end(ap);
    return ok;
}

int tap_is_str(const char *got, const char *expected, const char *fmt, ...)
{
    char why[600];
    snprintf(why, sizeof why, "got '%.280s', expected '%.280s'", got ? got : "(null)",
             expected ? expected : "(null)");
    va_list ap;
    va_start(ap, fmt);
    int ok = point(got && expected && strcmp(got, expected) == 0, why, fmt, ap);
    va_end(ap);
    return ok;
}

void tap_skip(int n, const char *reason)
{
    nbh_barrier(tap_comm);
    for (int i = 0; i < n; i++) {
        tap_count++;
        if (tap_rank == 0)
            printf("ok %d # SKIP %s\n", tap_count, reason);
    }
}

_Noreturn void tap_bail_out(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Not a TAP "Bail out!", which would make prove skip every later test file. Rank 0 prints
     * one failing point numbered after the last collective one; another rank's line would reach
     * mpiexec's output interleaved with rank 0's (seen with MPICH: characters of two lines
     * mixed), so it says it on stderr only, and run-test.sh closes the stream with a failing
     * point that quotes these "fatal:" lines and a plan. */
    if (tap_rank == 0) {
        printf("not ok %d - rank 0: %s\n", tap_count + 1, msg);
        fflush(stdout);
    }
    fprintf(stderr, "rank %d: fatal: %s\n", tap_rank, msg);
    fflush(stderr);
    MPI_Abort(tap_comm == MPI_COMM_NULL ? MPI_COMM_WORLD : tap_comm, 255);
    exit(255);
}

int tap_done(void)
{
    /* Text queued after the last point still reaches rank 0. */
    int any = pending_len > 0;
    nbh_allreduce(&any, 1, MPI_INT, MPI_MAX, tap_comm);
    if (any)
        flush_pending();
    if (tap_rank == 0) {
        if (tap_planned < 0)
            printf("1..%d\n", tap_count);
        else if (tap_planned != tap_count)
            printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
    }
    free(pending);
    pending = NULL;
    pending_len = pending_cap = 0;
    return tap_failed || (tap_planned >= 0 && tap_planned != tap_count) ? 1 : 0;
}
