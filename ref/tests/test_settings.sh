#!/bin/sh
# test_settings.sh — nbrma-settings prints every NBRMA_* setting of the table with its value
# from the environment, docs/ref.md documents each one, and a malformed value is refused with a
# message naming it (the default stays in force).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" && . harness/taplib.sh
tool=$BUILD/bin/nbrma-settings
tmp=$(mktemp)
"$tool" >"$tmp" 2>&1
t_ok $? "nbrma-settings runs"
names=$(sed -n 's/^\(NBRMA_[A-Z_]*\) .*/\1/p' "$tmp")
t_ok $([ "$(echo "$names" | wc -w)" -ge 5 ]; echo $?) "it lists the settings: $(echo $names)"
for n in $names; do
    grep -q "\`$n\`" docs/ref.md
    t_ok $? "docs/ref.md documents $n"
done
NBRMA_SPIN=123 "$tool" >"$tmp" 2>&1
t_like "$tmp" '^NBRMA_SPIN +123 ' "a value from the environment is shown"
NBRMA_SPIN=fast "$tool" >"$tmp" 2>&1
t_like "$tmp" "NBRMA_SPIN='fast' is not a non-negative integer" "a malformed value is refused, naming it"
t_like "$tmp" '^NBRMA_SPIN +0 ' "and the default stays in force"
NBRMA_IMPL=magic "$tool" >"$tmp" 2>&1
t_like "$tmp" "NBRMA_IMPL='magic' is not ref or vendor" "an unknown implementation is refused"
NBRMA_RELAX=nap "$tool" >"$tmp" 2>&1
t_like "$tmp" "NBRMA_RELAX='nap' is not auto, yield, sleep or spin" "an unknown wait policy is refused, naming it"
t_like "$tmp" '^NBRMA_RELAX +auto ' "and auto stays in force"
NBRMA_RELAX=spin NBRMA_RELAX_NS=5000000000 "$tool" >"$tmp" 2>&1
t_like "$tmp" '^NBRMA_RELAX +spin ' "a known wait policy is taken"
t_like "$tmp" 'NBRMA_RELAX_NS=5000000000 is a second or more' "a nap of a second or more is refused"
"$tool" --bogus >"$tmp" 2>&1
t_is $? 2 "an unknown argument exits 2"
# What carries traffic between nodes (issue 22): the UCX version always; with --net the
# transports toward a peer (built with UCX) and the RDMA devices libibverbs sees.
"$tool" >"$tmp" 2>&1
t_like "$tmp" '^UCX: (built with [0-9]+\.[0-9]+, running [0-9.]+|not built in)' "the UCX version (or its absence) is shown"
UCX_TLS=tcp "$tool" --net >"$tmp" 2>&1
t_ok $? "nbrma-settings --net runs"
t_like "$tmp" '^  UCX_TLS=tcp' "UCX's own variables are shown as set"
NBRMA_UCX_TLS=tcp "$tool" --net >"$tmp" 2>&1
t_like "$tmp" "NBRMA_UCX_TLS=tcp \\(libnbrma's UCX\\)" "NBRMA_UCX_TLS, for libnbrma's UCX alone, is shown"
t_like "$tmp" '^RDMA devices' "the RDMA devices libibverbs sees (or none) are listed"
if grep -q '^UCX: built' "$tmp"; then
    t_like "$tmp" 'tcp/' "with UCX_TLS=tcp the transport toward a peer is tcp"
fi
rm -f "$tmp"
t_done
