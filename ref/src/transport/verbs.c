/* verbs.c — what libnbrma still asks libibverbs itself: which RDMA devices and ports this
 * machine has (nbrma-settings --net, and the probe the tests compare with /sys/class/infiniband).
 * The data path over RDMA is UCX's (ucx.c): the hand-written queue-pair, registration, work
 * request and completion code of issue 10 was retired when UCX replaced it (issue 22).
 * libibverbs is opened with dlopen so that neither libnbrma nor the programs that link its
 * objects need it at link or load time (NCCL's ibvwrap does the same). */
#include "verbs.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- libibverbs, loaded on first use --------------------------------------------------------- */

// clang-format off
#define VERBS_FNS(X)                                                                               \
    X(get_device_list, struct ibv_device **, (int *))                                              \
    X(free_device_list, void, (struct ibv_device **))                                              \
    X(get_device_name, const char *, (struct ibv_device *))                                        \
    X(open_device, struct ibv_context *, (struct ibv_device *))                                    \
    X(close_device, int, (struct ibv_context *))                                                   \
    X(query_device, int, (struct ibv_context *, struct ibv_device_attr *))                         \
    X(query_port, int, (struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *))
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

/* Every device libibverbs sees, with its ports' states and link layers: what UCX can use (an
 * ACTIVE port; UCX_NET_DEVICES=<device>:<port> picks one). */
void nbr_rdma_devices(void *stream)
{
    FILE *f = stream;
    if (!lib_load()) {
        fprintf(f, "RDMA devices: none (%s)\n", lib.err);
        return;
    }
    int num = 0;
    errno = 0;
    struct ibv_device **list = lib.get_device_list(&num);
    if (!list || num <= 0) {
        fprintf(f, "RDMA devices: none (ibv_get_device_list: %s)\n",
                !list ? (errno == ENOSYS ? "no kernel RDMA support" : strerror(errno))
                      : "found none");
        if (list)
            lib.free_device_list(list);
        return;
    }
    fprintf(f, "RDMA devices (libibverbs): %d\n", num);
    for (int i = 0; i < num; i++) {
        const char *name = lib.get_device_name(list[i]);
        struct ibv_context *ctx = lib.open_device(list[i]);
        struct ibv_device_attr da;
        if (!ctx || lib.query_device(ctx, &da) != 0) {
            fprintf(f, "  %s: cannot be opened\n", name);
            if (ctx)
                lib.close_device(ctx);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt; p++) {
            struct ibv_port_attr pa;
            if (port_query(ctx, (uint8_t)p, &pa) != 0)
                continue;
            fprintf(f, "  %s:%d %s, %s\n", name, p, port_state_name(pa.state),
                    pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand");
        }
        lib.close_device(ctx);
    }
    lib.free_device_list(list);
}
