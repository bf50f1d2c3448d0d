/* sync_progress.c — a process blocked in an RMA synchronization call still makes progress on its
 * pending point-to-point communication. MPI-3.1 §3.5 (progress): once a send and its matching
 * receive have been started, one of them completes whatever else the processes do; and a
 * blocking call may wait for a peer only while the library keeps serving the caller's other
 * communication. Here rank 0 posts an MPI_Irecv of a message too large to be sent eagerly and
 * then blocks in a synchronization call that returns only once rank 1 reaches its own; rank 1
 * first sends that message with MPI_Send, which cannot finish unless rank 0's library moves the
 * data while rank 0 sits in the synchronization call. An implementation whose waits spin on
 * their own state without driving the MPI library deadlocks (libnbrma's blocking calls once did:
 * its waits ran the RMA engine only).
 *
 * Cases: MPI_Win_fence; MPI_Win_wait of an exposure epoch (rank 1 sends before start/complete);
 * MPI_Win_lock + MPI_Win_unlock toward rank 1 while rank 1 holds its own exclusive lock and
 * sends before unlocking. A hang is reported by a watchdog (SIGALRM, NBRMA_PROGRESS_LIMIT
 * seconds, default 30 scaled by nbh_timeout_scale()) instead of waiting for the harness' timeout. 2 ranks or more; ranks
 * above 1 take part in the fences only. */
#include "conf.h"

#include <signal.h>
#include <unistd.h>

#define BIG (8u << 20) /* bytes: beyond every eager limit */

static const char *volatile stage = "start";

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "not ok - rank %d hung in %s: a blocking synchronization call does not "
                     "progress the pending point-to-point transfer (watchdog)\n",
                     conf_rank, stage);
    if (n > 0 && write(STDOUT_FILENO, msg, (size_t)n) < 0)
        _exit(3);
    _exit(1);
}

static void arm(const char *what)
{
    stage = what;
    const char *e = getenv("NBRMA_PROGRESS_LIMIT");
    /* 30 s on a quiet machine, scaled like every test limit (nbh_timeout_scale) */
    int s = e && atoi(e) > 0 ? atoi(e) : (int)nbh_limit(30.0);
    alarm((unsigned)s);
}

static int check_msg(const unsigned char *buf, int salt)
{
    for (unsigned i = 0; i < BIG; i += 4099)
        if (buf[i] != (unsigned char)(i * 7 + (unsigned)salt)) {
            tap_diag("byte %u of the message holds %u, expected %u", i, buf[i],
                     (unsigned char)(i * 7 + (unsigned)salt));
            return 0;
        }
    return 1;
}

static void fill_msg(unsigned char *buf, int salt)
{
    for (unsigned i = 0; i < BIG; i++)
        buf[i] = (unsigned char)(i * 7 + (unsigned)salt);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(3);
    if (signal(SIGALRM, on_alarm) == SIG_ERR) {
        perror("sync_progress: signal");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc(BIG);
    int64_t *mem;
    MPI_Win win;
    if (!buf || conf_win_allocate(64, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                 &win) != MPI_SUCCESS) {
        fprintf(stderr, "sync_progress: no memory or no window\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    int ok = 1;

    /* 1: fence */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    if (conf_rank == 0) {
        MPI_Irecv(buf, (int)BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
        arm("MPI_Win_fence");
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        alarm(0);
        ok = check_msg(buf, 1);
    } else {
        if (conf_rank == 1) {
            fill_msg(buf, 1);
            arm("MPI_Send (before its fence)");
            MPI_Send(buf, (int)BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        arm("MPI_Win_fence");
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        alarm(0);
    }
    tap_ok(ok, "rank 0 blocked in MPI_Win_fence receives the message rank 1 sends before its "
               "fence");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2: post/wait; rank 1 sends, then start/put/complete */
    MPI_Group world, g0, g1;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int zero = 0, one = 1;
    MPI_Group_incl(world, 1, &zero, &g0);
    MPI_Group_incl(world, 1, &one, &g1);
    ok = 1;
    if (conf_rank == 0) {
        MPI_Irecv(buf, (int)BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r);
        MPI_Win_post(g1, 0, win);
        arm("MPI_Win_wait");
        MPI_Win_wait(win);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        alarm(0);
        ok = check_msg(buf, 2);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        int64_t got = mem[0];
        MPI_Win_unlock(0, win);
        if (got != 42)
            ok = 0, tap_diag("the put of the exposure epoch left %lld, expected 42", (long long)got);
    } else if (conf_rank == 1) {
        fill_msg(buf, 2);
        arm("MPI_Send (before its access epoch)");
        MPI_Send(buf, (int)BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        int64_t v = 42;
        MPI_Win_start(g0, 0, win);
        MPI_Put(&v, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
        MPI_Win_complete(win);
        alarm(0);
    }
    tap_ok(ok, "rank 0 blocked in MPI_Win_wait receives the message rank 1 sends before its "
               "access epoch, and the epoch's put arrives");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3: lock toward a rank that holds its own exclusive lock while it sends */
    ok = 1;
    if (conf_rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        mem[1] = 7;
        MPI_Send(&one, 1, MPI_INT, 0, 3, MPI_COMM_WORLD); /* "I hold it" */
        fill_msg(buf, 3);
        arm("MPI_Send (holding its own lock)");
        MPI_Send(buf, (int)BIG, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        mem[1] = 8;
        MPI_Win_unlock(1, win);
        alarm(0);
    } else if (conf_rank == 0) {
        int held;
        MPI_Recv(&held, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(buf, (int)BIG, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &r);
        int64_t got = -1;
        arm("MPI_Win_lock/MPI_Get/MPI_Win_unlock");
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Get(&got, 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, win);
        MPI_Win_unlock(1, win);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        alarm(0);
        ok = check_msg(buf, 3);
        if (got != 8)
            ok = 0, tap_diag("the exclusive epoch read %lld, expected 8 (the holder's last store)",
                             (long long)got);
    }
    tap_ok(ok, "rank 0 waiting for rank 1's exclusive lock receives the message rank 1 sends "
               "while holding it, and reads what rank 1 stored before unlocking");

    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&world);
    conf_win_free(&win);
    free(buf);
    return conf_done();
}
