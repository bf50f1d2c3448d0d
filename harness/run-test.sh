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
if [ "$np" -gt 0 ]; then
    # shellcheck disable=SC2086 # TEST_RUNNER is a command line, split on purpose
    timeout -k 10 "$limit" ${TEST_RUNNER:-mpiexec.mpich -n} "$np" "$@"
else
    timeout -k 10 "$limit" "$@"
fi
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "not ok 9999 - watchdog: '$*' on $np ranks did not finish within $limit s (hang?)"
    exit 1
fi
exit "$rc"
