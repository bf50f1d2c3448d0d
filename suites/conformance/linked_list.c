/* linked_list.c — a distributed linked list built with atomics, the classic one-sided shape: a
 * dynamic window, each element attached on the rank that made it, and every rank appending its
 * elements at the tail. To append, a rank chases the tail under a shared lock on the rank that
 * holds it: MPI_Compare_and_swap of the tail's next pointer (empty -> the new element) and, when
 * another rank got there first, MPI_Get_accumulate(MPI_NO_OP) of the pointer that won, to move
 * on. Rank 0 then walks the list and checks that it holds every rank's elements, each once, and
 * each rank's in the order it appended them (--ring: and in turns, rank 0 first). With --time,
 * rank 0 also prints how long the appends took (the benchmark shape; docs/conformance.md).
 *
 * Found on libnbrma across nodes: the 4-rank run with the classic element count took more than
 * 300 s (vendor 36 s, one node 48 s). Options: --elems N (per rank, default 100), --ring (the
 * ranks take turns: the classic benchmark), --time. */
#include <stddef.h>

#include "conf.h"

typedef struct {
    int rank;
    int pad;
    MPI_Aint disp; /* MPI_Get_address of the element at `rank` (dynamic window) */
} llptr_t;

typedef struct {
    llptr_t next; /* first: its two 8-byte words are what CAS and get_accumulate target */
    int value;
    int pad;
} llelem_t;

#define NIL_RANK (-1)

static MPI_Win win;
static llelem_t **mine; /* my elements (attached) */
static int nmine;

static llptr_t new_elem(int value)
{
    llelem_t *e = malloc(sizeof *e);
    e->next.rank = NIL_RANK;
    e->next.pad = 0;
    e->next.disp = 0;
    e->value = value;
    e->pad = 0;
    MPI_Win_attach(win, e, sizeof *e);
    mine[nmine++] = e;
    llptr_t p = {.rank = conf_rank};
    MPI_Get_address(e, &p.disp);
    return p;
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    int elems = 100, timed = 0, ring = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--elems") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            elems = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--time"))
            timed = 1;
        else if (!strcmp(argv[i], "--ring"))
            ring = 1;
        else {
            if (conf_rank == 0)
                fprintf(stderr, "linked_list: unknown option '%s' (--elems N, --ring, --time)\n",
                        argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    tap_plan(3);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    mine = malloc((size_t)(elems + 1) * sizeof *mine);
    /* The head: an element of rank 0 that holds no value. */
    llptr_t head = {.rank = 0};
    if (conf_rank == 0)
        head = new_elem(-1);
    MPI_Bcast(&head.disp, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    /* The pointer words: next.rank and next.disp as two 8-byte integers (rank | pad, disp). */
    const MPI_Aint off_rank = offsetof(llelem_t, next.rank), off_disp = offsetof(llelem_t, next.disp);
    int cas_ok = 1;
    double t0 = MPI_Wtime();
    llptr_t tail = head;
    for (int i = 0; ring && i < elems; i++) {
        /* The ring: a rank appends only behind its left neighbour's element (the head counts as
         * rank size-1's), so the ranks take turns; the others chase the tail, polling its next
         * pointer with MPI_Get_accumulate(MPI_NO_OP) under a shared lock, backing off with
         * MPI_Iprobe between polls — the classic benchmark's shape. */
        llptr_t e = new_elem(conf_rank * 1000000 + i);
        int pollint = 1;
        for (;;) {
            int left = (conf_rank + conf_size - 1) % conf_size;
            int owner = tail.rank == 0 && tail.disp == head.disp ? conf_size - 1 : tail.rank;
            if (owner == left) {
                MPI_Win_lock(MPI_LOCK_SHARED, tail.rank, MPI_MODE_NOCHECK, win);
                MPI_Accumulate(&e.disp, 1, MPI_AINT, tail.rank, MPI_Aint_add(tail.disp, off_disp),
                               1, MPI_AINT, MPI_REPLACE, win);
                int64_t r64 = (int64_t)(uint32_t)e.rank;
                MPI_Accumulate(&r64, 1, MPI_INT64_T, tail.rank, MPI_Aint_add(tail.disp, off_rank),
                               1, MPI_INT64_T, MPI_REPLACE, win);
                MPI_Win_unlock(tail.rank, win);
                tail = e;
                break;
            }
            int64_t r64 = 0;
            MPI_Aint d = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, tail.rank, MPI_MODE_NOCHECK, win);
            MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &r64, 1, MPI_INT64_T, tail.rank,
                               MPI_Aint_add(tail.disp, off_rank), 1, MPI_INT64_T, MPI_NO_OP, win);
            MPI_Get_accumulate(NULL, 0, MPI_AINT, &d, 1, MPI_AINT, tail.rank,
                               MPI_Aint_add(tail.disp, off_disp), 1, MPI_AINT, MPI_NO_OP, win);
            MPI_Win_unlock(tail.rank, win);
            int nr = (int)(uint32_t)r64;
            if (nr != NIL_RANK && d != 0) { /* the rank is written last: the disp is there */
                if (nr < 0 || nr >= conf_size) {
                    cas_ok = 0;
                    break;
                }
                tail.rank = nr, tail.disp = d;
                pollint = pollint / 2 > 1 ? pollint / 2 : 1;
            } else {
                int flag;
                for (int j = 0; j < pollint; j++)
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                               MPI_STATUS_IGNORE);
                pollint = pollint * 2 < conf_size ? pollint * 2 : conf_size;
            }
        }
        if (!cas_ok)
            break;
    }
    for (int i = 0; !ring && i < elems; i++) {
        llptr_t e = new_elem(conf_rank * 1000000 + i);
        /* Publish the element: swing the tail's next from empty to e; on failure follow it. */
        for (;;) {
            int64_t want_empty = (int64_t)NIL_RANK & 0xffffffff, mine64, old = 0;
            mine64 = (int64_t)(uint32_t)e.rank; /* next.rank with pad 0, as one 8-byte word */
            MPI_Win_lock(MPI_LOCK_SHARED, tail.rank, 0, win);
            MPI_Aint cur_disp = 0;
            MPI_Compare_and_swap(&mine64, &want_empty, &old, MPI_INT64_T, tail.rank,
                                 MPI_Aint_add(tail.disp, off_rank), win);
            MPI_Win_flush(tail.rank, win);
            if (old == want_empty) {
                /* won: now write the disp (readers spin until it is there, see below) */
                MPI_Accumulate(&e.disp, 1, MPI_AINT, tail.rank, MPI_Aint_add(tail.disp, off_disp),
                               1, MPI_AINT, MPI_REPLACE, win);
                MPI_Win_unlock(tail.rank, win);
                tail = e;
                break;
            }
            /* lost: read where the tail's next points, then move on */
            llptr_t next = {.rank = (int)(uint32_t)old};
            do {
                MPI_Get_accumulate(NULL, 0, MPI_AINT, &cur_disp, 1, MPI_AINT, tail.rank,
                                   MPI_Aint_add(tail.disp, off_disp), 1, MPI_AINT, MPI_NO_OP,
                                   win);
                MPI_Win_flush(tail.rank, win);
            } while (cur_disp == 0);
            MPI_Win_unlock(tail.rank, win);
            if (next.rank < 0 || next.rank >= conf_size)
                cas_ok = 0;
            next.disp = cur_disp;
            tail = next;
            if (!cas_ok)
                break;
        }
        if (!cas_ok)
            break;
    }
    double took = MPI_Wtime() - t0, worst;
    MPI_Allreduce(&took, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    tap_ok(cas_ok, "every pointer read while chasing the tail names a rank");
    MPI_Barrier(MPI_COMM_WORLD);

    /* Rank 0 walks the list. */
    int total = elems * conf_size, seen = 0, dup_or_order = 0;
    if (conf_rank == 0) {
        int *last = malloc((size_t)conf_size * sizeof *last);
        for (int r = 0; r < conf_size; r++)
            last[r] = -1;
        MPI_Win_lock_all(0, win);
        llptr_t p = head;
        while (seen <= total) {
            llelem_t e;
            MPI_Get(&e, sizeof e, MPI_BYTE, p.rank, p.disp, sizeof e, MPI_BYTE, win);
            MPI_Win_flush(p.rank, win);
            if (e.value >= 0) {
                int r = e.value / 1000000, i = e.value % 1000000;
                if (r < 0 || r >= conf_size || i <= last[r] ||
                    (ring && (r != seen % conf_size || i != seen / conf_size)))
                    dup_or_order++;
                else
                    last[r] = i;
                seen++;
            }
            if (e.next.rank == NIL_RANK)
                break;
            p = e.next;
        }
        MPI_Win_unlock_all(win);
            for (int r = 0; r < conf_size; r++)
            if (last[r] != elems - 1)
                dup_or_order++;
        free(last);
    }
    tap_is_long(conf_rank == 0 ? seen : total, total, "the list holds %d x %d elements", conf_size,
                elems);
    tap_ok(dup_or_order == 0,
           "each rank's elements appear once each, in the order the rank appended them");
    if (timed)
        tap_diag("appending %d elements per rank on %d ranks took %.3f s (slowest rank)", elems,
                 conf_size, worst);
    for (int i = 0; i < nmine; i++) {
        MPI_Win_detach(win, mine[i]);
        free(mine[i]);
    }
    free(mine);
    MPI_Win_free(&win);
    return conf_done();
}
