#!/bin/sh
# test_clean_shm.sh — ref/tools/nbrma-clean-shm.sh (make clean-shm) removes the shared-memory
# objects of processes that are gone, and only those: in a scratch directory, objects named as
# arena.c and mem.c name them for a dead process go, a live process's stay, other files stay;
# --dry-run removes nothing; bad options exit 2 naming what was wrong.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tool=ref/tools/nbrma-clean-shm.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/shm
mkdir "$d"
# a pid that is gone: a child that has exited and been waited for
sh -c 'exit 0' &
dead=$!
wait $dead
[ ! -d "/proc/$dead" ] || dead=999999999 # reused at once (unlikely): a pid no kernel hands out
live=$$
head -c 4096 /dev/zero >"$d/nbrma-a-$dead-0badf00d-0"
head -c 1000 /dev/zero >"$d/nbrma-m-$dead-0badf00d-3"
: >"$d/nbrma-a-$live-cafef00d-0"
: >"$d/nbrma-a-notapid-x-0"
: >"$d/other-file"

# the names the library makes are the ones the tool parses
grep -q '"/nbrma-a-%d-%08x-%d"' ref/src/arena.c && grep -q '"/nbrma-m-%d-%08x-%u"' ref/src/mem.c
t_ok $? "arena.c and mem.c name their objects nbrma-{a,m}-<pid>-<tag>-<k>"

sh "$tool" --dry-run --dir "$d" >"$tmp/out" 2>&1
t_ok $? "--dry-run exits 0"
t_like "$tmp/out" "would remove $d/nbrma-a-$dead-0badf00d-0 \\(4096 bytes; process $dead is gone\\)" \
    "--dry-run lists the dead process's arena object"
t_like "$tmp/out" "would remove 2 object\\(s\\), 5096 bytes, in $d; kept 1 of live processes" \
    "and sums up: 2 objects, their bytes, 1 kept"
t_is "$(ls "$d" | wc -l)" 5 "--dry-run removes nothing"

sh "$tool" --dir="$d" >"$tmp/out" 2>&1
t_ok $? "a real run exits 0"
t_ok "$([ ! -e "$d/nbrma-a-$dead-0badf00d-0" ] && [ ! -e "$d/nbrma-m-$dead-0badf00d-3" ]; echo $?)" \
    "the dead process's objects (arena and MPI_Alloc_mem) are gone"
t_ok "$([ -e "$d/nbrma-a-$live-cafef00d-0" ]; echo $?)" "a live process's object stays"
t_ok "$([ -e "$d/nbrma-a-notapid-x-0" ] && [ -e "$d/other-file" ]; echo $?)" \
    "files that are not libnbrma's objects stay"
t_like "$tmp/out" "removed 2 object\\(s\\), 5096 bytes" "the summary says what went"

sh "$tool" --dir "$d" >"$tmp/out" 2>&1
t_like "$tmp/out" "removed 0 object\\(s\\), 0 bytes" "run again: nothing left to remove"

sh "$tool" --bogus >"$tmp/out" 2>&1
st=$?
t_is $st 2 "an unknown option exits 2"
t_like "$tmp/out" "unknown option '--bogus'" "naming it"
sh "$tool" --dir "$tmp/nowhere" >"$tmp/out" 2>&1
st=$?
t_is $st 2 "a missing directory exits 2"
t_like "$tmp/out" "'$tmp/nowhere' is not a directory" "naming it"
sh "$tool" --dir >"$tmp/out" 2>&1
t_like "$tmp/out" "--dir needs a directory" "--dir without its argument is refused"
t_done
