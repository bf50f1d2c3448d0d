/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2 omp
 * Twin of k2_omp_lock_store_vs_put.c: thread 1 stores while it holds the lock, before it
 * sets the flag, so the store precedes the master's MPI_Barrier and rank 0's put. */
#define SAFE 1
#include "k2_omp_lock_store_vs_put.c"
