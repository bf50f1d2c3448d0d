/* win_dynamic.c — MPI_Win_create_dynamic + MPI_Win_attach/detach: addresses exchanged with
 * MPI_Get_address are the target displacements (disp_unit 1, MPI_Aint_add offsets), two attached
 * regions are independent, a region attached after another was detached is reachable at its new
 * address, and both passive (lock_all + flush) and active (fence) epochs work on the window. */
#include "conf.h"

#define N 32

static MPI_Win win;

/* Attach `buf` (N longs) and return every rank's address of it. */
static MPI_Aint *attach_and_exchange(long *buf)
{
    MPI_Win_attach(win, buf, N * sizeof(long));
    MPI_Aint mine, *all = malloc(conf_size * sizeof *all);
    MPI_Get_address(buf, &mine);
    MPI_Request r;
    MPI_Iallgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD, &r);
    nbh_wait(&r);
    return all;
}

static MPI_Aint at(const MPI_Aint *addr, int rank, int elem)
{
    return MPI_Aint_add(addr[rank], elem * (MPI_Aint)sizeof(long));
}

/* Put 4 longs at element `elem` of right's region, flush, read them back; the owner checks its
 * whole region. */
static void passive_round_trip(long *mine, const MPI_Aint *addr, int salt, int base_salt,
                               const char *what)
{
    int right = conf_right(), left = conf_left();
    long out[4], back[4], exp[N];
    conf_fill_long(out, 4, salt, conf_rank);
    MPI_Win_lock_all(0, win);
    MPI_Put(out, 4, MPI_LONG, right, at(addr, right, 8), 4, MPI_LONG, win);
    MPI_Win_flush(right, win);
    MPI_Get(back, 4, MPI_LONG, right, at(addr, right, 8), 4, MPI_LONG, win);
    MPI_Win_flush(right, win);
    tap_ok(conf_check_long(back, out, 4, "what was read back from rank %d", right),
           "%s: MPI_Put + flush + MPI_Get at the exchanged address + 64 bytes round-trips", what);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int i = 0; i < N; i++)
        exp[i] = i >= 8 && i < 12 ? conf_val(salt, left, i - 8) : conf_val(base_salt, conf_rank, i);
    tap_ok(conf_check_long(mine, exp, N, "rank %d's attached region", conf_rank),
           "%s: the target's region holds the put at elements 8..11 and nothing else", what);
    MPI_Win_unlock_all(win);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(8);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    long *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    conf_fill_long(a, N, 1, conf_rank);
    conf_fill_long(b, N, 2, conf_rank);
    MPI_Aint *addr_a = attach_and_exchange(a);
    MPI_Aint *addr_b = attach_and_exchange(b);
    passive_round_trip(a, addr_a, 3, 1, "dynamic window, first region");
    passive_round_trip(b, addr_b, 4, 2, "dynamic window, second region");
    long exp[N];
    for (int i = 0; i < N; i++)
        exp[i] = i >= 8 && i < 12 ? conf_val(3, conf_left(), i - 8) : conf_val(1, conf_rank, i);
    tap_ok(conf_check_long(a, exp, N, "rank %d's first region", conf_rank),
           "dynamic window: RMA on the second region left the first one alone");

    /* Detach the first region, attach a fresh one: it is reachable at its own address. */
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, a);
    free(a);
    free(addr_a);
    long *c = malloc(N * sizeof *c);
    conf_fill_long(c, N, 5, conf_rank);
    MPI_Aint *addr_c = attach_and_exchange(c);
    passive_round_trip(c, addr_c, 6, 5, "dynamic window, region attached after a detach");

    /* Active target: fence epoch, accumulate into the right neighbour's second region. */
    long one[2] = {1, 1};
    MPI_Win_fence(0, win);
    MPI_Accumulate(one, 2, MPI_LONG, conf_right(), at(addr_b, conf_right(), 20), 2, MPI_LONG,
                   MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        exp[i] = i >= 8 && i < 12    ? conf_val(4, conf_left(), i - 8)
                 : i >= 20 && i < 22 ? conf_val(2, conf_rank, i) + 1
                                     : conf_val(2, conf_rank, i);
    tap_ok(conf_check_long(b, exp, N, "rank %d's second region", conf_rank),
           "dynamic window: MPI_Accumulate(MPI_SUM) under fence adds 1 to elements 20..21");

    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, b);
    MPI_Win_detach(win, c);
    MPI_Win_free(&win);
    free(b);
    free(c);
    free(addr_b);
    free(addr_c);
    return conf_done();
}
