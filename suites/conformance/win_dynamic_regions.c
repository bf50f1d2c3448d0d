/* win_dynamic_regions.c — dynamic windows with many attached regions and accesses that span
 * regions attached back to back (MPI-3.1 §11.2.4: an access must lie in attached memory, not in
 * one attach call's region). Regions:
 *   1. each rank attaches --regions N separate blocks (default 1000) and its left neighbour
 *      puts one value into every one of them, then detaches them all;
 *   2. a list of 250 elements, each attached on its own as it is "inserted" (the classic RMA
 *      linked list), read back by the neighbour element by element with MPI_Get;
 *   3. one buffer attached as two halves of 9216 ints each; MPI_Put, MPI_Accumulate and
 *      MPI_Get_accumulate of 9216 ints starting in the middle of the first half;
 *   4. a zero-size region attaches and detaches.
 * Synchronization: lock_all / flush (passive target). */
#include "conf.h"

#define HALF 9216

static int nregions = 1000;

static void many_regions(MPI_Win win)
{
    int n = nregions, right = conf_right(), left = conf_left();
    long **blocks = malloc((size_t)n * sizeof *blocks);
    MPI_Aint *mine = malloc((size_t)n * sizeof *mine), *theirs = malloc((size_t)n * sizeof *theirs);
    int attached = 0;
    for (int i = 0; i < n; i++) {
        blocks[i] = malloc(sizeof(long));
        *blocks[i] = -1;
        attached += MPI_Win_attach(win, blocks[i], sizeof(long)) == MPI_SUCCESS;
        MPI_Get_address(blocks[i], &mine[i]);
    }
    tap_is_long(attached, n, "%d separate regions attach", n);
    MPI_Sendrecv(mine, n, MPI_AINT, left, 0, theirs, n, MPI_AINT, right, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    long *v = malloc((size_t)n * sizeof *v); /* origin buffers stay untouched until unlock */
    MPI_Win_lock_all(0, win);
    int fails = 0;
    for (int i = 0; i < n; i++) {
        v[i] = conf_val(1, conf_rank, i);
        fails += MPI_Put(&v[i], 1, MPI_LONG, right, theirs[i], 1, MPI_LONG, win) != MPI_SUCCESS;
    }
    MPI_Win_unlock_all(win);
    free(v);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0, first = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win); /* local loads, ordered with the puts */
    for (int i = 0; i < n; i++)
        if (*blocks[i] != conf_val(1, left, i) && bad++ == 0)
            first = i;
    MPI_Win_unlock(conf_rank, win);
    if (bad)
        tap_diag("region %d holds %ld, expected %ld", first, *blocks[first],
                 conf_val(1, left, first));
    tap_is_long(fails, 0, "a put into each of the neighbour's %d regions is accepted", n);
    tap_is_long(bad, 0, "every region received its value");
    int detached = 0;
    for (int i = 0; i < n; i++) {
        detached += MPI_Win_detach(win, blocks[i]) == MPI_SUCCESS;
        free(blocks[i]);
    }
    tap_is_long(detached, n, "all %d regions detach", n);
    free(blocks);
    free(mine);
    free(theirs);
}

typedef struct {
    long value;
    MPI_Aint next; /* the following element's address at its owner, 0 at the end */
} elem_t;

static void linked_list(MPI_Win win)
{
    enum { N = 250 };
    int right = conf_right(), left = conf_left();
    elem_t *e[N];
    MPI_Aint head = 0;
    for (int i = N - 1; i >= 0; i--) { /* insert at the head, attaching each new element */
        e[i] = malloc(sizeof(elem_t));
        e[i]->value = conf_val(2, conf_rank, i);
        e[i]->next = head;
        MPI_Win_attach(win, e[i], sizeof(elem_t));
        MPI_Get_address(e[i], &head);
    }
    MPI_Aint their_head;
    MPI_Sendrecv(&head, 1, MPI_AINT, left, 1, &their_head, 1, MPI_AINT, right, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int walked = 0, bad = 0;
    for (MPI_Aint at = their_head; at && walked <= N; walked++) {
        elem_t x;
        if (MPI_Get(&x, (int)sizeof x, MPI_BYTE, right, at, (int)sizeof x, MPI_BYTE, win) !=
            MPI_SUCCESS)
            break;
        MPI_Win_flush(right, win);
        bad += x.value != conf_val(2, right, walked);
        at = x.next;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    tap_ok(walked == N && bad == 0,
           "the neighbour's %d-element list, one attached region per element, reads back (%d "
           "elements, %d wrong)",
           N, walked, bad);
    for (int i = 0; i < N; i++) {
        MPI_Win_detach(win, e[i]);
        free(e[i]);
    }
}

static void spanning(MPI_Win win)
{
    int right = conf_right(), left = conf_left();
    int *buf = malloc(2 * HALF * sizeof(int));
    for (int i = 0; i < 2 * HALF; i++)
        buf[i] = 0;
    int a1 = MPI_Win_attach(win, buf, HALF * sizeof(int));
    int a2 = MPI_Win_attach(win, buf + HALF, HALF * sizeof(int));
    tap_ok(a1 == MPI_SUCCESS && a2 == MPI_SUCCESS, "two halves of one buffer attach back to back");
    MPI_Aint mine, theirs;
    MPI_Get_address(buf, &mine);
    MPI_Sendrecv(&mine, 1, MPI_AINT, left, 2, &theirs, 1, MPI_AINT, right, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int *src = malloc(HALF * sizeof(int)), *res = malloc(HALF * sizeof(int));
    for (int i = 0; i < HALF; i++)
        src[i] = (int)conf_val(3, conf_rank, i % 1000);
    const MPI_Aint start = theirs + (HALF / 2) * (MPI_Aint)sizeof(int);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN); /* a refusal is reported, not fatal */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int rp = MPI_Put(src, HALF, MPI_INT, right, start, HALF, MPI_INT, win);
    MPI_Win_flush(right, win);
    int ra = MPI_Accumulate(src, HALF, MPI_INT, right, start, HALF, MPI_INT, MPI_SUM, win);
    MPI_Win_flush(right, win);
    int rg = MPI_Get_accumulate(src, HALF, MPI_INT, res, HALF, MPI_INT, right, start, HALF,
                                MPI_INT, MPI_NO_OP, win);
    MPI_Win_unlock_all(win);
    char b1[300], b2[300], b3[300];
    tap_ok(rp == MPI_SUCCESS && ra == MPI_SUCCESS && rg == MPI_SUCCESS,
           "put, accumulate and get_accumulate of %d ints across the boundary are accepted "
           "(put: %s; acc: %s; get_acc: %s)",
           HALF, conf_describe_rc(rp, b1, sizeof b1), conf_describe_rc(ra, b2, sizeof b2),
           conf_describe_rc(rg, b3, sizeof b3));
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0, bad_res = 0;
    for (int i = 0; i < 2 * HALF; i++) {
        int in = i >= HALF / 2 && i < HALF / 2 + HALF;
        int expect = in ? 2 * (int)conf_val(3, left, (i - HALF / 2) % 1000) : 0;
        bad += buf[i] != expect;
    }
    for (int i = 0; i < HALF; i++)
        bad_res += res[i] != 2 * (int)conf_val(3, conf_rank, i % 1000);
    tap_is_long(bad, 0, "the target holds put + accumulate across both regions, nothing outside");
    tap_is_long(bad_res, 0, "get_accumulate returned the combined data from both regions");
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
    MPI_Win_detach(win, buf);
    MPI_Win_detach(win, buf + HALF);
    free(buf);
    free(src);
    free(res);
}

static void edges(MPI_Win win)
{
    static long one[2];
    int z1 = MPI_Win_attach(win, &one[1], 0);
    int z2 = MPI_Win_detach(win, &one[1]);
    tap_ok(z1 == MPI_SUCCESS && z2 == MPI_SUCCESS, "a zero-size region attaches and detaches");
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--regions") && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            nregions = atoi(argv[++i]);
        } else {
            if (conf_rank == 0)
                fprintf(stderr, "win_dynamic_regions: unknown option '%s' (--regions N)\n",
                        argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    many_regions(win);
    linked_list(win);
    spanning(win);
    edges(win);
    MPI_Win_free(&win);
    return conf_done();
}
