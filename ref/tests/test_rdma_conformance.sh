#!/bin/sh
# test_rdma_conformance.sh — the conformance suite over an RDMA device: every program that runs
# on libnbrma (suites/conformance/testlist's preload=nbrma and nb_* lines), with NBRMA_NET=ucx,
# NBRMA_UCX_TLS=rc,ud,self (UCX's InfiniBand/RoCE transports only: nothing may fall back to shared
# memory or TCP) and NBRMA_RANKS_PER_NODE=1 so that every pair of ranks crosses "nodes". Where
# no RDMA device has an active port (nbr_verbs_probe, asked through `test_verbs --probe`) the run
# is skipped with the reason; the ucx cells of make check cover UCX over shared memory and TCP.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
probe=$BUILD/tests/test_verbs
if [ ! -x "$probe" ]; then
    t_ok 1 "$probe is built (make BUILD=$BUILD)"
    t_done
    exit
fi
if ! why=$("$probe" --probe 2>/dev/null); then
    t_diag "nbr_verbs_probe: $why"
    case $why in
    "no RDMA device"*) echo "1..0 # SKIP RDMA conformance run: no RDMA device here (ibv_devices lists none); UCX runs over sm and tcp in the other cells" ;;
    *) echo "1..0 # SKIP RDMA conformance run: $why" ;;
    esac
    exit 0
fi
t_diag "nbr_verbs_probe: $why"
tmp=$(mktemp -d)
while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    [ -n "$(echo "$line" | tr -d ' \t')" ] || continue
    case $line in
    *preload=nbrma* | nb_*) ;;
    *) continue ;;
    esac
    env="env=NBRMA_NET=ucx env=NBRMA_UCX_TLS=rc,ud,self env=NBRMA_RANKS_PER_NODE=1"
    case $line in
    *" -- "*) echo "${line%% -- *} $env -- ${line#* -- }" ;;
    *) echo "$line $env" ;;
    esac
done <suites/conformance/testlist >"$tmp/testlist"
n=$(wc -l <"$tmp/testlist")
[ ! -f suites/conformance/known-failures ] || cp suites/conformance/known-failures "$tmp/"
TESTLISTS="$tmp/testlist" MPI="$MPI" BUILD="$BUILD" TEST_RUNNER="$TEST_RUNNER" \
    PYTHON="$PYTHON" SAN="${SAN:-}" PROVE="${PROVE:-prove}" sh harness/check.sh >"$tmp/out" 2>&1
st=$?
sed 's/^/# /' "$tmp/out"
t_ok $st "conformance suite over RDMA: $n programs on libnbrma, NBRMA_NET=ucx NBRMA_UCX_TLS=rc,ud,self, one rank per node"
rm -rf "$tmp"
t_done
