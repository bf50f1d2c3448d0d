#!/bin/sh
# test_stats.sh — NBRMA_STATS=path writes each process's memory accounting as JSON at
# MPI_Finalize (issue 26): one file per rank (%r, or .RANK appended), valid JSON whose gauges say
# what test_stats did (its delayed-issue fence queued 128 operation objects at once on 2 ranks;
# every window freed, every object given back); a path that cannot be written is reported on
# stderr, naming it, and MPI_Finalize returns an error. A bad NBRMA_ISSUE is refused at window
# creation with a message naming it, and so is a bad NBRMA_FENCE.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
NBRMA_STATS="$tmp/st.%r.json" $TEST_RUNNER 2 "$BUILD/tests/test_stats" >"$tmp/out" 2>"$tmp/err"
t_ok $? "test_stats passes with NBRMA_STATS set"
t_ok $([ -s "$tmp/st.0.json" ] && [ -s "$tmp/st.1.json" ]; echo $?) "%r: one file per rank (st.0.json, st.1.json)"
$PYTHON - "$tmp/st.0.json" "$tmp/st.1.json" >"$tmp/py" 2>&1 <<'PY'
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert d["version"] == 2 and d["size"] == 2, d
    for g in ("windows", "epochs", "ops", "flushes", "requests", "ops_pooled"):
        for k in ("count", "count_hwm", "bytes", "bytes_hwm"):
            assert isinstance(d[g][k], int), (g, k)
    assert d["windows"]["count"] == 0 and d["windows"]["bytes"] == 0, d["windows"]
    assert d["windows"]["count_hwm"] >= 1, d["windows"]
    assert d["epochs"]["count"] == 0 and d["ops"]["count"] == 0, d
    assert d["ops"]["count_hwm"] >= 128, d["ops"]
    assert d["ops"]["bytes_hwm"] >= 128 * 100, d["ops"]
    # every object freed went to the pool (NBRMA_OP_POOL=16384 by default) and is kept there
    assert d["ops_pooled"]["count"] >= 128 and d["ops_pooled"]["bytes"] > 0, d["ops_pooled"]
    print(path, "windows hwm", d["windows"]["count_hwm"], "ops hwm", d["ops"]["count_hwm"])
PY
t_ok $? "valid JSON: windows and epochs all given back, 128+ operation objects at the high-water mark"
sed 's/^/# /' "$tmp/py"
NBRMA_STATS="$tmp/plain.json" $TEST_RUNNER 2 "$BUILD/tests/test_stats" >"$tmp/out" 2>"$tmp/err"
t_ok $([ -s "$tmp/plain.json.0" ] && [ -s "$tmp/plain.json.1" ]; echo $?) "without %r: .RANK appended on several processes"
NBRMA_STATS="$tmp/no/such/dir/st.json" $TEST_RUNNER 2 "$BUILD/tests/test_stats" --fail-finalize >"$tmp/out" 2>"$tmp/err"
t_ok $([ $? -ne 0 ]; echo $?) "an unwritable path: the program's MPI_Finalize returns an error"
t_like "$tmp/err" "NBRMA_STATS: cannot write '$tmp/no/such/dir/st.json.[01]': No such file or directory" "and stderr names the path and the reason"
NBRMA_ISSUE=lazy $TEST_RUNNER 2 "$BUILD/tests/test_stats" >"$tmp/out" 2>"$tmp/err"
t_ok $([ $? -ne 0 ]; echo $?) "NBRMA_ISSUE=lazy: window creation fails (MPI_ERR_ARG, fatal by default)"
t_like "$tmp/err" "NBRMA_ISSUE=lazy is neither eager nor delayed" "and the message names the setting and the values it takes"
NBRMA_FENCE=ring $TEST_RUNNER 2 "$BUILD/tests/test_stats" >"$tmp/out" 2>"$tmp/err"
t_ok $([ $? -ne 0 ]; echo $?) "NBRMA_FENCE=ring: window creation fails (MPI_ERR_ARG, fatal by default)"
t_like "$tmp/err" "NBRMA_FENCE=ring is neither barrier nor reduce_scatter" "and the message names the setting and the values it takes"
rm -rf "$tmp"
t_done
