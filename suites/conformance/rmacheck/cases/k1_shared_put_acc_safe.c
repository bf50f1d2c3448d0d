/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_shared_put_acc.c: a fence separates the put from the accumulate. */
#define SAFE 1
#include "k1_shared_put_acc.c"
