#!/bin/sh
# install-deps.sh — install the Debian packages nbrma needs, only those missing. Idempotent.
#   sh ci/install-deps.sh [mpich|openmpi|all]
# Runs apt-get as root, or through sudo; without either it prints the exact command and exits 1.
# On a system without dpkg (a cluster with MPI from modules) it checks the tools and says what
# is missing; build there with `make DEPS=0 MPICC=mpicc TEST_RUNNER="srun -n"`.
set -eu
# Both MPIs are always installed: the suites compare them, and builds sit side by side. The
# argument (the MPI make is building for) is only checked: another MPI (make MPI=mvapich
# MPICC=... MPIEXEC=...) is the user's own; the tools around it are still installed here.
case ${1:-all} in
mpich | openmpi | all) ;;
*[!A-Za-z0-9_.+-]*) echo "install-deps.sh: '$1' is not an MPI name" >&2; exit 2 ;;
*) echo "install-deps.sh: MPI '$1' is not a Debian package here: installing the other tools (and MPICH and Open MPI)" >&2 ;;
esac
mpi_pkgs="mpich libmpich-dev openmpi-bin libopenmpi-dev"
pkgs="$mpi_pkgs make gcc g++ libbenchmark-dev libibverbs-dev libucx-dev pkg-config gnuplot-nox perl python3 valgrind procps coreutils"

if ! command -v dpkg-query >/dev/null 2>&1; then
    missing=""
    for tool in make gcc g++ python3 prove gnuplot; do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    if [ -n "$missing" ]; then
        echo "install-deps.sh: not a Debian system and these tools are missing:$missing" >&2
        echo "install-deps.sh: also needed: an MPI-3 library with mpicc, Google Benchmark (headers + lib)," >&2
        echo "install-deps.sh: libibverbs headers. Then: make DEPS=0 MPICC=... TEST_RUNNER=..." >&2
        exit 1
    fi
    echo "install-deps.sh: not a Debian system; tools found, assuming MPI and Google Benchmark are set up" >&2
    exit 0
fi

missing=""
for p in $pkgs; do
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    case $st in ii*) ;; *) missing="$missing $p" ;; esac
done
if [ -z "$missing" ]; then
    echo "install-deps.sh: all packages present" >&2
    exit 0
fi

echo "install-deps.sh: installing:$missing" >&2
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
else
    echo "install-deps.sh: need root to install packages; run:" >&2
    echo "    sudo apt-get update && sudo $cmd" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
echo "install-deps.sh: done" >&2
