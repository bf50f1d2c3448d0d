/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_fence_nostore_lie.c: no NOSTORE on the fence after the store. */
#define SAFE 1
#include "k4_fence_nostore_lie.c"
