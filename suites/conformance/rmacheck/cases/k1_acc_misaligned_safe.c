/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_acc_misaligned.c: a flush and a barrier order the two accumulates. */
#define SAFE 1
#include "k1_acc_misaligned.c"
