/* relax.h — how a poll loop gives its core away: libnbrma's waits under NBRMA_RELAX=auto
 * (ref/src/thread.c, nbr_relax, includes this file) and the benchmarks' and tests' own loops
 * (docs/ref.md, "Waiting on a busy node"). One copy, dependency-free, for both.
 *
 * A poll loop that calls sched_yield at every turn hands the core to a peer rank in microseconds
 * when only peers share it (more ranks than cores). But on Linux >= 6.6 (EEVDF) a yield costs the
 * yielder a whole slice of virtual time whenever another task is runnable, so beside other jobs'
 * CPU-bound tasks (a shared login node, a loaded CI runner, `make check LOAD=1`) such a loop gets
 * about 1% of a core. nbh_relax() yields while yields come back at once; a yield that came back
 * late (250 us or more: someone else ran a slice) starts a spell of polling without yielding,
 * 50 ms, doubled after every late yield up to 1 s (each late yield costs this thread a slice of
 * its share: test_relax measured 0.2 of a hog's CPU time with a 50 ms spell and two late yields
 * per spell), back to yielding as soon as a yield comes back at once. Header-only: the tests and
 * the library that use it link nothing of the harness. */
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
    enum { SLOW_NS = 250000, FIRST_SPELL_NS = 50000000, MAX_SPELL_NS = 1000000000 };
    static __thread uint64_t spin_until, spell;
    uint64_t t0 = nbh_relax_now_ns();
    if (t0 < spin_until)
        return;
    sched_yield();
    if (nbh_relax_now_ns() - t0 < SLOW_NS) {
        spell = 0;
        return;
    }
    spell = spell ? (2 * spell < MAX_SPELL_NS ? 2 * spell : MAX_SPELL_NS) : FIRST_SPELL_NS;
    spin_until = t0 + spell;
}

#endif
