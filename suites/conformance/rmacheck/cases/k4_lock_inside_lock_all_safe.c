/* rmacheck-case: expect=safe kind=epoch-misuse ranks=3
 * Twin of k4_lock_inside_lock_all.c: the lock_all epoch is closed before MPI_Win_lock. */
#define SAFE 1
#include "k4_lock_inside_lock_all.c"
