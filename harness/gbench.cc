// gbench.cc — the C++ half of the Google Benchmark shim (see gbench.h). The only C++ in nbrma.
#include "gbench.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

struct gb_state {
  benchmark::State *s;
};

namespace {

// A reporter for ranks other than 0: it prints nothing, and its stream swallows the benchmark
// list Google Benchmark writes for --benchmark_list_tests.
class NullBuf : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  SilentReporter() : sink_(&buf_) {
    SetOutputStream(&sink_);
    SetErrorStream(&sink_);
  }
  bool ReportContext(const Context &) override { return true; }
  void ReportRuns(const std::vector<Run> &) override {}

 private:
  NullBuf buf_;
  std::ostream sink_;
};

bool starts_with(const char *s, const char *prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

extern "C" int gb_initialize(int *argc, char **argv, int is_root, char *err, size_t errlen) {
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    const char *a = argv[i];
    if (starts_with(a, "--benchmark_enable_random_interleaving") &&
        std::strstr(a, "=false") == nullptr) {
      std::snprintf(err, errlen,
                    "%s is not supported: ranks would run benchmarks in different orders and "
                    "deadlock",
                    a);
      return -1;
    }
    // Only rank 0 writes the JSON file; other ranks would truncate it.
    if (!is_root && (starts_with(a, "--benchmark_out=") || starts_with(a, "--benchmark_out_format=")))
      continue;
    argv[out++] = argv[i];
  }
  argv[out] = nullptr;
  *argc = out;
  benchmark::Initialize(argc, argv);
  return 0;
}

extern "C" void gb_register(const char *name, gb_fn_t fn, void *arg, long iterations,
                            int repetitions) {
  auto *b = benchmark::RegisterBenchmark(name, [fn, arg](benchmark::State &s) {
    gb_state st{&s};
    fn(&st, arg);
  });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (iterations > 0) b->Iterations(iterations);
  if (repetitions > 1) b->Repetitions(repetitions);
}

extern "C" void gb_add_context(const char *key, const char *value) {
  benchmark::AddCustomContext(key, value);
}

extern "C" size_t gb_run(int is_root) {
  size_t n;
  if (is_root) {
    n = benchmark::RunSpecifiedBenchmarks();
  } else {
    SilentReporter display;
    n = benchmark::RunSpecifiedBenchmarks(&display, nullptr);
  }
  benchmark::Shutdown();
  return n;
}

extern "C" int gb_keep_running(gb_state_t *st) { return st->s->KeepRunning(); }
extern "C" long gb_max_iterations(const gb_state_t *st) {
  return static_cast<long>(st->s->max_iterations);
}
extern "C" void gb_set_iteration_time(gb_state_t *st, double seconds) {
  st->s->SetIterationTime(seconds);
}
extern "C" void gb_set_counter(gb_state_t *st, const char *name, double value) {
  st->s->counters[name] = benchmark::Counter(value);
}
extern "C" void gb_set_label(gb_state_t *st, const char *label) { st->s->SetLabel(label); }
extern "C" void gb_skip_with_error(gb_state_t *st, const char *msg) { st->s->SkipWithError(msg); }
extern "C" int gb_error_occurred(const gb_state_t *st) { return st->s->error_occurred(); }

extern "C" void gb_print_flags(void *file) {
  std::fputs(
      "Google Benchmark flags (passed through):\n"
      "  --benchmark_filter=REGEX       run only benchmarks whose name matches\n"
      "  --benchmark_list_tests         list the benchmark names and exit\n"
      "  --benchmark_min_time=SECONDS   minimum time per benchmark when --iters 0\n"
      "  --benchmark_repetitions=N      same as --reps N\n"
      "  --benchmark_report_aggregates_only=true|false\n"
      "  --benchmark_format=console|json|csv   format on stdout (rank 0)\n"
      "  --benchmark_out=FILE, --benchmark_out_format=json|console|csv  (prefer --out)\n"
      "  --benchmark_counters_tabular=true|false\n"
      "  --benchmark_context=KEY=VALUE  add to the JSON context\n"
      "  (--benchmark_enable_random_interleaving is refused: ranks would diverge)\n",
      static_cast<FILE *>(file));
}
