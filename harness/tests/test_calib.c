/* test_calib.c — the calibrated work loop burns what was asked within 10%, in CPU time (what
 * the calibration measures: on a loaded machine wall time adds the time others ran). Each
 * request is measured several times and the fastest kept. */
#include <time.h>

#include "tap.h"
#include "timing.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    double ns = nbh_work_calibrate();
    tap_ok(ns > 0.01 && ns < 1000, "calibration gives a plausible %.3f ns per iteration", ns);
    tap_ok(nbh_work_calibrate() == ns, "calibrating again keeps the first result");
    static const double req_us[] = {100, 1000, 5000, 20000};
    for (int i = 0; i < 4; i++) {
        double best = 1e30;
        for (int t = 0; t < 15; t++) {
            double t0 = cpu_now();
            nbh_work_us(req_us[i]);
            double el = (cpu_now() - t0) * 1e6;
            if (el < best)
                best = el;
        }
        tap_is_double(best, req_us[i], 0.10 * req_us[i],
                      "work of %.0f us takes %.1f us of CPU time", req_us[i], best);
    }
    double t0 = MPI_Wtime();
    nbh_work_us(0);
    nbh_work_us(-5);
    tap_ok(MPI_Wtime() - t0 < 1e-4, "zero or negative work returns at once");
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
