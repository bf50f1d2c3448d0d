/* rmacheck-case: expect=safe kind=origin-buffer ranks=2
 * Twin of k3_put_origin_write.c: MPI_Win_flush_local before the origin buffer is reused. */
#define SAFE 1
#include "k3_put_origin_write.c"
