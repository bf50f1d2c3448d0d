/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_aaar_put_put.c: the first epoch completes before the second opens. */
#define SAFE 1
#include "k5_aaar_put_put.c"
