/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_put_outside_epoch.c: the put is inside MPI_Win_lock/MPI_Win_unlock. */
#define SAFE 1
#include "k4_put_outside_epoch.c"
