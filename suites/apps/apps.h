/* apps.h — what the application kernels G1–G5 (EXPERIMENTS.md §G, docs/apps.md) share beyond the
 * benchmark harness: a seeded per-rank random stream, the --seed and --corrupt options, and the
 * "damage one value on purpose" step that proves each kernel's verification can fail. */
#ifndef NBA_APPS_H
#define NBA_APPS_H

#include <stdint.h>

#include "bench.h"

/* --seed (0: a fresh seed per case from nbh_next_seed, identical on every rank) and --corrupt
 * (1: damage one value after the run, before verification; the run must then fail). */
extern long nba_seed, nba_corrupt;
#define NBA_COMMON_OPTS                                                                            \
    {"seed", "random seed of targets, offsets and keys (default 0: a new one per case)",           \
     &nba_seed, 0, 0x7fffffffL},                                                                   \
    {                                                                                              \
        "corrupt", "1: damage one value after the run; verification must then fail (default 0)",   \
            &nba_corrupt, 0, 1                                                                     \
    }

/* The case's seed: --seed, or the harness's next one. Call once per case on every rank. */
static inline uint64_t nba_case_seed(void)
{
    unsigned s = nbh_next_seed();
    return nba_seed ? (uint64_t)nba_seed : (uint64_t)s;
}

/* splitmix64: a small, well-mixed stream; each rank seeds its own from the case seed. */
typedef struct {
    uint64_t s;
} nba_rng_t;

static inline void nba_rng_init(nba_rng_t *r, uint64_t seed, int rank)
{
    r->s = seed * 0x9e3779b97f4a7c15ull + (uint64_t)rank * 0xbf58476d1ce4e5b9ull + 1;
}

static inline uint64_t nba_rng_next(nba_rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the modulo bias is below 2^-40 for the n used here). */
static inline uint64_t nba_rng_below(nba_rng_t *r, uint64_t n)
{
    return nba_rng_next(r) % n;
}

/* Say on rank 0's stderr that --corrupt is damaging a value, so a log shows why the run fails. */
void nba_corrupt_note(const nbh_case_t *c, const char *what);

#endif
