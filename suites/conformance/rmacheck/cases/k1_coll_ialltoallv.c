/* rmacheck-case: expect=hazard kind=rma-vs-local ranks=2
 * k1_coll_alltoallv.c with the nonblocking collectives (MPI_Ialltoallv, MPI_Ialltoallw,
 * MPI_Iallgatherv, MPI_Igatherv, MPI_Iscatterv, MPI_Ireduce_scatter, MPI_Ireduce_scatter_block,
 * MPI_Iscan, MPI_Iexscan, MPI_Iscatter, MPI_Ialltoall), each completed with MPI_Wait: in the
 * MPI_Ialltoallv round rank 0 unlocks only after it. Twin: k1_coll_ialltoallv_safe.c. */
#define NONBLOCKING 1
#include "k1_coll_alltoallv.c"
