/* acc_ops.c — MPI_Accumulate with every predefined operation on the datatypes the standard allows
 * it for: MPI_SUM and MPI_PROD on all C integer, multi-language, floating-point and complex types;
 * MPI_MIN and MPI_MAX on the signed integer and floating-point types; MPI_LAND, MPI_LOR, MPI_LXOR
 * on the integer types and MPI_C_BOOL (non-zero values other than 1 count as true); MPI_BAND,
 * MPI_BOR, MPI_BXOR on the integer types and MPI_BYTE; MPI_MAXLOC and MPI_MINLOC on the
 * value-index pair types (with ties: the smaller index wins); MPI_REPLACE from all ranks at once
 * (each element must end up as one origin's value). All ranks accumulate into every rank in one
 * fence epoch (see acc.h). MIN/MAX on unsigned and multi-language types are in
 * acc_minmax_unsigned.c and acc_minmax_multilang.c, which vendors get wrong. */
#include "acc.h"

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    static const char *const cbool[] = {"MPI_C_BOOL", NULL}, *const byte[] = {"MPI_BYTE", NULL};
    static const char *const repl[] = {"MPI_INT",         "MPI_UINT64_T",         "MPI_DOUBLE",
                                       "MPI_LONG_DOUBLE", "MPI_C_DOUBLE_COMPLEX", "MPI_C_BOOL",
                                       "MPI_2INT",        "MPI_DOUBLE_INT",       NULL};
    acc_case cases[512];
    int n = 0;
    for (int op = OP_SUM; op <= OP_PROD; op++) {
        acc_add(cases, &n, op, acc_signed_ints);
        acc_add(cases, &n, op, acc_unsigned_ints);
        acc_add(cases, &n, op, acc_multilang);
        acc_add(cases, &n, op, acc_floats);
        acc_add(cases, &n, op, acc_complex);
    }
    for (int op = OP_MIN; op <= OP_MAX; op++) {
        acc_add(cases, &n, op, acc_signed_ints);
        acc_add(cases, &n, op, acc_floats);
    }
    for (int op = OP_LAND; op <= OP_LXOR; op++) {
        acc_add(cases, &n, op, acc_signed_ints);
        acc_add(cases, &n, op, acc_unsigned_ints);
        acc_add(cases, &n, op, cbool);
    }
    for (int op = OP_BAND; op <= OP_BXOR; op++) {
        acc_add(cases, &n, op, acc_signed_ints);
        acc_add(cases, &n, op, acc_unsigned_ints);
        acc_add(cases, &n, op, byte);
    }
    acc_add(cases, &n, OP_MAXLOC, acc_pairs);
    acc_add(cases, &n, OP_MINLOC, acc_pairs);
    acc_add(cases, &n, OP_REPLACE, repl);
    tap_plan(n);
    acc_run(cases, n);
    return conf_done();
}
