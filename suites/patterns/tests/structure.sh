#!/bin/sh
# structure.sh — a structural test of one A/B experiment: a short run with a large delay D whose
# results must fall on the right side of wide margins (fractions of D), never tight times.
#   structure.sh PROGRAM NPROCS DELAY_US CHECK,CHECK,... [ARGS...]
# CHECK: BENCH_GLOB:COUNTER:gt|lt:FACTOR, e.g. A4_late_complete/ref/*:target_epoch_us:gt:0.8
# (counter > 0.8 * D; no spaces or shell metacharacters: testlists are split on blanks). The benchmarks a check names must exist, except ref-nb ones while the
# libnbrma in use has no nonblocking synchronization (TAP SKIP).
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" && . harness/taplib.sh
prog=$1 np=$2 delay=$3 checks=$4
shift 4
tmp=$(mktemp -d)
mpirun_n "$np" "$BUILD/bin/$prog" --iters 5 --warmup 1 --delay-us "$delay" \
    --benchmark_color=false --out "$tmp/r.json" "$@" >"$tmp/out" 2>&1
rc=$?
t_is $rc 0 "$prog on $np ranks with D = $delay us exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/out" | tail -20
nb_missing=0
grep -q 'series ref-nb skipped: the libnbrma in use has no nonblocking' "$tmp/out" && nb_missing=1
"$PYTHON" - "$tmp/r.json" "$delay" "$checks" "$nb_missing" >"$tmp/verdicts" 2>&1 <<'PY'
import fnmatch, operator, sys
sys.path.insert(0, "harness")
import nbrma_results
path, delay, checks, nb_missing = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
try:
    rs = nbrma_results.load_file(path)
except Exception as e:
    rs = []
    if not nb_missing:
        print("FAIL the JSON loads (%s)" % e)
ops = {"gt": operator.gt, "lt": operator.lt}
signs = {"gt": ">", "lt": "<"}
for check in filter(None, (c.strip() for c in checks.split(","))):
    pat, counter, op, factor = check.rsplit(":", 3)
    limit = float(factor) * delay
    what = "%s: %s %s %g us (%s x D)" % (pat, counter, signs[op], limit, factor)
    hits = [r for r in rs if fnmatch.fnmatchcase(r.name, pat)]
    if not hits:
        print(("SKIP " if nb_missing and "/ref-nb" in pat else "FAIL no result for ") + what)
        continue
    for r in hits:
        v = r.counters.get(counter)
        good = r.error is None and v is not None and ops[op](v, limit)
        print("%s %s: %s = %s %s %g" % ("ok" if good else "FAIL", r.name, counter,
              "%.0f" % v if v is not None else "missing", signs[op], limit))
PY
while read -r st what; do
    case $st in
    SKIP) t_ok 0 "$what # SKIP the libnbrma in use has no nonblocking synchronization (ref-nb)" ;;
    *) t_ok "$([ "$st" = ok ] && echo 0 || echo 1)" "$what" ;;
    esac
done <"$tmp/verdicts"
rm -rf "$tmp"
t_done
