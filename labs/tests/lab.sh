#!/bin/sh
# lab.sh LAB [PART] — make check for one teaching lab (labs/README.md): its `check` must report
# NOT SOLVED, with a reason, on the starter, and SOLVED on the instructor's solution, on this
# MPI. PART: both (default), starter or solution. TAP.
# Environment (set by check.sh): MPI, BUILD, TEST_RUNNER, PYTHON.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}" "${PYTHON:=python3}"
export MPI BUILD TEST_RUNNER
lab=$1 part=${2:-both}
[ -x "labs/$lab/check" ] || { echo "1..0 # SKIP no labs/$lab/check"; exit 0; }
set --
if [ "$lab" = 06-models ]; then
    # Lab 6 starts from the student's `make models`; here, a small fit of its own: D1 and D5
    # (2 and 4 ranks), libnbrma, quick.
    d=$BUILD/labs/06-models/models-run
    rm -rf "$d"
    mkdir -p "$d"
    printf 'd1_latency 2\nd5_fence 2,4\n' >"$d/benchlist"
    if ! "$PYTHON" harness/nbrma-bench --bin "$BUILD/bin" --out "$d" --mpi "$MPI" \
        --runner "$TEST_RUNNER" --filter '^D(1|5)_' --series ref --quick "$d/benchlist" \
        >"$d/bench.log" 2>&1 || ! "$PYTHON" harness/nbrma-models fit --results "$d" \
        >"$d/fit.log" 2>&1; then
        echo "1..1"
        echo "not ok 1 - $lab: could not fit the models it needs"
        sed 's/^/# /' "$d/bench.log" "$d/fit.log" | tail -30
        exit 0
    fi
    set -- --models "$d/models.json"
fi
# The starter's and the solution's checks run at the same time (they build into different
# directories; most of a check's time is spent launching and waiting, not computing).
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lab.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
run() { # run NAME [ARGS]: the check's output in $tmp/NAME.out, its exit status in $tmp/NAME.rc
    name=$1
    shift
    "labs/$lab/check" "$@" >"$tmp/$name.out" 2>&1
    echo $? >"$tmp/$name.rc"
}
[ "$part" = solution ] || run starter "$@" &
[ "$part" = starter ] || run solution "labs/solutions/$lab" "$@" &
wait
n=0
case $part in both) echo "1..2" ;; *) echo "1..1" ;; esac
report() { # report NAME EXPECTED_RC VERDICT_REGEX
    n=$((n + 1))
    rc=$(cat "$tmp/$1.rc")
    verdict=$(grep "^lab $lab: " "$tmp/$1.out" | tail -1)
    if [ "$rc" -eq "$2" ] && echo "$verdict" | grep -Eq "$3"; then
        echo "ok $n - $lab $1: $verdict"
    else
        echo "not ok $n - $lab $1: exit $rc, '$verdict'"
        sed 's/^/# /' "$tmp/$1.out" | tail -40
    fi
}
[ "$part" = solution ] || report starter 1 "NOT SOLVED: .{10,}"
[ "$part" = starter ] || report solution 0 "SOLVED$"
exit 0
