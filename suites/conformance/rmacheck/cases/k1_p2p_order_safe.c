/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3
 * Twin of k1_p2p_order.c: rank 2 puts only after receiving rank 1's messages (sent after its
 * flush), so rank 1's put is complete before rank 2's is issued. Also checks that rmacheck
 * finishes a program whose sends are MPI_Ssend, MPI_Bsend and persistent. */
#define SAFE 1
#include "k1_p2p_order.c"
