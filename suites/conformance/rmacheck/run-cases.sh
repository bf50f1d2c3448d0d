#!/bin/sh
# run-cases.sh — rmacheck's corpus as one TAP test: build every cases/*.c with rmacheck-cc, run it
# under rmacheck with the rank count its header names, compare the verdict with the header
# ("rmacheck-case: expect=hazard|safe kind=KIND ranks=N [lib=nbrma] [env=VAR=VALUE] [omp]"), and
# print the table per kind (cases, flagged, missed, false alarms) with precision and recall. Both
# must be 1.00. env= sets one variable for the case's run: the way around a known vendor failure
# that would kill the program before its racing calls happen (the case's comment says which). omp
# builds the case with -fopenmp (its threads wait passively: OMP_WAIT_POLICY=passive). A case
# that cannot run on this MPI (the threaded ones without MPI_THREAD_MULTIPLE) prints a line
# "rmacheck-case-skip: REASON" and exits 0: a TAP SKIP, left out of the table.
#   run-cases.sh [CASE...]      (default: every case)
#   run-cases.sh --ranks-per-node K [CASE...]
#       the same under rmacheck --ranks-per-node K (every K ranks a virtual node: the runtime
#       keeps the clocks of atomics in its window, as across real nodes); default: the cases that
#       call accumulate-class operations, the only ones whose analysis depends on that store.
# Environment (set by check.sh): BUILD, TEST_RUNNER, MPI.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" && . harness/taplib.sh
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}"
dir=suites/conformance/rmacheck/cases
out=$BUILD/rmacheck-cases
# Each case's limit: 120 s (a case takes about a second quiet) scaled as the watchdog is.
limit=$(t_limit 120)
rpn=""
if [ "${1:-}" = --ranks-per-node ]; then
    case ${2:-} in
    '' | *[!0-9]* | 0) echo "run-cases.sh: --ranks-per-node needs a positive integer" >&2; exit 2 ;;
    esac
    rpn=$2
    out=$out-rpn$rpn
    shift 2
    if [ $# -eq 0 ]; then
        for f in $dir/*.c; do # a safe twin is its hazard case's source included with SAFE set
            inc=$(sed -n 's/^#include "\(.*\.c\)"$/\1/p' "$f")
            if grep -q 'MPI_Compare_and_swap\|MPI_Fetch_and_op\|[aA]ccumulate(' "$f" ${inc:+"$dir/$inc"}; then
                set -- "$@" "$f"
            fi
        done
    fi
fi
mkdir -p "$out"
if [ $# -gt 0 ]; then cases="$*"; else cases=$(ls $dir/*.c); fi
n=$(echo "$cases" | wc -w)
echo "1..$((n + 1))"
i=0
res=$out/results.txt
# A sanitized build (SAN=1) links libnbrma with ASan, whose runtime must come first in a process:
# the cases that use libnbrma get it preloaded before rmacheck's runtime.
asan=$(ldd "$BUILD/lib/libnbrma.so" 2>/dev/null | awk '/libasan/ {print $3; exit}')
: >"$res"
run_one() {
    i=$1 c=$2
    exec >"$out/$(basename "$c" .c).tap"
    name=$(basename "$c" .c)
    hdr=$(grep -m1 'rmacheck-case:' "$c")
    expect=$(echo "$hdr" | sed -n 's/.*expect=\([a-z]*\).*/\1/p')
    kind=$(echo "$hdr" | sed -n 's/.*kind=\([a-z-]*\).*/\1/p')
    ranks=$(echo "$hdr" | sed -n 's/.*ranks=\([0-9]*\).*/\1/p')
    caseenv=$(echo "$hdr" | sed -n 's/.* env=\([A-Za-z_][A-Za-z0-9_]*=[^ ]*\).*/\1/p')
    extra="" pre="" ompenv=""
    case $hdr in *lib=nbrma*) extra="-Iref/include -L$BUILD/lib -Wl,--no-as-needed -lnbrma -Wl,-rpath,$top/$BUILD/lib"
        pre=$asan ;; esac
    case "$hdr " in *" omp "*) extra="$extra -fopenmp" ompenv="OMP_WAIT_POLICY=passive" ;; esac
    if [ -z "$expect" ] || [ -z "$kind" ] || [ -z "$ranks" ]; then
        echo "not ok $i - $name: header lacks expect=, kind= or ranks="
        echo "? ? error" >"$out/$name.res"
        return
    fi
    # shellcheck disable=SC2086
    if ! "$BUILD/bin/rmacheck-cc" -O1 -I$dir -o "$out/$name" "$c" $extra >"$out/$name.build" 2>&1; then
        echo "not ok $i - $name: rmacheck-cc failed"; sed 's/^/# /' "$out/$name.build" | tail -5
        echo "$kind $expect error" >"$out/$name.res"
        return
    fi
    # shellcheck disable=SC2086
    env ${caseenv:+"$caseenv"} $ompenv timeout -k 5 "$limit" "$BUILD/bin/rmacheck" ${rpn:+--ranks-per-node "$rpn"} ${pre:+--preload "$pre"} --json "$out/$name.json" -- $TEST_RUNNER "$ranks" \
        "$out/$name" >"$out/$name.out" 2>&1
    rc=$?
    got=$(sed -n 's/^rmacheck: hazard \([a-z-]*\):.*/\1/p' "$out/$name.out" | sort -u | tr '\n' ' ')
    verdict=""
    skip=$(sed -n 's/^rmacheck-case-skip: //p' "$out/$name.out" | head -1)
    if [ "$rc" -eq 0 ] && [ -n "$skip" ]; then
        echo "ok $i - $name # SKIP $skip"
        echo "$kind $expect skip" >"$out/$name.res"
        return
    fi
    # 0 no hazard, 1 hazards, 3 no hazard but the program failed (judged below); 2 and 4 (rmacheck
    # could not check, was interrupted) are errors
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 3 ]; then
        case $rc in 124 | 137) rc="$rc (timed out after $limit s: 120 s x ${NBRMA_TIMEOUT_SCALE:-1}, the watchdog's factor)" ;; esac
        echo "not ok $i - $name: rmacheck exited $rc"; sed 's/^/# /' "$out/$name.out" | tail -20
        echo "$kind $expect error" >"$out/$name.res"
        return
    fi
    if [ "$expect" = hazard ]; then
        case " $got" in
        *" $kind "*) verdict=flagged ;;
        *) verdict=missed ;;
        esac
    elif grep -q '^rmacheck: note: the program \(exited with status\|was killed by signal\)' "$out/$name.out"; then
        # a safe case that did not run to its end proves nothing about false alarms
        echo "not ok $i - $name: the program failed ($(sed -n 's/^rmacheck: note: the program \(exited with status [0-9]*\|was killed by signal [0-9]*\).*/\1/p' "$out/$name.out")); a safe case must run to completion"
        sed 's/^/# /' "$out/$name.out" | tail -20
        echo "$kind $expect error" >"$out/$name.res"
        return
    else
        if [ "$rc" -eq 0 ]; then verdict=clean; else verdict=false-alarm; fi
    fi
    echo "$kind $expect $verdict" >"$out/$name.res"
    case $verdict in
    flagged | clean) echo "ok $i - $name: $expect $kind -> $verdict" ;;
    *) echo "not ok $i - $name: $expect $kind -> $verdict (reported: ${got:-nothing})"
       sed 's/^/# /' "$out/$name.out" | tail -20 ;;
    esac
}

# JOBS cases at a time (default 2: the corpus is launch-bound, not CPU-bound); the TAP lines
# and results are gathered in corpus order afterwards.
jobs=${JOBS:-2}
running=0
for c in $cases; do
    i=$((i + 1))
    rm -f "$out/$(basename "$c" .c).res"
    run_one "$i" "$c" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait
for c in $cases; do
    name=$(basename "$c" .c)
    cat "$out/$name.tap"
    if [ -f "$out/$name.res" ]; then cat "$out/$name.res"; else echo "? ? error"; fi >>"$res"
done
# The table, precision and recall over the whole corpus.
awk -v n=$((n + 1)) '
$3 == "skip" { next }
{ c[$1]++; if ($2 == "hazard") { h[$1]++; if ($3 == "flagged") f[$1]++; else m[$1]++ }
  else { s[$1]++; if ($3 != "clean") fa[$1]++ } }
END {
  printf "# %-18s %6s %7s %7s %7s %12s\n", "kind", "cases", "hazard", "flagged", "missed", "false-alarms"
  for (k in c) { printf "# %-18s %6d %7d %7d %7d %12d\n", k, c[k], h[k], f[k], m[k], fa[k];
    tf += f[k]; tm += m[k]; tfa += fa[k]; tc += c[k] }
  p = (tf + tfa) ? tf / (tf + tfa) : 1; r = (tf + tm) ? tf / (tf + tm) : 1
  printf "# total %d cases: precision %.2f recall %.2f\n", tc, p, r
  if (p == 1 && r == 1) printf "ok %d - corpus precision %.2f recall %.2f\n", n, p, r
  else printf "not ok %d - corpus precision %.2f recall %.2f (both must be 1.00)\n", n, p, r
}' "$res"
