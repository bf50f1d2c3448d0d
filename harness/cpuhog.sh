#!/bin/sh
# cpuhog.sh PID — keep one CPU busy while process PID lives: `make check LOAD=k` starts k of these
# per online core (harness/check.sh), so the suite runs as on a shared login node or an
# oversubscribed CI runner. A pure shell loop: nothing to build, nothing to install. It checks
# about ten times a second that PID still exists and ends by itself when it does not, so a hog
# never outlives the run even if check.sh is killed with SIGKILL (check.sh also stops them on
# exit).
parent=${1:?usage: cpuhog.sh PID}
while kill -0 "$parent" 2>/dev/null; do
    i=0
    while [ $i -lt 100000 ]; do i=$((i + 1)); done
done
