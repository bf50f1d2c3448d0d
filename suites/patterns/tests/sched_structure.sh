#!/bin/sh
# sched_structure.sh — the structural test of the intra-epoch scheduler (issue 13, paper 002):
# C4 Mix on 4 ranks in two virtual nodes (rank 0's node peer gets a large intra-node payload,
# the two targets on the other node a small one) over an emulated wire of D latency. Without the
# scheduler the origin copies the intra-node payload (zeta) before it issues the inter-node puts,
# so the epoch takes about zeta + D; with it the puts go first and the copy runs while they are on
# the wire: about max(zeta, D). Asserted, per mode given, from one run (ratios, never times):
#   ref-sched's epoch < RATIO x ref's epoch           (the scheduler removes most of zeta or D)
#   ref's epoch > 0.8 x (zeta_us + D)                 (the scenario really is zeta + D without it)
#   sched_structure.sh D_US SIZE INTER_BYTES RATIO MODE[,MODE...]
# A loaded machine can move one run's medians: the run is repeated up to STRUCTURE_TRIES times
# (default 3) and a check passes when one run satisfies it; every run's values are printed.
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" && . harness/taplib.sh
delay=$1 size=$2 inter=$3 ratio=$4 modes=$5
tries=${STRUCTURE_TRIES:-3}
tmp=$(mktemp -d)
filter="^C4_mix/(ref|ref-sched)/mode:($(echo "$modes" | tr , '|'))/op:put/self:0/"
for try in $(seq 1 "$tries"); do
    NBRMA_RANKS_PER_NODE=2 NBRMA_WIRE_US=$delay mpirun_n 4 "$BUILD/bin/c_sched" \
        --series ref --sizes "$size" --inter-bytes "$inter" --iters 7 --warmup 1 \
        --benchmark_filter="$filter" --benchmark_color=false --out "$tmp/r$try.json" \
        >"$tmp/out$try" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "# run $try: c_sched exited $rc"
        sed 's/^/#   /' "$tmp/out$try" | tail -20
        continue
    fi
    "$PYTHON" - "$tmp" "$try" "$delay" "$ratio" "$modes" >"$tmp/verdicts" 2>&1 <<'PY'
import os, sys
sys.path.insert(0, "harness")
import nbrma_results
tmp, last, delay, ratio, modes = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4]), sys.argv[5].split(",")
runs = []
for k in range(1, last + 1):
    path = os.path.join(tmp, "r%d.json" % k)
    if os.path.exists(path):
        runs.append({(r.series, r.params.get("mode")): r for r in nbrma_results.load_file(path)
                     if r.error is None})
for mode in modes:
    got = [(rs.get(("ref", mode)), rs.get(("ref-sched", mode))) for rs in runs]
    got = [(a, b) for a, b in got if a and b]
    if not got:
        print("FAIL no ref / ref-sched result for C4 mix %s" % mode)
        continue
    vals = ["ref %.0f us, ref-sched %.0f us, zeta %.0f us" % (a.counters["epoch_us"],
            b.counters["epoch_us"], a.counters["zeta_us"]) for a, b in got]
    ok1 = any(b.counters["epoch_us"] < ratio * a.counters["epoch_us"] for a, b in got)
    ok2 = any(a.counters["epoch_us"] > 0.8 * (a.counters["zeta_us"] + delay) for a, b in got)
    print("%s C4 mix %s: ref-sched's epoch < %g x ref's (%s)" % ("PASS" if ok1 else "FAIL", mode,
          ratio, "; ".join(vals)))
    print("%s C4 mix %s: ref's epoch > 0.8 x (zeta + D = %g us): the intra-node copy and the "
          "wire add up without the scheduler" % ("PASS" if ok2 else "FAIL", mode, delay))
PY
    grep -q '^FAIL' "$tmp/verdicts" || break
done
if [ ! -s "$tmp/verdicts" ]; then
    t_ok 1 "c_sched ran (see the output above)"
else
    while IFS= read -r line; do
        case $line in
        PASS*) t_ok 0 "${line#PASS }" ;;
        FAIL*) t_ok 1 "${line#FAIL }" ;;
        *) echo "# $line" ;;
        esac
    done <"$tmp/verdicts"
fi
rm -rf "$tmp"
t_done
