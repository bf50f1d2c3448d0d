/* test_acc.c — large accumulates hold the target's accumulate lock a chunk at a time (rma.c,
 * issue 9 item 17). Two ranks under lock_all on rank 1's window of N int64 elements (64 chunks).
 * Rank 0 adds 1 to all N elements with one large MPI_Accumulate per round (the contiguous fast
 * path, then a derived type through the general path; then the same with MPI_Get_accumulate,
 * whose fetched values are checked); rank 1 reads element 0, then element
 * N-1, with small MPI_Fetch_and_op(MPI_NO_OP) calls. If the large call held the lock for its whole
 * length, element 0 read first could never be ahead of element N-1 read afterwards; seeing it
 * ahead proves a small accumulate ran while a large one was half done (structural: no time is
 * asserted, rounds continue until seen or a generous bound). Then both ranks add concurrently and
 * every element must count every addition (element-wise atomicity across chunks). */
#include <stdint.h>
#include <stdlib.h>

#include "tap.h"
#include "timing.h"

#define N         (512 * 1024) /* 4 MiB of int64: 64 chunks of 64 KiB */
#define W_SEEN    N            /* rank 1 sets it when it saw a large accumulate half done */
#define F_STOP    (N + 1)      /* rank 0 sets it when it stops adding */
/* give up (test fails) after this long without seeing it: 60 s on a quiet machine, scaled with the
 * load and TIMEOUT_SCALE like every test limit (harness/timing.h) */
#define MAX_SECS  nbh_limit(60.0)
#define CONC_REPS 20

static int64_t fetch(MPI_Win win, int rank, MPI_Aint disp)
{
    int64_t v = -1, dummy = 0;
    MPI_Fetch_and_op(&dummy, &v, MPI_INT64_T, rank, disp, MPI_NO_OP, win);
    MPI_Win_flush(rank, win);
    return v;
}

static void store(MPI_Win win, int rank, MPI_Aint disp, int64_t v)
{
    MPI_Accumulate(&v, 1, MPI_INT64_T, rank, disp, 1, MPI_INT64_T, MPI_REPLACE, win);
    MPI_Win_flush(rank, win);
}

/* One phase: rank 0 adds with `type` x `count` until rank 1 reports what it looks for. Returns
 * (on every rank) whether it was seen; *rounds_out: the additions rank 0 made. */
static int phase(MPI_Win win, int64_t *base, MPI_Datatype type, int count, const int64_t *ones,
                 int64_t *res, int64_t before, int64_t *rounds_out, long *bad_fetch)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int64_t rounds = 0;
    int seen = 0;
    MPI_Win_lock_all(0, win);
    if (me == 1) {
        base[W_SEEN] = base[F_STOP] = 0;
        MPI_Win_sync(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        double t0 = MPI_Wtime();
        while (!fetch(win, 1, W_SEEN) && MPI_Wtime() - t0 < MAX_SECS) {
            if (res) { /* Get_accumulate: fetches the values before this round's addition */
                MPI_Get_accumulate(ones, count, type, res, count, type, 1, 0, count, type, MPI_SUM,
                                   win);
                MPI_Win_flush(1, win);
                for (long i = 0; i < N && *bad_fetch < 0; i++)
                    if (res[i] != before + rounds)
                        *bad_fetch = i;
            } else {
                MPI_Accumulate(ones, count, type, 1, 0, count, type, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            rounds++;
        }
        store(win, 1, F_STOP, 1);
    } else {
        while (!fetch(win, 1, F_STOP)) {
            int64_t first = fetch(win, 1, 0), last = fetch(win, 1, N - 1);
            if (first > last && !seen) {
                seen = 1;
                store(win, 1, W_SEEN, 1);
            }
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Bcast(&seen, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Bcast(&rounds, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(bad_fetch, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    *rounds_out = rounds;
    return seen;
}

/* Every element of rank 1's array equals `want` (checked on rank 1, verdict on all ranks). */
static int all_equal(MPI_Win win, const int64_t *base, int64_t want, long *bad_at)
{
    int me, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    *bad_at = -1;
    if (me == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (long i = 0; i < N && ok; i++)
            if (base[i] != want)
                ok = 0, *bad_at = i;
        MPI_Win_unlock(1, win);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Bcast(bad_at, 1, MPI_LONG, 1, MPI_COMM_WORLD);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2)
        tap_bail_out("test_acc needs exactly 2 ranks, got %d", np);
    int64_t *base, *ones = malloc(sizeof(int64_t) * N);
    if (!ones)
        tap_bail_out("out of memory");
    for (long i = 0; i < N; i++)
        ones[i] = 1;
    MPI_Win win;
    MPI_Aint bytes = me == 1 ? (MPI_Aint)sizeof(int64_t) * (N + 2) : 0;
    tap_is_long(MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                MPI_SUCCESS, "MPI_Win_allocate");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
    for (long i = 0; me == 1 && i < N + 2; i++)
        base[i] = 0;
    MPI_Win_unlock(me, win);
    MPI_Barrier(MPI_COMM_WORLD);

    int64_t r, total = 0, *res = malloc(sizeof(int64_t) * N);
    if (!res)
        tap_bail_out("out of memory");
    long bad, bad_fetch = -1;
    int seen = phase(win, base, MPI_INT64_T, N, ones, NULL, total, &r, &bad_fetch);
    total += r;
    tap_ok(seen, "MPI_Accumulate, contiguous fast path: a small accumulate ran while a 4 MiB "
                 "accumulate was half done (%lld large accumulates)",
           (long long)r);
    MPI_Datatype big;
    MPI_Type_contiguous(N, MPI_INT64_T, &big);
    MPI_Type_commit(&big);
    seen = phase(win, base, big, 1, ones, NULL, total, &r, &bad_fetch);
    total += r;
    tap_ok(seen, "MPI_Accumulate, derived type (general path): the same (%lld large accumulates)",
           (long long)r);
    seen = phase(win, base, MPI_INT64_T, N, ones, res, total, &r, &bad_fetch);
    total += r;
    tap_ok(seen, "MPI_Get_accumulate, fast path: the same (%lld large calls)", (long long)r);
    seen = phase(win, base, big, 1, ones, res, total, &r, &bad_fetch);
    total += r;
    tap_ok(seen, "MPI_Get_accumulate, derived type (general path): the same (%lld large calls)",
           (long long)r);
    tap_ok(bad_fetch < 0,
           "every MPI_Get_accumulate fetched the values from before its own addition (first "
           "wrong: %ld)",
           bad_fetch);
    int ok = all_equal(win, base, total, &bad);
    tap_ok(ok, "every element counts all %lld large accumulates (first wrong: %ld)",
           (long long)total, bad);

    /* Both ranks add to the whole array at once, each its own large accumulates. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < CONC_REPS; k++) {
        if (k % 2)
            MPI_Accumulate(ones, 1, big, 1, 0, 1, big, MPI_SUM, win);
        else
            MPI_Accumulate(ones, N, MPI_INT64_T, 1, 0, N, MPI_INT64_T, MPI_SUM, win);
        MPI_Win_flush(1, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    total += 2 * CONC_REPS;
    ok = all_equal(win, base, total, &bad);
    tap_ok(ok, "2 ranks x %d concurrent 4 MiB accumulates: every element counts every one (first "
           "wrong: %ld)",
           CONC_REPS, bad);

    /* Both ranks fetch-and-add with large Get_accumulates: per element, the values fetched by
     * all calls are exactly before, before+1, ..., each once (fetch and update of an element in
     * one hold, whichever path). Checked on the first and last element. */
    int64_t got[2][2 * CONC_REPS];
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < CONC_REPS; k++) {
        if (k % 2)
            MPI_Get_accumulate(ones, 1, big, res, 1, big, 1, 0, 1, big, MPI_SUM, win);
        else
            MPI_Get_accumulate(ones, N, MPI_INT64_T, res, N, MPI_INT64_T, 1, 0, N, MPI_INT64_T,
                               MPI_SUM, win);
        MPI_Win_flush(1, win);
        got[0][me * CONC_REPS + k] = res[0];
        got[1][me * CONC_REPS + k] = res[N - 1];
    }
    MPI_Win_unlock_all(win);
    for (int e = 0; e < 2; e++)
        MPI_Allgather(MPI_IN_PLACE, CONC_REPS, MPI_INT64_T, got[e], CONC_REPS, MPI_INT64_T,
                      MPI_COMM_WORLD);
    int distinct = 1;
    for (int e = 0; e < 2; e++) {
        char hit[2 * CONC_REPS] = {0};
        for (int k = 0; k < 2 * CONC_REPS; k++) {
            int64_t d = got[e][k] - total;
            if (d < 0 || d >= 2 * CONC_REPS || hit[d]++)
                distinct = 0;
        }
    }
    total += 2 * CONC_REPS;
    tap_ok(distinct,
           "2 ranks x %d concurrent 4 MiB Get_accumulates: each fetched a distinct count, none "
           "lost (first and last element)",
           CONC_REPS);
    ok = all_equal(win, base, total, &bad);
    tap_ok(ok, "... and every element counts every one (first wrong: %ld)", bad);

    MPI_Type_free(&big);
    MPI_Win_free(&win);
    free(ones);
    free(res);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
