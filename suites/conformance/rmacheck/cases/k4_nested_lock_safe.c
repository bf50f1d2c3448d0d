/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_nested_lock.c: the first epoch is closed before the second opens. */
#define SAFE 1
#include "k4_nested_lock.c"
