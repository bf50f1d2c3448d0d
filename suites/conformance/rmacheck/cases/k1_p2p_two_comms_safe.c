/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k1_p2p_two_comms.c: "done" leaves after the unlock, and its clock is the one joined. */
#define SAFE 1
#include "k1_p2p_two_comms.c"
