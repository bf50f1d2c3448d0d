/* sync_pscw.c — generalized active-target synchronization (post/start/complete/wait): repeated
 * ring epochs (exposure to the left neighbour, access to the right one) completed with
 * MPI_Win_wait or by polling MPI_Win_test, a star where rank 0 is the target of everyone's
 * accumulate and then the origin of gets from all, an access epoch to two neighbours at once,
 * and MPI_MODE_NOCHECK on both post and start (ordered by a barrier) plus MPI_MODE_NOPUT. */
#include "relax.h"
#include "conf.h"

#define N 16

static int *base;
static MPI_Win win;
static MPI_Group world;

static MPI_Group group_of(int a, int b)
{
    int ranks[2] = {a, b};
    MPI_Group g;
    MPI_Group_incl(world, a == b ? 1 : 2, ranks, &g);
    return g;
}

static void ring(void)
{
    MPI_Group lg = group_of(conf_left(), conf_left()), rg = group_of(conf_right(), conf_right());
    for (int k = 1; k <= 3; k++) {
        int out[N], exp[N];
        conf_fill_int(out, N, k, conf_rank);
        MPI_Win_post(lg, 0, win);
        MPI_Win_start(rg, 0, win);
        MPI_Put(out, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
        MPI_Win_complete(win);
        long polls = 0;
        if (k == 2) {
            int flag = 0;
            while (!flag) {
                MPI_Win_test(win, &flag);
                if (++polls > 64)
                    nbh_relax();
            }
        } else {
            MPI_Win_wait(win);
        }
        conf_fill_int(exp, N, k, conf_left());
        tap_ok(conf_check_int(base, exp, N, "rank %d's window", conf_rank),
               "PSCW ring, epoch %d: the left neighbour's MPI_Put arrived (exposure ended by %s)",
               k, k == 2 ? "polling MPI_Win_test" : "MPI_Win_wait");
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

static void star(void)
{
    MPI_Group all, zero = group_of(0, 0);
    MPI_Group_excl(world, 1, (int[]){0}, &all); /* everyone but rank 0 */
    for (int i = 0; i < N; i++)
        base[i] = conf_rank == 0 ? 0 : (int)conf_val(5, conf_rank, i);

    /* Everyone else accumulates into rank 0 and puts a tag at element `rank`. */
    if (conf_rank == 0) {
        MPI_Win_post(all, 0, win);
        MPI_Win_wait(win);
    } else {
        int v = conf_rank, tag = 100 + conf_rank;
        MPI_Win_start(zero, 0, win);
        MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
        MPI_Put(&tag, 1, MPI_INT, 0, conf_rank, 1, MPI_INT, win);
        MPI_Win_complete(win);
    }
    int ok = 1;
    if (conf_rank == 0) {
        int exp[N] = {0};
        exp[0] = conf_size * (conf_size - 1) / 2;
        for (int r = 1; r < conf_size && r < N; r++)
            exp[r] = 100 + r;
        ok = conf_check_int(base, exp, N, "rank 0's window");
    }
    tap_ok(ok, "PSCW star: rank 0 exposes to all, receives their MPI_Accumulate(SUM) and MPI_Put");

    /* Rank 0 reads element N-1 of everyone; nobody puts, so post asserts MPI_MODE_NOPUT. */
    int got[N] = {0};
    if (conf_rank == 0) {
        MPI_Win_start(all, 0, win);
        for (int r = 1; r < conf_size && r < N; r++)
            MPI_Get(&got[r], 1, MPI_INT, r, N - 1, 1, MPI_INT, win);
        MPI_Win_complete(win);
        int exp[N] = {0};
        for (int r = 1; r < conf_size && r < N; r++)
            exp[r] = (int)conf_val(5, r, N - 1);
        ok = conf_check_int(got, exp, N, "rank 0's results of MPI_Get (index = target rank)");
    } else {
        MPI_Win_post(zero, MPI_MODE_NOPUT, win);
        MPI_Win_wait(win);
    }
    tap_ok(ok, "PSCW star: rank 0 gets from all others (post asserts MPI_MODE_NOPUT)");
    MPI_Group_free(&all);
    MPI_Group_free(&zero);
}

/* One access epoch to both neighbours: put to the right one, get from the left one. */
static void two_targets(void)
{
    MPI_Group both = group_of(conf_left(), conf_right());
    conf_fill_int(base, N, 6, conf_rank);
    int out[4], got[4];
    conf_fill_int(out, 4, 7, conf_rank);
    MPI_Win_post(both, 0, win);
    MPI_Win_start(both, 0, win);
    MPI_Put(out, 4, MPI_INT, conf_right(), 0, 4, MPI_INT, win);
    MPI_Get(got, 4, MPI_INT, conf_left(), N - 4, 4, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    int exp[N], eg[4];
    for (int i = 0; i < N; i++)
        exp[i] = i < 4 ? (int)conf_val(7, conf_left(), i) : (int)conf_val(6, conf_rank, i);
    for (int i = 0; i < 4; i++)
        eg[i] = (int)conf_val(6, conf_left(), N - 4 + i);
    int ok = conf_check_int(base, exp, N, "rank %d's window", conf_rank);
    ok &= conf_check_int(got, eg, 4, "the MPI_Get result from rank %d", conf_left());
    tap_ok(ok, "PSCW with both neighbours in the access and exposure groups: put right, get left");
    MPI_Group_free(&both);
}

/* MPI_MODE_NOCHECK: all posts happen before a barrier, all starts after it. */
static void nocheck(void)
{
    MPI_Group lg = group_of(conf_left(), conf_left()), rg = group_of(conf_right(), conf_right());
    int out[N], exp[N];
    conf_fill_int(out, N, 8, conf_rank);
    MPI_Win_post(lg, MPI_MODE_NOCHECK, win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_start(rg, MPI_MODE_NOCHECK, win);
    MPI_Put(out, N, MPI_INT, conf_right(), 0, N, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    conf_fill_int(exp, N, 8, conf_left());
    tap_ok(conf_check_int(base, exp, N, "rank %d's window", conf_rank),
           "PSCW with MPI_MODE_NOCHECK on post and start: the put arrived");
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(7);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    conf_win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    ring();
    star();
    two_targets();
    nocheck();
    conf_win_free(&win);
    MPI_Group_free(&world);
    return conf_done();
}
