/* rmacheck-case: expect=safe kind=epoch-misuse ranks=3
 * Twin of k4_unlock_without_lock.c: MPI_Win_lock before the unlock. */
#define SAFE 1
#include "k4_unlock_without_lock.c"
