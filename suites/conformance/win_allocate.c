/* win_allocate.c — MPI_Win_allocate: the returned base is usable memory, local stores made before
 * a fence are what remote MPI_Get reads, Put lands where disp_unit = sizeof(long) says and
 * nowhere else, windows of a different size on every rank (the last element of each is
 * reachable), and a rank allocating 0 bytes does not disturb the others. */
#include "conf.h"

#define N 48

static void round_trip(void)
{
    int right = conf_right(), left = conf_left();
    long *base = NULL;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    tap_ok(base != NULL, "Win_allocate returns a non-NULL base for a %zu-byte window",
           N * sizeof(long));
    conf_fill_long(base, N, 1, conf_rank); /* local stores before the first fence */

    long got[N], exp[N], out[6];
    MPI_Win_fence(0, win);
    MPI_Get(got, N, MPI_LONG, right, 0, N, MPI_LONG, win);
    MPI_Win_fence(0, win);
    conf_fill_long(exp, N, 1, right);
    tap_ok(conf_check_long(got, exp, N, "the MPI_Get result from rank %d", right),
           "Win_allocate: MPI_Get reads the target's local stores made before the fence");

    conf_fill_long(out, 6, 2, conf_rank);
    MPI_Put(out, 6, MPI_LONG, left, 40, 6, MPI_LONG, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        exp[i] = i >= 40 && i < 46 ? conf_val(2, right, i - 40) : conf_val(1, conf_rank, i);
    tap_ok(conf_check_long(base, exp, N, "rank %d's window", conf_rank),
           "Win_allocate, disp_unit 8: MPI_Put at target_disp 40 writes elements 40..45 only");

    /* Get back what we put, from the left neighbour. */
    MPI_Get(got, 6, MPI_LONG, left, 40, 6, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_ok(conf_check_long(got, out, 6, "what was read back from rank %d", left),
           "Win_allocate: MPI_Get of the elements just put returns them");
    MPI_Win_free(&win);
}

/* Rank r allocates (r+1)*8 longs; everyone writes the last element of its right neighbour. */
static void ragged_sizes(void)
{
    int right = conf_right(), left = conf_left();
    int n = (conf_rank + 1) * 8;
    long *base;
    MPI_Win win;
    MPI_Win_allocate(n * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < n; i++)
        base[i] = -1;
    long v = conf_val(3, conf_rank, 0);
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_LONG, right, (right + 1) * 8 - 1, 1, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    long *exp = malloc(n * sizeof *exp);
    for (int i = 0; i < n; i++)
        exp[i] = i == n - 1 ? conf_val(3, left, 0) : -1;
    tap_ok(conf_check_long(base, exp, n, "rank %d's %d-element window", conf_rank, n),
           "Win_allocate with (rank+1)*8 elements per rank: a put reaches the last element");
    free(exp);
    MPI_Win_free(&win);
}

/* The last rank allocates 0 bytes; the others round-trip data through rank 0. */
static void zero_size(void)
{
    int last = conf_size - 1;
    long *base;
    MPI_Win win;
    MPI_Aint bytes = conf_rank == last ? 0 : N * sizeof(long);
    MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    long out[4], back[4];
    conf_fill_long(out, 4, 4, conf_rank);
    MPI_Win_fence(0, win);
    MPI_Put(out, 4, MPI_LONG, 0, 4 * conf_rank, 4, MPI_LONG, win);
    MPI_Win_fence(0, win);
    MPI_Get(back, 4, MPI_LONG, 0, 4 * conf_rank, 4, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_ok(conf_check_long(back, out, 4, "what rank %d read back from rank 0", conf_rank),
           "Win_allocate with 0 bytes on rank %d: every rank's put+get to rank 0 round-trips",
           last);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(6);
    round_trip();
    ragged_sizes();
    zero_size();
    return conf_done();
}
