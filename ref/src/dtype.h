/* dtype.h — MPI datatypes flattened to byte segments, cached on the type, and walked in pairs:
 * the one primitive every data-moving call uses to go between an origin buffer and target memory
 * (paper 001 §2.4, "maximal block" strategy: each step moves the largest piece contiguous on both
 * sides). Predefined types come from a static table; derived types are flattened once through
 * PMPI_Type_get_envelope/get_contents and the result hangs on the type as an attribute. */
#ifndef NBR_DTYPE_H
#define NBR_DTYPE_H

#include <mpi.h>
#include <stdint.h>

typedef struct {
    MPI_Aint off, len; /* bytes, relative to the element's start address */
} nbr_seg_t;

typedef struct nbr_dtype {
    MPI_Datatype type;
    MPI_Aint size;       /* data bytes of one element (PMPI_Type_size_x) */
    MPI_Aint lb, extent; /* PMPI_Type_get_extent */
    int predefined;      /* a named type: static, never freed */
    int contig;          /* one segment {0, size} and extent == size: the fast case */
    int nseg;            /* segments of ONE element in type-map order, adjacent ones merged */
    const nbr_seg_t *seg;
    MPI_Datatype basic;    /* the one predefined type all primitive elements have (MPI_2INT for a
                              vector of pairs), or MPI_DATATYPE_NULL when the type mixes them */
    MPI_Aint basic_size;   /* PMPI size of `basic` (0 when mixed) */
    MPI_Aint basic_extent; /* extent of `basic`: the stride of nbr_op_apply's elements; differs
                              from basic_size only for padded pair types (MPI_DOUBLE_INT: 12/16) */
    int nelem;             /* runs of whole `basic` elements laid out as a C array (len = n *
                              basic_extent), for accumulate; same as seg unless basic is padded */
    const nbr_seg_t *elem;
    int committed; /* known committed (commit cannot be undone); see nbr_dtype_committed */
    /* seg (0) and elem (1) as runs of arithmetic progressions, computed on first use (layout.c:
     * packed transfers across nodes); freed with the flattening */
    struct nbr_runs *runs[2];
} nbr_dtype_t;

/* The flattening of `type` (never NULL on success). MPI_SUCCESS, or MPI_ERR_TYPE with the reason
 * in nbr_dtype_error(). Predefined types: a hash probe, no allocation, no attribute lookup.
 * The result lives until the type is freed (MPI_Type_free runs the attribute's delete callback). */
int nbr_dtype_get(MPI_Datatype type, const nbr_dtype_t **out);
/* Why the calling thread's last failed nbr_dtype_get failed. */
const char *nbr_dtype_error(void);

/* 1 when the type may be used for communication (predefined, or MPI_Type_commit'ed), else 0.
 * The MPI has no query for it: the vendor is asked once per type by packing zero elements
 * (both MPICH and Open MPI refuse an uncommitted type there), and a yes is remembered. */
int nbr_dtype_committed(const nbr_dtype_t *d);

/* A predefined type as a small index that means the same type in every process of the job
 * (handles are addresses in Open MPI), and back; -1 / MPI_DATATYPE_NULL when there is none. */
int nbr_dtype_index(MPI_Datatype type);
MPI_Datatype nbr_dtype_at(int index);
/* Derived-type flattenings currently cached (they go when their types are freed): leak checks. */
long nbr_dtype_cached(void);

/* "MPI_INT", ... for predefined types, "derived" otherwise: for error messages. */
const char *nbr_dtype_name(MPI_Datatype type);

/* Accumulate requires both sides built from the same predefined type (MPI-3.1 §11.3.4). */
static inline int nbr_dtype_same_basic(const nbr_dtype_t *a, const nbr_dtype_t *b)
{
    return a->basic != MPI_DATATYPE_NULL && a->basic == b->basic;
}

/* Lowest and one-past-highest byte that `count` elements touch, relative to the buffer start
 * (lo == hi == 0 when nothing is touched). Saturates instead of overflowing, so a bounds check
 * against it still fails for absurd counts. */
void nbr_dtype_span(const nbr_dtype_t *dt, MPI_Aint count, MPI_Aint *lo, MPI_Aint *hi);

/* ---- walking two typed buffers in parallel --------------------------------------------------- */

typedef struct {
    const nbr_seg_t *seg; /* NULL: the whole buffer is one piece */
    int nseg, s;          /* segment list of one element, current segment */
    MPI_Aint extent, count, elem;
    MPI_Aint cur, left; /* current piece: offset from the buffer start, bytes left (0: done) */
} nbr_dtype_cursor_t;

typedef struct {
    nbr_dtype_cursor_t a, b;
} nbr_dtype_walk_t;

/* Walk count_a elements of a and count_b of b in parallel. MPI_ERR_COUNT for a negative count,
 * MPI_ERR_TYPE when the total data sizes differ. */
int nbr_dtype_walk_init(nbr_dtype_walk_t *w, const nbr_dtype_t *a, MPI_Aint count_a,
                        const nbr_dtype_t *b, MPI_Aint count_b);
/* For accumulate: chunks are runs of whole basic elements, laid out as C arrays on both sides
 * (len / basic_extent elements, what nbr_op_apply takes). Also MPI_ERR_TYPE unless both types
 * have the same basic. Same chunks as nbr_dtype_walk_init unless basic is a padded pair type. */
int nbr_dtype_walk_init_elem(nbr_dtype_walk_t *w, const nbr_dtype_t *a, MPI_Aint count_a,
                             const nbr_dtype_t *b, MPI_Aint count_b);
/* 1 and the next chunk (byte offsets from each buffer's start, length), or 0 when done. Each chunk
 * is the largest piece contiguous on both sides. */
int nbr_dtype_walk_next(nbr_dtype_walk_t *w, MPI_Aint *off_a, MPI_Aint *off_b, MPI_Aint *len);

/* Copy count_src elements of src into count_dst elements of dst, chunk by chunk (memmove, so a
 * local put onto overlapping memory is well-defined). MPI_SUCCESS or walk_init's error. */
int nbr_dtype_copy(void *dst, const nbr_dtype_t *dt_dst, MPI_Aint count_dst, const void *src,
                   const nbr_dtype_t *dt_src, MPI_Aint count_src);

/* ---- predefined types as reductions see them (op.c) ------------------------------------------ */

/* MPI-3.1 §5.9.2 groups, plus pairs for MAXLOC/MINLOC (§5.9.4). NONE: only MPI_REPLACE/NO_OP. */
enum {
    NBR_CLS_NONE,
    NBR_CLS_CINT,
    NBR_CLS_FINT,
    NBR_CLS_FLOAT,
    NBR_CLS_LOGICAL,
    NBR_CLS_COMPLEX,
    NBR_CLS_BYTE,
    NBR_CLS_MULTI, /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
    NBR_CLS_PAIR,
    NBR_CLS_CHAR /* MPI_CHAR: in no group, yet both vendors reduce it as a C integer (op.c) */
};

/* C representations of one element: the set of kernels op.c instantiates.
 * Integers: NAME, C type, unsigned twin (signed arithmetic wraps through it, never overflows). */
#define NBR_REPR_INTS(X)                                                                           \
    X(I8, int8_t, uint8_t)                                                                         \
    X(U8, uint8_t, uint8_t)                                                                        \
    X(I16, int16_t, uint16_t)                                                                      \
    X(U16, uint16_t, uint16_t)                                                                     \
    X(I32, int32_t, uint32_t)                                                                      \
    X(U32, uint32_t, uint32_t)                                                                     \
    X(I64, int64_t, uint64_t)                                                                      \
    X(U64, uint64_t, uint64_t)
#define NBR_REPR_FLOATS(X) X(F32, float) X(F64, double) X(FLD, long double)
#define NBR_REPR_COMPLEX(X)                                                                        \
    X(C32, float _Complex) X(C64, double _Complex) X(CLD, long double _Complex)
/* Pairs: NAME, value type, index type; laid out as the C struct {value; index;}. */
#define NBR_REPR_PAIRS(X)                                                                          \
    X(PFI, float, int)                                                                             \
    X(PDI, double, int)                                                                            \
    X(PLI, long, int)                                                                              \
    X(P2I, int, int)                                                                               \
    X(PSI, short, int)                                                                             \
    X(PLDI, long double, int)                                                                      \
    X(P2F, float, float)                                                                           \
    X(P2D, double, double)

#define NBR_REPR_ENUM(name, ...) NBR_R_##name,
enum {
    NBR_R_NONE, /* no arithmetic here (characters, REAL16 of unknown format, ...) */
    NBR_REPR_INTS(NBR_REPR_ENUM) NBR_REPR_FLOATS(NBR_REPR_ENUM) NBR_REPR_COMPLEX(NBR_REPR_ENUM)
        NBR_REPR_PAIRS(NBR_REPR_ENUM) NBR_R_COUNT
};
#undef NBR_REPR_ENUM

#define NBR_PAIR_STRUCT(name, V, I)                                                                \
    typedef struct {                                                                               \
        V v;                                                                                       \
        I i;                                                                                       \
    } nbr_pair_##name##_t;
NBR_REPR_PAIRS(NBR_PAIR_STRUCT)
#undef NBR_PAIR_STRUCT

/* Class and representation of a predefined type; 0 (and NONE/NONE) for anything else. */
int nbr_dtype_classify(MPI_Datatype type, int *cls, int *repr);

#endif
