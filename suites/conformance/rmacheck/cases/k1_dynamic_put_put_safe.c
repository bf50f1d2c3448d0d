/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_dynamic_put_put.c: a flush and a barrier order the two puts. */
#define SAFE 1
#include "k1_dynamic_put_put.c"
