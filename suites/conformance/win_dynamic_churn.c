/* win_dynamic_churn.c — a dynamic window whose target attaches and detaches regions while the
 * other ranks access it (MPI-3.1 §11.2.4: memory may be attached and detached at any time; an
 * access must lie in memory attached at the target while it happens). Rank 0 keeps one stable
 * region S attached (its address broadcast) and, round after round, attaches a fresh region R,
 * publishes R's address and a round number in S under an exclusive lock on itself, lets the
 * others work, then takes the exclusive lock again (every shared lock is released then), checks
 * R and withdraws it (S says "none", R detached and freed; the next R often reuses its address).
 * The others loop: lock shared, read S, and when a region is published put their tag into their
 * slot of R, read it back and also read the round number R carries; unlock. Every slot of R must
 * hold either nothing or exactly its writer's tag for that round, and what an origin read back
 * must be what it wrote. Run across nodes, the origins fetch each new region's memory key. */
#include "conf.h"

#define ROUNDS 40
#define SLOTS  16 /* R: slot 0 the round, slots 1.. one per origin */

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(3);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    long *S = calloc(4, sizeof *S); /* [0] R's address, [1] the round, [2] done */
    MPI_Aint s_addr = 0;
    if (conf_rank == 0) {
        MPI_Win_attach(win, S, 4 * sizeof *S);
        MPI_Get_address(S, &s_addr);
    }
    MPI_Bcast(&s_addr, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    int bad_slot = 0, bad_back = 0, accesses = 0;
    if (conf_rank == 0) {
        for (int round = 1; round <= ROUNDS; round++) {
            long *R = malloc(SLOTS * sizeof *R);
            for (int i = 0; i < SLOTS; i++)
                R[i] = i == 0 ? round : -1;
            MPI_Win_attach(win, R, SLOTS * sizeof *R);
            MPI_Aint ra;
            MPI_Get_address(R, &ra);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            S[0] = (long)ra;
            S[1] = round;
            MPI_Win_unlock(0, win);
            double until = MPI_Wtime() + 0.002;
            while (MPI_Wtime() < until) { /* serve the origins meanwhile */
                int flag;
                MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            }
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            S[0] = 0;
            for (int i = 1; i < SLOTS && i < conf_size; i++)
                bad_slot += R[i] != -1 && R[i] != round * 1000 + i;
            MPI_Win_unlock(0, win);
            MPI_Win_detach(win, R);
            free(R);
        }
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        S[2] = 1;
        MPI_Win_unlock(0, win);
    } else {
        for (;;) {
            long s[3];
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(s, 3, MPI_LONG, 0, s_addr, 3, MPI_LONG, win);
            MPI_Win_flush(0, win);
            if (s[0] && conf_rank < SLOTS) {
                long tag = s[1] * 1000 + conf_rank, back = 0, rr = 0;
                MPI_Put(&tag, 1, MPI_LONG, 0, (MPI_Aint)s[0] + conf_rank * (MPI_Aint)sizeof(long),
                        1, MPI_LONG, win);
                MPI_Win_flush(0, win);
                MPI_Get(&back, 1, MPI_LONG, 0, (MPI_Aint)s[0] + conf_rank * (MPI_Aint)sizeof(long),
                        1, MPI_LONG, win);
                MPI_Get(&rr, 1, MPI_LONG, 0, (MPI_Aint)s[0], 1, MPI_LONG, win);
                MPI_Win_flush(0, win);
                bad_back += back != tag || rr != s[1];
                accesses++;
            }
            MPI_Win_unlock(0, win);
            if (s[2])
                break;
            /* A pause between shared locks: back-to-back shared locks from every origin could
             * keep the target's exclusive lock on itself waiting (MPI does not promise a lock
             * to a writer among readers that never let go). */
            double until = MPI_Wtime() + 0.0005;
            while (MPI_Wtime() < until) {
                int flag;
                MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            }
        }
    }
    int all_bad_slot = 0, all_bad_back = 0, all_acc = 0;
    MPI_Allreduce(&bad_slot, &all_bad_slot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&bad_back, &all_bad_back, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&accesses, &all_acc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tap_ok(all_bad_slot == 0, "%d rounds of attach/detach: every slot holds nothing or its "
                              "writer's tag (%d wrong)",
           ROUNDS, all_bad_slot);
    tap_ok(all_bad_back == 0, "%d accesses to attached regions read back what they wrote and the "
                              "region's round (%d wrong)",
           all_acc, all_bad_back);
    tap_ok(all_acc > 0, "the origins reached published regions (%d accesses)", all_acc);
    if (conf_rank == 0)
        MPI_Win_detach(win, S);
    MPI_Win_free(&win);
    free(S);
    return conf_done();
}
