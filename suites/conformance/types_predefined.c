/* types_predefined.c — MPI_Put and MPI_Get of every predefined C datatype (integers of all
 * widths, floating point including long double, C complex, _Bool, wchar_t, MPI_Aint/Offset/Count,
 * MPI_BYTE and the value-index pair types): 13 elements at element 3 of the right neighbour's
 * window (disp_unit 1, byte displacements). The target must hold the values, the elements around
 * them must be untouched, and MPI_Get must read back what was put. Values are compared as values,
 * so padding (long double, MPI_DOUBLE_INT) does not matter. */
#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

#include "conf.h"

#define CNT      13
#define OFF      3
#define SLOTS    20 /* per type: OFF untouched, CNT written, the rest untouched */
#define SENTINEL 0xA5

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t size;
    void (*fill)(void *, int n, int rank);
    int (*eq)(const void *, const void *);
} tcase;

#define SCALAR(nm, T, expr)                                                                        \
    static void fill_##nm(void *p, int n, int r)                                                   \
    {                                                                                              \
        T *a = p;                                                                                  \
        for (int i = 0; i < n; i++)                                                                \
            a[i] = (T)(expr);                                                                      \
    }                                                                                              \
    static int eq_##nm(const void *x, const void *y)                                               \
    {                                                                                              \
        return *(const T *)x == *(const T *)y;                                                     \
    }

#define PAIR(nm, T, expr)                                                                          \
    typedef struct {                                                                               \
        T v;                                                                                       \
        int i;                                                                                     \
    } nm##_t;                                                                                      \
    static void fill_##nm(void *p, int n, int r)                                                   \
    {                                                                                              \
        nm##_t *a = p;                                                                             \
        for (int i = 0; i < n; i++) {                                                              \
            a[i].v = (T)(expr);                                                                    \
            a[i].i = 1000 * r + i;                                                                 \
        }                                                                                          \
    }                                                                                              \
    static int eq_##nm(const void *x, const void *y)                                               \
    {                                                                                              \
        const nm##_t *a = x, *b = y;                                                               \
        return a->v == b->v && a->i == b->i;                                                       \
    }

/* Values depend on rank r and index i, and use the type's range (negative where signed). */
SCALAR(char, char, 'A' + (i + 3 * r) % 26)
SCALAR(schar, signed char, -100 + i + 7 * r)
SCALAR(uchar, unsigned char, 200 + i + 3 * r)
SCALAR(short, short, -30000 + 101 * i + 7 * r)
SCALAR(ushort, unsigned short, 60000 + 101 * i + 7 * r)
SCALAR(int, int, -2000000000 + 100003 * i + 7 * r)
SCALAR(uint, unsigned, 4000000000u + 100003u * i + 7u * r)
SCALAR(long, long, -(1L << 40) + 1000003L * i + 7 * r)
SCALAR(ulong, unsigned long, ~0UL - 1000003UL * i - 7 * r)
SCALAR(llong, long long, -(1LL << 60) + 1000003LL * i + 7 * r)
SCALAR(ullong, unsigned long long, ~0ULL - 1000003ULL * i - 7 * r)
SCALAR(float, float, -1.5f * i + 0.25f * r)
SCALAR(double, double, 1e300 / (i + 1) + r)
SCALAR(ldouble, long double, -1.25L * i + r + 1e-3000L * (i + 1))
SCALAR(wchar, wchar_t, L'a' + (i + r) % 26)
SCALAR(cbool, bool, (i + r) % 3 == 0)
SCALAR(i8, int8_t, -120 + i + 7 * r)
SCALAR(i16, int16_t, -32000 + 101 * i + 7 * r)
SCALAR(i32, int32_t, -2000000000 + 100003 * i + 7 * r)
SCALAR(i64, int64_t, INT64_MIN + 1000003LL * i + 7 * r)
SCALAR(u8, uint8_t, 250 - i - r)
SCALAR(u16, uint16_t, 65000 + 17 * i + r)
SCALAR(u32, uint32_t, 4000000000u + 17u * i + r)
SCALAR(u64, uint64_t, UINT64_MAX - 1000003ULL * i - r)
SCALAR(aint, MPI_Aint, (MPI_Aint)1 << 40 | (i * 8 + r))
SCALAR(offset, MPI_Offset, -((MPI_Offset)1 << 41) - i - r)
SCALAR(count, MPI_Count, ((MPI_Count)1 << 42) + i + r)
SCALAR(fcomplex, float complex, (i + 0.5f) + (r - 2.0f * i) * I)
SCALAR(dcomplex, double complex, (i * 1e10 + r) - (i + 0.125) * I)
SCALAR(lcomplex, long double complex, (i + 0.5L + r) + (1e-3000L * (i + 1)) * I)
SCALAR(byte, unsigned char, (i * 37 + r * 11) & 0xff)
PAIR(p2int, int, -i - 10 * r)
PAIR(pfloat, float, 0.5f * i - r)
PAIR(pdouble, double, 1e-300 * (i + 1) + r)
PAIR(plong, long, -(1L << 50) + i + r)
PAIR(pshort, short, -i * 100 - r)
PAIR(pldouble, long double, 1e4000L * (i + 1) + r)

#define CASE(mpi, nm, T)                                                                           \
    {                                                                                              \
#mpi, mpi, sizeof(T), fill_##nm, eq_##nm                                                   \
    }

static const tcase cases[] = {
    CASE(MPI_CHAR, char, char),
    CASE(MPI_SIGNED_CHAR, schar, signed char),
    CASE(MPI_UNSIGNED_CHAR, uchar, unsigned char),
    CASE(MPI_SHORT, short, short),
    CASE(MPI_UNSIGNED_SHORT, ushort, unsigned short),
    CASE(MPI_INT, int, int),
    CASE(MPI_UNSIGNED, uint, unsigned),
    CASE(MPI_LONG, long, long),
    CASE(MPI_UNSIGNED_LONG, ulong, unsigned long),
    CASE(MPI_LONG_LONG, llong, long long),
    CASE(MPI_UNSIGNED_LONG_LONG, ullong, unsigned long long),
    CASE(MPI_FLOAT, float, float),
    CASE(MPI_DOUBLE, double, double),
    CASE(MPI_LONG_DOUBLE, ldouble, long double),
    CASE(MPI_WCHAR, wchar, wchar_t),
    CASE(MPI_C_BOOL, cbool, bool),
    CASE(MPI_INT8_T, i8, int8_t),
    CASE(MPI_INT16_T, i16, int16_t),
    CASE(MPI_INT32_T, i32, int32_t),
    CASE(MPI_INT64_T, i64, int64_t),
    CASE(MPI_UINT8_T, u8, uint8_t),
    CASE(MPI_UINT16_T, u16, uint16_t),
    CASE(MPI_UINT32_T, u32, uint32_t),
    CASE(MPI_UINT64_T, u64, uint64_t),
    CASE(MPI_AINT, aint, MPI_Aint),
    CASE(MPI_OFFSET, offset, MPI_Offset),
    CASE(MPI_COUNT, count, MPI_Count),
    CASE(MPI_C_FLOAT_COMPLEX, fcomplex, float complex),
    CASE(MPI_C_DOUBLE_COMPLEX, dcomplex, double complex),
    CASE(MPI_C_LONG_DOUBLE_COMPLEX, lcomplex, long double complex),
    CASE(MPI_BYTE, byte, unsigned char),
    CASE(MPI_2INT, p2int, p2int_t),
    CASE(MPI_FLOAT_INT, pfloat, pfloat_t),
    CASE(MPI_DOUBLE_INT, pdouble, pdouble_t),
    CASE(MPI_LONG_INT, plong, plong_t),
    CASE(MPI_SHORT_INT, pshort, pshort_t),
    CASE(MPI_LONG_DOUBLE_INT, pldouble, pldouble_t),
};
#define NCASES  ((int)(sizeof cases / sizeof cases[0]))
#define MAXSIZE 32

static void hex(char *out, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n && i < MAXSIZE; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* First element (of n) where got and exp differ, or -1. */
static int first_diff(const tcase *c, const char *got, const char *exp, int n)
{
    for (int i = 0; i < n; i++)
        if (!c->eq(got + i * c->size, exp + i * c->size))
            return i;
    return -1;
}

static int report(const tcase *c, const char *got, const char *exp, int i, const char *where)
{
    char g[2 * MAXSIZE + 1], e[2 * MAXSIZE + 1];
    hex(g, got + i * c->size, c->size);
    hex(e, exp + i * c->size, c->size);
    tap_diag("%s element %d of %s: bytes %s, expected %s", c->name, i, where, g, e);
    return 0;
}

static void run_case(const tcase *c, char *base, MPI_Win win)
{
    char out[CNT * MAXSIZE], back[CNT * MAXSIZE], exp[CNT * MAXSIZE], where[64];
    int ok = 1;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(c->type, &lb, &extent);
    if (extent != (MPI_Aint)c->size || c->size > MAXSIZE) {
        tap_diag("%s: extent %ld, sizeof the C type %zu", c->name, (long)extent, c->size);
        ok = 0;
    }
    memset(base, SENTINEL, SLOTS * MAXSIZE);
    c->fill(out, CNT, conf_rank);
    MPI_Win_fence(0, win);
    if (ok)
        MPI_Put(out, CNT, c->type, conf_right(), OFF * c->size, CNT, c->type, win);
    MPI_Win_fence(0, win);
    if (ok)
        MPI_Get(back, CNT, c->type, conf_right(), OFF * c->size, CNT, c->type, win);
    MPI_Win_fence(0, win);
    if (!ok) {
        tap_ok(0, "%s: MPI_Put + MPI_Get round trip (not run)", c->name);
        return;
    }
    c->fill(exp, CNT, conf_left());
    int d = first_diff(c, base + OFF * c->size, exp, CNT);
    if (d >= 0) {
        snprintf(where, sizeof where, "rank %d's window after the put", conf_rank);
        ok = report(c, base + OFF * c->size, exp, d, where);
    }
    d = first_diff(c, back, out, CNT);
    if (d >= 0) {
        snprintf(where, sizeof where, "what was read back from rank %d", conf_right());
        ok = report(c, back, out, d, where);
    }
    for (size_t b = 0; b < SLOTS * c->size; b++) {
        if (b == OFF * c->size)
            b += CNT * c->size;
        if ((unsigned char)base[b] != SENTINEL) {
            tap_diag("%s: byte %zu of rank %d's window (outside the %d target elements) is 0x%02x, "
                     "was 0x%02x",
                     c->name, b, conf_rank, CNT, (unsigned char)base[b], SENTINEL);
            ok = 0;
            break;
        }
    }
    tap_ok(ok, "%s: %d elements put at element %d and read back; neighbours untouched", c->name,
           CNT, OFF);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    tap_plan(NCASES);
    char *base;
    MPI_Win win;
    conf_win_allocate(SLOTS * MAXSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < NCASES; i++)
        run_case(&cases[i], base, win);
    conf_win_free(&win);
    return conf_done();
}
