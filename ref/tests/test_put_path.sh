#!/bin/sh
# test_put_path.sh — the put fast path stays short: callgrind counts the instructions of one
# 8-byte MPI_Put on an allocated ref window (deterministic, unlike time). Bound: 100 (issue 9;
# foMPI reports 173; 92 with overflow-proof bounds). Skipped in sanitizer builds, whose
# instrumentation multiplies it.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
case $BUILD in
*-san) echo "1..0 # SKIP sanitizer build: instrumentation changes the instruction count"; exit 0 ;;
esac
command -v valgrind >/dev/null || { echo "1..0 # SKIP valgrind not installed (ci/install-deps.sh installs it)"; exit 0; }
out=$(MPICC="${MPICC:-mpicc.$MPI}" sh ref/tools/callgrind-put.sh "$BUILD" 2>&1)
t_ok $? "callgrind-put.sh runs: $out"
n=$(echo "$out" | sed -n 's/^put fast path: \([0-9]*\) instructions.*/\1/p')
t_ok $([ -n "$n" ] && [ "$n" -le 100 ]; echo $?) "MPI_Put fast path: ${n:-?} instructions (bound 100)"
t_done
