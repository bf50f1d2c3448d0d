/* rmacheck-case: expect=safe kind=origin-buffer ranks=2 omp
 * Twin of k3_omp_master_get_result.c: an omp barrier after the master construct orders
 * the unlock that completed the get before the other thread's load. */
#define SAFE 1
#include "k3_omp_master_get_result.c"
