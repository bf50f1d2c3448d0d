/* op.h — MPI reduction operations for the accumulate family (MPI-3.1 §5.9.2, §11.3.4): which
 * (op, datatype) pairs are allowed, and the element-wise kernels applying them. Only predefined
 * ops, MPI_REPLACE and MPI_NO_OP exist here: accumulate takes no user-defined ops. */
#ifndef NBR_OP_H
#define NBR_OP_H

#include <mpi.h>
#include <stddef.h>

/* MPI_SUCCESS; MPI_ERR_OP when op is not predefined or not defined on `basic` (or this library
 * has no arithmetic for it, e.g. MPI_REAL16); MPI_ERR_TYPE when `basic` is not a predefined type
 * (MPI_DATATYPE_NULL: a mixed derived type). */
int nbr_op_check(MPI_Op op, MPI_Datatype basic);

/* MPI_SUCCESS or MPI_ERR_TYPE: compare-and-swap takes C/Fortran integer, logical, byte and the
 * multi-language types (MPI_AINT, MPI_OFFSET, MPI_COUNT). */
int nbr_op_cas_check(MPI_Datatype type);

/* inout[i] = in[i] op inout[i] for n elements of `basic`, laid out as a C array (stride: the
 * type's extent; pair types are their C structs, of which only the data bytes are read and
 * written). MPI_REPLACE copies `in`; MPI_NO_OP does nothing. Unaligned buffers are fine.
 * The pair must have passed nbr_op_check. */
void nbr_op_apply(MPI_Op op, MPI_Datatype basic, const void *in, void *inout, MPI_Aint n);

/* The fast path's split of nbr_op_check + nbr_op_apply (one type lookup instead of three): the
 * kernel of an arithmetic, logical or bitwise (op, basic) pair that nbr_op_check accepts, NULL
 * for every other pair (MPI_REPLACE and MPI_NO_OP included). nbr_op_run applies it to n
 * elements of extent `ext` as nbr_op_apply would, overlapping buffers included. */
typedef void nbr_kernel_fn(const char *restrict in, char *restrict io, MPI_Aint n);
nbr_kernel_fn *nbr_op_kernel(MPI_Op op, MPI_Datatype basic);
void nbr_op_run(nbr_kernel_fn *k, const void *in, void *inout, MPI_Aint n, MPI_Aint ext);

/* A predefined op (MPI_REPLACE, MPI_NO_OP included) as an index that means the same op in every
 * process, and back; -1 / MPI_OP_NULL when there is none. */
int nbr_op_index(MPI_Op op);
MPI_Op nbr_op_at(int index);

/* accumulate_ops=same_op (MPI-3.1 §11.2.1; op.c, docs/ref-internals.md): the element size (4 or
 * 8) when (op, basic) is served with atomic instructions — one instruction for MPI_SUM, MPI_BAND,
 * MPI_BOR, MPI_BXOR on C/Fortran integers and MPI_AINT/OFFSET/COUNT and for MPI_REPLACE and
 * MPI_NO_OP on any 4- or 8-byte element without padding (the ops network atomics have:
 * nbr_op_atomic_native returns the size for these pairs only, 0 for the rest), a
 * compare-and-swap loop around the op's kernel for every other predefined op such an element
 * takes — 0 otherwise. nbr_op_atomic applies it to n elements at p (in: the
 * operands, NULL for MPI_NO_OP; old: the previous contents, or NULL), sequentially consistent
 * atomics per element; it returns 0 and does nothing when the pair is not eligible or p is not
 * aligned to the element size (the caller takes its lock path). nbr_op_atomic_cas: one
 * compare-and-swap of n (4 or 8) bytes at aligned p, else 0. */
int nbr_op_atomic_size(MPI_Op op, MPI_Datatype basic);
int nbr_op_atomic_native_find(MPI_Op op, MPI_Datatype basic);
/* What an accumulate needs to know of an (op, type) pair (op.c's facts: the op's index,
 * nbr_op_check's answer, the atomic size, one instruction or not, the kernel), and the last pair
 * this thread asked about. nbr_op_atomic_native reads it inline: the fetch_and_op and accumulate
 * fast paths toward other nodes ask about the same pair at every call, and a call into op.c cost
 * ~40 of a fetch_and_op + flush's ~710 instructions. */
typedef struct {
    int valid, o, chk, size, insn;
    MPI_Op op;
    MPI_Datatype type;
    nbr_kernel_fn *k;
} nbr_op_facts_t;
extern _Thread_local nbr_op_facts_t nbr_op_facts_last __attribute__((tls_model("initial-exec")));
static inline int nbr_op_atomic_native(MPI_Op op, MPI_Datatype basic)
{
    const nbr_op_facts_t *m = &nbr_op_facts_last;
    if (__builtin_expect(m->valid && m->op == op && m->type == basic, 1))
        return m->insn ? m->size : 0;
    return nbr_op_atomic_native_find(op, basic);
}
int nbr_op_atomic(MPI_Op op, MPI_Datatype basic, const void *in, void *p, void *old, MPI_Aint n);
int nbr_op_atomic_cas(size_t n, void *p, const void *val, const void *cmp, void *old);

/* "MPI_SUM", ... or "user-defined op": for error messages. */
const char *nbr_op_name(MPI_Op op);

#endif
