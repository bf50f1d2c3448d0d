/* rmacheck-case: expect=safe kind=rma-vs-local ranks=3
 * Twin of k2_pscw_load_before_wait.c: the window is read after MPI_Win_wait. */
#define SAFE 1
#include "k2_pscw_load_before_wait.c"
