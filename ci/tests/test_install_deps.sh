#!/bin/sh
# test_install_deps.sh — ci/install-deps.sh: quiet when everything is present, refuses a bad
# MPI name (another MPI's name is the user's own: MPI=mvapich MPICC=...), and — with a package missing and neither root nor sudo — prints the exact apt-get command
# and exits 1 without touching the system. Fake dpkg-query/id/sudo/apt-get come first in PATH.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tmp=$(mktemp -d)

sh ci/install-deps.sh 'bo/gus' >"$tmp/out" 2>&1
t_is $? 2 "a name that is no MPI name is refused with status 2"
t_like "$tmp/out" "'bo/gus' is not an MPI name" "naming it"

mkdir "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'SH'
#!/bin/sh
# every package installed except gnuplot-nox
for last; do :; done
[ "$last" = gnuplot-nox ] && exit 1
printf 'ii '
SH
printf '#!/bin/sh\necho 1000\n' >"$tmp/bin/id"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/sudo"
printf '#!/bin/sh\necho "apt-get MUST NOT RUN" >&2; exit 99\n' >"$tmp/bin/apt-get"
chmod +x "$tmp/bin/"*

PATH="$tmp/bin:$PATH" sh ci/install-deps.sh mpich >"$tmp/out" 2>&1
t_is $? 1 "missing package, no root, no sudo: exit 1"
t_like "$tmp/out" 'sudo apt-get update && sudo apt-get install -y --no-install-recommends gnuplot-nox$' \
    "it prints the exact command for the missing package"
t_unlike "$tmp/out" 'MUST NOT RUN' "and runs no apt-get"

printf '#!/bin/sh\nprintf "ii "\n' >"$tmp/bin/dpkg-query"
PATH="$tmp/bin:$PATH" sh ci/install-deps.sh >"$tmp/out" 2>&1
t_is $? 0 "everything present: exit 0 even without root"
t_like "$tmp/out" 'all packages present' "and says so"

printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/dpkg-query"
printf '#!/bin/sh\necho 0\n' >"$tmp/bin/id"
printf '#!/bin/sh\necho "apt-get $*" >>"%s/apt.log"\n' "$tmp" >"$tmp/bin/apt-get"
PATH="$tmp/bin:$PATH" sh ci/install-deps.sh >"$tmp/out" 2>&1
t_is $? 0 "as root it installs"
t_like "$tmp/apt.log" '^apt-get update' "after an apt-get update"
t_like "$tmp/apt.log" '^apt-get install .*mpich libmpich-dev openmpi-bin libopenmpi-dev .*libbenchmark-dev .*gnuplot-nox' \
    "both MPIs, Google Benchmark and gnuplot among what it installs"
rm -rf "$tmp"
t_done
