/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_pscw_put_put.c: two exposure epochs, one per origin, ordered by MPI_Win_wait. */
#define SAFE 1
#include "k1_pscw_put_put.c"
