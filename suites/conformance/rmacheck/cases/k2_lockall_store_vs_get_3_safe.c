/* rmacheck-case: expect=safe kind=rma-vs-local ranks=3
 * Twin of k2_lockall_store_vs_get_3.c: exclusive self-lock for the store, shared locks for the gets. */
#define SAFE 1
#include "k2_lockall_store_vs_get_3.c"
