/* acc_char.c — accumulate and fetch-and-op with arithmetic, logical and bitwise operations on
 * MPI_CHAR (issue 9 item 14). MPI-3.1 §5.9.2 puts MPI_CHAR in no reduction group, but MPICH and
 * Open MPI both reduce it as a C integer of char's signedness and programs rely on that, so
 * libnbrma does too (docs/ref-internals.md, "Reduction operations"). Every rank adds 1 to rank
 * 0's counter with MPI_Fetch_and_op (the fetched values must be 0..n-1, each once), accumulates
 * MPI_SUM of {1,2,3}, MPI_MAX of 10*(rank+1) and MPI_BXOR of 1<<rank into rank 0's window, then
 * rank 0 checks the totals; then every rank compare-and-swaps its rank + 1 into one MPI_CHAR
 * (MPICH accepts MPI_CHAR there too, and its cas_type_check test asserts it): exactly one swap
 * finds the initial 0. 2 to 4 ranks (values stay within char). */
#include "conf.h"

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(5);
    char *mem;
    MPI_Win win;
    conf_win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(mem, 0, 8);
    MPI_Barrier(MPI_COMM_WORLD);
    char one = 1, got = -1, three[3] = {1, 2, 3}, mx = (char)(10 * (conf_rank + 1)),
         bits = (char)(1 << conf_rank);
    int rc[4];
    MPI_Win_lock_all(0, win);
    rc[0] = MPI_Fetch_and_op(&one, &got, MPI_CHAR, 0, 0, MPI_SUM, win);
    rc[1] = MPI_Accumulate(three, 3, MPI_CHAR, 0, 1, 3, MPI_CHAR, MPI_SUM, win);
    rc[2] = MPI_Accumulate(&mx, 1, MPI_CHAR, 0, 4, 1, MPI_CHAR, MPI_MAX, win);
    rc[3] = MPI_Accumulate(&bits, 1, MPI_CHAR, 0, 5, 1, MPI_CHAR, MPI_BXOR, win);
    MPI_Win_unlock_all(win);
    int bad = 0;
    const char *name[4] = {"MPI_Fetch_and_op(MPI_SUM)", "MPI_Accumulate(MPI_SUM)",
                           "MPI_Accumulate(MPI_MAX)", "MPI_Accumulate(MPI_BXOR)"};
    for (int i = 0; i < 4; i++)
        if (rc[i] != MPI_SUCCESS) {
            char s[400];
            bad++;
            tap_diag("%s on MPI_CHAR returned %s", name[i], conf_describe_rc(rc[i], s, sizeof s));
        }
    tap_ok(bad == 0,
           "MPI_SUM, MPI_MAX, MPI_BXOR on MPI_CHAR are accepted (accumulate, fetch_and_op)");
    int fetched[4] = {0}, g = got;
    MPI_Gather(&g, 1, MPI_INT, fetched, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int n = conf_size, seen = 0, ok = 1;
    if (conf_rank == 0) {
        for (int i = 0; i < n; i++)
            if (fetched[i] >= 0 && fetched[i] < n)
                seen |= 1 << fetched[i];
        if (seen != (1 << n) - 1)
            tap_diag("fetched values are not 0..%d each once", n - 1);
        char exp[6] = {(char)n,       (char)n,        (char)(2 * n),
                       (char)(3 * n), (char)(10 * n), (char)((1 << n) - 1)};
        for (int i = 0; i < 6; i++)
            if (mem[i] != exp[i]) {
                tap_diag("byte %d of rank 0's window is %d, expected %d", i, mem[i], exp[i]);
                ok = 0;
            }
    }
    tap_ok(seen == (1 << n) - 1 || conf_rank != 0,
           "MPI_Fetch_and_op(MPI_SUM) on MPI_CHAR fetched 0..%d, each once", n - 1);
    tap_ok(ok, "the sums, the maximum and the xor of MPI_CHAR in rank 0's window are right");
    /* compare-and-swap on MPI_CHAR: byte 6 of rank 0 starts at 0 */
    char mine = (char)(conf_rank + 1), zero = 0, old = -1;
    MPI_Win_lock_all(0, win);
    int crc = MPI_Compare_and_swap(&mine, &zero, &old, MPI_CHAR, 0, 6, win);
    MPI_Win_unlock_all(win);
    char s[400];
    if (crc != MPI_SUCCESS)
        tap_diag("MPI_Compare_and_swap on MPI_CHAR returned %s",
                 conf_describe_rc(crc, s, sizeof s));
    tap_ok(crc == MPI_SUCCESS, "MPI_Compare_and_swap on MPI_CHAR is accepted");
    int winners = crc == MPI_SUCCESS && old == 0, all = 0;
    MPI_Allreduce(&winners, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int cas_ok = 1;
    if (conf_rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        cas_ok = all == 1 && mem[6] >= 1 && mem[6] <= n;
        MPI_Win_unlock(0, win);
        if (!cas_ok)
            tap_diag("%d ranks found the initial 0; byte 6 is %d", all, mem[6]);
    }
    tap_ok(cas_ok, "exactly one compare-and-swap on MPI_CHAR found the 0, and its value stayed");
    conf_win_free(&win);
    return conf_done();
}
