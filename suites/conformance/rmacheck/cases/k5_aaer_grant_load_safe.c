/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_aaer_grant_load.c: the flag is off, so the lock is granted after the exposure completed. */
#define SAFE 1
#include "k5_aaer_grant_load.c"
