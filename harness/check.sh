#!/bin/sh
# check.sh — `make check`: turn every testlist into prove test files and run prove.
#
# A testlist line is   PROGRAM NPROCS [timeout=SECONDS] [-- ARGS...]   ('#' starts a comment).
# PROGRAM is a built test ($BUILD/tests/NAME), a benchmark ($BUILD/bin/NAME) or a script path
# relative to the testlist's directory. NPROCS 0 runs the program directly (scripts launch MPI
# themselves). Environment (set by make): MPI, BUILD, TEST_RUNNER, PYTHON, SAN, PROVE.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
: "${MPI:=mpich}" "${BUILD:=build/$MPI}" "${TEST_RUNNER:=mpiexec.mpich -n}" "${PROVE:=prove}"
: "${PYTHON:=python3}" "${SAN:=}"
tdir="$BUILD/t"
rm -rf "$tdir"
mkdir -p "$tdir"

# Sanitized builds: the MPI libraries keep allocations alive until exit; report our leaks only.
if [ "$SAN" = 1 ]; then
    # Full unwinding lets leak stacks reach the MPI library frames the suppressions name.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1}"
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$top/harness/lsan.supp:print_suppressions=0}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi

n=0
for list in $(find . -name testlist -not -path './build/*' -not -path './.git/*' | sort); do
    dir=$(dirname "$list")
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%%#*}
        [ -n "$(echo "$line" | tr -d ' \t')" ] || continue
        set -- $line
        prog=$1 np=$2
        shift 2
        limit=300
        if [ $# -gt 0 ]; then
            case $1 in timeout=*) limit=${1#timeout=}; shift ;; esac
        fi
        [ $# -gt 0 ] && [ "$1" = "--" ] && shift
        case $prog in
        */* | *.sh | *.py) path=$top/${dir#./}/$prog ;;
        *) if [ -x "$BUILD/tests/$prog" ]; then path=$top/$BUILD/tests/$prog
           elif [ -x "$BUILD/bin/$prog" ]; then path=$top/$BUILD/bin/$prog
           else echo "check.sh: $list: no program '$prog' in $BUILD/tests or $BUILD/bin" >&2; exit 2
           fi ;;
        esac
        # A readable, bounded file name: directory, program, first argument(s).
        name=$(echo "${dir#./}_$(basename "$prog" .sh)${1:+_$1}${2:+_$2}" | tr -c 'A-Za-z0-9_.\n-' '_' | cut -c1-60)
        n=$((n + 1))
        t=$(printf '%s/%03d_%s.t' "$tdir" "$n" "$name")
        {
            echo "#!/bin/sh"
            echo "cd '$top'"
            echo "export MPI='$MPI' BUILD='$BUILD' TEST_RUNNER='$TEST_RUNNER' PYTHON='$PYTHON'"
            echo "exec sh '$top/harness/run-test.sh' $np $limit '$path' $*"
        } >"$t"
    done <"$list"
done
echo "check.sh: $n tests from testlists ($MPI, $BUILD)" >&2
exec $PROVE --exec /bin/sh "$tdir"
