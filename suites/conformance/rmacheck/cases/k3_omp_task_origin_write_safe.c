/* rmacheck-case: expect=safe kind=origin-buffer ranks=2 omp
 * Twin of k3_omp_task_origin_write.c: the store comes before the task is created, so the
 * task's put reads its origin buffer after it. */
#define SAFE 1
#include "k3_omp_task_origin_write.c"
