/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2 omp
 * Twin of k2_omp_parallel_store_vs_put.c: rank 1 calls MPI_Barrier after the parallel region:
 * the region's end orders thread 1's store before it, hence before rank 0's put. */
#define SAFE 1
#include "k2_omp_parallel_store_vs_put.c"
