#!/bin/sh
# check.sh — `make check`: turn every testlist into prove test files and run prove.
#
# A testlist line is   PROGRAM NPROCS [timeout=S] [env=NAME=VALUE ...] [preload=nbrma] [threads]
#                      [full] [-- ARGS]
# ('#' starts a comment). PROGRAM is a built program ($BUILD/tests, $BUILD/conformance or
# $BUILD/bin) or a script path relative to the testlist's directory. NPROCS 0 runs the program
# directly (scripts launch MPI themselves). preload=nbrma runs the unmodified program on libnbrma
# ($BUILD/lib/libnbrma.so preloaded; its test name gets "on-ref"). A `known-failures` file next to the testlist
# (lines `MPI REGEX REASON`) marks tests whose name (program and arguments) matches as known
# vendor failures on that MPI: they run, and report as TAP TODO instead of failing. `threads`
# marks a test that runs several threads per process: with SAN=thread (ThreadSanitizer) only
# those run. `full` marks a test of a wide matrix that runs only with FULL=1 (`make check FULL=1`):
# keep the representative cell of the matrix without it, so the default run covers every path.
# Environment (set by make): MPI, BUILD, TEST_RUNNER, PYTHON, SAN, PROVE, FULL, RESULTS, and:
#   LOAD=k           k CPU hogs per online core (harness/cpuhog.sh) for the whole run: the suite
#                    as on a shared node. Stopped when this script ends, however it ends.
#   TIMEOUT_SCALE=f  multiplies every watchdog and every test's own limit (run-test.sh; the
#                    measured load scales them too).
#   CHECK_TDIR       where the generated prove files go (default BUILD/t, or BUILD/t-custom-N
#                    for a TESTLISTS run); emptied first.
#   CHECK_RESULTS    where the per-test results table goes (default RESULTS/check.tsv for a run
#                    of every testlist, none for a TESTLISTS run): what `make compare` reads.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}" "${PROVE:=prove}"
: "${PYTHON:=python3}" "${SAN:=}" "${FULL:=0}" "${LOAD:=0}" "${RESULTS:=results/$MPI}"
case $LOAD in
'' | *[!0-9]*) echo "check.sh: LOAD='$LOAD' is not a number of CPU hogs per core (LOAD=2)" >&2; exit 2 ;;
esac
case ${TIMEOUT_SCALE:-1} in
*[!0-9.]* | '' | .) echo "check.sh: TIMEOUT_SCALE='$TIMEOUT_SCALE' is not a positive factor (TIMEOUT_SCALE=2.5)" >&2; exit 2 ;;
esac
# Sanitized builds: the MPI libraries keep allocations alive until exit; report our leaks only.
if [ "$SAN" = 1 ]; then
    # Full unwinding lets leak stacks reach the MPI library frames the suppressions name.
    # verify_asan_link_order=0: preload=nbrma puts libnbrma (itself instrumented) before the
    # ASan runtime in the load order, which ASan otherwise refuses.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1:verify_asan_link_order=0}"
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$top/harness/lsan.supp:print_suppressions=0}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
if [ "$SAN" = thread ]; then
    # A report fails the test (exit code 66); the MPI libraries are not instrumented, and what
    # they do inside is theirs (harness/tsan.supp).
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$top/harness/tsan.supp}"
    # UCX (under MPICH, and Open MPI's pml) hooks mmap and madvise in a way that crashes inside
    # TSan's interceptors (a new thread's stack guard): leave memory events to TSan.
    export UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no
fi

# Lines that ask for NBRMA_NET=ucx need a libnbrma built with UCX (make UCX=0 builds without):
# without it they are reported as skipped, with the reason.
ucx_built=0
"$BUILD/bin/nbrma-settings" 2>/dev/null | grep -q '^UCX: built' && ucx_built=1

n=0 nfull=0
# TESTLISTS (space-separated paths) overrides the search, for testing this script itself.
lists=${TESTLISTS:-$(find . -name testlist -not -path './build/*' -not -path './.git/*' | sort)}
# The prove files: $BUILD/t for the whole suite; a TESTLISTS run gets a directory of its own per
# list set, so a run nested in another (harness/tests/test_check.sh) does not wipe the outer one's
# files; CHECK_TDIR names it outright.
abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$top" "${1#./}" ;; esac; }
if [ -n "${CHECK_TDIR:-}" ]; then
    tdir=$CHECK_TDIR
elif [ -n "${TESTLISTS:-}" ]; then
    tdir="$BUILD/t-custom-$(printf '%s' "$TESTLISTS" | cksum | cut -d' ' -f1)"
else
    tdir="$BUILD/t"
fi
rm -rf "$tdir"
mkdir -p "$tdir"
for list in $lists; do
    dir=$(dirname "$list")
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%%#*}
        [ -n "$(echo "$line" | tr -d ' \t')" ] || continue
        set -- $line
        prog=$1 np=$2
        shift 2
        limit=300 envs="" preload="" threads=0 full=0
        while [ $# -gt 0 ] && [ "$1" != "--" ]; do
            case $1 in
            threads) threads=1 ;;
            full) full=1 ;;
            timeout=*) limit=${1#timeout=} ;;
            env=*=*) envs="$envs '${1#env=}'" ;;
            preload=nbrma) preload=$(abs "$BUILD/lib/libnbrma.so") ;;
            *) echo "check.sh: $list: unknown field '$1' in: $line" >&2; exit 2 ;;
            esac
            shift
        done
        [ $# -gt 0 ] && shift # the --
        [ "$SAN" != thread ] || [ $threads = 1 ] || continue
        if [ $full = 1 ] && [ "$FULL" != 1 ]; then
            nfull=$((nfull + 1))
            continue
        fi
        case $prog in
        */* | *.sh | *.py) case $dir in /*) path=$dir/$prog ;; *) path=$top/${dir#./}/$prog ;; esac ;;
        *) path=""
           for d in tests conformance bin; do
               [ -x "$BUILD/$d/$prog" ] && { path=$(abs "$BUILD/$d/$prog"); break; }
           done
           [ -n "$path" ] || { echo "check.sh: $list: no program '$prog' in $BUILD/{tests,conformance,bin}" >&2; exit 2; } ;;
        esac
        known=""
        if [ -f "$dir/known-failures" ]; then
            known=$(grep -v '^#' "$dir/known-failures" | while read -r kmpi rx reason; do
                case $kmpi in "$MPI" | "*") ;; *) continue ;; esac
                if echo "$prog${preload:+ on-ref} $*" | grep -Eq -- "$rx"; then echo "$reason"; break; fi
            done)
        fi
        # A readable, bounded file name: directory, program, first argument(s).
        name=$(echo "${dir#./}_$(basename "$prog" .sh)${preload:+_on-ref}${1:+_$1}${2:+_$2}" | tr -c 'A-Za-z0-9_.\n-' '_' | cut -c1-60)
        n=$((n + 1))
        t=$(printf '%s/%03d_%s.t' "$tdir" "$n" "$name")
        {
            echo "#!/bin/sh"
            echo "cd '$top'"
            echo "export MPI='$MPI' BUILD='$BUILD' TEST_RUNNER='$TEST_RUNNER' PYTHON='$PYTHON' SAN='$SAN'"
            # the build's wrapper and launcher, for the tests that run make themselves
            [ -z "${MPICC:-}" ] || echo "export MPICC='$MPICC'"
            [ -z "${MPIEXEC:-}" ] || echo "export MPIEXEC='$MPIEXEC'"
            # what run-test.sh records in the results table (check.tsv): where the test comes
            # from, the program, ranks, settings and arguments
            echo "export NBRMA_TEST_ID='$(echo "${dir#./} $(basename "$prog")${preload:+ on-ref} np=$np$(echo "$envs" | tr -d "'" | sed 's/^ */ /; s/^ $//')${1:+ $*}" | tr -d "'")'"
            [ -z "$envs" ] || echo "export $envs"
            [ -z "$preload" ] || echo "export LD_PRELOAD='$preload' NBRMA_IMPL=ref"
            [ -z "$known" ] || echo "export NBRMA_KNOWN_FAILURE='$(echo "$known" | tr -d "'")'"
            case "$envs:$ucx_built" in
            *NBRMA_NET=ucx*:0) echo "echo '1..0 # SKIP libnbrma was built without UCX (make UCX=0, or no libucx-dev)'" ;;
            *) echo "exec sh '$top/harness/run-test.sh' $np $limit '$path' $*" ;;
            esac
        } >"$t"
    done <"$list"
done
echo "check.sh: $n tests from testlists ($MPI, $BUILD)$([ $nfull = 0 ] || echo "; $nfull more with FULL=1")" >&2
# run-test.sh repeats a run once when the vendor's runtime (not the program, libnbrma or the
# vendor's communication code) crashed, and logs it here; the log is printed after prove.
crashlog=$BUILD/vendor-crashes.log
rm -f "$crashlog"
# Every test's outcome, one line each (run-test.sh): the results table.
export NBRMA_CHECK_LOG="$(abs "$tdir")/results.log"
: >"$NBRMA_CHECK_LOG"
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
t_start=$(date +%s)
hogs=""
export NBRMA_CHECK_PID=$$ # the hogs' parent (harness/tests/test_check.sh counts them)
stop_hogs() {
    [ -z "$hogs" ] || kill $hogs 2>/dev/null || true
    hogs=""
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
if [ "$LOAD" -gt 0 ]; then
    i=0
    while [ $i -lt $((LOAD * cores)) ]; do
        sh "$top/harness/cpuhog.sh" $$ &
        hogs="$hogs $!"
        i=$((i + 1))
    done
    echo "check.sh: LOAD=$LOAD: $((LOAD * cores)) CPU hogs ($LOAD per core on $cores cores) run beside the tests" >&2
fi
echo "check.sh: load average at the start: $load_start ($cores cores)${TIMEOUT_SCALE:+; TIMEOUT_SCALE=$TIMEOUT_SCALE}" >&2
# --timer: each test's wall time, so a slow one is easy to find (make check must stay short);
# --failures: the failing points (and their reasons) of a failed test file
rc=0
$PROVE --timer --failures --exec /bin/sh "$tdir" || rc=$?
stop_hogs
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
secs=$(($(date +%s) - t_start))
echo "check.sh: $n tests in $((secs / 60)) min $((secs % 60)) s; load average at the start $load_start, at the end $load_end ($cores cores$([ "$LOAD" = 0 ] || echo ", LOAD=$LOAD"))"
# The slowest tests (make check must stay short: candidates for `full`, or a hint of trouble).
if [ -s "$NBRMA_CHECK_LOG" ]; then
    echo "check.sh: the slowest tests (seconds, status, test):"
    sort -t "$(printf '\t')" -k3,3 -rn "$NBRMA_CHECK_LOG" | head -8 |
        awk -F'\t' '{ printf "  %7.1f  %-8s %s\n", $3, $2, substr($1, 1, 100) }'
fi
if [ -s "$crashlog" ]; then
    echo "check.sh: $(wc -l <"$crashlog") run(s) repeated after a vendor runtime crash ($crashlog):"
    sed 's/^/  /' "$crashlog"
fi
# The results table: conditions first (# key: value), then one row per test.
table=${CHECK_RESULTS-}
[ -n "${CHECK_RESULTS+set}" ] || [ -n "${TESTLISTS:-}" ] || table=$RESULTS/check.tsv
if [ -n "$table" ]; then
    mkdir -p "$(dirname "$table")"
    # shellcheck disable=SC2086 # TEST_RUNNER is a command line
    lib=$(timeout 60 $TEST_RUNNER 1 "$BUILD/tests/mpi_version" 2>/dev/null | head -1)
    {
        echo "# nbrma make check results (harness/check.sh)"
        echo "# mpi: $MPI"
        echo "# mpi_library: ${lib:-?}"
        echo "# build: $BUILD"
        echo "# date: $(date -u +%FT%TZ)"
        echo "# host: $(uname -n) ($cores cores)"
        echo "# load_start: $load_start"
        echo "# load_end: $load_end"
        echo "# LOAD: $LOAD"
        echo "# TIMEOUT_SCALE: ${TIMEOUT_SCALE:-1}"
        echo "# FULL: $FULL"
        echo "# SAN: $SAN"
        echo "# seconds: $secs"
        printf 'test\tstatus\tseconds\tlimit_s\treason\n'
        cat "$NBRMA_CHECK_LOG"
    } >"$table.tmp" && mv "$table.tmp" "$table"
    echo "check.sh: per-test results in $table"
fi
# Tests that a watchdog killed leave libnbrma's shared memory behind (a killed process cannot
# unlink it): say so, with the way to remove it. Never removed here — a job of another pid
# namespace sharing /dev/shm would look dead (ref/tools/nbrma-clean-shm.sh).
stale=$(sh ref/tools/nbrma-clean-shm.sh --dry-run 2>/dev/null | sed -n 's/^nbrma-clean-shm: would remove \([0-9]*\) object(s), \([0-9]*\) bytes.*/\1 \2/p')
case $stale in
"" | "0 "*) ;;
*) echo "check.sh: ${stale%% *} shared-memory object(s) of libnbrma processes that are gone are in /dev/shm (${stale#* } bytes, left by killed runs): make clean-shm removes them" ;;
esac
exit "$rc"
