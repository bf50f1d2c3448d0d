/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k2_self_put_load.c: MPI_Win_flush completes the put before the load. */
#define SAFE 1
#include "k2_self_put_load.c"
