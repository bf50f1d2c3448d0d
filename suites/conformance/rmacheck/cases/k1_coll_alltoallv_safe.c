/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k1_coll_alltoallv.c: rank 0 unlocks before the collective in every round, so each of
 * the collectives orders rank 1's load after the put. */
#define SAFE 1
#include "k1_coll_alltoallv.c"
