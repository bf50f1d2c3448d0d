/* opts.h — the command-line options every nbrma benchmark shares.
 *
 * Parsing is a pure function (no MPI, no I/O) so tests can feed it argv vectors. Each experiment
 * declares which common options it uses; giving one it ignores is an error, not silence. */
#ifndef NBH_OPTS_H
#define NBH_OPTS_H

#include <stddef.h>
#include <stdio.h>

#define NBH_MAX_SIZES 64

/* Series of paper 000 §VIII: vendor RMA, reference blocking, reference nonblocking. */
typedef enum { NBH_VENDOR = 0, NBH_REF = 1, NBH_REF_NB = 2, NBH_NSERIES = 3 } nbh_series_t;

/* allocmem: MPI_Win_create over MPI_Alloc_mem memory (what IMB-RMA does; issue 24). */
typedef enum {
    NBH_WIN_ALLOCATE = 0,
    NBH_WIN_CREATE = 1,
    NBH_WIN_DYNAMIC = 2,
    NBH_WIN_ALLOCMEM = 3,
} nbh_win_flavor_t;

/* Reorder info flags of paper 000 §VI-B. */
enum {
    NBH_FLAG_A_A_A_R = 1u << 0,
    NBH_FLAG_A_A_E_R = 1u << 1,
    NBH_FLAG_E_A_E_R = 1u << 2,
    NBH_FLAG_E_A_A_R = 1u << 3,
};

/* Common options an experiment may use (nbh_experiment_t.uses). */
enum {
    NBH_USE_SIZES = 1u << 0,
    NBH_USE_DELAY = 1u << 1,
    NBH_USE_WINDOW = 1u << 2,
    NBH_USE_FLAGS = 1u << 3,
};

/* An experiment-specific integer option, e.g. D3's --batch. */
typedef struct {
    const char *name; /* without the leading dashes */
    const char *help;
    long *value; /* holds the default; parsing overwrites it */
    long min, max;
} nbh_extra_opt_t;

typedef struct {
    unsigned series; /* bit (1 << nbh_series_t) per selected series */
    unsigned flags;  /* NBH_FLAG_* */
    size_t sizes[NBH_MAX_SIZES];
    int nsizes; /* 0: the experiment's defaults */
    double delay_us;
    long iters; /* samples per benchmark; 0 = Google Benchmark decides */
    int reps;
    int warmup;
    nbh_win_flavor_t window;
    int quick;
    const char *out;
    int help;
    unsigned given; /* NBH_USE_* bits of options present on the command line */
} nbh_opts_t;

/* Defaults: every series, no flags, D = 1000 us, iters = default_iters, 1 rep, warm-up 10,
 * allocated window. */
void nbh_opts_defaults(nbh_opts_t *o, long default_iters);

/* Parse argv[1..argc-1] (Google Benchmark's flags already removed). Returns 0, or 2 with a
 * message naming the option in err. `uses` is the experiment's NBH_USE_* set; `extra` a
 * NULL-name-terminated table or NULL. */
int nbh_opts_parse(nbh_opts_t *o, int argc, char **argv, unsigned uses,
                   const nbh_extra_opt_t *extra, char *err, size_t errlen);

/* Parse a size list: "8", "64K", "4M", "1:4M" (powers of two), "1K:1M:x4" (factor), comma
 * separated. Returns the count, or -1 with a message. */
int nbh_parse_sizes(const char *spec, size_t *out, int max, char *err, size_t errlen);

void nbh_opts_usage(FILE *f, const char *prog, unsigned uses, const nbh_extra_opt_t *extra);

const char *nbh_series_name(nbh_series_t s);
const char *nbh_win_flavor_name(nbh_win_flavor_t w);

#endif
