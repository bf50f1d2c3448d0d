/* rmacheck-case: expect=safe kind=origin-buffer ranks=2
 * Twin of k3_pscw_get_result_read.c: the result is read after MPI_Win_complete. */
#define SAFE 1
#include "k3_pscw_get_result_read.c"
