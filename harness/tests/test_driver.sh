#!/bin/sh
# test_driver.sh — nbrma-bench (what `make bench` runs) with a binary whose benchmarks crash and
# move wrong data, as a buggy vendor MPI would: each failure is reported by name, the healthy
# benchmarks still produce JSON, a known vendor failure does not fail the run, an unknown one does.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
printf 'crashy 2\n' >"$tmp/benchlist"
drive() { "$PYTHON" harness/nbrma-bench --bin "$BUILD/tests" --runner "$TEST_RUNNER" \
    --mpi "${MPI:-mpich}" --series vendor "$@" >"$tmp/out" 2>&1; }

drive --out "$tmp/r1" "$tmp/benchlist"
t_is $? 1 "a crash and wrong data fail the run (exit 1)"
t_like "$tmp/out" 'FAILED: X1_crash/vendor \[crash\] rank 1: crashed while running X1_crash/vendor' \
    "the crashing benchmark is named, with the rank that crashed"
t_like "$tmp/out" 'FAILED: X1_wrong/vendor \[wrong data\] validation failed' "the wrong-data benchmark is named"
"$PYTHON" - "$tmp/r1/crashy.np2.json" <<'PY'
import json, sys
names = sorted(b["run_name"].split("/iterations")[0] for b in json.load(open(sys.argv[1]))["benchmarks"])
sys.exit(0 if names == ["X1_ok_a/vendor", "X1_ok_b/vendor", "X1_wrong/vendor"] else print(names) or 1)
PY
t_ok $? "the benchmarks around the crash still have results in the JSON"
t_like "$tmp/r1/crashy.np2.log" 'crashed while running X1_crash' "the log keeps the crash output"

printf '%s X1_crash/ simulated vendor segfault\n%s X1_wrong/ simulated wrong data\n' "${MPI:-mpich}" "${MPI:-mpich}" >"$tmp/known-failures"
drive --out "$tmp/r2" "$tmp/benchlist"
t_is $? 0 "listed as known vendor failures, they no longer fail the run"
t_like "$tmp/out" 'KNOWN VENDOR FAILURE: X1_crash/vendor.*known: simulated vendor segfault' "but they are still reported"
rm "$tmp/known-failures"

printf 'crashy 2 -- --crash 0 --wrong 0\n' >"$tmp/benchlist"
drive --out "$tmp/r3" "$tmp/benchlist"
t_is $? 0 "a clean run exits 0"
t_like "$tmp/r3/summary.txt" '^  X1_ok_a +latency_us +[0-9.e+-]+$' "the summary table has a row per benchmark with its value"
t_unlike "$tmp/out" 'FAILED' "and reports no failure"

drive --out "$tmp/r4" --filter 'NOPE' "$tmp/benchlist"
t_is $? 1 "a filter that matches nothing is an error"
t_like "$tmp/out" "no benchmark matches 'NOPE'" "that says so"
drive --out "$tmp/r5" --series vendor,bogus "$tmp/benchlist"
t_is $? 2 "an unknown series is refused"
t_like "$tmp/out" "'bogus' is not vendor, ref or ref-nb" "naming it"
printf 'crashy two\n' >"$tmp/badlist"
drive --out "$tmp/r6" "$tmp/badlist"
t_ok $((! $?)) "a malformed benchmark list is refused"
t_like "$tmp/out" "badlist:1: 'two' is not a rank count list" "with file, line and the bad field"
printf 'crashy 2 env=NBRMA_TEST_KNOB=7 env=OTHER=a/b -- --crash 0 --wrong 0\n' >"$tmp/envlist"
drive --out "$tmp/r7" "$tmp/envlist"
t_is $? 0 "a line with env= settings runs"
t_ok $([ -s "$tmp/r7/crashy.np2.test_knob-7.other-a_b.json" ]; echo $?) \
    "its results file names the settings (crashy.np2.test_knob-7.other-a_b.json)"
t_like "$tmp/r7/crashy.np2.test_knob-7.other-a_b.log" '^\$ NBRMA_TEST_KNOB=7 OTHER=a/b ' \
    "the log shows the environment the ranks got"
printf 'crashy 2 env=bad\n' >"$tmp/badlist"
drive --out "$tmp/r8" "$tmp/badlist"
t_ok $((! $?)) "env= without NAME=VALUE is refused"
t_like "$tmp/out" "badlist:1: unknown field 'env=bad'" "naming the field"
# BENCH= launches only programs whose experiment ids the regex can match; what it cannot follow
# launches everything (never nothing).
"$PYTHON" - <<'PY' >"$tmp/filt" 2>&1
from importlib.machinery import SourceFileLoader
import types
loader = SourceFileLoader("nbrma_bench", "harness/nbrma-bench")
m = types.ModuleType(loader.name)
m.__file__ = "harness/nbrma-bench"
loader.exec_module(m)
progs = {"d1_latency": ["D1"], "d5_fence": ["D5"], "d6_pscw": ["D6"], "a4_late_complete": ["A4"],
         "c_sched": ["C1", "C2", "C3", "C4", "C5"], "g4_hashtable": ["G4"], "e_ghost": ["E1"],
         "crashy": []}
want = {".": set(progs), "D1": {"d1_latency", "crashy"}, "^D(5|6)": {"d5_fence", "d6_pscw", "crashy"},
        "^(D1|D7|A4)_": {"d1_latency", "a4_late_complete", "crashy"}, "^C": {"c_sched", "crashy"},
        "G4_hashtable": {"g4_hashtable", "crashy"}, "put_latency": set(progs), "(?i)d1": set(progs),
        "C[45]_mix": {"c_sched", "crashy"}, "D1|E1_ghost/vendor": {"d1_latency", "e_ghost", "crashy"},
        "^.*D5": {"d5_fence", "crashy"}, "(D1|.*put)": set(progs), "D1?_x": set(progs)}
bad = []
for rx, exp in want.items():
    got = {p for p, ids in progs.items() if m.may_match(m.filter_needs(rx), ids)}
    if got != exp:
        bad.append((rx, sorted(got), sorted(exp)))
print(bad or "all as expected")
raise SystemExit(1 if bad else 0)
PY
st=$?
t_ok $st "the BENCH regex decides which programs are launched (D1, ^D(5|6), ^C, G4_..., and 'any' when it cannot tell)"
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/filt"
printf 'crashy 2 -- --crash 0 --wrong 0\ncrashy 2 -- --crash 0 --wrong 0 --sizes 8\n' >"$tmp/duplist"
drive --out "$tmp/r10" "$tmp/duplist"
t_ok $((! $?)) "two lines that would write the same results file are refused"
t_like "$tmp/out" "duplist:2: writes the same results as .*duplist:1 \\(RESULTS/crashy.np2.json\\): give one of the lines a tag=NAME" \
    "naming both lines and the file"
t_ok $([ ! -e "$tmp/r10/crashy.np2.json" ]; echo $?) "and nothing runs"
printf 'crashy 2 -- --crash 0 --wrong 0\ncrashy 2 tag=second -- --crash 0 --wrong 0\n' >"$tmp/taglist"
drive --out "$tmp/r11" "$tmp/taglist"
t_is $? 0 "with tag= on one of them both run"
t_ok $([ -s "$tmp/r11/crashy.np2.json" ] && [ -s "$tmp/r11/crashy.np2.second.json" ]; echo $?) \
    "each into its own results file (crashy.np2.json, crashy.np2.second.json)"
printf 'crashy 2 ids=Q9 -- --crash 0 --wrong 0\n' >"$tmp/idlist"
drive --out "$tmp/r9" "$tmp/idlist"
t_ok $((! $?)) "a benchlist line whose ids= do not open its names fails the run"
t_like "$tmp/out" "FAILED: crashy \\[benchlist\\] benchmark X1_ok_a/vendor does not start with the ids Q9" "naming the line's program and the first name"
rm -rf "$tmp"
t_done
