/* rmacheck-case: expect=safe kind=conflicting-rma ranks=2
 * Twin of k1_lockall_put_get_same_origin.c: MPI_Win_flush orders the put before the get. */
#define SAFE 1
#include "k1_lockall_put_get_same_origin.c"
