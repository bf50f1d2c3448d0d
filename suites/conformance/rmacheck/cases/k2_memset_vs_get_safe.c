/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k2_memset_vs_get.c: the memset precedes the barrier that precedes the get. */
#define SAFE 1
#include "k2_memset_vs_get.c"
