/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k1_p2p_persistent.c: every notice is sent after the unlock, so each restart of rank 1's
 * persistent receive orders its load after the put. */
#define SAFE 1
#include "k1_p2p_persistent.c"
