/* mpix.h — libnbrma's extensions (ref/include/nbrma.h) as weak references, so one benchmark
 * binary links and runs whether or not the libnbrma it meets has them: a missing function is a
 * NULL pointer, and the harness skips the series that needs it (vendor runs anywhere; ref needs
 * MPIX_Nbrma_set_impl; ref-nb needs MPIX_Win_ifence, hence the whole nonblocking API). The
 * signatures are nbrma.h's; the info keys are its strings. */
#ifndef NBH_MPIX_H
#define NBH_MPIX_H

#include <mpi.h>

#define NBH_WEAK __attribute__((weak))

extern int MPIX_Nbrma_set_impl(const char *impl) NBH_WEAK;
extern int MPIX_Win_ifence(int assert, MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_ipost(MPI_Group group, int assert, MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_istart(MPI_Group group, int assert, MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_icomplete(MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_iwait(MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_ilock(int lock_type, int rank, int assert, MPI_Win win,
                          MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_iunlock(int rank, MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_ilock_all(int assert, MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_iunlock_all(MPI_Win win, MPI_Request *request) NBH_WEAK;
extern int MPIX_Win_iflush(int rank, MPI_Win win, MPI_Request *request) NBH_WEAK;

/* Reorder flags (paper 000 §VI-B): window info keys, value "true" turns one on. The short keys
 * (nbrma.h's MPIX_A_A_A_R, ...): Open MPI 4.1 refuses keys longer than 35 characters, which the
 * long MPIX_WIN_*_REORDER names of three flags are. */
#define NBH_KEY_A_A_A_R "MPIX_A_A_A_R"
#define NBH_KEY_A_A_E_R "MPIX_A_A_E_R"
#define NBH_KEY_E_A_E_R "MPIX_E_A_E_R"
#define NBH_KEY_E_A_A_R "MPIX_E_A_A_R"

#endif
