/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_create_get_put.c: exclusive locks serialize the get and the put. */
#define SAFE 1
#include "k1_create_get_put.c"
