/* rmacheck-case: expect=safe kind=origin-buffer ranks=2
 * Twin of k3_fence_acc_origin_write.c: the origin buffer is updated after the fence. */
#define SAFE 1
#include "k3_fence_acc_origin_write.c"
