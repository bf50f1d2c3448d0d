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
"$tool" --bogus >"$tmp" 2>&1
t_is $? 2 "an unknown argument exits 2"
rm -f "$tmp"
t_done
