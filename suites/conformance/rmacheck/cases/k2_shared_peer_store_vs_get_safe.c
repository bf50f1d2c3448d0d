/* rmacheck-case: expect=safe kind=rma-vs-local ranks=3
 * Twin of k2_shared_peer_store_vs_get.c: store, MPI_Win_sync and a barrier precede the get. */
#define SAFE 1
#include "k2_shared_peer_store_vs_get.c"
