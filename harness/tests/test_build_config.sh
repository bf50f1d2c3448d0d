#!/bin/sh
# test_build_config.sh — any MPI, rebuilt when it changes (issue 23 §B5): MPI=<name> with MPICC and
# MPIEXEC builds into build/<name>/ and writes results/<name>/; another MPI without a wrapper is
# refused with the way out; a built tree whose MPICC, flags or spelling of BUILD change is rebuilt (the configuration
# is recorded in BUILD/config.txt), and not rebuilt when nothing changed.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)
# make from inside make check: the outer make's jobserver, level and variables are not ours.
m() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MPICC -u MPIEXEC -u CFLAGS -u BUILD -u RESULTS -u TEST_RUNNER \
    make --no-print-directory -C "$top" DEPS=0 SAN= "$@" >"$tmp/out" 2>&1; }
name=mympi
[ ! -e "build/$name" ] || name=mympi$$ # never touch a user's own build/mympi
trap 'rm -rf "$tmp" "build/$name"' EXIT

m config MPI=$name MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich
t_like "$tmp/out" "^BUILD=build/$name\$" "MPI=$name MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich builds into build/$name/"
t_like "$tmp/out" "^RESULTS=results/$name\$" "and writes results/$name/"
t_like "$tmp/out" '^TEST_RUNNER=mpiexec.mpich -n$' "and launches with MPIEXEC -n"
m MPI=$name MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich "build/$name/tests/mpi_version"
t_is $? 0 "a program of it builds there"
t_like "$tmp/out" "-DNBH_MPI_NAME='\"$name\"'" "with its name for the JSON (nbrma_mpi)"
t_like "build/$name/config.txt" '^MPICC=mpicc.mpich$' "the configuration is recorded in build/$name/config.txt"
mpiexec.mpich -n 1 "build/$name/tests/mpi_version" >"$tmp/v" 2>&1
t_like "$tmp/v" '^MPICH' "and it runs on that MPI"
m config MPI=other
t_is $? 2 "another MPI without MPICC is refused"
t_like "$tmp/out" 'MPI=other is not mpich or openmpi: give its compiler wrapper and launcher, e.g. make MPI=other MPICC=' \
    "saying what to give"
m config MPI=other MPICC=mpicc.mpich
t_like "$tmp/out" 'MPI=other: give its launcher, MPIEXEC=' "and without a launcher"

# A built tree whose MPICC changes is rebuilt, against the new MPI.
b=$tmp/b
m MPI=$name MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich BUILD="$b" "$b/tests/mpi_version"
t_is $? 0 "a tree built with mpicc.mpich"
ldd "$b/tests/mpi_version" | grep -q libmpich
t_ok $? "links MPICH"
if command -v mpicc.openmpi >/dev/null 2>&1; then
    m MPI=$name MPICC=mpicc.openmpi MPIEXEC=mpirun.openmpi BUILD="$b" "$b/tests/mpi_version"
    t_is $? 0 "built again with MPICC=mpicc.openmpi"
    t_like "$tmp/out" "^nbrma: $b was built with another configuration; rebuilding it:" "make says the configuration changed"
    t_like "$tmp/out" '^  MPICC: mpicc.mpich -> mpicc.openmpi$' "naming what changed"
    t_like "$tmp/out" '^mpicc.openmpi .*-c harness/tests/mpi_version.c' "the object is compiled again"
    ldd "$b/tests/mpi_version" | grep -q 'libmpi\.so'
    t_ok $? "and the program now links Open MPI"
    mpirun.openmpi --oversubscribe --allow-run-as-root -n 1 "$b/tests/mpi_version" >"$tmp/v" 2>&1
    t_like "$tmp/v" '^Open MPI' "and runs on it"
else
    for i in 1 2 3 4 5 6; do t_ok 0 "rebuild with another MPI # SKIP no mpicc.openmpi"; done
fi
last=$(sed -n 's/^MPICC=//p' "$b/config.txt")
m MPI=$name MPICC="$last" MPIEXEC=mpiexec.mpich BUILD="$b" "$b/tests/mpi_version"
t_like "$tmp/out" "is up to date" "nothing changed: nothing is rebuilt"
m MPI=$name MPICC="$last" MPIEXEC=mpiexec.mpich BUILD="$b" CFLAGS="-O1 -g" "$b/tests/mpi_version"
t_like "$tmp/out" '^  CFLAGS: -O2 -g -> -O1 -g$' "new CFLAGS rebuild the tree too"
t_like "$tmp/out" ' -O1 -g -c harness/tests/mpi_version.c' "with the new flags"
# The same tree spelled another way (relative instead of absolute): the dependency files name their
# targets by the spelling they were built with, so it counts as a change and rebuilds.
rel=$(realpath --relative-to="$top" "$b")
m MPI=$name MPICC="$last" MPIEXEC=mpiexec.mpich BUILD="$rel" CFLAGS="-O1 -g" "$rel/tests/mpi_version"
t_like "$tmp/out" "^  BUILD: $b -> $rel\$" "BUILD spelled relatively after absolutely rebuilds the tree, naming both spellings"
t_done
