/* win_allocate_odd.c — MPI_Win_allocate with window sizes that are not multiples of 16 bytes
 * (9 doubles = 72 bytes on every rank; then 4, 12, 20, ... bytes by rank): MPI_Put and MPI_Get at
 * displacement 0 and at the last element must reach the base the target was given, and nothing
 * outside it. Its own program because MPICH 4.0.2 (ch4) targets a different address than the
 * baseptr it returned on ranks whose preceding windows do not add up to a multiple of 16. */
#include "conf.h"

/* Every rank exposes `n` doubles (or ints), fills them with its pattern, and each rank puts into
 * the first and last element of its right neighbour and gets the middle one. */
static void run(int ndoubles, const char *what)
{
    int right = conf_right(), left = conf_left();
    double *base;
    MPI_Win win;
    MPI_Win_allocate(ndoubles * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    conf_fill_double(base, ndoubles, 1, conf_rank);
    double first = conf_val(2, conf_rank, 0), last = conf_val(2, conf_rank, 1), mid = -1;
    int rn = ndoubles; /* same size everywhere */
    MPI_Win_fence(0, win);
    MPI_Put(&first, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
    MPI_Put(&last, 1, MPI_DOUBLE, right, rn - 1, 1, MPI_DOUBLE, win);
    MPI_Get(&mid, 1, MPI_DOUBLE, right, rn / 2, 1, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    double *exp = malloc(ndoubles * sizeof *exp);
    conf_fill_double(exp, ndoubles, 1, conf_rank);
    exp[0] = conf_val(2, left, 0);
    exp[ndoubles - 1] = conf_val(2, left, 1);
    int ok = conf_check_double(base, exp, ndoubles, "rank %d's %zu-byte window", conf_rank,
                               ndoubles * sizeof(double));
    double emid = conf_val(1, right, rn / 2) + 0.25;
    if (mid != emid) {
        tap_diag("MPI_Get of element %d from rank %d returned %.17g, expected %.17g", rn / 2, right,
                 mid, emid);
        ok = 0;
    }
    tap_ok(ok, "%s: MPI_Put to the first and last element, MPI_Get of the middle one", what);
    free(exp);
    MPI_Win_free(&win);
}

/* Rank r exposes 4 + 8r bytes (1, 3, 5, ... ints): puts to the first and last int of the right
 * neighbour. */
static void ragged(void)
{
    int right = conf_right(), left = conf_left();
    int n = 1 + 2 * conf_rank, rn = 1 + 2 * right;
    int *base;
    MPI_Win win;
    MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < n; i++)
        base[i] = -1;
    int v[2] = {(int)conf_val(3, conf_rank, 0), (int)conf_val(3, conf_rank, 1)};
    MPI_Win_fence(0, win);
    MPI_Put(&v[0], 1, MPI_INT, right, 0, 1, MPI_INT, win);
    if (rn > 1)
        MPI_Put(&v[1], 1, MPI_INT, right, rn - 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    int *exp = malloc(n * sizeof *exp);
    for (int i = 0; i < n; i++)
        exp[i] = -1;
    exp[0] = (int)conf_val(3, left, 0);
    if (n > 1)
        exp[n - 1] = (int)conf_val(3, left, 1);
    tap_ok(conf_check_int(base, exp, n, "rank %d's %zu-byte window", conf_rank, n * sizeof(int)),
           "Win_allocate of 4 + 8*rank bytes: MPI_Put to the first and last int of each rank");
    free(exp);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(3);
    run(8, "Win_allocate of 64 bytes on every rank (control)");
    run(9, "Win_allocate of 72 bytes on every rank");
    ragged();
    return conf_done();
}
