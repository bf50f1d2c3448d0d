/* win_stats.h — how the ref unit tests read what a window reports: MPIX_Win_get_stats (test_stats,
 * test_lockq, test_meta, test_ucx: the struct of this library's version, or a fatal failure
 * naming the call) and one key of MPI_Win_get_info (test_lockq, test_meta, test_sched). */
#ifndef NBRMA_TESTS_WIN_STATS_H
#define NBRMA_TESTS_WIN_STATS_H

#include <string.h>

#include "nbrma.h"
#include "tap.h"

static inline MPIX_Win_stats win_stats(MPI_Win win)
{
    MPIX_Win_stats s;
    memset(&s, 0, sizeof s);
    s.version = MPIX_WIN_STATS_VERSION;
    if (MPIX_Win_get_stats(win, &s) != MPI_SUCCESS)
        tap_bail_out("MPIX_Win_get_stats failed");
    return s;
}

/* Does MPI_Win_get_info report key = want? A mismatch is a diagnostic naming both values. */
static inline int win_info_is(MPI_Win win, const char *key, const char *want)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int found = 0;
    if (MPI_Win_get_info(win, &info) != MPI_SUCCESS)
        tap_bail_out("MPI_Win_get_info failed");
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &found);
    MPI_Info_free(&info);
    if (!found || strcmp(v, want)) {
        tap_diag("MPI_Win_get_info: %s is \"%s\", expected \"%s\"", key, found ? v : "(none)",
                 want);
        return 0;
    }
    return 1;
}

#endif
