#!/bin/sh
# run-test.sh — run one test under a watchdog, as prove sees it.
#   run-test.sh NPROCS TIMEOUT PROGRAM [ARGS...]
# NPROCS > 0 launches PROGRAM with "$TEST_RUNNER NPROCS"; 0 runs it directly (scripts that launch
# MPI themselves). A test still running after TIMEOUT seconds is killed and reported as
# "not ok - watchdog", so a hang fails the run instead of stalling CI.
set -u
np=$1 limit=$2
shift 2
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
