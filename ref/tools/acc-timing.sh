#!/bin/sh
# acc-timing.sh BUILD [REPS [ITERS [BYTES...]]] — build ref/tools/acc_timing.c against BUILD's
# libnbrma and run it on 2 ranks for the vendor and the ref implementation (issue 9 item 17).
# MPI=mpich|openmpi picks the launcher and compiler (default from BUILD's name).
set -e
build=${1:?usage: acc-timing.sh BUILD [REPS [ITERS [BYTES...]]]}
shift
case $build in *openmpi*) mpi=openmpi ;; *) mpi=mpich ;; esac
mpi=${MPI:-$mpi}
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(cd "$build/lib" && pwd)
exe=$build/bin/acc_timing
${MPICC:-mpicc.$mpi} -std=c11 -O2 -Wall -Wextra -Werror -I"$top/ref/include" \
    "$top/ref/tools/acc_timing.c" -o "$exe" -L"$lib" -Wl,--no-as-needed -lnbrma -Wl,--as-needed \
    -Wl,-rpath,"$lib"
if [ "$mpi" = openmpi ]; then
    run="mpirun.openmpi --oversubscribe $( [ "$(id -u)" = 0 ] && echo --allow-run-as-root) -n 2"
else
    run="mpiexec.mpich -n 2"
fi
for impl in vendor ref; do
    NBRMA_IMPL=$impl $run "$exe" "$@"
done
