#!/bin/sh
# build-config.sh BUILD — record the configuration a build tree is built with (mk/config.mk pipes
# it in, one KEY=VALUE per line: MPI, MPICC and what its wrapper runs, compilers, flags, SAN) in
# BUILD/config.txt. When it differs from what is recorded there, say what changed on stderr and
# touch BUILD/config.stamp, on which every object depends, so the tree is rebuilt with the new
# configuration instead of silently linking objects built against another MPI.
set -u
build=$1
new=$(cat)
mkdir -p "$build" || exit 1
if [ -f "$build/config.txt" ] && [ -f "$build/config.stamp" ] &&
    [ "$(cat "$build/config.txt")" = "$new" ]; then
    exit 0
fi
if [ -f "$build/config.txt" ]; then
    echo "nbrma: $build was built with another configuration; rebuilding it:" >&2
    printf '%s\n' "$new" >"$build/config.new"
    # One line per setting that changed: KEY: old -> new
    awk -F= 'NR == FNR { old[$1] = substr($0, length($1) + 2); next }
             { v = substr($0, length($1) + 2); seen[$1] = 1
               if (!($1 in old)) print "  " $1 ": (unset) -> " v
               else if (old[$1] != v) print "  " $1 ": " old[$1] " -> " v }
             END { for (k in old) if (!(k in seen)) print "  " k ": " old[k] " -> (unset)" }' \
        "$build/config.txt" "$build/config.new" >&2
    rm -f "$build/config.new"
fi
printf '%s\n' "$new" >"$build/config.txt"
touch "$build/config.stamp"
