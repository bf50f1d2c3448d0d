# taplib.sh — TAP for shell tests: source it, call t_ok/t_is/t_like, end with t_done.
# Expects TEST_RUNNER ("mpiexec.mpich -n") and BUILD (build/mpich) from make check.
: "${TEST_RUNNER:=mpiexec.mpich -n}" "${BUILD:=build/mpich}" "${PYTHON:=python3}"
_t_n=0
_t_fail=0
# t_ok STATUS DESCRIPTION — STATUS 0 passes (the exit status of the check just run). A
# description containing "# TODO" marks an expected failure: reported, not counted.
t_ok() {
    _t_n=$((_t_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $_t_n - $2"
    else
        echo "not ok $_t_n - $2"
        case $2 in *"# TODO"*) ;; *) _t_fail=$((_t_fail + 1)) ;; esac # TODO: expected to fail
    fi
}
# t_is GOT EXPECTED DESCRIPTION
t_is() {
    [ "$1" = "$2" ]
    _t_st=$?
    t_ok $_t_st "$3"
    [ $_t_st -eq 0 ] || echo "# got '$1', expected '$2'"
}
# t_like FILE REGEX DESCRIPTION — FILE has a line matching the extended regex.
t_like() {
    grep -Eq -- "$2" "$1"
    _t_st=$?
    t_ok $_t_st "$3"
    [ $_t_st -eq 0 ] || { echo "# no line matching /$2/ in:"; sed 's/^/#   /' "$1" | head -20; }
}
t_unlike() {
    ! grep -Eq -- "$2" "$1"
    _t_st=$?
    t_ok $_t_st "$3"
    [ $_t_st -eq 0 ] || { echo "# unexpected line matching /$2/:"; grep -E -- "$2" "$1" | sed 's/^/#   /' | head -5; }
}
t_diag() { echo "# $*"; }
t_done() {
    echo "1..$_t_n"
    [ "$_t_fail" -eq 0 ]
}
# t_limit SECONDS — a limit for a step's own `timeout`, scaled as the test's watchdog is
# (NBRMA_TIMEOUT_SCALE from run-test.sh: TIMEOUT_SCALE times the load per core, 1 to 8; 1 when
# run by hand). A fixed inner limit turns a loaded machine's slowness into a failure that the
# watchdog around it was scaled to forgive: CI under LOAD=1 at load 5.6 on 2 cores took
# lock_loadstore under rmacheck past a fixed 240 s.
t_limit() {
    awk -v t="$1" -v s="${NBRMA_TIMEOUT_SCALE:-1}" 'BEGIN { if (s + 0 < 1) s = 1; l = t * s
        printf "%d", (l == int(l)) ? l : int(l) + 1 }'
}
# mpirun_n N PROG ARGS... — launch under the test runner.
mpirun_n() {
    _np=$1
    shift
    # shellcheck disable=SC2086
    $TEST_RUNNER "$_np" "$@"
}
# t_make ARGS... — run make on this tree from inside make check, as the user's make would: the
# variables given to `make check` (CFLAGS=..., MPICC=...; in MAKEFLAGS) still hold, so the nested
# make sees the configuration the tree was built with (mk/config.mk rebuilds a tree whose
# configuration changes), but not the outer make's jobserver, whose file descriptors prove does
# not pass on.
t_make() {
    MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/(^| )--jobserver-(auth|fds)=[^ ]*//g; s/(^| )-j[0-9]*( |$)/ /g') \
        env -u MAKELEVEL -u MFLAGS make --no-print-directory "$@"
}
