/* timing.c — calibrated work loop and yielding waits (see timing.h). */
#include "relax.h"
#include "timing.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double ns_per_iter;

/* The loop body is a dependent multiply-add chain on a volatile sink: the compiler cannot
 * remove or vectorize it, and its cost per iteration is stable on one core. */
void nbh_work_iters(uint64_t iters)
{
    static volatile uint64_t sink;
    uint64_t x = sink | 1;
    for (uint64_t i = 0; i < iters; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ __volatile__("" : "+r"(x));
    }
    sink = x;
}

/* CPU time this thread has consumed: calibration on a loaded machine (other jobs, more ranks
 * than cores) must not count the time the process was descheduled, or the loop comes out too
 * slow per iteration and every later "D of work" too short once the CPU is free again. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double nbh_work_calibrate(void)
{
    if (ns_per_iter > 0)
        return ns_per_iter;
    /* Grow the trial until it lasts >= 2 ms of CPU time, then take the fastest of several trials
     * (CPU time excludes preemption; the minimum also rejects cache and frequency warm-up). */
    uint64_t n = 1024;
    double t;
    for (;;) {
        double t0 = cpu_now();
        nbh_work_iters(n);
        t = cpu_now() - t0;
        if (t >= 2e-3)
            break;
        n *= 2;
    }
    double best = t;
    for (int trial = 0; trial < 7; trial++) {
        double t0 = cpu_now();
        nbh_work_iters(n);
        t = cpu_now() - t0;
        if (t < best)
            best = t;
    }
    ns_per_iter = best * 1e9 / (double)n;
    return ns_per_iter;
}

double nbh_work_ns_per_iter(void)
{
    return nbh_work_calibrate();
}

void nbh_work_us(double us)
{
    if (us <= 0)
        return;
    nbh_work_iters((uint64_t)(us * 1000.0 / nbh_work_calibrate()));
}

int nbh_wait(MPI_Request *req)
{
    int done = 0, spins = 0, rc;
    while ((rc = MPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done) {
        if (++spins > 64)
            nbh_relax();
    }
    return rc;
}

int nbh_wait_times(int n, MPI_Request *reqs, double *done)
{
    int left = n, spins = 0;
    char seen[64] = {0};
    if (n > (int)sizeof seen)
        return MPI_ERR_COUNT;
    while (left) {
        int progressed = 0;
        for (int i = 0; i < n; i++) {
            if (seen[i])
                continue;
            int flag = 0, rc = MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            if (flag) {
                done[i] = MPI_Wtime();
                seen[i] = 1;
                left--;
                progressed = 1;
            }
        }
        if (!progressed && ++spins > 64)
            nbh_relax();
    }
    return MPI_SUCCESS;
}

int nbh_barrier(MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ibarrier(comm, &r);
    return rc != MPI_SUCCESS ? rc : nbh_wait(&r);
}

int nbh_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, op, comm, &r);
    return rc != MPI_SUCCESS ? rc : nbh_wait(&r);
}

int nbh_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ibcast(buf, count, type, root, comm, &r);
    return rc != MPI_SUCCESS ? rc : nbh_wait(&r);
}

/* ---- aligned starts ------------------------------------------------------------------------ */

enum { ALIGN_TAG = 7321, ALIGN_ROUNDS = 16 };

/* One request-answer exchange with a peer: receive (if in) and send (if out), in that order for
 * the answering side (rank 0 reads its clock between the two). */
static int recv1(MPI_Comm comm, int peer, double *in)
{
    MPI_Request r;
    int rc = MPI_Irecv(in, 1, MPI_DOUBLE, peer, ALIGN_TAG, comm, &r);
    return rc != MPI_SUCCESS ? rc : nbh_wait(&r);
}

static int send1(MPI_Comm comm, int peer, double out)
{
    MPI_Request r;
    int rc = MPI_Isend(&out, 1, MPI_DOUBLE, peer, ALIGN_TAG, comm, &r);
    return rc != MPI_SUCCESS ? rc : nbh_wait(&r);
}

int nbh_align_init(nbh_align_t *a, MPI_Comm comm)
{
    int n, flag = 0, *global = NULL, rc;
    a->comm = comm;
    MPI_Comm_rank(comm, &a->rank);
    MPI_Comm_size(comm, &n);
    a->offset = 0;
    a->late = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag);
    a->global = flag && global && *global;
    /* Offsets: rank r sends its clock, rank 0 answers with its own; keep the round with the
     * shortest round trip and assume rank 0 read its clock half-way through it. */
    for (int r = 1; r < n && !a->global; r++) {
        double best = 1e30;
        for (int k = 0; k < ALIGN_ROUNDS; k++) {
            double theirs = 0;
            if (a->rank == 0) {
                if ((rc = recv1(comm, r, &theirs)) != MPI_SUCCESS ||
                    (rc = send1(comm, r, MPI_Wtime())) != MPI_SUCCESS)
                    return rc;
            } else if (a->rank == r) {
                double t0 = MPI_Wtime();
                if ((rc = send1(comm, 0, t0)) != MPI_SUCCESS ||
                    (rc = recv1(comm, 0, &theirs)) != MPI_SUCCESS)
                    return rc;
                double t1 = MPI_Wtime();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    a->offset = theirs - 0.5 * (t0 + t1);
                }
            }
        }
    }
    /* Margin: several times the slowest of a few agreement rounds (barrier + broadcast), so
     * ranks normally reach the start before it passes; at least 50 us, at most 2 ms. */
    double worst = 0;
    for (int k = 0; k < 5; k++) {
        double t0 = MPI_Wtime(), v = t0;
        if ((rc = nbh_barrier(comm)) != MPI_SUCCESS ||
            (rc = nbh_bcast(&v, 1, MPI_DOUBLE, 0, comm)) != MPI_SUCCESS)
            return rc;
        if (MPI_Wtime() - t0 > worst)
            worst = MPI_Wtime() - t0;
    }
    if ((rc = nbh_allreduce(&worst, 1, MPI_DOUBLE, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    a->margin = 4 * worst < 50e-6 ? 50e-6 : 4 * worst > 2e-3 ? 2e-3 : 4 * worst;
    return MPI_SUCCESS;
}

double nbh_align(nbh_align_t *a)
{
    double start = 0;
    nbh_barrier(a->comm);
    if (a->rank == 0)
        start = MPI_Wtime() + a->margin;
    nbh_bcast(&start, 1, MPI_DOUBLE, 0, a->comm);
    start -= a->offset; /* on this rank's clock */
    /* Yield on every turn: with more ranks than cores, a rank spinning without yielding keeps a
     * peer descheduled past the start (by up to a scheduler time slice) — unless yields come
     * back late because other jobs' tasks run here (relax.h). */
    double now;
    while ((now = MPI_Wtime()) < start)
        nbh_relax();
    a->late = now - start;
    return start;
}

/* ---- time limits on a loaded machine (run-test.sh computes the same factor) ---- */

static double g_timeout_scale;
static pthread_once_t g_timeout_once = PTHREAD_ONCE_INIT;

static double env_factor(const char *name)
{
    const char *e = getenv(name);
    char *end;
    double v = e ? strtod(e, &end) : 0.0;
    return e && end != e && *end == '\0' && v > 0.0 && v < 1e6 ? v : 0.0;
}

static void timeout_scale_init(void)
{
    double s = env_factor("NBRMA_TIMEOUT_SCALE");
    if (s > 0.0) {
        g_timeout_scale = s;
        return;
    }
    double user = env_factor("TIMEOUT_SCALE");
    double f = 1.0, load = 0.0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int running = 0;
    FILE *fp = fopen("/proc/loadavg", "r");
    if (fp) {
        if (fscanf(fp, "%lf %*f %*f %d/", &load, &running) == 2 && cores > 0) {
            if (running - 1 > load)
                load = running - 1;
            f = load / (double)cores;
        }
        fclose(fp);
    }
    if (f < 1.0)
        f = 1.0;
    if (f > 8.0)
        f = 8.0;
    g_timeout_scale = (user > 0.0 ? user : 1.0) * f;
}

double nbh_timeout_scale(void)
{
    pthread_once(&g_timeout_once, timeout_scale_init);
    return g_timeout_scale;
}

double nbh_limit(double seconds)
{
    return seconds * nbh_timeout_scale();
}
