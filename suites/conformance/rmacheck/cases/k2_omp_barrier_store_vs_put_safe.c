/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2 omp
 * Twin of k2_omp_barrier_store_vs_put.c: an omp barrier orders thread 1's store before the
 * master's MPI_Barrier, hence before rank 0's put. */
#define SAFE 1
#include "k2_omp_barrier_store_vs_put.c"
