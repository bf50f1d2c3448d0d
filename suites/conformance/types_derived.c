/* types_derived.c — derived datatypes on the origin and on the target of MPI_Put, MPI_Get,
 * MPI_Accumulate and MPI_Get_accumulate: vector (strided), indexed, struct with gaps (the gap bytes
 * of the target stay untouched), resized, subarray, origin and target types that differ but share
 * a type signature, and a datatype freed right after the RMA call (MPI keeps it alive until the
 * operation completes). Every check covers the target's whole window, so a stray write is seen. */
#include <stddef.h>

#include "conf.h"

#define W 64

static int *base;
static MPI_Win win;

/* One fence epoch: reset every window to -1, run `op` (on the right neighbour), compare the
 * whole window with `exp` (what the left neighbour's op must have produced). */
static void reset(void)
{
    for (int i = 0; i < W; i++)
        base[i] = -1;
    MPI_Win_fence(0, win);
}

static int check_window(const int *exp)
{
    MPI_Win_fence(0, win);
    return conf_check_int(base, exp, W, "rank %d's window", conf_rank);
}

static void expect_blank(int *exp)
{
    for (int i = 0; i < W; i++)
        exp[i] = -1;
}

static void vector_target(void)
{
    int out[8], exp[W];
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    conf_fill_int(out, 8, 1, conf_rank);
    reset();
    MPI_Put(out, 8, MPI_INT, conf_right(), 0, 1, vec, win);
    expect_blank(exp);
    for (int i = 0; i < 8; i++)
        exp[3 * i] = (int)conf_val(1, conf_left(), i);
    tap_ok(check_window(exp), "MPI_Put: 8 contiguous ints -> vector(8, 1, stride 3) on the target");
    MPI_Type_free(&vec);
}

static void vector_origin(void)
{
    int out[20], exp[W];
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 5, MPI_INT, &vec); /* elements 0,1, 5,6, 10,11, 15,16 */
    MPI_Type_commit(&vec);
    conf_fill_int(out, 20, 2, conf_rank);
    reset();
    MPI_Put(out, 1, vec, conf_right(), 4, 8, MPI_INT, win);
    expect_blank(exp);
    for (int b = 0, k = 0; b < 4; b++)
        for (int j = 0; j < 2; j++, k++)
            exp[4 + k] = (int)conf_val(2, conf_left(), 5 * b + j);
    tap_ok(check_window(exp), "MPI_Put: vector(4, 2, stride 5) origin -> 8 contiguous ints at 4");
    MPI_Type_free(&vec);
}

static void indexed_both(void)
{
    int out[16], exp[W];
    MPI_Datatype o, t;
    int obl[3] = {1, 3, 2}, odi[3] = {0, 4, 10};
    int tbl[3] = {2, 2, 2}, tdi[3] = {1, 6, 20};
    MPI_Type_indexed(3, obl, odi, MPI_INT, &o);
    MPI_Type_indexed(3, tbl, tdi, MPI_INT, &t);
    MPI_Type_commit(&o);
    MPI_Type_commit(&t);
    conf_fill_int(out, 16, 3, conf_rank);
    reset();
    MPI_Put(out, 1, o, conf_right(), 0, 1, t, win);
    expect_blank(exp);
    int src[6] = {0, 4, 5, 6, 10, 11}, dst[6] = {1, 2, 6, 7, 20, 21};
    for (int k = 0; k < 6; k++)
        exp[dst[k]] = (int)conf_val(3, conf_left(), src[k]);
    tap_ok(check_window(exp), "MPI_Put: indexed {1,3,2}@{0,4,10} -> indexed {2,2,2}@{1,6,20}");
    MPI_Type_free(&o);
    MPI_Type_free(&t);
}

static void resized_target(void)
{
    int out[6], exp[W];
    MPI_Datatype every2;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2);
    MPI_Type_commit(&every2);
    conf_fill_int(out, 6, 4, conf_rank);
    reset();
    MPI_Put(out, 6, MPI_INT, conf_right(), 10, 6, every2, win);
    expect_blank(exp);
    for (int i = 0; i < 6; i++)
        exp[10 + 2 * i] = (int)conf_val(4, conf_left(), i);
    tap_ok(check_window(exp), "MPI_Put: 6 x MPI_INT resized to extent 8 lands on every other int");
    MPI_Type_free(&every2);
}

/* A 6 x 8 row-major matrix at element 0; the 3 x 4 block starting at (2, 3). */
static void subarray(void)
{
    int out[12], back[12], exp[W];
    MPI_Datatype sub;
    int sizes[2] = {6, 8}, subs[2] = {3, 4}, starts[2] = {2, 3};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    conf_fill_int(out, 12, 5, conf_rank);
    reset();
    MPI_Put(out, 12, MPI_INT, conf_right(), 0, 1, sub, win);
    expect_blank(exp);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            exp[(2 + r) * 8 + 3 + c] = (int)conf_val(5, conf_left(), r * 4 + c);
    tap_ok(check_window(exp), "MPI_Put: 12 ints -> 3x4 subarray at (2,3) of a 6x8 C matrix");
    MPI_Get(back, 12, MPI_INT, conf_right(), 0, 1, sub, win);
    MPI_Win_fence(0, win);
    tap_ok(conf_check_int(back, out, 12, "the subarray read back from rank %d", conf_right()),
           "MPI_Get: the same subarray reads back the 12 ints");
    MPI_Type_free(&sub);
}

static void get_vector(void)
{
    int got[10], exp[10];
    MPI_Datatype vec;
    MPI_Type_vector(10, 1, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    conf_fill_int(base, W, 6, conf_rank);
    MPI_Win_fence(0, win);
    MPI_Get(got, 10, MPI_INT, conf_right(), 2, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 10; i++)
        exp[i] = (int)conf_val(6, conf_right(), 2 + 4 * i);
    tap_ok(conf_check_int(got, exp, 10, "the MPI_Get result from rank %d", conf_right()),
           "MPI_Get: vector(10, 1, stride 4) at element 2 of the target -> 10 contiguous ints");
    MPI_Type_free(&vec);
}

/* Same type signature (8 ints), different structure on each side. */
static void same_signature(void)
{
    int out[8], exp[W];
    MPI_Datatype four, vec;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&four);
    MPI_Type_commit(&vec);
    conf_fill_int(out, 8, 7, conf_rank);
    reset();
    MPI_Put(out, 2, four, conf_right(), 1, 1, vec, win);
    expect_blank(exp);
    for (int i = 0; i < 8; i++)
        exp[1 + 2 * i] = (int)conf_val(7, conf_left(), i);
    tap_ok(check_window(exp), "MPI_Put: 2 x contiguous(4 ints) -> 1 x vector(8, 1, stride 2)");
    MPI_Type_free(&four);
    MPI_Type_free(&vec);
}

static void accumulate_vector(void)
{
    int out[8], exp[W];
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 8; i++)
        out[i] = i + 1;
    for (int i = 0; i < W; i++)
        base[i] = 100 * i;
    MPI_Win_fence(0, win);
    MPI_Accumulate(out, 8, MPI_INT, conf_right(), 1, 1, vec, MPI_SUM, win);
    for (int i = 0; i < W; i++)
        exp[i] = 100 * i;
    for (int i = 0; i < 8; i++)
        exp[1 + 3 * i] += i + 1;
    tap_ok(check_window(exp), "MPI_Accumulate(SUM): 8 ints -> vector(8, 1, stride 3) target");

    /* Get_accumulate: origin contiguous, result strided, target indexed. */
    int res[16], eres[16];
    MPI_Datatype rvec, tidx;
    MPI_Type_vector(4, 1, 4, MPI_INT, &rvec);
    int bl[2] = {1, 3}, di[2] = {40, 50};
    MPI_Type_indexed(2, bl, di, MPI_INT, &tidx);
    MPI_Type_commit(&rvec);
    MPI_Type_commit(&tidx);
    for (int i = 0; i < 16; i++)
        res[i] = eres[i] = -5;
    int add[4] = {1, 2, 3, 4};
    MPI_Get_accumulate(add, 4, MPI_INT, res, 1, rvec, conf_right(), 0, 1, tidx, MPI_SUM, win);
    int t[4] = {40, 50, 51, 52};
    for (int i = 0; i < 4; i++) {
        eres[4 * i] = exp[t[i]];
        exp[t[i]] += add[i];
    }
    int ok = check_window(exp);
    ok &= conf_check_int(res, eres, 16, "rank %d's strided result buffer", conf_rank);
    tap_ok(ok, "MPI_Get_accumulate(SUM): contiguous origin, strided result, indexed target");
    MPI_Type_free(&vec);
    MPI_Type_free(&rvec);
    MPI_Type_free(&tidx);
}

static void freed_early(void)
{
    int out[5], exp[W];
    MPI_Datatype vec;
    MPI_Type_vector(5, 1, 7, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    conf_fill_int(out, 5, 8, conf_rank);
    reset();
    MPI_Put(out, 5, MPI_INT, conf_right(), 3, 1, vec, win);
    MPI_Type_free(&vec); /* still pending: MPI must keep the type until the put completes */
    expect_blank(exp);
    for (int i = 0; i < 5; i++)
        exp[3 + 7 * i] = (int)conf_val(8, conf_left(), i);
    tap_ok(check_window(exp), "MPI_Put with a target type freed before the epoch ends");
}

typedef struct {
    int a;
    double b;
    char c;
} rec;

/* A struct type with the C layout's gaps; put 3 records into a window of bytes pre-filled with
 * 0x5A: the fields arrive, the padding bytes of the target keep 0x5A. */
static void struct_gaps(void)
{
    enum { NREC = 3 };
    /* MPI_Win_create: MPI_Win_allocate of 72 bytes hits an MPICH bug (see win_allocate_odd). */
    unsigned char *bb = malloc(NREC * sizeof(rec));
    MPI_Win bw;
    MPI_Win_create(bb, NREC * sizeof(rec), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bw);
    memset(bb, 0x5A, NREC * sizeof(rec));
    MPI_Datatype st, rt;
    int bl[3] = {1, 1, 1};
    MPI_Aint di[3] = {offsetof(rec, a), offsetof(rec, b), offsetof(rec, c)};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, bl, di, ty, &st);
    MPI_Type_create_resized(st, 0, sizeof(rec), &rt);
    MPI_Type_commit(&rt);
    rec out[NREC];
    memset(out, 0, sizeof out);
    for (int i = 0; i < NREC; i++) {
        out[i].a = (int)conf_val(9, conf_rank, i);
        out[i].b = conf_val(9, conf_rank, i) + 0.5;
        out[i].c = (char)('a' + conf_rank + i);
    }
    MPI_Win_fence(0, bw);
    MPI_Put(out, NREC, rt, conf_right(), 0, NREC, rt, bw);
    MPI_Win_fence(0, bw);
    int fields = 1, gaps = 1;
    rec *got = (rec *)bb;
    for (int i = 0; i < NREC; i++) {
        long v = conf_val(9, conf_left(), i);
        if (got[i].a != v || got[i].b != v + 0.5 || got[i].c != (char)('a' + conf_left() + i)) {
            tap_diag("record %d of rank %d's window: {%d, %g, char %d}, expected {%ld, %g, %d}", i,
                     conf_rank, got[i].a, got[i].b, got[i].c, v, v + 0.5, 'a' + conf_left() + i);
            fields = 0;
        }
    }
    for (size_t k = 0; k < NREC * sizeof(rec); k++) {
        size_t o = k % sizeof(rec);
        int in_field = o < offsetof(rec, a) + sizeof(int) || /* a is at offset 0 */
                       (o >= offsetof(rec, b) && o < offsetof(rec, b) + sizeof(double)) ||
                       o == offsetof(rec, c);
        if (!in_field && bb[k] != 0x5A) {
            tap_diag("padding byte %zu of rank %d's window is 0x%02x, was 0x5A", k, conf_rank,
                     bb[k]);
            gaps = 0;
            break;
        }
    }
    tap_ok(fields, "MPI_Put of 3 records with struct{int, double, char} resized to sizeof(rec)");
    tap_ok(gaps, "the struct type's gaps: padding bytes of the target are not written");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    MPI_Win_fence(0, bw);
    conf_win_free(&bw);
    free(bb);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(13);
    conf_win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_fence(0, win);
    vector_target();
    vector_origin();
    indexed_both();
    resized_target();
    subarray();
    get_vector();
    same_signature();
    accumulate_vector();
    freed_early();
    MPI_Win_fence(0, win);
    conf_win_free(&win);
    struct_gaps();
    return conf_done();
}
