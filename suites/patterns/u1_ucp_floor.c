/* u1_ucp_floor.c — U1: the raw UCP floor under libnbrma's ucx transport (issue 22).
 *
 * The same harness as D1/D4, the same UCX settings as libnbrma's context (NBRMA_UCX_* first, then
 * UCX_*: UCX_TLS, UCX_NET_DEVICES), no MPI RMA: rank 0
 * and rank 1 create their own UCP context and worker (features RMA and AMO64, UCX_ATOMIC_MODE=cpu
 * unless set, as libnbrma's ucx transport does), exchange worker addresses and the packed key of
 * a buffer rank 1 registered with ucp_mem_map, and rank 0 times
 *   U1_ucp_put_flush/size:N  ucp_put_nbx of N bytes + ucp_ep_flush_nbx (D1's put + flush),
 *   U1_ucp_get/size:N        ucp_get_nbx of N bytes, waited for (D1's get + flush),
 *   U1_ucp_fadd              ucp_atomic_op_nbx(ADD) fetching 8 bytes (D4's MPI_Fetch_and_op).
 * and the same three as U1_ucp_*_alloc over memory UCX allocated (UCP_MEM_MAP_ALLOCATE): over
 * shared memory UCX maps such memory into the origin, which moves the data itself, while memory it
 * did not allocate it reaches with active messages (about 20x slower for 8 bytes here). libnbrma's
 * MPI_Win_allocate windows across nodes use that memory where a rank is alone on its node: compare
 * D1/D4's ref series with the _alloc rows, MPI_Win_create over malloc'ed memory with the others.
 * Rank 1 calls ucp_worker_progress in a loop until rank 0 says the sample is over (where UCX
 * emulates RMA with active messages — TCP, or shared memory for memory UCX did not allocate —
 * the target's CPU must progress: this is the best such a target can do). Compare with D1/D4's
 * ref series run with NBRMA_NET=ucx on the same virtual-node pair (make bench NODES=1 NET=ucx):
 * the ratios are what libnbrma adds to UCX. Vendor series only (it is no MPI RMA). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if NBH_HAVE_UCX
#include <ucp/api/ucp.h>

enum { OP_PUT, OP_GET, OP_FADD, OP_MASK = 0xf, OP_ALLOC = 0x10 };

typedef struct {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_ep_h ep;
    ucp_mem_h mem;
    ucp_rkey_h rkey;
    uint64_t raddr;
    char *buf;
    int alloc; /* buf is UCX's (UCP_MEM_MAP_ALLOCATE): freed by ucp_mem_unmap */
} floor_t;

static void die(const char *what, ucs_status_t st)
{
    fprintf(stderr, "U1: %s: %s\n", what, ucs_status_string(st));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void wait_req(floor_t *f, ucs_status_ptr_t r, const char *what)
{
    if (r == NULL)
        return;
    if (UCS_PTR_IS_ERR(r))
        die(what, UCS_PTR_STATUS(r));
    ucs_status_t st;
    while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS)
        ucp_worker_progress(f->worker);
    ucp_request_free(r);
    if (st != UCS_OK)
        die(what, st);
}

static void floor_open(floor_t *f, const nbh_case_t *c, size_t bytes)
{
    memset(f, 0, sizeof *f);
    const int me = c->ctx->rank;
    MPI_Comm comm = c->ctx->comm;
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read("NBRMA", NULL, &cfg); /* as libnbrma: NBRMA_UCX_* first */
    if (st != UCS_OK)
        die("ucp_config_read", st);
    if (!getenv("UCX_ATOMIC_MODE") && !getenv("NBRMA_UCX_ATOMIC_MODE"))
        ucp_config_modify(cfg, "ATOMIC_MODE", "cpu");
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                      .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64};
    if ((st = ucp_init(&p, cfg, &f->ctx)) != UCS_OK)
        die("ucp_init", st);
    ucp_config_release(cfg);
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if ((st = ucp_worker_create(f->ctx, &wp, &f->worker)) != UCS_OK)
        die("ucp_worker_create", st);
    ucp_address_t *addr;
    size_t alen;
    if ((st = ucp_worker_get_address(f->worker, &addr, &alen)) != UCS_OK)
        die("ucp_worker_get_address", st);
    void *pk = NULL;
    size_t plen = 0;
    f->alloc = me == NBH_TARGET && (c->op & OP_ALLOC);
    if (!f->alloc && !(f->buf = calloc(bytes ? bytes : 8, 1)))
        die("calloc", UCS_ERR_NO_MEMORY);
    if (me == NBH_TARGET) {
        /* The user's memory registered, or memory UCX allocates (its shared-memory transports
         * map such memory into the origin, which then reaches it without the target's CPU). */
        ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                                 UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                                   .address = f->buf,
                                   .length = bytes ? bytes : 8};
        if (f->alloc) {
            mp.field_mask |= UCP_MEM_MAP_PARAM_FIELD_FLAGS;
            mp.flags = UCP_MEM_MAP_ALLOCATE;
        }
        if ((st = ucp_mem_map(f->ctx, &mp, &f->mem)) != UCS_OK ||
            (st = ucp_rkey_pack(f->ctx, f->mem, &pk, &plen)) != UCS_OK)
            die("ucp_mem_map", st);
        if (f->alloc) {
            ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
            if ((st = ucp_mem_query(f->mem, &ma)) != UCS_OK)
                die("ucp_mem_query", st);
            f->buf = ma.address;
        }
    }
    /* Rank 1 -> rank 0: its worker address, key and buffer address; rank 0 -> 1: its address. */
    if (me == NBH_TARGET || me == NBH_ORIGIN) {
        int peer = 1 - me;
        unsigned long len[3] = {alen, plen, (unsigned long)(uintptr_t)f->buf}, plen_peer[3];
        PMPI_Sendrecv(len, 3, MPI_UNSIGNED_LONG, peer, 41, plen_peer, 3, MPI_UNSIGNED_LONG, peer,
                      41, comm, MPI_STATUS_IGNORE);
        char *paddr = malloc(plen_peer[0]), *pkey = malloc(plen_peer[1] ? plen_peer[1] : 1);
        PMPI_Sendrecv(addr, (int)alen, MPI_BYTE, peer, 42, paddr, (int)plen_peer[0], MPI_BYTE,
                      peer, 42, comm, MPI_STATUS_IGNORE);
        PMPI_Sendrecv(pk, (int)plen, MPI_BYTE, peer, 43, pkey, (int)plen_peer[1], MPI_BYTE, peer,
                      43, comm, MPI_STATUS_IGNORE);
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = (ucp_address_t *)paddr};
        if ((st = ucp_ep_create(f->worker, &ep, &f->ep)) != UCS_OK)
            die("ucp_ep_create", st);
        if (me == NBH_ORIGIN) {
            if ((st = ucp_ep_rkey_unpack(f->ep, pkey, &f->rkey)) != UCS_OK)
                die("ucp_ep_rkey_unpack", st);
            f->raddr = plen_peer[2];
        }
        free(paddr), free(pkey);
    }
    if (pk)
        ucp_rkey_buffer_release(pk);
    ucp_worker_release_address(f->worker, addr);
    PMPI_Barrier(comm);
}

static void floor_close(floor_t *f, const nbh_case_t *c)
{
    if (f->ep) { /* both sides progress until the endpoints are closed */
        ucp_request_param_t prm = {.op_attr_mask = 0};
        wait_req(f, ucp_ep_close_nbx(f->ep, &prm), "ucp_ep_close_nbx");
    }
    /* A barrier that keeps the worker serving: over TCP the peer's close needs our answers (a
     * blocking barrier here hung rank 1's close, as libnbrma's finalize once did). */
    MPI_Request b;
    int done = 0;
    if (PMPI_Ibarrier(c->ctx->comm, &b) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    while (!done) {
        ucp_worker_progress(f->worker);
        if (PMPI_Test(&b, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (f->rkey)
        ucp_rkey_destroy(f->rkey);
    if (f->mem)
        ucp_mem_unmap(f->ctx, f->mem);
    ucp_worker_destroy(f->worker);
    ucp_cleanup(f->ctx);
    if (!f->alloc)
        free(f->buf);
}

static void run(gb_state_t *st, void *arg)
{
    const nbh_case_t *c = arg;
    const int me = c->ctx->rank;
    floor_t f;
    floor_open(&f, c, c->size);
    char *src = calloc(c->size ? c->size : 8, 1);
    for (size_t i = 0; i < c->size; i++)
        src[i] = (char)(i * 13 + 5);
    static const char *const q[] = {"latency"};
    nbh_rec_t rec;
    nbh_rec_init(&rec, c, st, 1, q);
    uint64_t one = 1, old = 0;
    ucp_request_param_t none = {.op_attr_mask = 0};
    for (int i = -c->ctx->opts.warmup; i < 0 || gb_keep_running(st); i++) {
        double t = 0;
        if (me == NBH_ORIGIN) {
            double t0 = MPI_Wtime();
            if ((c->op & OP_MASK) == OP_PUT) {
                wait_req(&f, ucp_put_nbx(f.ep, src, c->size, f.raddr, f.rkey, &none), "put");
                wait_req(&f, ucp_ep_flush_nbx(f.ep, &none), "flush");
            } else if ((c->op & OP_MASK) == OP_GET) {
                wait_req(&f, ucp_get_nbx(f.ep, src, c->size, f.raddr, f.rkey, &none), "get");
            } else {
                ucp_request_param_t a = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
                                                         UCP_OP_ATTR_FIELD_REPLY_BUFFER,
                                         .datatype = ucp_dt_make_contig(8),
                                         .reply_buffer = &old};
                wait_req(&f, ucp_atomic_op_nbx(f.ep, UCP_ATOMIC_OP_ADD, &one, 1, f.raddr, f.rkey, &a),
                         "fetch-add");
            }
            t = MPI_Wtime() - t0;
            NBH_MPI(c, PMPI_Send(NULL, 0, MPI_BYTE, NBH_TARGET, 44, c->ctx->comm));
        } else if (me == NBH_TARGET) {
            MPI_Request r;
            int done = 0;
            NBH_MPI(c, PMPI_Irecv(NULL, 0, MPI_BYTE, NBH_ORIGIN, 44, c->ctx->comm, &r));
            while (!done) {
                ucp_worker_progress(f.worker);
                PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
            }
        }
        if (i >= 0)
            nbh_rec_sample(&rec, st, &t);
    }
    nbh_rec_report(&rec, st);
    double med = nbh_rec_median(&rec, 0);
    gb_set_counter(st, "bandwidth_MBps", med > 0 ? (double)c->size / med / 1e6 : 0);
    nbh_rec_free(&rec);
    free(src);
    floor_close(&f, c);
}

static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    if (s != NBH_VENDOR)
        return;
    /* _alloc: the target's memory from UCP_MEM_MAP_ALLOCATE (MPI_Win_allocate's under ref) */
    for (int a = 0; a <= OP_ALLOC; a += OP_ALLOC) {
        const char *m = a ? "_alloc" : "";
        for (int op = OP_PUT; op <= OP_GET; op++)
            for (int i = 0; i < ctx->opts.nsizes; i++)
                nbh_add_case(ctx, s, op | a, ctx->opts.sizes[i], run, "U1_ucp_%s%s/vendor/size:%zu",
                             op == OP_PUT ? "put_flush" : "get", m, ctx->opts.sizes[i]);
        nbh_add_case(ctx, s, OP_FADD | a, 8, run, "U1_ucp_fadd%s/vendor/size:8", m);
    }
}
#else
static void register_cases(nbh_ctx_t *ctx, nbh_series_t s)
{
    (void)ctx, (void)s;
    fprintf(stderr, "U1: built without UCX (make UCX=0): no raw UCP floor\n");
}
#endif

int main(int argc, char **argv)
{
    static const nbh_experiment_t ex = {
        .id = "U1",
        .title = "the raw UCP floor: put+flush, get, fetch-add (issue 22)",
        .header = "origin rank 0, target rank 1 polling ucp_worker_progress; UCP calls only\n"
                  "sample = ucp_put_nbx + ucp_ep_flush_nbx, ucp_get_nbx, or a fetching\n"
                  "ucp_atomic_op_nbx(ADD), waited for at the origin",
        .min_ranks = 2,
        .uses = NBH_USE_SIZES,
        .default_sizes = "8,64,4K,64K,1M",
        .quick_sizes = "8,1M",
        .default_iters = 1000,
        .register_cases = register_cases,
        .series = 1u << NBH_VENDOR,
        .series_why = "it measures UCX itself, no MPI RMA",
    };
    return nbh_main(argc, argv, &ex);
}
