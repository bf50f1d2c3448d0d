/* rma_requests.c — request-based RMA (MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate)
 * inside lock_all: completing an Rput's request means the origin buffer is reusable (the target
 * still receives the old data after a flush), completing an Rget's or Rget_accumulate's request
 * means the result is in the origin buffer without a flush; completion through MPI_Wait,
 * MPI_Waitall, MPI_Test loops, MPI_Testany and MPI_Waitsome. */
#include "relax.h"
#include "conf.h"

#define N 32
#define K 4

static long *base;
static MPI_Win win;

static void rput_rget(void)
{
    long out[N], sent[N], back[N];
    conf_fill_long(out, N, 2, conf_rank);
    memcpy(sent, out, sizeof sent);
    MPI_Request r;
    MPI_Rput(out, N, MPI_LONG, conf_right(), 0, N, MPI_LONG, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        out[i] = -2; /* reusable after local completion */
    MPI_Win_flush(conf_right(), win);
    MPI_Rget(back, N, MPI_LONG, conf_right(), 0, N, MPI_LONG, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* no flush: the data must be here */
    tap_ok(conf_check_long(back, sent, N, "what MPI_Rget read back from rank %d", conf_right()),
           "MPI_Rput + MPI_Wait, overwrite, flush; MPI_Rget + MPI_Wait sees the original data");
}

/* Blocks of 4 elements from every rank (block i from rank i % size, at element 4*i). */
static void start_gets(long *dst, MPI_Request *req, int k)
{
    for (int i = 0; i < k; i++) {
        int t = i % conf_size;
        MPI_Rget(dst + 4 * i, 4, MPI_LONG, t, 4 * i, 4, MPI_LONG, win, &req[i]);
    }
}

static int check_gets(const long *dst, int k, const char *how)
{
    int ok = 1;
    for (int i = 0; i < k; i++) {
        int t = i % conf_size;
        long exp[4];
        for (int j = 0; j < 4; j++)
            exp[j] = conf_val(1, t, 4 * i + j);
        ok &= conf_check_long(dst + 4 * i, exp, 4, "block %d (from rank %d) after %s", i, t, how);
    }
    return ok;
}

static void completions(void)
{
    long dst[4 * 8];
    MPI_Request req[8];

    start_gets(dst, req, 8);
    MPI_Status st[8]; /* (MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
    MPI_Waitall(8, req, st);
    tap_ok(check_gets(dst, 8, "MPI_Waitall"), "8 MPI_Rget from all ranks completed by MPI_Waitall");

    memset(dst, 0, sizeof dst);
    start_gets(dst, req, 1);
    int flag = 0;
    long tests = 0;
    while (!flag) {
        MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        if (++tests > 64)
            nbh_relax();
    }
    tap_ok(check_gets(dst, 1, "an MPI_Test loop") && req[0] == MPI_REQUEST_NULL,
           "MPI_Rget completed by an MPI_Test loop (request becomes MPI_REQUEST_NULL)");

    memset(dst, 0, sizeof dst);
    start_gets(dst, req, K);
    int seen[K] = {0}, dup = 0, polls = 0;
    for (;;) {
        int idx;
        MPI_Testany(K, req, &idx, &flag, MPI_STATUS_IGNORE);
        if (flag && idx == MPI_UNDEFINED)
            break;
        if (flag) {
            dup |= seen[idx]++;
        } else if (++polls > 64) {
            nbh_relax();
        }
    }
    int each = 1;
    for (int i = 0; i < K; i++)
        each &= seen[i] == 1;
    tap_ok(check_gets(dst, K, "MPI_Testany") && each && !dup,
           "%d MPI_Rget completed one by one by MPI_Testany, each exactly once", K);

    memset(dst, 0, sizeof dst);
    start_gets(dst, req, K);
    int done = 0, rounds = 0;
    memset(seen, 0, sizeof seen);
    for (;;) {
        int outcount, idx[K];
        MPI_Waitsome(K, req, &outcount, idx, st);
        if (outcount == MPI_UNDEFINED)
            break;
        rounds++;
        for (int i = 0; i < outcount; i++)
            seen[idx[i]]++;
        done += outcount;
    }
    each = done == K;
    for (int i = 0; i < K; i++)
        each &= seen[i] == 1;
    if (!each)
        tap_diag("MPI_Waitsome reported %d completions in %d rounds", done, rounds);
    tap_ok(check_gets(dst, K, "MPI_Waitsome") && each,
           "%d MPI_Rget completed by MPI_Waitsome, each index reported once", K);
}

static void accumulates(void)
{
    /* Everyone adds rank+1 to rank 0's element N-1 with MPI_Raccumulate. */
    long v = conf_rank + 1;
    MPI_Request r;
    MPI_Raccumulate(&v, 1, MPI_LONG, 0, N - 1, 1, MPI_LONG, MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Win_flush(0, win);
    nbh_barrier(MPI_COMM_WORLD);
    long sum = -1, zero = 0;
    MPI_Rget_accumulate(&zero, 1, MPI_LONG, &sum, 1, MPI_LONG, 0, N - 1, 1, MPI_LONG, MPI_NO_OP,
                        win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    tap_is_long(sum, conf_val(1, 0, N - 1) + (long)conf_size * (conf_size + 1) / 2,
                "MPI_Raccumulate(SUM) from all ranks, read with MPI_Rget_accumulate(MPI_NO_OP)");

    /* Two fetch-and-adds on the right neighbour's element N-2 (only we touch it). */
    long one = 1, old1 = -1, old2 = -1;
    MPI_Rget_accumulate(&one, 1, MPI_LONG, &old1, 1, MPI_LONG, conf_right(), N - 2, 1, MPI_LONG,
                        MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Rget_accumulate(&one, 1, MPI_LONG, &old2, 1, MPI_LONG, conf_right(), N - 2, 1, MPI_LONG,
                        MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    long init = conf_val(1, conf_right(), N - 2);
    int ok = old1 == init && old2 == init + 1;
    if (!ok)
        tap_diag("fetched %ld then %ld from rank %d, expected %ld then %ld", old1, old2,
                 conf_right(), init, init + 1);
    tap_ok(ok, "MPI_Rget_accumulate(SUM) + MPI_Wait twice returns the old value each time");
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(7);
    conf_win_allocate(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    conf_fill_long(base, N, 1, conf_rank);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    rput_rget(); /* writes elements 0..N-1 of the right neighbour: restore them */
    MPI_Win_flush_all(win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_unlock_all(win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    conf_fill_long(base, N, 1, conf_rank);
    MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    completions();
    accumulates();
    MPI_Win_unlock_all(win);
    conf_win_free(&win);
    return conf_done();
}
