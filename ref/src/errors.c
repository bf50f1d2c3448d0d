/* errors.c — misuse reported the MPI way: an error code of the right class whose string names
 * the call, the rank and the argument, raised through the window's (or communicator's) error
 * handler. One dynamic code per class is created lazily and its string replaced per error
 * (MPI-3.1 §8.5 allows replacing an error string), so repeated errors allocate nothing.
 * MPICH 4.0.2 returns unrelated text for codes added to predefined classes; where a probe finds
 * that, the code is the class itself. Either way MPIX_Nbrma_last_error() returns the message; it
 * is printed only with NBRMA_VERBOSE=1, or when the handler is about to abort the job with a
 * text that would not contain it. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"

#define NBR_NCLASS 128
static pthread_mutex_t codes_mu = PTHREAD_MUTEX_INITIALIZER; /* errors come from any thread */
static int codes[NBR_NCLASS];
static int strings_work = -1; /* does MPI_Error_string return what we set? (probed once) */
static _Thread_local char last[MPI_MAX_ERROR_STRING];

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
    if (!strings_work || cls <= 0 || cls >= NBR_NCLASS)
        return cls; /* the class alone still tells what went wrong; the text is in `last` */
    if (!codes[cls] && PMPI_Add_error_code(cls, &codes[cls]) != MPI_SUCCESS)
        return cls;
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
 * not MPI_WIN_NULL) or the communicator's. A recorded call carried out later (`deferred`) only
 * makes its code: the error belongs to the request that completes it, whose wait raises it
 * (progress.c). Nothing is printed unless NBRMA_VERBOSE asks: with MPI_ERRORS_RETURN the
 * application decides what to say (MPIX_Nbrma_last_error gives the text). */
static int raise_err(MPI_Win win, MPI_Comm comm, int rank, const char *call, int cls,
                     int deferred, const char *fmt, va_list ap)
{
    char msg[MPI_MAX_ERROR_STRING];
    format(msg, sizeof msg, call, rank, fmt, ap);
    if (nbr_cfg.VERBOSE)
        fprintf(stderr, "libnbrma: %s\n", msg);
    if (nbr_in_progress_thread()) {
        /* The progress thread makes no MPI call: the class reaches the application through
         * the epoch's closing request. */
        snprintf(last, sizeof last, "%s", msg);
        return cls;
    }
    pthread_mutex_lock(&codes_mu);
    int code = code_for(cls, msg);
    pthread_mutex_unlock(&codes_mu);
    if (deferred)
        return code;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if ((win != MPI_WIN_NULL ? PMPI_Win_get_errhandler(win, &eh)
                             : PMPI_Comm_get_errhandler(comm, &eh)) == MPI_SUCCESS) {
        /* Before a fatal handler we print the message ourselves even where the vendor's abort
         * text would carry it: Open MPI sends that text to mpirun as an aggregated help message,
         * and when the job is torn down by another rank's abort it can be lost (seen in CI:
         * neither rank's message reached stderr). One line written by this process is not. */
        if (!nbr_cfg.VERBOSE && eh == MPI_ERRORS_ARE_FATAL) {
            fprintf(stderr, "libnbrma: %s\n", msg);
            fflush(stderr);
        }
        if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN)
            PMPI_Errhandler_free(&eh);
    }
    if (win != MPI_WIN_NULL)
        PMPI_Win_call_errhandler(win, code);
    else
        PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int nbr_err_raise(MPI_Win win, int code)
{
    nbr_win_t *w = win != MPI_WIN_NULL ? nbr_win_find(win) : NULL;
    if (w)
        PMPI_Win_call_errhandler(win, code);
    else
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    return code;
}

int nbr_err(nbr_win_t *w, const char *call, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = raise_err(w->handle, MPI_COMM_NULL, w->rank, call, cls, w->replaying, fmt, ap);
    va_end(ap);
    return code;
}

int nbr_err_comm(MPI_Comm comm, const char *call, int cls, const char *fmt, ...)
{
    int rank = -1;
    PMPI_Comm_rank(comm, &rank);
    va_list ap;
    va_start(ap, fmt);
    int code = raise_err(MPI_WIN_NULL, comm, rank, call, cls, 0, fmt, ap);
    va_end(ap);
    return code;
}

int nbr_err_vendor_win(MPI_Win win, const char *call, int cls, const char *fmt, ...)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    int code = raise_err(win, MPI_COMM_WORLD, rank, call, cls, 0, fmt, ap);
    va_end(ap);
    return code;
}
