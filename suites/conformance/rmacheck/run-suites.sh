#!/bin/sh
# run-suites.sh — rmacheck's precision on real programs: run a representative subset of
# suites/conformance and suites/patterns (unmodified binaries, every flavor and sync mode) under
# rmacheck and expect "no hazard" from each, and the hazards from the programs that are erroneous
# on purpose (errors, nb_errors). One TAP point per program.
# Environment (set by check.sh): BUILD, TEST_RUNNER, MPI.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}"
# PROGRAM RANKS EXPECT [ARGS]
list="conformance/win_create 3 clean
conformance/win_allocate 3 clean
conformance/win_shared 3 clean
conformance/win_dynamic 3 clean
conformance/sync_fence 4 clean
conformance/sync_pscw 4 clean
conformance/sync_passive 4 clean
conformance/rma_requests 3 clean
conformance/acc_ops 4 clean
conformance/contention_lock 4 clean
conformance/ordering 3 clean
conformance/nb_api 3 clean
conformance/errors 2 hazard
bin/d1_latency 2 clean --quick --sizes 8
bin/d5_fence 2 clean --quick
bin/d7_passive 2 clean --quick"
n=$(echo "$list" | wc -l)
echo "1..$n"
i=0
out=$BUILD/rmacheck-suites
mkdir -p "$out"
echo "$list" | while read -r prog np expect args; do
    i=$((i + 1))
    name=$(basename "$prog")
    if [ ! -x "$BUILD/$prog" ]; then
        echo "ok $i - $name # SKIP not built"
        continue
    fi
    # shellcheck disable=SC2086
    timeout -k 5 240 "$BUILD/bin/rmacheck" -- $TEST_RUNNER "$np" "$BUILD/$prog" $args \
        >"$out/$name.out" 2>&1 </dev/null
    rc=$?
    if { [ "$expect" = clean ] && [ $rc -eq 0 ]; } || { [ "$expect" = hazard ] && [ $rc -eq 1 ]; }; then
        echo "ok $i - rmacheck $name: $expect"
    else
        echo "not ok $i - rmacheck $name: expected $expect, rmacheck exited $rc"
        grep -A2 '^rmacheck' "$out/$name.out" | head -20 | sed 's/^/# /'
    fi
done
