/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_fence_nosucceed_lie.c: the fence that opens the epoch has no NOSUCCEED. */
#define SAFE 1
#include "k4_fence_nosucceed_lie.c"
