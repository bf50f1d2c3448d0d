/* rmacheck-case: expect=safe kind=origin-buffer ranks=2
 * Twin of k3_get_get_one_buffer.c: a flush completes the first get before the second starts. */
#define SAFE 1
#include "k3_get_get_one_buffer.c"
