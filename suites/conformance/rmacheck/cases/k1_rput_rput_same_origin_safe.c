/* rmacheck-case: expect=safe kind=conflicting-rma ranks=2
 * Twin of k1_rput_rput_same_origin.c: MPI_Win_flush completes the first put at the target. */
#define SAFE 1
#include "k1_rput_rput_same_origin.c"
