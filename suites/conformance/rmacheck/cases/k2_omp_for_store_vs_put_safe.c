/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2 omp
 * Twin of k2_omp_for_store_vs_put.c: the loop keeps its implied barrier (no nowait), so
 * thread 1's iterations precede the master's MPI_Barrier and rank 0's put. */
#define SAFE 1
#include "k2_omp_for_store_vs_put.c"
