/* typemap_bytes.c — RMA writes only the bytes of a type map (MPI-3.1 §4.1: a datatype's type map
 * names the bytes a communication touches; the gaps between its blocks belong to the program).
 * Every rank is the origin of its right neighbour and the target of its left one. For each
 * datatype with gaps — the padded pair types MPI_SHORT_INT, MPI_DOUBLE_INT and
 * MPI_LONG_DOUBLE_INT inside C structs that keep data in the padding, a vector with holes, a type
 * with a negative lower bound — and each call that writes user memory (put and accumulate into
 * the target's window; get, get_accumulate, fetch_and_op and the request-based calls into the
 * origin's buffer), every buffer starts filled with a canary byte; afterwards each byte in the
 * type map must hold the transferred value and every other byte must still hold the canary.
 *
 * Found on libnbrma across nodes: MPI_Get_accumulate with result type MPI_SHORT_INT or
 * MPI_DOUBLE_INT wrote the padding of the result buffer (a struct {double v; int i; int tag;}
 * described as MPI_DOUBLE_INT lost its tag). */
#include <stddef.h>

#include "conf.h"

#define CANARY 0x5a
#define SPAN   512 /* bytes of each buffer and of the window part a case uses */
#define TOFF   64  /* the case's target displacement (bytes; the window has disp_unit 1) */
#define OOFF   64  /* where the origin's (and result's) buffer pointer sits in its allocation */

struct s_short_int {
    short v;
    int i;
};
struct s_double_int_tag { /* MPI_DOUBLE_INT's trailing padding is `tag` */
    double v;
    int i;
    int tag;
};
struct s_ldouble_int {
    long double v;
    int i;
};

typedef struct {
    const char *name;
    MPI_Datatype type;
    int count, pair; /* pair: a predefined pair type (fetch_and_op takes one element) */
    /* the type map of `count` elements: blocks (offset from the buffer pointer, length) */
    int nblk;
    struct {
        int off, len;
    } blk[16];
} tcase_t;

enum { C_PUT, C_ACC, C_GET, C_GETACC_NOOP, C_GETACC_REPLACE, C_FOP, C_RGET, C_RGETACC, C_NCALLS };
static const char *const cname[] = {"MPI_Put",
                                    "MPI_Accumulate (MPI_REPLACE)",
                                    "MPI_Get",
                                    "MPI_Get_accumulate (MPI_NO_OP)",
                                    "MPI_Get_accumulate (MPI_REPLACE)",
                                    "MPI_Fetch_and_op (MPI_REPLACE)",
                                    "MPI_Rget",
                                    "MPI_Rget_accumulate (MPI_REPLACE)"};

static unsigned char mask_of(const tcase_t *c, int count, int j) /* j: offset from the pointer */
{
    int per = c->nblk / c->count; /* blocks per element */
    for (int b = 0; b < per * count; b++)
        if (j >= c->blk[b].off && j < c->blk[b].off + c->blk[b].len)
            return 1;
    return 0;
}

/* Compare the SPAN bytes around `p` (p - OOFF .. p + SPAN - OOFF): map bytes must equal `want`
 * (same offsets), the others the canary. Returns the number of bad bytes, diagnosing the first. */
static int check(const char *what, const tcase_t *c, int count, const unsigned char *alloc,
                 const unsigned char *want_alloc)
{
    int bad = 0;
    for (int j = -OOFF; j < SPAN - OOFF; j++) {
        unsigned char got = alloc[OOFF + j];
        int in = mask_of(c, count, j);
        unsigned char exp = in ? want_alloc[OOFF + j] : CANARY;
        if (got != exp && bad++ == 0)
            tap_diag("%s: byte %d (%s the type map) is 0x%02x, expected 0x%02x%s", what, j,
                     in ? "inside" : "outside", got, exp,
                     in ? "" : " (the canary: a byte between the type map's blocks was written)");
    }
    return bad;
}

static void fill_map(unsigned char *alloc, const tcase_t *c, int count, int salt)
{
    memset(alloc, CANARY, SPAN);
    for (int j = -OOFF; j < SPAN - OOFF; j++)
        if (mask_of(c, count, j))
            alloc[OOFF + j] = (unsigned char)(salt * 37 + j * 11 + 3);
}

static void run(const tcase_t *c, int call, MPI_Win win, unsigned char *wmem)
{
    const int right = conf_right(), left = conf_left();
    int count = call == C_FOP ? 1 : c->count;
    unsigned char org[SPAN], res[SPAN], want_res[SPAN], want_win[SPAN], left_org[SPAN];
    /* Salts are per rank, so the left neighbour's origin data is known here. */
    fill_map(org, c, count, 10 + conf_rank);
    fill_map(left_org, c, count, 10 + left);
    memset(res, CANARY, SPAN);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win);
    fill_map(wmem + TOFF - OOFF, c, c->count, 50 + conf_rank); /* my window: old contents */
    MPI_Win_unlock(conf_rank, win);
    /* What my result buffer should get: my right neighbour's old window contents. */
    fill_map(want_res, c, count, 50 + right);
    memcpy(want_win, wmem + TOFF - OOFF, SPAN);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    void *o = org + OOFF, *r = res + OOFF;
    MPI_Request q = MPI_REQUEST_NULL;
    switch (call) {
    case C_PUT:
        MPI_Put(o, count, c->type, right, TOFF, count, c->type, win);
        break;
    case C_ACC:
        MPI_Accumulate(o, count, c->type, right, TOFF, count, c->type, MPI_REPLACE, win);
        break;
    case C_GET:
        MPI_Get(r, count, c->type, right, TOFF, count, c->type, win);
        break;
    case C_GETACC_NOOP:
        MPI_Get_accumulate(NULL, 0, c->type, r, count, c->type, right, TOFF, count, c->type,
                           MPI_NO_OP, win);
        break;
    case C_GETACC_REPLACE:
        MPI_Get_accumulate(o, count, c->type, r, count, c->type, right, TOFF, count, c->type,
                           MPI_REPLACE, win);
        break;
    case C_FOP:
        MPI_Fetch_and_op(o, r, c->type, right, TOFF, MPI_REPLACE, win);
        break;
    case C_RGET:
        MPI_Rget(r, count, c->type, right, TOFF, count, c->type, win, &q);
        break;
    case C_RGETACC:
        MPI_Rget_accumulate(o, count, c->type, r, count, c->type, right, TOFF, count, c->type,
                            MPI_REPLACE, win, &q);
        break;
    }
    if (q != MPI_REQUEST_NULL)
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    int writes_target = call == C_PUT || call == C_ACC || call == C_GETACC_REPLACE ||
                        call == C_FOP || call == C_RGETACC;
    int reads = !(call == C_PUT || call == C_ACC);
    /* My window: the left neighbour's origin bytes in the map if it wrote, else unchanged;
     * elements beyond `count` (fetch_and_op moves one) keep my old contents. */
    unsigned char exp_win[SPAN];
    memcpy(exp_win, want_win, SPAN);
    if (writes_target)
        for (int j = -OOFF; j < SPAN - OOFF; j++)
            if (mask_of(c, count, j))
                exp_win[OOFF + j] = left_org[OOFF + j];
    int bad = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
    char what[160];
    snprintf(what, sizeof what, "my window (target of rank %d)", left);
    /* the canary check of my window uses the full case's map (the old contents) */
    bad += check(what, c, c->count, wmem + TOFF - OOFF, exp_win);
    MPI_Win_unlock(conf_rank, win);
    if (reads) {
        snprintf(what, sizeof what, "my result buffer (from rank %d)", right);
        bad += check(what, c, count, res, want_res);
    }
    tap_ok(bad == 0, "%s on %d x %s: only the type map's bytes are written", cname[call], count,
           c->name);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    MPI_Datatype vec, neg, negr;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec); /* ints at 0, 8, 16, 24: extent 28 */
    MPI_Type_commit(&vec);
    MPI_Aint nd[2] = {-8, 4};
    int nl[2] = {1, 1};
    MPI_Type_create_hindexed(2, nl, nd, MPI_INT, &negr); /* lb -8, ub 8 */
    MPI_Type_create_resized(negr, -8, 16, &neg);
    MPI_Type_commit(&neg);
    const size_t si = sizeof(struct s_short_int), di = sizeof(struct s_double_int_tag),
                 li = sizeof(struct s_ldouble_int);
    MPI_Aint ext;
    MPI_Aint lb;
    int ok_layout = 1;
    MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext);
    ok_layout &= (size_t)ext == si;
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
    ok_layout &= (size_t)ext == di;
    MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext);
    ok_layout &= (size_t)ext == li;
    const int so = (int)offsetof(struct s_short_int, i), dofs = (int)offsetof(struct s_double_int_tag, i),
              lo = (int)offsetof(struct s_ldouble_int, i);
    int ldsize;
    MPI_Type_size(MPI_LONG_DOUBLE, &ldsize);
    tcase_t cases[] = {
        {"MPI_SHORT_INT", MPI_SHORT_INT, 3, 1, 6,
         {{0, 2}, {so, 4}, {(int)si, 2}, {(int)si + so, 4}, {2 * (int)si, 2}, {2 * (int)si + so, 4}}},
        {"MPI_DOUBLE_INT (in a struct whose padding is a field)", MPI_DOUBLE_INT, 3, 1, 6,
         {{0, 8}, {dofs, 4}, {(int)di, 8}, {(int)di + dofs, 4}, {2 * (int)di, 8}, {2 * (int)di + dofs, 4}}},
        {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, 2, 1, 4,
         {{0, ldsize}, {lo, 4}, {(int)li, ldsize}, {(int)li + lo, 4}}},
        {"a vector of ints with holes", vec, 2, 0, 8,
         {{0, 4}, {8, 4}, {16, 4}, {24, 4}, {28, 4}, {36, 4}, {44, 4}, {52, 4}}},
        {"a type with a negative lower bound", neg, 2, 0, 4, {{-8, 4}, {4, 4}, {8, 4}, {20, 4}}},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    int plan = 0;
    for (int k = 0; k < ncases; k++)
        plan += cases[k].pair ? C_NCALLS : C_NCALLS - 1; /* fetch_and_op: predefined types */
    tap_plan(plan + 1);
    tap_ok(ok_layout, "the pair types' extents are those of their C structs");
    unsigned char *wmem = conf_mem_alloc(TOFF - OOFF + SPAN + 64);
    memset(wmem, CANARY, TOFF - OOFF + SPAN + 64);
    MPI_Win win;
    MPI_Win_create(wmem, TOFF - OOFF + SPAN + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int k = 0; k < ncases; k++)
        for (int call = 0; call < C_NCALLS; call++)
            if (call != C_FOP || cases[k].pair)
                run(&cases[k], call, win, wmem);
    MPI_Win_free(&win);
    conf_mem_free(wmem);
    MPI_Type_free(&vec);
    MPI_Type_free(&neg);
    MPI_Type_free(&negr);
    return conf_done();
}
