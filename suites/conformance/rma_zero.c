/* rma_zero.c — RMA calls that move no byte succeed and change nothing (issue 9 item 13): a count
 * of 0 or a zero-size datatype on either side makes the call a no-op, whatever the other side's
 * count and type, and whatever the displacement (no byte of the target is touched, so there is
 * no range to check). MPI-3.1 §11.3 asks only that the type signatures match, and empty
 * signatures match. Covered: Put and Get with a zero origin or target count and different types
 * on the two sides, Accumulate with a zero-size derived origin type onto MPI_DOUBLE (refused by
 * earlier libnbrma), a zero count of MPI_INT onto MPI_DOUBLE, Get_accumulate onto a zero-size
 * target type, Rput of nothing past the window's end; on MPI_Win_allocate and MPI_Win_create
 * windows, in a lock_all and in a fence epoch. 2 ranks or more. */
#include "conf.h"

#define N 8

static void run(int create, int fence)
{
    double *mem = NULL, *cbuf = NULL;
    MPI_Win win;
    if (create) {
        cbuf = malloc(N * sizeof *cbuf);
        mem = cbuf;
        MPI_Win_create(mem, N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        conf_win_allocate(N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; i++)
        mem[i] = (double)conf_val(1, conf_rank, i);
    MPI_Datatype z;
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_commit(&z);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = conf_right();
    int64_t o[4] = {7, 7, 7, 7}, r[4] = {-1, -1, -1, -1};
    MPI_Request q = MPI_REQUEST_NULL;
    struct {
        const char *what;
        int rc;
    } c[9];
    int n = 0;
    if (fence)
        MPI_Win_fence(0, win);
    else
        MPI_Win_lock_all(0, win);
#define CALL(desc, expr) c[n].what = desc, c[n++].rc = (expr)
    CALL("MPI_Put of 0 MPI_INT64_T into 5 MPI_DOUBLE",
         MPI_Put(o, 0, MPI_INT64_T, t, 0, 5, MPI_DOUBLE, win));
    CALL("MPI_Put of 1 MPI_INT64_T into 0 MPI_INT",
         MPI_Put(o, 1, MPI_INT64_T, t, 0, 0, MPI_INT, win));
    CALL("MPI_Get of 0 MPI_INT from 0 MPI_DOUBLE at displacement 1000",
         MPI_Get(r, 0, MPI_INT, t, 1000, 0, MPI_DOUBLE, win));
    CALL("MPI_Accumulate(SUM) of a zero-size derived type onto 1 MPI_DOUBLE",
         MPI_Accumulate(o, 1, z, t, 0, 1, MPI_DOUBLE, MPI_SUM, win));
    CALL("MPI_Accumulate(SUM) of 0 MPI_INT onto 1 MPI_DOUBLE",
         MPI_Accumulate(o, 0, MPI_INT, t, 0, 1, MPI_DOUBLE, MPI_SUM, win));
    CALL("MPI_Accumulate(REPLACE) of 2 MPI_INT onto 3 of a zero-size type",
         MPI_Accumulate(o, 2, MPI_INT, t, 0, 3, z, MPI_REPLACE, win));
    CALL("MPI_Get_accumulate(SUM) onto 1 zero-size target type",
         MPI_Get_accumulate(o, 1, MPI_INT64_T, r, 1, MPI_INT64_T, t, 0, 1, z, MPI_SUM, win));
    CALL("MPI_Rput of 0 MPI_DOUBLE at displacement N",
         MPI_Rput(o, 0, MPI_DOUBLE, t, N, 0, MPI_DOUBLE, win, &q));
    CALL("MPI_Wait on that request", MPI_Wait(&q, MPI_STATUS_IGNORE));
#undef CALL
    if (fence)
        MPI_Win_fence(0, win);
    else
        MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (c[i].rc != MPI_SUCCESS) {
            char s[400];
            if (bad++ < 4)
                tap_diag("%s returned %s", c[i].what, conf_describe_rc(c[i].rc, s, sizeof s));
        }
    const char *how = create ? "MPI_Win_create" : conf_window_name();
    const char *ep = fence ? "fence" : "lock_all";
    tap_ok(bad == 0, "%s, %s: %d RMA calls that move no byte succeed (%d do not)", how, ep, n, bad);
    double exp[N];
    for (int i = 0; i < N; i++)
        exp[i] = (double)conf_val(1, conf_rank, i);
    int same = conf_check_double(mem, exp, N, "rank %d's window", conf_rank);
    for (int i = 0; i < 4; i++)
        if (r[i] != -1)
            same = 0, tap_diag("result buffer element %d changed to %lld", i, (long long)r[i]);
    tap_ok(same, "%s, %s: ... and change no byte of the window or the result buffer", how, ep);
    MPI_Type_free(&z);
    conf_win_free(&win);
    free(cbuf);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(8);
    for (int create = 0; create < 2; create++)
        for (int fence = 0; fence < 2; fence++)
            run(create, fence);
    return conf_done();
}
