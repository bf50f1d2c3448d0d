/* verbs.h — the libibverbs transport `verbs` (issue 10 part 4): RC queue pairs to every peer,
 * window memory registered (one key pair per attached region of a dynamic window), RDMA
 * write/read for put/get, 8-byte RDMA atomics for control words and for hardware-style
 * accumulate (paper 004 §III), completion by polling one CQ inside the progress engine.
 *
 * The contract. Two halves, kept apart so the first is testable on a machine without a device:
 *   device-independent — the connection record and its wire format, the region/key table and its
 *     wire format, work-request building (split, signal, wr_id), completion accounting (credits
 *     per peer, counts per operation token, ibv_wc status -> MPI error class): plain data in,
 *     plain data out; no device, no MPI call, no allocation except in the region table.
 *   device — open/close the device, PD, CQ, RC QPs and their INIT->RTR->RTS transitions, memory
 *     registration, post and poll. Every entry point refuses (MPI_ERR_OTHER, a message naming
 *     NBRMA_NET=am) unless nbr_verbs_probe() found an active port in this process.
 * libibverbs is loaded with dlopen on first use (libibverbs.so.1): libnbrma links and runs where
 * the library or its providers are missing, and then says why verbs is unavailable.
 * Errors: functions return an MPI error class (MPI_SUCCESS = 0) and, when `why` is not NULL,
 * write the reason there; outputs are set only on success. Nothing here is thread-safe except
 * nbr_verbs_probe(); the caller serializes per window (the engine already does). */
#ifndef NBR_VERBS_H
#define NBR_VERBS_H

#include <infiniband/verbs.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char text[256];
} nbr_verbs_why_t;

/* ---- availability ---------------------------------------------------------------------------- */

/* 1 when an RDMA device with an active port exists; else 0 and a reason in why[n] that starts
 * with "no RDMA device" (e.g. "no RDMA device: ibv_get_device_list found none"). Thread-safe;
 * never crashes when libibverbs or its providers are missing. */
int nbr_verbs_probe(char *why, size_t n);

/* 1 once the verbs data path serves windows through the transport seam (transport/tp.h); until
 * then a window asked to use verbs is refused (win.c) and the conformance run over verbs is
 * skipped even where a device exists (ref/tests/test_verbs_conformance.sh). */
#define NBR_VERBS_WIRED 0

/* NBRMA_NET: which transport serves inter-node windows. */
enum { NBR_VERBS_NET_AM = 0, NBR_VERBS_NET_VERBS = 1 };
/* setting "am", "verbs" or "auto", any case (NULL or "": auto) -> *net. "verbs" without a device
 * fails with MPI_ERR_OTHER and a message naming NBRMA_NET=am; an unknown value with MPI_ERR_ARG. */
int nbr_verbs_net_select(const char *setting, int *net, nbr_verbs_why_t *why);

/* ---- connection data ------------------------------------------------------------------------- */

/* What a peer needs to move its QP to RTR toward mine. */
typedef struct {
    uint32_t qp_num; /* 24 bits */
    uint32_t psn;    /* 24 bits: first packet sequence number */
    uint16_t lid;    /* InfiniBand: the port's LID; RoCE: 0 */
    uint8_t mtu;     /* enum ibv_mtu, 1..5 */
    uint8_t global;  /* 1: route by gid (RoCE, or IB across subnets) */
    uint8_t gid[16];
} nbr_verbs_conn_t;

/* Wire format (MPI_BYTE, any endianness): "nv", version, byte count, then big-endian qp_num,
 * psn, lid, mtu, flags, gid. */
#define NBR_VERBS_CONN_VERSION 1
#define NBR_VERBS_CONN_BYTES   32
void nbr_verbs_conn_pack(const nbr_verbs_conn_t *c, unsigned char out[NBR_VERBS_CONN_BYTES]);
/* MPI_ERR_OTHER on a wrong length, magic, version, or field out of range. */
int nbr_verbs_conn_unpack(const void *buf, size_t len, nbr_verbs_conn_t *c, nbr_verbs_why_t *why);

/* ---- region / key table ---------------------------------------------------------------------- */

/* One registered region, addresses absolute in its owner's address space. A local entry keeps
 * its struct ibv_mr (mr); one unpacked from a peer has mr == NULL and lkey == 0. */
typedef struct {
    uint64_t base, len;
    uint32_t lkey, rkey;
    struct ibv_mr *mr;
} nbr_verbs_region_t;

/* Sorted by base, non-overlapping (MPI_Win_attach refuses overlap too): lookup is a binary
 * search. One per rank of a window; create/allocate windows hold one region each. */
typedef struct {
    nbr_verbs_region_t *r;
    size_t n, cap;
} nbr_verbs_regtab_t;

void nbr_verbs_regtab_init(nbr_verbs_regtab_t *t);
void nbr_verbs_regtab_fini(nbr_verbs_regtab_t *t);
/* MPI_ERR_ARG: empty region, base + len past 2^64, overlap; MPI_ERR_NO_MEM. */
int nbr_verbs_regtab_insert(nbr_verbs_regtab_t *t, const nbr_verbs_region_t *reg,
                            nbr_verbs_why_t *why);
/* Detach by base. The removed entry is copied to *out (if not NULL) so the caller can deregister
 * its mr. MPI_ERR_ARG if no region starts at base. */
int nbr_verbs_regtab_remove(nbr_verbs_regtab_t *t, uint64_t base, nbr_verbs_region_t *out,
                            nbr_verbs_why_t *why);
/* The region holding all of [addr, addr + len) (len 0: holding addr), or NULL — also when
 * addr + len wraps. O(log n). */
const nbr_verbs_region_t *nbr_verbs_regtab_find(const nbr_verbs_regtab_t *t, uint64_t addr,
                                                uint64_t len);

/* Remote keys on the wire: "nk", version, 0, big-endian u32 count, then per region big-endian
 * base, len, rkey, 0 (24 bytes). */
#define NBR_VERBS_KEYS_VERSION 1
size_t nbr_verbs_keys_size(size_t nregions);
/* MPI_ERR_TRUNCATE when cap < nbr_verbs_keys_size(t->n). */
int nbr_verbs_keys_pack(const nbr_verbs_regtab_t *t, void *buf, size_t cap, size_t *used,
                        nbr_verbs_why_t *why);
/* Replaces *t's contents. MPI_ERR_OTHER on malformed input (length, magic, version, unsorted or
 * overlapping or wrapping regions); *t is unchanged then. */
int nbr_verbs_keys_unpack(const void *buf, size_t len, nbr_verbs_regtab_t *t, nbr_verbs_why_t *why);

/* ---- work requests --------------------------------------------------------------------------- */

typedef struct {
    uint32_t max_msg;      /* bytes per WR: the port's max_msg_sz */
    uint32_t max_sge;      /* SGEs per WR: min(device max_sge, NBR_VERBS_MAX_SGE) */
    uint32_t signal_every; /* k: every k-th WR of a transfer is signaled, and its last;
                              1..NBR_VERBS_SIGNAL_MAX */
} nbr_verbs_wr_cfg_t;
#define NBR_VERBS_MAX_SGE    16
#define NBR_VERBS_SIGNAL_MAX 0x7fff

/* wr_id: operation token (32 bits) | last WR of the transfer (1) | WRs a completion of this WR
 * retires (15: itself and the unsignaled ones before it, RC completing in order) | chunk index
 * modulo 2^16. */
static inline uint64_t nbr_verbs_wrid(uint32_t token, int last, uint32_t covers, uint32_t chunk)
{
    return (uint64_t)token << 32 | (uint64_t)(last != 0) << 31 | (uint64_t)(covers & 0x7fff) << 16 |
           (chunk & 0xffff);
}
static inline uint32_t nbr_verbs_wrid_token(uint64_t id)
{
    return (uint32_t)(id >> 32);
}
static inline int nbr_verbs_wrid_last(uint64_t id)
{
    return (int)(id >> 31 & 1);
}
static inline uint32_t nbr_verbs_wrid_covers(uint64_t id)
{
    return (uint32_t)(id >> 16 & 0x7fff);
}
static inline uint32_t nbr_verbs_wrid_chunk(uint64_t id)
{
    return (uint32_t)(id & 0xffff);
}

/* One RDMA write or read of local segments (addr, length, lkey) to/from contiguous remote memory
 * at raddr, built a batch of WRs at a time: a segment is cut where a WR reaches max_msg bytes or
 * max_sge SGEs. The segments are referenced, not copied, until the transfer is built. */
typedef struct {
    nbr_verbs_wr_cfg_t cfg;
    enum ibv_wr_opcode opcode;
    uint32_t token;
    const struct ibv_sge *seg;
    size_t nseg;
    uint64_t raddr;
    uint32_t rkey;
    size_t si;      /* cursor: segment, */
    uint64_t soff;  /* offset in it, */
    uint64_t roff;  /* remote offset, */
    uint64_t chunk; /* WRs built so far */
    uint64_t nwr;   /* WRs the whole transfer takes */
} nbr_verbs_xfer_t;

/* opcode IBV_WR_RDMA_WRITE or IBV_WR_RDMA_READ. MPI_ERR_ARG on a bad cfg or opcode, a segment or
 * the remote range wrapping past 2^64. Zero-length segments are skipped; a zero-byte transfer
 * takes no WR. */
int nbr_verbs_xfer_init(nbr_verbs_xfer_t *x, const nbr_verbs_wr_cfg_t *cfg,
                        enum ibv_wr_opcode opcode, uint32_t token, const struct ibv_sge *seg,
                        size_t nseg, uint64_t raddr, uint32_t rkey, nbr_verbs_why_t *why);
/* WRs the transfer takes in all (what to reserve), and those not built yet. */
static inline uint64_t nbr_verbs_xfer_total(const nbr_verbs_xfer_t *x)
{
    return x->nwr;
}
static inline uint64_t nbr_verbs_xfer_left(const nbr_verbs_xfer_t *x)
{
    return x->nwr - x->chunk;
}
/* Fills up to maxwr WRs into wr[] (chained through next, the last's next NULL) with their SGEs in
 * sge[] (room for maxwr * cfg.max_sge); returns how many. */
int nbr_verbs_xfer_next(nbr_verbs_xfer_t *x, struct ibv_send_wr *wr, int maxwr,
                        struct ibv_sge *sge);

/* One 8-byte atomic on the control word at raddr (8-byte aligned, else MPI_ERR_RMA_RANGE); the
 * old value lands at result (8 bytes, aligned, lkey). Always signaled, one WR.
 *   IBV_WR_ATOMIC_FETCH_AND_ADD: *raddr += operand;
 *   IBV_WR_ATOMIC_CMP_AND_SWP:   if (*raddr == operand) *raddr = swap. */
int nbr_verbs_wr_atomic(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode opcode,
                        uint32_t token, uint64_t result, uint32_t lkey, uint64_t raddr,
                        uint32_t rkey, uint64_t operand, uint64_t swap, nbr_verbs_why_t *why);

/* Hardware-style accumulate (paper 004 §III): an 8-byte element of (op, type) becomes one
 * fetch-and-add (SUM of 64-bit integers; NO_OP: add 0), a compare-and-swap loop (REPLACE and the
 * other predefined ops valid for 8-byte integers or double), or goes to software (the rest). */
enum { NBR_VERBS_ACC_SOFT = 0, NBR_VERBS_ACC_FADD, NBR_VERBS_ACC_CAS };
int nbr_verbs_acc_plan(MPI_Op op, MPI_Datatype type);
/* The CAS loop's new value: cur (op) operand, bit patterns of the 8-byte type. */
uint64_t nbr_verbs_acc_apply(MPI_Op op, MPI_Datatype type, uint64_t cur, uint64_t operand);

/* ---- completion accounting ------------------------------------------------------------------- */

/* WRs posted to a peer's QP and not yet retired, bounded by its send queue depth. */
typedef struct {
    uint32_t depth, outstanding;
    uint64_t retired;
    int failed; /* a WR to this peer failed: the QP is in error, nothing more completes well */
} nbr_verbs_credit_t;

/* 1 and n credits taken, or 0 (nothing taken): poll the CQ first. n > depth never fits. */
static inline int nbr_verbs_credit_reserve(nbr_verbs_credit_t *c, uint32_t n)
{
    if (n > c->depth - c->outstanding)
        return 0;
    c->outstanding += n;
    return 1;
}

/* What an operation token stands for: its peer, its WRs, how many completed. */
typedef struct {
    int peer;
    uint64_t wrs, retired;
    int done; /* its last WR completed */
    int err;  /* MPI error class of its first failed WR, or MPI_SUCCESS */
} nbr_verbs_op_t;

typedef struct {
    nbr_verbs_credit_t *peer;
    int npeers;
    nbr_verbs_op_t *op; /* indexed by token */
    uint32_t nops;
} nbr_verbs_acct_t;

/* ibv_wc_status -> MPI error class (IBV_WC_SUCCESS -> MPI_SUCCESS). */
int nbr_verbs_status_class(enum ibv_wc_status s);
/* ibv_wc_status_str where libibverbs loads, else a name of our own; never NULL. */
const char *nbr_verbs_status_str(enum ibv_wc_status s);
/* Accounts n completions as ibv_poll_cq returned them: credits back to the peer, WRs to the
 * token, failures to both. Returns MPI_SUCCESS or the class of the first failure (message in
 * why, naming peer, token and status); the remaining completions are still accounted. */
int nbr_verbs_acct_consume(nbr_verbs_acct_t *a, const struct ibv_wc *wc, int n,
                           nbr_verbs_why_t *why);

/* ---- device (only after nbr_verbs_probe() returned 1) ---------------------------------------- */

typedef struct {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    uint8_t port;
    int gid_index; /* -1: no global routing */
    struct ibv_port_attr pattr;
    struct ibv_device_attr dattr;
    nbr_verbs_wr_cfg_t cfg;
    uint32_t sq_depth;
} nbr_verbs_dev_t;

/* The first active port of the first device that has one; CQ of cq_depth entries. */
int nbr_verbs_dev_open(nbr_verbs_dev_t *d, uint32_t sq_depth, int cq_depth, nbr_verbs_why_t *why);
void nbr_verbs_dev_close(nbr_verbs_dev_t *d);
/* An RC QP in INIT, and the record the peer needs (random PSN). */
int nbr_verbs_qp_create(nbr_verbs_dev_t *d, struct ibv_qp **qp, nbr_verbs_conn_t *mine,
                        nbr_verbs_why_t *why);
/* INIT -> RTR (toward peer) -> RTS. */
int nbr_verbs_qp_connect(nbr_verbs_dev_t *d, struct ibv_qp *qp, const nbr_verbs_conn_t *mine,
                         const nbr_verbs_conn_t *peer, nbr_verbs_why_t *why);
void nbr_verbs_qp_destroy(struct ibv_qp *qp);
/* One QP per rank of comm (qps[me] NULL), records exchanged with PMPI_Alltoall; collective. On
 * failure anywhere every rank fails. */
int nbr_verbs_connect_all(nbr_verbs_dev_t *d, MPI_Comm comm, struct ibv_qp **qps,
                          nbr_verbs_why_t *why);
/* Register [base, base + len) for local write, remote read/write/atomic; fills reg. */
int nbr_verbs_mr_reg(nbr_verbs_dev_t *d, void *base, size_t len, nbr_verbs_region_t *reg,
                     nbr_verbs_why_t *why);
int nbr_verbs_mr_dereg(nbr_verbs_region_t *reg, nbr_verbs_why_t *why);
/* Posts the chain; *posted = how many WRs the QP took (all on success; on failure those before the
 * one it refused — give the others' credits back). */
int nbr_verbs_post(struct ibv_qp *qp, struct ibv_send_wr *wr, int *posted, nbr_verbs_why_t *why);
/* Polls up to 16 completions and accounts them; *got = how many. */
int nbr_verbs_poll(nbr_verbs_dev_t *d, nbr_verbs_acct_t *a, int *got, nbr_verbs_why_t *why);

#endif
