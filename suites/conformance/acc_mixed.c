/* acc_mixed.c — accumulate atomicity with mixed operations on one element (MPI-3.1 §11.7.1:
 * "accumulate operations ... to the same location with the same basic datatype" are atomic with
 * respect to each other whatever their ops, MPI_Fetch_and_op and MPI_Compare_and_swap included).
 * Every rank hammers element 0 of rank 0's window, under lock_all, with MPI_Accumulate(SUM, +1),
 * MPI_Fetch_and_op(SUM, +1), MPI_Compare_and_swap (old -> old + 1, retried until it wins),
 * MPI_Accumulate(MIN) with a value far above the counter (changes nothing) and a swap: the
 * counter is replaced by 0 (MPI_Fetch_and_op(MPI_REPLACE)) and what it held added back (SUM).
 * Every increment must survive: a lost update (one operation served by a NIC atomic, another by
 * the target's CPU, or any non-atomic read-modify-write) leaves the final value short of the
 * number of increments. Run on 3 ranks on 3 nodes (NBRMA_RANKS_PER_NODE=1) over each transport. */
#include <limits.h>

#include "conf.h"

#define ROUNDS 300

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(3);
    long *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    *base = 0;
    nbh_barrier(MPI_COMM_WORLD);
    long *seen = malloc(ROUNDS * sizeof *seen); /* values fetched before my increments */
    int nseen = 0;
    long incs = 0, one = 1, big = LONG_MAX, zero = 0, nswap = 0;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ROUNDS; i++) {
        long old, cmp, nv;
        switch ((i + conf_rank) % 5) {
        case 0:
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
            incs++;
            break;
        case 1:
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
            seen[nseen++] = old;
            incs++;
            break;
        case 2: /* compare-and-swap until it wins */
            MPI_Fetch_and_op(NULL, &cmp, MPI_LONG, 0, 0, MPI_NO_OP, win);
            MPI_Win_flush(0, win);
            for (;;) {
                nv = cmp + 1;
                MPI_Compare_and_swap(&nv, &cmp, &old, MPI_LONG, 0, 0, win);
                MPI_Win_flush(0, win);
                if (old == cmp)
                    break;
                cmp = old;
            }
            seen[nseen++] = old;
            incs++;
            break;
        case 3: /* MIN with a value above every counter: no change, still an atomic access */
            MPI_Accumulate(&big, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_MIN, win);
            break;
        default: /* REPLACE: swap the counter out for 0, then add what it held back. Every
                  * increment is conserved only if the swap is atomic with the others. */
            MPI_Fetch_and_op(&zero, &old, MPI_LONG, 0, 0, MPI_REPLACE, win);
            MPI_Win_flush(0, win);
            MPI_Accumulate(&old, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
            nswap++;
            break;
        }
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    long total = 0;
    MPI_Allreduce(&incs, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    nbh_barrier(MPI_COMM_WORLD);
    long final = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&final, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    MPI_Win_unlock(0, win);
    tap_ok(final == total, "%ld increments from %d ranks by SUM, fetch_and_op, CAS and "
                           "get_accumulate (with MIN in between) leave %ld",
           total, conf_size, final);
    /* Fetched values are counts other ranks' increments had reached: never above the total. */
    int over = 0;
    for (int k = 0; k < nseen; k++)
        over += seen[k] < 0 || seen[k] >= total;
    tap_ok(over == 0, "every value fetched before an increment lies in [0, %ld) (%d outside)",
           total, over);
    long swaps = 0;
    MPI_Allreduce(&nswap, &swaps, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    tap_ok(swaps > 0, "%ld REPLACE swaps ran among them", swaps);
    free(seen);
    MPI_Win_free(&win);
    return conf_done();
}
