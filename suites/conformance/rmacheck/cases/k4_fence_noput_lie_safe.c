/* rmacheck-case: expect=safe kind=epoch-misuse ranks=3
 * Twin of k4_fence_noput_lie.c: no NOPUT on the fence before the accumulate. */
#define SAFE 1
#include "k4_fence_noput_lie.c"
