/* rmacheck-case: expect=safe kind=conflicting-rma ranks=2
 * Twin of k1_thread_put_put.c: the first thread flushes its put before it returns, so the second
 * thread's put (started after the join) comes after its remote completion. */
#define SAFE 1
#include "k1_thread_put_put.c"
