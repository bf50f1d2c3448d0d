/* win.c — window objects: creation of the four flavors, attach/detach, free, and the calls that
 * report a window's properties. The handle given to the application is a vendor window (see
 * nbr.h); ref state is found from it through a hash table with a per-thread one-entry cache.
 *
 * A window costs what a vendor window costs: one vendor window (its handle, one context id),
 * whose node-shared memory also holds every rank's control block, and nonblocking collectives
 * on the application's communicator. What is known about a communicator (which ranks share a
 * node, whether the node is oversubscribed) is computed once and cached on it as an attribute.
 * No blocking collective of the vendor runs except the handle's own creation and free, and a
 * yielding barrier before each lets every rank enter it together (MPICH's spin inside is then
 * short, even with more ranks than cores).
 *
 * Memory: MPI_Win_allocate takes one symmetric node-shared object (symheap.c) or, with unequal
 * sizes, the vendor's MPI_Win_allocate_shared, like MPI_Win_allocate_shared itself (unless lazy
 * metadata is asked for: then symmetric with the largest stride, try_symmetric); every rank of
 * the node loads and stores its peers' segments directly. MPI_Win_create and dynamic windows
 * expose private memory that peers reach with CMA (process_vm_readv/writev); the process allows
 * that (PR_SET_PTRACER) only while such a window exists. An MPI_Win_create window over memory
 * from MPI_Alloc_mem (node-shared: mem.c) is mapped by its node peers like an allocated one.
 *
 * Windows whose group spans nodes (real ones, or virtual ones of NBRMA_RANKS_PER_NODE): each
 * pair gets its transport at creation (transport/tp.h) — shm within a node, am across nodes.
 * MPI_Win_allocate then takes private memory (the node's peers reach it with CMA, others with
 * messages), and MPI_Win_allocate_shared is an error (MPI_ERR_RMA_SHARED), as MPI-3.1 §11.2.3
 * says: its group must be able to share memory. Control blocks of remote peers are never
 * mapped; their lock words and notifications go through the transport. */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nbr.h"
#include "nbrma.h"
#include "transport/tp.h"

int nbr_impl_ref = 1;
int nbr_nwins;
uint64_t nbr_win_gen = 1;
_Thread_local MPI_Win nbr_tl_handle NBR_TLS_MODEL;
_Thread_local nbr_win_t *nbr_tl_win NBR_TLS_MODEL;
_Thread_local uint64_t nbr_tl_gen NBR_TLS_MODEL;

/* ---- registry: open addressing on the handle's bits (under the big lock) ---------------------- */

static nbr_win_t **table;
static size_t table_cap;

static size_t slot_of(MPI_Win win)
{
    return (size_t)nbr_handle_hash(&win, sizeof win) & (table_cap - 1);
}

nbr_win_t *nbr_win_lookup_slow(MPI_Win win)
{
    if (!__atomic_load_n(&nbr_nwins, __ATOMIC_RELAXED) || win == MPI_WIN_NULL)
        return NULL;
    nbr_win_t *w = NULL;
    NBR_ENTER();
    for (size_t i = table_cap ? slot_of(win) : 0; table_cap && table[i];
         i = (i + 1) & (table_cap - 1))
        if (table[i]->handle == win) {
            w = table[i];
            nbr_tl_handle = win;
            nbr_tl_win = w;
            nbr_tl_gen = __atomic_load_n(&nbr_win_gen, __ATOMIC_RELAXED);
            break;
        }
    NBR_LEAVE();
    return w;
}

static int registry_add(nbr_win_t *w)
{
    if ((size_t)(nbr_nwins + 1) * 2 > table_cap) {
        size_t old_cap = table_cap;
        nbr_win_t **old = table;
        size_t cap = table_cap ? table_cap * 2 : 16;
        nbr_win_t **t = calloc(cap, sizeof *t);
        if (!t)
            return MPI_ERR_NO_MEM;
        table = t;
        table_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i]) {
                size_t j = slot_of(old[i]->handle);
                while (table[j])
                    j = (j + 1) & (table_cap - 1);
                table[j] = old[i];
            }
        free(old);
    }
    size_t j = slot_of(w->handle);
    while (table[j])
        j = (j + 1) & (table_cap - 1);
    table[j] = w;
    __atomic_store_n(&nbr_nwins, nbr_nwins + 1, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

static void registry_remove(nbr_win_t *w)
{
    size_t i = slot_of(w->handle);
    while (table[i] != w)
        i = (i + 1) & (table_cap - 1);
    table[i] = NULL;
    /* Re-insert the rest of the cluster so lookups never stop early. */
    for (size_t j = (i + 1) & (table_cap - 1); table[j]; j = (j + 1) & (table_cap - 1)) {
        nbr_win_t *x = table[j];
        table[j] = NULL;
        size_t k = slot_of(x->handle);
        while (table[k])
            k = (k + 1) & (table_cap - 1);
        table[k] = x;
    }
    __atomic_store_n(&nbr_nwins, nbr_nwins - 1, __ATOMIC_RELAXED);
    /* Every thread's cached lookup is stale now (a new window may get the same handle). */
    __atomic_add_fetch(&nbr_win_gen, 1, __ATOMIC_RELEASE);
    nbr_tl_win = NULL;
    nbr_tl_handle = MPI_WIN_NULL;
}

/* ---- library set-up -------------------------------------------------------------------------- */

static void lib_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    nbr_settings_load();
}

/* Cross-memory access: peers read and write a create or dynamic window's private memory with
 * process_vm_readv/writev, which Yama's ptrace_scope=1 refuses between sibling processes unless
 * the target names a tracer. PR_SET_PTRACER_ANY lets any process of the user do it, so it is set
 * only while such a window exists and cleared with the last one (docs/ref.md). */
static int cma_windows;

static void cma_window(int delta)
{
#ifdef PR_SET_PTRACER
    int before = cma_windows;
    cma_windows += delta;
    if ((before == 0) == (cma_windows == 0))
        return;
    unsigned long who = cma_windows ? (unsigned long)PR_SET_PTRACER_ANY : 0UL;
    if (prctl(PR_SET_PTRACER, who, 0, 0, 0) != 0 && errno != EINVAL && nbr_cfg.VERBOSE)
        fprintf(stderr, "libnbrma: prctl(PR_SET_PTRACER) failed: %s\n", strerror(errno));
    /* EINVAL: no Yama in this kernel, nothing to allow */
#else
    cma_windows += delta;
#endif
}

int nbr_cma_windows(void)
{
    return cma_windows;
}

/* ---- reorder flags (paper 000 §VI-B): window info keys --------------------------------------- */

static const struct {
    const char *key, *short_key; /* Open MPI holds keys of at most 35 characters */
    unsigned bit;
} flag_keys[] = {
    {MPIX_WIN_ACCESS_AFTER_ACCESS_REORDER, MPIX_A_A_A_R, NBR_AAAR},
    {MPIX_WIN_ACCESS_AFTER_EXPOSURE_REORDER, MPIX_A_A_E_R, NBR_AAER},
    {MPIX_WIN_EXPOSURE_AFTER_EXPOSURE_REORDER, MPIX_E_A_E_R, NBR_EAER},
    {MPIX_WIN_EXPOSURE_AFTER_ACCESS_REORDER, MPIX_E_A_A_R, NBR_EAAR},
};
#define NBR_NFLAGS (int)(sizeof flag_keys / sizeof flag_keys[0])

/* 1/0 or true/false (any case) into *on; 0 when the text is neither. */
static int parse_bool(const char *v, int *on)
{
    if (!strcmp(v, "1") || !strcasecmp(v, "true"))
        return *on = 1, 1;
    if (!strcmp(v, "0") || !strcasecmp(v, "false"))
        return *on = 0, 1;
    return 0;
}

/* Apply the reorder keys `info` holds to *flags (keys compare without regard to case). A value
 * other than 1/0/true/false is refused: *bad names the key. */
static int parse_flags(MPI_Info info, unsigned *flags, const char **bad, char *val, int vlen)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int n;
    if (PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
        return MPI_ERR_INFO;
    for (int i = 0; i < NBR_NFLAGS; i++) {
        int found = 0;
        for (int k = 0; k < n && !found; k++) {
            char key[MPI_MAX_INFO_KEY + 1];
            if (PMPI_Info_get_nthkey(info, k, key) != MPI_SUCCESS ||
                (strcasecmp(key, flag_keys[i].key) && strcasecmp(key, flag_keys[i].short_key)))
                continue;
            if (PMPI_Info_get(info, key, vlen - 1, val, &found) != MPI_SUCCESS)
                return MPI_ERR_INFO;
        }
        if (!found)
            continue;
        int on;
        if (!parse_bool(val, &on)) {
            *bad = flag_keys[i].key;
            return MPI_ERR_INFO_VALUE;
        }
        *flags = on ? *flags | flag_keys[i].bit : *flags & ~flag_keys[i].bit;
    }
    return MPI_SUCCESS;
}

/* ---- intra-epoch scheduling (002 §4): NBRMA_SCHED / nbrma_sched, NBRMA_SCHED_TH / nbrma_sched_th */

typedef struct {
    int on;
    MPI_Aint th;
    int delayed; /* NBRMA_ISSUE / nbrma_issue (004 §III-D): 1 delayed, 0 eager */
    int fence_rs; /* NBRMA_FENCE / nbrma_fence (004 §III-C1): 1 reduce_scatter, 0 barrier */
    int noncontig; /* NBRMA_NONCONTIG / nbrma_noncontig (004 §III-A, F1): NBR_NC_* */
    int acc_hw;    /* NBRMA_ACC / nbrma_acc (004 §III-A, Fig. 1, F2): NBR_ACC_* */
    int acc_order; /* info accumulate_ordering (MPI-3.1 §11.7.2): NBR_ORD_* bits */
    int lock_q;    /* NBRMA_LOCK / nbrma_lock (004 §III-C2, F5): 1 queued, 0 polling */
    int meta_lazy; /* NBRMA_META / nbrma_meta (004 §III-B, F3): 1 lazy, 0 table */
} nbr_sched_cfg_t;

static const char *const ord_names[] = {"rar", "raw", "war", "waw"};

/* The info key accumulate_ordering: "none" or a comma-separated list of rar, raw, war, waw (in
 * any order, each at most once) into *mask; 0 when the text is neither. */
static int parse_ordering(const char *v, int *mask)
{
    if (!strcmp(v, "none"))
        return *mask = 0, 1;
    int m = 0;
    while (*v) {
        size_t n = strcspn(v, ",");
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (n == 3 && !strncmp(v, ord_names[i], 3))
                k = i;
        if (k < 0 || (m & (1 << k)))
            return 0;
        m |= 1 << k;
        v += n;
        if (*v == ',' && !*++v)
            return 0; /* a trailing comma */
    }
    if (!m)
        return 0;
    *mask = m;
    return 1;
}

static const char *const nc_names[] = {"auto", "blocks", "packed"};

/* auto / blocks / packed into *nc; 0 when the text is none of them. */
static int parse_noncontig(const char *v, int *nc)
{
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(v, nc_names[i]))
            return *nc = i, 1;
    return 0;
}

static const char *const acc_names[] = {"am", "hw", "auto"}; /* by NBR_ACC_* */

/* am / hw / auto into *hw (NBR_ACC_*); 0 when the text is none of them. */
static int parse_acc(const char *v, int *hw)
{
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(v, acc_names[i]))
            return *hw = i, 1;
    return 0;
}

/* barrier / reduce_scatter into *rs; 0 when the text is neither. */
static int parse_fence(const char *v, int *rs)
{
    if (strcasecmp(v, "barrier") && strcasecmp(v, "reduce_scatter"))
        return 0;
    *rs = !strcasecmp(v, "reduce_scatter");
    return 1;
}

/* polling / queued into *q; 0 when the text is neither. */
static int parse_lock(const char *v, int *q)
{
    if (strcasecmp(v, "polling") && strcasecmp(v, "queued"))
        return 0;
    *q = !strcasecmp(v, "queued");
    return 1;
}

/* table / lazy into *lazy; 0 when the text is neither. */
static int parse_meta(const char *v, int *lazy)
{
    if (strcasecmp(v, "table") && strcasecmp(v, "lazy"))
        return 0;
    *lazy = !strcasecmp(v, "lazy");
    return 1;
}

/* eager / delayed into *delayed; 0 when the text is neither. */
static int parse_issue(const char *v, int *delayed)
{
    if (strcasecmp(v, "eager") && strcasecmp(v, "delayed"))
        return 0;
    *delayed = !strcasecmp(v, "delayed");
    return 1;
}

/* on/off, or what parse_bool takes, into *on; 0 when the text is none of them. */
static int parse_onoff(const char *v, int *on)
{
    if (!strcasecmp(v, "on") || !strcasecmp(v, "off"))
        return *on = !strcasecmp(v, "on"), 1;
    return parse_bool(v, on);
}

/* A byte count: decimal digits, optionally K, M or G (powers of 1024), at most 2^62. */
static int parse_bytes(const char *v, MPI_Aint *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*v))
        return 0;
    unsigned long long x = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (errno || *end || x > (1ULL << 62) >> shift)
        return 0;
    *out = (MPI_Aint)(x << shift);
    return 1;
}

/* One info key whose value `parse` reads into *out: MPI_ERR_INFO when the info cannot be read,
 * MPI_ERR_INFO_VALUE (msg names the key, the value and `use`) when parse refuses the value; a key
 * the info does not name leaves *out alone. */
static int info_choice(MPI_Info info, const char *key, int (*parse)(const char *, int *), int *out,
                       const char *use, char *msg, size_t mlen)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    if (PMPI_Info_get(info, key, (int)sizeof val - 1, val, &found) != MPI_SUCCESS)
        return MPI_ERR_INFO;
    if (found && !parse(val, out)) {
        snprintf(msg, mlen, "info key %s has value \"%.60s\"; use %s", key, val, use);
        return MPI_ERR_INFO_VALUE;
    }
    return MPI_SUCCESS;
}

/* The window's strategy info keys (nbrma_sched, nbrma_sched_th, nbrma_issue, nbrma_fence,
 * nbrma_noncontig, accumulate_ordering, nbrma_acc, nbrma_lock, nbrma_meta) over *c (at creation, c
 * holds the NBRMA_* settings; in MPI_Win_set_info, the window's). MPI_ERR_INFO_VALUE for a bad
 * value; msg says which key and what. */
static int parse_sched(MPI_Info info, nbr_sched_cfg_t *c, char *msg, size_t mlen)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int rc = info_choice(info, "nbrma_sched", parse_onoff, &c->on, "on or off", msg, mlen);
    char val[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    if (rc == MPI_SUCCESS &&
        PMPI_Info_get(info, "nbrma_sched_th", (int)sizeof val - 1, val, &found) != MPI_SUCCESS)
        rc = MPI_ERR_INFO;
    if (rc == MPI_SUCCESS && found && !parse_bytes(val, &c->th)) {
        snprintf(msg, mlen,
                 "info key nbrma_sched_th has value \"%.60s\"; use a byte count such as 8192 or "
                 "8K",
                 val);
        rc = MPI_ERR_INFO_VALUE;
    }
    if (rc == MPI_SUCCESS)
        rc = info_choice(info, "nbrma_issue", parse_issue, &c->delayed, "eager or delayed", msg,
                         mlen);
    if (rc == MPI_SUCCESS)
        rc = info_choice(info, "nbrma_fence", parse_fence, &c->fence_rs,
                         "barrier or reduce_scatter", msg, mlen);
    if (rc == MPI_SUCCESS)
        rc = info_choice(info, "nbrma_noncontig", parse_noncontig, &c->noncontig,
                         "auto, blocks or packed", msg, mlen);
    if (rc == MPI_SUCCESS)
        rc = info_choice(info, "accumulate_ordering", parse_ordering, &c->acc_order,
                         "none or a comma-separated list of rar, raw, war and waw", msg, mlen);
    if (rc == MPI_SUCCESS)
        rc = info_choice(info, "nbrma_acc", parse_acc, &c->acc_hw, "am, hw or auto", msg, mlen);
    if (rc == MPI_SUCCESS)
        rc =
            info_choice(info, "nbrma_lock", parse_lock, &c->lock_q, "polling or queued", msg, mlen);
    if (rc == MPI_SUCCESS)
        rc = info_choice(info, "nbrma_meta", parse_meta, &c->meta_lazy, "table or lazy", msg, mlen);
    return rc;
}

/* The info key accumulate_ops (MPI-3.1 §11.2.1): "same_op" or "same_op_no_op" (the default).
 * *same_op is left alone when the info does not name the key. MPI_ERR_INFO_VALUE for any other
 * value (msg says which). */
static int parse_acc_ops(MPI_Info info, int *same_op, char *msg, size_t mlen)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    char val[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    if (PMPI_Info_get(info, "accumulate_ops", (int)sizeof val - 1, val, &found) != MPI_SUCCESS)
        return MPI_ERR_INFO;
    if (!found)
        return MPI_SUCCESS;
    if (!strcmp(val, "same_op") || !strcmp(val, "same_op_no_op")) {
        *same_op = !strcmp(val, "same_op");
        return MPI_SUCCESS;
    }
    snprintf(msg, mlen,
             "info key accumulate_ops has value \"%.60s\"; use same_op or same_op_no_op", val);
    return MPI_ERR_INFO_VALUE;
}

/* Where the scheduler applies: on, and some pair of the window remote — with every pair on one
 * node there is no inter-node transfer for the held copies to overlap with, and holding them
 * would only move each copy from its call to the closing call. */
static void sched_apply(nbr_win_t *w, const nbr_sched_cfg_t *c)
{
    w->sched = c->on;
    w->sched_bytes = c->th;
    w->sched_th = c->on && w->nremote ? c->th : NBR_AINT_MAX;
    w->issue_cfg = c->delayed;
    /* The reduce-scatter fence needs its own communicator (created with the window): a window
     * created with the barrier fence keeps it (MPI_Win_set_info's hints may be ignored). */
    w->fence_rs = (unsigned char)(c->fence_rs && w->rs_comm_ok);
    w->noncontig = (unsigned char)c->noncontig;
    w->acc_hw = (unsigned char)c->acc_hw;
    w->acc_order = (unsigned char)c->acc_order;
    w->lock_q = (unsigned char)c->lock_q;
    nbr_issue_update(w);
}

/* Issuing in force: the setting, or delayed while a reduce-scatter fence epoch is open (its calls
 * wait for the closing fence, 004 Fig. 2a). Delayed means no put/get fast path (sched_th 0). */
void nbr_issue_update(nbr_win_t *w)
{
    w->issue_delayed = w->issue_cfg || w->rs_hold;
    w->sched_th = w->issue_delayed ? 0 : w->sched && w->nremote ? w->sched_bytes : NBR_AINT_MAX;
}

/* ---- what a communicator's ranks share, computed once per communicator ----------------------- */

/* One rank's facts, gathered: its node (by shared memory: host name and boot id; or a virtual
 * node of NBRMA_RANKS_PER_NODE consecutive world ranks) and the CPUs it may run on. */
typedef struct {
    uint64_t node; /* real or virtual: decides the transports */
    uint64_t host; /* real: decides whether waits yield early (CPUs are real) */
    cpu_set_t cpus;
} nbr_rank_facts_t;

typedef struct {
    int nodes;          /* distinct nodes among the communicator's ranks */
    int node_ranks;     /* ranks on my node */
    int oversubscribed; /* my node runs more of them than it has CPUs for */
} nbr_comm_info_t;

static int comm_keyval = MPI_KEYVAL_INVALID;

static int comm_info_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    free(attr);
    return MPI_SUCCESS;
}

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint64_t host_key(void);
static uint64_t my_node_key(void)
{
    if (nbr_cfg.RANKS_PER_NODE > 0) { /* virtual nodes of consecutive world ranks */
        int wr = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
        return (uint64_t)(wr / nbr_cfg.RANKS_PER_NODE) + 1;
    }
    return host_key();
}

static uint64_t host_key(void)
{
    char host[256] = "", boot[64] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = '\0';
        fclose(f);
    }
    uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), host, sizeof host);
    return fnv1a(h ^ 0x2f, boot, sizeof boot) | 1; /* never 0 */
}

/* The cached facts of `comm`, gathered with one nonblocking allgather on first use. How long
 * waits spin before yielding follows: a peer we wait for needs our core only when the node has
 * more ranks than CPUs; otherwise yielding early just adds system calls to every wait (a 2-rank
 * fence under Open MPI took 3.9 us instead of 0.6). One crowded node keeps early yields. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int comm_info(MPI_Comm comm, const nbr_comm_info_t **out)
{
    int rc, flag = 0;
    if (comm_keyval == MPI_KEYVAL_INVALID &&
        (rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_info_delete, &comm_keyval,
                                      NULL)) != MPI_SUCCESS)
        return rc;
    nbr_comm_info_t *ci;
    if ((rc = PMPI_Comm_get_attr(comm, comm_keyval, &ci, &flag)) != MPI_SUCCESS)
        return rc;
    if (flag) {
        *out = ci;
        return MPI_SUCCESS;
    }
    int n, me;
    if ((rc = PMPI_Comm_size(comm, &n)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_rank(comm, &me)) != MPI_SUCCESS)
        return rc;
    nbr_rank_facts_t *all = malloc((size_t)n * sizeof *all);
    ci = calloc(1, sizeof *ci);
    if (!all || !ci) {
        free(all);
        free(ci);
        return MPI_ERR_NO_MEM;
    }
    nbr_rank_facts_t mine = {.node = my_node_key(), .host = host_key()};
    if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0)
        CPU_ZERO(&mine.cpus); /* unknown: count as no CPUs, i.e. oversubscribed (safe) */
    MPI_Request r;
    rc = PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm,
                         &r);
    if (rc == MPI_SUCCESS)
        rc = nbr_wait_req(&r);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(ci);
        return rc;
    }
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    int host_ranks = 0;
    /* Distinct node keys, counted on a sorted copy: O(n log n), as MPI_Init now asks this of
     * MPI_COMM_WORLD (thread.c) and a pairwise scan is 10^10 steps at 10^5 ranks. */
    uint64_t *keys = malloc((size_t)n * sizeof *keys);
    if (!keys) {
        free(all);
        free(ci);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        keys[i] = all[i].node;
    qsort(keys, (size_t)n, sizeof *keys, cmp_u64);
    for (int i = 0; i < n; i++)
        ci->nodes += i == 0 || keys[i] != keys[i - 1];
    free(keys);
    for (int i = 0; i < n; i++) {
        ci->node_ranks += all[i].node == mine.node;
        if (all[i].host == mine.host) { /* virtual nodes share the real CPUs */
            host_ranks++;
            CPU_OR(&cpus, &cpus, &all[i].cpus);
        }
    }
    ci->oversubscribed = host_ranks > CPU_COUNT(&cpus);
    free(all);
    if ((rc = PMPI_Comm_set_attr(comm, comm_keyval, ci)) != MPI_SUCCESS) {
        free(ci);
        return rc;
    }
    if (nbr_cfg.SPIN > 0) {
        nbr_spin = nbr_cfg.SPIN;
    } else {
        static int crowded; /* one crowded node keeps early yields */
        crowded |= ci->oversubscribed;
        __atomic_store_n(&nbr_spin, crowded ? 100L : 20000L, __ATOMIC_RELAXED);
    }
    *out = ci;
    return MPI_SUCCESS;
}

/* Ref serves the window only when asked to and when its group lives on one node. Returns 0 to
 * forward to the vendor, 1 to serve it (*rc says whether that can go ahead). */
static int serve_with_ref(MPI_Comm comm, const char *call, int *rc)
{
    lib_init();
    *rc = MPI_SUCCESS;
    char why[256];
    if (!nbr_impl_ref)
        return 0;
    const nbr_comm_info_t *ci;
    if ((*rc = comm_info(comm, &ci)) != MPI_SUCCESS) {
        *rc = nbr_err_comm(comm, call, *rc, "could not learn which ranks share a node");
        return 1;
    }
    if (ci->nodes != 1 && !nbr_am_ready())
        *rc = nbr_err_comm(comm, call, MPI_ERR_OTHER,
                           "the window's group spans nodes (%d of them) and the active-message "
                           "transport could not be set up at MPI_Init (no private communicator)",
                           ci->nodes);
    else if (nbr_async_check())
        *rc = nbr_err_comm(comm, call, MPI_ERR_ARG, "NBRMA_ASYNC_PROGRESS=%s: %s",
                           nbr_cfg.ASYNC_PROGRESS, nbr_async_check());
    else if (ci->nodes != 1 && nbr_tp_net_select(nbr_cfg.NET, why, sizeof why) == -1)
        *rc = nbr_err_comm(comm, call, strncmp(nbr_cfg.NET, "ucx", 3) ? MPI_ERR_ARG
                                                                       : MPI_ERR_UNSUPPORTED_OPERATION,
                           "%s", why);
    return 1;
}

/* ---- creation -------------------------------------------------------------------------------- */

/* What each rank tells the others about its part of a new window. */
typedef struct {
    MPI_Aint addr, size;
    int disp_unit;
    int pid;
    nbr_arena_ref_t ctl; /* its control block */
    uint64_t inc;        /* ... and that block's incarnation */
    uint64_t node;       /* its node (real or virtual) */
    int wrank, amid;     /* its rank in MPI_COMM_WORLD, its id of the window (am transport) */
    int acc_ok;          /* accumulate_ops=same_op, and my node peers reach my memory with
                            load/store (not CMA): atomic instructions can serve accumulates
                            (here: in what was padding before mem) */
    int mem_ok;          /* create: its memory lies in one of its MPI_Alloc_mem segments ... */
    nbr_mem_ref_t mem;   /* ... here (mem.c): node peers map it */
} nbr_peer_info_t;

/* Bytes of one rank's control block: the block, then one pair of matching counters per peer,
 * then (queued lock) one queue node per peer. */
static size_t ctl_bytes(int p, int lock_q)
{
    size_t b = nbr_ctl_len(p, lock_q);
    return (b + NBR_CACHELINE - 1) & ~(size_t)(NBR_CACHELINE - 1);
}

/* Before a blocking collective of the vendor on an oversubscribed node: a yielding barrier, so
 * every rank enters it at once and the vendor's wait inside (which spins without yielding in
 * MPICH) is short. A node with a core per rank needs no such help. */
static int settle(MPI_Comm comm)
{
    const nbr_comm_info_t *ci;
    int rc = comm_info(comm, &ci);
    /* Across nodes every rank must also be past the point where a peer might still wait for it
     * to serve an active message: a rank inside the vendor's blocking collective serves none. */
    return rc != MPI_SUCCESS                           ? rc
           : ci->oversubscribed || ci->nodes > 1 ? nbr_barrier(comm)
                                                 : MPI_SUCCESS;
}

/* The handle of a window whose memory is not the vendor's (create, dynamic, symmetric
 * allocate): a vendor window over no memory. MPI_Win_create, the one creation call MPICH 4.0.2
 * fails cleanly when it runs out of context ids (allocate, allocate_shared and create_dynamic
 * crash there); Open MPI 4.1 refuses it for a singleton, which gets a node-shared window of no
 * memory instead. */
static int empty_handle(nbr_win_t *w, MPI_Info info, MPI_Comm comm)
{
    int rc = settle(comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (w->size > 1)
        return NBR_UNLOCKED(PMPI_Win_create(NULL, 0, 1, info, comm, &w->handle));
    void *none;
    return NBR_UNLOCKED(PMPI_Win_allocate_shared(0, 1, info, comm, &none, &w->handle));
}

/* The handle of an allocate_shared (or non-symmetric allocate) window: the vendor's window over
 * the data, which every rank of the node loads and stores. */
static int data_handle(nbr_win_t *w, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm)
{
    void *mine;
    int rc = settle(comm);
    if (rc == MPI_SUCCESS)
        rc = NBR_UNLOCKED(PMPI_Win_allocate_shared(size, disp_unit, info, comm, &mine, &w->handle));
    if (rc != MPI_SUCCESS)
        return rc;
    w->base = mine;
    for (int r = 0; r < w->size && rc == MPI_SUCCESS; r++) {
        MPI_Aint sz;
        int du;
        void *p;
        rc = PMPI_Win_shared_query(w->handle, r, &sz, &du, &p);
        w->t[r].base = p;
    }
    return rc;
}

/* Agreement on a step of window set-up: every rank learns whether any rank failed, so all take
 * the same path afterwards (a rank that abandons alone would leave the others waiting in the
 * next collective). Returns MPI_SUCCESS only if every rank succeeded; otherwise every rank
 * returns the largest error class among them (its own if it failed). */
static int agree_any(MPI_Comm comm, int rc, int flag, int *any)
{
    int mine[2] = {MPI_SUCCESS, flag}, all[2] = {MPI_SUCCESS, 0};
    if (rc != MPI_SUCCESS && PMPI_Error_class(rc, &mine[0]) != MPI_SUCCESS)
        mine[0] = MPI_ERR_OTHER;
    MPI_Request r;
    if (PMPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MAX, comm, &r) != MPI_SUCCESS ||
        nbr_wait_req(&r) != MPI_SUCCESS)
        return rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
    if (any)
        *any = all[1];
    return rc != MPI_SUCCESS ? rc : all[0];
}

/* ... and, with agree_any, whether any rank passed a true flag (the same answer everywhere). */
static int agree(MPI_Comm comm, int rc)
{
    return agree_any(comm, rc, 0, NULL);
}

/* Everything after the handle exists: my control block (from the arena, zeroed, a new
 * incarnation), the peers' descriptors and control blocks, the window's group, registration.
 * The allgather also tells every rank that all control blocks are zeroed before anyone uses
 * one. Local failures (memory, a peer's block that cannot be mapped) are agreed on before the
 * allgather and at the end, so that every rank either has the window or abandons it. */
static char tp_why[256]; /* why the transports' set-up failed (under the big lock) */
static void lazy_init(nbr_win_t *w);
static int cdir_setup(nbr_win_t *w, MPI_Comm comm, int want_lazy);
static int win_setup(nbr_win_t *w, MPI_Comm comm, int want_lazy)
{
    nbr_peer_info_t mine = {.addr = (MPI_Aint)(uintptr_t)w->base,
                            .size = w->bytes,
                            .disp_unit = w->disp_unit,
                            .pid = (int)getpid(),
                            .node = my_node_key(),
                            .amid = -1};
    int rc = PMPI_Comm_rank(MPI_COMM_WORLD, &mine.wrank);
    if (rc == MPI_SUCCESS && w->nremote && (w->amid = mine.amid = nbr_am_win_register(w)) < 0)
        rc = MPI_ERR_NO_MEM;
    nbr_peer_info_t *info = calloc((size_t)w->size, sizeof *info);
    w->ctl_size = NBR_CACHELINE + ctl_bytes(w->size, w->lock_q);
    /* Alone on my node in a window spanning nodes: nobody maps my control block, and the other
     * nodes' lock words, notifications and counters reach it through the transport — in memory
     * the transport allocated, without my CPU (UCX over shared memory maps it into them: an
     * exclusive lock + unlock across nodes ~2 µs through my worker before). Issue 22. */
    if (rc == MPI_SUCCESS && w->nremote && w->size - w->nremote == 1 &&
        (w->ctl_block = nbr_tp_ctl_alloc(w->ctl_size)))
        w->ctl_kind = NBR_CTL_TP;
    if (rc != MPI_SUCCESS || !info ||
        (!w->ctl_block && !(w->ctl_block = nbr_arena_alloc(w->ctl_size, &mine.ctl)))) {
        rc = rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
    } else {
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, (long long)w->ctl_size);
        nbr_ctl_t *c = (nbr_ctl_t *)((char *)w->ctl_block + NBR_CACHELINE);
        memset(c, 0, ctl_bytes(w->size, w->lock_q));
        nbr_ctl_hdr_t *h = nbr_ctl_hdr(c);
        mine.inc = __atomic_add_fetch(&h->inc, 1, __ATOMIC_RELEASE);
        w->ctl = c;
        if (w->sym) /* my entry of the symmetric segment's directory (lazy peers read it) */
            nbr_sym_dir(w)[w->rank] = (nbr_dirent_t){.pid = mine.pid,
                                                     .disp_unit = mine.disp_unit,
                                                     .inc = mine.inc,
                                                     .ctl = mine.ctl,
                                                     .size = mine.size};
    }
    /* A one-node create window where some rank asks for lazy metadata: rank 0's directory. */
    const int create1 = w->flavor == MPI_WIN_FLAVOR_CREATE && !w->nremote;
    int any_lazy = 0, dir_rc = MPI_SUCCESS;
    if ((rc = agree_any(comm, rc, create1 && want_lazy, &any_lazy)) != MPI_SUCCESS) {
        free(info);
        return rc;
    }
    /* A rank that cannot map the directory writes no entry: it still joins the allgather (a
     * collective), then fails, and the creation's last agreement fails the window for all. */
    if (create1 && any_lazy)
        dir_rc = cdir_setup(w, comm, want_lazy);
    /* Memory from MPI_Alloc_mem (mem.c), or MPI_Win_allocate's node-shared block (priv_alloc):
     * node peers map it and need no CMA (issue 24). */
    if (w->flavor == MPI_WIN_FLAVOR_CREATE || w->priv_kind == NBR_PRIV_SHM)
        mine.mem_ok = nbr_mem_find(w->base, w->bytes, &mine.mem);
    /* With a directory, a peer maps my MPI_Alloc_mem memory when it first uses me, and reaches
     * it with CMA if that mapping fails then (nbr_tgt_make): CMA allowed in every rank. */
    if ((w->flavor == MPI_WIN_FLAVOR_CREATE && (!mine.mem_ok || w->cdir)) ||
        w->flavor == MPI_WIN_FLAVOR_DYNAMIC ||
        (w->priv && !mine.mem_ok && w->size - w->nremote > 1)) { /* no node peer: no CMA */
        cma_window(1); /* before peers learn they may reach us */
        w->cma = 1;
    }
    if (w->cdir) /* my entry, before the allgather after which peers may read it */
        w->cdir[w->rank] = (nbr_cdirent_t){.addr = mine.addr,
                                           .size = mine.size,
                                           .inc = mine.inc,
                                           .ctl = mine.ctl,
                                           .mem = mine.mem,
                                           .pid = mine.pid,
                                           .disp_unit = mine.disp_unit,
                                           .mem_ok = mine.mem_ok};
    /* accumulate_ops=same_op (MPI-3.1 §11.2.1): eligible accumulates use atomic instructions on
     * every path (op.c) — only where every origin on my node can issue them on my memory (a
     * peer reaching it with CMA would read-modify-write it under the lock); dynamic windows keep
     * the lock (their UCX keys are per region). Every rank sees every rank's answer: one
     * decision for the window. */
    mine.acc_ok = w->acc_same_op && w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
                  (!w->cma || w->size - w->nremote == 1); /* nremote: create_window */
    MPI_Request req;
    rc = PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, info, (int)sizeof mine, MPI_BYTE,
                         comm, &req);
    if (rc == MPI_SUCCESS)
        rc = nbr_wait_req(&req);
    if (rc == MPI_SUCCESS)
        rc = dir_rc;
    w->acc_native = 1;
    for (int r = 0; rc == MPI_SUCCESS && r < w->size; r++)
        w->acc_native &= info[r].acc_ok;
    if (rc == MPI_SUCCESS && w->cdir && want_lazy)
        lazy_init(w); /* fails: the table stays, filled below */
    for (int r = 0; rc == MPI_SUCCESS && w->lazy && r < w->size; r++)
        /* Lazy (one node): no descriptors yet, but every peer's control block mapped
         * now (the mapping is the process's, kept), so that making one later cannot fail. */
        if (r != w->rank && !nbr_arena_map(info[r].pid, info[r].ctl))
            rc = MPI_ERR_NO_MEM;
    for (int r = 0; rc == MPI_SUCCESS && !w->lazy && r < w->size; r++) {
        nbr_target_t *t = &w->t[r];
        t->made = 1;
        t->wrank = info[r].wrank;
        t->amid = info[r].amid;
        if (info[r].node != mine.node) { /* another node: everything goes through messages */
            t->net = NBR_NET_AM;
            t->ctl = NULL;
            t->peer = NULL;
            t->base = NULL;
            t->addr = info[r].addr;
            t->size = info[r].size;
            t->disp_unit = info[r].disp_unit;
            t->pid = -1;
            continue;
        }
        char *block = r == w->rank ? w->ctl_block : nbr_arena_map(info[r].pid, info[r].ctl);
        if (!block) {
            rc = MPI_ERR_NO_MEM; /* rank r's control block cannot be mapped here */
            break;
        }
        t->ctl = (nbr_ctl_t *)(block + NBR_CACHELINE);
        t->inc = info[r].inc;
        t->peer = (nbr_peer_ctr_t *)(t->ctl + 1);
        t->addr = info[r].addr;
        t->size = info[r].size;
        t->disp_unit = info[r].disp_unit;
        t->pid = info[r].pid;
        if (r != w->rank && info[r].mem_ok && t->size > 0 &&
            !(t->base = nbr_mem_map(info[r].pid, &info[r].mem, t->size, &t->mem_map,
                                    &t->mem_map_len))) {
            rc = MPI_ERR_NO_MEM; /* rank r's MPI_Alloc_mem memory cannot be mapped here */
            break;
        }
        if (t->size == 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
            t->base = NULL; /* nothing there: every access is out of range */
        if (r == w->rank && !t->base && (w->flavor == MPI_WIN_FLAVOR_CREATE || w->priv))
            t->base = w->base; /* my own memory: no CMA needed */
    }
    free(info);
    if (rc == MPI_SUCCESS && w->lazy) { /* used by most epochs: my counters, rank 0's global word */
        nbr_tgt(w, w->rank);
        nbr_tgt(w, 0);
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_get_group(w->handle, &w->group);
    int registered = rc == MPI_SUCCESS && (rc = registry_add(w)) == MPI_SUCCESS;
    if ((rc = agree(comm, rc)) == MPI_SUCCESS && w->nremote) {
        /* The pairs on other nodes: UCX where wanted and reachable (collective), else am. */
        tp_why[0] = 0;
        rc = agree(comm, nbr_tp_win_setup(w, comm, nbr_tp_net_select(nbr_cfg.NET, tp_why,
                                                                     sizeof tp_why),
                                          tp_why, sizeof tp_why));
    }
    if (rc != MPI_SUCCESS) {
        if (registered)
            registry_remove(w);
        return rc;
    }
    if (nbr_cfg.VERBOSE && w->rank == 0)
        fprintf(stderr, "libnbrma: window of %d ranks served by ref (flavor %d)\n", w->size,
                w->flavor);
    return MPI_SUCCESS;
}

/* MPI_Win_allocate's memory in a window that spans nodes (a one-node window's is node-shared,
 * symmetric or the vendor's: create_window), zero-filled like those:
 *   - other ranks of the window on my node: a block of mem.c's node-shared segments, which they
 *     map (win_setup) and reach by load/store, as a window over MPI_Alloc_mem memory (issue 24),
 *     not with CMA (a system call per access, two per atomic);
 *   - alone on my node: the transport's own memory where the pairs go through UCX (tp.h's
 *     nbr_tp_win_alloc: mapped by UCX's shared-memory transports, registered once by RDMA);
 *   - otherwise, or when neither can be had: private memory, which node peers reach with CMA. */
static int priv_alloc(nbr_win_t *w, size_t size, int node_ranks)
{
    if (!size)
        return MPI_SUCCESS;
    if (node_ranks > 1 && (w->priv = nbr_mem_win_alloc(size)))
        w->priv_kind = NBR_PRIV_SHM;
    else if (node_ranks == 1 && (w->priv = nbr_tp_win_alloc(w, size)))
        w->priv_kind = NBR_PRIV_TP;
    else if ((w->priv = calloc(1, size)))
        w->priv_kind = NBR_PRIV_HEAP;
    return w->priv ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* ---- lazy window metadata (NBRMA_META=lazy; paper 004 §III-B, F3; nbr.h) -------------------- */

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* Rank r's entry of its window's directory (the symmetric segment's, or a create window's):
 * its pid, where its control block lives, the block's incarnation. */
static void dir_ent(const nbr_win_t *w, int r, int *pid, nbr_arena_ref_t *ref, uint64_t *inc)
{
    if (w->cdir) {
        *pid = w->cdir[r].pid, *ref = w->cdir[r].ctl, *inc = w->cdir[r].inc;
    } else {
        const nbr_dirent_t *d = &nbr_sym_dir(w)[r];
        *pid = d->pid, *ref = d->ctl, *inc = d->inc;
    }
}

static nbr_ctl_t *ctl_at(int pid, nbr_arena_ref_t ref) /* mapped at creation */
{
    return (nbr_ctl_t *)((char *)nbr_arena_map(pid, ref) + NBR_CACHELINE);
}

/* Rank r's control block named by its directory entry, and its incarnation. */
static nbr_ctl_t *dir_ctl(const nbr_win_t *w, int r, uint64_t *inc)
{
    int pid;
    nbr_arena_ref_t ref;
    uint64_t i;
    dir_ent(w, r, &pid, &ref, &i);
    if (inc)
        *inc = i;
    return ctl_at(pid, ref);
}

/* A one-node MPI_Win_create window (collective): rank 0, when lazy metadata is asked of it,
 * allocates the directory (nbr_cdirent_t per rank) in its node-shared arena and tells the others
 * where it is; every rank then maps it and writes its own entry before the creation's
 * allgather (win_setup). Rank 0's choice decides for the window whether there is one; each rank
 * with nbrma_meta=lazy then keeps its descriptors lazily (lazy_init), the others a table (every
 * rank's entry is there for the lazy ones). Called where any rank asked for lazy metadata (the
 * agreement before it says so): one broadcast more at the creation of such windows only.
 * A failure (no memory for it, or a rank that cannot map it) fails the creation for all: the
 * creation's last agreement sees it. */
static int cdir_setup(nbr_win_t *w, MPI_Comm comm, int want_lazy)
{
    struct {
        int pid, has;
        nbr_arena_ref_t ref;
    } d = {0};
    size_t len;
    nbr_cdirent_t *dir = NULL;
    if (__builtin_mul_overflow((size_t)w->size, sizeof *dir, &len))
        len = 0;
    if (w->rank == 0 && want_lazy && len && (dir = nbr_arena_alloc(len, &d.ref))) {
        d.pid = (int)getpid();
        d.has = 1;
    }
    MPI_Request q;
    int rc = PMPI_Ibcast(&d, (int)sizeof d, MPI_BYTE, 0, comm, &q);
    if (rc == MPI_SUCCESS)
        rc = nbr_wait_req(&q);
    if (rc != MPI_SUCCESS || !d.has) {
        if (dir)
            nbr_arena_free(dir, len);
        return rc;
    }
    if (w->rank == 0) {
        w->cdir_len = len; /* mine: counted in my metadata, freed with the window */
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, (long long)len);
    } else if (!(dir = nbr_arena_map(d.pid, d.ref))) {
        return MPI_ERR_NO_MEM;
    }
    w->cdir = dir;
    return MPI_SUCCESS;
}

/* Make rank r's descriptor from what every process of the node can know: its memory at
 * sym + r·stride, size and disp_unit the window's own (one for all ranks), its control block
 * from its directory entry (mapped at creation). A page of the reservation is backed when the
 * first descriptor on it is written (reads before map the kernel's zero page): it is counted
 * then, found by looking at the made flags of the descriptors that share it (about 24). */
void nbr_tgt_make(nbr_win_t *w, int r)
{
    nbr_target_t *t = &w->t[r];
    nbr_lazy_t *z = w->lazy;
    if (!z) { /* a table window's descriptors are all made at creation: a caller's bug */
        fprintf(stderr,
                "libnbrma: internal error: rank %d's descriptor of a table window was "
                "used before the window was set up\n",
                r);
        abort();
    }
    const size_t ps = z->page, dsz = sizeof *t;
    const size_t first = (size_t)r * dsz / ps, last = ((size_t)r * dsz + dsz - 1) / ps;
    for (size_t pg = first; pg <= last; pg++) {
        size_t lo = pg * ps / dsz, hi = ((pg + 1) * ps - 1) / dsz; /* descriptors touching it */
        int backed = 0;
        for (size_t q = lo; q <= hi && q < (size_t)w->size && !backed; q++)
            backed = w->t[q].made;
        if (!backed) {
            z->pages++;
            nbr_stat(&w->st_meta, &nbr_st.windows, 0, (long long)ps);
        }
    }
    /* Writing the page backs it; with no memory left the kernel kills the process (the
     * reservation is MAP_NORESERVE), as an exhausted malloc arena would. */
    int pid;
    nbr_arena_ref_t ref;
    dir_ent(w, r, &pid, &ref, &t->inc);
    t->pid = pid;
    t->ctl = r == w->rank ? w->ctl : ctl_at(pid, ref);
    t->peer = (nbr_peer_ctr_t *)(t->ctl + 1);
    if (w->cdir) { /* create: rank r's own memory, as it wrote it in the directory */
        const nbr_cdirent_t *d = &w->cdir[r];
        t->addr = d->addr;
        t->size = d->size;
        t->disp_unit = d->disp_unit;
        t->base = NULL; /* CMA, unless mapped here */
        if (r == w->rank && d->size > 0)
            t->base = w->base;
        else if (d->mem_ok && d->size > 0)
            /* Its MPI_Alloc_mem memory, as a table window maps it at creation. If that fails
             * now (out of mappings or memory), CMA reaches it: every rank of a window with a
             * directory allows it (win_setup). */
            t->base = nbr_mem_map(d->pid, &d->mem, d->size, &t->mem_map, &t->mem_map_len);
    } else { /* symmetric: at r's stride, its size and disp_unit from its directory entry */
        const nbr_dirent_t *d = &nbr_sym_dir(w)[r];
        t->size = d->size;
        t->disp_unit = d->disp_unit;
        t->base = d->size > 0 ? (unsigned char *)w->sym + (size_t)r * w->sym_stride : NULL;
        t->addr = (MPI_Aint)(uintptr_t)((unsigned char *)w->sym + (size_t)r * w->sym_stride);
    }
    t->net = NBR_NET_SHM;
    t->wrank = -1; /* remote pairs only */
    t->amid = -1;
    t->made = 1;
    z->made++;
}

nbr_target_t *nbr_tgt_next(nbr_win_t *w, int *it)
{
    while (w->t && *it < w->size) {
        nbr_target_t *t = &w->t[(*it)++];
        if (t->made || !w->lazy)
            return t;
    }
    return NULL;
}

nbr_ctl_t *nbr_tgt_ctl(nbr_win_t *w, int r, uint64_t *inc)
{
    const nbr_target_t *t = &w->t[r];
    if (t->made || !w->lazy) {
        if (inc)
            *inc = t->inc;
        return nbr_tp_remote(t) ? NULL : t->ctl;
    }
    return dir_ctl(w, r, inc);
}

/* The table's bytes go back; address space for P descriptors is reserved in their place (no
 * memory until a descriptor is made). Fails: the table stays. */
static void lazy_init(nbr_win_t *w)
{
    size_t ps = page_size(), len;
    if (__builtin_mul_overflow((size_t)w->size, sizeof *w->t, &len) ||
        __builtin_add_overflow(len, ps - 1, &len))
        return;
    len &= ~(ps - 1);
    nbr_lazy_t *z = calloc(1, sizeof *z);
    void *m = z ? mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                : MAP_FAILED;
    if (m == MAP_FAILED) {
        free(z);
        return;
    }
    z->len = len;
    z->page = ps;
    nbr_stat(&w->st_meta, &nbr_st.windows, 0,
             (long long)sizeof *z - (long long)w->size * (long long)sizeof *w->t);
    free(w->t);
    w->t = m;
    w->lazy = z;
}

static void lazy_free(nbr_win_t *w)
{
    nbr_lazy_t *z = w->lazy;
    if (!z)
        return;
    nbr_stat(&w->st_meta, &nbr_st.windows, 0,
             -((long long)sizeof *z + z->pages * (long long)z->page));
    if (munmap(w->t, z->len) != 0 && nbr_cfg.VERBOSE)
        fprintf(stderr, "libnbrma: munmap of a window's descriptor reservation failed: %s\n",
                strerror(errno));
    free(z);
    w->t = NULL;
    w->lazy = NULL;
}

static void win_destroy(nbr_win_t *w)
{
    nbr_tp_win_teardown(w);
    if (w->nremote)
        nbr_am_win_unregister(w);
    if (w->priv_kind == NBR_PRIV_SHM)
        nbr_mem_win_free(w->priv);
    else if (w->priv_kind == NBR_PRIV_HEAP)
        free(w->priv); /* NBR_PRIV_TP: the transport's teardown above freed it */
    while (w->q_head) /* only fence epochs that carried nothing remain at free */
        nbr_epoch_drop(w, w->q_head);
    if (w->t) {
        nbr_win_engine_detach(w);
        nbr_target_t *t;
        for (int it = 0; (t = nbr_tgt_next(w, &it));) {
            free(t->rcache);
            nbr_mem_unmap(t->mem_map, t->mem_map_len);
        }
    }
    lazy_free(w);
    if (w->cdir_len) { /* rank 0's directory (the others' mappings are their arena's) */
        nbr_arena_free(w->cdir, w->cdir_len);
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, -(long long)w->cdir_len);
    }
    nbr_epoch_pool_free(w);
    free(w->spare_req);
    if (w->group != MPI_GROUP_NULL)
        PMPI_Group_free(&w->group);
    nbr_sym_free(w->sym, w->sym_total);
    if (w->ctl_kind == NBR_CTL_TP)
        nbr_tp_ctl_free(w->ctl_block); /* after the transport's teardown above */
    else
        nbr_arena_free(w->ctl_block, w->ctl_size);
    if (w->ctl_block)
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, -(long long)w->ctl_size);
    if (w->cma)
        cma_window(-1);
    free(w->regs);
    free(w->zregs);
    if (w->rs_comm_ok)
        PMPI_Comm_free(&w->rs_comm);
    if (w->rs_flags) {
        free(w->rs_flags);
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, -(long long)w->size * (long long)sizeof(int));
    }
    /* win_new counted the object and the descriptors together (a lazy window's: lazy_init took
     * the table's share back, lazy_free its pages, and left no table) */
    nbr_stat(NULL, &nbr_st.windows, -1,
             -((long long)sizeof *w + (w->t ? (long long)w->size * (long long)sizeof *w->t : 0)));
    free(w->t);
    free(w);
}

static nbr_win_t *win_new(int flavor, MPI_Aint size, int disp_unit, MPI_Comm comm)
{
    nbr_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->flavor = flavor;
    w->bytes = size;
    w->disp_unit = disp_unit;
    w->handle = MPI_WIN_NULL;
    w->group = MPI_GROUP_NULL;
    w->amid = -1;
    nbr_win_engine_init(w);
    if (PMPI_Comm_rank(comm, &w->rank) != MPI_SUCCESS ||
        PMPI_Comm_size(comm, &w->size) != MPI_SUCCESS ||
        !(w->t = calloc((size_t)w->size, sizeof *w->t))) {
        free(w);
        return NULL;
    }
    /* memory accounting (stats.c): the object and its per-peer descriptors */
    nbr_stat(&w->st_meta, &nbr_st.windows, 1,
             (long long)sizeof *w + (long long)w->size * (long long)sizeof *w->t);
    return w;
}

/* A window that failed half way: undo what exists (the handle last, collectively). */
static int win_abandon(nbr_win_t *w, MPI_Comm comm, const char *call, int rc, const char *what)
{
    if (w->handle != MPI_WIN_NULL)
        NBR_UNLOCKED(PMPI_Win_free(&w->handle));
    win_destroy(w);
    return nbr_err_comm(comm, call, rc, "%s", what);
}

static int check_args(MPI_Comm comm, const char *call, MPI_Aint size, int disp_unit, MPI_Info info,
                      unsigned *flags, nbr_sched_cfg_t *sched, int *same_op)
{
    const char *bad = NULL;
    char val[MPI_MAX_INFO_VAL + 1] = "", msg[200];
    *flags = 0;
    if (parse_flags(info, flags, &bad, val, (int)sizeof val) != MPI_SUCCESS)
        return nbr_err_comm(comm, call, MPI_ERR_INFO_VALUE,
                            "info key %s has value \"%s\"; use 1 or 0 (true or false)",
                            bad ? bad : "(unreadable)", val);
    *sched =
        (nbr_sched_cfg_t){0, (MPI_Aint)nbr_cfg.SCHED_TH, 0, 0, NBR_NC_AUTO, 0, NBR_ORD_ALL, 0, 0};
    if (!parse_onoff(nbr_cfg.SCHED, &sched->on))
        return nbr_err_comm(comm, call, MPI_ERR_ARG, "NBRMA_SCHED=%s is neither on nor off",
                            nbr_cfg.SCHED);
    if (!parse_issue(nbr_cfg.ISSUE, &sched->delayed))
        return nbr_err_comm(comm, call, MPI_ERR_ARG, "NBRMA_ISSUE=%s is neither eager nor delayed",
                            nbr_cfg.ISSUE);
    if (!parse_fence(nbr_cfg.FENCE, &sched->fence_rs))
        return nbr_err_comm(comm, call, MPI_ERR_ARG,
                            "NBRMA_FENCE=%s is neither barrier nor reduce_scatter", nbr_cfg.FENCE);
    if (!parse_noncontig(nbr_cfg.NONCONTIG, &sched->noncontig))
        return nbr_err_comm(comm, call, MPI_ERR_ARG,
                            "NBRMA_NONCONTIG=%s is none of auto, blocks and packed",
                            nbr_cfg.NONCONTIG);
    if (!parse_acc(nbr_cfg.ACC, &sched->acc_hw))
        return nbr_err_comm(comm, call, MPI_ERR_ARG, "NBRMA_ACC=%s is none of am, hw and auto",
                            nbr_cfg.ACC);
    if (!parse_lock(nbr_cfg.LOCK, &sched->lock_q))
        return nbr_err_comm(comm, call, MPI_ERR_ARG, "NBRMA_LOCK=%s is neither polling nor queued",
                            nbr_cfg.LOCK);
    if (!parse_meta(nbr_cfg.META, &sched->meta_lazy))
        return nbr_err_comm(comm, call, MPI_ERR_ARG, "NBRMA_META=%s is neither table nor lazy",
                            nbr_cfg.META);
    int rc = parse_sched(info, sched, msg, sizeof msg);
    *same_op = 0;
    if (rc == MPI_SUCCESS)
        rc = parse_acc_ops(info, same_op, msg, sizeof msg);
    if (rc != MPI_SUCCESS)
        return nbr_err_comm(comm, call, rc, "%s",
                            rc == MPI_ERR_INFO ? "the info object could not be read" : msg);
    if (size < 0)
        return nbr_err_comm(comm, call, MPI_ERR_SIZE, "size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return nbr_err_comm(comm, call, MPI_ERR_DISP, "disp_unit %d is not positive", disp_unit);
    return MPI_SUCCESS;
}

/* Symmetric allocation (symheap.c) when every rank asks for the same size and disp_unit — or,
 * when some rank wants lazy metadata (NBRMA_META / nbrma_meta; 004 §III-B), for sizes and
 * disp_units that differ: the stride is then the largest size, each rank's own size and
 * disp_unit go into the segment's directory, and the layout is taken only when it reserves at
 * most twice the bytes asked for (plus alignment), since a rank's unused stride is shared
 * memory too (tmpfs backs only the pages written, but the address space and the object's size
 * count). Returns 1 with the window's memory set, 0 to use separate segments, -1 on error. */
static int try_symmetric(nbr_win_t *w, MPI_Aint size, int disp_unit, int want_lazy, MPI_Comm comm,
                         int *rc)
{
    long v[5] = {(long)size, -(long)size, disp_unit, -(long)disp_unit, want_lazy != 0};
    MPI_Request r;
    *rc = MPI_SUCCESS;
    if (!nbr_cfg.SYMMETRIC ||
        PMPI_Iallreduce(MPI_IN_PLACE, v, 5, MPI_LONG, MPI_MAX, comm, &r) != MPI_SUCCESS ||
        nbr_wait_req(&r) != MPI_SUCCESS || v[0] == 0)
        return 0;
    int n = w->size, me = w->rank;
    const int same = v[0] == -v[1] && v[2] == -v[3];
    if (!same && !v[4])
        return 0;
    size = (MPI_Aint)v[0]; /* the largest: every rank computes the same layout from here */
    size_t align = size >= 4096 ? 4096 : NBR_CACHELINE, stride, total;
    if (!same) {
        /* Unequal: the bytes asked for, each rank's rounded up to the alignment (summed as
         * doubles: P sizes near MPI_Aint's limit cannot overflow; the bound is a heuristic). */
        double mine = (double)(((size_t)w->bytes + align - 1) & ~(align - 1)), sum = 0;
        if (PMPI_Iallreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, comm, &r) != MPI_SUCCESS ||
            nbr_wait_req(&r) != MPI_SUCCESS)
            return 0;
        size_t st = ((size_t)size + align - 1) & ~(align - 1);
        if (__builtin_mul_overflow(st, (size_t)n, &total) ||
            (double)total > 2 * sum + (double)n * (double)align)
            return 0;
    }
    /* Every rank computes the same (size and n agree), so all refuse together. An object larger
     * than MPI_Aint can describe could never be addressed by target_disp either. */
    if (__builtin_add_overflow((size_t)size, align - 1, &stride) ||
        __builtin_mul_overflow(stride & ~(align - 1), (size_t)n, &total) ||
        __builtin_add_overflow(total, (size_t)n * sizeof(nbr_dirent_t), &total) ||
        total > (size_t)NBR_AINT_MAX - 4095) {
        *rc = MPI_ERR_NO_MEM;
        return -1;
    }
    w->sym_stride = stride & ~(align - 1);
    w->sym_total = (total + 4095) & ~(size_t)4095;
    w->sym = nbr_sym_alloc(comm, w->sym_total);
    if (!w->sym) {
        if (nbr_cfg.VERBOSE && me == 0)
            fprintf(stderr,
                    "libnbrma: no common address for a symmetric window of %zu bytes; "
                    "separate segments\n",
                    w->sym_total);
        return 0;
    }
    w->base = (char *)w->sym + (size_t)me * w->sym_stride;
    for (int q = 0; q < n; q++)
        w->t[q].base = (unsigned char *)w->sym + (size_t)q * w->sym_stride;
    return 1;
}

/* Are all of comm's processes in MPI_COMM_WORLD? (The am transport addresses world ranks.) */
static int in_world(MPI_Comm comm)
{
    MPI_Group g, wg;
    int n, *ranks, ok = 0;
    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return 0;
    if (PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
        if ((ok = nbr_group_translate(g, wg, &ranks, &n) == MPI_SUCCESS))
            free(ranks);
        PMPI_Group_free(&wg);
    }
    PMPI_Group_free(&g);
    return ok;
}

/* Every flavor: arguments, memory, handle, set-up. `base` is the user's memory (create), NULL
 * otherwise; *baseptr receives the memory of allocate and allocate_shared. */
static int create_window(int flavor, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                         MPI_Comm comm, void *baseptr, MPI_Win *win, const char *call)
{
    unsigned flags;
    nbr_sched_cfg_t sched;
    int same_op;
    int rc = check_args(comm, call, size, disp_unit, info, &flags, &sched, &same_op);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_win_t *w = win_new(flavor, size, disp_unit, comm);
    if (!w)
        return nbr_err_comm(comm, call, MPI_ERR_NO_MEM, "out of memory for the window object");
    w->flags = flags;
    w->acc_same_op = same_op;
    w->base = base;
    const nbr_comm_info_t *ci;
    if ((rc = comm_info(comm, &ci)) != MPI_SUCCESS) {
        win_destroy(w);
        return nbr_err_comm(comm, call, rc, "could not learn which ranks share a node");
    }
    w->nremote = w->size - ci->node_ranks;
    if (sched.fence_rs) { /* the reduce-scatter fence's collectives (every rank the same) */
        MPI_Request r;
        if (PMPI_Comm_idup(comm, &w->rs_comm, &r) != MPI_SUCCESS || nbr_wait_req(&r) != MPI_SUCCESS) {
            win_destroy(w);
            return nbr_err_comm(comm, call, MPI_ERR_INTERN,
                                "could not duplicate the communicator for the reduce-scatter "
                                "fence (NBRMA_FENCE / nbrma_fence)");
        }
        w->rs_comm_ok = 1;
        /* the per-target flags: O(P), inherent to the algorithm (004 §IV: memory O(P)) */
        if (!(w->rs_flags = calloc((size_t)w->size, sizeof *w->rs_flags))) {
            win_destroy(w);
            return nbr_err_comm(comm, call, MPI_ERR_NO_MEM,
                                "out of memory for the reduce-scatter fence's flags");
        }
        nbr_stat(&w->st_meta, &nbr_st.windows, 0, (long long)w->size * (long long)sizeof(int));
    }
    sched_apply(w, &sched);
    if (w->nremote && flavor == MPI_WIN_FLAVOR_SHARED) { /* every rank sees the same count */
        int nodes = ci->nodes;
        win_destroy(w);
        return nbr_err_comm(comm, call, MPI_ERR_RMA_SHARED,
                            "the group spans %d nodes, and shared memory needs one: split the "
                            "communicator with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) first",
                            nodes);
    }
    if (w->nremote && !in_world(comm)) { /* every rank sees the same: all refuse together */
        win_destroy(w);
        return nbr_err_comm(comm, call, MPI_ERR_UNSUPPORTED_OPERATION,
                            "the group spans nodes and includes processes outside "
                            "MPI_COMM_WORLD (spawned or connected); the active-message transport "
                            "reaches MPI_COMM_WORLD's ranks only");
    }
    if (w->nremote && flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        rc = priv_alloc(w, (size_t)size, ci->node_ranks);
        if ((rc = agree(comm, rc)) != MPI_SUCCESS) {
            win_destroy(w);
            return nbr_err_comm(comm, call, rc, "out of memory for %ld bytes of window memory",
                                (long)size);
        }
        w->base = w->priv;
    }
    int sym = 0;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE && !w->nremote &&
        (sym = try_symmetric(w, size, disp_unit, sched.meta_lazy, comm, &rc)) < 0) {
        char why[160];
        snprintf(why, sizeof why,
                 "size %ld bytes on each of %d ranks exceeds what one address space can hold",
                 (long)size, w->size);
        return win_abandon(w, comm, call, rc, why);
    }
    /* NBRMA_META=lazy where it applies (each rank on its own: every symmetric window has the
     * directory, whichever layout a rank keeps; no memory for the lazy table keeps the table). */
    /* A one-node create window's: in win_setup, with rank 0's directory. */
    if (sched.meta_lazy && sym)
        lazy_init(w);
    else if (sched.meta_lazy && nbr_cfg.VERBOSE && w->rank == 0 &&
             !(flavor == MPI_WIN_FLAVOR_CREATE && !w->nremote))
        fprintf(stderr,
                "libnbrma: %s keeps a descriptor table (nbrma_meta=lazy applies to "
                "MPI_Win_create on one node and MPI_Win_allocate on one node in a symmetric "
                "segment%s)\n",
                call,
                flavor == MPI_WIN_FLAVOR_ALLOCATE && !w->nremote
                    ? "; here the sizes differ so much that a stride of the largest would reserve "
                      "over twice the bytes asked for, NBRMA_SYMMETRIC=0, or no common address "
                      "was found"
                    : "");
    if (flavor == MPI_WIN_FLAVOR_SHARED ||
        (flavor == MPI_WIN_FLAVOR_ALLOCATE && !sym && !w->nremote))
        rc = data_handle(w, size, disp_unit, info, comm);
    else
        rc = empty_handle(w, info, comm);
    if (rc != MPI_SUCCESS)
        return win_abandon(w, comm, call, rc,
                           "the MPI library could not create the window (out of resources, "
                           "e.g. context ids for live windows?)");
    tp_why[0] = 0;
    if ((rc = win_setup(w, comm, sched.meta_lazy)) != MPI_SUCCESS)
        return win_abandon(w, comm, call, rc,
                           tp_why[0] ? tp_why
                                     : "window set-up failed on this or another rank of the group "
                                       "(no memory for control blocks in /dev/shm, or a peer's "
                                       "block or MPI_Alloc_mem memory could not be mapped, or "
                                       "another transport's set-up failed there)");
    if (baseptr)
        *(void **)baseptr = w->base;
    *win = w->handle;
    return MPI_SUCCESS;
}

/* Window creation and free run under the big lock like every entry point (their waits let it
 * go while they yield). */
#define NBR_CREATE(vendor_call, flavor, base, size, disp_unit, baseptr, call)                      \
    int rc;                                                                                        \
    NBR_ENTER();                                                                                   \
    int ref_ = serve_with_ref(comm, call, &rc);                                                    \
    if (ref_ && rc == MPI_SUCCESS)                                                                 \
        rc = create_window(flavor, base, size, disp_unit, info, comm, baseptr, win, call);         \
    NBR_LEAVE();                                                                                   \
    if (ref_ && rc == MPI_SUCCESS) { /* outside the entry point: the lock may be switched on */  \
        int r_ = 0;                                                                                \
        (void)PMPI_Comm_rank(comm, &r_);                                                           \
        nbr_progress_after_create(r_);                                                             \
    }                                                                                              \
    return ref_ ? rc : vendor_call

NBR_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    NBR_CREATE(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win),
               MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, baseptr, "MPI_Win_allocate");
}

NBR_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    NBR_CREATE(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win),
               MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, baseptr, "MPI_Win_allocate_shared");
}

NBR_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           MPI_Win *win)
{
    NBR_CREATE(PMPI_Win_create(base, size, disp_unit, info, comm, win), MPI_WIN_FLAVOR_CREATE,
               base, size, disp_unit, NULL, "MPI_Win_create");
}

NBR_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    NBR_CREATE(PMPI_Win_create_dynamic(info, comm, win), MPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, 0, 1,
               NULL, "MPI_Win_create_dynamic");
}

/* ---- dynamic windows: the region table (the descriptor list of 001 §2.2) ---------------------
 *
 * The owner keeps its attached regions sorted by address in private memory, so attach, detach
 * and lookups cost O(log n) however many regions there are (no fixed cap). Peers reach the table
 * as they reach the memory, with CMA: the owner's control block publishes its address and size
 * under a sequence number (odd while it changes), and each peer keeps a copy it refreshes only
 * when the number moved. A check covers bytes, not one region: an access may span regions
 * attached back to back. Zero-size regions cover nothing and are kept apart. */

/* The first region whose base is > addr (so regions[i-1] is the last one starting at or before
 * addr). */
static int region_after(const nbr_region_t *r, int n, MPI_Aint addr)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Are bytes [lo, hi) covered by the sorted, disjoint regions r[0..n)? */
static int regions_cover(const nbr_region_t *r, int n, MPI_Aint lo, MPI_Aint hi)
{
    if (hi <= lo)
        return 1;
    int i = region_after(r, n, lo) - 1;
    if (i < 0 || r[i].size <= lo - r[i].base) /* lo inside r[i]? (no overflow: lo >= base) */
        return 0;
    MPI_Aint end = r[i].base + r[i].size;
    while (end < hi) {
        if (++i >= n || r[i].base != end)
            return 0;
        end += r[i].size;
    }
    return 1;
}

/* Publish my table to peers (seqlock: odd while it changes). */
static void regions_publish_begin(nbr_win_t *w)
{
    __atomic_add_fetch(&w->ctl->reg_seq, 1, __ATOMIC_ACQ_REL);
}

static void regions_publish_end(nbr_win_t *w)
{
    __atomic_store_n(&w->ctl->reg_addr, (uint64_t)(uintptr_t)w->regs, __ATOMIC_RELAXED);
    __atomic_store_n(&w->ctl->reg_n, (uint64_t)w->nregs, __ATOMIC_RELAXED);
    __atomic_add_fetch(&w->ctl->reg_seq, 1, __ATOMIC_RELEASE);
}

/* A fresh copy of rank r's table, unless the cached one is current. */
static int regions_fetch(nbr_win_t *w, int r)
{
    nbr_target_t *t = &w->t[r];
    for (;;) {
        uint64_t s1 = __atomic_load_n(&t->ctl->reg_seq, __ATOMIC_ACQUIRE);
        if (s1 == t->rcache_seq && t->rcache_valid)
            return MPI_SUCCESS;
        if (s1 & 1) { /* the owner is changing it */
            nbr_relax();
            continue;
        }
        uint64_t addr = __atomic_load_n(&t->ctl->reg_addr, __ATOMIC_RELAXED);
        uint64_t n = __atomic_load_n(&t->ctl->reg_n, __ATOMIC_RELAXED);
        if (n > (uint64_t)t->rcache_cap) {
            nbr_region_t *c = realloc(t->rcache, (size_t)n * sizeof *c);
            if (!c)
                return MPI_ERR_NO_MEM;
            t->rcache = c;
            t->rcache_cap = (int)n;
        }
        ssize_t got = 0, want = (ssize_t)(n * sizeof(nbr_region_t));
        if (want > 0) {
            struct iovec li = {t->rcache, (size_t)want}, ri = {(void *)(uintptr_t)addr,
                                                              (size_t)want};
            got = process_vm_readv(t->pid, &li, 1, &ri, 1, 0);
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&t->ctl->reg_seq, __ATOMIC_ACQUIRE) != s1)
            continue; /* changed meanwhile (the old table may even be gone): again */
        if (got != want) /* the table is where its owner says, yet unreadable */
            return MPI_ERR_OTHER;
        t->rcache_n = (int)n;
        t->rcache_seq = s1;
        t->rcache_valid = 1;
        return MPI_SUCCESS;
    }
}

int nbr_region_check(nbr_win_t *w, int rank, MPI_Aint lo, MPI_Aint hi)
{
    if (hi <= lo)
        return MPI_SUCCESS;
    if (rank == w->rank)
        return regions_cover(w->regs, w->nregs, lo, hi) ? MPI_SUCCESS : MPI_ERR_RMA_RANGE;
    const nbr_target_t *t = &w->t[rank];
    if (nbr_tp_remote(t)) {
        /* Covered by the copy we have: go (the target checks again when the access arrives,
         * a region detached meanwhile is reported at completion). Not covered: fetch it. */
        if (t->rcache_valid && regions_cover(t->rcache, t->rcache_n, lo, hi))
            return MPI_SUCCESS;
        int rc = nbr_tp_of(w, rank)->regions(w, rank);
        if (rc != MPI_SUCCESS)
            return rc;
        return regions_cover(t->rcache, t->rcache_n, lo, hi) ? MPI_SUCCESS : MPI_ERR_RMA_RANGE;
    }
    int rc = regions_fetch(w, rank);
    if (rc != MPI_SUCCESS)
        return rc;
    return regions_cover(t->rcache, t->rcache_n, lo, hi) ? MPI_SUCCESS : MPI_ERR_RMA_RANGE;
}

static int attach(nbr_win_t *w, void *base, MPI_Aint size)
{
    static const char call[] = "MPI_Win_attach";
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return nbr_err(w, call, MPI_ERR_RMA_FLAVOR,
                       "the window was not created with MPI_Win_create_dynamic");
    MPI_Aint lo = (MPI_Aint)(uintptr_t)base;
    if (size < 0 || (size > 0 && !base) || (size > 0 && lo > NBR_AINT_MAX - size))
        return nbr_err(w, call, MPI_ERR_ARG, "region %p of %ld bytes is invalid", base,
                       (long)size);
    if (size == 0) { /* covers nothing; kept so that detaching it succeeds */
        if (w->nzregs == w->zcap) {
            int cap = w->zcap ? 2 * w->zcap : 8;
            void **z = realloc(w->zregs, (size_t)cap * sizeof *z);
            if (!z)
                return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for the region table");
            w->zregs = z;
            w->zcap = cap;
        }
        w->zregs[w->nzregs++] = base;
        return MPI_SUCCESS;
    }
    MPI_Aint hi = lo + size;
    int i = region_after(w->regs, w->nregs, lo);
    if ((i > 0 && w->regs[i - 1].base + w->regs[i - 1].size > lo) ||
        (i < w->nregs && w->regs[i].base < hi))
        return nbr_err(w, call, MPI_ERR_RMA_ATTACH,
                       "region %p+%ld overlaps an attached region", base, (long)size);
    if (w->nregs == w->rcap) {
        if (w->rcap > INT32_MAX / 2)
            return nbr_err(w, call, MPI_ERR_RMA_ATTACH, "too many attached regions");
        int cap = w->rcap ? 2 * w->rcap : 16;
        nbr_region_t *r = malloc((size_t)cap * sizeof *r);
        if (!r)
            return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for the region table");
        if (w->nregs)
            memcpy(r, w->regs, (size_t)w->nregs * sizeof *r);
        regions_publish_begin(w);
        nbr_region_t *old = w->regs; /* peers may still read it: freed after they can't */
        w->regs = r;
        w->rcap = cap;
        regions_publish_end(w);
        free(old);
    }
    if (nbr_tp_attach(w, base, size) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_NO_MEM,
                       "region %p+%ld cannot be registered for RDMA (ucp_mem_map failed)", base,
                       (long)size);
    regions_publish_begin(w);
    memmove(&w->regs[i + 1], &w->regs[i], (size_t)(w->nregs - i) * sizeof *w->regs);
    w->regs[i] = (nbr_region_t){lo, size};
    w->nregs++;
    regions_publish_end(w);
    return MPI_SUCCESS;
}

static int detach(nbr_win_t *w, const void *base)
{
    static const char call[] = "MPI_Win_detach";
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return nbr_err(w, call, MPI_ERR_RMA_FLAVOR,
                       "the window was not created with MPI_Win_create_dynamic");
    MPI_Aint a = (MPI_Aint)(uintptr_t)base;
    int i = region_after(w->regs, w->nregs, a) - 1;
    if (i >= 0 && w->regs[i].base == a) {
        nbr_tp_detach(w, base);
        regions_publish_begin(w);
        memmove(&w->regs[i], &w->regs[i + 1], (size_t)(w->nregs - i - 1) * sizeof *w->regs);
        w->nregs--;
        regions_publish_end(w);
        return MPI_SUCCESS;
    }
    for (int k = 0; k < w->nzregs; k++)
        if (w->zregs[k] == base) {
            w->zregs[k] = w->zregs[--w->nzregs];
            return MPI_SUCCESS;
        }
    return nbr_err(w, call, MPI_ERR_RMA_ATTACH, "%p is not an attached region", base);
}

NBR_API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    NBR_SERVE(PMPI_Win_attach(win, base, size), attach(w, base, size));
}

NBR_API int MPI_Win_detach(MPI_Win win, const void *base)
{
    NBR_SERVE(PMPI_Win_detach(win, base), detach(w, base));
}

/* ---- free ------------------------------------------------------------------------------------ */

/* Every rank stops touching its peers' memory and control blocks before any of it goes away:
 * a barrier on the control blocks' headers (each rank marks its block's incarnation freed, then
 * waits for every peer's; a peer's block reused since still reads "freed" for this window). */
static void free_barrier(nbr_win_t *w)
{
    long spins = 0;
    /* Remote peers: my operations toward them (lock releases, notifications) are all
     * acknowledged, then each is told; they tell me. Their messages for this window come in
     * order before that notification, so none arrives after it. */
    while (w->nremote &&
           (!nbr_tp_quiet(w, NBR_FLUSH_ALL) || w->tp_tries || !nbr_tp_settled(w))) {
        nbr_progress();
        nbr_wait_step(&spins);
    }
    for (int r = 0; r < w->size && w->nremote; r++)
        if (nbr_tp_remote(&w->t[r]))
            nbr_tp_notify(w, r, NBR_NS_FREED, 1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&nbr_ctl_hdr(w->ctl)->freed, w->t[w->rank].inc, __ATOMIC_RELEASE);
    for (int r = 0; r < w->size; r++) {
        uint64_t inc;
        nbr_ctl_t *c = nbr_tgt_ctl(w, r, &inc); /* a node peer's (lazy: no descriptor made) */
        while (!c ? !__atomic_load_n(&w->t[w->rank].peer[r].freed, __ATOMIC_ACQUIRE)
                  : __atomic_load_n(&nbr_ctl_hdr(c)->freed, __ATOMIC_ACQUIRE) < inc) {
            if (w->nremote)
                nbr_progress(); /* serve the remote peers still working on this window */
            else
                nbr_vendor_progress();
            nbr_wait_step(&spins);
        }
    }
}

/* An epoch a blocking call closed and returned from before it completed: an unlock toward a
 * target on another node returns once its operations are complete there (all MPI-3.1 §11.5.3
 * asks), while the release of the lock word may still be on its way (epoch.c, remote_done). No
 * request of the program stands for it, so freeing waits for it instead of refusing. */
static int internal_pending(const nbr_win_t *w)
{
    for (const nbr_epoch_t *e = w->q_head; e; e = e->next)
        if (e->closed && !e->close_req)
            return 1;
    return 0;
}

/* Freeing needs every epoch closed and complete (MPI-3.1 §11.2.5); a nonblocking epoch whose
 * request has not completed is an error, never a hang. The epoch the last fence opened may stay
 * open when it carried no RMA call. */
static int win_free(nbr_win_t *w, MPI_Win *win)
{
    static const char call[] = "MPI_Win_free";
    nbr_progress();
    long spins = 0;
    /* A queued lock released here may still wait for its successor's link (lock.c): the successor
     * needs the grant before it can unlock and reach this collective. */
    while ((NBR_UNLIKELY(w->nremote) && internal_pending(w)) || w->nhandoff) {
        nbr_progress();
        nbr_wait_step(&spins);
    }
    if (w->nlocked || w->all_ep || w->start_ep || w->post_ep || (w->fence_ep && w->epoch_ops))
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "an epoch is still open (%s); close it before freeing the window",
                       w->nlocked    ? "a lock is held"
                       : w->all_ep   ? "lock_all"
                       : w->start_ep ? "access epoch of MPI_Win_start"
                       : w->post_ep  ? "exposure epoch of MPI_Win_post"
                                     : "RMA calls issued after the last MPI_Win_fence");
    int open_fence = w->fence_ep != NULL;
    if (w->npending > open_fence || w->nflushes) {
        /* name the oldest one: which call left it behind */
        static const char *const kind[] = {"?", "fence", "start", "post", "lock", "lock_all"};
        static const char *const state[] = {"deferred", "active", "ready", "done"};
        const nbr_epoch_t *e = w->q_head;
        if (e && e == w->fence_ep) /* the open fence epoch is not one of them */
            e = e->next;
        char what[96] = "";
        if (e)
            snprintf(what, sizeof what, "; the oldest: %s epoch, %s, %s", kind[e->kind % 6],
                     state[e->state & 3], e->closed ? "closed" : "open");
        return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                       "%d closed epoch(s) and %d flush(es) have not completed yet (%d of the "
                       "epochs deferred%s); complete their requests with MPI_Wait or MPI_Test "
                       "first",
                       w->npending - open_fence, w->nflushes, w->ndeferred, what);
    }
    free_barrier(w);
    registry_remove(w);
    int rc = NBR_UNLOCKED(PMPI_Win_free(&w->handle)); /* everyone is here: its barrier is short */
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return rc;
}

NBR_API int MPI_Win_free(MPI_Win *win)
{
    nbr_win_t *w = win ? nbr_win_find(*win) : NULL;
    if (!w)
        return PMPI_Win_free(win);
    NBR_ENTER();
    int rc = win_free(w, win);
    NBR_LEAVE();
    return rc;
}

/* Reorder flags may change during the window's life (000 §VI-B); other keys go to the vendor. */
NBR_API int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_set_info(win, info);
    const char *bad = NULL;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    NBR_ENTER();
    unsigned flags = w->flags;
    char msg[200];
    nbr_sched_cfg_t sched = {w->sched,  w->sched_bytes, w->issue_cfg, w->fence_rs,    w->noncontig,
                             w->acc_hw, w->acc_order,   w->lock_q,    w->lazy != NULL};
    int rc = parse_flags(info, &flags, &bad, val, (int)sizeof val), src = MPI_SUCCESS;
    int same_op = w->acc_same_op;
    if (rc == MPI_SUCCESS) /* a key the info does not name keeps the window's setting */
        src = parse_sched(info, &sched, msg, sizeof msg);
    /* accumulate_ops: checked, but the creation's value stays in force (every path of the
     * window agreed on it then: changing it under concurrent accumulates could mix a lock path
     * and atomic instructions on one location) and MPI_Win_get_info reports it. */
    if (rc == MPI_SUCCESS && src == MPI_SUCCESS)
        src = parse_acc_ops(info, &same_op, msg, sizeof msg);
    /* nbrma_acc likewise: checked, the creation's value kept. Both paths hold the target's
     * accumulate lock, but an am accumulate still in flight when this origin turned to hw could
     * be applied after a later hw one (same-origin ordering, MPI-3.1 §11.7.2). */
    sched.acc_hw = w->acc_hw;
    /* accumulate_ordering too (MPI-3.1 §11.7.2 lets an implementation ignore a change): a window
     * that turned ordered could still have unordered accumulates in flight. */
    sched.acc_order = w->acc_order;
    /* nbrma_lock: checked, the creation's value kept (the queue nodes are part of the control
     * block laid out then, and a lock waiting in a queue must be handed off by its holder). */
    sched.lock_q = w->lock_q;
    /* nbrma_meta: checked; the layout is the creation's (every descriptor of a table window
     * exists, and a lazy window has no table to return to). */
    if (rc == MPI_SUCCESS && src == MPI_SUCCESS) {
        w->flags = flags;
        if (w->issue_delayed && !sched.delayed && !w->rs_hold && w->held_head)
            nbr_sched_release(w, NBR_FLUSH_ALL); /* eager from now: carry out what is queued */
        sched_apply(w, &sched);
        nbr_win_flags_changed(w);
        nbr_progress();
    }
    NBR_LEAVE();
    if (rc != MPI_SUCCESS)
        return nbr_err(w, "MPI_Win_set_info", MPI_ERR_INFO_VALUE,
                       "info key %s has value \"%s\"; use 1 or 0 (true or false)",
                       bad ? bad : "(unreadable)", val);
    if (src != MPI_SUCCESS)
        return nbr_err(w, "MPI_Win_set_info", src, "%s",
                       src == MPI_ERR_INFO ? "the info object could not be read" : msg);
    return PMPI_Win_set_info(win, info);
}

NBR_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
    nbr_win_t *w = nbr_win_find(win);
    int rc = PMPI_Win_get_info(win, info);
    if (!w || rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < NBR_NFLAGS && rc == MPI_SUCCESS; i++) {
        const char *v = (w->flags & flag_keys[i].bit) ? "1" : "0";
        rc = PMPI_Info_set(*info, flag_keys[i].short_key, v);
        if (rc == MPI_SUCCESS && strlen(flag_keys[i].key) < MPI_MAX_INFO_KEY)
            rc = PMPI_Info_set(*info, flag_keys[i].key, v);
    }
    char th[32];
    snprintf(th, sizeof th, "%ld", (long)w->sched_bytes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_sched", w->sched ? "on" : "off");
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_sched_th", th);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_issue", w->issue_cfg ? "delayed" : "eager");
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_fence", w->fence_rs ? "reduce_scatter" : "barrier");
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_noncontig", nc_names[w->noncontig]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_acc", acc_names[w->acc_hw]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "nbrma_lock", w->lock_q ? "queued" : "polling");
    if (rc == MPI_SUCCESS) /* the layout in force: lazy only where it applies (nbrma_meta) */
        rc = PMPI_Info_set(*info, "nbrma_meta", w->lazy ? "lazy" : "table");
    char ord[32] = "";
    for (int i = 0; i < 4; i++)
        if (w->acc_order & (1 << i))
            snprintf(ord + strlen(ord), sizeof ord - strlen(ord), "%s%s", *ord ? "," : "",
                     ord_names[i]);
    if (rc == MPI_SUCCESS) /* MPI-3.1 §11.7.2's default: rar,raw,war,waw */
        rc = PMPI_Info_set(*info, "accumulate_ordering", *ord ? ord : "none");
    if (rc == MPI_SUCCESS) /* MPI-3.1 §11.2.1's default: same_op_no_op */
        rc = PMPI_Info_set(*info, "accumulate_ops", w->acc_same_op ? "same_op" : "same_op_no_op");
    return rc;
}

/* ---- properties ------------------------------------------------------------------------------ */

NBR_API int MPI_Win_get_attr(MPI_Win win, int keyval, void *attr_val, int *flag)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_get_attr(win, keyval, attr_val, flag);
    /* The predefined attributes describe the ref window, not the vendor handle behind it. */
    static int model = MPI_WIN_UNIFIED;
    void *v = NULL;
    if (keyval == MPI_WIN_BASE)
        v = w->base;
    else if (keyval == MPI_WIN_SIZE)
        v = &w->bytes;
    else if (keyval == MPI_WIN_DISP_UNIT)
        v = &w->disp_unit;
    else if (keyval == MPI_WIN_CREATE_FLAVOR)
        v = &w->flavor;
    else if (keyval == MPI_WIN_MODEL)
        v = &model;
    else
        return PMPI_Win_get_attr(win, keyval, attr_val, flag);
    *(void **)attr_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Names are the vendor's, except that an unnamed window's name is the empty string (MPI-3.1
 * §6.8): Open MPI names its windows ("rdma window 3"), which must not show through ref. */
NBR_API int MPI_Win_set_name(MPI_Win win, const char *name)
{
    nbr_win_t *w = nbr_win_find(win);
    int rc = PMPI_Win_set_name(win, name);
    if (w && rc == MPI_SUCCESS)
        w->named = 1;
    return rc;
}

NBR_API int MPI_Win_get_name(MPI_Win win, char *name, int *len)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w || w->named)
        return PMPI_Win_get_name(win, name, len);
    name[0] = '\0';
    *len = 0;
    return MPI_SUCCESS;
}

/* Every rank's memory as ref placed it (the vendor's answer would include the control blocks at
 * the end of the last rank's segment). MPI_PROC_NULL: the first rank with memory (§11.2.3). */
NBR_API int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                 void *baseptr)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->flavor != MPI_WIN_FLAVOR_ALLOCATE)
        return nbr_err(w, "MPI_Win_shared_query", MPI_ERR_RMA_FLAVOR,
                       "the window's memory is not shared (flavor create or dynamic)");
    if (rank == MPI_PROC_NULL) {
        for (rank = 0; rank < w->size - 1 && nbr_tgt(w, rank)->size == 0; rank++)
            ;
    } else if (rank < 0 || rank >= w->size) {
        return nbr_err(w, "MPI_Win_shared_query", MPI_ERR_RANK,
                       "rank %d is not in the window's group of %d", rank, w->size);
    }
    const nbr_target_t *t = nbr_tgt(w, rank); /* (a lazy window makes it) */
    *size = t->size;
    *disp_unit = t->disp_unit;
    *(void **)baseptr = t->base ? (void *)t->base : NULL;
    return MPI_SUCCESS;
}

int nbr_world_nodes(void)
{
    const nbr_comm_info_t *ci;
    return comm_info(MPI_COMM_WORLD, &ci) == MPI_SUCCESS ? ci->nodes : -1;
}

/* ---- virtual nodes --------------------------------------------------------------------------- */

/* With NBRMA_RANKS_PER_NODE a "node" is a block of consecutive world ranks: the communicator
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives must be that block, or a program would build
 * an MPI_Win_allocate_shared window across virtual nodes (refused) from what its MPI calls one
 * node. Other split types, and real nodes, go to the MPI library. */
NBR_API int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                MPI_Comm *newcomm)
{
    lib_init();
    if (split_type != MPI_COMM_TYPE_SHARED || nbr_cfg.RANKS_PER_NODE <= 0 || !nbr_impl_ref)
        return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    int rc = PMPI_Comm_split(comm, (int)(my_node_key() & 0x3fffffff), key, newcomm);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = PMPI_Comm_set_info(*newcomm, info);
    return rc;
}
