/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_unlock_all_without_lock_all.c: MPI_Win_lock_all before MPI_Win_unlock_all. */
#define SAFE 1
#include "k4_unlock_all_without_lock_all.c"
