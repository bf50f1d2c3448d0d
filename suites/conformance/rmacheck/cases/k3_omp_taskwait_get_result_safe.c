/* rmacheck-case: expect=safe kind=origin-buffer ranks=2 omp
 * Twin of k3_omp_taskwait_get_result.c: the creating thread loads the result after
 * #pragma omp taskwait, which waits for the task and so for the unlock that completed the get. */
#define SAFE 1
#include "k3_omp_taskwait_get_result.c"
