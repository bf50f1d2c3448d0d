#!/bin/sh
# check.sh — `make check`: turn every testlist into prove test files and run prove.
#
# A testlist line is   PROGRAM NPROCS [timeout=S] [env=NAME=VALUE ...] [preload=nbrma] [threads]
#                      [-- ARGS]
# ('#' starts a comment). PROGRAM is a built program ($BUILD/tests, $BUILD/conformance or
# $BUILD/bin) or a script path relative to the testlist's directory. NPROCS 0 runs the program
# directly (scripts launch MPI themselves). preload=nbrma runs the unmodified program on libnbrma
# ($BUILD/lib/libnbrma.so preloaded; its test name gets "on-ref"). A `known-failures` file next to the testlist
# (lines `MPI REGEX REASON`) marks tests whose name (program and arguments) matches as known
# vendor failures on that MPI: they run, and report as TAP TODO instead of failing. `threads`
# marks a test that runs several threads per process: with SAN=thread (ThreadSanitizer) only
# those run. `full` marks a test of the wide matrices (every transport × setting): it runs only
# with FULL=1 (make check FULL=1).
# Environment (set by make): MPI, BUILD, TEST_RUNNER, PYTHON, SAN, PROVE.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}" "${PROVE:=prove}"
: "${PYTHON:=python3}" "${SAN:=}"
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

n=0
# TESTLISTS (space-separated paths) overrides the search, for testing this script itself.
lists=${TESTLISTS:-$(find . -name testlist -not -path './build/*' -not -path './.git/*' | sort)}
tdir="$BUILD/t${TESTLISTS:+-custom}"
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
            preload=nbrma) preload=$top/$BUILD/lib/libnbrma.so ;;
            *) echo "check.sh: $list: unknown field '$1' in: $line" >&2; exit 2 ;;
            esac
            shift
        done
        [ $# -gt 0 ] && shift # the --
        [ "$SAN" != thread ] || [ $threads = 1 ] || continue
        [ $full = 0 ] || [ "${FULL:-0}" = 1 ] || continue
        case $prog in
        */* | *.sh | *.py) case $dir in /*) path=$dir/$prog ;; *) path=$top/${dir#./}/$prog ;; esac ;;
        *) path=""
           for d in tests conformance bin; do
               [ -x "$BUILD/$d/$prog" ] && { path=$top/$BUILD/$d/$prog; break; }
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
            echo "export MPI='$MPI' BUILD='$BUILD' TEST_RUNNER='$TEST_RUNNER' PYTHON='$PYTHON'"
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
echo "check.sh: $n tests from testlists ($MPI, $BUILD)" >&2
# run-test.sh repeats a run once when the vendor's runtime (not the program, libnbrma or the
# vendor's communication code) crashed, and logs it here; the log is printed after prove.
crashlog=$BUILD/vendor-crashes.log
rm -f "$crashlog"
# --timer: each test's wall time, so a slow one is easy to find (make check must stay short)
rc=0
$PROVE --timer --exec /bin/sh "$tdir" || rc=$?
if [ -s "$crashlog" ]; then
    echo "check.sh: $(wc -l <"$crashlog") run(s) repeated after a vendor runtime crash ($crashlog):"
    sed 's/^/  /' "$crashlog"
fi
exit "$rc"
