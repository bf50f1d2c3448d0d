/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2 omp
 * Twin of k2_omp_sections_put_vs_load.c: the barrier is in a second sections construct, which
 * the first one's implied barrier orders after the put's unlock. */
#define SAFE 1
#include "k2_omp_sections_put_vs_load.c"
