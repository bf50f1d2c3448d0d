/* rmacheck-case: expect=safe kind=epoch-misuse ranks=3
 * Twin of k4_fence_noprecede_lie.c: the fence that completes the puts carries no NOPRECEDE. */
#define SAFE 1
#include "k4_fence_noprecede_lie.c"
