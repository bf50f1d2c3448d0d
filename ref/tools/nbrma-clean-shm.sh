#!/bin/sh
# nbrma-clean-shm.sh — remove the node-shared memory that libnbrma processes which no longer exist
# left behind (docs/ref.md, "Shared memory left by killed jobs").
#
# libnbrma names its POSIX shared-memory objects /nbrma-a-<pid>-<tag>-<k> (control-block arena,
# arena.c) and /nbrma-m-<pid>-<tag>-<k> (MPI_Alloc_mem and MPI_Win_allocate blocks, mem.c) and
# unlinks them at MPI_Finalize and at exit. A process killed by a signal (a watchdog's SIGKILL, a
# crash, MPI_Abort's kill) cannot: its objects stay in /dev/shm, holding memory, as the MPI
# libraries' own segments do. This script removes those whose <pid> is not a live process here.
#
#   nbrma-clean-shm.sh [--dry-run] [--dir DIR]
#     --dry-run   list what would go, remove nothing
#     --dir DIR   where the objects are (default /dev/shm; tests use a scratch directory)
#
# Exit status: 0 done (also when nothing was left), 1 an object could not be removed, 2 usage.
# Only the caller's own objects are considered (root: everyone's). Caveat: a process is "live"
# when /proc/<pid> exists in this pid namespace. Where containers share one /dev/shm across pid
# namespaces, a running job of another container looks dead from here: run it there only when no
# such job runs.
set -u
dir=/dev/shm dry=0
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) dry=1 ;;
    --dir)
        [ $# -ge 2 ] || { echo "nbrma-clean-shm: --dir needs a directory" >&2; exit 2; }
        dir=$2
        shift
        ;;
    --dir=*) dir=${1#--dir=} ;;
    -h | --help)
        sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "nbrma-clean-shm: unknown option '$1' (use --dry-run, --dir DIR)" >&2
        exit 2
        ;;
    esac
    shift
done
[ -d "$dir" ] || { echo "nbrma-clean-shm: '$dir' is not a directory" >&2; exit 2; }
me=$(id -u)
gone=0 kept=0 bytes=0 failed=0
for f in "$dir"/nbrma-a-* "$dir"/nbrma-m-*; do
    [ -f "$f" ] || continue # the pattern itself when nothing matched
    name=${f##*/}
    rest=${name#nbrma-?-}
    pid=${rest%%-*}
    case $pid in '' | *[!0-9]*) continue ;; esac # not one of ours
    [ "$me" = 0 ] || [ "$(stat -c %u "$f" 2>/dev/null)" = "$me" ] || continue
    if [ -d "/proc/$pid" ]; then
        kept=$((kept + 1))
        continue
    fi
    size=$(stat -c %s "$f" 2>/dev/null || echo 0)
    if [ $dry = 1 ]; then
        echo "would remove $f ($size bytes; process $pid is gone)"
    elif rm -f "$f" 2>/dev/null && [ ! -e "$f" ]; then
        echo "removed $f ($size bytes; process $pid is gone)"
    else
        echo "nbrma-clean-shm: could not remove $f" >&2
        failed=$((failed + 1))
        continue
    fi
    gone=$((gone + 1))
    bytes=$((bytes + size))
done
verb=removed
[ $dry = 0 ] || verb="would remove"
echo "nbrma-clean-shm: $verb $gone object(s), $bytes bytes, in $dir; kept $kept of live processes"
[ $failed = 0 ]
