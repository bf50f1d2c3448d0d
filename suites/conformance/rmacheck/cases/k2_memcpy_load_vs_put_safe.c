/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k2_memcpy_load_vs_put.c: the copy follows a barrier that follows the unlock. */
#define SAFE 1
#include "k2_memcpy_load_vs_put.c"
