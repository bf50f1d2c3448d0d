/* acc_fetch.c — the fetching accumulates: MPI_Get_accumulate returns the target's previous
 * contents (SUM, REPLACE as an atomic swap, MAX, and MPI_NO_OP as an atomic read that changes
 * nothing), also under fence; MPI_Fetch_and_op on MPI_INT64_T and MPI_DOUBLE (SUM, REPLACE,
 * NO_OP, MIN/MAX) returns the old value each time. Each rank works on its right neighbour's
 * elements, which nobody else touches, so every result is deterministic. */
#include "conf.h"

#define N 16

static int64_t *base;
static MPI_Win win;
static int right;

/* Our region of the right neighbour is elements [0, 8) of int64 and the doubles at [8, 16). */
static void init_window(void)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    for (int i = 0; i < 8; i++)
        base[i] = conf_val(1, conf_rank, i);
    double *d = (double *)(base + 8);
    for (int i = 0; i < 8; i++)
        d[i] = conf_val(1, conf_rank, i) + 0.5;
    MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);
}

static void get_accumulate(void)
{
    int64_t add[4] = {1, 2, 3, 4}, old[4], now[4], again[4], exp_old[4], exp_now[4];
    for (int i = 0; i < 4; i++) {
        exp_old[i] = conf_val(1, right, i);
        exp_now[i] = exp_old[i] + add[i];
    }
    MPI_Win_lock_all(0, win);
    MPI_Get_accumulate(add, 4, MPI_INT64_T, old, 4, MPI_INT64_T, right, 0, 4, MPI_INT64_T, MPI_SUM,
                       win);
    MPI_Win_flush(right, win);
    tap_ok(conf_check_i64(old, exp_old, 4, "the fetched values from rank %d", right),
           "MPI_Get_accumulate(SUM) on 4 x MPI_INT64_T returns the previous values");
    MPI_Get_accumulate(NULL, 0, MPI_INT64_T, now, 4, MPI_INT64_T, right, 0, 4, MPI_INT64_T,
                       MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    MPI_Get_accumulate(NULL, 0, MPI_INT64_T, again, 4, MPI_INT64_T, right, 0, 4, MPI_INT64_T,
                       MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    int ok = conf_check_i64(now, exp_now, 4, "the first MPI_NO_OP read of rank %d", right);
    ok &= conf_check_i64(again, exp_now, 4, "the second MPI_NO_OP read of rank %d", right);
    tap_ok(ok, "MPI_Get_accumulate(MPI_NO_OP) reads the sums and changes nothing");

    /* REPLACE: an atomic swap of 4 doubles. */
    double nd[4], od[4], rd[4], eo[4];
    for (int i = 0; i < 4; i++) {
        nd[i] = conf_val(2, conf_rank, i) + 0.25;
        eo[i] = conf_val(1, right, i) + 0.5;
    }
    MPI_Get_accumulate(nd, 4, MPI_DOUBLE, od, 4, MPI_DOUBLE, right, 8, 4, MPI_DOUBLE, MPI_REPLACE,
                       win);
    MPI_Win_flush(right, win);
    MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, rd, 4, MPI_DOUBLE, right, 8, 4, MPI_DOUBLE, MPI_NO_OP,
                       win);
    MPI_Win_flush(right, win);
    ok = conf_check_double(od, eo, 4, "the swapped-out values of rank %d", right);
    ok &= conf_check_double(rd, nd, 4, "rank %d's elements after the swap", right);
    tap_ok(ok, "MPI_Get_accumulate(MPI_REPLACE) swaps 4 doubles and returns the old ones");

    /* MAX: 2 of 4 elements are raised. */
    double mx[4] = {0, 1e9, 0, 1e9}, om[4], after[4], em[4];
    MPI_Get_accumulate(mx, 4, MPI_DOUBLE, om, 4, MPI_DOUBLE, right, 8, 4, MPI_DOUBLE, MPI_MAX, win);
    MPI_Win_flush(right, win);
    MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, after, 4, MPI_DOUBLE, right, 8, 4, MPI_DOUBLE,
                       MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    for (int i = 0; i < 4; i++)
        em[i] = mx[i] > nd[i] ? mx[i] : nd[i];
    ok = conf_check_double(om, nd, 4, "the values fetched by MPI_MAX from rank %d", right);
    ok &= conf_check_double(after, em, 4, "rank %d's elements after MPI_MAX", right);
    tap_ok(ok, "MPI_Get_accumulate(MPI_MAX) on doubles returns the old values, keeps the maxima");
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);
}

static void get_accumulate_fence(void)
{
    init_window();
    int64_t add[2] = {10, 20}, old[2] = {-1, -1}, exp[2];
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(add, 2, MPI_INT64_T, old, 2, MPI_INT64_T, right, 4, 2, MPI_INT64_T, MPI_SUM,
                       win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 2; i++)
        exp[i] = conf_val(1, right, 4 + i);
    int ok = conf_check_i64(old, exp, 2, "the values fetched from rank %d", right);
    for (int i = 0; i < 2; i++)
        exp[i] = conf_val(1, conf_rank, 4 + i) + add[i];
    ok &= conf_check_i64(base + 4, exp, 2, "rank %d's elements 4..5", conf_rank);
    tap_ok(ok, "fence epoch: MPI_Get_accumulate(SUM) fetches the old values and adds");
    MPI_Win_fence(0, win);
}

static void fetch_and_op(void)
{
    init_window();
    MPI_Win_lock_all(0, win);
    int64_t one = 7, r[3];
    for (int k = 0; k < 3; k++) {
        MPI_Fetch_and_op(&one, &r[k], MPI_INT64_T, right, 0, MPI_SUM, win);
        MPI_Win_flush(right, win);
    }
    int64_t e = conf_val(1, right, 0), exp[3] = {e, e + 7, e + 14};
    tap_ok(conf_check_i64(r, exp, 3, "the values fetched from rank %d", right),
           "MPI_Fetch_and_op(SUM, MPI_INT64_T) three times returns v, v+7, v+14");

    double h = 0.5, d[3];
    for (int k = 0; k < 3; k++) {
        MPI_Fetch_and_op(&h, &d[k], MPI_DOUBLE, right, 8, MPI_SUM, win);
        MPI_Win_flush(right, win);
    }
    double de = conf_val(1, right, 0) + 0.5, dexp[3] = {de, de + 0.5, de + 1.0};
    tap_ok(conf_check_double(d, dexp, 3, "the doubles fetched from rank %d", right),
           "MPI_Fetch_and_op(SUM, MPI_DOUBLE) three times returns v, v+0.5, v+1");

    int64_t nv = conf_val(3, conf_rank, 0), swapped = 0, readback = 0;
    MPI_Fetch_and_op(&nv, &swapped, MPI_INT64_T, right, 1, MPI_REPLACE, win);
    MPI_Win_flush(right, win);
    MPI_Fetch_and_op(NULL, &readback, MPI_INT64_T, right, 1, MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    int ok = swapped == conf_val(1, right, 1) && readback == nv;
    if (!ok)
        tap_diag("swap returned %lld (expected %lld), then NO_OP read %lld (expected %lld)",
                 (long long)swapped, (long long)conf_val(1, right, 1), (long long)readback,
                 (long long)nv);
    tap_ok(ok, "MPI_Fetch_and_op(MPI_REPLACE) swaps, MPI_Fetch_and_op(MPI_NO_OP) reads");

    double lo = -1e300, hi = 1e300, o1, o2, fin;
    MPI_Fetch_and_op(&lo, &o1, MPI_DOUBLE, right, 9, MPI_MIN, win);
    MPI_Win_flush(right, win);
    MPI_Fetch_and_op(&hi, &o2, MPI_DOUBLE, right, 9, MPI_MAX, win);
    MPI_Win_flush(right, win);
    MPI_Fetch_and_op(NULL, &fin, MPI_DOUBLE, right, 9, MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    ok = o1 == conf_val(1, right, 1) + 0.5 && o2 == -1e300 && fin == 1e300;
    if (!ok)
        tap_diag("MIN fetched %g, MAX fetched %g, final %g", o1, o2, fin);
    tap_ok(ok, "MPI_Fetch_and_op(MPI_MIN) then (MPI_MAX) on a double return the old values");
    MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    right = conf_right();
    tap_plan(9);
    conf_win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    init_window();
    get_accumulate();
    get_accumulate_fence();
    fetch_and_op();
    conf_win_free(&win);
    return conf_done();
}
