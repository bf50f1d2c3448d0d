/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_iunlock_origin_write.c: MPI_Wait on the iunlock request before the buffer is reused. */
#define SAFE 1
#include "k5_iunlock_origin_write.c"
