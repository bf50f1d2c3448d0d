/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 0 puts into rank 1's window in one lock/unlock epoch per round and then tells rank 1 with
 * a persistent send; rank 1 receives each notice with a persistent receive (MPI_Recv_init,
 * restarted every round with MPI_Start or MPI_Startall, completed with MPI_Wait, MPI_Test,
 * MPI_Waitall or MPI_Waitany, freed with MPI_Request_free after each phase and initialized anew)
 * and then reads the element with a plain load. In the last round the notice is sent before the
 * unlock: the put may still be in flight when rank 1 loads.
 * Twin: k1_p2p_persistent_safe.c sends every notice after the unlock. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
#define PHASES 2
#define ROUNDS 4
int main(int argc, char **argv)
{
    int rank, v, note = 0;
    long x = 0;
    int mem[PHASES * ROUNDS] = {0};
    MPI_Win win;
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int ph = 0; ph < PHASES; ph++) {
        if (rank == 0) {
            MPI_Send_init(&note, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q);
            for (int i = 0; i < ROUNDS; i++) {
                int k = ph * ROUNDS + i, early = !SAFE && k == PHASES * ROUNDS - 1;
                v = 100 + k;
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Put(&v, 1, MPI_INT, 1, k, 1, MPI_INT, win);
                if (early) {
                    MPI_Start(&q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                }
                MPI_Win_unlock(1, win);
                if (!early) {
                    MPI_Start(&q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                }
            }
            MPI_Request_free(&q);
        } else if (rank == 1) {
            MPI_Recv_init(&note, 1, MPI_INT, ph ? MPI_ANY_SOURCE : 0, 7, MPI_COMM_WORLD, &q);
            for (int i = 0; i < ROUNDS; i++) {
                int done = 0, idx;
                switch (i) {
                case 0:
                    MPI_Start(&q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                    break;
                case 1:
                    MPI_Startall(1, &q);
                    while (!done)
                        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
                    break;
                case 2:
                    MPI_Start(&q);
                    MPI_Waitall(1, &q, MPI_STATUSES_IGNORE);
                    break;
                default:
                    MPI_Start(&q);
                    MPI_Waitany(1, &q, &idx, MPI_STATUS_IGNORE);
                    break;
                }
                x += *(volatile int *)&mem[ph * ROUNDS + i];
            }
            MPI_Request_free(&q);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
