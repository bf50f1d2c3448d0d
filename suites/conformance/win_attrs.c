/* win_attrs.c — window attributes and handles: the predefined attributes (MPI_WIN_BASE, SIZE,
 * DISP_UNIT, CREATE_FLAVOR, MODEL) of all four flavors, a user keyval whose delete callback
 * runs on replace, delete and MPI_Win_free, the window's group, info hints set at creation and
 * with MPI_Win_set_info, Fortran handle conversion, and error handlers (default, set/get, a user
 * handler reached through MPI_Win_call_errhandler). Window names are in win_name.c. */
#include "conf.h"

static const char *model_name(int m)
{
    return m == MPI_WIN_UNIFIED    ? "MPI_WIN_UNIFIED"
           : m == MPI_WIN_SEPARATE ? "MPI_WIN_SEPARATE"
                                   : "?";
}

/* Check the predefined attributes of `win` against what it was created with. */
static void check_attrs(MPI_Win win, const char *what, void *base, MPI_Aint size, int disp_unit,
                        int flavor, int check_disp_unit)
{
    void *gbase;
    MPI_Aint *gsize;
    int *gdisp, *gflavor, *gmodel, f1, f2, f3, f4, f5;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &gbase, &f1);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &gsize, &f2);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &gdisp, &f3);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &gflavor, &f4);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &gmodel, &f5);
    int ok = f1 && f2 && f3 && f4 && f5;
    if (!ok) {
        tap_diag("%s: attribute flags base %d size %d disp_unit %d flavor %d model %d", what, f1,
                 f2, f3, f4, f5);
    } else {
        if (gbase != base || *gsize != size || (check_disp_unit && *gdisp != disp_unit) ||
            *gflavor != flavor) {
            tap_diag("%s: base %p size %ld disp_unit %d flavor %d; expected %p %ld %d %d", what,
                     gbase, (long)*gsize, *gdisp, *gflavor, base, (long)size, disp_unit, flavor);
            ok = 0;
        }
    }
    tap_ok(ok, "%s: MPI_WIN_BASE, MPI_WIN_SIZE, %sMPI_WIN_CREATE_FLAVOR are as created", what,
           check_disp_unit ? "MPI_WIN_DISP_UNIT, " : "");
    int m = f5 ? *gmodel : -1;
    if (conf_rank == 0)
        tap_diag("%s: memory model %s", what, model_name(m));
    tap_ok(m == MPI_WIN_UNIFIED || m == MPI_WIN_SEPARATE,
           "%s: MPI_WIN_MODEL is MPI_WIN_UNIFIED or MPI_WIN_SEPARATE", what);
}

static void flavors(void)
{
    MPI_Win win;
    char *buf = malloc(64);
    MPI_Win_create(buf, 64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    check_attrs(win, "Win_create", buf, 64, 4, MPI_WIN_FLAVOR_CREATE, 1);
    MPI_Win_free(&win);
    free(buf);

    void *base;
    MPI_Win_allocate(128, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    check_attrs(win, "Win_allocate", base, 128, 8, MPI_WIN_FLAVOR_ALLOCATE, 1);
    MPI_Win_free(&win);

    MPI_Comm shm = conf_shm_comm();
    int me;
    MPI_Comm_rank(shm, &me);
    MPI_Win_allocate_shared(16 * (me + 1), 2, MPI_INFO_NULL, shm, &base, &win);
    check_attrs(win, "Win_allocate_shared", base, 16 * (me + 1), 2, MPI_WIN_FLAVOR_SHARED, 1);
    MPI_Win_free(&win);
    MPI_Comm_free(&shm);

    /* MPI-3.1 11.2.4: a dynamic window's base is MPI_BOTTOM and its size 0. */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    check_attrs(win, "Win_create_dynamic", MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, 0);
    MPI_Win_free(&win);
}

static struct {
    int copies, deletes;
    void *last_val, *last_extra;
    MPI_Win last_win;
} cb;

static int copy_fn(MPI_Win oldwin, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldwin, (void)keyval, (void)extra;
    cb.copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)keyval;
    cb.deletes++;
    cb.last_val = val;
    cb.last_extra = extra;
    cb.last_win = win;
    return MPI_SUCCESS;
}

static void keyvals(void)
{
    static int v1 = 1, v2 = 2, v3 = 3, extra = 42;
    int key, flag;
    void *val;
    MPI_Win win;
    void *base;
    MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_create_keyval(copy_fn, delete_fn, &key, &extra);

    MPI_Win_get_attr(win, key, &val, &flag);
    tap_ok(!flag, "MPI_Win_get_attr of an unset keyval returns flag = 0");
    MPI_Win_set_attr(win, key, &v1);
    MPI_Win_get_attr(win, key, &val, &flag);
    tap_ok(flag && val == &v1, "MPI_Win_set_attr / MPI_Win_get_attr round-trip the pointer");

    MPI_Win_set_attr(win, key, &v2);
    tap_ok(cb.deletes == 1 && cb.last_val == &v1 && cb.last_extra == &extra && cb.last_win == win,
           "replacing an attribute calls the delete callback once with the old value and the "
           "extra_state");
    MPI_Win_delete_attr(win, key);
    MPI_Win_get_attr(win, key, &val, &flag);
    tap_ok(cb.deletes == 2 && cb.last_val == &v2 && !flag,
           "MPI_Win_delete_attr calls the delete callback and removes the attribute");

    MPI_Win_set_attr(win, key, &v3);
    MPI_Win_free(&win);
    if (cb.deletes != 3 || cb.last_val != &v3)
        tap_diag("deletes %d, last value %p (expected 3, %p)", cb.deletes, cb.last_val,
                 (void *)&v3);
    tap_ok(cb.deletes == 3 && cb.last_val == &v3, "MPI_Win_free calls the delete callback");
    tap_is_long(cb.copies, 0, "the copy callback was never called (windows are not duplicated)");
    MPI_Win_free_keyval(&key);
    tap_ok(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval sets the keyval to MPI_KEYVAL_INVALID");
}

static void group(void)
{
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, conf_size - conf_rank, &rev);
    MPI_Win win;
    void *base;
    MPI_Win_allocate(8, 1, MPI_INFO_NULL, rev, &base, &win);
    MPI_Group wg, cg;
    MPI_Win_get_group(win, &wg);
    MPI_Comm_group(rev, &cg);
    int res = MPI_UNEQUAL;
    MPI_Group_compare(wg, cg, &res);
    if (res != MPI_IDENT)
        tap_diag("MPI_Group_compare gave %d, MPI_IDENT is %d", res, MPI_IDENT);
    tap_ok(res == MPI_IDENT,
           "MPI_Win_get_group is MPI_IDENT to the (reversed) communicator's group");
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    MPI_Win_free(&win);
    MPI_Comm_free(&rev);
}

static void show_info(MPI_Win win, const char *when)
{
    MPI_Info info = MPI_INFO_NULL;
    MPI_Win_get_info(win, &info);
    char v1[MPI_MAX_INFO_VAL + 1] = "(unset)", v2[MPI_MAX_INFO_VAL + 1] = "(unset)";
    int f;
    if (info != MPI_INFO_NULL) {
        MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, v1, &f);
        if (!f)
            strcpy(v1, "(unset)");
        MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL, v2, &f);
        if (!f)
            strcpy(v2, "(unset)");
    }
    if (conf_rank == 0)
        tap_diag("%s: MPI_Win_get_info says accumulate_ordering=%s no_locks=%s", when, v1, v2);
    tap_ok(info != MPI_INFO_NULL, "%s: MPI_Win_get_info returns an info object", when);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

static void infos(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win win;
    int *base;
    MPI_Win_allocate(8 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    show_info(win, "created with no_locks=true accumulate_ordering=none");
    int out[2] = {conf_rank, -conf_rank}, back[2];
    MPI_Win_fence(0, win);
    MPI_Put(out, 2, MPI_INT, conf_right(), 0, 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(back, 2, MPI_INT, conf_right(), 0, 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    tap_ok(conf_check_int(back, out, 2, "what was read back from rank %d", conf_right()),
           "a window with no_locks=true, accumulate_ordering=none serves fence put/get");
    MPI_Win_free(&win);

    MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    show_info(win, "default window");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "rar,raw");
    MPI_Info_set(info, "no_locks", "false");
    int rc = MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    char s[300];
    if (rc != MPI_SUCCESS)
        tap_diag("MPI_Win_set_info: %s", conf_describe_rc(rc, s, sizeof s));
    tap_ok(rc == MPI_SUCCESS, "MPI_Win_set_info(accumulate_ordering=rar,raw no_locks=false) "
                              "succeeds");
    show_info(win, "after MPI_Win_set_info");
    MPI_Win_free(&win);
}

static void fortran_handles(MPI_Win win)
{
    MPI_Fint f = MPI_Win_c2f(win);
    tap_ok(MPI_Win_f2c(f) == win, "MPI_Win_f2c(MPI_Win_c2f(win)) == win");
    tap_ok(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL,
           "MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL");
}

static int handler_calls, handler_code;
static MPI_Win handler_win;

static void user_handler(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

static void errhandlers(MPI_Win win)
{
    MPI_Errhandler eh;
    MPI_Win_get_errhandler(win, &eh);
    tap_ok(eh == MPI_ERRORS_ARE_FATAL, "a new window's error handler is MPI_ERRORS_ARE_FATAL");
    MPI_Errhandler_free(&eh);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_get_errhandler(win, &eh);
    tap_ok(eh == MPI_ERRORS_RETURN, "MPI_Win_set_errhandler / get_errhandler: MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    MPI_Errhandler mine;
    MPI_Win_create_errhandler(user_handler, &mine);
    MPI_Win_set_errhandler(win, mine);
    MPI_Errhandler_free(&mine); /* the window keeps its reference */
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    tap_ok(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_win == win,
           "MPI_Win_call_errhandler invokes a user handler with the window and the code "
           "(calls %d, code %d)",
           handler_calls, handler_code);
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(26);
    flavors();
    MPI_Win win;
    void *base;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    keyvals();
    group();
    infos();
    fortran_handles(win);
    errhandlers(win);
    MPI_Win_free(&win);
    return conf_done();
}
