/* acc.h — table-driven MPI_Accumulate tests shared by acc_ops.c, acc_minmax_unsigned.c and
 * acc_minmax_multilang.c.
 *
 * A case is (operation, predefined datatype). Every rank holds ACC_K elements per case at its own
 * offset of a byte window, initialized with init(op); in ONE fence epoch every rank accumulates
 * its contribution contrib(op, rank) into every rank (so each location sees all ranks' updates
 * concurrently); afterwards each rank compares its elements with the fold of init and all ranks'
 * contributions computed in C. MPI_REPLACE from several origins has no defined winner, so there
 * each element must equal one of the origins' values (element-wise atomicity). Values are small
 * and exact (no overflow, no rounding), so the fold order does not matter. */
#ifndef NBRMA_ACC_H
#define NBRMA_ACC_H

#include <complex.h>
#include <stdbool.h>

#include "conf.h"

#define ACC_K    6  /* elements per case */
#define ACC_SLOT 32 /* bytes per element slot (the largest type: long double complex) */

enum {
    OP_SUM,
    OP_PROD,
    OP_MIN,
    OP_MAX,
    OP_LAND,
    OP_LOR,
    OP_LXOR,
    OP_BAND,
    OP_BOR,
    OP_BXOR,
    OP_MAXLOC,
    OP_MINLOC,
    OP_REPLACE,
    ACC_NOPS
};

static const char *const acc_op_name[ACC_NOPS] = {
    "MPI_SUM",  "MPI_PROD", "MPI_MIN",  "MPI_MAX",    "MPI_LAND",   "MPI_LOR",    "MPI_LXOR",
    "MPI_BAND", "MPI_BOR",  "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE"};

static inline MPI_Op acc_mpi_op(int op)
{
    switch (op) {
    case OP_SUM:
        return MPI_SUM;
    case OP_PROD:
        return MPI_PROD;
    case OP_MIN:
        return MPI_MIN;
    case OP_MAX:
        return MPI_MAX;
    case OP_LAND:
        return MPI_LAND;
    case OP_LOR:
        return MPI_LOR;
    case OP_LXOR:
        return MPI_LXOR;
    case OP_BAND:
        return MPI_BAND;
    case OP_BOR:
        return MPI_BOR;
    case OP_BXOR:
        return MPI_BXOR;
    case OP_MAXLOC:
        return MPI_MAXLOC;
    case OP_MINLOC:
        return MPI_MINLOC;
    default:
        return MPI_REPLACE;
    }
}

/* Initial target values and contributions, as integers (cast to the type; small enough for
 * int8_t, and non-negative where `sgn` is 0 -- except MIN/MAX contributions, which are
 * deliberately negative so that unsigned types see values with the top bit set). */
static inline long acc_ival(int op, int sgn, int i)
{
    switch (op) {
    case OP_SUM:
        return 10 + i;
    case OP_PROD:
        return 1 + i % 2;
    case OP_MIN:
    case OP_MAX:
        return 3;
    case OP_LAND:
    case OP_LOR:
    case OP_LXOR:
        return i == 1 ? 5 : i % 2;
    case OP_BAND:
    case OP_BOR:
    case OP_BXOR:
        return 0x3C5A + 0x101 * i;
    default:
        return sgn ? -7 - i : 7 + i;
    }
}

static inline long acc_cval(int op, int sgn, int r, int i)
{
    switch (op) {
    case OP_SUM:
        return sgn && i % 2 ? -(r + i) : r + 2 * i + 1;
    case OP_PROD:
        return (r + i) % 3 == 0 ? (sgn ? -1 : 1) : 2;
    case OP_MIN:
    case OP_MAX: /* negative values become huge unsigned ones: signedness mix-ups show */
        return (r * 7 + i * 3) % 11 - 5;
    case OP_LAND:
    case OP_LOR:
    case OP_LXOR:
        return i == 0 ? 0 : i == 1 ? r + 2 : (r + i) % 3 == 0 ? 0 : r + 2;
    case OP_BAND:
    case OP_BOR:
    case OP_BXOR:
        return (0x55L << (r % 4)) ^ (i * 0x1111L) ^ (r * 0x0F0FL);
    default:
        return 100 * (r + 1) + i;
    }
}

/* Floating-point values: quarters and halves, exact in float. */
static inline double acc_fval(int op, int i)
{
    switch (op) {
    case OP_SUM:
        return 10.5 + i;
    case OP_PROD:
        return 0.5 + i % 2;
    case OP_MIN:
    case OP_MAX:
        return 0.75;
    default:
        return -7.5 - i;
    }
}

static inline double acc_fcval(int op, int r, int i)
{
    switch (op) {
    case OP_SUM:
        return i % 2 ? -(r + i + 0.25) : r + 2 * i + 0.75;
    case OP_PROD:
        return (r + i) % 3 == 0 ? -0.5 : 2.0;
    case OP_MIN:
    case OP_MAX:
        return (r * 7 + i * 3) % 11 - 5.25;
    default:
        return 100.25 * (r + 1) + i;
    }
}

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t size;
    void (*init)(int op, void *p);
    void (*contrib)(int op, void *p, int r);
    void (*apply)(int op, void *acc, const void *c); /* ACC_K elements: acc = acc op c */
    int (*eq)(const void *a, const void *b);         /* one element */
    void (*show)(char *s, size_t len, const void *x);
} acc_type;

#define ACC_COMMON(nm, T)                                                                          \
    static inline int nm##_eq(const void *x, const void *y)                                        \
    {                                                                                              \
        return *(const T *)x == *(const T *)y;                                                     \
    }

/* Integer types: every op but the loc ones. */
#define ACC_DEF_INT(nm, T, SGN)                                                                    \
    ACC_COMMON(nm, T)                                                                              \
    static inline void nm##_init(int op, void *p)                                                  \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((T *)p)[i] = (T)acc_ival(op, SGN, i);                                                 \
    }                                                                                              \
    static inline void nm##_contrib(int op, void *p, int r)                                        \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((T *)p)[i] = (T)acc_cval(op, SGN, r, i);                                              \
    }                                                                                              \
    static inline void nm##_apply(int op, void *x, const void *y)                                  \
    {                                                                                              \
        T *a = x;                                                                                  \
        const T *b = y;                                                                            \
        for (int i = 0; i < ACC_K; i++) {                                                          \
            switch (op) {                                                                          \
            case OP_SUM:                                                                           \
                a[i] = (T)(a[i] + b[i]);                                                           \
                break;                                                                             \
            case OP_PROD:                                                                          \
                a[i] = (T)(a[i] * b[i]);                                                           \
                break;                                                                             \
            case OP_MIN:                                                                           \
                a[i] = b[i] < a[i] ? b[i] : a[i];                                                  \
                break;                                                                             \
            case OP_MAX:                                                                           \
                a[i] = b[i] > a[i] ? b[i] : a[i];                                                  \
                break;                                                                             \
            case OP_LAND:                                                                          \
                a[i] = (T)(a[i] && b[i]);                                                          \
                break;                                                                             \
            case OP_LOR:                                                                           \
                a[i] = (T)(a[i] || b[i]);                                                          \
                break;                                                                             \
            case OP_LXOR:                                                                          \
                a[i] = (T)(!a[i] != !b[i]);                                                        \
                break;                                                                             \
            case OP_BAND:                                                                          \
                a[i] = (T)(a[i] & b[i]);                                                           \
                break;                                                                             \
            case OP_BOR:                                                                           \
                a[i] = (T)(a[i] | b[i]);                                                           \
                break;                                                                             \
            case OP_BXOR:                                                                          \
                a[i] = (T)(a[i] ^ b[i]);                                                           \
                break;                                                                             \
            default:                                                                               \
                a[i] = b[i];                                                                       \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static inline void nm##_show(char *s, size_t len, const void *x)                               \
    {                                                                                              \
        T v = *(const T *)x;                                                                       \
        if (SGN)                                                                                   \
            snprintf(s, len, "%lld", (long long)v);                                                \
        else                                                                                       \
            snprintf(s, len, "%llu (0x%llx)", (unsigned long long)v, (unsigned long long)v);       \
    }

/* _Bool: the logical ops and REPLACE. */
#define ACC_DEF_BOOL(nm)                                                                           \
    ACC_COMMON(nm, bool)                                                                           \
    static inline void nm##_init(int op, void *p)                                                  \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((bool *)p)[i] = acc_ival(op, 0, i) != 0;                                              \
    }                                                                                              \
    static inline void nm##_contrib(int op, void *p, int r)                                        \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((bool *)p)[i] = op == OP_REPLACE ? (r + i) % 2 : acc_cval(op, 0, r, i) != 0;          \
    }                                                                                              \
    static inline void nm##_apply(int op, void *x, const void *y)                                  \
    {                                                                                              \
        bool *a = x;                                                                               \
        const bool *b = y;                                                                         \
        for (int i = 0; i < ACC_K; i++)                                                            \
            a[i] = op == OP_LAND   ? a[i] && b[i]                                                  \
                   : op == OP_LOR  ? a[i] || b[i]                                                  \
                   : op == OP_LXOR ? a[i] != b[i]                                                  \
                                   : b[i];                                                         \
    }                                                                                              \
    static inline void nm##_show(char *s, size_t len, const void *x)                               \
    {                                                                                              \
        snprintf(s, len, "%d", (int)*(const bool *)x);                                             \
    }

/* Floating types: SUM, PROD, MIN, MAX, REPLACE. */
#define ACC_DEF_FLT(nm, T)                                                                         \
    ACC_COMMON(nm, T)                                                                              \
    static inline void nm##_init(int op, void *p)                                                  \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((T *)p)[i] = (T)acc_fval(op, i);                                                      \
    }                                                                                              \
    static inline void nm##_contrib(int op, void *p, int r)                                        \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((T *)p)[i] = (T)acc_fcval(op, r, i);                                                  \
    }                                                                                              \
    static inline void nm##_apply(int op, void *x, const void *y)                                  \
    {                                                                                              \
        T *a = x;                                                                                  \
        const T *b = y;                                                                            \
        for (int i = 0; i < ACC_K; i++)                                                            \
            if (op == OP_SUM)                                                                      \
                a[i] = a[i] + b[i];                                                                \
            else if (op == OP_PROD)                                                                \
                a[i] = a[i] * b[i];                                                                \
            else if (op == OP_MIN)                                                                 \
                a[i] = b[i] < a[i] ? b[i] : a[i];                                                  \
            else if (op == OP_MAX)                                                                 \
                a[i] = b[i] > a[i] ? b[i] : a[i];                                                  \
            else                                                                                   \
                a[i] = b[i];                                                                       \
    }                                                                                              \
    static inline void nm##_show(char *s, size_t len, const void *x)                               \
    {                                                                                              \
        snprintf(s, len, "%.21Lg", (long double)*(const T *)x);                                    \
    }

/* Complex types: SUM, PROD, REPLACE. */
#define ACC_DEF_CPLX(nm, T, R)                                                                     \
    ACC_COMMON(nm, T)                                                                              \
    static inline void nm##_init(int op, void *p)                                                  \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((T *)p)[i] = (T)(acc_fval(op, i) + (R)(i - 2) * I);                                   \
    }                                                                                              \
    static inline void nm##_contrib(int op, void *p, int r)                                        \
    {                                                                                              \
        for (int i = 0; i < ACC_K; i++)                                                            \
            ((T *)p)[i] = op == OP_PROD ? ((r + i) % 2 ? (T)(1 + 1 * I) : (T)(0.5 - 1 * I))        \
                                        : (T)(acc_fcval(op, r, i) + (R)(i - r) * I);               \
    }                                                                                              \
    static inline void nm##_apply(int op, void *x, const void *y)                                  \
    {                                                                                              \
        T *a = x;                                                                                  \
        const T *b = y;                                                                            \
        for (int i = 0; i < ACC_K; i++)                                                            \
            a[i] = op == OP_SUM ? a[i] + b[i] : op == OP_PROD ? a[i] * b[i] : b[i];                \
    }                                                                                              \
    static inline void nm##_show(char *s, size_t len, const void *x)                               \
    {                                                                                              \
        T v = *(const T *)x;                                                                       \
        snprintf(s, len, "%Lg%+Lgi", (long double)creall(v), (long double)cimagl(v));              \
    }

/* Value-index pairs: MAXLOC, MINLOC (ties pick the smaller index), REPLACE. */
#define ACC_DEF_PAIR(nm, T)                                                                        \
    typedef struct {                                                                               \
        T v;                                                                                       \
        int i;                                                                                     \
    } nm##_t;                                                                                      \
    static inline int nm##_eq(const void *x, const void *y)                                        \
    {                                                                                              \
        const nm##_t *a = x, *b = y;                                                               \
        return a->v == b->v && a->i == b->i;                                                       \
    }                                                                                              \
    static inline void nm##_init(int op, void *p)                                                  \
    {                                                                                              \
        nm##_t *a = p;                                                                             \
        for (int i = 0; i < ACC_K; i++) {                                                          \
            a[i].v = (T)(op == OP_REPLACE ? -1 : 2);                                               \
            a[i].i = i % 2 ? 0 : 100;                                                              \
        }                                                                                          \
    }                                                                                              \
    static inline void nm##_contrib(int op, void *p, int r)                                        \
    {                                                                                              \
        nm##_t *a = p;                                                                             \
        for (int i = 0; i < ACC_K; i++) {                                                          \
            a[i].v = (T)(op == OP_REPLACE ? 100 * (r + 1) + i : (r * 3 + i) % 4);                  \
            a[i].i = 10 * i + (r * 7) % 5;                                                         \
        }                                                                                          \
    }                                                                                              \
    static inline void nm##_apply(int op, void *x, const void *y)                                  \
    {                                                                                              \
        nm##_t *a = x;                                                                             \
        const nm##_t *b = y;                                                                       \
        for (int i = 0; i < ACC_K; i++) {                                                          \
            if (op == OP_REPLACE)                                                                  \
                a[i] = b[i];                                                                       \
            else if (op == OP_MAXLOC ? b[i].v > a[i].v : b[i].v < a[i].v)                          \
                a[i] = b[i];                                                                       \
            else if (b[i].v == a[i].v && b[i].i < a[i].i)                                          \
                a[i].i = b[i].i;                                                                   \
        }                                                                                          \
    }                                                                                              \
    static inline void nm##_show(char *s, size_t len, const void *x)                               \
    {                                                                                              \
        const nm##_t *a = x;                                                                       \
        snprintf(s, len, "(%Lg, %d)", (long double)a->v, a->i);                                    \
    }

#define ACC_TYPE(mpi, nm, T)                                                                       \
    {                                                                                              \
#mpi, mpi, sizeof(T), nm##_init, nm##_contrib, nm##_apply, nm##_eq, nm##_show              \
    }

ACC_DEF_INT(i_int, int, 1)
ACC_DEF_INT(i_uint, unsigned, 0)
ACC_DEF_INT(i_short, short, 1)
ACC_DEF_INT(i_ushort, unsigned short, 0)
ACC_DEF_INT(i_long, long, 1)
ACC_DEF_INT(i_ulong, unsigned long, 0)
ACC_DEF_INT(i_llong, long long, 1)
ACC_DEF_INT(i_ullong, unsigned long long, 0)
ACC_DEF_INT(i_schar, signed char, 1)
ACC_DEF_INT(i_uchar, unsigned char, 0)
ACC_DEF_INT(i_i8, int8_t, 1)
ACC_DEF_INT(i_i16, int16_t, 1)
ACC_DEF_INT(i_i32, int32_t, 1)
ACC_DEF_INT(i_i64, int64_t, 1)
ACC_DEF_INT(i_u8, uint8_t, 0)
ACC_DEF_INT(i_u16, uint16_t, 0)
ACC_DEF_INT(i_u32, uint32_t, 0)
ACC_DEF_INT(i_u64, uint64_t, 0)
ACC_DEF_INT(i_aint, MPI_Aint, 1)
ACC_DEF_INT(i_offset, MPI_Offset, 1)
ACC_DEF_INT(i_count, MPI_Count, 1)
ACC_DEF_BOOL(i_bool)
ACC_DEF_INT(i_byte, unsigned char, 0)
ACC_DEF_FLT(f_float, float)
ACC_DEF_FLT(f_double, double)
ACC_DEF_FLT(f_ldouble, long double)
ACC_DEF_CPLX(c_float, float complex, float)
ACC_DEF_CPLX(c_double, double complex, double)
ACC_DEF_CPLX(c_ldouble, long double complex, long double)
ACC_DEF_PAIR(p_2int, int)
ACC_DEF_PAIR(p_float, float)
ACC_DEF_PAIR(p_double, double)
ACC_DEF_PAIR(p_long, long)
ACC_DEF_PAIR(p_short, short)
ACC_DEF_PAIR(p_ldouble, long double)

/* The predefined datatype called `name` ("MPI_INT"); bails out if unknown. */
static inline const acc_type *acc_type_named(const char *name)
{
    static const acc_type all[] = {
        ACC_TYPE(MPI_INT, i_int, int),
        ACC_TYPE(MPI_UNSIGNED, i_uint, unsigned),
        ACC_TYPE(MPI_SHORT, i_short, short),
        ACC_TYPE(MPI_UNSIGNED_SHORT, i_ushort, unsigned short),
        ACC_TYPE(MPI_LONG, i_long, long),
        ACC_TYPE(MPI_UNSIGNED_LONG, i_ulong, unsigned long),
        ACC_TYPE(MPI_LONG_LONG, i_llong, long long),
        ACC_TYPE(MPI_UNSIGNED_LONG_LONG, i_ullong, unsigned long long),
        ACC_TYPE(MPI_SIGNED_CHAR, i_schar, signed char),
        ACC_TYPE(MPI_UNSIGNED_CHAR, i_uchar, unsigned char),
        ACC_TYPE(MPI_INT8_T, i_i8, int8_t),
        ACC_TYPE(MPI_INT16_T, i_i16, int16_t),
        ACC_TYPE(MPI_INT32_T, i_i32, int32_t),
        ACC_TYPE(MPI_INT64_T, i_i64, int64_t),
        ACC_TYPE(MPI_UINT8_T, i_u8, uint8_t),
        ACC_TYPE(MPI_UINT16_T, i_u16, uint16_t),
        ACC_TYPE(MPI_UINT32_T, i_u32, uint32_t),
        ACC_TYPE(MPI_UINT64_T, i_u64, uint64_t),
        ACC_TYPE(MPI_AINT, i_aint, MPI_Aint),
        ACC_TYPE(MPI_OFFSET, i_offset, MPI_Offset),
        ACC_TYPE(MPI_COUNT, i_count, MPI_Count),
        ACC_TYPE(MPI_C_BOOL, i_bool, bool),
        ACC_TYPE(MPI_BYTE, i_byte, unsigned char),
        ACC_TYPE(MPI_FLOAT, f_float, float),
        ACC_TYPE(MPI_DOUBLE, f_double, double),
        ACC_TYPE(MPI_LONG_DOUBLE, f_ldouble, long double),
        ACC_TYPE(MPI_C_FLOAT_COMPLEX, c_float, float complex),
        ACC_TYPE(MPI_C_DOUBLE_COMPLEX, c_double, double complex),
        ACC_TYPE(MPI_C_LONG_DOUBLE_COMPLEX, c_ldouble, long double complex),
        ACC_TYPE(MPI_2INT, p_2int, p_2int_t),
        ACC_TYPE(MPI_FLOAT_INT, p_float, p_float_t),
        ACC_TYPE(MPI_DOUBLE_INT, p_double, p_double_t),
        ACC_TYPE(MPI_LONG_INT, p_long, p_long_t),
        ACC_TYPE(MPI_SHORT_INT, p_short, p_short_t),
        ACC_TYPE(MPI_LONG_DOUBLE_INT, p_ldouble, p_ldouble_t),
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i].name, name) == 0)
            return &all[i];
    tap_bail_out("acc.h: no datatype %s", name);
}

/* The C integer types (MPI-3.1 5.9.2's "C integer" class). */
static const char *const acc_signed_ints[] = {
    "MPI_INT",    "MPI_SHORT",   "MPI_LONG",    "MPI_LONG_LONG", "MPI_SIGNED_CHAR",
    "MPI_INT8_T", "MPI_INT16_T", "MPI_INT32_T", "MPI_INT64_T",   NULL};
static const char *const acc_unsigned_ints[] = {"MPI_UNSIGNED",      "MPI_UNSIGNED_SHORT",
                                                "MPI_UNSIGNED_LONG", "MPI_UNSIGNED_LONG_LONG",
                                                "MPI_UNSIGNED_CHAR", "MPI_UINT8_T",
                                                "MPI_UINT16_T",      "MPI_UINT32_T",
                                                "MPI_UINT64_T",      NULL};
static const char *const acc_multilang[] = {"MPI_AINT", "MPI_OFFSET", "MPI_COUNT", NULL};
static const char *const acc_floats[] = {"MPI_FLOAT", "MPI_DOUBLE", "MPI_LONG_DOUBLE", NULL};
static const char *const acc_complex[] = {"MPI_C_FLOAT_COMPLEX", "MPI_C_DOUBLE_COMPLEX",
                                          "MPI_C_LONG_DOUBLE_COMPLEX", NULL};
static const char *const acc_pairs[] = {"MPI_2INT",
                                        "MPI_FLOAT_INT",
                                        "MPI_DOUBLE_INT",
                                        "MPI_LONG_INT",
                                        "MPI_SHORT_INT",
                                        "MPI_LONG_DOUBLE_INT",
                                        NULL};

typedef struct {
    int op;
    const acc_type *t;
} acc_case;

/* Append (op, every type of the NULL-terminated list) to cases[*n]. */
static inline void acc_add(acc_case *cases, int *n, int op, const char *const *names)
{
    for (; *names; names++)
        cases[(*n)++] = (acc_case){op, acc_type_named(*names)};
}

/* Run all cases in one fence epoch on `nprocs` ranks; one TAP point per case. */
static inline void acc_run(const acc_case *cases, int ncases)
{
    size_t stride = ACC_K * ACC_SLOT;
    char *base, *contrib = malloc(ncases * stride);
    MPI_Win win;
    conf_win_allocate(ncases * stride, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int c = 0; c < ncases; c++) {
        cases[c].t->init(cases[c].op, base + c * stride);
        cases[c].t->contrib(cases[c].op, contrib + c * stride, conf_rank);
    }
    MPI_Win_fence(0, win);
    for (int c = 0; c < ncases; c++) {
        MPI_Aint off = (MPI_Aint)(c * stride);
        for (int k = 0; k < conf_size; k++) {
            int t = (conf_rank + k) % conf_size; /* start with different targets */
            MPI_Accumulate(contrib + c * stride, ACC_K, cases[c].t->type, t, off, ACC_K,
                           cases[c].t->type, acc_mpi_op(cases[c].op), win);
        }
    }
    MPI_Win_fence(0, win);

    char exp[ACC_K * ACC_SLOT], one[ACC_K * ACC_SLOT];
    for (int c = 0; c < ncases; c++) {
        const acc_type *t = cases[c].t;
        int op = cases[c].op, ok = 1;
        const char *got = base + c * stride;
        if (op == OP_REPLACE) {
            for (int i = 0; i < ACC_K && ok; i++) {
                int found = 0;
                for (int r = 0; r < conf_size && !found; r++) {
                    t->contrib(op, one, r);
                    found = t->eq(got + i * t->size, one + i * t->size);
                }
                if (!found) {
                    char g[96];
                    t->show(g, sizeof g, got + i * t->size);
                    tap_diag("element %d of rank %d's window holds %s, which no rank wrote", i,
                             conf_rank, g);
                    ok = 0;
                }
            }
        } else {
            t->init(op, exp);
            for (int r = 0; r < conf_size; r++) {
                t->contrib(op, one, r);
                t->apply(op, exp, one);
            }
            for (int i = 0; i < ACC_K && ok; i++) {
                if (!t->eq(got + i * t->size, exp + i * t->size)) {
                    char g[96], e[96];
                    t->show(g, sizeof g, got + i * t->size);
                    t->show(e, sizeof e, exp + i * t->size);
                    tap_diag("element %d of rank %d's window holds %s, expected %s", i, conf_rank,
                             g, e);
                    ok = 0;
                }
            }
        }
        tap_ok(ok, "MPI_Accumulate %s on %s from %d ranks into every rank", acc_op_name[op],
               t->name, conf_size);
    }
    conf_win_free(&win);
    free(contrib);
}

#endif
