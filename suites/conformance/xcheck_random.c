/* xcheck_random.c — a random RMA program whose every result is determined, for cross-checking
 * implementations byte for byte (suites/conformance/xcheck.sh runs it on the vendor MPI, on
 * libnbrma within one node and across virtual nodes, and compares).
 *
 * Each round picks a window flavor (create, allocate, dynamic), a synchronization mode (fence,
 * PSCW, lock_all, a lock exclusive or shared per target) and, for every origin and target, a few
 * operations with random derived datatypes on both sides (vectors, indexed and struct types,
 * subarrays, resized types with negative lower bounds, over MPI_INT, MPI_DOUBLE, MPI_CHAR,
 * MPI_LONG_LONG and the padded pairs MPI_SHORT_INT and MPI_DOUBLE_INT): put, get,
 * accumulate, get_accumulate, fetch_and_op, compare_and_swap, request-based variants, and
 * accumulates from every origin onto a shared region. Nothing races, so the outcome is one:
 *   - window memory alternates between a read-only half (gets read it) and a written half split
 *     into one slot per origin, each operation in a cell of its own;
 *   - the shared region only receives commutative integer sums;
 *   - every origin and result buffer sits inside arenas filled with a canary, so a byte written
 *     outside a type map shows up.
 * After each round every rank hashes its window, its origin arena and its result arena in 4 KiB
 * chunks and writes the hashes (with a one-line description of each operation) to
 * --out PREFIX.<rank>. Options: --seed S, --rounds R, --out PREFIX. Exit 0 when the run completed
 * and no byte of the result arena outside the operations' result cells changed (the comparison
 * between runs is the script's). Buffers are placed by the spans the type maps give: where the
 * MPI library misreports one (Open MPI 4.1.4, hvector with a byte stride of -1), it says so on
 * stderr and the type map wins. */
#include <stdarg.h>
#include <stdint.h>

#include "conf.h"

#define CELL    4096           /* bytes of a cell: one small operation */
#define NCELL   6              /* cells per origin slot */
#define BIG     (160 * 1024)   /* one large operation per slot and round */
#define SLOT    (NCELL * CELL + BIG)
#define SHARED  1024           /* ints of the shared accumulate region */
#define CHUNK   4096
#define MARGIN  BIG            /* in front of window and arenas: a type's span may start above
                                  its buffer pointer (lb > 0), and the pointer must not go
                                  below the memory (target_disp >= 0) */
#define CANARY  0xa5

static uint64_t rng_state;
static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int rndi(int n) /* [0, n) */
{
    return (int)(rnd() % (uint64_t)n);
}

typedef struct {
    MPI_Datatype t;
    int size, ext, cls; /* cls: 0 integer, 1 floating, 2 char, 3 pair */
    const char *name;
} basic_t;
static basic_t basics[6];

static FILE *out;
static int misreported; /* types whose span the MPI library misreported */
static int nslots;
static MPI_Aint wbytes, half;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
}

/* A random datatype holding exactly n elements of b, with its count (1 or k) and the bytes it
 * spans from the buffer pointer: [lo, hi). Span at most max bytes, or MPI_DATATYPE_NULL. */
typedef struct {
    MPI_Datatype t;
    int count;
    MPI_Aint lo, hi;
    char desc[96];
} rtype_t;

static void span_of(rtype_t *r)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(r->t, &lb, &ext);
    MPI_Type_get_true_extent(r->t, &tlb, &text);
    MPI_Aint step = (MPI_Aint)(r->count - 1) * ext;
    r->lo = tlb + (step < 0 ? step : 0);
    r->hi = tlb + text + (step > 0 ? step : 0);
}

static int gen_type(const basic_t *b, int n, MPI_Aint max, rtype_t *r)
{
    for (int tries = 0; tries < 50; tries++) {
        MPI_Datatype t = MPI_DATATYPE_NULL, inner;
        int kind = rndi(8), count = 1, e = b->ext, by_map = 0;
        MPI_Aint map_lo = 0, map_hi = 0; /* by_map: the span the type map gives */
        switch (kind) {
        case 0: /* n elements, maybe as count x contiguous */
            if (n % 2 == 0 && rndi(2)) {
                MPI_Type_contiguous(n / 2, b->t, &t), count = 2;
                snprintf(r->desc, sizeof r->desc, "2 x contiguous(%d)", n / 2);
            } else {
                t = b->t, count = n;
                snprintf(r->desc, sizeof r->desc, "%d x %s", n, b->name);
            }
            break;
        case 1: { /* vector */
            int bl = 1;
            for (int d = 1 + rndi(4); d > 1; d--)
                if (n % d == 0) {
                    bl = d;
                    break;
                }
            int stride = bl + rndi(4);
            MPI_Type_vector(n / bl, bl, stride, b->t, &t);
            snprintf(r->desc, sizeof r->desc, "vector(%d, %d, %d)", n / bl, bl, stride);
            break;
        }
        case 2: { /* indexed: random blocks with gaps */
            int lens[64], disp[64], k = 0, at = rndi(3), left = n;
            while (left > 0 && k < 64) {
                int l = k == 63 ? left : 1 + rndi(left < 5 ? left : 5);
                lens[k] = l, disp[k] = at;
                at += l + rndi(3);
                left -= l, k++;
            }
            MPI_Type_indexed(k, lens, disp, b->t, &t);
            snprintf(r->desc, sizeof r->desc, "indexed(%d blocks)", k);
            break;
        }
        case 3: { /* struct of one basic type, byte displacements, maybe reversed order */
            int lens[2] = {n / 2, n - n / 2};
            MPI_Aint d[2];
            MPI_Datatype ty[2] = {b->t, b->t};
            if (rndi(2))
                d[0] = 0, d[1] = (MPI_Aint)(lens[0] + 1 + rndi(3)) * e;
            else /* the second block below the first: type-map order is not address order */
                d[1] = 0, d[0] = (MPI_Aint)(lens[1] + rndi(3)) * e;
            MPI_Type_create_struct(lens[0] ? 2 : 1, lens[0] ? lens : lens + 1,
                                   lens[0] ? d : d + 1, lens[0] ? ty : ty + 1, &t);
            snprintf(r->desc, sizeof r->desc, "struct(%d@%ld, %d@%ld)", lens[0], (long)d[0],
                     lens[1], (long)d[1]);
            break;
        }
        case 4: { /* resized with a negative lower bound, several of them */
            if (n % 2)
                continue;
            int half_n = n / 2;
            MPI_Type_vector(half_n, 1, 2, b->t, &inner);
            MPI_Aint lb = -(MPI_Aint)e * (1 + rndi(3)), ext = (MPI_Aint)(2 * half_n + 1) * e;
            MPI_Type_create_resized(inner, lb, ext, &t);
            MPI_Type_free(&inner);
            count = 2;
            /* elements at -lb offsets: the buffer pointer sits after the span's start */
            snprintf(r->desc, sizeof r->desc, "2 x resized(vector(%d,1,2), lb %ld, ext %ld)",
                     half_n, (long)lb, (long)ext);
            break;
        }
        case 5: { /* subarray: a column block of a 2-D array, C order */
            int cols = 2 + rndi(3);
            if (n % cols)
                continue;
            int rows = n / cols, sizes[2] = {rows + rndi(3), cols + 1 + rndi(3)},
                sub[2] = {rows, cols}, start[2] = {rndi(sizes[0] - rows + 1), 1};
            MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, b->t, &t);
            snprintf(r->desc, sizeof r->desc, "subarray(%dx%d of %dx%d)", rows, cols, sizes[0],
                     sizes[1]);
            break;
        }
        case 6: { /* hvector of single elements, backwards */
            MPI_Aint stride = -(MPI_Aint)e * (1 + rndi(2)), blo, bext;
            MPI_Type_create_hvector(n, 1, stride, b->t, &t);
            snprintf(r->desc, sizeof r->desc, "hvector(%d, 1, stride %ld)", n, (long)stride);
            /* Its span from the type map (MPI-3.1 §4.1.2: element k at k * stride), not from the
             * library: Open MPI 4.1.4 reports true_lb 0 for a byte stride of -1 (and moves the
             * data forward), so a buffer placed by its answer let the type map reach 81919 bytes
             * below its cell, into other operations' result buffers — two gets of one epoch then
             * wrote the same bytes, and the outcome depended on which completed last. */
            MPI_Type_get_true_extent(b->t, &blo, &bext);
            map_lo = (MPI_Aint)(n - 1) * stride + blo, map_hi = blo + bext, by_map = 1;
            break;
        }
        default: { /* indexed_block */
            int bl = n % 3 == 0 ? 3 : n % 2 == 0 ? 2 : 1, k = n / bl, disp[64];
            if (k > 64)
                continue;
            for (int i = 0, at = 0; i < k; i++)
                disp[i] = at, at += bl + rndi(2);
            MPI_Type_create_indexed_block(k, bl, disp, b->t, &t);
            snprintf(r->desc, sizeof r->desc, "indexed_block(%d x %d)", k, bl);
            break;
        }
        }
        if (t != b->t)
            MPI_Type_commit(&t);
        r->t = t, r->count = count;
        span_of(r);
        if (by_map && (r->lo != map_lo || r->hi != map_hi)) {
            if (!misreported++ && conf_rank == 0)
                fprintf(stderr,
                        "xcheck_random: the MPI library reports bytes [%ld, %ld) for %s of %s, "
                        "whose type map spans [%ld, %ld) (a vendor bug); buffers are placed by "
                        "the type map\n",
                        (long)r->lo, (long)r->hi, r->desc, b->name, (long)map_lo, (long)map_hi);
            r->lo = map_lo, r->hi = map_hi;
        }
        if (r->hi - r->lo <= max)
            return 1;
        if (t != b->t)
            MPI_Type_free(&t);
    }
    r->t = b->t, r->count = n; /* contiguous always fits (callers keep n * ext <= max) */
    snprintf(r->desc, sizeof r->desc, "%d x %s", n, b->name);
    span_of(r);
    return 1;
}

static void free_type(rtype_t *r, const basic_t *b)
{
    if (r->t != b->t)
        MPI_Type_free(&r->t);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void dump(const char *what, const unsigned char *p, MPI_Aint n, int round)
{
    for (MPI_Aint o = 0; o < n; o += CHUNK)
        fprintf(out, "H %d %s %ld %016llx\n", round, what, (long)o,
                (unsigned long long)fnv(p + o, (size_t)(n - o < CHUNK ? n - o : CHUNK)));
}

enum { OP_PUT, OP_GET, OP_ACC, OP_GACC, OP_FOP, OP_CAS, OP_RPUT, OP_RGET, OP_NOPS };
static const char *const opname[] = {"put", "get", "acc", "get_acc", "fetch_and_op",
                                     "cas", "rput", "rget"};

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    uint64_t seed = 1;
    int rounds = 10;
    const char *prefix = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            prefix = argv[++i];
        else {
            if (conf_rank == 0)
                fprintf(stderr, "xcheck_random: unknown option '%s' (--seed S, --rounds R, "
                                "--out PREFIX)\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (!prefix) {
        if (conf_rank == 0)
            fprintf(stderr, "xcheck_random: --out PREFIX is required\n");
        MPI_Finalize();
        return 2;
    }
    char path[512];
    snprintf(path, sizeof path, "%s.%d", prefix, conf_rank);
    if (!(out = fopen(path, "w"))) {
        fprintf(stderr, "xcheck_random: cannot write %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    basics[0] = (basic_t){MPI_INT, 4, 4, 0, "MPI_INT"};
    basics[1] = (basic_t){MPI_DOUBLE, 8, 8, 1, "MPI_DOUBLE"};
    basics[2] = (basic_t){MPI_CHAR, 1, 1, 2, "MPI_CHAR"};
    basics[3] = (basic_t){MPI_LONG_LONG, 8, 8, 0, "MPI_LONG_LONG"};
    basics[4] = (basic_t){MPI_SHORT_INT, 6, 8, 3, "MPI_SHORT_INT"};
    basics[5] = (basic_t){MPI_DOUBLE_INT, 12, 16, 3, "MPI_DOUBLE_INT"};

    nslots = conf_size;
    half = (MPI_Aint)nslots * SLOT;
    wbytes = MARGIN + 2 * half + SHARED * (MPI_Aint)sizeof(int);
    /* Arenas: each operation's origin and result buffers, one slot per (target, cell). */
    const MPI_Aint arena = MARGIN + (MPI_Aint)conf_size * SLOT;
    unsigned char *wcreate = conf_mem_alloc((size_t)wbytes), *wdyn = malloc((size_t)wbytes), *walloc;
    unsigned char *org = malloc((size_t)arena), *res = malloc((size_t)arena);
    unsigned char *inside = malloc((size_t)arena); /* the result cells of a round */
    long stray = 0; /* result bytes written outside them */
    int *scratch = malloc((size_t)conf_size * 3 * SHARED * sizeof *scratch); /* shared sums */
    MPI_Win wins[3];
    MPI_Win_create(wcreate, wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wins[0]);
    MPI_Win_allocate(wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &walloc, &wins[1]);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wins[2]);
    MPI_Win_attach(wins[2], wdyn, wbytes);
    unsigned char *wmem[3] = {wcreate, walloc, wdyn};
    MPI_Aint mybase, *dbase = malloc((size_t)conf_size * sizeof *dbase);
    MPI_Get_address(wdyn, &mybase);
    MPI_Allgather(&mybase, 1, MPI_AINT, dbase, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++) { /* deterministic initial contents */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, wins[k]);
        for (MPI_Aint i = 0; i < wbytes; i++)
            wmem[k][i] = (unsigned char)(i * 7 + conf_rank * 13 + k);
        memset(wmem[k] + MARGIN + 2 * half, 0, SHARED * sizeof(int));
        MPI_Win_unlock(conf_rank, wins[k]);
    }
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int round = 0; round < rounds; round++) {
        rng_state = seed * 1000003 + (uint64_t)round;
        int wk = rndi(3), mode = rndi(5), ro = round & 1; /* which half is read-only */
        MPI_Win win = wins[wk];
        static const char *const mname[] = {"fence", "pscw", "lock_all", "lock excl", "lock shared"};
        if (conf_rank == 0)
            logf_("R %d window %s sync %s\n", round, wk == 0 ? "create" : wk == 1 ? "allocate" : "dynamic",
                  mname[mode]);
        memset(org, 0, (size_t)arena);
        for (MPI_Aint i = 0; i < arena; i++)
            org[i] = (unsigned char)(i * 31 + conf_rank * 17 + round);
        memset(res, CANARY, (size_t)arena);
        /* The plan: every rank draws every origin's operations in the same order, and keeps
         * its own. */
        typedef struct {
            int origin, target, op, cell, b, n, acc_op, shared_off;
            rtype_t ot, tt, rt;
            MPI_Aint toff, ooff, roff; /* target byte offset; origin/result arena offsets */
            MPI_Aint a_at, room;       /* the operation's cell in the arenas */
        } plan_t;
        plan_t *plan = malloc((size_t)conf_size * conf_size * (NCELL + 2) * sizeof *plan);
        int np = 0;
        for (int o = 0; o < conf_size; o++)
            for (int t = 0; t < conf_size; t++) {
                int nops = 1 + rndi(NCELL);
                for (int c = 0; c <= nops; c++) {
                    plan_t p = {.origin = o, .target = t, .cell = c};
                    int big = c == nops; /* the slot's large operation */
                    if (big && rndi(2))
                        continue;
                    p.op = rndi(OP_NOPS);
                    p.b = rndi(6);
                    const basic_t *b = &basics[p.b];
                    if (big) {
                        p.op = rndi(3) == 0 ? OP_ACC : rndi(2) ? OP_PUT : OP_GET;
                        p.n = (BIG / 2) / b->ext;
                    } else {
                        p.n = 1 + rndi(CELL / 4 / b->ext);
                    }
                    if ((p.op == OP_FOP || p.op == OP_CAS) ) {
                        if (p.op == OP_CAS && (b->cls != 0))
                            p.op = OP_PUT;
                        else
                            p.n = 1;
                    }
                    /* Accumulate operations: integers any of four; floating-point data only
                     * MPI_REPLACE (the bytes are arbitrary: NaN payloads of a sum depend on the
                     * operand order an implementation picks); MPI_SHORT_INT also MAXLOC and
                     * MINLOC. */
                    p.acc_op = b->cls == 0 ? rndi(4) : b->t == MPI_SHORT_INT ? rndi(3) : 0;
                    MPI_Aint room = big ? BIG : CELL;
                    gen_type(b, p.n, room / 2, &p.tt);
                    gen_type(b, p.n, room / 2, &p.ot);
                    gen_type(b, p.n, room / 2, &p.rt);
                    if (p.op == OP_FOP || p.op == OP_CAS) { /* predefined types only */
                        free_type(&p.tt, b), free_type(&p.ot, b), free_type(&p.rt, b);
                        p.tt = p.ot = p.rt = (rtype_t){.t = b->t, .count = 1, .lo = 0, .hi = b->ext};
                        snprintf(p.tt.desc, sizeof p.tt.desc, "%s", b->name);
                    }
                    MPI_Aint cell_at = MARGIN + (MPI_Aint)o * SLOT +
                                       (big ? NCELL * CELL : (MPI_Aint)c * CELL);
                    MPI_Aint rw = ro ? 0 : half, rdh = ro ? half : 0;
                    /* the target's buffer pointer: its span starts at the cell's start */
                    p.toff = ((p.op == OP_GET || p.op == OP_RGET) ? rdh : rw) + cell_at - p.tt.lo;
                    MPI_Aint a_at = MARGIN + (MPI_Aint)t * SLOT +
                                    (big ? NCELL * CELL : (MPI_Aint)c * CELL);
                    p.a_at = a_at, p.room = room;
                    p.ooff = a_at - p.ot.lo + 16;
                    p.roff = a_at - p.rt.lo + 16;
                    if (o == conf_rank)
                        plan[np++] = p;
                    else
                        free_type(&p.tt, b), free_type(&p.ot, b), free_type(&p.rt, b);
                }
            }
        /* shared region: a few commutative sums from every origin onto every target */
        int nshared = 1 + rndi(3);
        int sh_off[3], sh_n[3];
        for (int k = 0; k < nshared; k++)
            sh_off[k] = rndi(SHARED / 2), sh_n[k] = 1 + rndi(SHARED / 2);

        /* open the epoch */
        if (mode == 0)
            MPI_Win_fence(0, win);
        else if (mode == 1) {
            MPI_Win_post(world, 0, win);
            MPI_Win_start(world, 0, win);
        } else if (mode == 2)
            MPI_Win_lock_all(0, win);
        MPI_Request reqs[64];
        MPI_Status sts[64];
        int nreq = 0;
        for (int t0 = 0; t0 < conf_size; t0++) {
            int t = (conf_rank + t0) % conf_size;
            if (mode >= 3)
                MPI_Win_lock(mode == 3 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, win);
            MPI_Aint base = wk == 2 ? dbase[t] : 0;
            for (int i = 0; i < np; i++) {
                plan_t *p = &plan[i];
                if (p->target != t)
                    continue;
                const basic_t *b = &basics[p->b];
                static const MPI_Op iops[] = {MPI_REPLACE, MPI_SUM, MPI_MAX, MPI_BXOR};
                static const MPI_Op pops[] = {MPI_REPLACE, MPI_MAXLOC, MPI_MINLOC};
                MPI_Op aop = b->cls == 0                ? iops[p->acc_op]
                             : b->t == MPI_SHORT_INT ? pops[p->acc_op]
                                                         : MPI_REPLACE;
                void *ob = org + p->ooff, *rb = res + p->roff;
                MPI_Aint td = base + p->toff;
                int oc = p->ot.count, tc = p->tt.count, rc = p->rt.count;
                logf_("O %d %s %s -> %d off %ld: origin %s, target %s, result %s, op %d\n", round,
                      opname[p->op], b->name, t, (long)p->toff, p->ot.desc, p->tt.desc, p->rt.desc,
                      p->acc_op);
                switch (p->op) {
                case OP_PUT:
                    MPI_Put(ob, oc, p->ot.t, t, td, tc, p->tt.t, win);
                    break;
                case OP_GET:
                    MPI_Get(rb, rc, p->rt.t, t, td, tc, p->tt.t, win);
                    break;
                case OP_ACC:
                    MPI_Accumulate(ob, oc, p->ot.t, t, td, tc, p->tt.t, aop, win);
                    break;
                case OP_GACC:
                    MPI_Get_accumulate(ob, oc, p->ot.t, rb, rc, p->rt.t, t, td, tc, p->tt.t, aop,
                                       win);
                    break;
                case OP_FOP:
                    MPI_Fetch_and_op(ob, rb, b->t, t, td, aop, win);
                    break;
                case OP_CAS:
                    MPI_Compare_and_swap(ob, (char *)ob + 8, rb, b->t, t, td, win);
                    break;
                case OP_RPUT:
                case OP_RGET:
                    if (mode < 2) { /* request-based calls: passive target only */
                        if (p->op == OP_RPUT)
                            MPI_Put(ob, oc, p->ot.t, t, td, tc, p->tt.t, win);
                        else
                            MPI_Get(rb, rc, p->rt.t, t, td, tc, p->tt.t, win);
                    } else if (p->op == OP_RPUT) {
                        MPI_Rput(ob, oc, p->ot.t, t, td, tc, p->tt.t, win, &reqs[nreq++]);
                    } else {
                        MPI_Rget(rb, rc, p->rt.t, t, td, tc, p->tt.t, win, &reqs[nreq++]);
                    }
                    break;
                }
                if (nreq == 64) {
                    MPI_Waitall(nreq, reqs, sts);
                    nreq = 0;
                }
            }
            for (int k = 0; k < nshared; k++) {
                int *v = scratch + ((size_t)t * 3 + (size_t)k) * SHARED;
                for (int i = 0; i < sh_n[k]; i++)
                    v[i] = conf_rank * 7 + i + k;
                MPI_Accumulate(v, sh_n[k], MPI_INT, t, base + MARGIN + 2 * half + sh_off[k] * 4, sh_n[k],
                               MPI_INT, MPI_SUM, win);
            }
            if (mode >= 3) {
                MPI_Waitall(nreq, reqs, sts);
                nreq = 0;
                MPI_Win_unlock(t, win);
            }
        }
        MPI_Waitall(nreq, reqs, sts);
        if (mode == 0)
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        else if (mode == 1) {
            MPI_Win_complete(win);
            MPI_Win_wait(win);
        } else if (mode == 2)
            MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Each operation's result buffer lies inside its own cell of the result arena, so a
         * byte outside the cells of the operations that return data must keep the canary:
         * else a type map reached outside its buffer (into another operation's, where the
         * outcome depends on which completes last) or the MPI wrote where no type map points.
         * Deterministic, where the cross-run comparison sees such an overlap only when the
         * completion order changes. */
        memset(inside, 0, (size_t)arena);
        for (int i = 0; i < np; i++) {
            int op = plan[i].op;
            if (op == OP_GET || op == OP_RGET || op == OP_GACC || op == OP_FOP || op == OP_CAS)
                memset(inside + plan[i].a_at, 1, (size_t)plan[i].room);
        }
        for (MPI_Aint i = 0; i < arena; i++)
            if (!inside[i] && res[i] != CANARY && !stray++)
                fprintf(stderr,
                        "xcheck_random: rank %d round %d: result arena byte %ld (slot %ld, %ld "
                        "bytes into it) written outside every result buffer's cell\n",
                        conf_rank, round, (long)i, (long)((i - MARGIN) / SLOT),
                        (long)((i - MARGIN) % SLOT));
        for (int i = 0; i < np; i++) {
            const basic_t *b = &basics[plan[i].b];
            free_type(&plan[i].tt, b), free_type(&plan[i].ot, b), free_type(&plan[i].rt, b);
        }
        free(plan);
        MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
        dump("window", wmem[wk], wbytes, round);
        MPI_Win_unlock(conf_rank, win);
        dump("origin", org, arena, round);
        dump("result", res, arena, round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fclose(out);
    MPI_Group_free(&world);
    MPI_Win_detach(wins[2], wdyn);
    for (int k = 0; k < 3; k++)
        MPI_Win_free(&wins[k]);
    conf_mem_free(wcreate), free(wdyn), free(org), free(res), free(inside), free(dbase),
        free(scratch);
    tap_plan(2);
    tap_ok(1, "%d rounds of seed %llu ran; hashes in %s.<rank>", rounds, (unsigned long long)seed,
           prefix);
    long strays = 0;
    MPI_Allreduce(&stray, &strays, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    tap_ok(strays == 0, "no result byte outside the result buffers' cells changed (%ld did)",
           strays);
    return conf_done();
}
