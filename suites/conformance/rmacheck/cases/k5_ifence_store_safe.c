/* rmacheck-case: expect=safe kind=nonblocking-epoch ranks=2 lib=nbrma
 * Twin of k5_ifence_store.c: the store follows MPI_Wait on the closing ifence request. */
#define SAFE 1
#include "k5_ifence_store.c"
