/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_iflush_result_read.c: MPI_Wait on the iflush request before the result is read. */
#define SAFE 1
#include "k5_iflush_result_read.c"
