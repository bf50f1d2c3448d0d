#!/bin/sh
# callgrind-put.sh — instructions per MPI_Put on the reference's fast path (8 bytes, allocated
# window, lock_all, predefined contiguous type), counted by callgrind: deterministic, unlike
# time. Usage: ref/tools/callgrind-put.sh [BUILD] ; prints "put fast path: N instructions".
set -eu
build=${1:-build/mpich}
mpicc=${MPICC:-mpicc.mpich}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$mpicc -O2 -o "$tmp/put_path" "$(dirname "$0")/put_path.c" -L"$build/lib" -Wl,--no-as-needed \
    -lnbrma -Wl,--as-needed -Wl,-rpath,"$(cd "$build/lib" && pwd)"
count() { # count N -> total instructions inside MPI_Put for N calls
    NBRMA_IMPL=ref valgrind --tool=callgrind --toggle-collect=MPI_Put \
        --callgrind-out-file="$tmp/cg.$1" "$tmp/put_path" "$1" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$tmp/cg.$1"
}
a=$(count 1000)
b=$(count 11000)
echo "put fast path: $(( (b - a) / 10000 )) instructions per MPI_Put (callgrind, 8 bytes, lock_all)"
