#!/bin/sh
# test_tap.sh — TAP aggregation across ranks: tap_demo fails on purpose on ranks 1 and 2 only;
# rank 0 must print every point once, and the failing ranks' diagnostics must reach its output.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
out=$(mktemp)
mpirun_n 3 "$BUILD/tests/tap_demo" >"$out" 2>&1
t_ok $((! $?)) "a program with failing points exits non-zero"
t_like "$out" '^1\.\.5$' "the plan is printed"
t_is "$(grep -c '^ok 1 - passes everywhere$' "$out")" 1 "a passing point is printed once, by rank 0 alone"
t_like "$out" '^not ok 2 - fails on rank 1 only$' "a point failing on rank 1 alone fails"
t_like "$out" '^# rank 1: rank one was here$' "rank 1's diagnostic reaches rank 0's output"
t_like "$out" '^not ok 3 - the answer, wrong on rank 2$' "an is-comparison failing on rank 2 fails"
t_like "$out" '^# rank 2: got 41, expected 42$' "rank 2's got/expected reaches rank 0's output"
t_like "$out" '^# failed on 1 of 3 ranks$' "the number of failing ranks is given"
t_like "$out" '^ok 4 - passes everywhere again$' "points after a failure still run"
t_like "$out" '^ok 5 # SKIP nothing to do$' "skips are reported as such"
t_is "$(grep -Ec '^(not )?ok ' "$out")" 5 "exactly five points, no duplicates from other ranks"
rm -f "$out"
t_done
