/* rmacheck-case: expect=safe kind=origin-buffer ranks=3
 * Twin of k3_rput_origin_write.c: MPI_Wait on the request before the buffer is reused. */
#define SAFE 1
#include "k3_rput_origin_write.c"
