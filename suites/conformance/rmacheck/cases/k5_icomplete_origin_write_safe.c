/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_icomplete_origin_write.c: MPI_Waitall on the istart/icomplete requests before the buffer is reused. */
#define SAFE 1
#include "k5_icomplete_origin_write.c"
