/* verbs.c — the libibverbs transport (contract in verbs.h). First the device-independent parts
 * (connection records, region/key tables, work-request building, completion accounting), which
 * the unit test drives on any machine; then the device parts, reached only after the probe found
 * an active port. libibverbs is opened with dlopen so that neither libnbrma nor the programs that
 * link its objects need it at link or load time (NCCL's ibvwrap does the same). */
#include "verbs.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

__attribute__((format(printf, 3, 4))) static int fail(nbr_verbs_why_t *why, int cls,
                                                      const char *fmt, ...)
{
    if (why) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why->text, sizeof why->text, fmt, ap);
        va_end(ap);
    }
    return cls;
}

/* ---- libibverbs, loaded on first use --------------------------------------------------------- */

// clang-format off
#define VERBS_FNS(X)                                                                               \
    X(get_device_list, struct ibv_device **, (int *))                                              \
    X(free_device_list, void, (struct ibv_device **))                                              \
    X(get_device_name, const char *, (struct ibv_device *))                                        \
    X(open_device, struct ibv_context *, (struct ibv_device *))                                    \
    X(close_device, int, (struct ibv_context *))                                                   \
    X(query_device, int, (struct ibv_context *, struct ibv_device_attr *))                         \
    X(query_port, int, (struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *))            \
    X(query_gid, int, (struct ibv_context *, uint8_t, int, union ibv_gid *))                       \
    X(alloc_pd, struct ibv_pd *, (struct ibv_context *))                                           \
    X(dealloc_pd, int, (struct ibv_pd *))                                                          \
    X(create_cq, struct ibv_cq *,                                                                  \
      (struct ibv_context *, int, void *, struct ibv_comp_channel *, int))                         \
    X(destroy_cq, int, (struct ibv_cq *))                                                          \
    X(create_qp, struct ibv_qp *, (struct ibv_pd *, struct ibv_qp_init_attr *))                    \
    X(modify_qp, int, (struct ibv_qp *, struct ibv_qp_attr *, int))                                \
    X(destroy_qp, int, (struct ibv_qp *))                                                          \
    X(reg_mr, struct ibv_mr *, (struct ibv_pd *, void *, size_t, int))                             \
    X(dereg_mr, int, (struct ibv_mr *))                                                            \
    X(wc_status_str, const char *, (enum ibv_wc_status))
// clang-format on

static struct {
    void *handle;
    char err[192];
#define X(name, ret, args) ret(*name) args;
    VERBS_FNS(X)
#undef X
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_open(void)
{
    void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib.err, sizeof lib.err, "libibverbs.so.1 cannot be loaded (%s)", dlerror());
        return;
    }
    /* The IBVERBS_1.1 ABI is the one this header describes (1.0 is the pre-2006 compat one). */
#define X(name, ret, args)                                                                         \
    {                                                                                              \
        void *f = dlvsym(h, "ibv_" #name, "IBVERBS_1.1");                                          \
        if (!f)                                                                                    \
            f = dlsym(h, "ibv_" #name);                                                            \
        if (!f) {                                                                                  \
            snprintf(lib.err, sizeof lib.err, "libibverbs.so.1 lacks ibv_%s", #name);              \
            dlclose(h);                                                                            \
            return;                                                                                \
        }                                                                                          \
        lib.name = (ret(*) args)f;                                                                 \
    }
    VERBS_FNS(X)
#undef X
    lib.handle = h;
}

static int lib_load(void)
{
    pthread_once(&lib_once, lib_open);
    return lib.handle != NULL;
}

/* ibv_query_port as verbs.h's inline wrapper does it: the extended op where the provider has it,
 * else the compat entry point (which fills the older, shorter struct). */
static int port_query(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa)
{
    struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
    memset(pa, 0, sizeof *pa);
    if (vctx)
        return vctx->query_port(ctx, port, pa, sizeof *pa);
    return lib.query_port(ctx, port, (struct _compat_ibv_port_attr *)pa);
}

static const char *port_state_name(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_DOWN:
        return "DOWN";
    case IBV_PORT_INIT:
        return "INIT";
    case IBV_PORT_ARMED:
        return "ARMED";
    case IBV_PORT_ACTIVE:
        return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
        return "ACTIVE_DEFER";
    default:
        return "NOP";
    }
}

/* ---- probe ----------------------------------------------------------------------------------- */

static struct {
    int ok;
    char why[256];
    char dev[IBV_SYSFS_NAME_MAX];
    uint8_t port;
} probed;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_run(void)
{
    if (!lib_load()) {
        snprintf(probed.why, sizeof probed.why, "no RDMA device: %s", lib.err);
        return;
    }
    int num = 0;
    errno = 0;
    struct ibv_device **list = lib.get_device_list(&num);
    if (!list) {
        snprintf(probed.why, sizeof probed.why, "no RDMA device: ibv_get_device_list failed (%s)",
                 errno == ENOSYS ? "no kernel RDMA support" : strerror(errno));
        return;
    }
    if (num <= 0) {
        snprintf(probed.why, sizeof probed.why, "no RDMA device: ibv_get_device_list found none");
        goto free_list;
    }
    char seen[160] = "";
    size_t used = 0;
    for (int i = 0; i < num && !probed.ok; i++) {
        const char *name = lib.get_device_name(list[i]);
        struct ibv_context *ctx = lib.open_device(list[i]);
        if (!ctx) {
            used += (size_t)snprintf(seen + used, used < sizeof seen ? sizeof seen - used : 0,
                                     "%s%s cannot be opened", used ? ", " : "", name);
            used = used < sizeof seen ? used : sizeof seen;
            continue;
        }
        struct ibv_device_attr da;
        if (lib.query_device(ctx, &da) == 0) {
            for (int p = 1; p <= da.phys_port_cnt && !probed.ok; p++) {
                struct ibv_port_attr pa;
                if (port_query(ctx, (uint8_t)p, &pa) != 0)
                    continue;
                if (pa.state == IBV_PORT_ACTIVE) {
                    probed.ok = 1;
                    snprintf(probed.dev, sizeof probed.dev, "%s", name);
                    probed.port = (uint8_t)p;
                    snprintf(probed.why, sizeof probed.why, "RDMA device %s port %d is active",
                             name, p);
                } else {
                    used += (size_t)snprintf(
                        seen + used, used < sizeof seen ? sizeof seen - used : 0,
                        "%s%s port %d is %s", used ? ", " : "", name, p, port_state_name(pa.state));
                    used = used < sizeof seen ? used : sizeof seen;
                }
            }
        }
        lib.close_device(ctx);
    }
    if (!probed.ok)
        snprintf(probed.why, sizeof probed.why, "no RDMA device with an active port: %s",
                 seen[0] ? seen : "no port answered");
free_list:
    lib.free_device_list(list);
}

int nbr_verbs_probe(char *why, size_t n)
{
    pthread_once(&probe_once, probe_run);
    if (why && n)
        snprintf(why, n, "%s", probed.why);
    return probed.ok;
}

int nbr_verbs_net_select(const char *setting, int *net, nbr_verbs_why_t *why)
{
    char reason[256];
    if (!setting || !setting[0] || strcasecmp(setting, "auto") == 0) {
        *net = nbr_verbs_probe(reason, sizeof reason) ? NBR_VERBS_NET_VERBS : NBR_VERBS_NET_AM;
        return MPI_SUCCESS;
    }
    if (strcasecmp(setting, "am") == 0) {
        *net = NBR_VERBS_NET_AM;
        return MPI_SUCCESS;
    }
    if (strcasecmp(setting, "verbs") == 0) {
        if (!nbr_verbs_probe(reason, sizeof reason))
            return fail(why, MPI_ERR_OTHER,
                        "NBRMA_NET=verbs, but %s; set NBRMA_NET=am (active messages over MPI) "
                        "or NBRMA_NET=auto",
                        reason);
        *net = NBR_VERBS_NET_VERBS;
        return MPI_SUCCESS;
    }
    return fail(why, MPI_ERR_ARG, "NBRMA_NET=%.64s: unknown transport (am, verbs or auto)",
                setting);
}

/* ---- connection records ---------------------------------------------------------------------- */

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

void nbr_verbs_conn_pack(const nbr_verbs_conn_t *c, unsigned char out[NBR_VERBS_CONN_BYTES])
{
    out[0] = 'n';
    out[1] = 'v';
    out[2] = NBR_VERBS_CONN_VERSION;
    out[3] = NBR_VERBS_CONN_BYTES;
    put_be(out + 4, c->qp_num, 4);
    put_be(out + 8, c->psn, 4);
    put_be(out + 12, c->lid, 2);
    out[14] = c->mtu;
    out[15] = c->global ? 1 : 0;
    memcpy(out + 16, c->gid, 16);
}

int nbr_verbs_conn_unpack(const void *buf, size_t len, nbr_verbs_conn_t *c, nbr_verbs_why_t *why)
{
    const unsigned char *b = buf;
    if (!b || len != NBR_VERBS_CONN_BYTES)
        return fail(why, MPI_ERR_OTHER, "connection record of %zu bytes (expected %d)", len,
                    NBR_VERBS_CONN_BYTES);
    if (b[0] != 'n' || b[1] != 'v')
        return fail(why, MPI_ERR_OTHER, "connection record: bad magic 0x%02x%02x", b[0], b[1]);
    if (b[2] != NBR_VERBS_CONN_VERSION || b[3] != NBR_VERBS_CONN_BYTES)
        return fail(why, MPI_ERR_OTHER,
                    "connection record version %d, %d bytes (this libnbrma: version %d, %d): "
                    "every rank must run the same libnbrma",
                    b[2], b[3], NBR_VERBS_CONN_VERSION, NBR_VERBS_CONN_BYTES);
    nbr_verbs_conn_t v;
    v.qp_num = (uint32_t)get_be(b + 4, 4);
    v.psn = (uint32_t)get_be(b + 8, 4);
    v.lid = (uint16_t)get_be(b + 12, 2);
    v.mtu = b[14];
    if (v.qp_num > 0xffffff || v.psn > 0xffffff)
        return fail(why, MPI_ERR_OTHER, "connection record: qp_num 0x%x or psn 0x%x over 24 bits",
                    v.qp_num, v.psn);
    if (v.mtu < IBV_MTU_256 || v.mtu > IBV_MTU_4096)
        return fail(why, MPI_ERR_OTHER, "connection record: mtu code %d not in 1..5", v.mtu);
    if (b[15] > 1)
        return fail(why, MPI_ERR_OTHER, "connection record: unknown flags 0x%02x", b[15]);
    v.global = b[15];
    memcpy(v.gid, b + 16, 16);
    *c = v;
    return MPI_SUCCESS;
}

/* ---- region / key tables --------------------------------------------------------------------- */

void nbr_verbs_regtab_init(nbr_verbs_regtab_t *t)
{
    t->r = NULL;
    t->n = t->cap = 0;
}

void nbr_verbs_regtab_fini(nbr_verbs_regtab_t *t)
{
    free(t->r);
    nbr_verbs_regtab_init(t);
}

/* Regions hold [base, last], last = base + len - 1: a region may end at the top of the address
 * space without its end overflowing. 0 when len is 0 or the region wraps. */
static int region_last(uint64_t base, uint64_t len, uint64_t *last)
{
    if (len == 0 || len - 1 > UINT64_MAX - base)
        return 0;
    *last = base + (len - 1);
    return 1;
}

/* Index of the first region whose base is above addr (n when none). */
static size_t upper(const nbr_verbs_regtab_t *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int nbr_verbs_regtab_insert(nbr_verbs_regtab_t *t, const nbr_verbs_region_t *reg,
                            nbr_verbs_why_t *why)
{
    uint64_t last;
    if (!region_last(reg->base, reg->len, &last))
        return fail(why, MPI_ERR_ARG, "region 0x%llx+%llu is empty or wraps past 2^64",
                    (unsigned long long)reg->base, (unsigned long long)reg->len);
    size_t i = upper(t, reg->base);
    if (i > 0 && t->r[i - 1].base + (t->r[i - 1].len - 1) >= reg->base)
        return fail(why, MPI_ERR_ARG, "region 0x%llx+%llu overlaps registered region 0x%llx+%llu",
                    (unsigned long long)reg->base, (unsigned long long)reg->len,
                    (unsigned long long)t->r[i - 1].base, (unsigned long long)t->r[i - 1].len);
    if (i < t->n && t->r[i].base <= last)
        return fail(why, MPI_ERR_ARG, "region 0x%llx+%llu overlaps registered region 0x%llx+%llu",
                    (unsigned long long)reg->base, (unsigned long long)reg->len,
                    (unsigned long long)t->r[i].base, (unsigned long long)t->r[i].len);
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4;
        if (cap > SIZE_MAX / sizeof *t->r)
            return fail(why, MPI_ERR_NO_MEM, "region table: %zu regions", t->n);
        nbr_verbs_region_t *r = realloc(t->r, cap * sizeof *r);
        if (!r)
            return fail(why, MPI_ERR_NO_MEM, "region table: no memory for %zu regions", cap);
        t->r = r;
        t->cap = cap;
    }
    memmove(t->r + i + 1, t->r + i, (t->n - i) * sizeof *t->r);
    t->r[i] = *reg;
    t->n++;
    return MPI_SUCCESS;
}

int nbr_verbs_regtab_remove(nbr_verbs_regtab_t *t, uint64_t base, nbr_verbs_region_t *out,
                            nbr_verbs_why_t *why)
{
    size_t i = upper(t, base);
    if (i == 0 || t->r[i - 1].base != base)
        return fail(why, MPI_ERR_ARG, "no registered region starts at 0x%llx",
                    (unsigned long long)base);
    i--;
    if (out)
        *out = t->r[i];
    memmove(t->r + i, t->r + i + 1, (t->n - i - 1) * sizeof *t->r);
    t->n--;
    return MPI_SUCCESS;
}

const nbr_verbs_region_t *nbr_verbs_regtab_find(const nbr_verbs_regtab_t *t, uint64_t addr,
                                                uint64_t len)
{
    uint64_t last;
    if (!region_last(addr, len ? len : 1, &last))
        return NULL;
    size_t i = upper(t, addr);
    if (i == 0)
        return NULL;
    const nbr_verbs_region_t *r = &t->r[i - 1];
    return last - r->base <= r->len - 1 ? r : NULL; /* r->base <= addr <= last */
}

#define KEYS_HEAD  8
#define KEYS_ENTRY 24

size_t nbr_verbs_keys_size(size_t nregions)
{
    if (nregions > (SIZE_MAX - KEYS_HEAD) / KEYS_ENTRY || nregions > UINT32_MAX)
        return SIZE_MAX;
    return KEYS_HEAD + nregions * KEYS_ENTRY;
}

int nbr_verbs_keys_pack(const nbr_verbs_regtab_t *t, void *buf, size_t cap, size_t *used,
                        nbr_verbs_why_t *why)
{
    size_t need = nbr_verbs_keys_size(t->n);
    if (need == SIZE_MAX || cap < need)
        return fail(why, MPI_ERR_TRUNCATE, "key table of %zu regions needs %zu bytes, have %zu",
                    t->n, need, cap);
    unsigned char *b = buf;
    b[0] = 'n';
    b[1] = 'k';
    b[2] = NBR_VERBS_KEYS_VERSION;
    b[3] = 0;
    put_be(b + 4, t->n, 4);
    for (size_t i = 0; i < t->n; i++) {
        unsigned char *e = b + KEYS_HEAD + i * KEYS_ENTRY;
        put_be(e, t->r[i].base, 8);
        put_be(e + 8, t->r[i].len, 8);
        put_be(e + 16, t->r[i].rkey, 4);
        put_be(e + 20, 0, 4);
    }
    *used = need;
    return MPI_SUCCESS;
}

int nbr_verbs_keys_unpack(const void *buf, size_t len, nbr_verbs_regtab_t *t, nbr_verbs_why_t *why)
{
    const unsigned char *b = buf;
    if (!b || len < KEYS_HEAD)
        return fail(why, MPI_ERR_OTHER, "key table of %zu bytes: shorter than its header", len);
    if (b[0] != 'n' || b[1] != 'k' || b[3] != 0)
        return fail(why, MPI_ERR_OTHER, "key table: bad magic");
    if (b[2] != NBR_VERBS_KEYS_VERSION)
        return fail(why, MPI_ERR_OTHER,
                    "key table version %d (this libnbrma: %d): every rank must run the same "
                    "libnbrma",
                    b[2], NBR_VERBS_KEYS_VERSION);
    uint64_t n = get_be(b + 4, 4);
    if ((len - KEYS_HEAD) % KEYS_ENTRY != 0 || (len - KEYS_HEAD) / KEYS_ENTRY != n)
        return fail(why, MPI_ERR_OTHER, "key table: %llu regions announced in %zu bytes",
                    (unsigned long long)n, len);
    nbr_verbs_region_t *r = NULL;
    if (n > 0 && !(r = malloc((size_t)n * sizeof *r)))
        return fail(why, MPI_ERR_NO_MEM, "key table: no memory for %llu regions",
                    (unsigned long long)n);
    uint64_t prev_last = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *e = b + KEYS_HEAD + i * KEYS_ENTRY;
        r[i] = (nbr_verbs_region_t){
            .base = get_be(e, 8), .len = get_be(e + 8, 8), .rkey = (uint32_t)get_be(e + 16, 4)};
        uint64_t last;
        if (!region_last(r[i].base, r[i].len, &last) || get_be(e + 20, 4) != 0 ||
            (i > 0 && r[i].base <= prev_last)) {
            nbr_verbs_region_t bad = r[i];
            free(r);
            return fail(why, MPI_ERR_OTHER,
                        "key table: region %zu (0x%llx+%llu) is empty, wraps, overlaps the one "
                        "before, or has reserved bits set",
                        i, (unsigned long long)bad.base, (unsigned long long)bad.len);
        }
        prev_last = last;
    }
    free(t->r);
    t->r = r;
    t->n = t->cap = (size_t)n;
    return MPI_SUCCESS;
}

/* ---- work requests --------------------------------------------------------------------------- */

static void skip_empty(nbr_verbs_xfer_t *x)
{
    while (x->si < x->nseg && x->soff == x->seg[x->si].length) {
        x->si++;
        x->soff = 0;
    }
}

/* Cuts the next WR's SGEs from the cursor (into sge when not NULL); returns its byte count. */
static uint64_t cut(nbr_verbs_xfer_t *x, struct ibv_sge *sge, int *nsge)
{
    uint64_t bytes = 0;
    uint32_t ns = 0;
    skip_empty(x);
    while (ns < x->cfg.max_sge && bytes < x->cfg.max_msg && x->si < x->nseg) {
        const struct ibv_sge *s = &x->seg[x->si];
        uint64_t take = s->length - x->soff;
        if (take > x->cfg.max_msg - bytes)
            take = x->cfg.max_msg - bytes;
        if (sge)
            sge[ns] = (struct ibv_sge){
                .addr = s->addr + x->soff, .length = (uint32_t)take, .lkey = s->lkey};
        ns++;
        bytes += take;
        x->soff += take;
        skip_empty(x);
    }
    *nsge = (int)ns;
    return bytes;
}

int nbr_verbs_xfer_init(nbr_verbs_xfer_t *x, const nbr_verbs_wr_cfg_t *cfg,
                        enum ibv_wr_opcode opcode, uint32_t token, const struct ibv_sge *seg,
                        size_t nseg, uint64_t raddr, uint32_t rkey, nbr_verbs_why_t *why)
{
    if (cfg->max_msg == 0 || cfg->max_sge == 0 || cfg->max_sge > NBR_VERBS_MAX_SGE ||
        cfg->signal_every == 0 || cfg->signal_every > NBR_VERBS_SIGNAL_MAX)
        return fail(why, MPI_ERR_ARG,
                    "work-request limits max_msg %u, max_sge %u (1..%d), signal_every %u (1..%d)",
                    cfg->max_msg, cfg->max_sge, NBR_VERBS_MAX_SGE, cfg->signal_every,
                    NBR_VERBS_SIGNAL_MAX);
    if (opcode != IBV_WR_RDMA_WRITE && opcode != IBV_WR_RDMA_READ)
        return fail(why, MPI_ERR_ARG, "transfer opcode %d is neither RDMA write nor read",
                    (int)opcode);
    uint64_t total = 0;
    for (size_t i = 0; i < nseg; i++) {
        uint64_t last;
        if (seg[i].length == 0)
            continue;
        if (!region_last(seg[i].addr, seg[i].length, &last) || total > UINT64_MAX - seg[i].length)
            return fail(why, MPI_ERR_ARG, "local segment %zu (0x%llx+%u) wraps past 2^64", i,
                        (unsigned long long)seg[i].addr, seg[i].length);
        total += seg[i].length;
    }
    uint64_t rlast;
    if (total > 0 && !region_last(raddr, total, &rlast))
        return fail(why, MPI_ERR_RMA_RANGE, "remote range 0x%llx+%llu wraps past 2^64",
                    (unsigned long long)raddr, (unsigned long long)total);
    *x = (nbr_verbs_xfer_t){.cfg = *cfg,
                            .opcode = opcode,
                            .token = token,
                            .seg = seg,
                            .nseg = nseg,
                            .raddr = raddr,
                            .rkey = rkey};
    nbr_verbs_xfer_t probe = *x;
    int ns;
    while (cut(&probe, NULL, &ns) > 0)
        x->nwr++;
    return MPI_SUCCESS;
}

int nbr_verbs_xfer_next(nbr_verbs_xfer_t *x, struct ibv_send_wr *wr, int maxwr, struct ibv_sge *sge)
{
    int k = 0;
    const uint64_t every = x->cfg.signal_every;
    while (k < maxwr && x->chunk < x->nwr) {
        int ns;
        struct ibv_sge *s = sge + (size_t)k * x->cfg.max_sge;
        uint64_t bytes = cut(x, s, &ns);
        uint64_t c = x->chunk++;
        int last = x->chunk == x->nwr;
        int sig = (c + 1) % every == 0 || last;
        /* A signaled WR retires itself and the unsignaled ones since the previous signaled one. */
        uint32_t covers = sig ? (uint32_t)(c + 1 - every * (c / every)) : 0;
        memset(&wr[k], 0, sizeof wr[k]);
        wr[k].wr_id = nbr_verbs_wrid(x->token, last, covers, (uint32_t)c);
        wr[k].sg_list = s;
        wr[k].num_sge = ns;
        wr[k].opcode = x->opcode;
        wr[k].send_flags = sig ? IBV_SEND_SIGNALED : 0;
        wr[k].wr.rdma.remote_addr = x->raddr + x->roff;
        wr[k].wr.rdma.rkey = x->rkey;
        x->roff += bytes;
        if (k > 0)
            wr[k - 1].next = &wr[k];
        k++;
    }
    return k;
}

int nbr_verbs_wr_atomic(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode opcode,
                        uint32_t token, uint64_t result, uint32_t lkey, uint64_t raddr,
                        uint32_t rkey, uint64_t operand, uint64_t swap, nbr_verbs_why_t *why)
{
    if (opcode != IBV_WR_ATOMIC_FETCH_AND_ADD && opcode != IBV_WR_ATOMIC_CMP_AND_SWP)
        return fail(why, MPI_ERR_ARG,
                    "atomic opcode %d is neither fetch-and-add nor "
                    "compare-and-swap",
                    (int)opcode);
    if (raddr % 8 != 0)
        return fail(why, MPI_ERR_RMA_RANGE,
                    "RDMA atomic on remote address 0x%llx: not 8-byte aligned",
                    (unsigned long long)raddr);
    if (result % 8 != 0)
        return fail(why, MPI_ERR_ARG, "RDMA atomic result buffer 0x%llx: not 8-byte aligned",
                    (unsigned long long)result);
    *sge = (struct ibv_sge){.addr = result, .length = 8, .lkey = lkey};
    memset(wr, 0, sizeof *wr);
    wr->wr_id = nbr_verbs_wrid(token, 1, 1, 0);
    wr->sg_list = sge;
    wr->num_sge = 1;
    wr->opcode = opcode;
    wr->send_flags = IBV_SEND_SIGNALED;
    wr->wr.atomic.remote_addr = raddr;
    wr->wr.atomic.compare_add = operand;
    wr->wr.atomic.swap = swap;
    wr->wr.atomic.rkey = rkey;
    return MPI_SUCCESS;
}

/* 8-byte types the NIC's 64-bit atomics can serve: 's' signed, 'u' unsigned, 'd' double. */
static char acc_kind(MPI_Datatype t)
{
    if (t == MPI_INT64_T || t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT ||
        (sizeof(long) == 8 && t == MPI_LONG))
        return 's';
    if (t == MPI_UINT64_T || t == MPI_UNSIGNED_LONG_LONG ||
        (sizeof(unsigned long) == 8 && t == MPI_UNSIGNED_LONG))
        return 'u';
    if (t == MPI_DOUBLE)
        return 'd';
    return 0;
}

int nbr_verbs_acc_plan(MPI_Op op, MPI_Datatype type)
{
    char k = acc_kind(type);
    if (!k)
        return NBR_VERBS_ACC_SOFT;
    if (op == MPI_NO_OP || (op == MPI_SUM && k != 'd'))
        return NBR_VERBS_ACC_FADD;
    if (op == MPI_REPLACE || op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX)
        return NBR_VERBS_ACC_CAS;
    if (k != 'd' && (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_LAND ||
                     op == MPI_LOR || op == MPI_LXOR))
        return NBR_VERBS_ACC_CAS;
    return NBR_VERBS_ACC_SOFT;
}

uint64_t nbr_verbs_acc_apply(MPI_Op op, MPI_Datatype type, uint64_t cur, uint64_t operand)
{
    char k = acc_kind(type);
    if (op == MPI_NO_OP)
        return cur;
    if (op == MPI_REPLACE)
        return operand;
    if (k == 'd') {
        double a, b, r;
        memcpy(&a, &cur, 8);
        memcpy(&b, &operand, 8);
        r = op == MPI_SUM    ? a + b
            : op == MPI_PROD ? a * b
            : op == MPI_MIN  ? (b < a ? b : a)
                             : (b > a ? b : a);
        uint64_t out;
        memcpy(&out, &r, 8);
        return out;
    }
    int64_t sa = (int64_t)cur, sb = (int64_t)operand;
    if (op == MPI_SUM)
        return cur + operand; /* wraps, as the NIC's fetch-and-add does */
    if (op == MPI_PROD)
        return cur * operand;
    if (op == MPI_MIN)
        return k == 's' ? (uint64_t)(sb < sa ? sb : sa) : (operand < cur ? operand : cur);
    if (op == MPI_MAX)
        return k == 's' ? (uint64_t)(sb > sa ? sb : sa) : (operand > cur ? operand : cur);
    if (op == MPI_BAND)
        return cur & operand;
    if (op == MPI_BOR)
        return cur | operand;
    if (op == MPI_BXOR)
        return cur ^ operand;
    if (op == MPI_LAND)
        return cur && operand;
    if (op == MPI_LOR)
        return cur || operand;
    if (op == MPI_LXOR)
        return !cur != !operand;
    return cur;
}

/* ---- completion accounting ------------------------------------------------------------------- */

int nbr_verbs_status_class(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS:
        return MPI_SUCCESS;
    /* The target refused the key or the range: outside what it registered for the window. */
    case IBV_WC_REM_ACCESS_ERR:
        return MPI_ERR_RMA_RANGE;
    /* Our own request was malformed: a libnbrma bug, not the application's. */
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_LOC_EEC_OP_ERR:
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_MW_BIND_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_BAD_RESP_ERR:
    case IBV_WC_LOC_RDD_VIOL_ERR:
    case IBV_WC_INV_EECN_ERR:
    case IBV_WC_INV_EEC_STATE_ERR:
        return MPI_ERR_INTERN;
    /* The peer or the fabric went away (retries exhausted, fatal, flushed after one of these). */
    default:
        return MPI_ERR_OTHER;
    }
}

const char *nbr_verbs_status_str(enum ibv_wc_status s)
{
    const char *str = lib_load() ? lib.wc_status_str(s) : NULL;
    if (str)
        return str;
    switch (s) {
    case IBV_WC_SUCCESS:
        return "success";
    case IBV_WC_REM_ACCESS_ERR:
        return "remote access error";
    case IBV_WC_RETRY_EXC_ERR:
        return "transport retry counter exceeded";
    case IBV_WC_WR_FLUSH_ERR:
        return "Work Request Flushed Error";
    default:
        return "unknown completion status";
    }
}

int nbr_verbs_acct_consume(nbr_verbs_acct_t *a, const struct ibv_wc *wc, int n,
                           nbr_verbs_why_t *why)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        uint64_t id = wc[i].wr_id;
        uint32_t tok = nbr_verbs_wrid_token(id), covers = nbr_verbs_wrid_covers(id);
        if (tok >= a->nops || a->op[tok].peer < 0 || a->op[tok].peer >= a->npeers) {
            if (rc == MPI_SUCCESS)
                rc = fail(why, MPI_ERR_INTERN, "completion for unknown token %u (wr_id 0x%llx)",
                          tok, (unsigned long long)id);
            continue;
        }
        nbr_verbs_op_t *op = &a->op[tok];
        nbr_verbs_credit_t *cr = &a->peer[op->peer];
        if (wc[i].status == IBV_WC_SUCCESS) {
            if (covers == 0 || covers > cr->outstanding || covers > op->wrs - op->retired) {
                if (rc == MPI_SUCCESS)
                    rc = fail(why, MPI_ERR_INTERN,
                              "completion accounting: token %u retires %u WRs, but peer %d has "
                              "%u and the token %llu outstanding",
                              tok, covers, op->peer, cr->outstanding,
                              (unsigned long long)(op->wrs - op->retired));
                continue;
            }
            cr->outstanding -= covers;
            cr->retired += covers;
            op->retired += covers;
            op->done |= nbr_verbs_wrid_last(id);
            continue;
        }
        /* A failed WR puts the QP in error: the rest are flushed, unsignaled ones included, so
         * count at least one per completion and clamp — the peer is unusable anyway. */
        int cls = nbr_verbs_status_class(wc[i].status);
        uint32_t k = covers ? covers : 1;
        k = k < cr->outstanding ? k : cr->outstanding;
        cr->outstanding -= k;
        cr->retired += k;
        cr->failed = 1;
        op->retired += k < op->wrs - op->retired ? k : op->wrs - op->retired;
        op->done = 1;
        if (op->err == MPI_SUCCESS)
            op->err = cls;
        if (rc == MPI_SUCCESS)
            rc = fail(why, cls,
                      "RDMA to rank %d failed (token %u, chunk %u): %s (status %d, vendor error "
                      "0x%x)",
                      op->peer, tok, nbr_verbs_wrid_chunk(id), nbr_verbs_status_str(wc[i].status),
                      (int)wc[i].status, wc[i].vendor_err);
    }
    return rc;
}

/* ---- device ---------------------------------------------------------------------------------- */

/* Every device entry point starts here: nothing touches a device the probe did not find. */
static int refuse_without_device(nbr_verbs_why_t *why)
{
    char reason[256];
    if (nbr_verbs_probe(reason, sizeof reason))
        return MPI_SUCCESS;
    return fail(why, MPI_ERR_OTHER,
                "the verbs transport needs an RDMA device, but %s; set "
                "NBRMA_NET=am",
                reason);
}

int nbr_verbs_dev_open(nbr_verbs_dev_t *d, uint32_t sq_depth, int cq_depth, nbr_verbs_why_t *why)
{
    int rc = refuse_without_device(why);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_verbs_dev_t v = {.port = probed.port, .gid_index = -1};
    int num = 0;
    struct ibv_device **list = lib.get_device_list(&num);
    if (!list)
        return fail(why, MPI_ERR_OTHER, "ibv_get_device_list: %s", strerror(errno));
    for (int i = 0; i < num && !v.ctx; i++)
        if (strcmp(lib.get_device_name(list[i]), probed.dev) == 0)
            v.ctx = lib.open_device(list[i]);
    lib.free_device_list(list);
    if (!v.ctx)
        return fail(why, MPI_ERR_OTHER, "ibv_open_device(%s) failed", probed.dev);
    if (lib.query_device(v.ctx, &v.dattr) != 0 || port_query(v.ctx, v.port, &v.pattr) != 0) {
        rc = fail(why, MPI_ERR_OTHER, "querying %s port %d failed", probed.dev, v.port);
        goto close_device;
    }
    if (v.dattr.atomic_cap == IBV_ATOMIC_NONE) {
        rc = fail(why, MPI_ERR_OTHER,
                  "%s offers no RDMA atomics, which lock words need; set NBRMA_NET=am", probed.dev);
        goto close_device;
    }
    /* RoCE routes by GID (index 0: the port's default); InfiniBand within a subnet by LID. */
    if (v.pattr.link_layer == IBV_LINK_LAYER_ETHERNET)
        v.gid_index = 0;
    v.sq_depth = sq_depth < (uint32_t)v.dattr.max_qp_wr ? sq_depth : (uint32_t)v.dattr.max_qp_wr;
    v.cfg = (nbr_verbs_wr_cfg_t){
        .max_msg = v.pattr.max_msg_sz,
        .max_sge =
            v.dattr.max_sge < NBR_VERBS_MAX_SGE ? (uint32_t)v.dattr.max_sge : NBR_VERBS_MAX_SGE,
        .signal_every = v.sq_depth / 4 > 1 ? (v.sq_depth / 4 < 64 ? v.sq_depth / 4 : 64) : 1,
    };
    if (!(v.pd = lib.alloc_pd(v.ctx))) {
        rc = fail(why, MPI_ERR_OTHER, "ibv_alloc_pd(%s) failed", probed.dev);
        goto close_device;
    }
    if (!(v.cq = lib.create_cq(v.ctx, cq_depth, NULL, NULL, 0))) {
        rc = fail(why, MPI_ERR_OTHER, "ibv_create_cq(%s, %d entries) failed: %s", probed.dev,
                  cq_depth, strerror(errno));
        goto dealloc_pd;
    }
    *d = v;
    return MPI_SUCCESS;
dealloc_pd:
    lib.dealloc_pd(v.pd);
close_device:
    lib.close_device(v.ctx);
    return rc;
}

void nbr_verbs_dev_close(nbr_verbs_dev_t *d)
{
    if (!d->ctx)
        return;
    lib.destroy_cq(d->cq);
    lib.dealloc_pd(d->pd);
    lib.close_device(d->ctx);
    memset(d, 0, sizeof *d);
}

int nbr_verbs_qp_create(nbr_verbs_dev_t *d, struct ibv_qp **qp, nbr_verbs_conn_t *mine,
                        nbr_verbs_why_t *why)
{
    int rc = refuse_without_device(why);
    if (rc != MPI_SUCCESS)
        return rc;
    struct ibv_qp_init_attr ia = {
        .send_cq = d->cq,
        .recv_cq = d->cq,
        .cap = {.max_send_wr = d->sq_depth,
                .max_recv_wr = 1,
                .max_send_sge = d->cfg.max_sge,
                .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 0,
    };
    struct ibv_qp *q = lib.create_qp(d->pd, &ia);
    if (!q)
        return fail(why, MPI_ERR_OTHER, "ibv_create_qp (RC, %u send WRs): %s", d->sq_depth,
                    strerror(errno));
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT,
        .pkey_index = 0,
        .port_num = d->port,
        .qp_access_flags =
            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
    };
    int e =
        lib.modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (e) {
        rc = fail(why, MPI_ERR_OTHER, "QP %u to INIT: %s", q->qp_num, strerror(e));
        goto destroy_qp;
    }
    uint32_t psn = 0;
    if (getrandom(&psn, sizeof psn, 0) != sizeof psn)
        psn = (uint32_t)(uintptr_t)q ^ q->qp_num;
    nbr_verbs_conn_t c = {.qp_num = q->qp_num,
                          .psn = psn & 0xffffff,
                          .lid = d->pattr.lid,
                          .mtu = (uint8_t)d->pattr.active_mtu,
                          .global = d->gid_index >= 0};
    if (c.global) {
        union ibv_gid gid;
        if (lib.query_gid(d->ctx, d->port, d->gid_index, &gid) != 0) {
            rc = fail(why, MPI_ERR_OTHER, "ibv_query_gid(port %d, index %d) failed", d->port,
                      d->gid_index);
            goto destroy_qp;
        }
        memcpy(c.gid, gid.raw, 16);
    }
    *qp = q;
    *mine = c;
    return MPI_SUCCESS;
destroy_qp:
    lib.destroy_qp(q);
    return rc;
}

int nbr_verbs_qp_connect(nbr_verbs_dev_t *d, struct ibv_qp *qp, const nbr_verbs_conn_t *mine,
                         const nbr_verbs_conn_t *peer, nbr_verbs_why_t *why)
{
    int rc = refuse_without_device(why);
    if (rc != MPI_SUCCESS)
        return rc;
    int rd = d->dattr.max_qp_rd_atom > 0 ? d->dattr.max_qp_rd_atom : 1;
    int init_rd = d->dattr.max_qp_init_rd_atom > 0 ? d->dattr.max_qp_init_rd_atom : 1;
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = (enum ibv_mtu)(mine->mtu < peer->mtu ? mine->mtu : peer->mtu),
        .dest_qp_num = peer->qp_num,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = (uint8_t)(rd < 16 ? rd : 16),
        .min_rnr_timer = 12,
        .ah_attr = {.dlid = peer->lid, .sl = 0, .src_path_bits = 0, .port_num = d->port},
    };
    if (peer->global) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)(d->gid_index >= 0 ? d->gid_index : 0);
        a.ah_attr.grh.hop_limit = 64;
    }
    int e = lib.modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (e)
        return fail(why, MPI_ERR_OTHER, "QP %u to RTR toward QP %u (lid %u): %s", qp->qp_num,
                    peer->qp_num, peer->lid, strerror(e));
    a = (struct ibv_qp_attr){
        .qp_state = IBV_QPS_RTS,
        .timeout = 14, /* 4.096 us * 2^14 = 67 ms per try */
        .retry_cnt = 7,
        .rnr_retry = 7,
        .sq_psn = mine->psn,
        .max_rd_atomic = (uint8_t)(init_rd < 16 ? init_rd : 16),
    };
    e = lib.modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (e)
        return fail(why, MPI_ERR_OTHER, "QP %u to RTS: %s", qp->qp_num, strerror(e));
    return MPI_SUCCESS;
}

void nbr_verbs_qp_destroy(struct ibv_qp *qp)
{
    if (qp && lib.handle)
        lib.destroy_qp(qp);
}

int nbr_verbs_connect_all(nbr_verbs_dev_t *d, MPI_Comm comm, struct ibv_qp **qps,
                          nbr_verbs_why_t *why)
{
    int me, p, rc = MPI_SUCCESS, any;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &p);
    for (int r = 0; r < p; r++)
        qps[r] = NULL;
    size_t np = p > 0 ? (size_t)(unsigned)p : 1, bytes = np * NBR_VERBS_CONN_BYTES;
    unsigned char *out = calloc(1, bytes), *in = calloc(1, bytes);
    nbr_verbs_conn_t *mine = calloc(np, sizeof *mine);
    if (!out || !in || !mine)
        rc = fail(why, MPI_ERR_NO_MEM, "connection records for %d ranks: no memory", p);
    for (int r = 0; r < p && rc == MPI_SUCCESS; r++)
        if (r != me && (rc = nbr_verbs_qp_create(d, &qps[r], &mine[r], why)) == MPI_SUCCESS)
            nbr_verbs_conn_pack(&mine[r], out + (size_t)r * NBR_VERBS_CONN_BYTES);
    /* Everyone fails together: a rank that could not create its QPs must not leave the others
     * waiting in the exchange. */
    PMPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any != MPI_SUCCESS) {
        if (rc == MPI_SUCCESS)
            rc = fail(why, any, "another rank could not create its queue pairs");
        goto destroy_qps;
    }
    PMPI_Alltoall(out, NBR_VERBS_CONN_BYTES, MPI_BYTE, in, NBR_VERBS_CONN_BYTES, MPI_BYTE, comm);
    for (int r = 0; r < p && rc == MPI_SUCCESS; r++) {
        nbr_verbs_conn_t peer;
        if (r == me)
            continue;
        rc = nbr_verbs_conn_unpack(in + (size_t)r * NBR_VERBS_CONN_BYTES, NBR_VERBS_CONN_BYTES,
                                   &peer, why);
        if (rc == MPI_SUCCESS)
            rc = nbr_verbs_qp_connect(d, qps[r], &mine[r], &peer, why);
    }
    /* Also a barrier: nobody sends before every peer's QP is ready to receive. */
    PMPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any != MPI_SUCCESS) {
        if (rc == MPI_SUCCESS)
            rc = fail(why, any, "another rank could not connect its queue pairs");
        goto destroy_qps;
    }
    goto free_records;
destroy_qps:
    for (int r = 0; r < p; r++) {
        nbr_verbs_qp_destroy(qps[r]);
        qps[r] = NULL;
    }
free_records:
    free(mine);
    free(in);
    free(out);
    return rc;
}

int nbr_verbs_mr_reg(nbr_verbs_dev_t *d, void *base, size_t len, nbr_verbs_region_t *reg,
                     nbr_verbs_why_t *why)
{
    int rc = refuse_without_device(why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (len == 0)
        return fail(why, MPI_ERR_ARG, "registering 0 bytes at %p: skip empty regions", base);
    struct ibv_mr *mr = lib.reg_mr(d->pd, base, len,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
    if (!mr)
        return fail(why, errno == ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER,
                    "ibv_reg_mr(%p, %zu bytes): %s", base, len, strerror(errno));
    *reg = (nbr_verbs_region_t){
        .base = (uintptr_t)base, .len = len, .lkey = mr->lkey, .rkey = mr->rkey, .mr = mr};
    return MPI_SUCCESS;
}

int nbr_verbs_mr_dereg(nbr_verbs_region_t *reg, nbr_verbs_why_t *why)
{
    if (!reg->mr)
        return MPI_SUCCESS;
    int e = lib.handle ? lib.dereg_mr(reg->mr) : EINVAL;
    if (e)
        return fail(why, MPI_ERR_OTHER, "ibv_dereg_mr(0x%llx+%llu): %s",
                    (unsigned long long)reg->base, (unsigned long long)reg->len, strerror(e));
    reg->mr = NULL;
    return MPI_SUCCESS;
}

int nbr_verbs_post(struct ibv_qp *qp, struct ibv_send_wr *wr, int *posted, nbr_verbs_why_t *why)
{
    struct ibv_send_wr *bad = NULL;
    int e = ibv_post_send(qp, wr, &bad);
    int k = 0;
    for (struct ibv_send_wr *w = wr; w && w != bad; w = w->next)
        k++;
    *posted = k; /* all of them: bad stays NULL on success */
    if (e)
        return fail(why, MPI_ERR_OTHER, "ibv_post_send on QP %u refused work request %d: %s",
                    qp->qp_num, k, strerror(e));
    return MPI_SUCCESS;
}

int nbr_verbs_poll(nbr_verbs_dev_t *d, nbr_verbs_acct_t *a, int *got, nbr_verbs_why_t *why)
{
    if (!d->cq)
        return refuse_without_device(why) != MPI_SUCCESS
                   ? MPI_ERR_OTHER
                   : fail(why, MPI_ERR_OTHER, "polling a device that is not open");
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(d->cq, 16, wc);
    if (n < 0)
        return fail(why, MPI_ERR_OTHER, "ibv_poll_cq failed (%d)", n);
    *got = n;
    return nbr_verbs_acct_consume(a, wc, n, why);
}
