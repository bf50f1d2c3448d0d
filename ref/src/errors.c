/* errors.c — misuse reported the MPI way: an error code of the right class whose string names
 * the call, the rank and the argument, raised through the window's (or communicator's) error
 * handler. One dynamic code per class is created lazily and its string replaced per error
 * (MPI-3.1 §8.5 allows replacing an error string), so repeated errors allocate nothing.
 * MPICH 4.0.2 returns unrelated text for codes added to predefined classes; where a probe finds
 * that, the code is the class itself and the message goes to stderr instead. Either way
 * MPIX_Nbrma_last_error() returns it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"

#define NBR_NCLASS 128
static int codes[NBR_NCLASS];
static int strings_work = -1; /* does MPI_Error_string return what we set? (probed once) */
static char last[MPI_MAX_ERROR_STRING];

static int probe_strings(void)
{
    int code, len = 0;
    char back[MPI_MAX_ERROR_STRING] = "";
    static const char probe[] = "libnbrma error-string probe";
    if (PMPI_Add_error_code(MPI_ERR_OTHER, &code) != MPI_SUCCESS ||
        PMPI_Add_error_string(code, (char *)probe) != MPI_SUCCESS ||
        PMPI_Error_string(code, back, &len) != MPI_SUCCESS)
        return 0;
    codes[MPI_ERR_OTHER] = code;
    return strcmp(back, probe) == 0;
}

static int code_for(int cls, const char *msg)
{
    snprintf(last, sizeof last, "%s", msg);
    if (strings_work < 0)
        strings_work = probe_strings();
    if (!strings_work || cls <= 0 || cls >= NBR_NCLASS) {
        fprintf(stderr, "libnbrma: %s\n", msg);
        return cls; /* the class alone still tells what went wrong */
    }
    if (!codes[cls] && PMPI_Add_error_code(cls, &codes[cls]) != MPI_SUCCESS) {
        fprintf(stderr, "libnbrma: %s\n", msg);
        return cls;
    }
    PMPI_Add_error_string(codes[cls], (char *)msg);
    return codes[cls];
}

NBR_API const char *MPIX_Nbrma_last_error(void)
{
    return last;
}

static int format(char *buf, size_t len, const char *call, int rank, const char *fmt, va_list ap)
{
    int n = snprintf(buf, len, "%s (rank %d): ", call, rank);
    if (n < 0 || (size_t)n >= len)
        return 0;
    vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    return 1;
}

/* Format "CALL (rank R): message", make the code, raise it through the window's handler (win
 * not MPI_WIN_NULL) or the communicator's. */
static int raise_err(MPI_Win win, MPI_Comm comm, int rank, const char *call, int cls,
                     const char *fmt, va_list ap)
{
    char msg[MPI_MAX_ERROR_STRING];
    format(msg, sizeof msg, call, rank, fmt, ap);
    if (nbr_in_progress_thread()) {
        /* A recorded call failed at replay in the progress thread, which makes no MPI call: the
         * class reaches the application through the epoch's closing request. */
        snprintf(last, sizeof last, "%s", msg);
        fprintf(stderr, "libnbrma: %s\n", msg);
        return cls;
    }
    int code = code_for(cls, msg);
    if (nbr_cfg.VERBOSE && strings_work)
        fprintf(stderr, "libnbrma: %s\n", msg);
    if (win != MPI_WIN_NULL)
        PMPI_Win_call_errhandler(win, code);
    else
        PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int nbr_err(nbr_win_t *w, const char *call, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = raise_err(w->handle, MPI_COMM_NULL, w->rank, call, cls, fmt, ap);
    va_end(ap);
    return code;
}

int nbr_err_comm(MPI_Comm comm, const char *call, int cls, const char *fmt, ...)
{
    int rank = -1;
    PMPI_Comm_rank(comm, &rank);
    va_list ap;
    va_start(ap, fmt);
    int code = raise_err(MPI_WIN_NULL, comm, rank, call, cls, fmt, ap);
    va_end(ap);
    return code;
}

int nbr_err_vendor_win(MPI_Win win, const char *call, int cls, const char *fmt, ...)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    int code = raise_err(win, MPI_COMM_WORLD, rank, call, cls, fmt, ap);
    va_end(ap);
    return code;
}
