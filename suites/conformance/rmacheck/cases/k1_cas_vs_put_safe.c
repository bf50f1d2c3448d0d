/* rmacheck-case: expect=safe kind=conflicting-rma ranks=2 env=OMPI_MCA_osc=sm
 * Twin of k1_cas_vs_put.c: a flush and a barrier order the put before the CAS. */
#define SAFE 1
#include "k1_cas_vs_put.c"
