/* test_symheap.c — symmetric allocation of MPI_Win_allocate (paper 001 §2.2), on 3 ranks: with
 * equal sizes every rank's window memory sits at the same address in every process (what rank r
 * calls its base is what every other process finds for rank r), data moves through it, unequal
 * sizes fall back to separate segments, freeing leaves no mapping behind, and sizes whose total
 * would not fit (or would wrap) are refused. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "tap.h"

static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    if (!f)
        return -1;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    long *base;
    MPI_Win win;
    int rc;
    MPI_Win_allocate(100 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    nbr_win_t *w = nbr_win_find(win);
    tap_ok(w && w->sym, "equal sizes: the window is allocated symmetrically");
    void *own[16] = {0};
    MPI_Allgather(&base, sizeof base, MPI_BYTE, own, sizeof base, MPI_BYTE, MPI_COMM_WORLD);
    int same = 1;
    for (int r = 0; r < p && r < 16; r++) {
        MPI_Aint sz;
        int du;
        void *q;
        MPI_Win_shared_query(win, r, &sz, &du, &q);
        same &= q == own[r] && sz == 100 * (MPI_Aint)sizeof(long) && du == (int)sizeof(long);
    }
    tap_ok(same, "rank r's base address is the same in every process (shared_query = own base)");
    tap_ok((char *)own[p - 1] - (char *)own[0] == (MPI_Aint)(p - 1) * (MPI_Aint)w->sym_stride,
           "rank r's memory starts at A + r * stride (stride %zu bytes)", w->sym_stride);
    MPI_Win_fence(0, win);
    long v = 1000 + me;
    MPI_Put(&v, 1, MPI_LONG, (me + 1) % p, 99, 1, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_is_long(base[99], 1000 + (me + p - 1) % p, "a put lands in the target's symmetric memory");
    MPI_Win_free(&win);

    /* Unequal sizes: separate segments, still correct. */
    MPI_Win_allocate((me + 1) * 8 * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    w = nbr_win_find(win);
    tap_ok(w && !w->sym, "unequal sizes: separate segments");
    MPI_Win_fence(0, win);
    v = 2000 + me;
    MPI_Put(&v, 1, MPI_LONG, (me + 1) % p, 0, 1, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    tap_is_long(base[0], 2000 + (me + p - 1) % p, "a put lands there too");
    MPI_Win_free(&win);

    /* Many allocate/free rounds leave no mapping behind. */
    int before = count_maps();
    for (int i = 0; i < 50; i++) {
        MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_free(&win);
    }
    int after = count_maps();
    tap_ok(after <= before + 2,
           "50 symmetric windows allocated and freed: %d mappings before, %d "
           "after",
           before, after);
    /* Sizes whose total over p ranks exceeds the address space, or wraps modulo 2^64 (issue 9
     * item 7: 4 x (2^62 + 4096) wrapped to 16 KiB and "succeeded"): refused on every rank with
     * MPI_ERR_NO_MEM or MPI_ERR_SIZE, no window, nothing touched. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Aint huge[2] = {((MPI_Aint)1 << 62) + 4096,
                        (MPI_Aint)((UINT64_MAX / (uint64_t)p & ~(uint64_t)4095) + 8192)};
    for (int i = 0; i < 2; i++) {
        if (p < 3 && i == 1) { /* p x size cannot wrap with size <= INTPTR_MAX */
            tap_skip(1, "needs 3 ranks or more");
            continue;
        }
        win = MPI_WIN_NULL;
        rc = MPI_Win_allocate(huge[i], 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        int ok = (cls == MPI_ERR_NO_MEM || cls == MPI_ERR_SIZE) && win == MPI_WIN_NULL;
        if (!ok)
            tap_diag("MPI_Win_allocate(%ld bytes) on %d ranks returned class %d", (long)huge[i], p,
                     cls);
        if (win != MPI_WIN_NULL)
            MPI_Win_free(&win);
        tap_ok(ok,
               "MPI_Win_allocate of %ld bytes on each of %d ranks%s: MPI_ERR_NO_MEM or "
               "MPI_ERR_SIZE",
               (long)huge[i], p, i ? " (the total wraps modulo 2^64)" : "");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    rc = tap_done();
    MPI_Finalize();
    return rc;
}
