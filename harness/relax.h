/* relax.h — how the benchmarks' and tests' own poll loops give the core away: the policy of
 * libnbrma's waits (ref/src/thread.c, nbr_relax; docs/ref.md, "Waiting on a busy node").
 *
 * A poll loop that calls sched_yield at every turn hands the core to a peer rank in microseconds
 * when only peers share it (more ranks than cores). But on Linux >= 6.6 (EEVDF) a yield costs the
 * yielder a whole slice of virtual time whenever another task is runnable, so beside other jobs'
 * CPU-bound tasks (a shared login node, a loaded CI runner, `make check LOAD=1`) such a loop gets
 * about 1% of a core. nbh_relax() yields while yields come back at once and, after two that came
 * back late, polls without yielding for 50 ms before it tries again. Header-only: the tests that
 * use it link nothing of the harness. */
#ifndef NBH_RELAX_H
#define NBH_RELAX_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t nbh_relax_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void nbh_relax(void)
{
    enum { SLOW_NS = 250000, SLOW_YIELDS = 2, SPELL_NS = 50000000 };
    static __thread uint64_t spin_until;
    static __thread int slow;
    uint64_t t0 = nbh_relax_now_ns();
    if (t0 < spin_until)
        return;
    sched_yield();
    if (nbh_relax_now_ns() - t0 < SLOW_NS) {
        slow = 0;
    } else if (++slow >= SLOW_YIELDS) {
        slow = 0;
        spin_until = t0 + SPELL_NS;
    }
}

#endif
