/* dtype.c — datatype flattening (see dtype.h). Predefined types live in a static table built once
 * and found by a hash of the handle; derived types are flattened recursively from their
 * envelope/contents into runs of predefined elements, then into merged byte segments, and cached
 * on the type through an attribute whose delete callback frees them. The walk pairs two segment
 * lists and yields the largest pieces contiguous on both sides without allocating. */
#include "dtype.h"
#include "layout.h"
#include "nbr.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Aint) == sizeof(intptr_t), "MPI_Aint is address-sized");
#define AINT_MAX ((MPI_Aint)INTPTR_MAX)
#define AINT_MIN ((MPI_Aint)INTPTR_MIN)

/* ---- predefined types ------------------------------------------------------------------------ */

/* Representations resolved from the MPI's own size at start-up: C integer widths and Fortran kinds
 * are what the MPI library was built with, not what this compiler guesses. */
enum {
    RES_SINT = NBR_R_COUNT, /* signed integer of the type's size */
    RES_UINT,
    RES_FREAL,  /* Fortran REAL*: float or double by size */
    RES_FCPLX,  /* Fortran COMPLEX*: float or double complex by size */
    RES_F2INT,  /* MPI_2INTEGER: a pair of Fortran INTEGERs */
    RES_F2REAL, /* MPI_2REAL, MPI_2DOUBLE_PRECISION */
};

/* Every named type of MPI-3.1 both headers define: handle, reduction class, representation.
 * Order matters only for aliases (MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX): the first name wins. */
#define NBR_PREDEF(X)                                                                              \
    X(MPI_CHAR, CHAR, CHAR_MIN < 0 ? RES_SINT : RES_UINT)                                          \
    X(MPI_SIGNED_CHAR, CINT, RES_SINT)                                                             \
    X(MPI_UNSIGNED_CHAR, CINT, RES_UINT)                                                           \
    X(MPI_BYTE, BYTE, NBR_R_U8)                                                                    \
    X(MPI_WCHAR, NONE, NBR_R_NONE)                                                                 \
    X(MPI_SHORT, CINT, RES_SINT)                                                                   \
    X(MPI_UNSIGNED_SHORT, CINT, RES_UINT)                                                          \
    X(MPI_INT, CINT, RES_SINT)                                                                     \
    X(MPI_UNSIGNED, CINT, RES_UINT)                                                                \
    X(MPI_LONG, CINT, RES_SINT)                                                                    \
    X(MPI_UNSIGNED_LONG, CINT, RES_UINT)                                                           \
    X(MPI_LONG_LONG_INT, CINT, RES_SINT)                                                           \
    X(MPI_LONG_LONG, CINT, RES_SINT)                                                               \
    X(MPI_UNSIGNED_LONG_LONG, CINT, RES_UINT)                                                      \
    X(MPI_INT8_T, CINT, NBR_R_I8)                                                                  \
    X(MPI_INT16_T, CINT, NBR_R_I16)                                                                \
    X(MPI_INT32_T, CINT, NBR_R_I32)                                                                \
    X(MPI_INT64_T, CINT, NBR_R_I64)                                                                \
    X(MPI_UINT8_T, CINT, NBR_R_U8)                                                                 \
    X(MPI_UINT16_T, CINT, NBR_R_U16)                                                               \
    X(MPI_UINT32_T, CINT, NBR_R_U32)                                                               \
    X(MPI_UINT64_T, CINT, NBR_R_U64)                                                               \
    X(MPI_FLOAT, FLOAT, NBR_R_F32)                                                                 \
    X(MPI_DOUBLE, FLOAT, NBR_R_F64)                                                                \
    X(MPI_LONG_DOUBLE, FLOAT, NBR_R_FLD)                                                           \
    X(MPI_C_BOOL, LOGICAL, RES_UINT)                                                               \
    X(MPI_C_COMPLEX, COMPLEX, NBR_R_C32)                                                           \
    X(MPI_C_FLOAT_COMPLEX, COMPLEX, NBR_R_C32)                                                     \
    X(MPI_C_DOUBLE_COMPLEX, COMPLEX, NBR_R_C64)                                                    \
    X(MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX, NBR_R_CLD)                                               \
    X(MPI_AINT, MULTI, RES_SINT)                                                                   \
    X(MPI_OFFSET, MULTI, RES_SINT)                                                                 \
    X(MPI_COUNT, MULTI, RES_SINT)                                                                  \
    X(MPI_PACKED, NONE, NBR_R_NONE)                                                                \
    X(MPI_FLOAT_INT, PAIR, NBR_R_PFI)                                                              \
    X(MPI_DOUBLE_INT, PAIR, NBR_R_PDI)                                                             \
    X(MPI_LONG_INT, PAIR, NBR_R_PLI)                                                               \
    X(MPI_2INT, PAIR, NBR_R_P2I)                                                                   \
    X(MPI_SHORT_INT, PAIR, NBR_R_PSI)                                                              \
    X(MPI_LONG_DOUBLE_INT, PAIR, NBR_R_PLDI)                                                       \
    X(MPI_CHARACTER, NONE, NBR_R_NONE)                                                             \
    X(MPI_INTEGER, FINT, RES_SINT)                                                                 \
    X(MPI_REAL, FLOAT, RES_FREAL)                                                                  \
    X(MPI_DOUBLE_PRECISION, FLOAT, RES_FREAL)                                                      \
    X(MPI_LOGICAL, LOGICAL, RES_SINT)                                                              \
    X(MPI_COMPLEX, COMPLEX, RES_FCPLX)                                                             \
    X(MPI_DOUBLE_COMPLEX, COMPLEX, RES_FCPLX)                                                      \
    X(MPI_INTEGER1, FINT, RES_SINT)                                                                \
    X(MPI_INTEGER2, FINT, RES_SINT)                                                                \
    X(MPI_INTEGER4, FINT, RES_SINT)                                                                \
    X(MPI_INTEGER8, FINT, RES_SINT)                                                                \
    X(MPI_REAL4, FLOAT, RES_FREAL)                                                                 \
    X(MPI_REAL8, FLOAT, RES_FREAL)                                                                 \
    X(MPI_REAL16, FLOAT, NBR_R_NONE) /* quad or long double: the MPI doesn't say which */          \
    X(MPI_COMPLEX8, COMPLEX, RES_FCPLX)                                                            \
    X(MPI_COMPLEX16, COMPLEX, RES_FCPLX)                                                           \
    X(MPI_COMPLEX32, COMPLEX, NBR_R_NONE)                                                          \
    X(MPI_2REAL, PAIR, RES_F2REAL)                                                                 \
    X(MPI_2DOUBLE_PRECISION, PAIR, RES_F2REAL)                                                     \
    X(MPI_2INTEGER, PAIR, RES_F2INT)                                                               \
    X(MPI_CXX_BOOL, LOGICAL, RES_UINT)                                                             \
    X(MPI_CXX_FLOAT_COMPLEX, COMPLEX, NBR_R_C32)                                                   \
    X(MPI_CXX_DOUBLE_COMPLEX, COMPLEX, NBR_R_C64)                                                  \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, COMPLEX, NBR_R_CLD)

#define NBR_PREDEF_MAX 96
#define NBR_HASH       256 /* power of two, well above NBR_PREDEF_MAX: short probes */

typedef struct {
    nbr_dtype_t dt;
    nbr_seg_t seg[2]; /* a pair with inner padding (MPI_SHORT_INT) has two */
    nbr_seg_t elem;   /* {0, extent}: padded pairs' element run */
    const char *name;
    unsigned char cls, repr, ok;
    char why[96]; /* !ok: why the layout is unknown */
} predef_t;

static predef_t predef[NBR_PREDEF_MAX];
static int npredef;
static struct {
    MPI_Datatype key;
    int idx; /* into predef[], -1: empty */
} slot[NBR_HASH];

static int keyval = MPI_KEYVAL_INVALID;
static int init_rc = MPI_SUCCESS;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_long ncached;
static _Thread_local char why[192];

static void set_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_why(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
}

const char *nbr_dtype_error(void)
{
    return why;
}

static unsigned hash(MPI_Datatype t)
{
    return (unsigned)nbr_handle_hash(&t, sizeof t) & (NBR_HASH - 1);
}

static int lookup(MPI_Datatype t)
{
    for (unsigned h = hash(t);; h = (h + 1) & (NBR_HASH - 1)) {
        if (slot[h].idx < 0)
            return -1;
        if (slot[h].key == t)
            return slot[h].idx;
    }
}

#define PAIR_SIZES(name, V, I)                                                                     \
    case NBR_R_##name:                                                                             \
        *vsz = sizeof(V), *ioff = offsetof(nbr_pair_##name##_t, i), *isz = sizeof(I);              \
        return sizeof(nbr_pair_##name##_t);
/* A pair's C layout: value at 0, index at *ioff; returns the struct size (0: not a pair). */
static size_t pair_layout(int repr, size_t *vsz, size_t *ioff, size_t *isz)
{
    switch (repr) {
        NBR_REPR_PAIRS(PAIR_SIZES)
    default:
        return 0;
    }
}
#undef PAIR_SIZES

#define REPR_SIZE(name, T, ...)                                                                    \
    case NBR_R_##name:                                                                             \
        return sizeof(T);
static size_t repr_size(int repr)
{
    size_t v, o, i;
    switch (repr) {
        NBR_REPR_INTS(REPR_SIZE)
        NBR_REPR_FLOATS(REPR_SIZE)
        NBR_REPR_COMPLEX(REPR_SIZE)
    default:
        return pair_layout(repr, &v, &o, &i) ? v + i : 0;
    }
}
#undef REPR_SIZE

static int resolve(int repr, MPI_Aint size)
{
    static const int sint[] = {[1] = NBR_R_I8, [2] = NBR_R_I16, [4] = NBR_R_I32, [8] = NBR_R_I64};
    static const int uint[] = {[1] = NBR_R_U8, [2] = NBR_R_U16, [4] = NBR_R_U32, [8] = NBR_R_U64};
    switch (repr) {
    case RES_SINT:
        return size > 0 && size <= 8 ? sint[size] : NBR_R_NONE;
    case RES_UINT:
        return size > 0 && size <= 8 ? uint[size] : NBR_R_NONE;
    case RES_FREAL:
        return size == sizeof(float) ? NBR_R_F32 : size == sizeof(double) ? NBR_R_F64 : NBR_R_NONE;
    case RES_FCPLX:
        return size == 2 * sizeof(float)    ? NBR_R_C32
               : size == 2 * sizeof(double) ? NBR_R_C64
                                            : NBR_R_NONE;
    case RES_F2INT:
        return size == 2 * sizeof(int) ? NBR_R_P2I : NBR_R_NONE;
    case RES_F2REAL:
        return size == 2 * sizeof(float)    ? NBR_R_P2F
               : size == 2 * sizeof(double) ? NBR_R_P2D
                                            : NBR_R_NONE;
    default: /* a C type: trust it only if the MPI agrees on the size */
        return repr_size(repr) == (size_t)size ? repr : NBR_R_NONE;
    }
}

static void add(MPI_Datatype t, const char *name, int cls, int repr)
{
    if (t == MPI_DATATYPE_NULL) /* an optional type this MPI build lacks */
        return;
    unsigned h = hash(t);
    while (slot[h].idx >= 0) {
        if (slot[h].key == t)
            return; /* alias of an earlier name */
        h = (h + 1) & (NBR_HASH - 1);
    }
    if (npredef == NBR_PREDEF_MAX)
        return;
    predef_t *p = &predef[npredef];
    MPI_Count size;
    MPI_Aint lb, extent;
    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &extent))
        return;
    p->name = name;
    p->cls = (unsigned char)cls;
    p->repr = (unsigned char)resolve(repr, (MPI_Aint)size);
    p->ok = 1;
    nbr_dtype_t *d = &p->dt;
    d->type = t;
    d->size = (MPI_Aint)size;
    d->lb = lb;
    d->extent = extent;
    d->predefined = 1;
    d->seg = d->elem = p->seg;
    size_t vsz, ioff, isz, ssz = pair_layout(p->repr, &vsz, &ioff, &isz);
    if (size == 0) { /* MPICH's MPI_LB/MPI_UB: markers without data */
        d->basic = MPI_DATATYPE_NULL;
    } else if (ssz) {
        /* MPI exposes pair types as named (no contents to read): their layout is the C struct's,
         * which must agree with what the MPI reports. */
        if (lb != 0 || (size_t)extent != ssz || (size_t)size != vsz + isz) {
            p->ok = 0;
            snprintf(p->why, sizeof p->why, "%s: size %ld/extent %ld differ from the C struct's",
                     name, (long)size, (long)extent);
        }
        p->seg[0] = (nbr_seg_t){0, (MPI_Aint)vsz};
        p->seg[1] = (nbr_seg_t){(MPI_Aint)ioff, (MPI_Aint)isz};
        d->nseg = 2;
        if (ioff == vsz) /* no inner padding: one segment */
            p->seg[0].len += (MPI_Aint)isz, d->nseg = 1;
    } else if (lb != 0 || extent != (MPI_Aint)size) {
        p->ok = 0;
        snprintf(p->why, sizeof p->why, "%s: unknown layout (lb %ld, extent %ld, size %ld)", name,
                 (long)lb, (long)extent, (long)size);
    } else {
        p->seg[0] = (nbr_seg_t){0, (MPI_Aint)size};
        d->nseg = 1;
    }
    if (size > 0) {
        d->basic = t;
        d->basic_size = d->size;
        d->basic_extent = d->extent;
        d->nelem = d->nseg;
        if (d->nseg != 1 || d->seg[0].len != extent) { /* padded: one element per run */
            p->elem = (nbr_seg_t){0, extent};
            d->elem = &p->elem;
            d->nelem = 1;
        }
    }
    d->contig = d->nseg == 1 && d->seg[0].off == 0 && d->extent == d->size;
    slot[h].key = t;
    slot[h].idx = npredef++;
}

static int del_fn(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)extra;
    nbr_runs_release(val);
    free(val);
    atomic_fetch_sub(&ncached, 1);
    return MPI_SUCCESS;
}

static void init(void)
{
    for (int i = 0; i < NBR_HASH; i++)
        slot[i].idx = -1;
#define X(h, cls, repr) add(h, #h, NBR_CLS_##cls, repr);
    NBR_PREDEF(X)
#undef X
    /* Optional types: only where the header has them. */
#ifdef MPI_INTEGER16
    add(MPI_INTEGER16, "MPI_INTEGER16", NBR_CLS_FINT, NBR_R_NONE);
#endif
#ifdef MPI_REAL2
    add(MPI_REAL2, "MPI_REAL2", NBR_CLS_FLOAT, NBR_R_NONE);
#endif
#ifdef MPI_COMPLEX4
    add(MPI_COMPLEX4, "MPI_COMPLEX4", NBR_CLS_COMPLEX, NBR_R_NONE);
#endif
#ifdef MPI_CXX_COMPLEX
    add(MPI_CXX_COMPLEX, "MPI_CXX_COMPLEX", NBR_CLS_COMPLEX, NBR_R_C32);
#endif
    /* Not in MPI-3.1's reduction groups: data movement only. */
#ifdef MPI_2COMPLEX
    add(MPI_2COMPLEX, "MPI_2COMPLEX", NBR_CLS_NONE, NBR_R_NONE);
#endif
#ifdef MPI_2DOUBLE_COMPLEX
    add(MPI_2DOUBLE_COMPLEX, "MPI_2DOUBLE_COMPLEX", NBR_CLS_NONE, NBR_R_NONE);
#endif
#ifdef MPI_LOGICAL1
    add(MPI_LOGICAL1, "MPI_LOGICAL1", NBR_CLS_NONE, NBR_R_NONE);
    add(MPI_LOGICAL2, "MPI_LOGICAL2", NBR_CLS_NONE, NBR_R_NONE);
    add(MPI_LOGICAL4, "MPI_LOGICAL4", NBR_CLS_NONE, NBR_R_NONE);
    add(MPI_LOGICAL8, "MPI_LOGICAL8", NBR_CLS_NONE, NBR_R_NONE);
#endif
#ifdef MPICH /* removed in MPI-3.0 but still in MPICH: old struct types may contain them */
    add(MPI_LB, "MPI_LB", NBR_CLS_NONE, NBR_R_NONE);
    add(MPI_UB, "MPI_UB", NBR_CLS_NONE, NBR_R_NONE);
#endif
    /* A dup'd type does not inherit the cache (null copy function): it gets its own flattening on
     * first use, so every cached block has exactly one owner and one delete. */
    init_rc = PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, del_fn, &keyval, NULL);
}

static inline int ensure_init(void)
{
    pthread_once(&init_once, init);
    return init_rc;
}

int nbr_dtype_classify(MPI_Datatype type, int *cls, int *repr)
{
    ensure_init();
    int i = lookup(type);
    *cls = i < 0 ? NBR_CLS_NONE : predef[i].cls;
    *repr = i < 0 ? NBR_R_NONE : predef[i].repr;
    return i >= 0;
}

const char *nbr_dtype_name(MPI_Datatype type)
{
    if (type == MPI_DATATYPE_NULL)
        return "MPI_DATATYPE_NULL";
    ensure_init();
    int i = lookup(type);
    return i < 0 ? "derived" : predef[i].name;
}

int nbr_dtype_index(MPI_Datatype type)
{
    ensure_init();
    return lookup(type);
}

MPI_Datatype nbr_dtype_at(int index)
{
    ensure_init();
    return index >= 0 && index < npredef ? predef[index].dt.type : MPI_DATATYPE_NULL;
}

long nbr_dtype_cached(void)
{
    return atomic_load(&ncached);
}

/* ---- flattening ------------------------------------------------------------------------------ */

/* n elements of predefined type predef[t], consecutive from off (stride: its extent). */
typedef struct {
    MPI_Aint off, n;
    int t;
} run_t;

enum { B_NONE = -1, B_MIXED = -2 };

typedef struct {
    run_t *v;
    size_t n, cap;
    int sbasic; /* predefined types met in the structure, counts of zero included */
} runs_t;

static void meet(int *b, int t)
{
    if (*b == B_NONE)
        *b = t;
    else if (*b != t)
        *b = B_MIXED;
}

static int push(runs_t *r, MPI_Aint off, MPI_Aint n, int t)
{
    if (n <= 0)
        return MPI_SUCCESS;
    if (r->n) {
        run_t *l = &r->v[r->n - 1];
        if (l->t == t && l->off + l->n * predef[t].dt.extent == off) {
            l->n += n;
            return MPI_SUCCESS;
        }
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        run_t *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            set_why("out of memory flattening a datatype");
            return MPI_ERR_NO_MEM;
        }
        r->v = v, r->cap = cap;
    }
    r->v[r->n++] = (run_t){off, n, t};
    return MPI_SUCCESS;
}

/* Append n copies of a child (runs c, extent cext) from byte displacement d. */
static int rep(runs_t *out, const runs_t *c, MPI_Aint cext, MPI_Aint d, MPI_Aint n)
{
    if (n <= 0 || c->n == 0)
        return MPI_SUCCESS;
    /* A child that is one dense run tiles into one longer run (vector of ints: one per block). */
    if (c->n == 1 && c->v[0].n * predef[c->v[0].t].dt.extent == cext)
        return push(out, d + c->v[0].off, n * c->v[0].n, c->v[0].t);
    for (MPI_Aint k = 0; k < n; k++)
        for (size_t i = 0; i < c->n; i++) {
            int rc = push(out, d + k * cext + c->v[i].off, c->v[i].n, c->v[i].t);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

typedef struct {
    MPI_Aint start, len;
} range_t;

/* Subarray and darray: the product of per-dimension index ranges, outermost dimension first
 * (perm), the innermost one contiguous in the child's extent. */
typedef struct {
    runs_t *out;
    const runs_t *c;
    MPI_Aint cext;
    int ndims;
    const int *perm;
    range_t *const *rg; /* rg[d]: nrg[d] ranges of dimension d */
    const int *nrg;
    const MPI_Aint *stride;
} grid_t;

static int grid(const grid_t *g, int level, MPI_Aint base)
{
    int d = g->perm[level];
    for (int r = 0; r < g->nrg[d]; r++) {
        const range_t *x = &g->rg[d][r];
        int rc = MPI_SUCCESS;
        if (level == g->ndims - 1)
            rc = rep(g->out, g->c, g->cext, base + x->start * g->stride[d], x->len);
        else
            for (MPI_Aint i = x->start; i < x->start + x->len && rc == MPI_SUCCESS; i++)
                rc = grid(g, level + 1, base + i * g->stride[d]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ints: subarray [ndims, sizes, subsizes, starts, order]; darray [size, rank, ndims, gsizes,
 * distribs, dargs, psizes, order]. */
static int grid_type(runs_t *out, const runs_t *c, MPI_Aint cext, int darray, const int *ints)
{
    int ndims = darray ? ints[2] : ints[0];
    const int *sizes = darray ? ints + 3 : ints + 1;
    int order = darray ? ints[3 + 4 * ndims] : ints[1 + 3 * ndims];
    int rc = MPI_ERR_NO_MEM;
    int *perm = malloc(ndims * sizeof *perm), *nrg = calloc(ndims, sizeof *nrg);
    MPI_Aint *stride = malloc(ndims * sizeof *stride);
    range_t **rg = calloc(ndims, sizeof *rg);
    if (!perm || !nrg || !stride || !rg)
        goto out;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? k : ndims - 1 - k;
        perm[k] = d; /* outermost first: C's first dimension, Fortran's last */
    }
    for (int k = ndims - 1; k >= 0; k--) {
        int d = perm[k];
        stride[d] = k == ndims - 1 ? cext : stride[perm[k + 1]] * sizes[perm[k + 1]];
    }
    int rank = darray ? ints[1] : 0;
    for (int d = ndims - 1; d >= 0; d--) {
        if (!darray) {
            if (!(rg[d] = malloc(sizeof **rg)))
                goto out;
            rg[d][0] = (range_t){ints[1 + 2 * ndims + d], ints[1 + ndims + d]};
            nrg[d] = 1;
            continue;
        }
        /* MPI-3.1 §4.1.4: processes form a row-major grid whatever the array order. */
        int gsize = sizes[d], distrib = ints[3 + ndims + d], darg = ints[3 + 2 * ndims + d];
        int psize = ints[3 + 3 * ndims + d], coord = rank % psize;
        rank /= psize;
        if (distrib == MPI_DISTRIBUTE_CYCLIC) {
            MPI_Aint k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg, step = k * psize;
            int n = (int)((gsize + step - 1) / step);
            if (!(rg[d] = malloc((n ? n : 1) * sizeof **rg)))
                goto out;
            for (MPI_Aint s = coord * k; s < gsize; s += step)
                rg[d][nrg[d]++] = (range_t){s, s + k <= gsize ? k : gsize - s};
        } else {
            MPI_Aint b = distrib == MPI_DISTRIBUTE_NONE     ? gsize
                         : darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize
                                                            : darg;
            MPI_Aint s = distrib == MPI_DISTRIBUTE_NONE ? 0 : coord * b;
            if (!(rg[d] = malloc(sizeof **rg)))
                goto out;
            rg[d][0] = (range_t){s, s >= gsize ? 0 : s + b <= gsize ? b : gsize - s};
            nrg[d] = 1;
        }
    }
    grid_t g = {out, c, cext, ndims, perm, rg, nrg, stride};
    rc = ndims > 0 ? grid(&g, 0, 0) : MPI_SUCCESS;
out:
    if (rc == MPI_ERR_NO_MEM)
        set_why("out of memory flattening a datatype");
    for (int d = 0; rg && d < ndims; d++)
        free(rg[d]);
    free(rg), free(stride), free(nrg), free(perm);
    return rc;
}

static int flatten(MPI_Datatype type, runs_t *out, int depth);

/* One child's runs and extent, with its structural basic folded into the parent's. */
static int child(MPI_Datatype t, runs_t *c, MPI_Aint *ext, runs_t *parent, int depth)
{
    MPI_Aint lb;
    *c = (runs_t){.sbasic = B_NONE};
    int rc = PMPI_Type_get_extent(t, &lb, ext);
    if (rc == MPI_SUCCESS)
        rc = flatten(t, c, depth + 1);
    if (c->sbasic != B_NONE)
        meet(&parent->sbasic, c->sbasic);
    return rc;
}

static int flatten_derived(int comb, const int *in, const MPI_Aint *ad, const MPI_Datatype *ty,
                           runs_t *out, int depth)
{
    runs_t c = {0};
    MPI_Aint ext;
    int rc = MPI_SUCCESS;
    if (comb != MPI_COMBINER_STRUCT && (rc = child(ty[0], &c, &ext, out, depth)) != MPI_SUCCESS)
        goto out;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* same type map; lb/extent only matter to the parent */
        rc = rep(out, &c, ext, 0, 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = rep(out, &c, ext, 0, in[0]);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? in[2] * ext : ad[0];
        for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++)
            rc = rep(out, &c, ext, i * stride, in[1]);
        break;
    }
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++)
            rc = rep(out, &c, ext, in[1 + in[0] + i] * ext, in[1 + i]);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++)
            rc = rep(out, &c, ext, ad[i], in[1 + i]);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++)
            rc = rep(out, &c, ext, in[2 + i] * ext, in[1]);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++)
            rc = rep(out, &c, ext, ad[i], in[1]);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++) {
            if ((rc = child(ty[i], &c, &ext, out, depth)) == MPI_SUCCESS)
                rc = rep(out, &c, ext, ad[i], in[1 + i]);
            free(c.v);
            c.v = NULL;
        }
        break;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        rc = grid_type(out, &c, ext, comb == MPI_COMBINER_DARRAY, in);
        break;
    }
out:
    free(c.v);
    return rc;
}

static int flatten(MPI_Datatype type, runs_t *out, int depth)
{
    int ni, na, nd, comb, rc;
    if (depth > 64) {
        set_why("datatype nested deeper than 64 constructors");
        return MPI_ERR_TYPE;
    }
    int i = lookup(type);
    if (i >= 0) { /* predefined leaf (also covers the fast path's types met inside others) */
        if (!predef[i].ok) {
            set_why("%s", predef[i].why);
            return MPI_ERR_TYPE;
        }
        if (predef[i].dt.size == 0)
            return MPI_SUCCESS;
        meet(&out->sbasic, i);
        return push(out, 0, 1, i);
    }
    if ((rc = PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb)) != MPI_SUCCESS) {
        set_why("not a valid datatype");
        return MPI_ERR_TYPE;
    }
    switch (comb) {
    case MPI_COMBINER_NAMED:
        set_why("a predefined datatype this library does not know");
        return MPI_ERR_TYPE;
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        set_why("MPI_Type_create_f90_* types are not supported (use MPI_REAL8 and the like)");
        return MPI_ERR_TYPE;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        break;
    default: /* the *_INTEGER combiners of Fortran's removed MPI-1 constructors */
        set_why("datatype combiner %d is not supported", comb);
        return MPI_ERR_TYPE;
    }
    int *in = malloc((ni ? ni : 1) * sizeof *in);
    MPI_Aint *ad = malloc((na ? na : 1) * sizeof *ad);
    MPI_Datatype *ty = malloc((nd ? nd : 1) * sizeof *ty);
    if (!in || !ad || !ty) {
        set_why("out of memory flattening a datatype");
        rc = MPI_ERR_NO_MEM;
    } else if ((rc = PMPI_Type_get_contents(type, ni, na, nd, in, ad, ty)) != MPI_SUCCESS) {
        set_why("MPI_Type_get_contents failed");
        nd = 0;
    } else {
        rc = flatten_derived(comb, in, ad, ty, out, depth);
    }
    /* get_contents hands out new references to derived children (predefined ones are not ours
     * to free). */
    for (int k = 0; ty && k < nd; k++) {
        int a, b, c, cc;
        if (PMPI_Type_get_envelope(ty[k], &a, &b, &c, &cc) == MPI_SUCCESS &&
            cc != MPI_COMBINER_NAMED)
            PMPI_Type_free(&ty[k]);
    }
    free(in), free(ad), free(ty);
    return rc;
}

typedef struct {
    nbr_seg_t *v;
    size_t n, cap;
} segs_t;

static int seg_push(segs_t *s, MPI_Aint off, MPI_Aint len)
{
    if (s->n && s->v[s->n - 1].off + s->v[s->n - 1].len == off) {
        s->v[s->n - 1].len += len;
        return MPI_SUCCESS;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        nbr_seg_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            set_why("out of memory flattening a datatype");
            return MPI_ERR_NO_MEM;
        }
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = (nbr_seg_t){off, len};
    return MPI_SUCCESS;
}

static int build(MPI_Datatype type, nbr_dtype_t **out)
{
    runs_t r = {.sbasic = B_NONE};
    segs_t seg = {0}, elem = {0};
    nbr_dtype_t *d = NULL;
    MPI_Count size;
    MPI_Aint lb, extent;
    int rc = flatten(type, &r, 0);
    if (rc == MPI_SUCCESS && (PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
                              PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS)) {
        set_why("not a valid datatype");
        rc = MPI_ERR_TYPE;
    }
    if (rc != MPI_SUCCESS)
        goto out;
    int b = B_NONE;
    for (size_t i = 0; i < r.n; i++)
        meet(&b, r.v[i].t);
    if (r.n == 0) /* no data: the structure still says what it is built from */
        b = r.sbasic;
    const nbr_dtype_t *bt = b >= 0 ? &predef[b].dt : NULL;
    int padded = bt && bt->elem != bt->seg;
    MPI_Aint sum = 0;
    for (size_t i = 0; i < r.n && rc == MPI_SUCCESS; i++) {
        const nbr_dtype_t *p = &predef[r.v[i].t].dt;
        if (p->nseg == 1 && p->seg[0].len == p->extent) {
            rc = seg_push(&seg, r.v[i].off + p->seg[0].off, r.v[i].n * p->extent);
        } else {
            for (MPI_Aint k = 0; k < r.v[i].n && rc == MPI_SUCCESS; k++)
                for (int s = 0; s < p->nseg && rc == MPI_SUCCESS; s++)
                    rc = seg_push(&seg, r.v[i].off + k * p->extent + p->seg[s].off, p->seg[s].len);
        }
        sum += r.v[i].n * p->size;
        if (padded && rc == MPI_SUCCESS)
            rc = seg_push(&elem, r.v[i].off, r.v[i].n * p->extent);
    }
    if (rc != MPI_SUCCESS)
        goto out;
    if (sum != (MPI_Aint)size) { /* a combiner read wrongly: refuse rather than corrupt memory */
        set_why("internal: flattened %ld bytes, MPI says %ld", (long)sum, (long)size);
        rc = MPI_ERR_TYPE;
        goto out;
    }
    size_t nbytes = sizeof *d + (seg.n + elem.n) * sizeof(nbr_seg_t);
    if (!(d = malloc(nbytes))) {
        set_why("out of memory flattening a datatype");
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    nbr_seg_t *sv = (nbr_seg_t *)(d + 1);
    if (seg.n)
        memcpy(sv, seg.v, seg.n * sizeof *sv);
    if (elem.n)
        memcpy(sv + seg.n, elem.v, elem.n * sizeof *sv);
    *d = (nbr_dtype_t){
        .type = type,
        .size = (MPI_Aint)size,
        .lb = lb,
        .extent = extent,
        .nseg = (int)seg.n,
        .seg = sv,
        .basic = bt ? bt->type : MPI_DATATYPE_NULL,
        .basic_size = bt ? bt->size : 0,
        .basic_extent = bt ? bt->extent : 0,
        .nelem = !bt      ? 0
                 : padded ? (int)elem.n
                          : (int)seg.n,
        .elem = !bt      ? NULL
                : padded ? sv + seg.n
                         : sv,
    };
    d->contig = d->nseg == 1 && sv[0].off == 0 && sv[0].len == d->size && d->extent == d->size;
    if (seg.n > (size_t)0x7fffffff) {
        set_why("datatype has more than 2^31 segments");
        rc = MPI_ERR_TYPE;
    }
out:
    free(r.v), free(seg.v), free(elem.v);
    if (rc != MPI_SUCCESS) {
        free(d);
        d = NULL;
    }
    *out = d;
    return rc;
}

int nbr_dtype_get(MPI_Datatype type, const nbr_dtype_t **out)
{
    if (type == MPI_DATATYPE_NULL) {
        set_why("MPI_DATATYPE_NULL");
        return MPI_ERR_TYPE;
    }
    if (ensure_init() != MPI_SUCCESS) {
        set_why("could not create the datatype cache keyval");
        return MPI_ERR_TYPE;
    }
    int i = lookup(type);
    if (i >= 0) {
        if (!predef[i].ok) {
            set_why("%s", predef[i].why);
            return MPI_ERR_TYPE;
        }
        *out = &predef[i].dt;
        return MPI_SUCCESS;
    }
    void *val;
    int flag;
    if (PMPI_Type_get_attr(type, keyval, &val, &flag) != MPI_SUCCESS) {
        set_why("not a valid datatype");
        return MPI_ERR_TYPE;
    }
    if (flag) {
        *out = val;
        return MPI_SUCCESS;
    }
    /* Miss: one thread builds, so two never replace each other's cache (set_attr on a set key
     * would run the delete callback under the other's feet). */
    pthread_mutex_lock(&cache_mu);
    int rc = PMPI_Type_get_attr(type, keyval, &val, &flag);
    if (rc == MPI_SUCCESS && !flag) {
        nbr_dtype_t *d;
        if ((rc = build(type, &d)) == MPI_SUCCESS) {
            if ((rc = PMPI_Type_set_attr(type, keyval, d)) == MPI_SUCCESS) {
                atomic_fetch_add(&ncached, 1);
                val = d;
            } else {
                free(d);
                set_why("could not cache the flattening on the datatype");
            }
        }
    }
    pthread_mutex_unlock(&cache_mu);
    if (rc != MPI_SUCCESS)
        return rc == MPI_ERR_NO_MEM ? rc : MPI_ERR_TYPE;
    *out = val;
    return MPI_SUCCESS;
}

/* ---- committed? ------------------------------------------------------------------------------ */

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static MPI_Comm self_comm = MPI_COMM_NULL; /* MPI_COMM_SELF's twin, errors returned */

static void self_init(void)
{
    MPI_Comm c;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &c) != MPI_SUCCESS)
        return;
    if (PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        PMPI_Comm_free(&c);
        return;
    }
    self_comm = c;
}

int nbr_dtype_committed(const nbr_dtype_t *d)
{
    if (d->predefined || __atomic_load_n(&d->committed, __ATOMIC_RELAXED))
        return 1;
    pthread_once(&self_once, self_init);
    if (self_comm == MPI_COMM_NULL)
        return 1; /* cannot ask: let the call through rather than refuse a good type */
    char buf[1];
    int pos = 0;
    if (PMPI_Pack(buf, 0, d->type, buf, 0, &pos, self_comm) != MPI_SUCCESS)
        return 0;
    __atomic_store_n(&((nbr_dtype_t *)d)->committed, 1, __ATOMIC_RELAXED);
    return 1;
}

/* ---- span ------------------------------------------------------------------------------------ */

static MPI_Aint sat_add(MPI_Aint a, MPI_Aint b)
{
    MPI_Aint r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? AINT_MAX : AINT_MIN) : r;
}

void nbr_dtype_span(const nbr_dtype_t *dt, MPI_Aint count, MPI_Aint *lo, MPI_Aint *hi)
{
    *lo = *hi = 0;
    if (count <= 0 || dt->nseg == 0)
        return;
    MPI_Aint mn = dt->seg[0].off, mx = dt->seg[0].off + dt->seg[0].len, last;
    for (int s = 1; s < dt->nseg; s++) {
        if (dt->seg[s].off < mn)
            mn = dt->seg[s].off;
        if (dt->seg[s].off + dt->seg[s].len > mx)
            mx = dt->seg[s].off + dt->seg[s].len;
    }
    if (__builtin_mul_overflow(count - 1, dt->extent, &last))
        last = dt->extent > 0 ? AINT_MAX : AINT_MIN;
    *lo = last < 0 ? sat_add(last, mn) : mn;
    *hi = last > 0 ? sat_add(last, mx) : mx;
}

/* ---- walk ------------------------------------------------------------------------------------ */

static void cursor_init(nbr_dtype_cursor_t *c, const nbr_seg_t *seg, int nseg, MPI_Aint extent,
                        MPI_Aint count)
{
    *c = (nbr_dtype_cursor_t){.seg = seg, .nseg = nseg, .extent = extent, .count = count};
    if (count == 0 || nseg == 0)
        return; /* left == 0: done */
    c->cur = seg[0].off;
    c->left = seg[0].len;
    /* One segment that tiles (len == extent), or a single element: the buffer is one piece. */
    if (nseg == 1 && (seg[0].len == extent || count == 1)) {
        c->seg = NULL;
        c->left = seg[0].len * count;
    }
}

static inline void cursor_advance(nbr_dtype_cursor_t *c, MPI_Aint n)
{
    c->cur += n;
    c->left -= n;
    if (c->left || !c->seg)
        return;
    if (++c->s == c->nseg) {
        c->s = 0;
        if (++c->elem == c->count)
            return;
    }
    c->cur = c->elem * c->extent + c->seg[c->s].off;
    c->left = c->seg[c->s].len;
}

static int totals(const nbr_dtype_t *a, MPI_Aint ca, const nbr_dtype_t *b, MPI_Aint cb)
{
    MPI_Aint ta, tb;
    if (ca < 0 || cb < 0 || __builtin_mul_overflow(ca, a->size, &ta) ||
        __builtin_mul_overflow(cb, b->size, &tb))
        return MPI_ERR_COUNT;
    return ta == tb ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int nbr_dtype_walk_init(nbr_dtype_walk_t *w, const nbr_dtype_t *a, MPI_Aint count_a,
                        const nbr_dtype_t *b, MPI_Aint count_b)
{
    int rc = totals(a, count_a, b, count_b);
    if (rc != MPI_SUCCESS)
        return rc;
    cursor_init(&w->a, a->seg, a->nseg, a->extent, count_a);
    cursor_init(&w->b, b->seg, b->nseg, b->extent, count_b);
    return MPI_SUCCESS;
}

int nbr_dtype_walk_init_elem(nbr_dtype_walk_t *w, const nbr_dtype_t *a, MPI_Aint count_a,
                             const nbr_dtype_t *b, MPI_Aint count_b)
{
    int rc = totals(a, count_a, b, count_b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!nbr_dtype_same_basic(a, b))
        return MPI_ERR_TYPE;
    cursor_init(&w->a, a->elem, a->nelem, a->extent, count_a);
    cursor_init(&w->b, b->elem, b->nelem, b->extent, count_b);
    return MPI_SUCCESS;
}

int nbr_dtype_walk_next(nbr_dtype_walk_t *w, MPI_Aint *off_a, MPI_Aint *off_b, MPI_Aint *len)
{
    nbr_dtype_cursor_t *a = &w->a, *b = &w->b;
    if (!a->left || !b->left)
        return 0;
    MPI_Aint oa = a->cur, ob = b->cur, n = 0;
    /* Take the shorter piece; keep going while both sides continue where they stopped. */
    do {
        MPI_Aint k = a->left < b->left ? a->left : b->left;
        cursor_advance(a, k);
        cursor_advance(b, k);
        n += k;
    } while (a->left && b->left && a->cur == oa + n && b->cur == ob + n);
    *off_a = oa, *off_b = ob, *len = n;
    return 1;
}

int nbr_dtype_copy(void *dst, const nbr_dtype_t *dt_dst, MPI_Aint count_dst, const void *src,
                   const nbr_dtype_t *dt_src, MPI_Aint count_src)
{
    nbr_dtype_walk_t w;
    int rc = nbr_dtype_walk_init(&w, dt_dst, count_dst, dt_src, count_src);
    MPI_Aint od, os, len;
    while (rc == MPI_SUCCESS && nbr_dtype_walk_next(&w, &od, &os, &len))
        memmove((char *)dst + od, (const char *)src + os, (size_t)len);
    return rc;
}
