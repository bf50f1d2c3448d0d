/* lock_loadstore.c — a lock protects load/store (MPI-3.1 §11.5.3, §11.7): MPI_Win_lock and
 * MPI_Win_lock_all on memory the caller can load/store (its own rank, an
 * MPI_Win_allocate_shared window) return only once the lock is held, so critical sections
 * written with plain loads and stores never overlap.
 *
 * Each section marks itself busy in the window, checks nobody else was inside, increments a
 * counter and leaves; any overlap is counted and every increment must survive. Three settings:
 *   1. every rank locks rank 0 of a shared window exclusively and loads/stores through
 *      MPI_Win_shared_query's pointer;
 *   2. rank 0 locks its own rank of an MPI_Win_allocate (and an MPI_Win_create) window and
 *      loads/stores its own memory, while the others lock rank 0 and use get/put;
 *   3. rank 0 holds lock_all and reads its own memory while the others hold exclusive locks
 *      on rank 0 and write a busy mark with MPI_Put: rank 0 must never see the mark.
 * The number of sections is an option (--iters, default 4000). */
#include "conf.h"

static int iters = 4000;
#define SECTION_READS 64

/* Setting 1: shared window, every rank load/stores rank 0's memory under an exclusive lock. */
static void shared_sections(void)
{
    MPI_Comm node = conf_shm_comm();
    int nsize;
    MPI_Comm_size(node, &nsize);
    long *mem;
    MPI_Win win;
    MPI_Aint bytes = 2 * (MPI_Aint)sizeof(long);
    int nrank;
    MPI_Comm_rank(node, &nrank);
    MPI_Win_allocate_shared(nrank == 0 ? bytes : 0, sizeof(long), MPI_INFO_NULL, node, &mem, &win);
    MPI_Aint sz;
    int du;
    volatile long *w0;
    MPI_Win_shared_query(win, 0, &sz, &du, (void *)&w0);
    if (nrank == 0)
        w0[0] = w0[1] = 0;
    MPI_Barrier(node);
    long overlaps = 0;
    for (int i = 0; i < iters; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Win_sync(win);
        overlaps += w0[1] != 0;
        w0[1] = nrank + 1;
        long v = w0[0];
        for (int k = 0; k < SECTION_READS; k++) /* stay inside a while: widen any overlap */
            overlaps += w0[1] != nrank + 1;
        w0[0] = v + 1;
        w0[1] = 0;
        MPI_Win_sync(win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(node);
    long total = 0;
    MPI_Allreduce(&overlaps, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Win_sync(win);
    long final = w0[0];
    MPI_Win_unlock(0, win);
    tap_is_long(total, 0,
                "shared window: %d x %d exclusive-lock sections on rank 0 with load/store "
                "never overlap",
                nsize, iters);
    tap_is_long(final, (long)nsize * iters, "shared window: no increment is lost");
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* Setting 2: rank 0 locks itself and load/stores; the others lock rank 0 and get/put. */
static void self_sections(int create)
{
    long *mem;
    MPI_Win win;
    const char *flavor = create ? "MPI_Win_create" : "MPI_Win_allocate";
    if (create) {
        MPI_Alloc_mem(2 * sizeof(long), MPI_INFO_NULL, &mem);
        MPI_Win_create(mem, 2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                         &win);
    }
    volatile long *m = mem;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    m[0] = m[1] = 0;
    MPI_Win_unlock(conf_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    long overlaps = 0;
    /* origin buffers of the puts: alive until MPI_Win_unlock completes them (MPI-3.1 §11.5.3; an
     * implementation may read them as late as that, libnbrma's delayed issue does) */
    long v[2], mark = conf_rank + 1, zero = 0;
    for (int i = 0; i < iters; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        if (conf_rank == 0) {
            overlaps += m[1] != 0;
            m[1] = 1;
            long v = m[0];
            for (int k = 0; k < SECTION_READS; k++)
                overlaps += m[1] != 1;
            m[0] = v + 1;
            m[1] = 0;
        } else {
            MPI_Get(v, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win);
            MPI_Win_flush(0, win);
            overlaps += v[1] != 0;
            MPI_Put(&mark, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win);
            MPI_Win_flush(0, win);
            v[0]++;
            MPI_Put(v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
            MPI_Put(&zero, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win);
        }
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long total = 0;
    MPI_Allreduce(&overlaps, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long final = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&final, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    MPI_Win_unlock(0, win);
    tap_is_long(total, 0,
                "%s: rank 0's own exclusive lock excludes the others' get/put sections "
                "(%d sections each)",
                flavor, iters);
    tap_is_long(final, (long)conf_size * iters,
                "%s: every increment survives (load/store at rank 0, get/put elsewhere)", flavor);
    MPI_Win_free(&win);
    if (create)
        MPI_Free_mem(mem);
}

/* Setting 3: lock_all (a shared lock on everyone, rank 0 itself included) against exclusive
 * locks. Rank 0 reads its own memory inside lock_all: a busy mark means an exclusive holder was
 * inside at the same time. */
static void lock_all_sections(void)
{
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    volatile long *m = mem;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    m[0] = 0;
    MPI_Win_unlock(conf_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    long seen = 0;
    const long one = 1, zero = 0;
    for (int i = 0; i < iters; i++) {
        if (conf_rank == 0) {
            MPI_Win_lock_all(0, win);
            MPI_Win_sync(win);
            for (int k = 0; k < 8; k++)
                seen += m[0] != 0;
            MPI_Win_unlock_all(win);
        } else {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Put(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
            MPI_Win_flush(0, win);
            MPI_Put(&zero, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
            MPI_Win_unlock(0, win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long total = 0;
    MPI_Allreduce(&seen, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    tap_is_long(total, 0,
                "lock_all on rank 0 excludes exclusive locks on rank 0: the busy mark is "
                "never seen (%d sections)",
                iters);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else {
            if (conf_rank == 0)
                fprintf(stderr, "lock_loadstore: unknown option '%s' (use --iters N)\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (iters <= 0) {
        if (conf_rank == 0)
            fprintf(stderr, "lock_loadstore: --iters must be positive\n");
        MPI_Finalize();
        return 2;
    }
    shared_sections();
    self_sections(0);
    self_sections(1);
    lock_all_sections();
    return conf_done();
}
