/* test_op.c — reduction operations for accumulate (ref/src/op.c): the (op, type) table of
 * MPI-3.1 §5.9.2 written out independently here, every allowed pair's result against
 * PMPI_Reduce_local (which computes exactly MPI's semantics), the compare-and-swap type check,
 * MAXLOC/MINLOC's tie rule, MPI_REPLACE leaving padding alone, and unaligned buffers. The
 * vectorized kernels: every (op, type) over lengths around the block size at odd addresses
 * against the scalar reference and against one-element calls, nothing written past the end, and
 * origin data overlapping the target. One rank. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "op.h"
#include "tap.h"

/* the predefined ops, in a fixed order */
#define OPS(X)                                                                                     \
    X(MPI_MAX)                                                                                     \
    X(MPI_MIN) X(MPI_SUM) X(MPI_PROD) X(MPI_LAND) X(MPI_BAND) X(MPI_LOR) X(MPI_BOR) X(MPI_LXOR)    \
        X(MPI_BXOR) X(MPI_MAXLOC) X(MPI_MINLOC)
enum {
#define X(o) I_##o,
    OPS(X)
#undef X
        NOPS
};
static MPI_Op ops[NOPS];
static const char *op_names[NOPS] = {
#define X(o) #o,
    OPS(X)
#undef X
};
#define M(o) (1u << I_MPI_##o)
/* The groups, as the standard's table lists them */
#define G_CINT                                                                                     \
    (M(MAX) | M(MIN) | M(SUM) | M(PROD) | M(LAND) | M(LOR) | M(LXOR) | M(BAND) | M(BOR) | M(BXOR))
#define G_FINT  (M(MAX) | M(MIN) | M(SUM) | M(PROD) | M(BAND) | M(BOR) | M(BXOR))
#define G_FLT   (M(MAX) | M(MIN) | M(SUM) | M(PROD))
#define G_LOG   (M(LAND) | M(LOR) | M(LXOR))
#define G_CPX   (M(SUM) | M(PROD))
#define G_BYTE  (M(BAND) | M(BOR) | M(BXOR))
#define G_MULTI G_FINT
#define G_PAIR  (M(MAXLOC) | M(MINLOC))

/* How to make and compare values: integer (random bytes), logical (0/1), float and complex by
 * component size, pairs by value kind/size and index kind/size at an offset. */
enum { K_INT, K_LOG, K_FLT, K_CPX, K_PAIR, K_NONE };
typedef struct {
    MPI_Datatype t;
    const char *name;
    unsigned ops;
    int kind;
    int vsize;       /* float/complex: component size; pair: value size */
    char vk, ik;     /* pair: 'i' integer or 'f' float value/index */
    int ioff, isize; /* pair index */
    int uns;         /* integer: unsigned */
} tt_t;

#define INT(t, g)                                                                                  \
    {                                                                                              \
        t, #t, g, K_INT, 0, 0, 0, 0, 0, 0                                                          \
    }
#define UINT(t, g)                                                                                 \
    {                                                                                              \
        t, #t, g, K_INT, 0, 0, 0, 0, 0, 1                                                          \
    }
#define LOG(t)                                                                                     \
    {                                                                                              \
        t, #t, G_LOG, K_LOG, 0, 0, 0, 0, 0, 0                                                      \
    }
#define FLT(t, sz)                                                                                 \
    {                                                                                              \
        t, #t, G_FLT, K_FLT, sz, 0, 0, 0, 0, 0                                                     \
    }
#define CPX(t, sz)                                                                                 \
    {                                                                                              \
        t, #t, G_CPX, K_CPX, sz, 0, 0, 0, 0, 0                                                     \
    }
#define PAIR(t, S, vk, ik)                                                                         \
    {                                                                                              \
        t, #t, G_PAIR, K_PAIR, sizeof(((S *)0)->v), vk, ik, offsetof(S, i), sizeof(((S *)0)->i), 0 \
    }
#define NONE(t)                                                                                    \
    {                                                                                              \
        t, #t, 0, K_NONE, 0, 0, 0, 0, 0, 0                                                         \
    }
typedef struct {
    float v;
    int i;
} s_fi;
typedef struct {
    double v;
    int i;
} s_di;
typedef struct {
    long v;
    int i;
} s_li;
typedef struct {
    int v;
    int i;
} s_ii;
typedef struct {
    short v;
    int i;
} s_si;
typedef struct {
    long double v;
    int i;
} s_ldi;
typedef struct {
    float v;
    float i;
} s_ff;
typedef struct {
    double v;
    double i;
} s_dd;

static tt_t types[] = {
    /* MPI_CHAR: in no MPI-3.1 group, accepted as a C integer like both vendors do (ref.md) */
    {MPI_CHAR, "MPI_CHAR", G_CINT, K_INT, 0, 0, 0, 0, 0, CHAR_MIN == 0},
    INT(MPI_SIGNED_CHAR, G_CINT),
    UINT(MPI_UNSIGNED_CHAR, G_CINT),
    INT(MPI_SHORT, G_CINT),
    UINT(MPI_UNSIGNED_SHORT, G_CINT),
    INT(MPI_INT, G_CINT),
    UINT(MPI_UNSIGNED, G_CINT),
    INT(MPI_LONG, G_CINT),
    UINT(MPI_UNSIGNED_LONG, G_CINT),
    INT(MPI_LONG_LONG_INT, G_CINT),
    INT(MPI_LONG_LONG, G_CINT),
    UINT(MPI_UNSIGNED_LONG_LONG, G_CINT),
    INT(MPI_INT8_T, G_CINT),
    INT(MPI_INT16_T, G_CINT),
    INT(MPI_INT32_T, G_CINT),
    INT(MPI_INT64_T, G_CINT),
    UINT(MPI_UINT8_T, G_CINT),
    UINT(MPI_UINT16_T, G_CINT),
    UINT(MPI_UINT32_T, G_CINT),
    UINT(MPI_UINT64_T, G_CINT),
    INT(MPI_INTEGER, G_FINT),
    INT(MPI_INTEGER1, G_FINT),
    INT(MPI_INTEGER2, G_FINT),
    INT(MPI_INTEGER4, G_FINT),
    INT(MPI_INTEGER8, G_FINT),
    FLT(MPI_FLOAT, 4),
    FLT(MPI_DOUBLE, 8),
    FLT(MPI_LONG_DOUBLE, 16),
    FLT(MPI_REAL, 4),
    FLT(MPI_DOUBLE_PRECISION, 8),
    FLT(MPI_REAL4, 4),
    FLT(MPI_REAL8, 8),
    LOG(MPI_C_BOOL),
    LOG(MPI_CXX_BOOL),
    LOG(MPI_LOGICAL),
    CPX(MPI_C_COMPLEX, 4),
    CPX(MPI_C_FLOAT_COMPLEX, 4),
    CPX(MPI_C_DOUBLE_COMPLEX, 8),
    CPX(MPI_C_LONG_DOUBLE_COMPLEX, 16),
    CPX(MPI_CXX_FLOAT_COMPLEX, 4),
    CPX(MPI_CXX_DOUBLE_COMPLEX, 8),
    CPX(MPI_CXX_LONG_DOUBLE_COMPLEX, 16),
    CPX(MPI_COMPLEX, 4),
    CPX(MPI_DOUBLE_COMPLEX, 8),
    CPX(MPI_COMPLEX8, 4),
    CPX(MPI_COMPLEX16, 8),
    UINT(MPI_BYTE, G_BYTE),
    INT(MPI_AINT, G_MULTI),
    INT(MPI_OFFSET, G_MULTI),
    INT(MPI_COUNT, G_MULTI),
    PAIR(MPI_FLOAT_INT, s_fi, 'f', 'i'),
    PAIR(MPI_DOUBLE_INT, s_di, 'f', 'i'),
    PAIR(MPI_LONG_INT, s_li, 'i', 'i'),
    PAIR(MPI_2INT, s_ii, 'i', 'i'),
    PAIR(MPI_SHORT_INT, s_si, 'i', 'i'),
    PAIR(MPI_LONG_DOUBLE_INT, s_ldi, 'f', 'i'),
    PAIR(MPI_2REAL, s_ff, 'f', 'f'),
    PAIR(MPI_2DOUBLE_PRECISION, s_dd, 'f', 'f'),
    PAIR(MPI_2INTEGER, s_ii, 'i', 'i'),
    /* No reductions: characters, MPI_PACKED; and the quad-precision Fortran types, allowed by
     * the standard but refused by libnbrma (their C format is unknown: documented). */
    NONE(MPI_WCHAR),
    NONE(MPI_PACKED),
    NONE(MPI_CHARACTER),
    NONE(MPI_REAL16),
    NONE(MPI_COMPLEX32),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

static unsigned long rng = 0x9E3779B97F4A7C15UL;
static unsigned rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static void put_f(char *p, int size, double x)
{
    if (size == 4) {
        float f = (float)x;
        memcpy(p, &f, 4);
    } else if (size == 8) {
        memcpy(p, &x, 8);
    } else {
        long double l = x;
        memset(p, 0, 16);
        memcpy(p, &l, sizeof l);
    }
}

static long double get_f(const char *p, int size)
{
    float f;
    double d;
    long double l;
    if (size == 4)
        return memcpy(&f, p, 4), f;
    if (size == 8)
        return memcpy(&d, p, 8), d;
    return memcpy(&l, p, sizeof l), l;
}

static void put_i(char *p, int size, long v)
{
    memcpy(p, &v, (size_t)size); /* little-endian: the low bytes */
}

static long get_i(const char *p, int size)
{
    long v = 0;
    memcpy(&v, p, (size_t)size); /* zero-extended: only compared for equality */
    return v;
}

/* A value for element k of a buffer of type tt (extent ext). Small numbers keep float arithmetic
 * exact; pair values repeat so ties happen. */
static void fill(const tt_t *tt, char *buf, MPI_Aint ext, int n)
{
    for (int k = 0; k < n; k++) {
        char *p = buf + k * ext;
        switch (tt->kind) {
        case K_INT:
            for (MPI_Aint b = 0; b < ext; b++)
                p[b] = (char)rnd();
            break;
        case K_LOG:
            memset(p, 0, (size_t)ext);
            p[0] = (char)(rnd() & 1);
            break;
        case K_FLT:
            put_f(p, tt->vsize, ((int)(rnd() % 41) - 20) * 0.25);
            break;
        case K_CPX:
            put_f(p, tt->vsize, ((int)(rnd() % 41) - 20) * 0.25);
            put_f(p + tt->vsize, tt->vsize, ((int)(rnd() % 41) - 20) * 0.25);
            break;
        case K_PAIR:
            memset(p, 0xEE, (size_t)ext);
            if (tt->vk == 'f')
                put_f(p, tt->vsize, (int)(rnd() % 4));
            else
                put_i(p, tt->vsize, (long)(rnd() % 4) - 1);
            if (tt->ik == 'f')
                put_f(p + tt->ioff, tt->isize, (int)(rnd() % 10));
            else
                put_i(p + tt->ioff, tt->isize, (long)(rnd() % 10));
            break;
        }
    }
}

/* Element-wise equality of the data (not padding) */
static int same(const tt_t *tt, const char *a, const char *b, MPI_Aint ext, MPI_Aint size, int n)
{
    for (int k = 0; k < n; k++) {
        const char *p = a + k * ext, *q = b + k * ext;
        switch (tt->kind) {
        case K_FLT:
            if (get_f(p, tt->vsize) != get_f(q, tt->vsize))
                return 0;
            break;
        case K_CPX:
            if (get_f(p, tt->vsize) != get_f(q, tt->vsize) ||
                get_f(p + tt->vsize, tt->vsize) != get_f(q + tt->vsize, tt->vsize))
                return 0;
            break;
        case K_PAIR:
            if ((tt->vk == 'f' ? get_f(p, tt->vsize) != get_f(q, tt->vsize)
                               : get_i(p, tt->vsize) != get_i(q, tt->vsize)) ||
                memcmp(p + tt->ioff, q + tt->ioff, (size_t)tt->isize))
                return 0;
            break;
        default:
            if (memcmp(p, q, (size_t)size))
                return 0;
        }
    }
    return 1;
}

/* ---- the table ------------------------------------------------------------------------------- */

static void test_table(void)
{
    int bad_types = 0, n = 0;
    for (int i = 0; i < NTYPES; i++) {
        const tt_t *tt = &types[i];
        if (tt->t == MPI_DATATYPE_NULL)
            continue;
        n++;
        char wrong[256] = "";
        for (int o = 0; o < NOPS; o++) {
            int exp = tt->ops & (1u << o) ? MPI_SUCCESS : MPI_ERR_OP;
            if (nbr_op_check(ops[o], tt->t) != exp)
                snprintf(wrong + strlen(wrong), sizeof wrong - strlen(wrong), " %s", op_names[o]);
        }
        if (nbr_op_check(MPI_REPLACE, tt->t) != MPI_SUCCESS)
            strcat(wrong, " MPI_REPLACE");
        if (nbr_op_check(MPI_NO_OP, tt->t) != MPI_SUCCESS)
            strcat(wrong, " MPI_NO_OP");
        if (wrong[0]) {
            tap_diag("%s: wrong verdict for%s", tt->name, wrong);
            bad_types++;
        }
    }
    tap_ok(!bad_types,
           "nbr_op_check agrees with MPI-3.1 §5.9.2 for %d ops x %d types (+REPLACE, "
           "NO_OP)",
           NOPS, n);
}

static int user_fn_calls;
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)len, (void)t;
    user_fn_calls++;
}

static void test_refused(void)
{
    MPI_Op user;
    MPI_Op_create(user_fn, 1, &user);
    tap_is_long(nbr_op_check(MPI_SUM, MPI_BYTE), MPI_ERR_OP, "MPI_SUM on MPI_BYTE: MPI_ERR_OP");
    tap_is_long(nbr_op_check(MPI_BAND, MPI_DOUBLE), MPI_ERR_OP, "MPI_BAND on MPI_DOUBLE");
    tap_is_long(nbr_op_check(MPI_MAXLOC, MPI_INT), MPI_ERR_OP, "MPI_MAXLOC on MPI_INT");
    tap_is_long(nbr_op_check(MPI_SUM, MPI_CHAR), MPI_SUCCESS,
                "MPI_SUM on MPI_CHAR: accepted, as both vendors do (an extension)");
    tap_is_long(nbr_op_check(MPI_MAXLOC, MPI_CHAR), MPI_ERR_OP, "MPI_MAXLOC on MPI_CHAR");
    tap_is_long(nbr_op_check(MPI_LAND, MPI_INTEGER), MPI_ERR_OP,
                "MPI_LAND on MPI_INTEGER (not C integer)");
    tap_is_long(nbr_op_check(MPI_MAX, MPI_C_COMPLEX), MPI_ERR_OP, "MPI_MAX on MPI_C_COMPLEX");
    tap_is_long(nbr_op_check(user, MPI_INT), MPI_ERR_OP, "user-defined op: MPI_ERR_OP");
    tap_is_long(nbr_op_check(MPI_OP_NULL, MPI_INT), MPI_ERR_OP, "MPI_OP_NULL: MPI_ERR_OP");
    MPI_Datatype v;
    MPI_Type_contiguous(2, MPI_INT, &v);
    MPI_Type_commit(&v);
    tap_is_long(nbr_op_check(MPI_SUM, v), MPI_ERR_TYPE, "derived type as basic: MPI_ERR_TYPE");
    tap_is_long(nbr_op_check(MPI_SUM, MPI_DATATYPE_NULL), MPI_ERR_TYPE,
                "MPI_DATATYPE_NULL (mixed) as basic: MPI_ERR_TYPE");
    tap_is_str(nbr_op_name(MPI_BXOR), "MPI_BXOR", "nbr_op_name(MPI_BXOR)");
    tap_is_str(nbr_op_name(MPI_NO_OP), "MPI_NO_OP", "nbr_op_name(MPI_NO_OP)");
    tap_is_str(nbr_op_name(user), "user-defined op", "nbr_op_name(user op)");

    static const MPI_Datatype yes[] = {
        MPI_INT,     MPI_UNSIGNED_LONG, MPI_SIGNED_CHAR, MPI_INT8_T, MPI_UINT64_T,
        MPI_INTEGER, MPI_INTEGER8,      MPI_LOGICAL,     MPI_C_BOOL, MPI_BYTE,
        MPI_AINT,    MPI_OFFSET,        MPI_COUNT,       MPI_CHAR};
    static const MPI_Datatype no[] = {MPI_FLOAT,     MPI_DOUBLE,   MPI_WCHAR,
                                      MPI_C_COMPLEX, MPI_2INT,     MPI_DOUBLE_INT, MPI_PACKED,
                                      MPI_REAL,      MPI_CHARACTER};
    int ok = 1;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (nbr_op_cas_check(yes[i]) != MPI_SUCCESS)
            ok = 0, tap_diag("CAS refuses %s", nbr_dtype_name(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (nbr_op_cas_check(no[i]) != MPI_ERR_TYPE)
            ok = 0, tap_diag("CAS accepts %s", nbr_dtype_name(no[i]));
    if (nbr_op_cas_check(v) != MPI_ERR_TYPE)
        ok = 0, tap_diag("CAS accepts a derived type");
    tap_ok(ok, "compare-and-swap: integer, logical, byte, multi-language and MPI_CHAR (as both "
               "vendors) accepted; float, wchar, complex, pairs, derived refused");
    MPI_Type_free(&v);
    MPI_Op_free(&user);
}

/* ---- results against PMPI_Reduce_local ------------------------------------------------------- */

#define N 37

/* The test's own integer reference: the data as `size`-byte two's complement, arithmetic modulo
 * 2^(8 size) as C's unsigned types do. The vendors are no oracle for integers here: MPICH 4.0.2
 * compares unsigned types as signed in MAX/MIN (pmodels/mpich#6083); Open MPI 4.1.4 saturates
 * 8/16-bit SUM in its AVX kernels (open-mpi/ompi#8045), compares MPI_UNSIGNED_LONG as signed
 * (ompi#10525) and MPI_OFFSET as unsigned. */
static void own_int(int o, int uns, const char *in, char *io, int size, int n)
{
    for (int k = 0; k < n; k++) {
        uint64_t a = 0, b = 0, r = 0;
        memcpy(&a, in + k * size, (size_t)size);
        memcpy(&b, io + k * size, (size_t)size);
        int sh = 64 - 8 * size;
        int64_t sa = (int64_t)(a << sh) >> sh, sb = (int64_t)(b << sh) >> sh;
        int a_gt = uns ? a > b : sa > sb, a_lt = uns ? a < b : sa < sb;
        switch (o) {
        case I_MPI_MAX:
            r = a_gt ? a : b;
            break;
        case I_MPI_MIN:
            r = a_lt ? a : b;
            break;
        case I_MPI_SUM:
            r = a + b;
            break;
        case I_MPI_PROD:
            r = a * b;
            break;
        case I_MPI_LAND:
            r = a && b;
            break;
        case I_MPI_LOR:
            r = a || b;
            break;
        case I_MPI_LXOR:
            r = !a != !b;
            break;
        case I_MPI_BAND:
            r = a & b;
            break;
        case I_MPI_BOR:
            r = a | b;
            break;
        case I_MPI_BXOR:
            r = a ^ b;
            break;
        }
        memcpy(io + k * size, &r, (size_t)size); /* little-endian: the low bytes */
    }
}

static void test_results(void)
{
    static char vendor[2048];
    for (int i = 0; i < NTYPES; i++) {
        const tt_t *tt = &types[i];
        if (tt->t == MPI_DATATYPE_NULL || !tt->ops)
            continue;
        MPI_Aint lb, ext;
        int size;
        MPI_Type_get_extent(tt->t, &lb, &ext);
        MPI_Type_size(tt->t, &size);
        size_t bytes = (size_t)(ext * N);
        char *in = malloc(bytes), *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
        char wrong[256] = "";
        int nops = 0;
        for (int o = 0; o < NOPS; o++) {
            if (!(tt->ops & (1u << o)))
                continue;
            nops++;
            fill(tt, in, ext, N);
            fill(tt, a, ext, N);
            memcpy(b, a, bytes);
            memcpy(c, a, bytes);
            nbr_op_apply(ops[o], tt->t, in, a, N);
            int rc = PMPI_Reduce_local(in, b, N, tt->t, ops[o]);
            if (tt->kind == K_INT) {
                own_int(o, tt->uns, in, c, size, N);
                if (rc != MPI_SUCCESS || !same(tt, b, c, ext, size, N))
                    snprintf(vendor + strlen(vendor), sizeof vendor - strlen(vendor), " %s/%s",
                             tt->name + 4, op_names[o] + 4);
                memcpy(b, c, bytes);
                rc = MPI_SUCCESS;
            }
            if (rc != MPI_SUCCESS || !same(tt, a, b, ext, size, N))
                snprintf(wrong + strlen(wrong), sizeof wrong - strlen(wrong), " %s%s", op_names[o],
                         rc != MPI_SUCCESS ? "(oracle failed)" : "");
        }
        /* REPLACE copies the data, NO_OP leaves it */
        fill(tt, in, ext, N);
        fill(tt, a, ext, N);
        memcpy(b, a, bytes);
        nbr_op_apply(MPI_NO_OP, tt->t, in, a, N);
        if (memcmp(a, b, bytes))
            strcat(wrong, " MPI_NO_OP");
        nbr_op_apply(MPI_REPLACE, tt->t, in, a, N);
        if (!same(tt, a, in, ext, size, N))
            strcat(wrong, " MPI_REPLACE");
        if (wrong[0])
            tap_diag("%s: differs for%s", tt->name, wrong);
        tap_ok(!wrong[0], "%s: %d ops equal %s; REPLACE, NO_OP", tt->name, nops,
               tt->kind == K_INT ? "the integer reference" : "PMPI_Reduce_local");
        free(in), free(a), free(b), free(c);
    }
    if (vendor[0])
        tap_diag("PMPI_Reduce_local disagrees with the integer reference (vendor bugs, see "
                 "own_int) for:%s",
                 vendor);
}

/* ---- specifics ------------------------------------------------------------------------------- */

static void test_specifics(void)
{
    /* MAXLOC/MINLOC: equal values keep the smaller index, whichever side it is on */
    s_ii in[4] = {{5, 7}, {5, 2}, {9, 8}, {1, 9}}, io[4] = {{5, 3}, {5, 3}, {4, 1}, {6, 0}};
    s_ii io2[4];
    memcpy(io2, io, sizeof io);
    nbr_op_apply(MPI_MAXLOC, MPI_2INT, in, io, 4);
    tap_ok(io[0].v == 5 && io[0].i == 3 && io[1].v == 5 && io[1].i == 2 && io[2].v == 9 &&
               io[2].i == 8 && io[3].v == 6 && io[3].i == 0,
           "MAXLOC: ties take the smaller index, else the larger value's");
    nbr_op_apply(MPI_MINLOC, MPI_2INT, in, io2, 4);
    tap_ok(io2[0].i == 3 && io2[1].i == 2 && io2[2].v == 4 && io2[2].i == 1 && io2[3].v == 1 &&
               io2[3].i == 9,
           "MINLOC: ties take the smaller index, else the smaller value's");

    /* pair padding is neither read nor written */
    s_si a[3], b[3];
    memset(a, 0x11, sizeof a);
    memset(b, 0xEE, sizeof b);
    for (int k = 0; k < 3; k++)
        a[k].v = (short)k, a[k].i = 10 + k, b[k].v = -1, b[k].i = 0;
    nbr_op_apply(MPI_REPLACE, MPI_SHORT_INT, a, b, 3);
    nbr_op_apply(MPI_MAXLOC, MPI_SHORT_INT, a, b, 3);
    const unsigned char *pb = (const unsigned char *)b;
    tap_ok(b[2].v == 2 && b[2].i == 12 && pb[2] == 0xEE && pb[3] == 0xEE && pb[18] == 0xEE,
           "MPI_SHORT_INT: REPLACE and MAXLOC leave the padding bytes alone");

    /* signed overflow wraps (and is no undefined behaviour under UBSan) */
    int x[2] = {INT_MAX, INT_MIN}, y[2] = {1, -1};
    nbr_op_apply(MPI_SUM, MPI_INT, x, y, 2);
    tap_ok(y[0] == INT_MIN && y[1] == INT_MAX, "MPI_SUM on MPI_INT wraps around");
    short s1[1] = {300}, s2[1] = {300};
    nbr_op_apply(MPI_PROD, MPI_SHORT, s1, s2, 1);
    tap_is_long(s2[0], (short)(uint16_t)(300 * 300), "MPI_PROD on MPI_SHORT wraps around");

    /* unaligned buffers */
    _Alignas(16) unsigned char raw_in[8 * 5 + 1], raw_io[8 * 5 + 1];
    double din[5] = {1, 2, 3, 4, 5}, dio[5] = {10, 20, 30, 40, 50}, dref[5];
    memcpy(raw_in + 1, din, sizeof din);
    memcpy(raw_io + 1, dio, sizeof dio);
    nbr_op_apply(MPI_SUM, MPI_DOUBLE, raw_in + 1, raw_io + 1, 5);
    memcpy(dref, raw_io + 1, sizeof dref);
    tap_ok(dref[0] == 11 && dref[4] == 55, "MPI_SUM on MPI_DOUBLE at an odd address");

    /* the user-op function never runs: there is no path to it */
    tap_is_long(user_fn_calls, 0, "a user-defined op is never applied");
}

/* ---- lengths, alignment, tails, overlap ------------------------------------------------------ */

/* Lengths around the kernels' block of 16 elements, and addresses off by a few bytes. */
static const int lens[] = {0, 1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 255, 257, 1031};
#define NLENS  ((int)(sizeof lens / sizeof lens[0]))
#define MAXLEN 1031
static const int misalign[][2] = {{0, 0}, {1, 3}, {7, 5}, {4, 0}};
#define NMIS   ((int)(sizeof misalign / sizeof misalign[0]))
#define CANARY 0x5A

/* The expected result of `o` (an index into ops[], or -1 for REPLACE, -2 for NO_OP) on n
 * elements: the test's integer reference for integers, else PMPI_Reduce_local on aligned copies. */
static int expect(const tt_t *tt, int o, const char *in, char *io, int size, MPI_Aint ext, int n)
{
    if (o == -2 || n == 0)
        return 1;
    if (o == -1) {
        for (int k = 0; k < n; k++) /* data bytes only: pairs keep their padding */
            if (tt->kind == K_PAIR) {
                memcpy(io + k * ext, in + k * ext, (size_t)tt->vsize);
                memcpy(io + k * ext + tt->ioff, in + k * ext + tt->ioff, (size_t)tt->isize);
            } else {
                memcpy(io + k * ext, in + k * ext, (size_t)size);
            }
        return 1;
    }
    if (tt->kind == K_INT) {
        own_int(o, tt->uns, in, io, size, n);
        return 1;
    }
    return PMPI_Reduce_local(in, io, n, tt->t, ops[o]) == MPI_SUCCESS;
}

static void test_lengths(void)
{
    size_t cap = (size_t)MAXLEN * 32 + 256; /* room past the canary: an overrun shows, not crashes */
    char *in = malloc(cap), *got = malloc(cap), *one = malloc(cap), *want = malloc(cap),
         *ain = malloc(cap), *aio = malloc(cap);
    int total_bad = 0, cases = 0;
    for (int i = 0; i < NTYPES; i++) {
        const tt_t *tt = &types[i];
        if (!tt->ops)
            continue;
        MPI_Aint lb, ext;
        int size;
        MPI_Type_get_extent(tt->t, &lb, &ext);
        MPI_Type_size(tt->t, &size);
        char wrong[512] = "";
        for (int o = -2; o < NOPS; o++) {
            if (o >= 0 && !(tt->ops & (1u << o)))
                continue;
            MPI_Op op = o == -2 ? MPI_NO_OP : o == -1 ? MPI_REPLACE : ops[o];
            const char *name = o == -2 ? "MPI_NO_OP" : o == -1 ? "MPI_REPLACE" : op_names[o];
            int bad = 0;
            for (int l = 0; l < NLENS && !bad; l++)
                for (int m = 0; m < NMIS && !bad; m++) {
                    int n = lens[l];
                    size_t bytes = (size_t)(n * ext);
                    char *pin = in + misalign[m][0], *pgot = got + misalign[m][1],
                         *pone = one + misalign[m][1];
                    fill(tt, pin, ext, n);
                    fill(tt, pgot, ext, n);
                    memset(pgot + bytes, CANARY, 32);
                    memcpy(pone, pgot, bytes + 32);
                    memcpy(ain, pin, bytes);
                    memcpy(aio, pgot, bytes);
                    nbr_op_apply(op, tt->t, pin, pgot, n);
                    for (int k = 0; k < n; k++) /* the scalar path, one element at a time */
                        nbr_op_apply(op, tt->t, pin + k * ext, pone + k * ext, 1);
                    int ok = expect(tt, o, ain, aio, size, ext, n);
                    memcpy(want, aio, bytes);
                    cases++;
                    const char *why = !ok                                  ? "oracle failed"
                                      : !same(tt, pgot, want, ext, size, n) ? "differs from reference"
                                      : !same(tt, pgot, pone, ext, size, n)
                                          ? "differs from one-element calls"
                                          : NULL;
                    for (int c = 0; !why && c < 32; c++)
                        if ((unsigned char)pgot[bytes + c] != CANARY)
                            why = "wrote past the end";
                    if (why) {
                        bad = 1;
                        snprintf(wrong + strlen(wrong), sizeof wrong - strlen(wrong),
                                 " %s(n=%d, +%d/+%d: %s)", name, n, misalign[m][0], misalign[m][1],
                                 why);
                    }
                }
            total_bad += bad;
        }
        if (wrong[0])
            tap_diag("%s:%s", tt->name, wrong);
    }
    tap_ok(!total_bad,
           "every (op, type) incl. REPLACE and NO_OP over %d lengths (0..%d) x %d alignments: "
           "equals the reference and one-element calls, nothing past the end (%d cases)",
           NLENS, MAXLEN, NMIS, cases);

    /* origin overlapping the target, both directions: as if the origin were copied first */
    int ok = 1;
    for (int shift = -37; shift <= 37 && ok; shift += 37) {
        int n = 3000;
        double *buf = malloc(sizeof(double) * (size_t)(n + 80)), *src = malloc(sizeof(double) * (size_t)n),
               *ref = malloc(sizeof(double) * (size_t)n);
        for (int k = 0; k < n + 80; k++)
            buf[k] = k;
        double *io = buf + 40, *org = io + shift;
        memcpy(src, org, sizeof(double) * (size_t)n);
        for (int k = 0; k < n; k++)
            ref[k] = io[k] + src[k];
        nbr_op_apply(MPI_SUM, MPI_DOUBLE, org, io, n);
        if (memcmp(io, ref, sizeof(double) * (size_t)n)) {
            ok = 0;
            tap_diag("MPI_SUM with the origin %d elements from the target: wrong", shift);
        }
        free(buf), free(src), free(ref);
    }
    tap_ok(ok, "origin overlapping the target (shift -37, 0, +37 doubles): uses the origin's "
               "values from before the call");
    free(in), free(got), free(one), free(want), free(ain), free(aio);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
#define X(o) ops[I_##o] = o;
    OPS(X)
#undef X
    test_table();
    test_refused();
    test_results();
    test_specifics();
    test_lengths();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
