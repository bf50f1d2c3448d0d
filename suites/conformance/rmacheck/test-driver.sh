#!/bin/sh
# test-driver.sh — rmacheck's own errors and its run settings: bad options and settings exit 2
# with a message naming what was wrong; a rank that cannot create its log (a host that does not
# reach the log directory, simulated by giving one rank another RMACHECK_DIR) stops with a
# message naming --dir, and the run is never called clean; --ranks-per-node / --dir reach the
# runtime (the JSON says which store kept the clocks of atomics, and where the logs were).
# Environment (set by check.sh): BUILD, TEST_RUNNER, MPI.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" && . harness/taplib.sh
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}"
rc=$BUILD/bin/rmacheck
prog=$BUILD/conformance/atomics_cas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out" | tail -8; }
echo "1..15"

# bad OPTIONS -> exit 2 and a message containing TEXT
bad() {
    text=$1 what=$2
    shift 2
    "$rc" "$@" >"$tmp/out" 2>&1 </dev/null
    st=$?
    if [ $st -eq 2 ] && grep -q -- "$text" "$tmp/out"; then ok "$what: exit 2, names it"
    else nok "$what: expected exit 2 and '$text', got $st"; fi
}
bad "unknown option '--bogus'" "unknown option" --bogus -- true
bad "--json needs a file name" "--json without a file" --json
bad "no library" "--preload of a missing library" --preload "$tmp/nothing.so" -- true
bad "is not a directory" "--dir that does not exist" --dir "$tmp/nowhere" -- true
bad "not a positive integer" "--ranks-per-node 0" --ranks-per-node 0 -- true
bad "not a positive integer" "--ranks-per-node abc" --ranks-per-node=abc -- true
RMACHECK_RANKS_PER_NODE=x bad "RMACHECK_RANKS_PER_NODE='x'" "RMACHECK_RANKS_PER_NODE=x" -- true
bad "no program given" "no program" --json "$tmp/j.json" --
bad "no rmacheck log" "a program that is not an MPI program" -- true

# One rank cannot create its log: it says where and what to do; the run is not called clean.
# shellcheck disable=SC2086
timeout -k 5 "$(t_limit 60)" "$rc" -- $TEST_RUNNER 1 "$prog" --narrow : -n 1 env RMACHECK_DIR="$tmp/unreachable" \
    "$prog" --narrow >"$tmp/out" 2>&1 </dev/null
st=$?
if [ $st -eq 2 ] && grep -q "cannot create its log .*unreachable.*rmacheck --dir DIR" "$tmp/out"; then
    ok "a rank without its log directory names it and --dir; exit 2"
else nok "a rank without its log directory: exit $st"; fi
if grep -q "^rmacheck: rank 1 left no log" "$tmp/out" && ! grep -q "no hazard" "$tmp/out"; then
    ok "the driver reports the rank that left no log, never 'no hazard'"
else nok "the driver did not report the rank without a log"; fi

# Settings that reach the runtime: one node (file store) by default, the window store on
# virtual nodes, logs under --dir.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$@"; }
# shellcheck disable=SC2086
"$rc" --json "$tmp/a.json" -- $TEST_RUNNER 2 "$prog" --narrow >"$tmp/out" 2>&1 </dev/null
st=$?
if [ $st -eq 0 ] && [ "$(json "$tmp/a.json" atomics_store)" = "['shm']" ] &&
    [ "$(json "$tmp/a.json" nodes)" = 1 ]; then ok "default: one node, clocks of atomics in shared memory"
else nok "default run: exit $st, $(cat "$tmp/a.json" 2>/dev/null | tr -d '\n' | cut -c1-200)"; fi
mkdir "$tmp/logs"
# shellcheck disable=SC2086
"$rc" --keep --dir "$tmp/logs" --ranks-per-node 1 --json "$tmp/b.json" -- $TEST_RUNNER 2 "$prog" --narrow \
    >"$tmp/out" 2>&1 </dev/null
st=$?
if [ $st -eq 0 ] && [ "$(json "$tmp/b.json" atomics_store)" = "['window']" ] &&
    [ "$(json "$tmp/b.json" nodes)" = 2 ]; then ok "--ranks-per-node 1: two nodes, clocks of atomics in the window"
else nok "--ranks-per-node 1: exit $st, $(cat "$tmp/b.json" 2>/dev/null | tr -d '\n' | cut -c1-200)"; fi
if ls "$tmp"/logs/rmacheck.*/rank.0 "$tmp"/logs/rmacheck.*/rank.1 >/dev/null 2>&1; then ok "--dir: the logs are under it"
else nok "--dir: no logs under $tmp/logs"; fi
RMACHECK_RANKS_PER_NODE=2 "$rc" --json "$tmp/c.json" -- $TEST_RUNNER 2 "$prog" --narrow >"$tmp/out" 2>&1 </dev/null
st=$?
if [ $st -eq 0 ] && [ "$(json "$tmp/c.json" nodes)" = 1 ]; then ok "RMACHECK_RANKS_PER_NODE=2 on 2 ranks: one node"
else nok "RMACHECK_RANKS_PER_NODE=2: exit $st"; fi
