/* nb_random.c — random mixes of blocking and nonblocking epochs of every kind, checked against a
 * sequential model (docs/nonblocking.md).
 *
 * From a seed every rank generates the same script: rounds of fence epochs, PSCW epochs (a random
 * access graph), exclusive or shared lock epochs (one target, or two shared locks held at once),
 * and lock_all epochs, each synchronization call blocking or nonblocking at random, with puts,
 * gets, accumulates and flushes (blocking, nonblocking + wait, or nonblocking left pending).
 * Nothing is waited for between rounds, except when the script switches between active-target
 * rounds (fence, PSCW) and passive-target ones (lock, lock_all), where MPI-3 forbids a window to
 * be exposed and locked at once: there every rank completes its requests and a barrier follows.
 *
 * Memory: every rank's window has one region per origin (only that origin puts and gets there)
 * and a few accumulate slots everyone adds to (MPI_SUM commutes). An origin's epochs activate in
 * order, each after the previous one completed, so its later puts overwrite its earlier ones and
 * its gets see its earlier puts: the final contents of every window and every get result follow
 * from the script alone. Within one epoch a slot is touched once, unless a flush that completed
 * remotely (and was waited for) separates the accesses. Every rank simulates the script, checks
 * its own window and its own get results, and names the seed, so a failure reproduces with
 * `--seeds S`. With --flags the window has all four reorder flags on, so an origin's epochs may
 * overlap; the script then writes every slot at most once and reads only slots nobody writes,
 * which keeps the result independent of the order in which overlapping epochs reach memory.
 * Options: --seeds S1,S2,... (default 1,2,3), --rounds N (default 60), --flags, --dump (print
 * this rank's epochs on stderr as they are run). */
#include "nb_util.h"

#define RMAX   40 /* slots per origin region: 6, or 40 with --flags */
#define GETS   8  /* --flags: slots at the end of each region that are only read */
#define A      4  /* accumulate slots */
#define MAXR   4  /* ranks the model handles */
#define MAXOPS 8  /* ops per epoch */
#define MAXEP  4096
#define MAXOP  (MAXEP * MAXOPS)

enum { OP_PUT, OP_GET, OP_ACC, OP_FLUSH };
enum { F_FLUSH, F_FLUSH_LOCAL, F_FLUSH_ALL, F_FLUSH_LOCAL_ALL };
enum { M_BLOCKING, M_NB_WAIT, M_NB_PENDING };
enum { EK_FENCE, EK_PSCW, EK_LOCK, EK_LOCK2, EK_LOCK_ALL };
static const char *const ek_name[] = {"fence", "PSCW", "lock", "two shared locks", "lock_all"};

typedef struct {
    int kind, target, slot, fkind, mode;
    int64_t value; /* put/acc: the value; get: the expected result */
    int64_t *buf;  /* origin buffer (put source, acc source, get result) */
} op_t;

typedef struct {
    int round, rank, kind;
    unsigned access, exposure; /* PSCW: rank masks */
    int target, target2, lock_type;
    int nb_open, nb_close, nb_wait; /* 1: nonblocking call (MPIX_Win_i*) */
    int first, nops;
    int sync_before; /* class switch: complete everything and barrier first */
} ep_t;

static ep_t eps[MAXEP];
static op_t ops[MAXOP];
static int64_t pool[MAXOP];
static int neps, nops;

static int64_t model[MAXR][MAXR * RMAX + A];
static int last_round[MAXR][MAXR * RMAX + A]; /* round of the last write, for diagnostics */
static int nslots;
static int R = 6;                /* slots per origin region */
static int flags_mode;           /* --flags: all four reorder flags on, every slot written once */
static int next_put[MAXR][MAXR]; /* --flags: next fresh slot of origin o's region at t */

static uint64_t rng_state;
static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int pick(int n)
{
    return (int)(rng() % (uint64_t)n);
}

/* ---- generation (identical on every rank) --------------------------------------------------- */

static unsigned char dirty[MAXR][MAXR * RMAX + A];

static void clean(int t)
{
    for (int r = 0; r < conf_size; r++)
        if (t < 0 || r == t)
            memset(dirty[r], 0, sizeof dirty[r]);
}

/* One data op by origin o toward target t (a clean slot of o's region, or an accumulate slot). */
static void gen_data_op(ep_t *e, int o, int t, int round)
{
    if (e->nops >= MAXOPS || nops >= MAXOP)
        return;
    op_t *op = &ops[nops];
    int k = pick(10);
    op->target = t;
    op->buf = &pool[nops];
    if (k < 3) { /* accumulate: any number of times */
        op->kind = OP_ACC;
        op->slot = conf_size * R + pick(A);
        op->value = 1 + pick(9);
        model[t][op->slot] += op->value;
        last_round[t][op->slot] = round;
    } else if (flags_mode) {
        /* Epochs may overlap: a put goes to a slot nobody wrote, a get reads a slot nobody
         * writes, so the order in which overlapping epochs reach memory does not matter. */
        int s;
        if (k < 7) {
            if (next_put[t][o] >= R - GETS)
                return;
            s = o * R + next_put[t][o]++;
            op->kind = OP_PUT;
            op->value = (int64_t)(rng() >> 20);
            model[t][s] = op->value;
            last_round[t][s] = round;
        } else {
            s = o * R + R - GETS + pick(GETS);
            op->kind = OP_GET;
            op->value = model[t][s];
        }
        op->slot = s;
    } else {
        int s = o * R + pick(R);
        if (dirty[t][s])
            return;
        dirty[t][s] = 1;
        op->slot = s;
        if (k < 7) {
            op->kind = OP_PUT;
            op->value = (int64_t)(rng() >> 20);
            model[t][s] = op->value;
            last_round[t][s] = round;
        } else {
            op->kind = OP_GET;
            op->value = model[t][s];
        }
    }
    nops++;
    e->nops++;
}

static void gen_flush(ep_t *e, int t)
{
    if (e->nops >= MAXOPS || nops >= MAXOP)
        return;
    op_t *op = &ops[nops++];
    e->nops++;
    op->kind = OP_FLUSH;
    op->mode = pick(3);
    op->target = t;
    if (e->kind == EK_LOCK_ALL || e->kind == EK_LOCK2)
        op->fkind = pick(4);
    else
        op->fkind = pick(2) ? F_FLUSH : (pick(2) ? F_FLUSH_LOCAL : F_FLUSH_ALL);
    if (op->fkind == F_FLUSH_ALL || op->fkind == F_FLUSH_LOCAL_ALL)
        op->target = -1;
    /* A remote flush that is waited for orders what follows after what precedes. */
    if (op->mode != M_NB_PENDING && (op->fkind == F_FLUSH || op->fkind == F_FLUSH_ALL))
        clean(op->target);
}

static ep_t *new_ep(int round, int rank, int kind)
{
    ep_t *e = &eps[neps++];
    memset(e, 0, sizeof *e);
    e->round = round;
    e->rank = rank;
    e->kind = kind;
    e->first = nops;
    e->nb_open = pick(2);
    e->nb_close = pick(2);
    e->nb_wait = pick(2);
    clean(-1);
    return e;
}

static void generate(int rounds)
{
    neps = nops = 0;
    nslots = conf_size * R + A;
    memset(next_put, 0, sizeof next_put);
    for (int t = 0; t < conf_size; t++)
        for (int s = 0; s < nslots; s++) {
            model[t][s] = conf_val(1, t, s);
            last_round[t][s] = -1;
        }
    int prev_active = -1;
    for (int round = 0; round < rounds && neps + 2 * conf_size <= MAXEP; round++) {
        /* Mostly stay in the class of the previous round (switches cost a barrier). */
        int active = prev_active < 0 || pick(4) == 0 ? pick(2) : prev_active;
        int kind = active ? pick(2) : EK_LOCK + pick(3); /* fence, PSCW | lock, two, lock_all */
        int sync = prev_active >= 0 && prev_active != active;
        int first_ep = neps;
        if (kind == EK_FENCE) {
            for (int o = 0; o < conf_size; o++) {
                ep_t *e = new_ep(round, o, EK_FENCE);
                int n = pick(5);
                for (int i = 0; i < n; i++)
                    gen_data_op(e, o, pick(conf_size), round);
            }
        } else if (kind == EK_PSCW) {
            unsigned acc[MAXR] = {0};
            for (int o = 0; o < conf_size; o++)
                for (int t = 0; t < conf_size; t++)
                    if (t != o && pick(2))
                        acc[o] |= 1u << t;
            for (int o = 0; o < conf_size; o++) {
                ep_t *e = new_ep(round, o, EK_PSCW);
                e->access = acc[o];
                for (int p = 0; p < conf_size; p++)
                    if (acc[p] & (1u << o))
                        e->exposure |= 1u << p;
                int n = e->access ? pick(5) : 0;
                for (int i = 0; i < n; i++) {
                    int t;
                    do
                        t = pick(conf_size);
                    while (!(e->access & (1u << t)));
                    gen_data_op(e, o, t, round);
                }
            }
        } else {
            for (int o = 0; o < conf_size; o++) {
                int n = kind == EK_LOCK ? pick(3) : pick(2);
                for (int j = 0; j < n; j++) {
                    ep_t *e = new_ep(round, o, kind);
                    e->target = pick(conf_size);
                    e->lock_type =
                        kind == EK_LOCK && pick(2) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
                    if (kind == EK_LOCK2) {
                        do
                            e->target2 = pick(conf_size);
                        while (e->target2 == e->target && conf_size > 1);
                    }
                    int m = 1 + pick(6);
                    for (int i = 0; i < m; i++) {
                        int t = e->kind == EK_LOCK    ? e->target
                                : e->kind == EK_LOCK2 ? (pick(2) ? e->target : e->target2)
                                                      : pick(conf_size);
                        if (pick(4) == 0)
                            gen_flush(e, t);
                        else
                            gen_data_op(e, o, t, round);
                    }
                }
            }
        }
        if (neps > first_ep) { /* (a round may have no epoch at all: then nothing switched) */
            eps[first_ep].sync_before = sync;
            prev_active = active;
        }
    }
}

/* ---- execution (this rank's epochs) --------------------------------------------------------- */

static MPI_Win win;
static int64_t *base;
static MPI_Request *reqs;
static int nreq;
static MPI_Group groups[MAXEP];
static int ngroups;

static void keep(MPI_Request r)
{
    reqs[nreq++] = r;
}

static void sync_all(unsigned seed, const char *why)
{
    char what[160];
    snprintf(what, sizeof what, "seed %u: this rank's requests (%s)", seed, why);
    nbt_waitall(nreq, reqs, what);
    nreq = 0;
    for (int i = 0; i < ngroups; i++)
        MPI_Group_free(&groups[i]);
    ngroups = 0;
    nbt_barrier();
}

static MPI_Group group(unsigned mask)
{
    return groups[ngroups++] = nbt_group_mask(mask);
}

static void do_flush(const op_t *op, unsigned seed, const ep_t *e)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int t = op->target;
    if (op->mode == M_BLOCKING) {
        switch (op->fkind) {
        case F_FLUSH:
            MPI_Win_flush(t, win);
            break;
        case F_FLUSH_LOCAL:
            MPI_Win_flush_local(t, win);
            break;
        case F_FLUSH_ALL:
            MPI_Win_flush_all(win);
            break;
        default:
            MPI_Win_flush_local_all(win);
        }
        return;
    }
    switch (op->fkind) {
    case F_FLUSH:
        MPIX_Win_iflush(t, win, &r);
        break;
    case F_FLUSH_LOCAL:
        MPIX_Win_iflush_local(t, win, &r);
        break;
    case F_FLUSH_ALL:
        MPIX_Win_iflush_all(win, &r);
        break;
    default:
        MPIX_Win_iflush_local_all(win, &r);
    }
    if (op->mode == M_NB_WAIT)
        nbt_wait(&r, "seed %u: iflush in round %d's %s epoch", seed, e->round, ek_name[e->kind]);
    else
        keep(r);
}

static void do_ops(const ep_t *e, unsigned seed)
{
    for (int i = e->first; i < e->first + e->nops; i++) {
        op_t *op = &ops[i];
        switch (op->kind) {
        case OP_PUT:
            *op->buf = op->value;
            MPI_Put(op->buf, 1, MPI_INT64_T, op->target, op->slot, 1, MPI_INT64_T, win);
            break;
        case OP_ACC:
            *op->buf = op->value;
            MPI_Accumulate(op->buf, 1, MPI_INT64_T, op->target, op->slot, 1, MPI_INT64_T, MPI_SUM,
                           win);
            break;
        case OP_GET:
            *op->buf = -1;
            MPI_Get(op->buf, 1, MPI_INT64_T, op->target, op->slot, 1, MPI_INT64_T, win);
            break;
        default:
            do_flush(op, seed, e);
        }
    }
}

static void run_epoch(const ep_t *e, unsigned seed)
{
    MPI_Request r;
    switch (e->kind) {
    case EK_FENCE:
        if (e->nb_open) {
            MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r);
            keep(r);
        } else {
            MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        }
        do_ops(e, seed);
        if (e->nb_close) {
            MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r);
            keep(r);
        } else {
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        }
        break;
    case EK_PSCW:
        if (e->exposure) {
            if (e->nb_open) {
                MPIX_Win_ipost(group(e->exposure), 0, win, &r);
                keep(r);
            } else {
                MPI_Win_post(group(e->exposure), 0, win);
            }
        }
        if (e->access) {
            if (e->nb_open) {
                MPIX_Win_istart(group(e->access), 0, win, &r);
                keep(r);
            } else {
                MPI_Win_start(group(e->access), 0, win);
            }
            do_ops(e, seed);
            if (e->nb_close) {
                MPIX_Win_icomplete(win, &r);
                keep(r);
            } else {
                MPI_Win_complete(win);
            }
        }
        if (e->exposure) {
            if (e->nb_wait) {
                MPIX_Win_iwait(win, &r);
                keep(r);
            } else {
                MPI_Win_wait(win);
            }
        }
        break;
    case EK_LOCK:
    case EK_LOCK2:
        if (e->nb_open) {
            MPIX_Win_ilock(e->lock_type, e->target, 0, win, &r);
            keep(r);
            if (e->kind == EK_LOCK2) {
                MPIX_Win_ilock(MPI_LOCK_SHARED, e->target2, 0, win, &r);
                keep(r);
            }
        } else {
            MPI_Win_lock(e->lock_type, e->target, 0, win);
            if (e->kind == EK_LOCK2)
                MPI_Win_lock(MPI_LOCK_SHARED, e->target2, 0, win);
        }
        do_ops(e, seed);
        if (e->kind == EK_LOCK2 && e->nb_wait) { /* unlock in the other order */
            if (e->nb_close) {
                MPIX_Win_iunlock(e->target2, win, &r);
                keep(r);
            } else {
                MPI_Win_unlock(e->target2, win);
            }
        }
        if (e->nb_close) {
            MPIX_Win_iunlock(e->target, win, &r);
            keep(r);
        } else {
            MPI_Win_unlock(e->target, win);
        }
        if (e->kind == EK_LOCK2 && !e->nb_wait) {
            if (e->nb_close) {
                MPIX_Win_iunlock(e->target2, win, &r);
                keep(r);
            } else {
                MPI_Win_unlock(e->target2, win);
            }
        }
        break;
    case EK_LOCK_ALL:
        if (e->nb_open) {
            MPIX_Win_ilock_all(0, win, &r);
            keep(r);
        } else {
            MPI_Win_lock_all(0, win);
        }
        do_ops(e, seed);
        if (e->nb_close) {
            MPIX_Win_iunlock_all(win, &r);
            keep(r);
        } else {
            MPI_Win_unlock_all(win);
        }
        break;
    }
}

/* --dump: this rank's epochs as it runs them, on stderr (to read a failing seed's script). */
static int dump;

static void dump_epoch(const ep_t *e)
{
    static const char *const opn[] = {"put", "get", "acc", "flush"};
    static const char *const fln[] = {"flush", "flush_local", "flush_all", "flush_local_all"};
    static const char *const mdn[] = {"blocking", "i+wait", "i-pending"};
    char line[1024];
    int n = snprintf(line, sizeof line, "rank %d round %d %s%s open=%s close=%s", conf_rank,
                     e->round, ek_name[e->kind], e->sync_before ? " (after barrier)" : "",
                     e->nb_open ? "i" : "b", e->nb_close ? "i" : "b");
    if (e->kind == EK_PSCW)
        n += snprintf(line + n, sizeof line - (size_t)n, " access=%#x exposure=%#x wait=%s",
                      e->access, e->exposure, e->nb_wait ? "i" : "b");
    if (e->kind == EK_LOCK || e->kind == EK_LOCK2)
        n += snprintf(line + n, sizeof line - (size_t)n, " target=%d%s%d", e->target,
                      e->kind == EK_LOCK2 ? "+" : "", e->kind == EK_LOCK2 ? e->target2 : -1);
    if (e->kind == EK_LOCK)
        n += snprintf(line + n, sizeof line - (size_t)n, " %s",
                      e->lock_type == MPI_LOCK_EXCLUSIVE ? "excl" : "shared");
    for (int i = e->first; i < e->first + e->nops && n < (int)sizeof line - 40; i++) {
        const op_t *op = &ops[i];
        if (op->kind == OP_FLUSH)
            n += snprintf(line + n, sizeof line - (size_t)n, " | %s(%d) %s", fln[op->fkind],
                          op->target, mdn[op->mode]);
        else
            n += snprintf(line + n, sizeof line - (size_t)n, " | %s %d[%d]", opn[op->kind],
                          op->target, op->slot);
    }
    fprintf(stderr, "%s\n", line);
}

static void one_seed(unsigned seed, int rounds)
{
    rng_state = seed;
    generate(rounds);
    int create = seed % 2;
    void *mem = NULL;
    MPI_Aint bytes = (MPI_Aint)nslots * (MPI_Aint)sizeof(int64_t);
    MPI_Info info = MPI_INFO_NULL;
    if (flags_mode) {
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIX_A_A_A_R, "1");
        MPI_Info_set(info, MPIX_A_A_E_R, "1");
        MPI_Info_set(info, MPIX_E_A_E_R, "1");
        MPI_Info_set(info, MPIX_E_A_A_R, "1");
    }
    if (create) {
        mem = malloc((size_t)bytes);
        MPI_Win_create(mem, bytes, sizeof(int64_t), info, MPI_COMM_WORLD, &win);
        base = mem;
    } else {
        conf_win_allocate(bytes, sizeof(int64_t), info, MPI_COMM_WORLD, &base, &win);
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    for (int s = 0; s < nslots; s++)
        base[s] = conf_val(1, conf_rank, s);
    nbt_barrier();

    int mine = 0, nb = 0, blocking = 0, syncs = 0;
    for (int i = 0; i < neps; i++) {
        const ep_t *e = &eps[i];
        if (e->sync_before) {
            sync_all(seed, "active/passive switch");
            syncs++;
        }
        if (e->rank != conf_rank)
            continue;
        mine++;
        nb += e->nb_open + e->nb_close;
        blocking += 2 - e->nb_open - e->nb_close;
        if (dump)
            dump_epoch(e);
        run_epoch(e, seed);
    }
    sync_all(seed, "end of the script");
    if (conf_rank == 0)
        tap_diag("seed %u: %d rounds, %d epochs (%d on rank 0: %d nonblocking and %d blocking "
                 "open/close calls), %d ops, %d active/passive switches, %s window",
                 seed, rounds, neps, mine, nb, blocking, nops, syncs,
                 create ? "MPI_Win_create" : conf_window_name());

    int bad = 0, first = -1;
    for (int s = 0; s < nslots; s++)
        if (nbt_load(&base[s]) != model[conf_rank][s]) {
            if (first < 0)
                first = s;
            bad++;
        }
    if (bad) {
        int o = first < conf_size * R ? first / R : -1;
        nbt_diag("seed %u: slot %d (%s%d) holds %lld, the model says %lld (last "
                 "written in round %d); %d of %d slots differ",
                 seed, first, o >= 0 ? "region of origin " : "accumulate slot ",
                 o >= 0 ? o : first - conf_size * R, (long long)nbt_load(&base[first]),
                 (long long)model[conf_rank][first], last_round[conf_rank][first], bad, nslots);
    }
    tap_ok(!bad,
           "seed %u, %d ranks%s: every window holds what the sequential model of the script "
           "says",
           seed, conf_size, flags_mode ? ", all reorder flags on" : "");

    bad = 0;
    int gets = 0;
    for (int i = 0; i < neps; i++) {
        const ep_t *e = &eps[i];
        if (e->rank != conf_rank)
            continue;
        for (int j = e->first; j < e->first + e->nops; j++)
            if (ops[j].kind == OP_GET) {
                gets++;
                if (*ops[j].buf != ops[j].value && bad++ == 0)
                    nbt_diag("seed %u: the MPI_Get of round %d's %s epoch (slot %d of "
                             "rank %d) returned %lld, the model says %lld",
                             seed, e->round, ek_name[e->kind], ops[j].slot, ops[j].target,
                             (long long)*ops[j].buf, (long long)ops[j].value);
            }
    }
    if (bad)
        nbt_diag("seed %u: %d of %d gets wrong", seed, bad, gets);
    tap_ok(!bad, "seed %u, %d ranks%s: every MPI_Get returned what the model says %s", seed,
           conf_size, flags_mode ? ", all reorder flags on" : "",
           flags_mode ? "(slots nobody writes)" : "(the origin's earlier epochs had completed)");
    conf_win_free(&win);
    free(mem);
}

int main(int argc, char **argv)
{
    unsigned seeds[64] = {1, 2, 3};
    int nseeds = 3, rounds = 60;
    nbt_init(&argc, &argv, 2);
    if (conf_size > MAXR)
        tap_bail_out("nb_random models at most %d ranks", MAXR);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            nseeds = 0;
            for (char *p = argv[++i]; *p && nseeds < 64;) {
                seeds[nseeds++] = (unsigned)strtoul(p, &p, 10);
                if (*p == ',')
                    p++;
                else
                    break;
            }
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--dump")) {
            dump = 1;
        } else if (!strcmp(argv[i], "--flags")) {
            flags_mode = 1;
            R = RMAX;
        }
    }
    reqs = malloc((size_t)MAXOP * 2 * sizeof *reqs);
    tap_plan(2 * nseeds);
    for (int i = 0; i < nseeds; i++)
        one_seed(seeds[i], rounds);
    free(reqs);
    return nbt_done();
}
