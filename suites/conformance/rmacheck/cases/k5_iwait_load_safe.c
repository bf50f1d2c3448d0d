/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=3 lib=nbrma
 * Twin of k5_iwait_load.c: the window is read after the iwait request completed. */
#define SAFE 1
#include "k5_iwait_load.c"
