/* win_create.c — MPI_Win_create over malloc'd memory: Put and Get round trips between ring
 * neighbours under fence with disp_unit = sizeof(double) (target_disp counts elements), with
 * disp_unit 1 (byte displacements), with a different disp_unit on each rank (the target's unit
 * scales the displacement), with a rank exposing no memory, and on a communicator whose ranks
 * differ from MPI_COMM_WORLD's (target ranks are ranks of the window's group). */
#include "conf.h"

#define N 64

static void disp_unit_double(void)
{
    int right = conf_right(), left = conf_left();
    double *buf = malloc(N * sizeof *buf);
    conf_fill_double(buf, N, 1, conf_rank);
    MPI_Win win;
    MPI_Win_create(buf, N * sizeof *buf, sizeof *buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    double got[16], exp[16], out[16];
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Get(got, 16, MPI_DOUBLE, right, 8, 16, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 16; i++)
        exp[i] = (double)conf_val(1, right, 8 + i) + 0.25;
    tap_ok(conf_check_double(got, exp, 16, "the MPI_Get result from rank %d", right),
           "Win_create, disp_unit 8: MPI_Get of 16 doubles at target_disp 8 reads elements 8..23");

    conf_fill_double(out, 16, 2, conf_rank);
    MPI_Put(out, 16, MPI_DOUBLE, left, 32, 16, MPI_DOUBLE, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    double want[N];
    for (int i = 0; i < N; i++)
        want[i] = i >= 32 && i < 48 ? (double)conf_val(2, right, i - 32) + 0.25
                                    : (double)conf_val(1, conf_rank, i) + 0.25;
    tap_ok(conf_check_double(buf, want, N, "rank %d's window", conf_rank),
           "Win_create, disp_unit 8: MPI_Put of 16 doubles at target_disp 32 writes elements "
           "32..47 and nothing else");
    MPI_Win_free(&win);
    free(buf);
}

static void disp_unit_byte(void)
{
    int right = conf_right(), left = conf_left();
    int *buf = malloc(N * sizeof *buf);
    conf_fill_int(buf, N, 1, conf_rank);
    MPI_Win win;
    MPI_Win_create(buf, N * sizeof *buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int out[8], back[8];
    conf_fill_int(out, 8, 3, conf_rank);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(out, 8, MPI_INT, right, 5 * sizeof(int), 8, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(back, 8, MPI_INT, right, 5 * sizeof(int), 8, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_ok(conf_check_int(back, out, 8, "what MPI_Get read back from rank %d", right),
           "Win_create, disp_unit 1: MPI_Put then MPI_Get at byte displacement 20 round-trip");
    int want[N];
    for (int i = 0; i < N; i++)
        want[i] = i >= 5 && i < 13 ? (int)conf_val(3, left, i - 5) : (int)conf_val(1, conf_rank, i);
    tap_ok(conf_check_int(buf, want, N, "rank %d's window", conf_rank),
           "Win_create, disp_unit 1: the put landed at elements 5..12 only");
    MPI_Win_free(&win);
    free(buf);
}

/* Even ranks expose with disp_unit 1, odd ranks with sizeof(int): the origin must scale by the
 * target's unit. */
static void disp_unit_mixed(void)
{
    int right = conf_right(), left = conf_left();
    int *buf = malloc(N * sizeof *buf);
    conf_fill_int(buf, N, 1, conf_rank);
    int unit = conf_rank % 2 ? (int)sizeof(int) : 1;
    MPI_Win win;
    MPI_Win_create(buf, N * sizeof *buf, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int out[4];
    conf_fill_int(out, 4, 4, conf_rank);
    MPI_Aint disp = right % 2 ? 10 : 10 * (MPI_Aint)sizeof(int);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(out, 4, MPI_INT, right, disp, 4, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    int want[N];
    for (int i = 0; i < N; i++)
        want[i] =
            i >= 10 && i < 14 ? (int)conf_val(4, left, i - 10) : (int)conf_val(1, conf_rank, i);
    tap_ok(conf_check_int(buf, want, N, "rank %d's window (disp_unit %d)", conf_rank, unit),
           "Win_create, disp_unit 1 on even and 4 on odd ranks: each put lands at element 10");
    MPI_Win_free(&win);
    free(buf);
}

/* The last rank exposes nothing (size 0, base NULL); everyone puts into and reads rank 0. */
static void zero_size(void)
{
    int last = conf_size - 1;
    int *buf = conf_rank == last ? NULL : malloc(N * sizeof *buf);
    if (buf)
        conf_fill_int(buf, N, 1, conf_rank);
    MPI_Win win;
    MPI_Win_create(buf, buf ? N * sizeof *buf : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    int out[4], back[4];
    conf_fill_int(out, 4, 5, conf_rank);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(out, 4, MPI_INT, 0, 4 * conf_rank, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(back, 4, MPI_INT, 0, 4 * conf_rank, 4, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_ok(conf_check_int(back, out, 4, "what rank %d read back from rank 0", conf_rank),
           "Win_create with size 0 on rank %d: every rank's put+get to rank 0 round-trips", last);
    MPI_Win_free(&win);
    free(buf);
}

/* A communicator with the ranks reversed: target ranks are ranks in the window's group. */
static void reversed_comm(void)
{
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, conf_size - conf_rank, &rev);
    int me, n;
    MPI_Comm_rank(rev, &me);
    MPI_Comm_size(rev, &n);
    int *buf = malloc(N * sizeof *buf);
    for (int i = 0; i < N; i++)
        buf[i] = -1;
    MPI_Win win;
    MPI_Win_create(buf, N * sizeof *buf, sizeof(int), MPI_INFO_NULL, rev, &win);
    int tag[2] = {conf_rank, me};
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    /* Tell window rank 0 (world rank size-1) who we are, at slot 2*me. */
    MPI_Put(tag, 2, MPI_INT, 0, 2 * me, 2, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    int ok = 1;
    if (me == 0) {
        int want[N];
        for (int i = 0; i < N; i++)
            want[i] = -1;
        for (int r = 0; r < n; r++) {
            want[2 * r] = n - 1 - r; /* world rank of window rank r */
            want[2 * r + 1] = r;
        }
        ok = conf_check_int(buf, want, N, "window rank 0's (world rank %d) window", conf_rank);
    }
    tap_ok(ok, "Win_create on a reversed communicator: target rank 0 is world rank %d",
           conf_size - 1);
    MPI_Win_free(&win);
    free(buf);
    MPI_Comm_free(&rev);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(7);
    disp_unit_double();
    disp_unit_byte();
    disp_unit_mixed();
    zero_size();
    reversed_comm();
    return conf_done();
}
