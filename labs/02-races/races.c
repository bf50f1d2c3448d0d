/* races.c — lab 2: three classic races (labs/02-races/README.md).
 *
 * Every rank exposes a window of 16 ints. Rank 0's window is where everything lands:
 *   win[0]          A: a total every rank adds its contribution (rank + 1) to
 *   win[4 + r]      B: the table, one slot per rank r, filled anew in each of two rounds
 *   win[12], [13]   C: two records rank 1 sends to rank 0 in one passive-target epoch
 * Rank 0 prints what it found and whether that is what it should be. Each part has one bug.
 *
 *   mpiexec -n 3 ./races        (2 to 8 ranks)
 */
#include "labutil.h"

enum { TOTAL = 0, TABLE = 4, RECORDS = 12, NINTS = 16 };

int main(int argc, char **argv)
{
    int rank, nranks, *win_mem;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2 || nranks > 8) {
        if (rank == 0)
            fprintf(stderr, "races: run me on 2 to 8 ranks\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Win_allocate(NINTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem,
                     &win);
    for (int i = 0; i < NINTS; i++)
        win_mem[i] = 0;

    /* A. The total: every rank adds rank + 1 to rank 0's win[TOTAL], in one fence epoch. */
    int contribution = rank + 1;
    MPI_Win_fence(0, win);
    MPI_Put(&contribution, 1, MPI_INT, 0, TOTAL, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        printf("races: A total = %d (expected %d)\n", win_mem[TOTAL], nranks * (nranks + 1) / 2);

    /* B. The table, two rounds: rank 0 clears it, every rank writes its slot, rank 0 sums it. */
    int sums[2] = {0, 0};
    for (int round = 1; round <= 2; round++) {
        int entry = 10 * round + rank;
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int r = 0; r < nranks; r++)
                win_mem[TABLE + r] = 0; /* a fresh table for this round */
        MPI_Put(&entry, 1, MPI_INT, 0, TABLE + rank, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int r = 0; r < nranks; r++)
                sums[round - 1] += win_mem[TABLE + r];
    }
    if (rank == 0)
        for (int round = 1; round <= 2; round++)
            printf("races: B round %d table sum = %d (expected %d)\n", round, sums[round - 1],
                   10 * round * nranks + nranks * (nranks - 1) / 2);

    /* C. Two records from rank 1 to rank 0 in one passive-target epoch, through one buffer. */
    if (rank == 1) {
        int record;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        record = 111;
        MPI_Put(&record, 1, MPI_INT, 0, RECORDS, 1, MPI_INT, win);
        record = 222;
        MPI_Put(&record, 1, MPI_INT, 0, RECORDS + 1, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    lab_barrier(MPI_COMM_WORLD); /* rank 1's epoch is over: rank 0 may read its window */
    if (rank == 0) {
        printf("races: C records = %d %d (expected 111 222)\n", win_mem[RECORDS],
               win_mem[RECORDS + 1]);
        printf("lab-result: total=%d round1=%d round2=%d record1=%d record2=%d nranks=%d\n",
               win_mem[TOTAL], sums[0], sums[1], win_mem[RECORDS], win_mem[RECORDS + 1], nranks);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
