/* test_calib.c — the calibrated work loop burns CPU time in proportion to what was asked, in
 * CPU time (what the calibration measures: on a loaded machine wall time adds the time others
 * ran). Each request is measured several times and the fastest kept. What must hold whatever
 * the load: every request within a factor of 2 of what was asked (a calibration made while a
 * neighbour thrashed the caches is off by tens of percent, not by 2x), and the loop
 * proportional: the four requests' ratios measured/asked agree within 2x of each other in one
 * run (the core's speed may drift between calibration and measurement: 15 % failed here once
 * with nothing else running). The precision itself (within a few % on a quiet machine) is in
 * the diagnostics. */
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
    double ratio[4], lo = 1e30, hi = 0;
    for (int i = 0; i < 4; i++) {
        double best = 1e30;
        for (int t = 0; t < 15; t++) {
            double t0 = cpu_now();
            nbh_work_us(req_us[i]);
            double el = (cpu_now() - t0) * 1e6;
            if (el < best)
                best = el;
        }
        ratio[i] = best / req_us[i];
        lo = ratio[i] < lo ? ratio[i] : lo;
        hi = ratio[i] > hi ? ratio[i] : hi;
        tap_ok(ratio[i] > 0.5 && ratio[i] < 2,
               "work of %.0f us takes %.1f us of CPU time (within 2x; %+.1f%%)", req_us[i], best,
               100 * (ratio[i] - 1));
    }
    /* Proportional, not precise: on a shared VM the core's speed changes between the calibration
     * and the measurement (a 14 % drift was seen with nothing else running), so the assertion is
     * what holds whatever the load; the precision is the diagnostic. */
    tap_ok(hi / lo < 2, "proportional: measured/asked is %.3f..%.3f over 100 us..20 ms (spread "
                        "%.1f%%, bound 2x)",
           lo, hi, 100 * (hi / lo - 1));
    /* Zero and negative requests run no loop: measured as the others are (fastest of several, in
     * CPU time, so a preemption on a loaded machine does not count), and compared with the
     * 100 us request measured above in the same run rather than with a wall-clock bound. */
    double zero = 1e30;
    for (int t = 0; t < 15; t++) {
        double t1 = cpu_now();
        nbh_work_us(0);
        nbh_work_us(-5);
        double el = (cpu_now() - t1) * 1e6;
        if (el < zero)
            zero = el;
    }
    tap_ok(zero < 0.1 * ratio[0] * req_us[0],
           "zero or negative work returns at once (%.2f us of CPU time; 100 us took %.1f us)", zero,
           ratio[0] * req_us[0]);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
