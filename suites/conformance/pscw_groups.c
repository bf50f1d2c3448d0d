/* pscw_groups.c — consecutive PSCW epochs of one origin with access groups that change, and a
 * target that is outside the current group posting already for the origin's next epoch
 * (MPI-3.1 §11.5.2: a post is matched by the origin's next start whose group holds the target;
 * until then it simply waits). Rank 0 is the origin; per round three epochs: {1,2,3} with puts,
 * {2,3} with puts, {1,2,3} without RMA. Rank 1 is not in the second group, so it goes on to
 * post for the third epoch while rank 0 is still starting the second. Between the posts and the
 * start the ranks meet in an MPI_Ibarrier completed by MPI_Test polling (how nonblocking codes
 * and our benchmarks synchronize). Every put must land, every epoch must end.
 * MPICH 4.0.2 (ch4:ucx) hangs in MPI_Win_start of the second epoch within the first rounds (the
 * same program with MPI_Barrier instead of the polled MPI_Ibarrier passes): a known failure,
 * found by the C4 benchmark (docs/experiments-c.md). Options: --rounds N (default 40). */
#include "relax.h"
#include "conf.h"

#define N 64

static void polled_barrier(void)
{
    MPI_Request r;
    int flag = 0;
    long polls = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!flag) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        if (!flag && ++polls > 16)
            nbh_relax();
    }
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 4);
    int rounds = 40;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
    tap_plan(1);
    int *base;
    MPI_Win win;
    conf_win_allocate(3 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 3 * N; i++)
        base[i] = -1;
    MPI_Group world, origin, all, inter;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int zero = 0, t[3] = {1, 2, 3};
    MPI_Group_incl(world, 1, &zero, &origin);
    MPI_Group_incl(world, 3, t, &all);
    MPI_Group_incl(world, 2, t + 1, &inter);
    polled_barrier();
    int bad = 0;
    for (int k = 0; k < rounds; k++) {
        for (int e = 0; e < 3; e++) {
            const int *tg = e == 1 ? t + 1 : t;
            int n = e == 1 ? 2 : 3, target = 0;
            for (int i = 0; i < n; i++)
                target |= tg[i] == conf_rank;
            if (target)
                MPI_Win_post(origin, 0, win);
            polled_barrier();
            if (conf_rank == 0) {
                int out[3][N];
                MPI_Win_start(e == 1 ? inter : all, 0, win);
                for (int i = 0; e != 2 && i < n; i++) {
                    for (int j = 0; j < N; j++)
                        out[i][j] = (int)conf_val(k, tg[i], e * N + j);
                    MPI_Put(out[i], N, MPI_INT, tg[i], e * N, N, MPI_INT, win);
                }
                MPI_Win_complete(win);
            }
            if (target) {
                MPI_Win_wait(win);
                for (int j = 0; e != 2 && j < N; j++)
                    if (base[e * N + j] != (int)conf_val(k, conf_rank, e * N + j) && bad++ == 0)
                        tap_diag("rank %d, round %d, epoch %d: element %d holds %d, expected %d",
                                 conf_rank, k, e, j, base[e * N + j],
                                 (int)conf_val(k, conf_rank, e * N + j));
            }
        }
    }
    tap_ok(!bad,
           "%d rounds of PSCW epochs toward {1,2,3}, {2,3}, {1,2,3} with rank 1 posting early for "
           "the third: every epoch ends and every put lands",
           rounds);
    MPI_Group_free(&origin);
    MPI_Group_free(&all);
    MPI_Group_free(&inter);
    MPI_Group_free(&world);
    conf_win_free(&win);
    return conf_done();
}
