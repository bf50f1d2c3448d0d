/* nb_errhandler.c — an RMA call that fails when a deferred epoch carries it out reports its error
 * where MPI says: from the MPI_Wait/MPI_Test/MPI_Waitall that completes the epoch's (or the
 * R-variant's) request, with its class, through the WINDOW's error handler — never through
 * MPI_COMM_WORLD's (issue #9 item 9; MPI-3.1 §8.3: an operation's errors go to its object).
 *
 * Rank 1 exposes a dynamic window and attaches then detaches a region, so its address is known
 * but no longer attached; it holds an exclusive lock on itself so rank 0's lock epoch stays
 * deferred. Rank 0 puts into the detached address inside that epoch (the check waits for the
 * replay: the target may still attach before granting) and closes it; once rank 1 unlocks, the
 * replay fails. Each completion call is tried: MPI_Wait, MPI_Test, MPI_Waitall (MPI_ERR_IN_STATUS
 * with the status set), an MPI_Rput's own request, and a blocking MPI_Win_unlock called after the
 * grant (the failed call was carried out already; the unlock completes the epoch at once and
 * returns its error) or before it (the unlock waits for the grant and the replay). Both handlers
 * count their calls. */
#include "nb_util.h"

static int win_calls, win_last, comm_calls;

static void win_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    win_calls++;
    win_last = *code;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    comm_calls++;
}

enum { BY_WAIT, BY_TEST, BY_WAITALL, BY_RPUT, BY_UNLOCK, BY_UNLOCK_WAITING, NWAYS };
static const char *const way_name[NWAYS] = {"MPI_Wait", "MPI_Test", "MPI_Waitall",
                                            "MPI_Wait on an MPI_Rput request",
                                            "a blocking MPI_Win_unlock after the grant",
                                            "a blocking MPI_Win_unlock before the grant"};

static void one_way(MPI_Win win, MPI_Aint gone, int way)
{
    const char *what = way_name[way];
    long v = 42;
    int rc = MPI_SUCCESS, cls = MPI_SUCCESS, status_err = MPI_SUCCESS;
    win_calls = comm_calls = 0;
    win_last = MPI_SUCCESS;
    if (conf_rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        nbt_send(0, 1, 1);
        nbt_recv(0, 2); /* rank 0 queued its epoch */
        MPI_Win_unlock(1, win);
    } else if (conf_rank == 0) {
        MPI_Request lk, un, rp = MPI_REQUEST_NULL;
        nbt_recv(1, 1);
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &lk);
        if (way == BY_RPUT)
            MPI_Rput(&v, 1, MPI_LONG, 1, gone, 1, MPI_LONG, win, &rp);
        else
            MPI_Put(&v, 1, MPI_LONG, 1, gone, 1, MPI_LONG, win);
        int blocking = way == BY_UNLOCK || way == BY_UNLOCK_WAITING;
        if (!blocking)
            MPIX_Win_iunlock(1, win, &un);
        nbt_send(1, 2, 1);
        if (way == BY_UNLOCK_WAITING) /* waits inside for the grant, the replay, the completion */
            rc = MPI_Win_unlock(1, win);
        nbt_wait(&lk, "the lock grant"); /* the put was carried out, and failed, by now */
        if (way == BY_UNLOCK_WAITING) {
            /* done above */
        } else if (way == BY_UNLOCK) {
            /* the epoch is ready and holds no call: the unlock completes it at once (the
             * engine's direct path), and must still return the put's error */
            rc = MPI_Win_unlock(1, win);
        } else if (way == BY_WAIT) {
            rc = MPI_Wait(&un, MPI_STATUS_IGNORE);
        } else if (way == BY_TEST) {
            int flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < NBT_LIMIT)
                rc = MPI_Test(&un, &flag, MPI_STATUS_IGNORE);
        } else if (way == BY_WAITALL) {
            MPI_Request two[2] = {un, MPI_REQUEST_NULL};
            MPI_Status st[2];
            st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
            rc = MPI_Waitall(2, two, st);
            status_err = st[0].MPI_ERROR;
        } else {
            rc = MPI_Wait(&rp, MPI_STATUS_IGNORE);
            MPI_Wait(&un, MPI_STATUS_IGNORE);
            win_calls = win_calls > 1 ? 1 : win_calls; /* the epoch's request may report it too */
        }
        MPI_Error_class(rc, &cls);
        MPI_Error_class(win_last, &win_last);
        if (way == BY_WAITALL)
            MPI_Error_class(status_err, &status_err);
    }
    int expect = way == BY_WAITALL ? MPI_ERR_IN_STATUS : MPI_ERR_RMA_RANGE;
    char buf[400];
    tap_ok(conf_rank != 0 || cls == expect, "%s returns %s for the put into a detached region",
           what, conf_rank != 0 ? "" : conf_describe_rc(rc, buf, sizeof buf));
    tap_ok(conf_rank != 0 || (win_calls == 1 && win_last == expect),
           "%s: the window's handler was called once (%d) with that class (%s)", what, win_calls,
           conf_class_name(win_last));
    tap_ok(comm_calls == 0, "%s: MPI_COMM_WORLD's handler was not called (%d)", what, comm_calls);
    if (way == BY_WAITALL)
        tap_ok(conf_rank != 0 || status_err == MPI_ERR_RMA_RANGE,
               "MPI_Waitall: the failed request's status holds MPI_ERR_RMA_RANGE (%s)",
               conf_class_name(status_err));
    nbt_barrier();
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 2);
    MPI_Errhandler weh, ceh;
    MPI_Win_create_errhandler(win_handler, &weh);
    MPI_Comm_create_errhandler(comm_handler, &ceh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, ceh);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, weh);
    static long region[16];
    MPI_Aint gone = 0;
    if (conf_rank == 1) {
        MPI_Win_attach(win, region, sizeof region);
        MPI_Get_address(region, &gone);
        MPI_Win_detach(win, region);
    }
    MPI_Bcast(&gone, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    for (int way = 0; way < NWAYS; way++)
        one_way(win, gone, way);
    MPI_Win_free(&win);
    MPI_Errhandler_free(&weh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&ceh);
    return nbt_done();
}
