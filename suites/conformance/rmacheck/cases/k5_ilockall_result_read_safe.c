/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_ilockall_result_read.c: MPI_Waitall on the ilock_all/iunlock_all requests before the read. */
#define SAFE 1
#include "k5_ilockall_result_read.c"
