#!/bin/sh
# test_perfgate.sh — the deterministic performance gate (docs/models.md):
#  1. the comparison on synthetic files: equal passes; a cost above its tolerance fails with a
#     table naming it; a missing metric fails; a smaller cost passes and asks for a new baseline;
#  2. the gate itself: this build's fast paths and window metadata (bytes per window and per
#     peer, paper 004's F3) against ci/baselines/$MPI.json;
#  3. the gate can fail: a build with -DNBR_PERF_CANARY=8 (a short loop in every window entry
#     point, put's fast path included) is caught, with put marked WORSE.
# Skipped under sanitizers (callgrind and ASan do not mix; counts differ anyway).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
: "${MPI:=mpich}" "${SAN:=}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gate="$PYTHON ci/perf/perfgate.py"

cat >"$tmp/base.json" <<'EOF'
{"mpi": "synthetic", "regenerate": "make baseline MPI=synthetic", "entries": {
 "put": {"value": 100, "unit": "instr", "abs_tol": 5, "rel_tol": 0.05},
 "lock_unlock": {"value": 1000, "unit": "instr", "abs_tol": 5, "rel_tol": 0.05},
 "window_create": {"value": 768, "unit": "bytes", "abs_tol": 64, "rel_tol": 0.05}}}
EOF
m() { # m PUT LOCK [WINDOW] -> $tmp/m.json
    w=""
    [ -z "${3:-}" ] || w=', "window_create": {"value": '$3', "unit": "bytes"}'
    printf '{"put": {"value": %s, "unit": "instr"}, "lock_unlock": {"value": %s, "unit": "instr"}%s}\n' \
        "$1" "$2" "$w" >"$tmp/m.json"
}
m 104 1049 800
$gate compare "$tmp/base.json" "$tmp/m.json" >"$tmp/out" 2>&1
t_is $? 0 "synthetic: within tolerance (put +4 of 5, lock +49 of 50) passes"
t_like "$tmp/out" "all 3 metrics within tolerance" "and says so"
m 106 1000 768
$gate compare "$tmp/base.json" "$tmp/m.json" >"$tmp/out" 2>&1
t_is $? 1 "synthetic: put +6 instructions (tolerance 5) fails"
t_like "$tmp/out" "^put +instr +100 +105(\.0)? +106 +\+6\.0% +WORSE" "the table names put as WORSE"
t_like "$tmp/out" "make baseline MPI=synthetic" "and says how to regenerate the baseline"
m 100 1000
$gate compare "$tmp/base.json" "$tmp/m.json" >"$tmp/out" 2>&1
t_is $? 1 "synthetic: a metric missing from the measurement fails"
t_like "$tmp/out" "^window_create .*MISSING" "naming it"
m 50 1000 768
$gate compare "$tmp/base.json" "$tmp/m.json" >"$tmp/out" 2>&1
t_is $? 0 "synthetic: a cheaper put passes"
t_like "$tmp/out" "^put .*better: regenerate the baseline" "and asks for a new baseline"
# window metadata (MPIX_Win_get_stats bytes) is exact: one more byte per peer fails
cat >"$tmp/mbase.json" <<'EOF'
{"mpi": "synthetic", "regenerate": "make baseline MPI=synthetic", "entries": {
 "metadata_per_peer_create": {"value": 200, "unit": "meta", "abs_tol": 0, "rel_tol": 0.0}}}
EOF
echo '{"metadata_per_peer_create": {"value": 208, "unit": "meta"}}' >"$tmp/m.json"
$gate compare "$tmp/mbase.json" "$tmp/m.json" >"$tmp/out" 2>&1
t_is $? 1 "synthetic: 8 more bytes of window metadata per peer fail (exact, no tolerance)"
t_like "$tmp/out" "^metadata_per_peer_create +meta +200 +200 +208 .*WORSE" "naming the metric"

if [ -n "$SAN" ]; then
    t_ok 0 "gate on this build # SKIP sanitized build (SAN=$SAN)"
    t_ok 0 "canary build caught # SKIP sanitized build (SAN=$SAN)"
    t_done
    exit $?
fi
if [ ! -f "ci/baselines/$MPI.json" ]; then # another MPI (MPI=mvapich ...): no baseline yet
    t_ok 0 "gate on this build # SKIP no ci/baselines/$MPI.json (make baseline MPI=$MPI)"
    t_ok 0 "canary build caught # SKIP no ci/baselines/$MPI.json"
    t_done
    exit $?
fi

# The canary build: the same sources in their own tree, cached between runs.
canary=build/$MPI-canary
make --no-print-directory MPI="$MPI" ${MPICC:+MPICC="$MPICC"} ${MPIEXEC:+MPIEXEC="$MPIEXEC"} \
    BUILD="$canary" DEPS=0 CFLAGS="-O2 -g -DNBR_PERF_CANARY=8" \
    "$canary/bin/nbrma-fastpath" >"$tmp/make" 2>&1
t_is $? 0 "the canary build (-DNBR_PERF_CANARY=8) builds"
[ $? -eq 0 ] || sed 's/^/#   /' "$tmp/make" | tail -20

# Both measurements at once: each mostly waits for MPI start-up under valgrind.
$gate check --bin "$BUILD/bin/nbrma-fastpath" --baseline "ci/baselines/$MPI.json" \
    >"$tmp/gate" 2>&1 &
pg=$!
$gate check --bin "$canary/bin/nbrma-fastpath" --baseline "ci/baselines/$MPI.json" \
    >"$tmp/canary" 2>&1
rc_canary=$?
wait $pg
rc_gate=$?
sed 's/^/# /' "$tmp/gate"
t_is $rc_gate 0 "this build's fast paths are within ci/baselines/$MPI.json"
sed 's/^/# canary: /' "$tmp/canary"
t_is $rc_canary 1 "the canary build fails the gate"
t_like "$tmp/canary" "^put .*WORSE" "with put marked WORSE"
t_done
