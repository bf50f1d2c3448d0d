/* rmacheck-case: expect=safe kind=origin-buffer ranks=2
 * Twin of k3_get_result_read.c: the result is read after MPI_Win_unlock. */
#define SAFE 1
#include "k3_get_result_read.c"
