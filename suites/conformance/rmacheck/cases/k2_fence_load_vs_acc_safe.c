/* rmacheck-case: expect=safe kind=rma-vs-local ranks=3
 * Twin of k2_fence_load_vs_acc.c: the load follows the fence that completes the accumulates. */
#define SAFE 1
#include "k2_fence_load_vs_acc.c"
