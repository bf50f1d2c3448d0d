/* strategy.h — what the F experiments (paper 004's implementation strategies; issue 26) share:
 * a libnbrma window of one strategy, its MPIX_Win_get_stats gauges, and the values the ranks put
 * so that every target can verify what arrived. Header-only (static functions), for
 * suites/patterns/f*.c. */
#ifndef NBRMA_PATTERNS_STRATEGY_H
#define NBRMA_PATTERNS_STRATEGY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ref/include/nbrma.h"
#include "bench.h"

/* Weak, as mpix.h does for the rest of the API: a libnbrma without it skips the experiment. */
extern int MPIX_Win_get_stats(MPI_Win win, MPIX_Win_stats *stats) __attribute__((weak));

/* The value origin `origin` puts at slot i in epoch `epoch`: distinct per origin, epoch and slot,
 * so a late, lost or misplaced put shows at its target. */
static inline long strat_value(int origin, long epoch, size_t i)
{
    return ((long)origin << 40) ^ (epoch << 24) ^ (long)i;
}

static inline MPIX_Win_stats strat_stats(const nbh_case_t *c, MPI_Win win)
{
    MPIX_Win_stats s;
    memset(&s, 0, sizeof s);
    s.version = MPIX_WIN_STATS_VERSION;
    NBH_MPI(c, MPIX_Win_get_stats(win, &s));
    return s;
}

/* An MPI_Win_allocate window of `bytes` (disp_unit 8) on libnbrma whose info sets `key` to
 * `value` (e.g. nbrma_issue=delayed), and a source buffer of `nsrc` longs. Returns 0 after
 * skipping the case (with the reason) when this libnbrma has no MPIX_Win_get_stats. */
static inline int strat_window(const nbh_case_t *c, gb_state_t *st, const char *key,
                               const char *value, size_t bytes, size_t nsrc, long **base,
                               long **src, MPI_Win *win)
{
    if (!MPIX_Win_get_stats || !MPIX_Nbrma_set_impl) {
        gb_skip_with_error(st, "this libnbrma has no MPIX_Win_get_stats");
        return 0;
    }
    NBH_MPI(c, MPIX_Nbrma_set_impl("ref"));
    MPI_Info info;
    NBH_MPI(c, MPI_Info_create(&info));
    NBH_MPI(c, MPI_Info_set(info, key, value));
    NBH_MPI(c, MPI_Win_allocate((MPI_Aint)bytes, sizeof(long), info, c->ctx->comm, base, win));
    NBH_MPI(c, MPI_Info_free(&info));
    if (!(*src = malloc((nsrc ? nsrc : 1) * sizeof **src)))
        nbh_mpi_fail(c, "malloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    return 1;
}

/* F1, F2: what carries a pair of ranks on different nodes, as a benchmark name's `net:` part —
 * "shm" on one node (libnbrma copies directly; the vendor uses its own path), else the
 * NBRMA_NET setting (auto when unset). strat_pair_check confirms it from the window's pairs. */
static inline const char *strat_net(const nbh_ctx_t *ctx)
{
    const char *net = getenv("NBRMA_NET");
    return ctx->nnodes == 1 ? "shm" : net && *net ? net : "auto";
}

/* 1 when window `win` (ref) reports info `key` = `value`: libnbrma reports the strategy it runs
 * (docs/ref.md, "Implementation strategies"). Else 0 after skipping the case with the reason: a
 * libnbrma without the setting ignores the key (MPI-3.1 §11.2.7) and reports none on MPICH (Open
 * MPI 4.1 echoes the keys it was given, so there only a libnbrma that knows the key makes the
 * check meaningful). */
static inline int strat_info_is(const nbh_case_t *c, gb_state_t *st, MPI_Win win, const char *key,
                                const char *value)
{
    MPI_Info info;
    char got[64] = "";
    int flag = 0;
    NBH_MPI(c, MPI_Win_get_info(win, &info));
    NBH_MPI(c, MPI_Info_get(info, key, (int)sizeof got - 1, got, &flag));
    NBH_MPI(c, MPI_Info_free(&info));
    if (flag && strcmp(got, value) == 0)
        return 1;
    char why[160];
    snprintf(why, sizeof why, "this libnbrma does not run %s=%s (MPI_Win_get_info: %s)", key,
             value, flag ? got : "no such key");
    gb_skip_with_error(st, why);
    return 0;
}

/* The transport libnbrma gives the pair (me, peer) of a ref window, from its stats ("shm",
 * "am", "verbs", "ucx"; NULL without MPIX_Win_get_stats). Two-rank windows: the one pair. */
static inline const char *strat_pair_tp(const nbh_case_t *c, MPI_Win win)
{
    static const char *const name[MPIX_NBRMA_NTP] = {"shm", "am", "verbs", "ucx"};
    if (!MPIX_Win_get_stats)
        return NULL;
    MPIX_Win_stats s = strat_stats(c, win);
    for (int t = MPIX_NBRMA_NTP - 1; t > 0; t--)
        if (s.peers[t] > 0)
            return name[t];
    return name[0];
}

/* The window's pair goes over the transport the benchmark's name says (across nodes: NBRMA_NET's
 * choice); else the case is skipped with the reason and 0 returned. */
static inline int strat_pair_is_named(const nbh_case_t *c, gb_state_t *st, MPI_Win win)
{
    const char *tp = strat_pair_tp(c, win), *want = strat_net(c->ctx);
    if (!tp || strcmp(want, "auto") == 0 || strcmp(tp, want) == 0)
        return 1;
    char why[160];
    snprintf(why, sizeof why, "the pair went over %s, not the %s of the name", tp, want);
    gb_skip_with_error(st, why);
    return 0;
}

#endif
