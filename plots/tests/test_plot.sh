#!/bin/sh
# test_plot.sh — plots/plot.py on real benchmark JSON: real PNG and PDF figures, data files that
# hold exactly the JSON's numbers, per-MPI bars from a sibling results directory, a clear error
# for a corrupt JSON or a missing gnuplot, and "no data" notes (no figures) for an empty directory.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
res=$tmp/results/this
mkdir -p "$res" "$tmp/results/other"

# A few quick benchmarks on 2 ranks (a few seconds in all).
ok=0
for b in "d1_latency --sizes 8,1K" "d4_atomics --sizes 8 --benchmark_filter=D4_(acc|fetch)" d7_passive d5_fence; do
    # shellcheck disable=SC2086 # split "prog args" on purpose
    set -- $b
    prog=$1
    shift
    mpirun_n 2 "$BUILD/bin/$prog" --quick --series vendor "$@" --out "$res/$prog.json" \
        >>"$tmp/bench.log" 2>&1 || ok=1
done
t_ok $ok "quick d1, d4, d5, d7 runs wrote JSON"
[ $ok -eq 0 ] || sed 's/^/# /' "$tmp/bench.log" | tail -20
# A second "MPI" next to it: the same JSON under another nbrma_mpi name.
for f in "$res"/*.json; do
    sed 's/"nbrma_mpi": "[^"]*"/"nbrma_mpi": "othermpi"/' "$f" >"$tmp/results/other/${f##*/}"
done

plot() { "$PYTHON" plots/plot.py "$@" >"$tmp/out" 2>"$tmp/err"; }
plot --results "$res"
t_is $? 0 "plot.py exits 0"
bad=0
for fig in d1_latency d4_atomics d5_fence d7_passive; do
    png=$res/plots/$fig.png pdf=$res/plots/$fig.pdf
    { [ -s "$png" ] && [ "$(head -c 4 "$png" | tail -c 3)" = PNG ] &&
      [ -s "$pdf" ] && [ "$(head -c 5 "$pdf")" = %PDF- ]; } || { echo "# bad or missing $fig"; bad=1; }
done
t_ok $bad "d1, d4, d5, d7 each have a real PNG and PDF"
t_like "$tmp/out" '^plot: figures: d1_latency d4_atomics d5_fence d7_passive$' "the last line lists the figures"
t_like "$tmp/err" '^plot: d6_pscw: no data in ' "a figure without results gets a one-line note"
[ ! -e "$res/plots/d6_pscw.png" ] && [ ! -e "$res/plots/d2_overlap.pdf" ]
t_ok $? "and is not drawn"

# Every number of the JSON is in the data files, in the row and column it belongs to.
"$PYTHON" - "$res" <<'PY' >"$tmp/check" 2>&1
import os, shlex, sys
sys.path.insert(0, "harness")
import nbrma_results
res = sys.argv[1]
def load(name):  # data file -> {(row label, column header): value}
    lines = [l for l in open(os.path.join(res, "plots", "data", name)) if not l.startswith("#")]
    head = shlex.split(lines[0])
    return {(r[0], h): r[i] for r in map(shlex.split, lines[1:]) for i, h in enumerate(head) if i}
d1, d7 = load("d1_latency.dat"), load("d7_passive.dat")
bad, n = [], 0
for r in nbrma_results.load_dir(res):
    if r.bench.startswith("D1_") and r.bench != "D1_p2p_send_ack":  # the floor: summary only
        key = (str(r.params["size"]), "vendor " + r.bench.split("_")[1])
        got, want = d1.get(key), "%.6g" % r.counters["latency_us"]
    elif r.bench == "D7_flush":
        key = ("flush", r.mpi + " vendor")
        got, want = d7.get(key), "%.6g" % r.counters["flush_us"]
        key2 = ("flush", "othermpi vendor")  # the sibling directory's copy
        bad += [] if d7.get(key2) == want else [(key2, d7.get(key2), want)]
    else:
        continue
    n += 1
    bad += [] if got == want else [(key, got, want)]
print("checked %d values; mismatches: %s" % (n, bad))
sys.exit(1 if bad or n != 5 else 0)
PY
st=$?
t_ok $st "data files hold the JSON's D1 sizes and latencies and D7 flush times"
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/check"
t_like "$res/plots/data/d7_passive.dat" '"othermpi vendor"' "bars include the sibling directory's MPI"
t_like "$res/plots/data/d1_latency.dat" '^# ' "data files open with a comment naming the columns"

# An A experiment (bars per series, one group per quantity and size): A4 with two sizes.
mkdir -p "$tmp/ab/r"
mpirun_n 2 "$BUILD/bin/a4_late_complete" --quick --iters 4 --warmup 1 --series vendor,ref \
    --sizes 1K,4K --delay-us 100 --out "$tmp/ab/r/a4.json" >"$tmp/ab.log" 2>&1
t_is $? 0 "a quick A4 run wrote JSON"
plot --results "$tmp/ab/r" --only '^a4' --format png
t_is $? 0 "plot.py draws A4"
t_like "$tmp/out" '^plot: figures: a4_late_complete$' "as the a4_late_complete figure"
"$PYTHON" - "$tmp/ab/r" <<'PY' >"$tmp/check" 2>&1
import os, shlex, sys
sys.path.insert(0, "harness")
import nbrma_results
res = sys.argv[1]
lines = [l for l in open(os.path.join(res, "plots", "data", "a4_late_complete.dat"))
         if not l.startswith("#")]
head = shlex.split(lines[0])
got = {(r[0], h): r[i] for r in map(shlex.split, lines[1:]) for i, h in enumerate(head) if i}
want = {}
for r in nbrma_results.load_dir(res):
    size = r.params["size"] // 1024
    want[("target epoch %dK" % size, r.series)] = "%.6g" % r.counters["target_epoch_us"]
    # how much of D reached the victim (paper 000's question), beside the times
    want[("propagated delay (to target epoch) %dK" % size, r.series)] = \
        "%.6g" % r.counters["propagated_delay_us"]
print("data %s, JSON %s" % (got, want))
sys.exit(0 if got == want and len(want) == 8 else 1)
PY
st=$?
t_ok $st "a4_late_complete.dat holds the JSON's target_epoch_us and propagated_delay_us per size and series"
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/check"

# The A/B figures answer their question, and every figure states its conditions: the same A4
# results with times of 10^5 us and more (D = 200 ms) switch to ms; the conditions line names the
# library, QUICK, oversubscription, start skew above D and the run's load average.
"$PYTHON" - "$tmp/ab/r" <<'PY' >"$tmp/check" 2>&1
import copy, os, sys
sys.path.insert(0, "plots")
sys.path.insert(0, "harness")
import plot, nbrma_results
rs = nbrma_results.load_dir(sys.argv[1])
# Scaled so that the largest time is at least 2 * 10^5 us whatever the quick run measured (a
# target epoch can come out a little under D = 100 us on a loaded machine: 98 us x 1000 stayed in
# us and failed this point under Open MPI in CI).
top = max(abs(r.counters.get(k, 0)) for r in rs for k in ("target_epoch_us", "propagated_delay_us"))
scale = max(1000.0, 2e5 / top) if top > 0 else 1000.0
big = []
for r in rs:
    b = copy.copy(r)
    b.counters = {k: v * scale if k.endswith("_us") else v for k, v in r.counters.items()}
    b.params = dict(r.params, delay_us=200000)
    big.append(b)
got = plot.FIGURES["a4_late_complete"](big, big)
v = got.pop("_vars")
text = got["a4_late_complete.dat"][0]
ok = v.get("unit") == "ms" and abs(v.get("delay") - 200.0) < 1e-9 and "median ms of" in text
row = [l for l in text.splitlines() if l.startswith('"target epoch 1K"')][0].split()
want = "%.6g" % ([r for r in big if r.params["size"] == 1024 and r.series == "vendor"][0]
                 .counters["target_epoch_us"] / 1000)
ok = ok and row[3] == want
print("unit %s, delay %s, first row %s (want vendor %s)" % (v.get("unit"), v.get("delay"), row, want))
small = plot.FIGURES["a4_late_complete"](rs, rs).pop("_vars")
ok = ok and small.get("unit") == "µs" and small.get("delay") == 100
for r in rs:
    r.context = dict(r.context, quick="1", oversubscribed="1", nranks="3", cores_per_node="2")
rs[0].counters["skew_exceeds_delay"] = 1
c = plot.conditions(rs, {"mpich": {"load_start": 3.25, "load_end": 7.5}, rs[0].mpi: {"load_start": 3.25, "load_end": 7.5}})
print(c)
for want in ("QUICK", "oversubscribed: 3 ranks on 2 cores", "start skew > D in ",
             "load average at the run's start → end: 3.2 → 7.5", rs[0].context["mpi_library"]):
    ok = ok and want in c
ok = ok and all(len(l) <= 120 for l in c.split("\n"))
sys.exit(0 if ok else 1)
PY
st=$?
t_ok $st "A4 at 10^5 us is drawn in ms with the delay line at D; conditions name QUICK, oversubscription, skew, load"
sed 's/^/# /' "$tmp/check"
t_like "$tmp/ab/r/plots/data/a4_late_complete.dat" '^"propagated delay \(to target epoch\) 1K"' \
    "A4 shows how much of D reached the target epoch"

# A corrupt JSON: exit 1, the file named.
mkdir -p "$tmp/bad/r"
cp "$res/d1_latency.json" "$tmp/bad/r/"
printf '{"context": {}, "benchmarks": [' >"$tmp/bad/r/broken.json"
plot --results "$tmp/bad/r"
t_is $? 1 "a corrupt JSON file makes plot.py exit 1"
t_like "$tmp/err" 'cannot read .*/bad/r/broken\.json' "the message names the file"

# No gnuplot: exit 1 with a clear message.
GNUPLOT=/nonexistent/gnuplot plot --results "$res" --only d7
t_is $? 1 "a missing gnuplot makes plot.py exit 1"
t_like "$tmp/err" 'gnuplot not found' "and says so"

# An empty results directory: exit 0, notes, no figures.
mkdir -p "$tmp/empty/r"
plot --results "$tmp/empty/r"
t_is $? 0 "an empty results directory exits 0"
t_like "$tmp/err" 'no data' "with 'no data' notes"
[ -z "$(find "$tmp/empty" -name '*.png' -o -name '*.pdf')" ]
t_ok $? "and draws no figure"

# C (paper 002): measured beside L0/L1, one panel per mode present, numbers from the JSON.
mkdir -p "$tmp/c/r"
NBRMA_RANKS_PER_NODE=2 mpirun_n 4 "$BUILD/bin/c_sched" --series ref --sizes 16K --iters 4 \
    --warmup 1 --benchmark_filter='^C4_mix/ref(-sched)?/mode:(lock_all|fence)/op:put/self:0/' \
    --out "$tmp/c/r/c.json" >"$tmp/c/log" 2>&1
t_is $? 0 "a quick c_sched run (C4, fence and lock_all) wrote JSON"
plot --results "$tmp/c/r" --only c_sched
t_is $? 0 "plot.py draws c_sched"
[ -s "$tmp/c/r/plots/c_sched.png" ] && [ "$(head -c 4 "$tmp/c/r/plots/c_sched.png" | tail -c 3)" = PNG ]
t_ok $? "c_sched.png is a PNG"
"$PYTHON" - "$tmp/c/r" <<'PY'
import sys, shlex
sys.path.insert(0, "harness")
import nbrma_results
d = sys.argv[1]
want = {(r.params["mode"], r.series): r.counters for r in nbrma_results.load_dir(d)}
bad = 0
for mode in ("lock_all", "fence"):
    rows = [shlex.split(l) for l in open("%s/plots/data/c_sched.%s.dat" % (d, mode))
            if not l.startswith("#")][1:]
    for label, *vals in rows:
        series = label.split()[-1]  # "C4 Mix ref": scenario, its name, series
        c = want[(mode, series)]
        got = [float(v) for v in vals]
        exp = [c["epoch_us"], c["model_L0_us"], c["model_L1_us"]]
        if any(abs(g - e) > 1e-5 * max(1, abs(e)) for g, e in zip(got, exp)):
            print("# %s %s: %s != %s" % (mode, label, got, exp)); bad = 1
    if len(rows) != 2:
        print("# %s: %d rows, expected ref and ref-sched" % (mode, len(rows))); bad = 1
sys.exit(bad)
PY
t_ok $? "its data files hold the JSON's epoch_us, model_L0_us and model_L1_us per mode and series"
[ ! -e "$tmp/c/r/plots/data/c_sched.gats.dat" ]
t_ok $? "a mode without results gets no data file (its panel is left out)"
t_done
