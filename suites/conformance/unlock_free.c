/* unlock_free.c — MPI_Win_free right after a passive-target epoch, with no synchronization in
 * between: every rank locks its right neighbour, puts its rank there (flushed or not), unlocks
 * and frees the window at once. MPI-3.1 §11.5.3: when MPI_Win_unlock returns the put is
 * complete at the target, so the free (collective, §11.2.5) may follow immediately and the
 * target then reads the value in its memory (create flavor: the memory outlives the window).
 * Found on libnbrma across nodes: an unlock returns once its data is acknowledged while the
 * release of the target's lock word is still on its way, and MPI_Win_free refused the window
 * ("1 closed epoch(s) have not completed") instead of waiting for it. Errors are returned
 * (MPI_ERRORS_RETURN on each window) and reported, not fatal. */
#include "conf.h"

enum { EXCL, SHARED, ALL };
static const char *const lname[] = {"lock exclusive", "lock shared", "lock_all"};

static void one(int flavor, int lock, int flush, int rep)
{
    MPI_Win win;
    int *base = NULL, mem[4] = {-1, -1, -1, -1};
    const int right = conf_right(), left = (conf_rank + conf_size - 1) % conf_size;
    if (flavor == 0)
        MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    else
        conf_win_allocate(sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int v = conf_rank + 100 * rep, rc = MPI_SUCCESS, rc2;
    if (lock == ALL)
        rc = MPI_Win_lock_all(0, win);
    else
        rc = MPI_Win_lock(lock == EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, right, 0, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win);
    if (rc == MPI_SUCCESS && flush)
        rc = MPI_Win_flush(right, win);
    rc2 = lock == ALL ? MPI_Win_unlock_all(win) : MPI_Win_unlock(right, win);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    int seen = -2;
    if (flavor == 1) {
        /* allocate: read before freeing, after everyone's unlock (the barrier) */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
        seen = base[1];
        MPI_Win_unlock(conf_rank, win);
    }
    int frc = conf_win_free(&win);
    if (flavor == 0)
        seen = mem[1];
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (frc != MPI_SUCCESS)
        MPI_Error_string(frc, msg, &len);
    if (frc != MPI_SUCCESS)
        tap_diag("MPI_Win_free returned %d (%s)", frc, msg);
    tap_ok(rc == MPI_SUCCESS && frc == MPI_SUCCESS,
           "%s window, %s, put%s, unlock, then MPI_Win_free at once (round %d): no error",
           flavor ? conf_window_name() : "create", lname[lock], flush ? "+flush" : "", rep);
    tap_is_long(seen, left + 100 * rep, "%s window, %s%s (round %d): the left neighbour's put is there",
                flavor ? conf_window_name() : "create", lname[lock], flush ? ", flushed" : "", rep);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(2 * 2 * 3 * 2 * 3);
    for (int rep = 0; rep < 3; rep++)
        for (int flavor = 0; flavor < 2; flavor++)
            for (int lock = EXCL; lock <= ALL; lock++)
                for (int flush = 0; flush < 2; flush++)
                    one(flavor, lock, flush, rep);
    return conf_done();
}
