/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_vector_overlap.c: a fence between the column put and the row put. */
#define SAFE 1
#include "k1_vector_overlap.c"
