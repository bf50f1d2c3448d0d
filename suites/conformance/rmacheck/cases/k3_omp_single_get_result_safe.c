/* rmacheck-case: expect=safe kind=origin-buffer ranks=2 omp
 * Twin of k3_omp_single_get_result.c: the single construct keeps its implied barrier, so
 * the other thread loads the result after the unlock that completed the get. */
#define SAFE 1
#include "k3_omp_single_get_result.c"
