/* gbench.h — a C API over Google Benchmark (the C++ side is gbench.cc).
 *
 * Benchmarks are registered from C and run with manual timing only: the caller measures each
 * iteration with MPI_Wtime, takes the maximum across ranks and hands that to
 * gb_set_iteration_time(), so every rank sees the same times and Google Benchmark takes the same
 * iteration decisions everywhere (no divergence, no deadlock). Rank 0 reports; the other ranks
 * run with a silent reporter and never open the output file. */
#ifndef NBH_GBENCH_H
#define NBH_GBENCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_state gb_state_t; /* opaque: a benchmark::State */
typedef void (*gb_fn_t)(gb_state_t *st, void *arg);

/* Parse and remove Google Benchmark's own --benchmark_* flags from argv. On non-root ranks the
 * output-file flags are dropped so only rank 0 writes the file. Returns 0, or -1 with a message
 * in err for a flag that cannot work under MPI (e.g. random interleaving). */
int gb_initialize(int *argc, char **argv, int is_root, char *err, size_t errlen);

/* Register one benchmark. iterations > 0 fixes the sample count; 0 lets Google Benchmark
 * decide from the (manual, rank-agreed) time. repetitions > 1 adds median/mean aggregates. */
void gb_register(const char *name, gb_fn_t fn, void *arg, long iterations, int repetitions);

void gb_add_context(const char *key, const char *value);

/* Run the registered benchmarks that match the filter; returns how many ran. */
size_t gb_run(int is_root);

int gb_keep_running(gb_state_t *st);
long gb_max_iterations(const gb_state_t *st);
void gb_set_iteration_time(gb_state_t *st, double seconds);
void gb_set_counter(gb_state_t *st, const char *name, double value);
void gb_set_label(gb_state_t *st, const char *label);
void gb_skip_with_error(gb_state_t *st, const char *msg);
int gb_error_occurred(const gb_state_t *st);

/* Print Google Benchmark's flags (for --help). */
void gb_print_flags(void *file /* FILE* */);

#ifdef __cplusplus
}
#endif

#endif
