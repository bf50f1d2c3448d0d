/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * Rank 0 puts into rank 1's window in one lock/unlock epoch per round and then tells rank 1 with
 * MPI_Send; rank 1 receives each notice through a matched probe (MPI_Mprobe + MPI_Mrecv, with and
 * without status, after an MPI_Probe and MPI_Iprobe that receive nothing; MPI_Improbe +
 * MPI_Imrecv completed with MPI_Wait or MPI_Test) and then reads the element with a plain load.
 * In the last round the notice is sent before the unlock: the put may still be in flight when
 * rank 1 loads. Twin: k1_p2p_mprobe_safe.c sends every notice after the unlock. */
#include <mpi.h>
#ifndef SAFE
#define SAFE 0
#endif
#define ROUNDS 5
int main(int argc, char **argv)
{
    int rank, v, note = 0;
    long x = 0;
    int mem[ROUNDS] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < ROUNDS; i++) {
        if (rank == 0) {
            int early = !SAFE && i == ROUNDS - 1;
            v = 100 + i;
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Put(&v, 1, MPI_INT, 1, i, 1, MPI_INT, win);
            if (early)
                MPI_Send(&note, 1, MPI_INT, 1, 10 + i, MPI_COMM_WORLD);
            MPI_Win_unlock(1, win);
            if (!early)
                MPI_Send(&note, 1, MPI_INT, 1, 10 + i, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Message m;
            MPI_Status st;
            MPI_Request q;
            int flag = 0;
            switch (i) {
            case 0:
                MPI_Mprobe(0, 10 + i, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
                MPI_Mrecv(&note, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
                break;
            case 1:
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                while (!flag)
                    MPI_Iprobe(0, 10 + i, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
                MPI_Mrecv(&note, 1, MPI_INT, &m, &st);
                break;
            case 2:
                while (!flag)
                    MPI_Improbe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
                MPI_Imrecv(&note, 1, MPI_INT, &m, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                break;
            default:
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, 10 + i, MPI_COMM_WORLD, &flag, &m, &st);
                MPI_Imrecv(&note, 1, MPI_INT, &m, &q);
                flag = 0;
                while (!flag)
                    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
                break;
            }
            x += *(volatile int *)&mem[i];
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return x == 12345;
}
