/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2 omp
 * Twin of k2_omp_barrier_put_vs_load.c: an omp barrier orders thread 1's unlock before
 * the master's MPI_Barrier, after which rank 1 loads. */
#define SAFE 1
#include "k2_omp_barrier_put_vs_load.c"
