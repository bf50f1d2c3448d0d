/* win_stats.h — how the ref unit tests read MPIX_Win_get_stats (test_stats, test_lockq,
 * test_ucx): the struct of this library's version, or a fatal failure naming the call. */
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

#endif
