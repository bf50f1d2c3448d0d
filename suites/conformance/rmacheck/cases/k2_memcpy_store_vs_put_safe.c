/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k2_memcpy_store_vs_put.c: the memcpy precedes the fence that opens the epoch. */
#define SAFE 1
#include "k2_memcpy_store_vs_put.c"
