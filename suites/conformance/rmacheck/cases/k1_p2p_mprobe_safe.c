/* rmacheck-case: expect=safe kind=rma-vs-local ranks=2
 * Twin of k1_p2p_mprobe.c: every notice is sent after the unlock, so each matched receive orders
 * rank 1's load after the put (and the plain probes consume no clock). */
#define SAFE 1
#include "k1_p2p_mprobe.c"
