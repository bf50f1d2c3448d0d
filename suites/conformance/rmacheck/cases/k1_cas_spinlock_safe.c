/* rmacheck-case: expect=safe kind=conflicting-rma ranks=3 env=OMPI_MCA_osc=sm
 * Twin of k1_cas_spinlock.c: each holder flushes its put before releasing the lock, so the next
 * holder's get (after its CAS took the lock) is ordered after it. */
#define SAFE 1
#include "k1_cas_spinlock.c"
