/* atomics_cas.c — MPI_Compare_and_swap on the types the standard allows (C integers, MPI_BYTE,
 * MPI_C_BOOL, MPI_AINT): the success path (compare == target: swapped, old value returned) and the
 * failure path (compare != target: unchanged, current value returned), completed by a fence, by
 * MPI_Win_unlock of an exclusive lock, and by MPI_Win_flush under lock_all.
 *   atomics_cas [--narrow | --wide]   types of at most 4 bytes / of 8 bytes (default: all)
 * The 8-byte types are a separate run because Open MPI 4.1.4's default osc/rdma segfaults in
 * every 8-byte CAS on an MPI_Win_allocate window (see known-failures). */
#include <stdbool.h>

#include "conf.h"

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t size;
} cas_type;

static const cas_type types[] = {
    {"MPI_INT", MPI_INT, sizeof(int)},
    {"MPI_SHORT", MPI_SHORT, sizeof(short)},
    {"MPI_BYTE", MPI_BYTE, 1},
    {"MPI_C_BOOL", MPI_C_BOOL, sizeof(bool)},
    {"MPI_INT64_T", MPI_INT64_T, sizeof(int64_t)},
    {"MPI_UINT64_T", MPI_UINT64_T, sizeof(uint64_t)},
    {"MPI_AINT", MPI_AINT, sizeof(MPI_Aint)},
};
#define NT   ((int)(sizeof types / sizeof types[0]))
#define SLOT 8

/* A value of `size` bytes (little tags that fit a byte; bool uses 0/1). */
static void put_val(const cas_type *t, void *p, unsigned v)
{
    memset(p, 0, t->size);
    if (t->type == MPI_C_BOOL) {
        *(bool *)p = v & 1;
    } else if (t->size == 1) {
        *(unsigned char *)p = (unsigned char)v;
    } else if (t->size == 2) {
        *(short *)p = (short)v;
    } else if (t->size == 4) {
        *(int *)p = (int)v;
    } else {
        *(int64_t *)p = (int64_t)v << 20 | v; /* uses the high half too */
    }
}

static int same(const cas_type *t, const void *a, const void *b)
{
    return memcmp(a, b, t->size) == 0;
}

static void show(const cas_type *t, const void *p, char *buf)
{
    const unsigned char *b = p;
    buf[0] = '\0';
    for (size_t i = t->size; i-- > 0;)
        sprintf(buf + strlen(buf), "%02x", b[i]);
}

enum { BY_FENCE, BY_UNLOCK, BY_FLUSH };
static const char *const how_name[] = {"fence", "exclusive lock + unlock", "lock_all + flush"};

static char *base;
static MPI_Win win;

static void complete(int how, int target)
{
    if (how == BY_FENCE)
        MPI_Win_fence(0, win);
    else if (how == BY_UNLOCK)
        MPI_Win_unlock(target, win);
    else
        MPI_Win_flush(target, win);
}

static void begin(int how, int target)
{
    if (how == BY_UNLOCK)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
}

/* On the right neighbour's slot for type t: a failing CAS (compare = old+1) then a succeeding
 * one (compare = old). Only we touch that slot. */
static void run(int how, const cas_type *t, int ti)
{
    int right = conf_right(), left = conf_left();
    MPI_Aint disp = (MPI_Aint)ti * SLOT;
    unsigned init_r = 0x20 + right, init_me = 0x20 + conf_rank; /* bool: odd/even */
    char old[SLOT], cmp[SLOT], nv[SLOT], res[SLOT], exp[SLOT], g[40], e[40];

    if (how == BY_FLUSH)
        MPI_Win_lock_all(0, win);
    /* Failure path: compare with a value the target does not hold. */
    put_val(t, cmp, init_r + 1);
    put_val(t, nv, 0x50 + conf_rank);
    put_val(t, old, init_r);
    memset(res, 0xEE, sizeof res);
    begin(how, right);
    MPI_Compare_and_swap(nv, cmp, res, t->type, right, disp, win);
    complete(how, right);
    int ok = same(t, res, old);
    if (!ok) {
        show(t, res, g);
        show(t, old, e);
        tap_diag("%s: failing CAS on rank %d returned 0x%s, expected 0x%s", t->name, right, g, e);
    }
    /* Success path: compare with what it holds; it becomes nv. */
    memset(res, 0xEE, sizeof res);
    begin(how, right);
    MPI_Compare_and_swap(nv, old, res, t->type, right, disp, win);
    complete(how, right);
    if (!same(t, res, old)) {
        show(t, res, g);
        show(t, old, e);
        tap_diag("%s: succeeding CAS on rank %d returned 0x%s, expected 0x%s", t->name, right, g,
                 e);
        ok = 0;
    }
    if (how == BY_FLUSH)
        MPI_Win_unlock_all(win);
    nbh_barrier(MPI_COMM_WORLD);
    if (how == BY_FENCE)
        MPI_Win_fence(0, win);
    else
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    put_val(t, exp, 0x50 + left);
    if (!same(t, base + disp, exp)) {
        show(t, base + disp, g);
        show(t, exp, e);
        tap_diag("%s: rank %d holds 0x%s after the CAS pair, expected 0x%s", t->name, conf_rank, g,
                 e);
        ok = 0;
    }
    put_val(t, base + disp, init_me); /* reset for the next completion mode */
    if (how == BY_FENCE)
        MPI_Win_fence(0, win);
    else
        MPI_Win_unlock(conf_rank, win);
    nbh_barrier(MPI_COMM_WORLD);
    tap_ok(ok, "MPI_Compare_and_swap on %s completed by %s: failure then success path", t->name,
           how_name[how]);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    int lo = 0, hi = NT; /* types [lo, hi) */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--narrow") == 0)
            hi = 4;
        else if (strcmp(argv[i], "--wide") == 0)
            lo = 4;
        else
            tap_bail_out("usage: atomics_cas [--narrow | --wide]");
    }
    tap_plan(3 * (hi - lo));
    /* A multiple of 16 bytes: see win_allocate_odd.c for MPICH's trouble with other sizes. */
    conf_win_allocate((NT * SLOT + 15) / 16 * 16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < NT; i++)
        put_val(&types[i], base + i * SLOT, 0x20 + conf_rank);
    nbh_barrier(MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    for (int how = BY_FENCE; how <= BY_FLUSH; how++) {
        for (int i = lo; i < hi; i++)
            run(how, &types[i], i);
        if (how == BY_FENCE)
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }
    conf_win_free(&win);
    return conf_done();
}
