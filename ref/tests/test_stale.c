/* test_stale.c — leftovers of a killed job in /dev/shm do not break window creation.
 *
 * A job killed by a timeout leaves libnbrma's node-shared objects behind (as MPI libraries leave
 * theirs); the kernel later hands the same pids to new processes. The first reference named its
 * objects after the pid alone (/nbrma-a-<pid>-<k>, /nbrma-<pid>-<n>), so a process whose pid had
 * belonged to a killed one could not create a control block: MPI_ERR_NO_MEM on that rank only,
 * and the other ranks hung in the window's set-up allgather (seen in a benchmark run on 4
 * ranks). Here every rank plants files under the old names of its own pid before MPI_Init, then
 * creates, uses and frees windows of every flavor; the planted files must be left alone. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nbrma.h"
#include "tap.h"

#define PLANTS 8

static char planted[PLANTS][64];

static int plant(void)
{
    int n = 0;
    for (int k = 0; k < PLANTS; k++) {
        if (k < PLANTS / 2)
            snprintf(planted[k], sizeof planted[k], "/nbrma-a-%d-%d", (int)getpid(), k);
        else
            snprintf(planted[k], sizeof planted[k], "/nbrma-%d-%d", (int)getpid(), k - PLANTS / 2);
        int fd = shm_open(planted[k], O_CREAT | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, 4096) == 0)
            n++;
        if (fd >= 0)
            close(fd);
    }
    return n;
}

static int still_there(void)
{
    int n = 0;
    for (int k = 0; k < PLANTS; k++) {
        int fd = shm_open(planted[k], O_RDWR, 0);
        if (fd >= 0) {
            n += lseek(fd, 0, SEEK_END) == 4096;
            close(fd);
        }
        shm_unlink(planted[k]);
    }
    return n;
}

int main(int argc, char **argv)
{
    int planted_n = plant();
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tap_is_long(planted_n, PLANTS, "%d leftover objects planted under this pid's old names",
                PLANTS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    static const char *const names[] = {"MPI_Win_allocate", "MPI_Win_create",
                                        "MPI_Win_allocate_shared", "MPI_Win_create_dynamic"};
    for (int f = 0; f < 4; f++) {
        MPI_Win win = MPI_WIN_NULL;
        long *base = NULL, mem[4] = {0};
        int rc;
        switch (f) {
        case 0:
            rc = MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &base, &win);
            break;
        case 1:
            base = mem;
            rc = MPI_Win_create(mem, sizeof mem, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &win);
            break;
        case 2:
            rc = MPI_Win_allocate_shared(4 * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                         MPI_COMM_WORLD, &base, &win);
            break;
        default:
            base = mem;
            rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_attach(win, mem, sizeof mem);
            break;
        }
        long got = -1;
        if (rc == MPI_SUCCESS) {
            MPI_Aint addr, *addrs = calloc((size_t)np, sizeof *addrs);
            MPI_Get_address(mem, &addr);
            MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
            int right = (me + 1) % np, left = (me + np - 1) % np;
            long v = 100 * f + me;
            MPI_Win_fence(0, win);
            MPI_Put(&v, 1, MPI_LONG, right, f == 3 ? addrs[right] : 0, 1, MPI_LONG, win);
            MPI_Win_fence(0, win);
            got = base[0];
            if (got != 100 * f + left)
                tap_diag("%s: element 0 holds %ld, expected %d", names[f], got, 100 * f + left);
            got = got == 100 * f + left;
            if (f == 3)
                MPI_Win_detach(win, mem);
            MPI_Win_free(&win);
            free(addrs);
        } else {
            tap_diag("%s failed: %s", names[f], MPIX_Nbrma_last_error());
        }
        tap_ok(rc == MPI_SUCCESS && got == 1, "%s with leftovers under this pid: created, moves data",
               names[f]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tap_is_long(still_there(), PLANTS, "the leftovers are not ours to touch: all %d still there",
                PLANTS);
    int r = tap_done();
    MPI_Finalize();
    return r;
}
