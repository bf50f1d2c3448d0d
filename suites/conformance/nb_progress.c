/* nb_progress.c — one progress call carries every epoch as far as it can go (issue #9 item 4,
 * paper 000 §VII-D: the engine runs its steps until nothing moves, not a fixed number of sweeps).
 *
 * Ranks: 0 target, 1 origin with queued nonblocking epochs, 2 a rival that holds rank 0's lock.
 * Rank 1 queues K lock epochs toward rank 0 (ilock/iunlock, then ilock/put/iunlock, ...) while
 * rank 2 holds the lock; rank 2 unlocks and tells rank 1, which calls MPI_Test exactly once,
 * tells rank 2 and then sits in MPI_Recv, calls libnbrma does not intercept (no progress
 * there). Rank 2 then locks rank 0 again: that lock is granted only if rank 1's single MPI_Test took its epochs all
 * the way (granted, replayed, released). Rank 2's second epoch is bounded (it polls for
 * NBT_LIMIT seconds), so a regression fails instead of hanging. */
#include "nb_util.h"

#define TAG_GO     1
#define TAG_QUEUED 2
#define TAG_FREE   3
#define TAG_DONE   4
#define TAG_TESTED 5

/* One round with `k` queued epochs of which every second one carries a put. */
static void round_trip(MPI_Win win, int64_t *mem, int k, const char *what)
{
    int64_t val[64];
    MPI_Request reqs[3 * 64];
    int nreq = 0, one_test = 1, rival = 1; /* verdicts; ranks that do not judge keep 1 */
    if (conf_rank == 2) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        nbt_send(1, TAG_GO, 1);
        nbt_recv(1, TAG_QUEUED);
        MPI_Win_unlock(0, win);
        nbt_send(1, TAG_FREE, 1);
        nbt_recv(1, TAG_TESTED);
        /* Lock rank 0 again: granted only if rank 1 released it inside its one MPI_Test. */
        MPI_Request r;
        int64_t one = 1;
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Put(&one, 1, MPI_INT64_T, 0, 63, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock(0, win, &r);
        int done = nbt_poll(&r, NBT_LIMIT);
        nbt_send(1, TAG_DONE, done);
        if (!done)
            nbt_wait(&r, "rank 2's second lock epoch");
        rival = done;
    } else if (conf_rank == 1) {
        nbt_recv(2, TAG_GO);
        for (int i = 0; i < k; i++) {
            MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &reqs[nreq++]);
            if (i % 2) {
                val[i] = 1000 + i;
                MPI_Put(&val[i], 1, MPI_INT64_T, 0, i, 1, MPI_INT64_T, win);
            }
            MPIX_Win_iunlock(0, win, &reqs[nreq++]);
        }
        nbt_send(2, TAG_QUEUED, 1);
        nbt_recv(2, TAG_FREE);
        MPI_Request last = reqs[nreq - 1];
        int flag = 0;
        MPI_Test(&last, &flag, MPI_STATUS_IGNORE); /* the one progress call */
        /* From here on no call of rank 1 progresses its epochs: MPI_Send and MPI_Recv are not
         * intercepted by libnbrma. */
        int done = 0, tested = 1;
        MPI_Send(&tested, 1, MPI_INT, 2, TAG_TESTED, nbt_comm);
        MPI_Recv(&done, 1, MPI_INT, 2, TAG_DONE, nbt_comm, MPI_STATUS_IGNORE);
        if (!flag)
            nbt_wait(&last, "rank 1's last iunlock");
        reqs[nreq - 1] = MPI_REQUEST_NULL;
        nbt_waitall(nreq, reqs, "rank 1's queued epochs");
        one_test = flag;
    }
    tap_ok(one_test, "%s: one MPI_Test at rank 1 completed all its queued lock epochs", what);
    tap_ok(rival, "%s: the rival's next lock epoch completes while rank 1 sits in MPI_Recv", what);
    nbt_barrier();
    if (conf_rank == 0) {
        int bad = 0;
        for (int i = 1; i < k; i += 2)
            bad += nbt_load(&mem[i]) != 1000 + i;
        bad += nbt_load(&mem[63]) != 1;
        tap_is_long(bad, 0, "%s: every put landed at rank 0", what);
    } else {
        tap_is_long(0, 0, "%s: every put landed at rank 0", what);
    }
    nbt_barrier();
    for (int i = 0; i < 64 && conf_rank == 0; i++)
        __atomic_store_n(&mem[i], 0, __ATOMIC_RELEASE);
    nbt_barrier();
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 3);
    if (conf_spans_nodes(MPI_COMM_WORLD)) {
        /* Across nodes a grant and a release are round trips to the target: no single call can
         * carry an epoch through them, and rank 1's MPI_Recv serves peers there (blocking.c). */
        if (conf_rank == 0)
            printf("1..0 # SKIP one progress call completes epochs only where their words are "
                   "local; the ranks span nodes\n");
        MPI_Finalize();
        return 0;
    }
    int64_t *mem;
    MPI_Win win;
    conf_win_allocate(64 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    memset(mem, 0, 64 * sizeof(int64_t));
    nbt_barrier();
    round_trip(win, mem, 2, "2 epochs");
    round_trip(win, mem, 16, "16 epochs");
    round_trip(win, mem, 63, "63 epochs");
    conf_win_free(&win);
    return nbt_done();
}
