/* progress_blocking.c — passive-target progress whatever blocking MPI call the target sits in
 * (MPI-3.1 §11.7.3), and collectives that still match after windows on sub-communicators
 * (§5.12: a blocking collective never matches a nonblocking one).
 *
 * Part 1: ranks 1 and 2 create a window on a communicator of their own and use it (lock, put,
 * unlock), the window freed or kept; then every rank calls blocking collectives on
 * MPI_COMM_WORLD and checks their results.
 * Part 2: rank 1, the target of a window on MPI_COMM_WORLD, enters a blocking call — collective
 * (MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create, MPI_Cart_create, MPI_Neighbor_allgather,
 * MPI_Barrier, MPI_Allreduce) or point-to-point (MPI_Sendrecv_replace, MPI_Recv, MPI_Ssend) — that
 * rank 0 joins only after its lock, put and unlock toward rank 1 have returned. Rank 1's MPI must
 * serve them meanwhile.
 *
 * Found on libnbrma across nodes: part 1 deadlocked (ranks 1 and 2 ran MPI_Allreduce as
 * MPI_Iallreduce plus a wait because they had a window with remote pairs; the others called the
 * blocking collective), and in part 2 rank 0's unlock never returned for every call libnbrma did
 * not wrap. A stalled case is reported by name (an alarm after 30 s, scaled by TIMEOUT_SCALE and
 * the load) instead of hanging. */
#include <signal.h>
#include <unistd.h>

#include "conf.h"

static int npoint;          /* test points so far: a stalled case reports as the next one */
static char phase[200];     /* what this rank is doing */

static void stalled(int sig)
{
    (void)sig;
    char line[400];
    int n = snprintf(line, sizeof line, "not ok %d - rank %d stalled: %s\n", npoint + 1, conf_rank,
                     phase);
    if (n > 0)
        (void)!write(1, line, (size_t)n);
    _exit(1);
}

static void arm(void)
{
    /* 30 s on a quiet machine, scaled by TIMEOUT_SCALE and the measured load like every test
     * limit (nbh_limit, harness/timing.h), so it stays inside run-test.sh's watchdog */
    signal(SIGALRM, stalled);
    alarm((unsigned)nbh_limit(30.0));
}

static void point(int ok, const char *what)
{
    tap_ok(ok, "%s", what);
    npoint++;
}

/* Part 1 */
static void sub_window_then_collectives(int freed)
{
    const int in = conf_rank == 1 || conf_rank == 2;
    MPI_Comm sub;
    snprintf(phase, sizeof phase, "MPI_Comm_split for the window of ranks 1 and 2");
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, conf_rank, &sub);
    MPI_Win win = MPI_WIN_NULL;
    int ok = 1;
    if (in) {
        int *mem;
        snprintf(phase, sizeof phase, "RMA in the window of ranks 1 and 2");
        conf_win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, sub, &mem, &win);
        *mem = -1;
        MPI_Barrier(sub);
        int peer = conf_rank == 1 ? 1 : 0, v = 100 + conf_rank;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
        MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win);
        MPI_Win_unlock(peer, win);
        MPI_Barrier(sub);
        MPI_Win_lock(MPI_LOCK_SHARED, peer ^ 1, 0, win);
        ok = *mem == 100 + (conf_rank == 1 ? 2 : 1);
        MPI_Win_unlock(peer ^ 1, win);
        if (freed)
            conf_win_free(&win);
    }
    int sum = -1, root_val = conf_rank == 0 ? 4242 : -1, red = -1, size = conf_size;
    int *all = malloc((size_t)size * sizeof *all), *a2a = malloc((size_t)size * sizeof *a2a),
        *a2b = malloc((size_t)size * sizeof *a2b);
    for (int i = 0; i < size; i++)
        a2a[i] = conf_rank * 100 + i;
    snprintf(phase, sizeof phase, "MPI_Barrier on MPI_COMM_WORLD after a window on ranks 1, 2");
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(phase, sizeof phase, "MPI_Allreduce on MPI_COMM_WORLD after a window on ranks 1, 2");
    MPI_Allreduce(&conf_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    snprintf(phase, sizeof phase, "MPI_Bcast on MPI_COMM_WORLD after a window on ranks 1, 2");
    MPI_Bcast(&root_val, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(phase, sizeof phase, "MPI_Reduce on MPI_COMM_WORLD after a window on ranks 1, 2");
    MPI_Reduce(&conf_rank, &red, 1, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD);
    snprintf(phase, sizeof phase, "MPI_Allgather on MPI_COMM_WORLD after a window on ranks 1, 2");
    MPI_Allgather(&conf_rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    snprintf(phase, sizeof phase, "MPI_Alltoall on MPI_COMM_WORLD after a window on ranks 1, 2");
    MPI_Alltoall(a2a, 1, MPI_INT, a2b, 1, MPI_INT, MPI_COMM_WORLD);
    int good = ok && sum == size * (size - 1) / 2 && root_val == 4242 &&
               (conf_rank != size - 1 || red == size - 1);
    for (int i = 0; i < size; i++)
        good = good && all[i] == i && a2b[i] == i * 100 + conf_rank;
    if (!good)
        tap_diag("window data %s, allreduce %d, bcast %d, reduce %d", ok ? "right" : "wrong", sum,
                 root_val, red);
    char what[160];
    snprintf(what, sizeof what,
             "a window of ranks 1 and 2 (%s), then blocking collectives on MPI_COMM_WORLD: all "
             "complete with the right results",
             freed ? "freed" : "still alive");
    point(good, what);
    if (win != MPI_WIN_NULL)
        conf_win_free(&win);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    free(all), free(a2a), free(a2b);
}

/* Part 2 */
enum { B_DUP, B_SPLIT, B_CREATE, B_CART, B_NEIGHBOR, B_BARRIER, B_ALLREDUCE, B_SENDRECV_REPLACE,
       B_RECV, B_SSEND, B_N };
static const char *const bname[] = {"MPI_Comm_dup",      "MPI_Comm_split",
                                    "MPI_Comm_create",   "MPI_Cart_create",
                                    "MPI_Neighbor_allgather", "MPI_Barrier",
                                    "MPI_Allreduce",     "MPI_Sendrecv_replace",
                                    "MPI_Recv",          "MPI_Ssend"};

/* The blocking call under test, by every rank (collectives) or by ranks 0 and 1. */
static int blocking_call(int b, MPI_Comm ring)
{
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Group g;
    int x = conf_rank, y = -1, ok = 1, dims[1] = {conf_size}, periods[1] = {1};
    int nb[2] = {-1, -1};
    switch (b) {
    case B_DUP:
        MPI_Comm_dup(MPI_COMM_WORLD, &nc);
        break;
    case B_SPLIT:
        MPI_Comm_split(MPI_COMM_WORLD, conf_rank % 2, conf_rank, &nc);
        break;
    case B_CREATE:
        MPI_Comm_group(MPI_COMM_WORLD, &g);
        MPI_Comm_create(MPI_COMM_WORLD, g, &nc);
        MPI_Group_free(&g);
        break;
    case B_CART:
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &nc);
        break;
    case B_NEIGHBOR:
        MPI_Neighbor_allgather(&x, 1, MPI_INT, nb, 1, MPI_INT, ring);
        ok = nb[0] == (conf_rank + conf_size - 1) % conf_size && nb[1] == (conf_rank + 1) % conf_size;
        break;
    case B_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case B_ALLREDUCE:
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        ok = y == conf_size * (conf_size - 1) / 2;
        break;
    case B_SENDRECV_REPLACE:
        if (conf_rank <= 1) {
            int v[3] = {conf_rank, 7, conf_rank * 3};
            MPI_Sendrecv_replace(v, 3, MPI_INT, conf_rank ^ 1, 5, conf_rank ^ 1, 5,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ok = v[0] == (conf_rank ^ 1) && v[1] == 7 && v[2] == (conf_rank ^ 1) * 3;
        }
        break;
    case B_RECV: /* rank 1 waits in MPI_Recv for rank 0 */
        if (conf_rank == 1)
            MPI_Recv(&y, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE), ok = y == 0;
        else if (conf_rank == 0)
            MPI_Send(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
        break;
    case B_SSEND: /* rank 1 waits in MPI_Ssend until rank 0 receives */
        if (conf_rank == 1)
            MPI_Ssend(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        else if (conf_rank == 0)
            MPI_Recv(&y, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), ok = y == 1;
        break;
    }
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);
    return ok;
}

static void target_in_blocking_call(int b, MPI_Win win, int *mem, MPI_Comm ring)
{
    int ok = 1;
    double took = 0;
    *mem = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (conf_rank == 0) {
        int entering;
        snprintf(phase, sizeof phase, "waiting for rank 1 to enter %s", bname[b]);
        MPI_Recv(&entering, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.02) /* let rank 1 get inside its call */
            ;
        int v = 500 + b;
        snprintf(phase, sizeof phase,
                 "lock, put, unlock toward rank 1 while rank 1 is inside %s", bname[b]);
        t0 = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
        MPI_Win_unlock(1, win);
        took = MPI_Wtime() - t0;
    } else if (conf_rank == 1) {
        int entering = 1;
        MPI_Send(&entering, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }
    snprintf(phase, sizeof phase, "inside %s%s", bname[b],
             conf_rank == 1 ? " while rank 0 locks, puts and unlocks toward this rank" : "");
    ok = blocking_call(b, ring);
    MPI_Barrier(MPI_COMM_WORLD);
    if (conf_rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        if (*mem != 500 + b) {
            tap_diag("rank 1's window holds %d, expected %d", *mem, 500 + b);
            ok = 0;
        }
        MPI_Win_unlock(1, win);
    }
    if (conf_rank == 0)
        tap_diag("lock+put+unlock took %.3f ms while the target sat in %s", took * 1e3, bname[b]);
    char what[200];
    snprintf(what, sizeof what,
             "rank 0's lock, put, unlock toward rank 1 complete while rank 1 is inside %s",
             bname[b]);
    point(ok, what);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 3);
    arm();
    tap_plan(2 + B_N);
    sub_window_then_collectives(1);
    sub_window_then_collectives(0);
    int *mem;
    MPI_Win win;
    /* 16 bytes: MPICH 4.0.2 misplaces RMA in windows of other sizes (win_allocate_odd) */
    conf_win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    int src[2] = {(conf_rank + conf_size - 1) % conf_size, (conf_rank + 1) % conf_size};
    MPI_Comm ring;
    int wts[2] = {1, 1}; /* (Open MPI's MPI_UNWEIGHTED trips GCC's bounds warnings) */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, wts, 2, src, wts, MPI_INFO_NULL, 0,
                                   &ring);
    for (int b = 0; b < B_N; b++) {
        arm(); /* each case gets the whole limit */
        target_in_blocking_call(b, win, mem, ring);
    }
    alarm(0);
    MPI_Comm_free(&ring);
    conf_win_free(&win);
    return conf_done();
}
