/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k2_dynamic_store_vs_get.c: the store precedes the barrier before the get. */
#define SAFE 1
#include "k2_dynamic_store_vs_get.c"
