/* rmacheck-case: expect=safe kind=origin-buffer ranks=2
 * Twin of k3_thread_put_origin_write.c: the main thread flushes (locally) the put its joined
 * thread issued before it reuses the origin buffer. */
#define SAFE 1
#include "k3_thread_put_origin_write.c"
