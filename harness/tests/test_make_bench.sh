#!/bin/sh
# test_make_bench.sh — `make bench QUICK=1` where users run it (issue 23): a benchmark that hangs
# without printing a word is killed at its time limit, named, and the run goes on; the summary
# (with the conditions of the run) and the figures of the rest are written; `make summary`
# rebuilds both from the results directory alone; BENCH= launches only the programs that can
# match.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/benchlist" <<LIST
$top/$BUILD/tests/crashy 2 timeout=8 ids=X1 -- --crash 0 --wrong 0 --hang 1
$top/$BUILD/bin/d1_latency 2 -- --sizes 8,64
LIST
# make from inside make check (t_make: the same configuration, not the jobserver)
# (the step limits scale as make check's do: TIMEOUT_SCALE=1 and the load measured here)
m() { NBRMA_TIMEOUT_SCALE= TIMEOUT_SCALE=1 t_make -C "$top" MPI="$MPI" \
    BUILD="$BUILD" SAN="${SAN:-}" DEPS=0 TEST_RUNNER="$TEST_RUNNER" SERIES=vendor \
    BENCHLISTS="$tmp/benchlist" RESULTS="$tmp/r" "$@" >"$tmp/out" 2>&1; }

t0=$(date +%s)
m bench QUICK=1
t_ok $((! $?)) "make bench fails when a benchmark hung"
t_diag "make bench with the hang took $(($(date +%s) - t0)) s"
t_like "$tmp/out" 'X1_hang/vendor[/a-z0-9_:]*: HUNG' "the silent benchmark is killed at its time limit and named as it happens"
t_like "$tmp/r/summary.txt" '^  FAILED: X1_hang/vendor \[hang\] timed out after [0-9]+ s \(timeout=8 x [0-9.]+: TIMEOUT_SCALE=1, load [0-9.]+ on [0-9]+ cores\)' \
    "and in the summary, with its limit and how the load scaled it"
t_like "$tmp/r/summary.txt" '^  X1_ok_b +latency_us' "the benchmark after it in the same program has its result"
t_like "$tmp/r/summary.txt" '^  D1_put_latency/size:8 +latency_us' "the next program ran"
t_ok $([ -s "$tmp/r/plots/d1_latency.png" ] && [ -s "$tmp/r/plots/d1_latency.pdf" ]; echo $?) \
    "and its figure is drawn"
t_like "$tmp/r/summary.txt" '^  MPI: [a-z0-9_.+-]+; library: .+' "the summary names the MPI library"
t_like "$tmp/r/summary.txt" '^  last run: .*QUICK on .*load average [0-9.]+ at the start, [0-9.]+ at the end' \
    "the conditions: QUICK, the load average at the start and the end"
t_like "$tmp/r/summary.txt" '^D1 \([a-z0-9_.+-]+; 2 ranks; QUICK\)' "each experiment says its ranks and QUICK"
t_like "$tmp/r/failures.json" 'X1_hang/vendor' "the failure is kept in failures.json"

rm -rf "$tmp/r/summary.txt" "$tmp/r/plots"
m summary
t_ok $((! $?)) "make summary exits non-zero: the stored failure is still unexpected"
t_like "$tmp/r/summary.txt" '^  FAILED: X1_hang/vendor \[hang\]' "make summary rebuilds the summary from the results alone"
t_like "$tmp/r/summary.txt" '^  D1_put_latency/size:64 +latency_us' "with every result"
t_ok $([ -s "$tmp/r/plots/d1_latency.png" ]; echo $?) "and the figures"

rm -rf "$tmp/r"
m bench QUICK=1 BENCH='^D1_put'
t_is $? 0 "BENCH='^D1_put' runs"
t_like "$tmp/out" "can match benchmarks of d1_latency only: 1 of 2 runs launched" \
    "and launches only the program whose ids can match"
t_ok $([ ! -e "$tmp/r/crashy.np2.log" ]; echo $?) "the other program was not launched"
t_unlike "$tmp/r/summary.txt" 'D1_get_latency' "only matching benchmarks ran"
t_done
