#!/bin/sh
# run-test.sh — run one test under a watchdog, as prove sees it.
#   run-test.sh NPROCS TIMEOUT PROGRAM [ARGS...]
# NPROCS > 0 launches PROGRAM with "$TEST_RUNNER NPROCS"; 0 runs it directly (scripts that launch
# MPI themselves). A test still running after TIMEOUT seconds is killed and reported as
# "not ok - watchdog", so a hang fails the run instead of stalling CI.
# With NBRMA_KNOWN_FAILURE set (a known vendor failure, see check.sh), the test's own output
# becomes comments and one TAP TODO point reports whether it failed as expected.
set -u
np=$1 limit=$2
shift 2
if [ -n "${NBRMA_KNOWN_FAILURE:-}" ]; then
    reason=$NBRMA_KNOWN_FAILURE
    unset NBRMA_KNOWN_FAILURE
    out=$(sh "$0" "$np" "$limit" "$@" 2>&1)
    rc=$?
    echo "$out" | sed 's/^/# /'
    echo "1..1"
    if [ "$rc" -eq 0 ]; then
        echo "ok 1 - $(basename "$1") passed # TODO known vendor failure no longer fails: $reason"
    else
        echo "not ok 1 - $(basename "$1") (exit $rc) # TODO known vendor failure: $reason"
    fi
    exit 0
fi
# A vendor runtime crash: Open MPI's signal handler printed a backtrace and every frame is in the
# C library, the loader or Open MPI's *runtime* (libopen-pal/-rte, PMIx, libevent, hwloc and the
# runtime's components), none in the program, in libnbrma, in libmpi or in a communication
# component (osc, pml, btl, ...). Seen here once in ~500 runs: rank 2 of a vendor run died in
# ld.so resolving event_base_loop for libopen-pal's progress thread, mpirun then hung until the
# watchdog. That is not what the test checks, and it can hit any program, so such a run is repeated
# once; the first run's output becomes TAP comments and a line in $BUILD/vendor-crashes.log, which
# check.sh prints after prove. A crash with any frame outside that set (a vendor RMA bug, say)
# fails as usual, as does a second runtime crash. NBRMA_NO_RERUN=1 turns the repeat off.
runtime_crash() {
    grep -q '\*\*\* Process received signal \*\*\*' "$@" || return 1
    frames=$(grep -hE '\] \[ *[0-9]+\] ' "$@") || return 1
    echo "$frames" | grep -Evq '/(libc\.so[^/(]*|ld-linux[^/(]*|libpthread\.so[^/(]*|libopen-pal\.so[^/(]*|libopen-rte\.so[^/(]*|libpmix\.so[^/(]*|libevent[^/(]*|libhwloc\.so[^/(]*|mca_(pmix|ess|plm|ras|rml|routed|oob|errmgr|schizo|state|grpcomm|odls|rtc|iof|filem|pstat|shmem|reachable|prtereachable|ptl|psec|gds|bfrops|pnet|preg|pshmem|pcompress|pdl|pif|pinstalldirs|plog|psensor|pfexec|pmdl)_[^/(]*)\(' && return 1
    return 0
}
if [ "$np" -gt 0 ]; then
    out=$(mktemp "${TMPDIR:-/tmp}/nbrma-test.XXXXXX") || exit 1
    err=$out.err
    for attempt in 1 2; do
        # shellcheck disable=SC2086 # TEST_RUNNER is a command line, split on purpose
        timeout -k 10 "$limit" ${TEST_RUNNER:-mpiexec.mpich -n} "$np" "$@" >"$out" 2>"$err"
        rc=$?
        if [ "$rc" -ne 0 ] && [ "$attempt" -eq 1 ] && [ -z "${NBRMA_NO_RERUN:-}" ] &&
            runtime_crash "$out" "$err"; then
            sig=$(grep -hm1 'Signal:' "$out" "$err" | sed 's/^.*Signal: *//')
            msg="$(basename "$1") on $np ranks: the vendor runtime crashed ($sig, every frame in the runtime; exit $rc); repeated once"
            echo "# $msg; the first run's output:"
            sed 's/^/#   /' "$out" "$err"
            echo "$(date -u +%FT%TZ) ${MPI:-?} $msg" >>"${BUILD:-build/${MPI:-mpich}}/vendor-crashes.log" || true
            continue
        fi
        break
    done
    cat "$out"
    cat "$err" >&2
    rm -f "$out" "$err"
else
    timeout -k 10 "$limit" "$@"
    rc=$?
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "not ok 9999 - watchdog: '$*' on $np ranks did not finish within $limit s (hang?)"
    exit 1
fi
exit "$rc"
