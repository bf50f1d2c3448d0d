#!/bin/sh
# test_bench.sh — what a benchmark binary promises: JSON shape and context, series names,
# rank-agreed iteration decisions, and a clear error with exit 2 for each kind of bad input.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
d1=$BUILD/bin/d1_latency

mpirun_n 2 "$d1" --quick --sizes 8,1K --series vendor --out "$tmp/d1.json" >"$tmp/out" 2>&1
t_ok $? "d1_latency --quick runs on 2 ranks"
t_like "$tmp/out" '^# D1 ' "it prints a readable header"
t_like "$tmp/out" 'one-way' "the header says one-way vs round-trip"
$PYTHON - "$tmp/d1.json" >"$tmp/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ctx, bs = d["context"], d["benchmarks"]
def check(cond, what):
    print(("ok" if cond else "FAIL") + " " + what)
check(all(b["name"].startswith("D1_") for b in bs), "names start with D1_")
names = {b["run_name"] for b in bs}
check(names == {"D1_%s_latency/vendor/size:%d/iterations:30/manual_time" % (o, s)
                for o in ("put", "get") for s in (8, 1024)} |
      {"D1_p2p_send_ack/vendor/size:%d/iterations:30/manual_time" % s for s in (8, 1024)},
      "one benchmark per op and size (and the vendor's two-sided floor): %s" % sorted(names))
check(all(b["latency_us"] > 0 and b["latency_min_us"] <= b["latency_us"] for b in bs), "latency counters are positive, min <= median")
check(all(b["samples"] == 30 and b["iterations"] == 30 for b in bs), "30 samples each under --quick")
check(not any(b.get("error_occurred") for b in bs), "no benchmark failed validation")
for k in ("mpi_library", "mpi_standard", "nranks", "ranks_per_node", "nnodes", "experiment", "work_ns_per_iter", "wtick_us", "cores_per_node", "oversubscribed"):
    check(k in ctx, "context has " + k)
check(ctx.get("nranks") == "2" and ctx.get("experiment") == "D1", "context: 2 ranks, experiment D1")
check(ctx.get("mpi_library", "").split()[0] in ("MPICH", "Open"), "context names the MPI library: " + ctx.get("mpi_library", ""))
PY
t_ok $? "the JSON parses"
while read -r st what; do t_ok "$([ "$st" = ok ] && echo 0 || echo 1)" "$what"; done <"$tmp/check"

# Google Benchmark chooses the iteration counts (--iters 0): every rank must agree, or this hangs.
# A small minimum time: Google Benchmark sizes the count on the manual time (a put + flush, ~2 us)
# while each sample also all-reduces across ranks (ms when oversubscribed and loaded), so 0.05 s
# meant ~25000 samples and 5+ minutes on Open MPI at load 20 (issue 23's "test_bench hangs
# past 180 s": it was still sampling). 0.002 s still takes several rounds of decisions (1, 10,
# 100, ... iterations) that every rank must agree on.
mpirun_n 2 "$d1" --iters 0 --sizes 8 --series vendor --benchmark_min_time=0.002 \
    --out "$tmp/auto.json" >/dev/null 2>&1
t_ok $? "with automatic iteration counts all ranks agree and the run ends"

# Bad input: exit 2, a message naming what was wrong, nothing written.
bad() { # bad EXPECTED-REGEX DESCRIPTION NP ARGS...
    re=$1 desc=$2 np=$3
    shift 3
    mpirun_n "$np" "$d1" "$@" >"$tmp/bad" 2>&1
    rc=$?
    t_ok $((rc == 0)) "$desc: non-zero exit"
    t_like "$tmp/bad" "$re" "$desc: the message names it"
}
bad "unknown option '--bogus'" "an unknown option" 2 --bogus
bad "'12Q' is not a size" "a malformed size" 2 --sizes 12Q
bad "cannot write '/nonexistent/x.json'" "an unwritable --out" 2 --out /nonexistent/x.json
bad "needs at least 2 ranks" "too few ranks" 1 --quick
bad "random_interleaving" "a Google Benchmark flag that would diverge" 2 --benchmark_enable_random_interleaving=true
bad "unknown Google Benchmark flag '--benchmark_nonsense=1'" "an unknown Google Benchmark flag" 2 --benchmark_nonsense=1
bad "does not apply" "an option D1 does not use" 2 --delay-us 5
mpirun_n 2 "$d1" --bogus >/dev/null 2>&1
t_is $? 2 "bad options exit with status 2"
mpirun_n 1 "$d1" --help >"$tmp/help" 2>&1
t_ok $? "--help exits 0"
t_like "$tmp/help" '--window create\|allocate\|dynamic' "--help lists the options"
t_like "$tmp/help" '--benchmark_filter' "--help lists Google Benchmark's flags"
mpirun_n 2 "$d1" --quick --series ref-nb --out "$tmp/ref.json" >"$tmp/ref" 2>&1
t_ok $? "asking for an unavailable series is not an error"
t_like "$tmp/ref" 'series ref-nb skipped: .*blocking calls' "D1 has no ref-nb series: skipped with a message saying why"
for f in create dynamic; do
    mpirun_n 2 "$d1" --quick --sizes 64 --window $f --series vendor >"$tmp/w" 2>&1
    t_ok $? "--window $f runs and validates"
done
rm -rf "$tmp"
t_done
