/* nb_badargs.c — one table of erroneous RMA arguments, run through every path of libnbrma: the
 * fast path (lock_all, the same predefined type on both sides), the full path (a committed
 * derived target type), and a deferred lock epoch whose calls are recorded and replayed later;
 * on each window flavor (create, allocate — symmetric —, allocate_shared, dynamic) and for each
 * call (Put, Get, Accumulate with SUM and REPLACE, Get_accumulate with SUM and NO_OP,
 * Fetch_and_op, Compare_and_swap, Rput, Raccumulate). Every row must fail with its class, from
 * the call itself or (deferred epochs: dynamic windows check attachment when the call is carried
 * out) from the wait that completes its epoch, and no window byte may change anywhere: the
 * symmetric heap puts the neighbours' memory right before and after the target's, and create
 * windows sit between guard words. Rows (window of 8 int64, disp_unit 8):
 *   negative origin/target/result count              MPI_ERR_COUNT (issue 9 item 3)
 *   target_disp -1                                    MPI_ERR_DISP (dynamic: an unattached
 *                                                     address, MPI_ERR_RMA_RANGE)
 *   target_disp 2^61+1, 2^61-1, INTPTR_MAX-3: x8 wraps MPI_ERR_RMA_RANGE (item 2)
 *   one element past the end, two from the last slot  MPI_ERR_RMA_RANGE
 *   target rank = group size                          MPI_ERR_RANK
 *   MPI_REPLACE float -> int32, byte -> int64         MPI_ERR_TYPE (item 10, MPI-3.1 §11.3.4)
 *   uncommitted origin or target type                 MPI_ERR_TYPE (item 10)
 *   get_accumulate result type not the target's      MPI_ERR_TYPE (item 10)
 * ref only (links libnbrma for the deferred epochs); 2 ranks or more: rank 0 calls, rank 1 is
 * the target. */
#include "relax.h"
#include <stdint.h>

#include "nb_util.h"

#define N 8 /* int64 slots per window */
#define G 2 /* guard words each side (create windows) */

enum { T_I64, T_I32, T_F32, T_F64, T_BYTE, T_UNC, T_CONTIG, T_COUNT };
static MPI_Datatype ty[T_COUNT];

enum { C_PUT, C_GET, C_ACC, C_ACC_REPL, C_GACC, C_GACC_NOOP, C_FOP, C_CAS, C_RPUT, C_RACC, C_N };
static const char *const call_name[C_N] = {"MPI_Put",
                                           "MPI_Get",
                                           "MPI_Accumulate(SUM)",
                                           "MPI_Accumulate(REPLACE)",
                                           "MPI_Get_accumulate(SUM)",
                                           "MPI_Get_accumulate(NO_OP)",
                                           "MPI_Fetch_and_op(SUM)",
                                           "MPI_Compare_and_swap",
                                           "MPI_Rput",
                                           "MPI_Raccumulate(SUM)"};
#define ALL_COUNTED                                                                                \
    (1u << C_PUT | 1u << C_GET | 1u << C_ACC | 1u << C_ACC_REPL | 1u << C_GACC | 1u << C_RPUT |    \
     1u << C_RACC)
#define ALL  (ALL_COUNTED | 1u << C_GACC_NOOP | 1u << C_FOP | 1u << C_CAS)
#define ACCS (1u << C_ACC | 1u << C_ACC_REPL | 1u << C_GACC | 1u << C_RACC)

typedef struct {
    const char *what;
    unsigned calls;   /* which calls the row applies to */
    int oc, tc, rc;   /* origin, target, result counts */
    int ot, tt, rt;   /* T_* */
    int raw;          /* disp is a raw value, not a slot index */
    MPI_Aint disp;    /* slot index (dynamic: from the attached base) or raw value */
    int bad_rank;     /* target = group size */
    int cls, cls_dyn; /* expected class: static flavors, dynamic */
} row_t;

#define AINT_TOP ((MPI_Aint)INTPTR_MAX)
static const row_t rows[] = {
    {"origin and target count -1", ALL_COUNTED & ~(1u << C_GACC_NOOP), -1, -1, 1, T_I64, T_I64,
     T_I64, 0, 0, 0, MPI_ERR_COUNT, MPI_ERR_COUNT},
    {"target count -1", ALL_COUNTED, 1, -1, 1, T_I64, T_I64, T_I64, 0, 0, 0, MPI_ERR_COUNT,
     MPI_ERR_COUNT},
    {"origin count -1", ALL_COUNTED, -1, 1, 1, T_I64, T_I64, T_I64, 0, 0, 0, MPI_ERR_COUNT,
     MPI_ERR_COUNT},
    {"result count -1", 1u << C_GACC | 1u << C_GACC_NOOP, 1, 1, -1, T_I64, T_I64, T_I64, 0, 0, 0,
     MPI_ERR_COUNT, MPI_ERR_COUNT},
    {"target_disp -1", ALL, 1, 1, 1, T_I64, T_I64, T_I64, 0, -1, 0, MPI_ERR_DISP,
     MPI_ERR_RMA_RANGE},
    {"target_disp 2^61+1 (x 8 wraps to 8)", ALL, 1, 1, 1, T_I64, T_I64, T_I64, 1,
     ((MPI_Aint)1 << 61) + 1, 0, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_RANGE},
    {"target_disp 2^61-1 (x 8 wraps to -8)", ALL, 1, 1, 1, T_I64, T_I64, T_I64, 1,
     ((MPI_Aint)1 << 61) - 1, 0, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_RANGE},
    {"target_disp INTPTR_MAX-3", ALL, 1, 1, 1, T_I64, T_I64, T_I64, 1, AINT_TOP - 3, 0,
     MPI_ERR_RMA_RANGE, MPI_ERR_RMA_RANGE},
    {"one element past the window", ALL, 1, 1, 1, T_I64, T_I64, T_I64, 0, N, 0, MPI_ERR_RMA_RANGE,
     MPI_ERR_RMA_RANGE},
    {"two elements from the last slot", ALL_COUNTED, 2, 2, 2, T_I64, T_I64, T_I64, 0, N - 1, 0,
     MPI_ERR_RMA_RANGE, MPI_ERR_RMA_RANGE},
    {"target rank = group size", ALL, 1, 1, 1, T_I64, T_I64, T_I64, 0, 0, 1, MPI_ERR_RANK,
     MPI_ERR_RANK},
    {"MPI_REPLACE: float origin, int32 target", 1u << C_ACC_REPL, 1, 1, 1, T_F32, T_I32, T_I32, 0,
     0, 0, MPI_ERR_TYPE, MPI_ERR_TYPE},
    {"MPI_REPLACE: 8 bytes into one int64", 1u << C_ACC_REPL, 8, 1, 1, T_BYTE, T_I64, T_I64, 0, 0,
     0, MPI_ERR_TYPE, MPI_ERR_TYPE},
    {"uncommitted origin type", (1u << C_PUT | 1u << C_GET | ACCS | 1u << C_RPUT), 1, 2, 2, T_UNC,
     T_I64, T_I64, 0, 0, 0, MPI_ERR_TYPE, MPI_ERR_TYPE},
    {"uncommitted target type", (1u << C_PUT | 1u << C_GET | ACCS | 1u << C_RPUT), 2, 1, 2, T_I64,
     T_UNC, T_I64, 0, 0, 0, MPI_ERR_TYPE, MPI_ERR_TYPE},
    {"result MPI_DOUBLE, target MPI_INT64_T", 1u << C_GACC | 1u << C_GACC_NOOP, 1, 1, 1, T_I64,
     T_I64, T_F64, 0, 0, 0, MPI_ERR_TYPE, MPI_ERR_TYPE},
    {"result 2 x MPI_INT32_T, target MPI_INT64_T", 1u << C_GACC | 1u << C_GACC_NOOP, 1, 1, 2, T_I64,
     T_I64, T_I32, 0, 0, 0, MPI_ERR_TYPE, MPI_ERR_TYPE},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC, F_N };
static const char *const flavor_name[F_N] = {"MPI_Win_create", "MPI_Win_allocate (symmetric)",
                                             "MPI_Win_allocate_shared", "MPI_Win_create_dynamic"};
enum { P_FAST, P_FULL, P_DEFERRED, P_N };
static const char *const path_name[P_N] = {"fast path (lock_all, predefined types)",
                                           "full path (derived target type)",
                                           "deferred lock epoch (recorded, replayed)"};

static MPI_Win win;
static int64_t *mem, *raw_mem; /* window memory; raw_mem: with guards (create, dynamic) */
static MPI_Aint *addr;         /* dynamic: every rank's attached address */

static void fill(void)
{
    for (int i = 0; i < N; i++)
        mem[i] = conf_val(1, conf_rank, i);
    if (raw_mem)
        for (int i = 0; i < G; i++)
            raw_mem[i] = raw_mem[G + N + i] = -1;
}

static void open_win(int f)
{
    raw_mem = NULL;
    switch (f) {
    case F_CREATE:
        raw_mem = malloc((N + 2 * G) * sizeof *raw_mem);
        mem = raw_mem + G;
        MPI_Win_create(mem, N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    case F_ALLOCATE:
        MPI_Win_allocate(N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        break;
    case F_SHARED:
        MPI_Win_allocate_shared(N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                &win);
        break;
    case F_DYNAMIC:
        raw_mem = malloc((N + 2 * G) * sizeof *raw_mem);
        mem = raw_mem + G;
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, mem, N * sizeof *mem);
        addr = malloc((size_t)conf_size * sizeof *addr);
        MPI_Get_address(mem, &addr[conf_rank]);
        MPI_Allgather(MPI_IN_PLACE, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
        break;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    fill();
    nbt_barrier();
}

/* Every window word (and guard) still holds what fill() put there. */
static int intact(const char *where)
{
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (mem[i] != conf_val(1, conf_rank, i)) {
            if (!bad++)
                nbt_diag("%s: slot %d of rank %d's window holds %lld, expected %ld", where, i,
                         conf_rank, (long long)mem[i], conf_val(1, conf_rank, i));
        }
    if (raw_mem)
        for (int i = 0; i < G; i++)
            if (raw_mem[i] != -1 || raw_mem[G + N + i] != -1) {
                if (!bad++)
                    nbt_diag("%s: a guard word around rank %d's window changed", where, conf_rank);
            }
    return bad == 0;
}

static void close_win(int f)
{
    nbt_barrier();
    if (f == F_DYNAMIC) {
        MPI_Win_detach(win, mem);
        free(addr);
    }
    MPI_Win_free(&win);
    free(raw_mem);
    raw_mem = NULL;
}

/* Issue call c with row r's arguments toward `target`; *req gets an R-variant's request. */
static int issue(int c, const row_t *r, int f, int path, int target, MPI_Request *req)
{
    static int64_t obuf[4 * N], rbuf[4 * N], cmp[2];
    MPI_Aint disp = r->disp;
    if (f == F_DYNAMIC && !r->raw) /* the slot's address, wrapping like the C would */
        disp = (MPI_Aint)((uint64_t)addr[target] + (uint64_t)r->disp * 8u);
    if (r->bad_rank)
        target = conf_size;
    int tt = path == P_FULL && r->tt == T_I64 ? T_CONTIG : r->tt;
    MPI_Datatype o = ty[r->ot], t = ty[tt], rt = ty[r->rt];
    *req = MPI_REQUEST_NULL;
    switch (c) {
    case C_PUT:
        return MPI_Put(obuf, r->oc, o, target, disp, r->tc, t, win);
    case C_GET:
        return MPI_Get(rbuf, r->oc, o, target, disp, r->tc, t, win);
    case C_ACC:
        return MPI_Accumulate(obuf, r->oc, o, target, disp, r->tc, t, MPI_SUM, win);
    case C_ACC_REPL:
        return MPI_Accumulate(obuf, r->oc, o, target, disp, r->tc, t, MPI_REPLACE, win);
    case C_GACC:
        return MPI_Get_accumulate(obuf, r->oc, o, rbuf, r->rc, rt, target, disp, r->tc, t, MPI_SUM,
                                  win);
    case C_GACC_NOOP:
        return MPI_Get_accumulate(NULL, 0, o, rbuf, r->rc, rt, target, disp, r->tc, t, MPI_NO_OP,
                                  win);
    case C_FOP:
        return MPI_Fetch_and_op(obuf, rbuf, ty[T_I64], target, disp, MPI_SUM, win);
    case C_CAS:
        return MPI_Compare_and_swap(obuf, cmp, rbuf, ty[T_I64], target, disp, win);
    case C_RPUT:
        return MPI_Rput(obuf, r->oc, o, target, disp, r->tc, t, win, req);
    case C_RACC:
        return MPI_Raccumulate(obuf, r->oc, o, target, disp, r->tc, t, MPI_SUM, win, req);
    }
    return MPI_ERR_INTERN;
}

/* Complete a request that may fail: its error code, or MPI_SUCCESS. */
static int finish(MPI_Request *req)
{
    double t0 = MPI_Wtime();
    while (*req != MPI_REQUEST_NULL) {
        int flag = 0, rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            break;
        if (MPI_Wtime() - t0 > NBT_LIMIT)
            tap_bail_out("a request did not complete within %.0f s (hang?)", NBT_LIMIT);
        nbh_relax();
    }
    return MPI_SUCCESS;
}

/* Compare a call's outcome with its row: "bad" counts mismatches, the first few are shown. */
static void judge(int rc, int cls, const char *call, const row_t *r, int *bad)
{
    char s[400];
    if (conf_class(rc) == cls)
        return;
    if ((*bad)++ < 6)
        nbt_diag("%s, %s: returned %s, expected %s", call, r->what,
                 conf_describe_rc(rc, s, sizeof s), conf_class_name(cls));
}

static void run(int f, int path)
{
    enum { O = 0, X = 1 };
    int bad = 0, cases = 0;
    open_win(f);
    if (conf_rank == O && path != P_DEFERRED)
        MPI_Win_lock_all(0, win);
    for (int i = 0; i < NROWS; i++)
        for (int c = 0; c < C_N; c++) {
            const row_t *r = &rows[i];
            if (!(r->calls & 1u << c))
                continue;
            int cls = f == F_DYNAMIC ? r->cls_dyn : r->cls;
            cases++;
            MPI_Request req;
            if (path != P_DEFERRED) {
                if (conf_rank == O) {
                    int rc = issue(c, r, f, path, X, &req);
                    if (rc == MPI_SUCCESS)
                        rc = finish(&req);
                    judge(rc, cls, call_name[c], r, &bad);
                }
                continue;
            }
            /* The lock epoch waits behind a PSCW access epoch X has not exposed yet. */
            if (conf_rank == O) {
                MPI_Group gx = nbt_group(X, -1);
                MPI_Request q[4];
                int d = -1, p = -1;
                MPIX_Win_istart(gx, 0, win, &q[0]);
                MPIX_Win_icomplete(win, &q[1]);
                MPIX_Win_ilock(MPI_LOCK_SHARED, X, 0, win, &q[2]);
                nbt_counts(win, &d, &p);
                int rc = issue(c, r, f, path, X, &req);
                MPIX_Win_iunlock(X, win, &q[3]);
                nbt_send(X, 5, 0);
                int wrc = finish(&req);
                for (int k = 0; k < 4; k++) {
                    int k_rc = finish(&q[k]);
                    if (wrc == MPI_SUCCESS)
                        wrc = k_rc;
                }
                if (d < 1 && bad++ < 6)
                    nbt_diag("%s, %s: the lock epoch was not deferred", call_name[c], r->what);
                judge(rc != MPI_SUCCESS ? rc : wrc, cls, call_name[c], r, &bad);
                MPI_Group_free(&gx);
            } else if (conf_rank == X) {
                MPI_Group go = nbt_group(O, -1);
                MPI_Request q[2];
                nbt_recv(O, 5);
                MPIX_Win_ipost(go, 0, win, &q[0]);
                MPIX_Win_iwait(win, &q[1]);
                nbt_waitall(2, q, "the exposure epoch");
                MPI_Group_free(&go);
            }
        }
    if (conf_rank == O && path != P_DEFERRED)
        MPI_Win_unlock_all(win);
    nbt_barrier();
    int ok = intact(flavor_name[f]);
    close_win(f);
    tap_ok(bad == 0, "%s, %s: %d erroneous calls return their class (%d do not)", flavor_name[f],
           path_name[path], cases, bad);
    tap_ok(ok, "%s, %s: no window byte changed", flavor_name[f], path_name[path]);
}

int main(int argc, char **argv)
{
    nbt_init(&argc, &argv, 2);
    ty[T_I64] = MPI_INT64_T;
    ty[T_I32] = MPI_INT32_T;
    ty[T_F32] = MPI_FLOAT;
    ty[T_F64] = MPI_DOUBLE;
    ty[T_BYTE] = MPI_BYTE;
    MPI_Type_contiguous(2, MPI_INT64_T, &ty[T_UNC]); /* never committed */
    MPI_Type_contiguous(1, MPI_INT64_T, &ty[T_CONTIG]);
    MPI_Type_commit(&ty[T_CONTIG]);
    tap_plan(F_N * P_N * 2);
    int spans = conf_spans_nodes(MPI_COMM_WORLD);
    for (int f = 0; f < F_N; f++) {
        if (f == F_SHARED && spans) {
            /* Across nodes the shared flavor is itself bad input (MPI-3.1 §11.2.3). */
            MPI_Errhandler eh;
            MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int64_t *m = NULL;
            MPI_Win w = MPI_WIN_NULL;
            int rc = MPI_Win_allocate_shared(N * sizeof *m, sizeof *m, MPI_INFO_NULL,
                                             MPI_COMM_WORLD, &m, &w);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
            MPI_Errhandler_free(&eh);
            tap_ok(conf_class(rc) == MPI_ERR_RMA_SHARED && w == MPI_WIN_NULL,
                   "MPI_Win_allocate_shared over ranks of several nodes fails with "
                   "MPI_ERR_RMA_SHARED (got %s)",
                   conf_class_name(conf_class(rc)));
            tap_skip(P_N * 2 - 1, "the window's group spans nodes: no MPI_Win_allocate_shared");
            continue;
        }
        for (int p = 0; p < P_N; p++)
            run(f, p);
    }
    MPI_Type_free(&ty[T_UNC]);
    MPI_Type_free(&ty[T_CONTIG]);
    return nbt_done();
}
