/* rmacheck-case: expect=safe kind=origin-buffer ranks=3
 * Twin of k3_fop_result_read.c: MPI_Win_flush_local before the fetched value is read. */
#define SAFE 1
#include "k3_fop_result_read.c"
