/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k2_lock_load_vs_put.c: a barrier after the unlock orders the put before the load. */
#define SAFE 1
#include "k2_lock_load_vs_put.c"
