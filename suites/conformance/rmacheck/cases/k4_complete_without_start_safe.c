/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_complete_without_start.c: start/complete matched by post/wait. */
#define SAFE 1
#include "k4_complete_without_start.c"
