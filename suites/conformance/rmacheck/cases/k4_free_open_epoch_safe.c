/* rmacheck-case: expect=safe kind=epoch-misuse ranks=2
 * Twin of k4_free_open_epoch.c: the epoch is closed before MPI_Win_free. */
#define SAFE 1
#include "k4_free_open_epoch.c"
