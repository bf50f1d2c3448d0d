/* rmacheck-case: expect=safe kind=origin-buffer ranks=3
 * Twin of k3_shared_getacc_result.c: MPI_Win_flush before the result buffer is reused. */
#define SAFE 1
#include "k3_shared_getacc_result.c"
