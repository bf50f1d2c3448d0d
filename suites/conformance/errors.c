/* errors.c — error reporting with MPI_ERRORS_RETURN on the window (classes via MPI_Error_class):
 * RMA to a target rank outside the window's group fails with MPI_ERR_RANK (and reaches a user
 * error handler); MPI_PROC_NULL is a valid target that does nothing. For the other erroneous calls
 * the standard does not require detection, so the test asserts only "if an error is returned, its
 * class is X" and says what happened: unlock/complete/flush without an epoch (MPI_ERR_RMA_SYNC),
 * an invalid lock type (MPI_ERR_LOCKTYPE or MPI_ERR_ARG), MPI_Compare_and_swap on MPI_DOUBLE
 * (MPI_ERR_TYPE), a user-defined op in MPI_Accumulate (MPI_ERR_OP), MPI_Win_attach to a
 * non-dynamic window (MPI_ERR_RMA_FLAVOR), a negative count (MPI_ERR_COUNT). Every case uses a
 * fresh window, since an erroneous call may leave one unusable. RMA beyond the window's size is
 * erroneous but need not be detected; it is not tested here. */
#include "conf.h"

static int *base;
static MPI_Win win;

static void open_win(void)
{
    base = malloc(16 * sizeof(int));
    for (int i = 0; i < 16; i++)
        base[i] = i;
    /* MPI_Win_create: 8-byte CAS on MPI_Win_allocate windows crashes Open MPI 4.1.4 (atomics_cas)
     */
    MPI_Win_create(base, 16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
}

static void close_win(void)
{
    MPI_Win_free(&win);
    free(base);
    nbh_barrier(MPI_COMM_WORLD);
}

/* "if an error is returned, its class is one of cls[0..n)" */
static void class_if_error(int rc, const int *cls, int n, const char *what, const char *expect)
{
    char s[400];
    int c = conf_class(rc), ok = rc == MPI_SUCCESS;
    for (int i = 0; i < n; i++)
        ok |= c == cls[i];
    if (conf_rank == 0 || !ok)
        tap_diag("%s returned %s", what,
                 rc == MPI_SUCCESS ? "MPI_SUCCESS (not detected)"
                                   : conf_describe_rc(rc, s, sizeof s));
    tap_ok(ok, "%s: if an error is returned, its class is %s (detection is not required)", what,
           expect);
}

static void bad_rank(void)
{
    char s[400];
    int v = 1;
    open_win();
    MPI_Win_lock_all(0, win);
    int rc = MPI_Put(&v, 1, MPI_INT, conf_size, 0, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    if (rc != MPI_SUCCESS && conf_class(rc) != MPI_ERR_RANK)
        tap_diag("MPI_Put to rank %d returned %s", conf_size, conf_describe_rc(rc, s, sizeof s));
    tap_ok(rc != MPI_SUCCESS, "MPI_Put to rank %d (= group size) returns an error", conf_size);
    tap_is_long(conf_class(rc), MPI_ERR_RANK, "... of class MPI_ERR_RANK");
    close_win();

    open_win();
    rc = MPI_Win_lock(MPI_LOCK_SHARED, conf_size + 3, 0, win);
    if (rc == MPI_SUCCESS)
        MPI_Win_unlock(conf_size + 3, win);
    else if (conf_class(rc) != MPI_ERR_RANK)
        tap_diag("MPI_Win_lock of rank %d returned %s", conf_size + 3,
                 conf_describe_rc(rc, s, sizeof s));
    tap_is_long(conf_class(rc), MPI_ERR_RANK, "MPI_Win_lock of rank %d fails with MPI_ERR_RANK",
                conf_size + 3);
    close_win();
}

static int handler_calls, handler_class;

static void handler(MPI_Win *w, int *code, ...)
{
    (void)w;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

static void user_handler(void)
{
    open_win();
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(handler, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Errhandler_free(&eh);
    int v;
    MPI_Win_fence(0, win);
    MPI_Get(&v, 1, MPI_INT, -7, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    tap_ok(handler_calls >= 1 && handler_class == MPI_ERR_RANK,
           "a user error handler on the window is called for MPI_Get from rank -7 (calls %d, "
           "class %s)",
           handler_calls, conf_class_name(handler_class));
    close_win();
}

static void proc_null(void)
{
    open_win();
    int v = 77, g = -5, r[5];
    MPI_Win_fence(0, win);
    r[0] = MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    r[1] = MPI_Get(&g, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    r[2] = MPI_Accumulate(&v, 1, MPI_INT, MPI_PROC_NULL, 1, 1, MPI_INT, MPI_SUM, win);
    r[3] = MPI_Win_fence(0, win);
    int ok = 1;
    for (int i = 0; i < 4; i++)
        if (r[i] != MPI_SUCCESS) {
            char s[400];
            tap_diag("call %d of Put/Get/Accumulate/fence returned %s", i,
                     conf_describe_rc(r[i], s, sizeof s));
            ok = 0;
        }
    int exp[16];
    for (int i = 0; i < 16; i++)
        exp[i] = i;
    ok &= conf_check_int(base, exp, 16, "rank %d's window", conf_rank);
    if (g != -5) {
        tap_diag("MPI_Get from MPI_PROC_NULL wrote %d into the origin buffer", g);
        ok = 0;
    }
    tap_ok(ok, "MPI_Put/MPI_Get/MPI_Accumulate with target MPI_PROC_NULL succeed and move nothing");
    close_win();
}

static void sync_errors(void)
{
    const int sync[1] = {MPI_ERR_RMA_SYNC};
    open_win();
    int rc = MPI_Win_unlock(conf_right(), win);
    class_if_error(rc, sync, 1, "MPI_Win_unlock without MPI_Win_lock", "MPI_ERR_RMA_SYNC");
    close_win();

    open_win();
    rc = MPI_Win_complete(win);
    class_if_error(rc, sync, 1, "MPI_Win_complete without MPI_Win_start", "MPI_ERR_RMA_SYNC");
    close_win();

    open_win();
    rc = MPI_Win_flush(conf_right(), win);
    class_if_error(rc, sync, 1, "MPI_Win_flush outside a passive-target epoch", "MPI_ERR_RMA_SYNC");
    close_win();
}

static void bad_lock_type(void)
{
    const int cls[2] = {MPI_ERR_LOCKTYPE, MPI_ERR_ARG};
    open_win();
    int rc = MPI_Win_lock(12345, conf_right(), 0, win);
    if (rc == MPI_SUCCESS)
        MPI_Win_unlock(conf_right(), win);
    class_if_error(rc, cls, 2, "MPI_Win_lock with lock type 12345",
                   "MPI_ERR_LOCKTYPE or MPI_ERR_ARG");
    close_win();
}

static void cas_double(void)
{
    const int cls[1] = {MPI_ERR_TYPE};
    open_win();
    double nv = 1.0, cmp = 0.0, res = -1.0;
    MPI_Win_lock_all(0, win);
    int rc = MPI_Compare_and_swap(&nv, &cmp, &res, MPI_DOUBLE, conf_right(), 0, win);
    MPI_Win_unlock_all(win);
    class_if_error(rc, cls, 1, "MPI_Compare_and_swap on MPI_DOUBLE", "MPI_ERR_TYPE");
    close_win();
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void user_op(void)
{
    const int cls[1] = {MPI_ERR_OP};
    MPI_Op op;
    MPI_Op_create(sum_fn, 1, &op);
    open_win();
    int v = 1;
    MPI_Win_fence(0, win);
    int rc = MPI_Accumulate(&v, 1, MPI_INT, conf_right(), 0, 1, MPI_INT, op, win);
    MPI_Win_fence(0, win);
    class_if_error(rc, cls, 1, "MPI_Accumulate with a user-defined MPI_Op", "MPI_ERR_OP");
    close_win();
    MPI_Op_free(&op);
}

static void attach_static(void)
{
    const int cls[1] = {MPI_ERR_RMA_FLAVOR};
    open_win();
    int extra[4];
    int rc = MPI_Win_attach(win, extra, sizeof extra);
    if (rc == MPI_SUCCESS)
        MPI_Win_detach(win, extra);
    class_if_error(rc, cls, 1, "MPI_Win_attach to an MPI_Win_create window", "MPI_ERR_RMA_FLAVOR");
    close_win();
}

static void negative_count(void)
{
    const int cls[1] = {MPI_ERR_COUNT};
    open_win();
    int v[2] = {0, 0};
    MPI_Win_fence(0, win);
    int rc = MPI_Put(v, -2, MPI_INT, conf_right(), 0, -2, MPI_INT, win);
    MPI_Win_fence(0, win);
    class_if_error(rc, cls, 1, "MPI_Put with count -2", "MPI_ERR_COUNT");
    close_win();
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(13);
    bad_rank();
    user_handler();
    proc_null();
    sync_errors();
    bad_lock_type();
    cas_double();
    user_op();
    attach_static();
    negative_count();
    return conf_done();
}
