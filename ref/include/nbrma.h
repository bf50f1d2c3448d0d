/* nbrma.h — the extensions libnbrma adds to MPI. Include it after <mpi.h>; link with -lnbrma
 * (before the MPI library) or run with libnbrma preloaded. See docs/ref.md. */
#ifndef NBRMA_H
#define NBRMA_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Choose who serves the windows created from now on: "ref" (libnbrma, the default) or
 * "vendor" (every call on those windows is forwarded to the MPI library unchanged). The
 * NBRMA_IMPL setting gives the initial choice. Returns MPI_SUCCESS or MPI_ERR_ARG. */
int MPIX_Nbrma_set_impl(const char *impl);

/* The message of the last error libnbrma raised in this process ("MPI_Put (rank 0): ..."), or
 * "". MPI_Error_string on the returned code gives the same text where the MPI library keeps
 * strings for codes of predefined classes (Open MPI); elsewhere (MPICH 4.0.2) it is also printed
 * on stderr when raised. */
const char *MPIX_Nbrma_last_error(void);

/* Print the NBRMA_* settings with their current values and meaning to `stream` (a FILE *). */
void MPIX_Nbrma_print_settings(void *stream);

#ifdef __cplusplus
}
#endif

#endif
