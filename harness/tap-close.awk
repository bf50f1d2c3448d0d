# tap-close.awk — turn the TAP of a test that did not end well into a stream prove reads as one
# failed test with its reason, never as "Bail out!", "Tests out of sequence" or "No plan found".
# Used by run-test.sh on a run that timed out, exited non-zero without a failing point, bailed
# out, or left its TAP out of sequence or short of its plan.
#   awk -v reason='WHY' -v force=0|1 -f tap-close.awk STDOUT-FILE
#   awk -v check=1 -f tap-close.awk STDOUT-FILE   prints "clean" when the stream is well formed
#       (one plan, first or last, matching the points, numbered 1..K in order, no bail out) and
#       has a failing point, "clean-pass" when well formed without one, else "dirty".
# Every test point is renumbered in order (a point two ranks both printed stays two points); a
# "Bail out! MSG" line becomes "not ok N - bail out: MSG"; plan lines are dropped and one plan
# closes the stream. `reason` becomes one more failing point when force=1 (the watchdog killed
# the run) or when no point failed (a crash or an abort after passing points); %K and %P in it are
# replaced with the number of points seen and the plan the test announced ("?" if none).
BEGIN { n = 0; failed = 0; planned = "?"; plans = 0; order = 1; bail = 0; plan_mid = 0 }
/^(not )?ok([ \t]|$)/ {
    n++
    notok = ($0 ~ /^not ok/)
    num = $0
    sub(/^(not )?ok[ \t]*/, "", num)
    if (num !~ /^[0-9]+/ || substr(num, 1, match(num, /[^0-9]|$/) - 1) + 0 != n) order = 0
    if (plans && plan_after) plan_mid = 1 # a point after a closing plan
    rest = $0
    sub(/^(not )?ok[ \t]*[0-9]*/, "", rest)
    if (rest != "" && rest !~ /^[ \t]/) rest = " " rest
    # A TODO point fails without failing the test.
    if (notok && rest !~ /#[ \t]*TODO/) failed++
    if (!check) print (notok ? "not ok " : "ok ") n rest
    next
}
/^Bail out!/ {
    n++
    bail = 1
    failed++
    msg = $0
    sub(/^Bail out![ \t]*/, "", msg)
    if (!check) print "not ok " n " - bail out: " msg
    next
}
/^1\.\.[0-9]+/ {
    p = $0
    sub(/^1\.\./, "", p)
    sub(/[^0-9].*$/, "", p)
    planned = p
    plans++
    plan_after = (n > 0)
    if (check) next
    if ($0 ~ /#/) {
        c = $0
        sub(/^[^#]*/, "", c)
        print c
    }
    next
}
!check { print }
END {
    if (check) {
        clean = plans == 1 && planned + 0 == n && order && !bail && !plan_mid
        print clean ? (failed ? "clean" : "clean-pass") : "dirty"
        exit
    }
    if (force || failed == 0) {
        r = reason
        gsub(/%K/, n, r)
        gsub(/%P/, planned, r)
        n++
        print "not ok " n " - " r
    }
    print "1.." n
}
