/* bench.h — what every nbrma benchmark binary shares: its main(), series, per-sample recording
 * with the maximum across ranks (paper 001 §3: "time one operation at all processes, keep the
 * maximum across ranks, report the median"), windows of each flavor, and result validation. */
#ifndef NBH_BENCH_H
#define NBH_BENCH_H

#include <mpi.h>

#include "gbench.h"
#include "mpix.h"
#include "opts.h"
#include "timing.h"

#define NBH_MAXQ 8

typedef struct nbh_ctx nbh_ctx_t;

/* One benchmark instance: what gb_register's function receives. */
typedef struct {
    const nbh_ctx_t *ctx;
    nbh_series_t series;
    int op;         /* experiment-specific variant */
    size_t size;    /* bytes; 0 where it has no meaning */
    unsigned flags; /* NBH_FLAG_* reorder flags its windows are created with (ref-nb) */
    int sched;      /* libnbrma's intra-epoch scheduler for its windows: info nbrma_sched =
                       on (1) / off (0); -1: no key (NBRMA_SCHED decides) */
    long sched_th;  /* with sched >= 0: nbrma_sched_th, bytes */
    const char *acc_ops; /* info accumulate_ops for its windows (MPI-3.1 §11.2.1), or NULL */
    char name[160];
} nbh_case_t;

typedef struct {
    const char *id;           /* experiment id of EXPERIMENTS.md, e.g. "D1" */
    const char *title;        /* one line: what the experiment is */
    const char *header;       /* lines printed before the run: who does what, what is timed */
    int min_ranks, max_ranks; /* max 0: any */
    unsigned uses;            /* NBH_USE_* common options it honours */
    const char *default_sizes;
    const char *quick_sizes;
    long default_iters;
    const nbh_extra_opt_t *extra;
    void (*register_cases)(nbh_ctx_t *ctx, nbh_series_t s);
    /* Series the experiment has (bit 1 << nbh_series_t; 0: all three) and, for the others, why
     * not (printed when they are asked for, e.g. "D1 measures blocking calls only"). */
    unsigned series;
    const char *series_why;
} nbh_experiment_t;

struct nbh_ctx {
    const nbh_experiment_t *ex;
    nbh_opts_t opts;
    MPI_Comm comm;
    int rank, nranks;
    int ranks_per_node, nnodes;
    char node_of_rank[256]; /* "0,0,1,1": each rank's node (real or virtual), numbered */
    int *node;              /* the same as numbers, one per rank */
    int cores;          /* CPUs the ranks of a node may use (the minimum across nodes) */
    int oversubscribed; /* some node runs more ranks than it has such CPUs */
    char mpi_library[160];
};

int nbh_main(int argc, char **argv, const nbh_experiment_t *ex);

/* Register a case; the name is formatted from fmt (must start with the experiment id). Its
 * flags start as --flags for ref-nb (none for the other series); the caller may change them. */
nbh_case_t *nbh_add_case(nbh_ctx_t *ctx, nbh_series_t s, int op, size_t size, gb_fn_t fn,
                         const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Samples of NQ named quantities (seconds). Each sample takes the max across ranks;
 * quantity 0 is the iteration time Google Benchmark sees. */
typedef struct {
    int nq;
    const char *names[NBH_MAXQ];
    double *v[NBH_MAXQ];
    long n, cap;
    MPI_Comm comm;
} nbh_rec_t;

int nbh_rec_init(nbh_rec_t *r, const nbh_case_t *c, gb_state_t *st, int nq,
                 const char *const *names);
/* Record one sample (t[0..nq-1], seconds, this rank's view); collective. */
void nbh_rec_sample(nbh_rec_t *r, gb_state_t *st, const double *t);
/* The same without telling Google Benchmark (samples outside its timed loop). */
void nbh_rec_add(nbh_rec_t *r, const double *t);
double nbh_rec_median(const nbh_rec_t *r, int q);
double nbh_rec_min(const nbh_rec_t *r, int q);
/* Counters "<name>_us" (median) per quantity and "<names[0]>_min_us". */
void nbh_rec_report(const nbh_rec_t *r, gb_state_t *st);
void nbh_rec_free(nbh_rec_t *r);

/* A window of one flavor, disp unit 1, created with the case's reorder flags as info keys
 * (MPIX_WIN_*_REORDER = "true"; docs/harness.md). Dynamic windows attach one region per rank and
 * exchange its address, so targets are addressed uniformly with nbh_win_disp(). */
typedef struct {
    MPI_Win win;
    unsigned char *base;
    MPI_Aint bytes;
    nbh_win_flavor_t flavor;
    MPI_Aint *remote; /* dynamic: each rank's base address */
} nbh_win_t;

void nbh_win_open(nbh_win_t *w, const nbh_case_t *c, MPI_Aint bytes);
MPI_Aint nbh_win_disp(const nbh_win_t *w, int target, MPI_Aint off);
void nbh_win_close(nbh_win_t *w);

/* Local access to one's own window memory, inside an exclusive self-lock epoch so it is
 * ordered with remote accesses in either memory model. */
void nbh_win_self_lock(const nbh_win_t *w, const nbh_case_t *c);
void nbh_win_self_unlock(const nbh_win_t *w, const nbh_case_t *c);

/* A fresh seed per case run (identical on every rank). */
unsigned nbh_next_seed(void);

/* A patterned transfer between origin rank 0 and target rank 1 (D1-D3): the source side (the
 * origin's buffer for a put, the target's window for a get) holds a seeded pattern; once the
 * origin has closed its epoch, nbh_xfer_verify checks the destination. */
enum { NBH_ORIGIN = 0, NBH_TARGET = 1 };
typedef struct {
    nbh_win_t w;
    unsigned char *buf; /* origin buffer, `bytes` long */
    size_t bytes;
    unsigned seed;
    int put;       /* 1: data flows origin -> target; 0: a get */
    MPI_Aint disp; /* target displacement of byte 0 */
} nbh_xfer_t;

/* Collective: window and buffer of `bytes`, pattern on the source side, barrier. */
void nbh_xfer_open(nbh_xfer_t *x, const nbh_case_t *c, size_t bytes, int put);
/* One put or get of `len` bytes at byte `off` of both the buffer and the target's window. */
static inline int nbh_xfer_issue(const nbh_xfer_t *x, size_t off, int len)
{
    return x->put ? MPI_Put(x->buf + off, len, MPI_BYTE, NBH_TARGET, x->disp + (MPI_Aint)off, len,
                            MPI_BYTE, x->w.win)
                  : MPI_Get(x->buf + off, len, MPI_BYTE, NBH_TARGET, x->disp + (MPI_Aint)off, len,
                            MPI_BYTE, x->w.win);
}
/* Collective, after the origin's epoch is closed: did the pattern arrive? (see nbh_verify) */
int nbh_xfer_verify(nbh_xfer_t *x, gb_state_t *st, const nbh_case_t *c);
void nbh_xfer_close(nbh_xfer_t *x);

/* Fill/check a deterministic byte pattern (seeded so every run differs). */
void nbh_pattern_fill(void *buf, size_t n, unsigned seed);
/* Returns -1 if buf holds the pattern, else the first differing offset. */
long nbh_pattern_check(const void *buf, size_t n, unsigned seed);

/* Collective verdict on the data a case moved. A failing rank explains on stderr (rank, case,
 * what differs); every rank then marks the case failed and the binary exits non-zero.
 * Returns 1 when all ranks passed. */
int nbh_verify(gb_state_t *st, const nbh_case_t *c, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Abort loudly, naming the running case, when an MPI call fails. */
#define NBH_MPI(c, call)                                                                           \
    do {                                                                                           \
        int nbh_rc_ = (call);                                                                      \
        if (nbh_rc_ != MPI_SUCCESS)                                                                \
            nbh_mpi_fail((c), #call, nbh_rc_, __FILE__, __LINE__);                                 \
    } while (0)
_Noreturn void nbh_mpi_fail(const nbh_case_t *c, const char *call, int rc, const char *file,
                            int line);

/* ---- delay patterns (EXPERIMENTS.md §A, §B) ----------------------------------------------
 * A sample function plays every rank's part of one sample: it calls nbh_align (possibly after
 * set-up that must precede time 0, e.g. a target's post), then does its rank's role with the
 * given delay, and stores its rank's measured quantities (seconds from time 0, or durations;
 * 0 for what it does not measure: the maximum across ranks is kept). nbh_pattern_run does the
 * warm-up, the samples without delay (when victim >= 0), the timed samples with the delay, and
 * reports per quantity <name>_us (median of the per-sample maximum), start_skew_us (how late
 * the latest rank reached time 0) and, when victim >= 0,
 *   <victim>_nodelay_us  = median of the victim quantity in samples with delay 0, same run;
 *   propagated_delay_us  = <victim>_us - <victim>_nodelay_us: how much of the injected delay
 *                          reached the victim (can be slightly negative: noise). */
typedef void (*nbh_sample_fn)(const nbh_case_t *c, void *arg, nbh_align_t *al, double delay_us,
                              double *t);
typedef struct {
    int nq;
    const char *const *names;
    int victim; /* index of the quantity delay propagation is judged on; -1: none */
    nbh_sample_fn sample;
    /* Optional, collective: called once before the timed samples (e.g. clear the targets'
     * windows so the validation afterwards sees only what the timed samples wrote). */
    void (*reset)(const nbh_case_t *c, void *arg);
} nbh_pattern_t;

void nbh_pattern_run(gb_state_t *st, const nbh_case_t *c, const nbh_pattern_t *p, void *arg);

/* Begin the timed part of a case (records its name for crash reports). */
void nbh_case_begin(const nbh_case_t *c);

#endif
