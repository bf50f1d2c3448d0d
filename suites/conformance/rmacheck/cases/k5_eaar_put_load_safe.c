/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_eaar_put_load.c: the flag is off, so the exposure follows the completed lock epoch. */
#define SAFE 1
#include "k5_eaar_put_load.c"
