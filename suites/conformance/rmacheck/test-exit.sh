#!/bin/sh
# test-exit.sh — rmacheck's exit status, which a CI job gates on (docs/rmacheck.md): 0 no hazard,
# 1 hazards, 3 no hazard but the program failed (non-zero exit, MPI_Abort, a crash), 4 rmacheck
# interrupted (SIGTERM/SIGINT: it stops the program, analyzes what was logged and says the run is
# partial; hazards found in it still give 1). Runs exitprog.c (built with rmacheck-cc) on 2 ranks.
# Environment (set by check.sh): BUILD, TEST_RUNNER, MPI.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" && . harness/taplib.sh
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}"
rc=$BUILD/bin/rmacheck
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out" | tail -12; }
echo "1..11"
if ! "$BUILD/bin/rmacheck-cc" -g -O1 -o "$tmp/exitprog" suites/conformance/rmacheck/exitprog.c \
    >"$tmp/out" 2>&1; then
    echo "not ok 1 - rmacheck-cc could not build exitprog.c"
    cat "$tmp/out"
    exit 1
fi

# MODE EXPECTED-STATUS TEXT WHAT: the program in MODE, rmacheck's status and a line it must print
run() {
    mode=$1 want=$2 text=$3 what=$4
    # shellcheck disable=SC2086
    timeout -k 5 "$(t_limit 120)" "$rc" -- $TEST_RUNNER 2 "$tmp/exitprog" "$mode" >"$tmp/out" 2>&1 </dev/null
    st=$?
    if [ $st -eq "$want" ] && grep -q -- "$text" "$tmp/out"; then ok "$what: exit $want"
    else nok "$what: expected exit $want and '$text', got $st"; fi
}
run ok 0 "^rmacheck: no hazard$" "a clean run"
run exit3 3 "program exited with status 3" "a clean program that exits with 3"
run abort 3 "but the program failed" "MPI_Abort"
run segv 3 "but the program failed" "a rank killed by SIGSEGV"
run race 1 "^rmacheck: hazard rma-vs-local" "a race, program exits 0"
run race-exit3 1 "^rmacheck: hazard rma-vs-local" "a race, program exits 3"

# How long to wait (polls of 0.2 s) for the program to be ready, and for rmacheck to end after
# the signal: 120 s and 80 s, scaled as the watchdog is.
ready_polls=$(($(t_limit 120) * 5))
end_s=$(t_limit 80)
# SIG MODE EXPECTED-STATUS TEXT WHAT: rmacheck gets SIG once the program is in its endless sleep
interrupt() {
    sig=$1 mode=$2 want=$3 text=$4 what=$5
    rm -f "$tmp/ready"
    # shellcheck disable=SC2086
    EXITPROG_READY=$tmp/ready "$rc" -- $TEST_RUNNER 2 "$tmp/exitprog" "$mode" >"$tmp/out" 2>&1 \
        </dev/null &
    pid=$!
    i=0
    while [ ! -f "$tmp/ready" ] && [ $i -lt $ready_polls ] && kill -0 $pid 2>/dev/null; do
        sleep 0.2
        i=$((i + 1))
    done
    sleep 0.5
    kill -"$sig" $pid 2>/dev/null
    # the driver gives the launcher 20 s after the signal before it kills it
    i=0
    while kill -0 $pid 2>/dev/null && [ $i -lt $((end_s * 5)) ]; do
        sleep 0.2
        i=$((i + 1))
    done
    if kill -0 $pid 2>/dev/null; then
        kill -KILL $pid 2>/dev/null
        wait $pid
        nok "$what: rmacheck still running $end_s s after $sig"
        return
    fi
    wait $pid
    st=$?
    if [ $st -eq "$want" ] && grep -q -- "$text" "$tmp/out" && grep -q "^rmacheck: partial:" "$tmp/out"
    then ok "$what: exit $want, reported as partial"
    else nok "$what: expected exit $want, '$text' and 'partial', got $st"; fi
}
interrupt TERM hang 4 "no hazard in what the program recorded before rmacheck was interrupted" \
    "SIGTERM to rmacheck, no hazard logged"
interrupt TERM race-hang 1 "^rmacheck: hazard rma-vs-local" "SIGTERM to rmacheck after a race"
interrupt INT hang 4 "interrupted (SIGINT)" "SIGINT to rmacheck"

# JSON says the same
# shellcheck disable=SC2086
"$rc" --json "$tmp/j.json" -- $TEST_RUNNER 2 "$tmp/exitprog" exit3 >"$tmp/out" 2>&1 </dev/null
st=$?
j=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['exit'], d['program_status'], d['partial'])" "$tmp/j.json" 2>/dev/null)
if [ $st -eq 3 ] && [ "$j" = "3 3 False" ]; then ok "--json: exit, program_status and partial"
else nok "--json: exit $st, JSON '$j'"; fi

# every process under pid (its launcher, the launcher's proxies, the ranks), by id
tree() {
    for c in $(pgrep -P "$1"); do
        echo "$c"
        tree "$c"
    done
}

# the launcher killed with SIGKILL (not rmacheck): the logs stay, rmacheck reports the race
rm -f "$tmp/ready"
# shellcheck disable=SC2086
EXITPROG_READY=$tmp/ready "$rc" -- $TEST_RUNNER 2 "$tmp/exitprog" race-hang >"$tmp/out" 2>&1 \
    </dev/null &
pid=$!
i=0
while [ ! -f "$tmp/ready" ] && [ $i -lt $ready_polls ] && kill -0 $pid 2>/dev/null; do
    sleep 0.2
    i=$((i + 1))
done
sleep 0.5
procs=$(tree $pid)
for c in $procs; do kill -KILL "$c" 2>/dev/null; done
wait $pid
st=$?
if [ $st -eq 1 ] && grep -q "^rmacheck: hazard rma-vs-local" "$tmp/out" &&
    grep -q "killed by signal 9\|exited with status" "$tmp/out"; then
    ok "launcher and ranks killed with SIGKILL: the race still reported, exit 1"
else nok "launcher and ranks killed with SIGKILL: exit $st"; fi
