/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_flush_outside_epoch.c: the flush is inside the lock_all epoch. */
#define SAFE 1
#include "k4_flush_outside_epoch.c"
