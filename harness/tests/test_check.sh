#!/bin/sh
# test_check.sh — the test runner's promises, on a testlist of its own: a hang is killed by the
# watchdog and fails, env= reaches the test, a known vendor failure reports as TODO and does not
# fail the run, an unknown testlist field is refused, and a vendor runtime crash is repeated once
# (and only such a crash).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
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
check() { TESTLISTS="$1" FULL="${FULL:-0}" MPI="${MPI:-mpich}" BUILD="$BUILD" TEST_RUNNER="${RUNNER:-$TEST_RUNNER}" \
    sh harness/check.sh >"$tmp/out" 2>&1; }

check "$tmp/l/testlist"
t_is $? 0 "a known failure does not fail the run"
t_like "$tmp/out" 'All tests successful' "prove reports success"
t_like "$tmp/out" 'tap_demo.*ok' "the known-failing program's test file is ok (as TODO)"
t_ok $(grep -rq 'TODO known vendor failure: deliberately failing demo' "$BUILD"/t-custom/*.t 2>/dev/null; \
       sh "$BUILD"/t-custom/002_*.t 2>/dev/null | grep -q '^not ok 1 - tap_demo (exit [0-9]*) # TODO known vendor failure: deliberately failing demo$'; echo $?) \
    "it reports one TODO point naming the reason"

# `full`: a line of a wide matrix runs only with FULL=1; the default run says how many it left.
printf 'env.sh 0 timeout=30 env=FOO=bar\nenv.sh 0 timeout=30 env=FOO=bar full -- wide\n' >"$tmp/l/testlist"
check "$tmp/l/testlist"
t_like "$tmp/out" 'check.sh: 1 tests from testlists .*; 1 more with FULL=1' "a 'full' line is left out by default, and counted"
t_ok $(ls "$BUILD"/t-custom/ | grep -c wide | grep -qx 0; echo $?) "its test file is not written"
FULL=1 check "$tmp/l/testlist"
t_like "$tmp/out" 'check.sh: 2 tests from testlists' "FULL=1 runs it"
t_like "$tmp/out" 'All tests successful' "and it passes"

printf 'hang.sh 0 timeout=2\n' >"$tmp/l/testlist"
check "$tmp/l/testlist"
t_ok $((! $?)) "a hanging test fails the run"
t_like "$tmp/out" 'Failed|FAIL' "prove reports the failure"
t_ok $(sh "$BUILD"/t-custom/001_*.t | grep -q "^not ok 9999 - watchdog: .*hang.sh' on 0 ranks did not finish within 2 s"; echo $?) \
    "the watchdog's not-ok line says what hung and for how long"

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
rm -rf "$tmp" "$BUILD/t-custom" "$BUILD/vendor-crashes.log"
t_done
