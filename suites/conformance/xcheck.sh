#!/bin/sh
# xcheck.sh — the randomized cross-check (issue 21): the same random RMA program
# (xcheck_random.c: random derived datatypes, every communication call, every synchronization
# mode, every window flavor, canaries around every buffer) on 4 ranks, run
#   vendor  the MPI library's own RMA
#   ref     libnbrma, one node
#   rpn1    libnbrma, every rank its own virtual node (every pair across nodes)
#   rpn2    libnbrma, two virtual nodes of two ranks (shm pairs and pairs across nodes mixed)
# the virtual-node runs once per transport across nodes (--net: am, and ucx when libnbrma was
# built with UCX; ucx:TLS sets NBRMA_UCX_TLS, libnbrma's UCX_TLS), and compared byte for byte:
# windows, origin buffers and result buffers, including the bytes outside the type maps, after
# every round. The reference is libnbrma on one node; each other configuration must produce
# exactly its bytes.
#   xcheck.sh [ref|vendor] [--seeds LIST] [--rounds R] [--net LIST]
# "ref" (default) checks rpn1 and rpn2 against ref; "vendor" checks the vendor against ref (a
# separate test, so that a vendor bug can be listed as a known vendor failure). A difference is
# reported with the round, rank, buffer and 4 KiB chunk where it first appears, and the
# operations of that round that touch it.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
which=ref seeds="101 202" rounds=6 nets=""
while [ $# -gt 0 ]; do
    case $1 in
    ref | vendor) which=$1 ;;
    --seeds) seeds=$(echo "$2" | tr ',' ' '); shift ;;
    --rounds) rounds=$2; shift ;;
    --net) nets=$(echo "$2" | tr ',' ' '); shift ;;
    *) echo "xcheck.sh: unknown argument '$1' (ref|vendor, --seeds LIST, --rounds R, --net LIST)" >&2; exit 2 ;;
    esac
    shift
done
prog=$BUILD/conformance/xcheck_random
lib=$top/$BUILD/lib/libnbrma.so
[ -x "$prog" ] || { echo "xcheck.sh: $prog is not built" >&2; exit 2; }
ucx=0
"$BUILD/bin/nbrma-settings" 2>/dev/null | grep -q '^UCX: built' && ucx=1
[ -n "$nets" ] || nets="am ucx"
keep=""
for net in $nets; do
    case $net in
    am) keep="$keep $net" ;;
    ucx | ucx:?*)
        if [ $ucx = 1 ]; then keep="$keep $net"; else echo "# $net skipped: libnbrma was built without UCX"; fi ;;
    *) echo "xcheck.sh: --net: '$net' is not am, ucx or ucx:TLS" >&2; exit 2 ;;
    esac
done
nets=$keep
if [ -z "$nets" ] && [ "$which" = ref ]; then
    echo "1..0 # SKIP libnbrma was built without UCX (make UCX=0, or no libucx-dev)"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run NAME SEED ENV... — one configuration; 0 when it completed.
run() {
    name=$1 seed=$2
    shift 2
    env "$@" $TEST_RUNNER 4 "$prog" --seed "$seed" --rounds "$rounds" --out "$tmp/$name" \
        >"$tmp/$name.out" 2>&1
}

# compare NAME — 0 when every rank's hashes equal ref's; else describe the first difference.
compare() {
    st=0
    for r in 0 1 2 3; do
        grep '^H ' "$tmp/ref.$r" >"$tmp/a" 2>/dev/null
        grep '^H ' "$tmp/$1.$r" >"$tmp/b" 2>/dev/null
        if ! cmp -s "$tmp/a" "$tmp/b"; then
            st=1
            first=$(diff "$tmp/a" "$tmp/b" | grep -m1 '^[<>] H ' | cut -c3-)
            set -- "$1" $first
            echo "# rank $r: first difference in round $3, $4 buffer, bytes $5.. (4 KiB chunk)"
            if [ "$4" = window ]; then
                echo "# operations of round $3 toward rank $r:"
                cat "$tmp"/ref.[0-3] | grep "^O $3 .* -> $r off" | sed 's/^/#   /' | head -20
            else
                echo "# rank $r's operations of round $3:"
                grep "^O $3 " "$tmp/ref.$r" | sed 's/^/#   /' | head -20
            fi
            grep "^R $3 " "$tmp/ref.0" | sed 's/^/#   /'
        fi
    done
    return $st
}

for seed in $seeds; do
    rm -f "$tmp"/*.[0-3]
    # ran NAME DESCRIPTION — a TAP point for a run's exit status (its output when it failed)
    ran() {
        st=$?
        t_ok $st "$2"
        [ $st -eq 0 ] || sed 's/^/#   /' "$tmp/$1.out" | tail -20
    }
    run ref "$seed" LD_PRELOAD="$lib" NBRMA_IMPL=ref
    ran ref "seed $seed: libnbrma on one node runs $rounds rounds"
    if [ "$which" = vendor ]; then
        run vendor "$seed"
        ran vendor "seed $seed: the vendor MPI runs $rounds rounds"
        compare vendor
        t_ok $? "seed $seed: the vendor MPI leaves every byte as libnbrma does"
        continue
    fi
    for net in $nets; do
        tls=${net#ucx:}
        [ "$tls" != "$net" ] || tls=${NBRMA_UCX_TLS:-}
        for rpn in 1 2; do
            n=rpn$rpn-$(echo "$net" | tr -c 'a-z0-9\n' '_')
            run "$n" "$seed" LD_PRELOAD="$lib" NBRMA_IMPL=ref NBRMA_RANKS_PER_NODE=$rpn \
                NBRMA_NET="${net%%:*}" ${tls:+NBRMA_UCX_TLS=$tls}
            ran "$n" "seed $seed: libnbrma across virtual nodes of $rpn rank(s) over $net runs $rounds rounds"
            compare "$n"
            t_ok $? "seed $seed: across virtual nodes of $rpn rank(s) over $net every byte is as on one node"
        done
    done
done
t_done
