/* nb_stress.c — thousands of nonblocking epochs back to back (docs/nonblocking.md).
 *
 * 1. Mutual exclusion without waiting for unlocks: every rank runs ITERS exclusive-lock epochs
 *    on rank 0, each a read-modify-write of one counter — MPIX_Win_ilock, MPI_Get,
 *    MPIX_Win_iflush + wait, MPI_Put of the value + 1, MPIX_Win_iunlock without waiting — and
 *    opens the next epoch at once. The epochs queue behind each other (an epoch is activated
 *    only once the previous one of the same rank completed) and the lock serializes the ranks,
 *    so no update is lost: the counter ends at ranks x ITERS, and the values read, gathered at
 *    rank 0, are exactly 0 .. ranks x ITERS - 1.
 * 2. ITERS lock epochs per rank (shared and exclusive in turn), each one MPI_Accumulate(+1) to a
 *    rank that rotates (every rank is hit once per iteration), and ITERS/4 lock_all epochs
 *    accumulating into every rank, with no wait at all until one final wait over all requests:
 *    no increment is lost.
 * Options: --iters N (default 2000). */
#include "relax.h"
#include "nb_util.h"

static int64_t *base;
static MPI_Win win;
static int iters = 2000;

/* The most epochs seen deferred / pending at once, sampled after each iunlock; every 16 epochs
 * the CPU is given away, so that ranks sharing a core interleave their epochs. */
static int max_deferred, max_pending;

static void sample(int i)
{
    int d, p;
    nbt_counts(win, &d, &p);
    if (d > max_deferred)
        max_deferred = d;
    if (p > max_pending)
        max_pending = p;
    if (i % 16 == 15)
        nbh_relax();
}

static void report_samples(const char *what)
{
    int m[2] = {max_deferred, max_pending};
    nbh_allreduce(m, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (conf_rank == 0)
        tap_diag("%s: at most %d epochs deferred and %d pending at once on a rank", what, m[0],
                 m[1]);
    max_deferred = max_pending = 0;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void read_modify_write(void)
{
    MPI_Request *u = malloc((size_t)iters * sizeof *u);
    int64_t *seen = malloc((size_t)iters * sizeof *seen), got = -1, next = -1;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Request r;
        MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &r);
        MPI_Request_free(&r);
        MPI_Get(&got, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
        MPIX_Win_iflush(0, win, &r);
        nbt_wait(&r, "MPIX_Win_iflush(0) in epoch %d", i);
        seen[i] = got;
        if (i % 8 == 0) /* let the others try the lock while we hold it */
            nbh_relax();
        next = got + 1;
        MPI_Put(&next, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
        MPIX_Win_iunlock(0, win, &u[i]);
        sample(i);
    }
    if (!nbt_testall(iters, u, 3 * NBT_LIMIT))
        tap_bail_out("%d iunlock requests not complete after %.0f s", iters, 3 * NBT_LIMIT);
    double dt = MPI_Wtime() - t0;
    /* the others may drain for as long as this rank could (3 * NBT_LIMIT), and then some */
    nbt_barrier_within(4 * NBT_LIMIT, "the read-modify-write epochs");
    long total = (long)conf_size * iters;
    int ok = 1;
    if (conf_rank == 0 && nbt_load(&base[0]) != total) {
        tap_diag("rank 0: the counter holds %lld after %d ranks x %d epochs, expected %ld",
                 (long long)nbt_load(&base[0]), conf_size, iters, total);
        ok = 0;
    }
    tap_ok(ok,
           "%d ranks x %d exclusive-lock epochs (ilock, get, iflush + wait, put + 1, iunlock "
           "without waiting): the counter on rank 0 is %ld",
           conf_size, iters, total);

    /* Every value read exactly once: the read-modify-writes never overlapped. */
    int64_t *all = conf_rank == 0 ? malloc((size_t)total * sizeof *all) : NULL;
    MPI_Request r;
    MPI_Igather(seen, iters, MPI_INT64_T, all, iters, MPI_INT64_T, 0, MPI_COMM_WORLD, &r);
    nbt_wait(&r, "MPI_Igather of the values read");
    ok = 1;
    if (conf_rank == 0) {
        qsort(all, (size_t)total, sizeof *all, cmp64);
        for (long i = 0; i < total; i++)
            if (all[i] != i) {
                tap_diag("sorted values read: position %ld holds %lld (a value read twice or "
                         "never: lost update)",
                         i, (long long)all[i]);
                ok = 0;
                break;
            }
        free(all);
    }
    nbh_allreduce(&dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (conf_rank == 0)
        tap_diag("slowest rank: %d read-modify-write epochs in %.2f s", iters, dt);
    report_samples("read-modify-write epochs");
    tap_ok(ok, "... the values read, gathered at rank 0, are exactly 0..%ld (each once)",
           total - 1);
    free(seen);
    free(u);
}

static void accumulate_no_wait(void)
{
    int nall = iters / 4, n = 0;
    MPI_Request *q = malloc((size_t)(2 * iters + 2 * nall) * sizeof *q);
    static const int64_t one = 1;
    for (int i = 0; i < iters; i++) {
        int t = (conf_rank + i) % conf_size;
        MPIX_Win_ilock(i % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, win, &q[n++]);
        MPI_Accumulate(&one, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, MPI_SUM, win);
        MPIX_Win_iunlock(t, win, &q[n++]);
        sample(i);
    }
    for (int i = 0; i < nall; i++) {
        MPIX_Win_ilock_all(0, win, &q[n++]);
        for (int t = 0; t < conf_size; t++)
            MPI_Accumulate(&one, 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T, MPI_SUM, win);
        MPIX_Win_iunlock_all(win, &q[n++]);
        sample(i);
    }
    report_samples("accumulate epochs");
    if (!nbt_testall(n, q, 3 * NBT_LIMIT))
        tap_bail_out("%d accumulate-epoch requests not complete after %.0f s", n, 3 * NBT_LIMIT);
    nbt_barrier_within(4 * NBT_LIMIT, "the accumulate epochs");
    int64_t c1 = nbt_load(&base[1]), c2 = nbt_load(&base[2]);
    int ok = c1 == iters && c2 == (int64_t)conf_size * nall;
    if (!ok)
        nbt_diag("accumulate counters hold %lld and %lld, expected %d and %lld", (long long)c1,
                 (long long)c2, iters, (long long)conf_size * nall);
    tap_ok(
        ok,
        "%d shared/exclusive-lock and %d lock_all accumulate epochs per rank opened back to back, "
        "one wait at the end: no increment lost",
        iters, nall);
    free(q);
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 2);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
    if (iters < 4)
        iters = 4;
    tap_plan(3);
    conf_win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    for (int i = 0; i < 4; i++)
        base[i] = 0;
    nbt_barrier();
    read_modify_write();
    accumulate_no_wait();
    conf_win_free(&win);
    return nbt_done();
}
