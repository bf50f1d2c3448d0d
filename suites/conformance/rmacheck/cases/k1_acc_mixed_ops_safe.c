/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_acc_mixed_ops.c: a fence between the MPI_SUM and the MPI_MAX accumulate. */
#define SAFE 1
#include "k1_acc_mixed_ops.c"
