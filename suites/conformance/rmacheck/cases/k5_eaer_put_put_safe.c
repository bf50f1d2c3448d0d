/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=3 lib=nbrma
 * Twin of k5_eaer_put_put.c: the flag is off, so the exposure epochs of rank 0 run one after the other. */
#define SAFE 1
#include "k5_eaer_put_put.c"
