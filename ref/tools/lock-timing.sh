#!/bin/sh
# lock-timing.sh BUILD [LIBNBRMA.so ...] — build ref/tools/lock_timing.c against BUILD and run it
# on 2 ranks with each given libnbrma preloaded in turn, three rounds interleaved so that machine
# drift hits every library alike (default: BUILD's own library only). To compare with an older
# commit: git worktree add /tmp/old COMMIT && make -C /tmp/old MPI=mpich DEPS=0
# build/mpich/lib/libnbrma.so, then pass /tmp/old/build/mpich/lib/libnbrma.so and BUILD's.
# Environment: MPI=mpich|openmpi (default from BUILD's name), N and REPS (lock_timing's).
set -e
build=${1:?usage: lock-timing.sh BUILD [LIBNBRMA.so ...]}
shift
[ -d "$build/lib" ] || { echo "lock-timing.sh: $build/lib does not exist (build first)" >&2; exit 2; }
case $build in *openmpi*) mpi=openmpi ;; *) mpi=mpich ;; esac
mpi=${MPI:-$mpi}
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(cd "$build/lib" && pwd)
[ $# -gt 0 ] || set -- "$lib/libnbrma.so"
for l in "$@"; do
    [ -r "$l" ] || { echo "lock-timing.sh: cannot read $l" >&2; exit 2; }
done
exe=$build/bin/lock_timing
mkdir -p "$build/bin"
${MPICC:-mpicc.$mpi} -std=c11 -O2 -Wall -Wextra -Werror "$top/ref/tools/lock_timing.c" -o "$exe"
if [ "$mpi" = openmpi ]; then
    run="mpirun.openmpi --oversubscribe $( [ "$(id -u)" = 0 ] && echo --allow-run-as-root) -n 2"
else
    run="mpiexec.mpich -n 2"
fi
for round in 1 2 3; do
    for l in "$@"; do
        echo "== round $round: $l"
        NBRMA_IMPL=ref LD_PRELOAD=$l $run "$exe" ${N:-200000} ${REPS:-7}
    done
done
