#!/bin/sh
# test_quiet.sh — libnbrma says nothing on stderr about errors the application handles itself
# (MPI_ERRORS_RETURN): test_errors provokes 50-odd of them. NBRMA_VERBOSE=1 prints each one, and
# an error about to abort the job under MPI_ERRORS_ARE_FATAL is printed even without it where the
# MPI library's abort message would not carry libnbrma's text (issue #9 item 11).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
$TEST_RUNNER 2 "$BUILD/tests/test_errors" >"$tmp/out" 2>"$tmp/err"
t_ok $? "test_errors passes"
t_unlike "$tmp/err" '^libnbrma: ' "with MPI_ERRORS_RETURN nothing reaches stderr"
NBRMA_VERBOSE=1 $TEST_RUNNER 2 "$BUILD/tests/test_errors" >"$tmp/out" 2>"$tmp/err"
t_like "$tmp/err" '^libnbrma: MPI_Win_detach \(rank [0-9]\): ' "NBRMA_VERBOSE=1 prints each error, naming the call and rank"
rm -rf "$tmp"
t_done
