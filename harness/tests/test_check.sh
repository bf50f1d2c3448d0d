#!/bin/sh
# test_check.sh — the test runner's promises, on a testlist of its own: a hang is killed by the
# watchdog and fails as one test while the rest of the suite runs, env= reaches the test, a known
# vendor failure reports as TODO and does not fail the run, an unknown testlist field is refused,
# `full` lines wait for FULL=1, and a vendor runtime crash is repeated once (and only such a crash).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
# This test's own runs of run-test.sh and of .t files are not rows of the make check it runs in.
unset NBRMA_CHECK_LOG NBRMA_TEST_ID
tmp=$(mktemp -d)
mkdir "$tmp/l"
printf '#!/bin/sh\necho "1..1"\n[ "$FOO" = bar ] && echo "ok 1 - env reached" || echo "not ok 1 - FOO=$FOO"\n' >"$tmp/l/env.sh"
printf '#!/bin/sh\necho "1..1"\nsleep 60\necho "ok 1"\n' >"$tmp/l/hang.sh"
chmod +x "$tmp/l/"*.sh
cat >"$tmp/l/testlist" <<LIST
env.sh 0 timeout=30 env=FOO=bar
tap_demo 3 timeout=60
LIST
printf '%s ^tap_demo deliberately failing demo\n' "${MPI:-mpich}" >"$tmp/l/known-failures"
check() { env -u NBRMA_TIMEOUT_SCALE CHECK_TDIR="$tmp/t" TESTLISTS="$1" FULL="${FULL:-0}" MPI="${MPI:-mpich}" BUILD="$BUILD" TEST_RUNNER="${RUNNER:-$TEST_RUNNER}" \
    sh harness/check.sh >"$tmp/out" 2>&1; }

check "$tmp/l/testlist"
t_is $? 0 "a known failure does not fail the run"
t_like "$tmp/out" 'All tests successful' "prove reports success"
t_like "$tmp/out" 'tap_demo.*ok' "the known-failing program's test file is ok (as TODO)"
t_ok $(grep -rq 'TODO known vendor failure: deliberately failing demo' "$tmp"/t/*.t 2>/dev/null; \
       sh "$tmp"/t/002_*.t 2>/dev/null | grep -q '^not ok 1 - tap_demo (exit [0-9]*) # TODO known vendor failure: deliberately failing demo$'; echo $?) \
    "it reports one TODO point naming the reason"

# `full`: a line of a wide matrix runs only with FULL=1; the default run says how many it left.
printf 'env.sh 0 timeout=30 env=FOO=bar\nenv.sh 0 timeout=30 env=FOO=bar full -- wide\n' >"$tmp/l/testlist"
check "$tmp/l/testlist"
t_like "$tmp/out" 'check.sh: 1 tests from testlists .*; 1 more with FULL=1' "a 'full' line is left out by default, and counted"
t_ok $(ls "$tmp"/t/ | grep -c wide | grep -qx 0; echo $?) "its test file is not written"
FULL=1 check "$tmp/l/testlist"
t_like "$tmp/out" 'check.sh: 2 tests from testlists' "FULL=1 runs it"
t_like "$tmp/out" 'All tests successful' "and it passes"

# A hung test is one failed test, with its reason first, and the suite goes on: a script that
# sleeps forever, an MPI program whose rank 1 sleeps forever (tap_demo --hang), one whose rank 1
# gives up on a bounded wait (tap_demo --fatal, tap_bail_out), then two tests that pass.
printf '#!/bin/sh\necho "1..2"\necho "ok 1 - before the hang"\nexec sleep 1000000\n' >"$tmp/l/hang.sh"
cat >"$tmp/l/testlist" <<LIST
hang.sh 0 timeout=1
tap_demo 3 timeout=2 -- --hang
tap_demo 3 timeout=60 -- --fatal
env.sh 0 timeout=30 env=FOO=bar
env.sh 0 timeout=30 env=FOO=bar -- again
LIST
: >"$tmp/l/known-failures"
t0=$(date +%s)
TIMEOUT_SCALE=1 check "$tmp/l/testlist"
t_ok $((! $?)) "a hanging test fails the run"
t_like "$tmp/out" 'Files=5, Tests=' "prove ran all five test files"
t_like "$tmp/out" '005_.*env_again\.t \.+ ok' "the tests after the hangs ran and passed"
t_is "$(grep -Ec '^[^ ]*\.t +\(Wstat: .* Failed: 1\)$' "$tmp/out")" 3 "the two hangs and the fatal failure are three failed tests, one failed point each"
t_unlike "$tmp/out" 'Bail out|out of sequence|No plan found|9999' "no bail out, no broken TAP"
t_like "$tmp/out" "^run-test.sh: watchdog: hang.sh \(a script\) did not finish within [0-9]+ s \(timeout=1 x [0-9.]+: TIMEOUT_SCALE=1, load [0-9.]+ on [0-9]+ cores\); killed after 1 test points" \
    "the script's hang is named, with its limit and how it was scaled, on prove's first lines for it"
t_like "$tmp/out" "^run-test.sh: watchdog: tap_demo --hang on 3 ranks did not finish within" "so is the MPI program's"
t_like "$tmp/out" "^run-test.sh: tap_demo --fatal on 3 ranks exited with status [0-9]+ after" "the fatal failure says how it ended"
t_like "$tmp/out" "^not ok [23] - tap_demo --fatal on 3 ranks exited with status [0-9]+ after [12] of 5 planned test points: rank 1: fatal: the request did not complete within 1 s" \
    "and its failing point names the rank and the reason (prove --failures)"
sh "$tmp"/t/002_*.t >"$tmp/tap" 2>/dev/null
t_ok $(tail -1 "$tmp/tap" | grep -qx '1\.\.3'; echo $?) "the killed program's TAP is closed with a plan matching its points"
t_like "$tmp/tap" '^not ok 3 - watchdog: tap_demo --hang on 3 ranks did not finish' "the last point is the watchdog's"
# TIMEOUT_SCALE multiplies the limit (NBRMA_TIMEOUT_SCALE is the product run-test.sh exports).
printf 'hang.sh 0 timeout=1\n' >"$tmp/l/testlist"
TIMEOUT_SCALE=3 check "$tmp/l/testlist"
t_like "$tmp/out" "did not finish within ([3-9]|[1-9][0-9]+) s \(timeout=1 x [0-9.]+: TIMEOUT_SCALE=3," "TIMEOUT_SCALE=3 triples the limit at least"
t_diag "the hang tests took $(($(date +%s) - t0)) s"

# LOAD=k: k CPU hogs per core while the tests run, gone when check.sh ends, even by SIGKILL.
cores=$(getconf _NPROCESSORS_ONLN)
cat >"$tmp/l/hogs.sh" <<'HOGS'
#!/bin/sh
echo "1..1"
n=$(ps -eo args | grep -c "^sh .*/harness/cpuhog.sh $NBRMA_CHECK_PID$")
echo "$NBRMA_CHECK_PID" >"$(dirname "$0")/check.pid"
[ "$n" -eq "$HOGS" ] && echo "ok 1 - $n hogs" || echo "not ok 1 - $n hogs, expected $HOGS"
sleep "${SLEEP:-0}"
HOGS
chmod +x "$tmp/l/hogs.sh"
printf 'hogs.sh 0 timeout=60\n' >"$tmp/l/testlist"
HOGS=$((2 * cores)) LOAD=2 check "$tmp/l/testlist"
t_is $? 0 "LOAD=2 runs the tests beside 2 CPU hogs per core"
t_like "$tmp/out" "^check.sh: LOAD=2: $((2 * cores)) CPU hogs \\(2 per core on $cores cores\\)" "and says so"
t_like "$tmp/out" '^check.sh: [0-9]+ tests in .*load average at the start [0-9.]+ .*, at the end [0-9.]+' \
    "the load average at the start and the end is reported"
hogs_left() { ps -eo args | grep -c "^sh .*/harness/cpuhog.sh $(cat "$tmp/l/check.pid")$"; }
t_is "$(hogs_left)" 0 "no hog outlives the run"
HOGS=$cores LOAD=1 SLEEP=8 CHECK_TDIR="$tmp/t2" TESTLISTS="$tmp/l/testlist" MPI="${MPI:-mpich}" BUILD="$BUILD" \
    sh harness/check.sh >"$tmp/out" 2>&1 &
pid=$!
i=0
while [ ! -s "$tmp/l/check.pid" ] || [ "$(cat "$tmp/l/check.pid")" != "$pid" ]; do
    sleep 1; i=$((i + 1)); [ $i -lt 60 ] || break
done
kill -9 "$pid"
sleep 3
t_is "$(hogs_left)" 0 "nor one whose check.sh was killed with SIGKILL (each hog watches its parent)"
LOAD=x check "$tmp/l/testlist"
t_is $? 2 "LOAD=x is refused"
rm -f "$tmp/l/check.pid"

printf 'env.sh 0 retries=3\n' >"$tmp/l/testlist"
check "$tmp/l/testlist"
t_is $? 2 "an unknown testlist field is refused"
t_like "$tmp/out" "unknown field 'retries=3'" "naming the field"
# A vendor runtime crash (every backtrace frame in the runtime) is repeated once and logged; a crash
# with a frame in the vendor's communication code (libmpi) is not. fake-runner.sh plays the
# launcher: it prints the backtrace given in $CRASH on its first call and exits 139, then passes.
cat >"$tmp/fake-runner.sh" <<'RUNNER'
#!/bin/sh
shift
if [ ! -e "$STATE" ]; then
    : >"$STATE"
    printf '[vm:1] *** Process received signal ***\n[vm:1] Signal: Segmentation fault (11)\n' >&2
    printf '%s\n' "$CRASH" >&2
    exit 139
fi
exec "$@"
RUNNER
printf '#!/bin/sh\necho "1..1"\necho "ok 1 - ran"\n' >"$tmp/l/pass.sh"
chmod +x "$tmp/fake-runner.sh" "$tmp/l/pass.sh"
rt_frames='[vm:1] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f]
[vm:1] [ 1] /lib64/ld-linux-x86-64.so.2(+0x8e5b)[0x7f]
[vm:1] [ 2] /lib/x86_64-linux-gnu/libopen-pal.so.40(+0x359ee)[0x7f]'
mpi_frames="$rt_frames
[vm:1] [ 3] /lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_osc_rdma.so(+0x1234)[0x7f]"
prog_frames="$rt_frames
[vm:1] [ 3] $tmp/l/pass.sh(main+0x10)[0x40]"
rerun() { # CRASH-FRAMES -> runs pass.sh on "1 rank" through run-test.sh and the fake runner
    rm -f "$tmp/state" "$BUILD/vendor-crashes.log"
    CRASH="$1" STATE="$tmp/state" TEST_RUNNER="$tmp/fake-runner.sh" \
        sh harness/run-test.sh 1 30 "$tmp/l/pass.sh" >"$tmp/out" 2>"$tmp/err"
}
rerun "$rt_frames"
t_is $? 0 "a crash with every frame in the vendor runtime is repeated once and the repeat counts"
t_like "$tmp/out" '^ok 1 - ran' "the repeat's TAP reaches prove"
t_like "$tmp/out" '^# pass.sh on 1 ranks: the vendor runtime crashed \(Segmentation fault \(11\)' \
    "the first run is reported as a TAP comment naming the signal"
t_like "$BUILD/vendor-crashes.log" 'pass.sh on 1 ranks: the vendor runtime crashed' \
    "and logged for check.sh's summary"
rerun "$mpi_frames"
t_is $? 139 "a crash with a frame in a communication component (mca_osc_rdma) fails, not repeated"
t_ok $([ ! -e "$BUILD/vendor-crashes.log" ]; echo $?) "and is not logged as a runtime crash"
rerun "$prog_frames"
t_is $? 139 "a crash with a frame in the program fails, not repeated"
rm -f "$tmp/state"
NBRMA_NO_RERUN=1 CRASH="$rt_frames" STATE="$tmp/state" TEST_RUNNER="$tmp/fake-runner.sh" \
    sh harness/run-test.sh 1 30 "$tmp/l/pass.sh" >"$tmp/out" 2>"$tmp/err"
t_is $? 139 "NBRMA_NO_RERUN=1 turns the repeat off"
printf 'pass.sh 1 timeout=30\n' >"$tmp/l/testlist"
rm -f "$tmp/state"
CRASH="$rt_frames" STATE="$tmp/state" RUNNER="$tmp/fake-runner.sh" check "$tmp/l/testlist"
t_is $? 0 "make check passes when the repeat passes"
t_like "$tmp/out" 'run\(s\) repeated after a vendor runtime crash' "and says so after prove's summary"
rm -rf "$tmp" "$BUILD/vendor-crashes.log"
t_done
