/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3 env=OMPI_MCA_osc=sm
 * Twin of k1_atomic_flag.c: rank 1 flushes its put before raising the flag, so rank 2's get,
 * made after it saw the flag through an atomic, is ordered after the put. */
#define SAFE 1
#include "k1_atomic_flag.c"
