/* rmacheck-case: expect=safe kind=epoch-misuse ranks=3
 * Twin of k4_get_outside_start_group.c: rank 2 is in the start group and posts. */
#define SAFE 1
#include "k4_get_outside_start_group.c"
