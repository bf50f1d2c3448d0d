#!/bin/sh
# test-scaling.sh — the structure behind rmacheck's scaling (docs/rmacheck.md "Scaling"), not its
# time: scaling.c (a put between two fences, then every int of a 1024-int window loaded and
# zeroed, loads and stores alternating) under rmacheck --stats at 20 and 200 iterations. Correct
# code: no hazard. Its loads and stores merge per epoch: one load/store interval per rank,
# iteration and instruction touching the window (plus a few around the loop), where the old
# runtime wrote a line per 4-byte access (2048 per rank and iteration); the log's lines and
# events grow tenfold with the iterations, not more. Environment (set by check.sh): BUILD, TEST_RUNNER, MPI.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
echo "1..5"
if ! "$BUILD/bin/rmacheck-cc" -g -O2 -o "$tmp/scaling" suites/conformance/rmacheck/scaling.c \
    >"$tmp/build" 2>&1; then
    echo "not ok 1 - rmacheck-cc could not build scaling.c"
    cat "$tmp/build"
    exit 1
fi
# ITERS -> "lines events intervals" of the run, or nothing when rmacheck did not say no hazard
stats() {
    # shellcheck disable=SC2086
    "$BUILD/bin/rmacheck" --stats -- $TEST_RUNNER 2 "$tmp/scaling" --iters "$1" \
        >"$tmp/out.$1" 2>"$tmp/err.$1" </dev/null
    st=$?
    if [ $st -ne 0 ] || ! grep -q "^rmacheck: no hazard$" "$tmp/out.$1"; then
        echo "# iters $1: rmacheck exited $st" >&2
        sed 's/^/# /' "$tmp/out.$1" "$tmp/err.$1" | tail -8 >&2
        return
    fi
    sed -n 's/^rmacheck: stats: .* \([0-9]*\) lines, \([0-9]*\) events, \([0-9]*\) load\/store intervals.*/\1 \2 \3/p' "$tmp/err.$1"
}
a=$(stats 20)
b=$(stats 200)
if [ -n "$a" ] && [ -n "$b" ]; then ok "the loop is clean at 20 and 200 iterations"
else nok "the loop is clean at 20 and 200 iterations"; echo "5 skipped: no stats"; exit 0; fi
set -- $a
l1=$1 e1=$2 i1=$3
set -- $b
l2=$1 e2=$2 i2=$3
echo "# 20 iterations: $l1 lines, $e1 events, $i1 intervals; 200: $l2 lines, $e2 events, $i2 intervals"
# per rank and iteration one interval per instruction that touches the window (the loads, the
# stores; GCC -O2 peels the loop's last store: 3), at most 16 more around the loop
if [ "$i2" -ge 800 ] && [ "$i2" -le $((2 * 200 * 4 + 16)) ]; then
    ok "200 iterations: $i2 load/store intervals (a few per rank and epoch, not 2048)"
else nok "200 iterations: $i2 load/store intervals, expected 800..1616"; fi
if [ $((l2 * 10)) -le $((l1 * 100 + 1000)) ]; then ok "log lines grow with the iterations ($l1 -> $l2)"
else nok "log lines grow faster than the iterations ($l1 -> $l2)"; fi
if [ $((e2 * 10)) -le $((e1 * 100 + 1000)) ]; then ok "events grow with the iterations ($e1 -> $e2)"
else nok "events grow faster than the iterations ($e1 -> $e2)"; fi
if [ "$l2" -le $((200 * 30)) ]; then ok "200 iterations: $l2 lines, at most 30 per iteration"
else nok "200 iterations: $l2 lines, more than 30 per iteration"; fi
