/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k1_coll_ialltoallv.c: rank 0 unlocks before each nonblocking collective, which orders
 * rank 1's load (after the collective's MPI_Wait) after the put. */
#define SAFE 1
#define NONBLOCKING 1
#include "k1_coll_alltoallv.c"
