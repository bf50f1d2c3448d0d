/* am.c — the active-message transport: RMA between nodes over the vendor's two-sided MPI.
 *
 * Everything goes over a private duplicate of MPI_COMM_WORLD (made at MPI_Init), so nothing can
 * match the application's messages, and nothing here ever blocks inside the vendor: sends and
 * receives are nonblocking and tested from the progress engine (paper 000 §VII-D: step 1
 * collects completions and serves incoming packets — puts, gets, accumulates, atomics, lock
 * words and notifications are carried out by the target's CPU there; step 2's issuing happens
 * in the RMA calls themselves).
 *
 * Protocol (one request stream per ordered pair of processes: MPI's non-overtaking rule keeps a
 * pair's requests in order, which same-origin accumulate ordering and "data before done
 * notification" rely on):
 *   TAG_REQ  origin -> target: a header, plus up to AM_EAGER payload bytes (puts, accumulates,
 *            compare-and-swap operands);
 *   TAG_REP  target -> origin: the acknowledgement of a request, with fetched data (gets of at
 *            most AM_EAGER bytes, accumulate results, atomics' old values) and an error code;
 *   TAG_PUT  origin -> target: a large put's payload (rendezvous: the target receives it
 *            straight into window memory when it serves the header; headers and payloads of a
 *            pair are both in order, so the k-th large header matches the k-th payload);
 *   TAG_GET  target -> origin: a large get's data, sent from window memory into the origin
 *            buffer, where the origin posted the receive before it sent the header.
 * Every request the origin sends holds a token until its acknowledgement (or, for a large get,
 * its data) arrives: the token's completion is the operation's remote completion. Memory per
 * peer is bounded: at most AM_CREDITS requests in flight toward one process (an issuing call
 * polls until one completes), each at most AM_EAGER + header bytes; larger puts and gets are
 * rendezvous transfers that the MPI library moves without buffering. Accumulates are split at
 * element boundaries into AM_EAGER pieces, so they never rendezvous: each piece is applied under
 * the target's accumulate lock, shared with its node's load/store peers (element-wise
 * atomicity holds across transports). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtype.h"
#include "layout.h"
#include "nbr.h"
#include "op.h"
#include "transport/tp.h"

enum { TAG_REQ = 0x6e01, TAG_REP, TAG_PUT, TAG_GET };
#define AM_EAGER    16384      /* payload bytes inside a request or reply */
#define AM_NPOST    8          /* receives kept posted for requests, and for replies */
#define AM_CREDITS  64         /* requests in flight toward one process */
#define AM_RNDV_MAX (1L << 30) /* largest single rendezvous message (int counts) */
#define AM_NOTOK    UINT32_MAX /* a request that wants no reply */

enum {
    K_PUT = 1,
    K_PUT_RNDV,
    K_GET,
    K_GET_RNDV,
    K_ACC,
    K_CAS,
    K_AMO,
    K_NOTIFY,
    K_REGIONS,
    /* Packed transfers of noncontiguous target data (layout.h): the header is followed by the
     * target's layout, then (puts, accumulates) the piece's packed bytes. off: the target
     * displacement; a: the piece's position in the packed stream; len: its bytes; ACC: b = 1 to
     * fetch. */
    K_PUT_PACKED,
    K_PUT_PACKED_RNDV,
    K_GET_PACKED,
    K_GET_PACKED_RNDV,
    K_ACC_PACKED,
    /* Dynamic windows over UCX: the packed key of the region holding address off (ucx.c). */
    K_RKEY,
};
#define AM_LAY_MAX 4096 /* bytes of a layout in a packed request (85 runs) */

typedef struct {
    uint32_t kind, win; /* win: the target's id of the window */
    int32_t from;       /* the origin's rank in the window */
    int32_t op, type;   /* ACC: op and basic type indices (dtype.c, op.c); AMO: op, word;
                           NOTIFY: slot */
    uint32_t tok;       /* the origin's token, AM_NOTOK: no reply */
    uint64_t off, len;  /* target byte offset (dynamic: address), bytes */
    uint64_t a, b;      /* AMO operands; NOTIFY value; ACC: a = 1 to fetch */
} am_hdr_t;

typedef struct {
    uint32_t tok;
    int32_t err;
    uint64_t len, val; /* fetched bytes that follow; AMO: the old value */
} am_rep_t;

/* ---- state (under the big lock) -------------------------------------------------------------- */

unsigned long nbr_am_sent, nbr_am_sent_packed;
static MPI_Comm am_comm = MPI_COMM_NULL;
static int am_world, am_me, am_busy;

/* The receives kept posted for requests and for replies: rings in posting order. MPI matches
 * messages to posted receives in posting order, so serving a ring from its head serves a pair's
 * requests in the order they were sent (a test of all of them at once, MPI_Testsome, reports
 * completions by index and would reorder them). */
typedef struct {
    MPI_Request r[AM_NPOST];
    void *buf[AM_NPOST];
    MPI_Status st[AM_NPOST]; /* of a completed receive, until it is served */
    unsigned char done[AM_NPOST];
    int head, tag;
    size_t size;
} am_ring_t;
static am_ring_t ring_req = {.tag = TAG_REQ, .size = sizeof(am_hdr_t) + AM_EAGER};
static am_ring_t ring_rep = {.tag = TAG_REP, .size = sizeof(am_rep_t) + AM_EAGER};
static int rings_ready; /* their requests are valid handles (MPI_REQUEST_NULL or posted) */

/* Every other request of ours the MPI library holds, with what to do when it completes. */
enum { A_SEND = 1, A_PUT_RECV, A_GET_RECV, A_GET_SEND, A_PUT_PACKED };
typedef struct {
    int what, peer;
    uint32_t tok; /* A_PUT_RECV: the origin's token to acknowledge; A_GET_RECV: mine */
    int err;      /* A_PUT_RECV: the error to report (the data went to scratch) */
    void *buf;    /* freed on completion (A_SEND, scratch), or a posted receive's buffer */
    size_t size;  /* A_SEND: of buf (eager buffers go back to the pool) */
    /* A_GET_SEND: a large get's data leaving my window memory (or scratch, buf); the origin's
     * later requests wait until it has left (rndv_in). */
    /* A_PUT_PACKED: a packed put's payload landing in buf, then scattered into the window by the
     * layout `lay` (a copy) from stream position `pos`, at target displacement `off`. */
    void *lay;
    uint64_t off, pos;
    nbr_win_t *w;
} am_act_t;
static MPI_Request *reqs;
static am_act_t *acts;
static int nreq, capreq;
/* One test of everything at once (the head receive of each ring, then reqs): one run of the MPI
 * library's progress engine per step instead of one per request (testing all sixteen posted
 * receives each time cost more than it saved). Sized 2 * AM_NPOST + capreq. */
static MPI_Request *all;
static MPI_Status *sts;
static int *idx;

/* Tokens: operations in flight, by index. */
typedef struct {
    int used, peer; /* peer: world rank */
    int counted;    /* in tp_out (an RMA operation, release or notification), else a lock try */
    nbr_win_t *w;
    int rank;  /* the target's rank in the window */
    void *dst; /* fetched data goes here */
    /* An accumulate's result of a padded pair type (MPI_SHORT_INT, MPI_DOUBLE_INT, ...): written
     * element by element, data fields only — the padding is the program's (MPI-3.1 §4.1). */
    MPI_Datatype res_pair;
    MPI_Aint res_ext;
    /* A packed get's (or get_accumulate's) data: scattered into the origin's buffer by `job`
     * from stream position `pos` instead of copied to dst. */
    struct am_unpack *job;
    int64_t pos;
    nbr_tp_cell_t *cell;
    nbr_req_t *req;
    uint32_t next_free;
    int rndv_get; /* a large get: its data, not a reply, completes it */
} am_tok_t;
static am_tok_t *toks;
static uint32_t ntok, captok, free_tok = UINT32_MAX;
static long outstanding;
static int *credits; /* per world rank: requests in flight toward it */

/* The target's side of "a pair's requests take effect in order": a large put lands when its
 * payload's receive completes, after its header was served. Until then every later request of
 * that origin waits here, copied, and is served when the payload is in (so an origin may send its
 * done notification or lock release right behind its data: transport/tp.h). At most AM_CREDITS
 * requests per origin, so at most AM_CREDITS * AM_EAGER bytes per origin wait here. */
typedef struct am_defer {
    struct am_defer *next;
    size_t len;
    double due; /* the emulated wire: not before this time (seconds, CLOCK_MONOTONIC) */
    char msg[]; /* header, payload */
} am_defer_t;
/* Per world rank: its rendezvous transfers still touching my window memory — large puts whose
 * payload has not landed, and large gets whose data my send is still reading. A request served
 * after one of them could otherwise see (a put) or change (a get, then a lock release or a done
 * notification that lets my application write) memory the transfer still uses. */
static int *rndv_in;
static am_defer_t **dq_head, **dq_tail; /* per world rank: its requests waiting behind them */

/* An emulated wire (NBRMA_WIRE_US, NBRMA_WIRE_MBPS; docs/ref.md): on one machine virtual nodes
 * talk through shared memory, where an inter-node transfer costs the target's CPU a copy and no
 * time on a wire. With a wire, each request an origin sends me takes effect no earlier than
 * WIRE_US after it arrived plus its bytes at WIRE_MBPS, the link from each origin carrying one
 * request at a time (link_free): what an RDMA network adds and the CPUs do not spend, which is
 * the premise of paper 002's model (the RDMA engine streams D_I while the CPU is free). Requests
 * wait in the origin's deferral queue (in order, as behind a large put); replies are not delayed.
 * The clock is the target's: the wire starts when its progress first sees the message. */
static double wire_lat, wire_bps; /* seconds; bytes per second (0: unlimited) */
static double *link_free;         /* per world rank: when its link to me is free again */
static long wire_held;            /* requests waiting in deferral queues for the wire */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Windows by id. */
static nbr_win_t **wins;
static int nwins_cap, nam_wins;

/* ---- message buffers ------------------------------------------------------------------------- */

/* Eager messages (a header and at most AM_EAGER bytes) come from a free list: a put+flush is two
 * of them, and malloc/free of 16 KiB each time is a measurable part of a round trip. */
#define AM_BUF_SIZE (sizeof(am_hdr_t) + AM_EAGER)
#define AM_POOL_MAX 64 /* kept for reuse; beyond that freed */
static void *pool[AM_POOL_MAX];
static int npool;

static void *buf_get(size_t n)
{
    if (n <= AM_BUF_SIZE && npool)
        return pool[--npool];
    return malloc(n <= AM_BUF_SIZE ? AM_BUF_SIZE : n);
}

static void buf_put(void *b, size_t n)
{
    if (b && n <= AM_BUF_SIZE && npool < AM_POOL_MAX)
        pool[npool++] = b;
    else
        free(b);
}

/* ---- requests array -------------------------------------------------------------------------- */

static int act_add(MPI_Request r, am_act_t a)
{
    if (nreq == capreq) {
        int cap = capreq ? 2 * capreq : 64;
        MPI_Request *nr = realloc(reqs, (size_t)cap * sizeof *nr);
        if (nr)
            reqs = nr;
        am_act_t *na = realloc(acts, (size_t)cap * sizeof *na);
        if (na)
            acts = na;
        size_t tot = (size_t)cap + 2 * AM_NPOST;
        MPI_Status *ns = realloc(sts, tot * sizeof *ns);
        if (ns)
            sts = ns;
        int *ni = realloc(idx, tot * sizeof *ni);
        if (ni)
            idx = ni;
        MPI_Request *nl = realloc(all, tot * sizeof *nl);
        if (nl)
            all = nl;
        if (!nr || !na || !ns || !ni || !nl)
            return MPI_ERR_NO_MEM;
        capreq = cap;
    }
    reqs[nreq] = r;
    acts[nreq++] = a;
    return MPI_SUCCESS;
}

static int ring_post(am_ring_t *g, int i)
{
    if (!g->buf[i] && !(g->buf[i] = malloc(g->size)))
        return MPI_ERR_NO_MEM;
    return PMPI_Irecv(g->buf[i], (int)g->size, MPI_BYTE, MPI_ANY_SOURCE, g->tag, am_comm, &g->r[i]);
}

/* Send `n` bytes of `b` (freed when sent if `own`). */
static int send_bytes(void *b, size_t n, int peer, int tag, int own)
{
    MPI_Request r;
    int rc = PMPI_Isend(b, (int)n, MPI_BYTE, peer, tag, am_comm, &r);
    if (rc == MPI_SUCCESS)
        rc = act_add(
            r,
            (am_act_t){.what = A_SEND, .peer = peer, .buf = own ? b : NULL, .size = own ? n : 0});
    else if (own)
        buf_put(b, n);
    return rc;
}

/* ---- set-up ---------------------------------------------------------------------------------- */

void nbr_am_init(void)
{
    MPI_Comm c;
    MPI_Request r;
    if (PMPI_Comm_size(MPI_COMM_WORLD, &am_world) != MPI_SUCCESS ||
        PMPI_Comm_rank(MPI_COMM_WORLD, &am_me) != MPI_SUCCESS ||
        PMPI_Comm_idup(MPI_COMM_WORLD, &c, &r) != MPI_SUCCESS || nbr_wait_req(&r) != MPI_SUCCESS)
        return;
    if (PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        !(credits = calloc((size_t)am_world, sizeof *credits)) ||
        !(rndv_in = calloc((size_t)am_world, sizeof *rndv_in)) ||
        !(dq_head = calloc((size_t)am_world, sizeof *dq_head)) ||
        !(dq_tail = calloc((size_t)am_world, sizeof *dq_tail)) ||
        !(link_free = calloc((size_t)am_world, sizeof *link_free))) {
        free(credits), free(rndv_in), free(dq_head), free(dq_tail), free(link_free);
        credits = rndv_in = NULL;
        dq_head = dq_tail = NULL;
        link_free = NULL;
        (void)PMPI_Comm_free(&c);
        return;
    }
    wire_lat = (double)nbr_cfg.WIRE_US * 1e-6;
    wire_bps = (double)nbr_cfg.WIRE_MBPS * 1e6;
    am_comm = c;
}

int nbr_am_ready(void)
{
    return am_comm != MPI_COMM_NULL;
}

/* The receives are posted with the first window that has remote pairs: a job of one-node
 * windows never pays for them. */
static int am_start(void)
{
    if (nbr_tp_on)
        return MPI_SUCCESS;
    for (int i = 0; i < AM_NPOST; i++)
        ring_req.r[i] = ring_rep.r[i] = MPI_REQUEST_NULL;
    rings_ready = 1;
    for (int i = 0; i < AM_NPOST; i++) {
        int rc = ring_post(&ring_req, i);
        if (rc == MPI_SUCCESS)
            rc = ring_post(&ring_rep, i);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    nbr_tp_on = 1;
    return MPI_SUCCESS;
}

int nbr_am_win_register(nbr_win_t *w)
{
    if (!nbr_am_ready() || am_start() != MPI_SUCCESS)
        return -1;
    int id = 0;
    while (id < nwins_cap && wins[id])
        id++;
    if (id == nwins_cap) {
        int cap = nwins_cap ? 2 * nwins_cap : 16;
        nbr_win_t **nw = realloc(wins, (size_t)cap * sizeof *nw);
        if (!nw)
            return -1;
        memset(nw + nwins_cap, 0, (size_t)(cap - nwins_cap) * sizeof *nw);
        wins = nw;
        nwins_cap = cap;
    }
    wins[id] = w;
    nam_wins++;
    return id;
}

void nbr_am_win_unregister(nbr_win_t *w)
{
    if (w->amid >= 0 && w->amid < nwins_cap && wins[w->amid] == w) {
        wins[w->amid] = NULL;
        nam_wins--;
    }
    w->amid = -1;
}

long nbr_am_outstanding(void)
{
    return outstanding;
}

/* ---- packed data at the origin ----------------------------------------------------------------- */

/* Where a packed get's stream lands in the origin's buffer: a copy of the origin's layout (the
 * program may free its datatype before the operation completes), shared by the call's pieces. */
typedef struct am_unpack {
    int refs;
    char *buf;
    MPI_Datatype pair; /* padded pair results: written field by field (pext-byte elements) */
    MPI_Aint pext;
    nbr_lay_cur_t cur;
    nbr_run_t run[];
} am_unpack_t;

static am_unpack_t *job_new(const nbr_tp_side_t *d)
{
    am_unpack_t *j = malloc(sizeof *j + (size_t)d->nrun * sizeof(nbr_run_t));
    if (!j)
        return NULL;
    j->refs = 1;
    j->buf = (char *)d->buf;
    j->pair = d->pair;
    j->pext = d->pext;
    memcpy(j->run, d->run, (size_t)d->nrun * sizeof(nbr_run_t));
    nbr_lay_cur_init(&j->cur, j->run, d->nrun, d->extent, d->count, d->ebytes);
    return j;
}

static void job_put(am_unpack_t *j)
{
    if (j && --j->refs == 0)
        free(j);
}

static void job_scatter(am_unpack_t *j, int64_t pos, const char *in, int64_t len)
{
    if (!j->pext) {
        nbr_lay_scatter(&j->cur, j->buf, pos, in, len);
        return;
    }
    int64_t off, n;
    nbr_lay_seek(&j->cur, pos);
    while (len > 0 && nbr_lay_next(&j->cur, len, &off, &n)) {
        nbr_op_apply(MPI_REPLACE, j->pair, in, j->buf + off, (MPI_Aint)(n / j->pext));
        in += n;
        len -= n;
    }
}

/* Token `tok` carries a piece of job's stream at position pos. */
static void tok_job(uint32_t tok, am_unpack_t *job, int64_t pos)
{
    if (!job || tok >= ntok || !toks[tok].used)
        return;
    job->refs++;
    toks[tok].job = job;
    toks[tok].pos = pos;
}

/* ---- tokens ---------------------------------------------------------------------------------- */

static int tok_new(nbr_win_t *w, int rank, void *dst, nbr_tp_cell_t *cell, uint32_t *out)
{
    if (free_tok == UINT32_MAX) {
        if (ntok == captok) {
            uint32_t cap = captok ? 2 * captok : 256;
            am_tok_t *t = realloc(toks, (size_t)cap * sizeof *t);
            if (!t)
                return MPI_ERR_NO_MEM;
            toks = t;
            captok = cap;
        }
        toks[ntok].next_free = UINT32_MAX;
        free_tok = ntok++;
    }
    /* A request-based call's first remote operation makes its request (rma.c's NBR_R_ENTRY);
     * a lock try is never one. */
    if (!cell && !w->op_req && w->want_req && !w->replaying && (w->op_req = nbr_req_new(w)))
        w->got_req = w->op_req;
    uint32_t i = free_tok;
    am_tok_t *t = &toks[i];
    free_tok = t->next_free;
    /* A lock try is no operation of an epoch: an epoch waiting for its own operations must not
     * wait for another epoch's tries toward the same target (they repeat while the lock is
     * busy — maybe held by the epoch waiting). The window's free waits for them too. */
    int counted = !cell;
    *t = (am_tok_t){.used = 1,
                    .peer = w->t[rank].wrank,
                    .w = w,
                    .rank = rank,
                    .dst = dst,
                    .cell = cell,
                    .req = w->op_req,
                    .next_free = UINT32_MAX,
                    .counted = counted};
    if (t->req) {
        nbr_req_ref(t->req);
        t->req->tp_pending++;
    }
    if (cell)
        *cell = (nbr_tp_cell_t){.state = NBR_CELL_PENDING};
    if (counted) {
        w->tp_out++;
        w->t[rank].tp_out++;
    } else {
        w->tp_tries++;
    }
    credits[t->peer]++;
    outstanding++;
    *out = i;
    return MPI_SUCCESS;
}

static void tok_done(uint32_t i, int err, uint64_t val)
{
    if (i >= ntok || !toks[i].used)
        return; /* not ours (cannot happen): ignore rather than corrupt */
    am_tok_t *t = &toks[i];
    nbr_win_t *w = t->w;
    if (err != MPI_SUCCESS && w->tp_err == MPI_SUCCESS)
        w->tp_err = err;
    if (t->cell)
        *t->cell = (nbr_tp_cell_t){.state = NBR_CELL_READY, .err = err, .val = val};
    if (t->req) {
        nbr_req_op_done(t->req, err);
        nbr_req_release(t->req);
    }
    job_put(t->job);
    t->job = NULL;
    if (t->counted) {
        __atomic_store_n(&w->t[t->rank].tp_out, w->t[t->rank].tp_out - 1, __ATOMIC_RELEASE);
        __atomic_store_n(&w->tp_out, w->tp_out - 1, __ATOMIC_RELEASE);
    } else {
        w->tp_tries--;
    }
    credits[t->peer]--;
    outstanding--;
    t->used = 0;
    t->next_free = free_tok;
    free_tok = i;
}

/* Wait for a credit toward `peer` (serving others meanwhile: they may be waiting for us), for
 * a call issuing on w. */
static void credit_wait(nbr_win_t *w, int peer)
{
    long spins = 0;
    while (credits[peer] >= AM_CREDITS) {
        nbr_am_progress();
        if (credits[peer] >= AM_CREDITS)
            nbr_tp_call_wait_step(w, &spins);
    }
}

/* Send request header `h` with `n` payload bytes; the token (if any) is h->tok. */
static int send_req(nbr_win_t *w, int rank, const am_hdr_t *h, const void *p, size_t n,
                    const void *p2, size_t n2)
{
    char *b = buf_get(sizeof *h + n + n2);
    if (!b)
        return nbr_err(w, "libnbrma (am)", MPI_ERR_NO_MEM, "out of memory for a message");
    memcpy(b, h, sizeof *h);
    if (n)
        memcpy(b + sizeof *h, p, n);
    if (n2)
        memcpy(b + sizeof *h + n, p2, n2);
    int rc = send_bytes(b, sizeof *h + n + n2, w->t[rank].wrank, TAG_REQ, 1);
    if (rc != MPI_SUCCESS)
        return nbr_err(w, "libnbrma (am)", rc, "sending a request to rank %d failed", rank);
    nbr_am_sent++;
    nbr_am_sent_packed += h->kind >= K_PUT_PACKED;
    return MPI_SUCCESS;
}

static am_hdr_t hdr(nbr_win_t *w, int rank, int kind)
{
    return (am_hdr_t){
        .kind = (uint32_t)kind, .win = (uint32_t)w->t[rank].amid, .from = w->rank, .tok = AM_NOTOK};
}

/* A request with a token: credit, token, send; on failure the token completes with the error.
 * Waiting for the credit may release the big lock (nbr_wait_step): p and p2 must not be shared
 * buffers a caller filled before it — take the credit first (credit_wait returns at once when
 * one is free, and nothing between it and issue releases the lock). */
static int issue(nbr_win_t *w, int rank, am_hdr_t *h, const void *p, size_t n, const void *p2,
                 size_t n2, void *dst, nbr_tp_cell_t *cell)
{
    credit_wait(w, w->t[rank].wrank);
    uint32_t tok;
    int rc = tok_new(w, rank, dst, cell, &tok);
    if (rc != MPI_SUCCESS)
        return nbr_err(w, "libnbrma (am)", rc, "out of memory for an operation in flight");
    h->tok = tok;
    rc = send_req(w, rank, h, p, n, p2, n2);
    if (rc != MPI_SUCCESS)
        tok_done(tok, rc, 0);
    return rc;
}

/* ---- the origin's operations ----------------------------------------------------------------- */

int nbr_am_put(nbr_win_t *w, int r, MPI_Aint off, const void *src, size_t len)
{
    const char *s = src;
    while (len > 0) {
        am_hdr_t h = hdr(w, r, K_PUT);
        h.off = (uint64_t)off;
        if (len <= AM_EAGER) {
            h.len = len;
            return issue(w, r, &h, s, len, NULL, 0, NULL, NULL);
        }
        size_t n = len < (size_t)AM_RNDV_MAX ? len : (size_t)AM_RNDV_MAX;
        h.kind = K_PUT_RNDV;
        h.len = n;
        int rc = issue(w, r, &h, NULL, 0, NULL, 0, NULL, NULL);
        if (rc == MPI_SUCCESS &&
            (rc = send_bytes((void *)s, n, w->t[r].wrank, TAG_PUT, 0)) != MPI_SUCCESS)
            rc = nbr_err(w, "libnbrma (am)", rc, "sending %zu bytes to rank %d failed", n, r);
        if (rc != MPI_SUCCESS)
            return rc;
        s += n;
        off += (MPI_Aint)n;
        len -= n;
    }
    return MPI_SUCCESS;
}

/* A rendezvous get: my receive of n bytes into `into` is posted before the request h (kind,
 * off, len, and for packed gets a, set; `lay` follows it) goes out, and the target's data, not a
 * reply, completes the token. With a job, `into` is scratch holding a piece of a packed stream
 * at position pos: scattered into the origin's buffer and freed when it arrives. */
static int rndv_get(nbr_win_t *w, int r, am_hdr_t *h, const void *lay, size_t laylen, char *into,
                    size_t n, struct am_unpack *job, int64_t pos)
{
    credit_wait(w, w->t[r].wrank);
    uint32_t tok;
    int rc = tok_new(w, r, NULL, NULL, &tok);
    if (rc != MPI_SUCCESS) {
        if (job)
            free(into);
        return nbr_err(w, "libnbrma (am)", rc, "out of memory for an operation in flight");
    }
    toks[tok].rndv_get = 1;
    tok_job(tok, job, pos);
    MPI_Request q;
    rc = PMPI_Irecv(into, (int)n, MPI_BYTE, w->t[r].wrank, TAG_GET, am_comm, &q);
    if (rc == MPI_SUCCESS &&
        (rc = act_add(q, (am_act_t){.what = A_GET_RECV,
                                    .peer = w->t[r].wrank,
                                    .tok = tok,
                                    .buf = job ? into : NULL,
                                    .size = n})) != MPI_SUCCESS) {
        (void)PMPI_Cancel(&q);
        (void)PMPI_Request_free(&q);
    }
    if (rc != MPI_SUCCESS) {
        if (job)
            free(into);
        tok_done(tok, rc, 0);
        return nbr_err(w, "libnbrma (am)", rc, "posting a receive for rank %d failed", r);
    }
    h->tok = tok; /* for an error report only: the data completes the token */
    return send_req(w, r, h, lay, laylen, NULL, 0); /* on failure the posted receive stays: the
                                                        window's free reports the loss */
}

int nbr_am_get(nbr_win_t *w, int r, MPI_Aint off, void *dst, size_t len)
{
    char *d = dst;
    while (len > 0) {
        am_hdr_t h = hdr(w, r, K_GET);
        h.off = (uint64_t)off;
        if (len <= AM_EAGER) {
            h.len = len;
            return issue(w, r, &h, NULL, 0, NULL, 0, d, NULL);
        }
        size_t n = len < (size_t)AM_RNDV_MAX ? len : (size_t)AM_RNDV_MAX;
        h.kind = K_GET_RNDV;
        h.len = n;
        int rc = rndv_get(w, r, &h, NULL, 0, d, n, NULL, 0);
        if (rc != MPI_SUCCESS)
            return rc;
        d += n;
        off += (MPI_Aint)n;
        len -= n;
    }
    return MPI_SUCCESS;
}

int nbr_am_acc(nbr_win_t *w, int r, MPI_Aint off, MPI_Op op, MPI_Datatype basic, const void *src,
               void *result, size_t len)
{
    am_hdr_t h = hdr(w, r, K_ACC);
    h.off = (uint64_t)off;
    h.len = len;
    h.op = nbr_op_index(op);
    h.type = nbr_dtype_index(basic);
    h.a = result != NULL;
    if (h.op < 0 || h.type < 0 || len > AM_EAGER)
        return nbr_err(w, "libnbrma (am)", MPI_ERR_INTERN,
                       "accumulate piece of %zu bytes with %s on %s cannot be shipped", len,
                       nbr_op_name(op), nbr_dtype_name(basic));
    int rc = issue(w, r, &h, op == MPI_NO_OP ? NULL : src, op == MPI_NO_OP ? 0 : len, NULL, 0,
                   result, NULL);
    const nbr_dtype_t *d;
    if (rc == MPI_SUCCESS && result && nbr_dtype_get(basic, &d) == MPI_SUCCESS &&
        d->basic_size != d->basic_extent) {
        toks[h.tok].res_pair = basic;
        toks[h.tok].res_ext = d->basic_extent;
    }
    return rc;
}

int nbr_am_cas(nbr_win_t *w, int r, MPI_Aint off, const void *val, const void *cmp, void *result,
               size_t n)
{
    am_hdr_t h = hdr(w, r, K_CAS);
    h.off = (uint64_t)off;
    h.len = n;
    return issue(w, r, &h, val, n, cmp, n, result, NULL);
}

int nbr_am_amo(nbr_win_t *w, int r, int word, int op, uint64_t a, uint64_t b, nbr_tp_cell_t *c,
               uint64_t *old)
{
    int taken = nbr_tp_cell_take(&w->tp_err, c, old);
    if (taken >= 0)
        return taken;
    am_hdr_t h = hdr(w, r, K_AMO);
    h.op = op;
    h.type = word;
    h.a = a;
    h.b = b;
    if (issue(w, r, &h, NULL, 0, NULL, 0, NULL, c) != MPI_SUCCESS && c) {
        *c = (nbr_tp_cell_t){0}; /* the error is in w->tp_err; the try is repeated */
    }
    return 0;
}


/* ---- packed transfers (the origin's side) -------------------------------------------------- */

/* Packed pieces larger than this go as rendezvous transfers (puts, gets): eager ones cost the
 * target a copy out of its receive buffer; beyond a few eager messages one large message is
 * cheaper. */
#define AM_PACK_RNDV (4 * AM_EAGER)

static void side_cursor(const nbr_tp_side_t *sd, nbr_lay_cur_t *c)
{
    nbr_lay_cur_init(c, sd->run, sd->nrun, sd->extent, sd->count, sd->ebytes);
}

/* `n` stream bytes from position pos of the origin's side, into out (or where they already are,
 * when the side is the stream). */
static const char *side_bytes(const nbr_tp_side_t *sd, nbr_lay_cur_t *c, int64_t pos, char *out,
                              int64_t n)
{
    if (sd->contig)
        return sd->buf + pos;
    nbr_lay_gather(c, sd->buf, pos, out, n);
    return out;
}

int nbr_am_put_packed(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      const nbr_tp_side_t *src, int64_t total)
{
    static char piece[AM_EAGER]; /* under the big lock, filled after the credit wait */
    nbr_lay_cur_t c;
    side_cursor(src, &c);
    const int64_t eager = AM_EAGER - (int64_t)laylen;
    int rc = MPI_SUCCESS;
    for (int64_t pos = 0, n; rc == MPI_SUCCESS && pos < total; pos += n) {
        am_hdr_t h = hdr(w, r, K_PUT_PACKED);
        h.off = (uint64_t)off;
        h.a = (uint64_t)pos;
        n = total - pos;
        if (n <= eager || total < AM_PACK_RNDV) {
            n = n < eager ? n : eager;
            h.len = (uint64_t)n;
            /* The credit first: waiting for it lets other threads in (nbr_wait_step), and they
             * pack into `piece` too — it must be filled after the last such point. */
            credit_wait(w, w->t[r].wrank);
            rc = issue(w, r, &h, lay, laylen, side_bytes(src, &c, pos, piece, n), (size_t)n, NULL,
                       NULL);
            continue;
        }
        n = n < AM_RNDV_MAX ? n : AM_RNDV_MAX;
        h.kind = K_PUT_PACKED_RNDV;
        h.len = (uint64_t)n;
        /* Sent from the origin's buffer when it is the stream (the put's acknowledgement comes
         * after the payload is in), else from a packed copy freed when sent. */
        char *payload = src->contig ? NULL : malloc((size_t)n);
        if (!src->contig && !payload)
            return nbr_err(w, "libnbrma (am)", MPI_ERR_NO_MEM,
                           "out of memory packing %ld bytes for rank %d", (long)n, r);
        if (payload)
            nbr_lay_gather(&c, src->buf, pos, payload, n);
        rc = issue(w, r, &h, lay, laylen, NULL, 0, NULL, NULL);
        if (rc == MPI_SUCCESS &&
            (rc = send_bytes(payload ? payload : (void *)(src->buf + pos), (size_t)n,
                             w->t[r].wrank, TAG_PUT, payload != NULL)) != MPI_SUCCESS)
            rc = nbr_err(w, "libnbrma (am)", rc, "sending %ld bytes to rank %d failed", (long)n,
                         r);
        else if (rc != MPI_SUCCESS)
            free(payload);
    }
    return rc;
}

/* The pieces of a packed get or get_accumulate land in the origin's buffer: straight there when
 * its side is the stream, else through a shared unpack job. */
static int side_job(nbr_win_t *w, const nbr_tp_side_t *sd, am_unpack_t **job)
{
    *job = NULL;
    if (sd->contig && !sd->pext)
        return MPI_SUCCESS;
    if (!(*job = job_new(sd)))
        return nbr_err(w, "libnbrma (am)", MPI_ERR_NO_MEM, "out of memory for a packed result");
    return MPI_SUCCESS;
}

int nbr_am_get_packed(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      const nbr_tp_side_t *dst, int64_t total)
{
    am_unpack_t *job;
    int rc = side_job(w, dst, &job);
    for (int64_t pos = 0, n; rc == MPI_SUCCESS && pos < total; pos += n) {
        am_hdr_t h = hdr(w, r, K_GET_PACKED);
        h.off = (uint64_t)off;
        h.a = (uint64_t)pos;
        n = total - pos;
        char *direct = job ? NULL : (char *)dst->buf + pos;
        if (n <= AM_EAGER || total < AM_PACK_RNDV) {
            n = n < AM_EAGER ? n : AM_EAGER;
            h.len = (uint64_t)n;
            if ((rc = issue(w, r, &h, lay, laylen, NULL, 0, direct, NULL)) == MPI_SUCCESS)
                tok_job(h.tok, job, pos);
            continue;
        }
        n = n < AM_RNDV_MAX ? n : AM_RNDV_MAX;
        char *into = direct ? direct : malloc((size_t)n);
        if (!into) {
            rc = nbr_err(w, "libnbrma (am)", MPI_ERR_NO_MEM, "out of memory for %ld bytes",
                         (long)n);
            break;
        }
        h.kind = K_GET_PACKED_RNDV;
        h.len = (uint64_t)n;
        rc = rndv_get(w, r, &h, lay, laylen, into, (size_t)n, job, pos);
    }
    job_put(job);
    return rc;
}

int nbr_am_acc_packed(nbr_win_t *w, int r, MPI_Aint off, const void *lay, size_t laylen,
                      MPI_Op op, MPI_Datatype basic, MPI_Aint ext, const nbr_tp_side_t *src,
                      const nbr_tp_side_t *res, int64_t total)
{
    static char piece[AM_EAGER]; /* under the big lock, filled after the credit wait */
    int64_t budget = AM_EAGER - (int64_t)laylen;
    budget -= budget % ext; /* whole elements: the target applies the operation per element */
    if (nbr_op_index(op) < 0 || nbr_dtype_index(basic) < 0 || budget <= 0)
        return nbr_err(w, "libnbrma (am)", MPI_ERR_INTERN,
                       "packed accumulate with %s on %s cannot be shipped", nbr_op_name(op),
                       nbr_dtype_name(basic));
    am_unpack_t *job = NULL;
    int rc = res ? side_job(w, res, &job) : MPI_SUCCESS;
    nbr_lay_cur_t c;
    if (src)
        side_cursor(src, &c);
    for (int64_t pos = 0, n; rc == MPI_SUCCESS && pos < total; pos += n) {
        am_hdr_t h = hdr(w, r, K_ACC_PACKED);
        h.off = (uint64_t)off;
        h.a = (uint64_t)pos;
        h.b = res != NULL;
        h.op = nbr_op_index(op);
        h.type = nbr_dtype_index(basic);
        n = total - pos < budget ? total - pos : budget;
        h.len = (uint64_t)n;
        credit_wait(w, w->t[r].wrank); /* before `piece` is filled: see nbr_am_put_packed */
        const char *data = src && op != MPI_NO_OP ? side_bytes(src, &c, pos, piece, n) : NULL;
        rc = issue(w, r, &h, lay, laylen, data, data ? (size_t)n : 0,
                   res && !job ? (char *)res->buf + pos : NULL, NULL);
        if (rc == MPI_SUCCESS)
            tok_job(h.tok, job, pos);
    }
    job_put(job);
    return rc;
}

void nbr_am_notify(nbr_win_t *w, int r, int slot, uint64_t v)
{
    am_hdr_t h = hdr(w, r, K_NOTIFY);
    h.op = slot;
    h.a = v;
    /* No reply for FREED (the peer may be gone by then) nor for a PSCW done notification: the
     * pair's order puts it behind the data it covers, whose own acknowledgements the closing
     * MPI_Win_complete waits for, and nothing at the origin needs to know when it arrived
     * (complete is local completion, MPI-3.1 §11.5.2). Waiting for its answer cost the closing
     * call one more network latency after the last transfer. */
    if (slot == NBR_NS_FREED || slot == NBR_NS_COMPLETED) {
        if (send_req(w, r, &h, NULL, 0, NULL, 0) != MPI_SUCCESS && !w->tp_err)
            w->tp_err = MPI_ERR_OTHER;
        return;
    }
    (void)issue(w, r, &h, NULL, 0, NULL, 0, NULL, NULL);
}

/* A dynamic window's region table at rank r, copied into w->t[r].rcache: a piece of at most
 * AM_EAGER bytes per round trip, started over when the owner changed it meanwhile (its sequence
 * number rides on every reply). The call waits for the replies, serving peers meanwhile: it runs
 * only when an access is not covered by the copy it has (docs/ref-internals.md, "Across
 * nodes"). */
/* Wait, inside an RMA call on w, for the reply to a request just issued (rc: the issue's code)
 * into cell c, serving peers meanwhile; the call's request context is set aside for each wait. */
static int call_wait(nbr_win_t *w, int rc, nbr_tp_cell_t *c)
{
    long spins = 0;
    while (rc == MPI_SUCCESS && c->state == NBR_CELL_PENDING) {
        nbr_am_progress();
        if (c->state == NBR_CELL_PENDING)
            nbr_tp_call_wait_step(w, &spins);
    }
    return rc;
}

#define AM_REGS_PER (AM_EAGER / sizeof(nbr_region_t))
static int regions_piece(nbr_win_t *w, int r, uint64_t from, void *dst, uint64_t *seq, uint64_t *n)
{
    nbr_tp_cell_t c = {0};
    am_hdr_t h = hdr(w, r, K_REGIONS);
    h.off = from;
    int rc = call_wait(w, issue(w, r, &h, NULL, 0, NULL, 0, dst, &c), &c); /* a range check's */
    if (rc != MPI_SUCCESS || (rc = c.err) != MPI_SUCCESS)
        return rc;
    *seq = c.val >> 32;
    *n = c.val & UINT32_MAX;
    return MPI_SUCCESS;
}

int nbr_am_rkey(nbr_win_t *w, int r, uint64_t addr, void *buf, size_t cap, size_t *len,
                uint64_t *base, uint64_t *size)
{
    /* This call's own: the wait below lets the big lock go, and another thread fetching a key
     * meanwhile would share a static buffer (and this call's request context:
     * nbr_tp_call_wait_step). */
    char got[2 * sizeof(uint64_t) + NBR_UCX_KEY_MAX] = {0};
    nbr_tp_cell_t c = {0};
    am_hdr_t h = hdr(w, r, K_RKEY);
    h.off = addr;
    int rc = call_wait(w, issue(w, r, &h, NULL, 0, NULL, 0, got, &c), &c);
    if (rc != MPI_SUCCESS || (rc = c.err) != MPI_SUCCESS)
        return rc;
    memcpy(base, got, sizeof *base);
    memcpy(size, got + sizeof *base, sizeof *size);
    if (cap > NBR_UCX_KEY_MAX)
        cap = NBR_UCX_KEY_MAX;
    memcpy(buf, got + 2 * sizeof *base, cap);
    *len = cap;
    return MPI_SUCCESS;
}

int nbr_am_regions(nbr_win_t *w, int r)
{
    nbr_target_t *t = &w->t[r];
    nbr_region_t *first = malloc(AM_REGS_PER * sizeof *first);
    if (!first)
        return MPI_ERR_NO_MEM;
    int rc;
    for (;;) {
        uint64_t seq, n, seq2, n2;
        if ((rc = regions_piece(w, r, 0, first, &seq, &n)) != MPI_SUCCESS)
            break;
        if (n > (uint64_t)t->rcache_cap) {
            nbr_region_t *c = realloc(t->rcache, (size_t)n * sizeof *c);
            if (!c) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            t->rcache = c;
            t->rcache_cap = (int)n;
        }
        uint64_t got = n < AM_REGS_PER ? n : AM_REGS_PER;
        if (got)
            memcpy(t->rcache, first, (size_t)got * sizeof *first);
        int changed = 0;
        while (got < n && !changed) {
            if ((rc = regions_piece(w, r, got, t->rcache + got, &seq2, &n2)) != MPI_SUCCESS)
                break;
            changed = seq2 != seq || n2 != n;
            got += n - got < AM_REGS_PER ? n - got : AM_REGS_PER;
        }
        if (rc != MPI_SUCCESS)
            break;
        if (!changed) {
            t->rcache_n = (int)n;
            t->rcache_valid = 1;
            break;
        }
    }
    free(first);
    return rc;
}

/* ---- the target's side ----------------------------------------------------------------------- */

static void reply(int peer, uint32_t tok, int err, uint64_t val, const void *data, size_t n)
{
    if (tok == AM_NOTOK)
        return;
    char *b = buf_get(sizeof(am_rep_t) + n);
    if (!b) {
        /* Without memory for the reply the origin would wait forever: say why and stop. */
        fprintf(stderr, "libnbrma: out of memory replying to rank %d\n", peer);
        PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        return;
    }
    am_rep_t rep = {.tok = tok, .err = err, .len = n, .val = val};
    memcpy(b, &rep, sizeof rep);
    if (n)
        memcpy(b + sizeof rep, data, n);
    if (send_bytes(b, sizeof rep + n, peer, TAG_REP, 1) != MPI_SUCCESS) {
        fprintf(stderr, "libnbrma: replying to rank %d failed\n", peer);
        PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_OTHER);
    }
}

/* Where `len` bytes at `off` of my window are, or NULL (error class in *err). */
static void *local_addr(nbr_win_t *w, uint64_t off, uint64_t len, int *err)
{
    *err = MPI_SUCCESS;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        MPI_Aint lo = (MPI_Aint)off;
        if (len > (uint64_t)NBR_AINT_MAX || lo > NBR_AINT_MAX - (MPI_Aint)len ||
            nbr_region_check(w, w->rank, lo, lo + (MPI_Aint)len) != MPI_SUCCESS) {
            *err = MPI_ERR_RMA_RANGE;
            return NULL;
        }
        return (void *)(uintptr_t)off;
    }
    if (off > (uint64_t)w->bytes || len > (uint64_t)w->bytes - off) {
        *err = MPI_ERR_RMA_RANGE;
        return NULL;
    }
    return (char *)w->base + off;
}


/* ---- packed transfers (the target's side) -------------------------------------------------- */

/* The layout at the front of a packed request's payload: its size, its total stream bytes, and
 * whether [a, a + len) of the stream lies in it and every byte it names in my window. 0 and *err
 * when not. */
static size_t packed_layout(nbr_win_t *w, const am_hdr_t *h, const char *p, size_t plen, int *err)
{
    nbr_lay_hdr_t lh;
    int64_t total, lo, hi, start;
    *err = MPI_ERR_INTERN;
    if (plen < sizeof lh)
        return 0;
    memcpy(&lh, p, sizeof lh);
    if (lh.nrun <= 0 || nbr_lay_wire_size(lh.nrun) > AM_LAY_MAX || plen < nbr_lay_wire_size(lh.nrun))
        return 0;
    size_t laylen = nbr_lay_wire_size(lh.nrun);
    if (!nbr_lay_check(p, laylen, &total, &lo, &hi) || h->a > (uint64_t)total ||
        h->len > (uint64_t)total - h->a)
        return 0;
    /* Static windows: the whole span at once (the origin checked it too); dynamic windows: each
     * piece, against the regions (pack_walk). */
    *err = MPI_ERR_RMA_RANGE;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
        (h->off > (uint64_t)INT64_MAX || __builtin_add_overflow((int64_t)h->off, lo, &start) ||
         start < 0 || !local_addr(w, (uint64_t)start, (uint64_t)(hi - lo), err)))
        return 0;
    *err = MPI_SUCCESS;
    return laylen;
}

/* The window address of a piece (dynamic windows: checked against the regions). */
static char *piece_addr(nbr_win_t *w, uint64_t off, int64_t po, int64_t n, int *err)
{
    int64_t at;
    if (__builtin_add_overflow((int64_t)off, po, &at)) {
        *err = MPI_ERR_RMA_RANGE;
        return NULL;
    }
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return local_addr(w, (uint64_t)at, (uint64_t)n, err);
    return (char *)w->base + at;
}

/* Scatter `len` packed bytes from stream position pos into my window (puts). */
static int unpack_into_window(nbr_win_t *w, const void *lay, uint64_t off, uint64_t pos,
                              const char *in, int64_t len)
{
    nbr_lay_cur_t c;
    int64_t po, n;
    int err = MPI_SUCCESS;
    nbr_lay_cur_wire(&c, lay);
    nbr_lay_seek(&c, (int64_t)pos);
    while (len > 0 && nbr_lay_next(&c, len, &po, &n)) {
        char *a = piece_addr(w, off, po, n, &err);
        if (!a)
            return err;
        memcpy(a, in, (size_t)n);
        in += n;
        len -= n;
    }
    return MPI_SUCCESS;
}

static void serve_packed(nbr_win_t *w, const am_hdr_t *h, const char *p, size_t plen, int peer)
{
    int err;
    size_t laylen = packed_layout(w, h, p, plen, &err);
    const char *data = p + laylen;
    size_t dlen = laylen ? plen - laylen : 0;
    nbr_lay_cur_t c;
    int64_t po, n, len = (int64_t)h->len;
    if (laylen) {
        nbr_lay_cur_wire(&c, p);
        nbr_lay_seek(&c, (int64_t)h->a);
    }
    switch (h->kind) {
    case K_PUT_PACKED:
        if (laylen && dlen < h->len)
            err = MPI_ERR_INTERN;
        if (laylen && err == MPI_SUCCESS)
            err = unpack_into_window(w, p, h->off, h->a, data, len);
        reply(peer, h->tok, err, 0, NULL, 0);
        return;
    case K_PUT_PACKED_RNDV: { /* the payload follows: into scratch, scattered when it is in */
        void *buf = malloc(h->len ? h->len : 1), *lay = laylen ? malloc(laylen) : NULL;
        MPI_Request q;
        if (lay)
            memcpy(lay, p, laylen);
        else if (err == MPI_SUCCESS)
            err = MPI_ERR_NO_MEM;
        if (!buf || PMPI_Irecv(buf, (int)h->len, MPI_BYTE, peer, TAG_PUT, am_comm, &q) != MPI_SUCCESS ||
            act_add(q, (am_act_t){.what = A_PUT_PACKED,
                                  .peer = peer,
                                  .tok = h->tok,
                                  .err = err,
                                  .buf = buf,
                                  .size = h->len,
                                  .lay = lay,
                                  .off = h->off,
                                  .pos = h->a,
                                  .w = w}) != MPI_SUCCESS) {
            fprintf(stderr, "libnbrma: cannot receive a packed put of %lu bytes from rank %d\n",
                    (unsigned long)h->len, peer);
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        }
        rndv_in[peer]++; /* its later requests wait until the payload is in */
        return;
    }
    case K_GET_PACKED:
    case K_GET_PACKED_RNDV: {
        /* Gathered out of window memory now: nothing reads it after this request. */
        char *out = calloc(1, h->len ? h->len : 1), *o = out;
        if (!out) {
            fprintf(stderr, "libnbrma: out of memory packing %lu bytes for rank %d\n",
                    (unsigned long)h->len, peer);
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        }
        while (err == MPI_SUCCESS && laylen && len > 0 && nbr_lay_next(&c, len, &po, &n)) {
            const char *a = piece_addr(w, h->off, po, n, &err);
            if (a)
                memcpy(o, a, (size_t)n);
            o += n;
            len -= n;
        }
        if (h->kind == K_GET_PACKED) {
            reply(peer, h->tok, err, 0, err == MPI_SUCCESS ? out : NULL,
                  err == MPI_SUCCESS ? h->len : 0);
            free(out);
            return;
        }
        if (err != MPI_SUCCESS) /* the origin's receive still waits for data: the error first */
            reply(peer, h->tok, err, 0, NULL, 0);
        if (send_bytes(out, h->len, peer, TAG_GET, 0) != MPI_SUCCESS) {
            fprintf(stderr, "libnbrma: cannot send %lu bytes to rank %d\n", (unsigned long)h->len,
                    peer);
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_OTHER);
        }
        acts[nreq - 1].buf = out; /* freed when sent (not a pool buffer) */
        acts[nreq - 1].size = SIZE_MAX;
        return;
    }
    case K_ACC_PACKED: {
        MPI_Op op = nbr_op_at(h->op);
        MPI_Datatype basic = nbr_dtype_at(h->type);
        const nbr_dtype_t *d = NULL;
        if (err == MPI_SUCCESS &&
            (basic == MPI_DATATYPE_NULL || op == MPI_OP_NULL ||
             nbr_dtype_get(basic, &d) != MPI_SUCCESS || d->extent <= 0 ||
             (op != MPI_NO_OP && dlen < h->len)))
            err = MPI_ERR_INTERN;
        char *old = NULL, *o;
        if (err == MPI_SUCCESS && h->b && !(old = malloc(h->len ? h->len : 1)))
            err = MPI_ERR_NO_MEM;
        o = old;
        if (err == MPI_SUCCESS && laylen) {
            nbr_target_t *me = &w->t[w->rank];
            nbr_acc_lock(me, w->rank); /* one hold: a piece is at most AM_EAGER bytes */
            while (err == MPI_SUCCESS && len > 0 && nbr_lay_next(&c, len, &po, &n)) {
                char *a = piece_addr(w, h->off, po, n, &err);
                if (!a)
                    break;
                MPI_Aint k = (MPI_Aint)(n / d->extent);
                if (w->acc_native && /* accumulate_ops=same_op: atomic instructions (op.c) */
                    nbr_op_atomic(op, basic, op != MPI_NO_OP ? data : NULL, a, old ? o : NULL, k)) {
                    o += old ? n : 0, data += op != MPI_NO_OP ? n : 0;
                    len -= n;
                    continue;
                }
                if (old)
                    nbr_op_apply(MPI_REPLACE, basic, a, o, k), o += n;
                if (op != MPI_NO_OP)
                    nbr_op_apply(op, basic, data, a, k), data += n;
                len -= n;
            }
            nbr_acc_unlock(me);
        }
        reply(peer, h->tok, err, 0, err == MPI_SUCCESS ? old : NULL,
              err == MPI_SUCCESS && old ? h->len : 0);
        free(old);
        return;
    }
    }
}

static void serve(const am_hdr_t *h, const char *p, size_t plen, int peer)
{
    nbr_tp_served++;
    nbr_win_t *w = h->win < (uint32_t)nwins_cap ? wins[h->win] : NULL;
    int err = MPI_SUCCESS;
    if (!w || h->from < 0 || h->from >= w->size) {
        if (h->kind == K_PUT_RNDV || h->kind == K_PUT_PACKED_RNDV) { /* the payload is on its
                                                                        way: take it somewhere */
            void *s = malloc(h->len ? h->len : 1);
            MPI_Request q;
            if (s &&
                PMPI_Irecv(s, (int)h->len, MPI_BYTE, peer, TAG_PUT, am_comm, &q) == MPI_SUCCESS &&
                act_add(q, (am_act_t){.what = A_PUT_RECV,
                                      .peer = peer,
                                      .tok = h->tok,
                                      .err = MPI_ERR_WIN,
                                      .buf = s}) == MPI_SUCCESS)
                rndv_in[peer]++;
            return;
        }
        if (nbr_cfg.VERBOSE)
            fprintf(stderr, "libnbrma: a message from rank %d for window %u, which is gone\n", peer,
                    h->win);
        reply(peer, h->tok, MPI_ERR_WIN, 0, NULL, 0);
        if (h->kind == K_GET_RNDV || h->kind == K_GET_PACKED_RNDV) { /* its receive waits */
            void *z = calloc(1, h->len ? h->len : 1);
            if (!z || send_bytes(z, h->len, peer, TAG_GET, 0) != MPI_SUCCESS) {
                fprintf(stderr, "libnbrma: cannot send %lu bytes to rank %d\n",
                        (unsigned long)h->len, peer);
                PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_OTHER);
            }
            acts[nreq - 1].buf = z; /* freed when sent */
            acts[nreq - 1].size = SIZE_MAX;
        }
        return;
    }
    nbr_target_t *me = &w->t[w->rank];
    switch (h->kind) {
    case K_PUT: {
        void *a = local_addr(w, h->off, h->len, &err);
        if (a && plen >= h->len)
            memcpy(a, p, h->len);
        reply(peer, h->tok, err, 0, NULL, 0);
        break;
    }
    case K_PUT_RNDV: {
        void *a = local_addr(w, h->off, h->len, &err), *s = NULL;
        if (!a)
            a = s = malloc(h->len ? h->len : 1);
        MPI_Request q;
        if (!a || PMPI_Irecv(a, (int)h->len, MPI_BYTE, peer, TAG_PUT, am_comm, &q) != MPI_SUCCESS ||
            act_add(q,
                    (am_act_t){
                        .what = A_PUT_RECV, .peer = peer, .tok = h->tok, .err = err, .buf = s}) !=
                MPI_SUCCESS) {
            fprintf(stderr, "libnbrma: cannot receive a put of %lu bytes from rank %d\n",
                    (unsigned long)h->len, peer);
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        }
        rndv_in[peer]++; /* its later requests wait until the payload is in */
        break;
    }
    case K_GET: {
        void *a = local_addr(w, h->off, h->len, &err);
        reply(peer, h->tok, err, 0, a, a ? h->len : 0);
        break;
    }
    case K_GET_RNDV: {
        void *a = local_addr(w, h->off, h->len, &err), *s = NULL;
        if (!a) { /* the origin's receive waits for data: zeros, and the error first */
            reply(peer, h->tok, err, 0, NULL, 0);
            a = s = calloc(1, h->len ? h->len : 1);
        }
        /* Sent straight from window memory: until the send completes the get still reads it, so
         * the origin's later requests (its lock release, its done notification: the origin sends
         * them as soon as its data arrived, which may be before this send completes here) wait
         * behind it, as behind a large put (MPI-3.1 §11.5: no closing call may return while an
         * access of its epoch still reads the window). */
        MPI_Request q;
        if (!a || PMPI_Isend(a, (int)h->len, MPI_BYTE, peer, TAG_GET, am_comm, &q) != MPI_SUCCESS ||
            act_add(q, (am_act_t){.what = A_GET_SEND, .peer = peer, .buf = s}) != MPI_SUCCESS) {
            fprintf(stderr, "libnbrma: cannot send %lu bytes to rank %d\n", (unsigned long)h->len,
                    peer);
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_OTHER);
        }
        rndv_in[peer]++;
        break;
    }
    case K_ACC: {
        MPI_Op op = nbr_op_at(h->op);
        MPI_Datatype basic = nbr_dtype_at(h->type);
        const nbr_dtype_t *d;
        void *a = local_addr(w, h->off, h->len, &err);
        if (a && (basic == MPI_DATATYPE_NULL || op == MPI_OP_NULL ||
                  nbr_dtype_get(basic, &d) != MPI_SUCCESS || d->extent <= 0 ||
                  (op != MPI_NO_OP && plen < h->len)))
            a = NULL, err = MPI_ERR_INTERN;
        char *old = NULL;
        if (a && h->a && !(old = malloc(h->len ? h->len : 1)))
            a = NULL, err = MPI_ERR_NO_MEM;
        if (a && w->acc_native && /* accumulate_ops=same_op: atomic instructions (op.c) */
            nbr_op_atomic(op, basic, op != MPI_NO_OP ? p : NULL, a, old,
                          (MPI_Aint)h->len / d->extent))
            a = NULL;
        if (a) {
            nbr_acc_lock(me, w->rank);
            if (old)
                nbr_op_apply(MPI_REPLACE, basic, a, old, (MPI_Aint)h->len / d->extent);
            if (op != MPI_NO_OP)
                nbr_op_apply(op, basic, p, a, (MPI_Aint)h->len / d->extent);
            nbr_acc_unlock(me);
        }
        reply(peer, h->tok, err, 0, old, old ? h->len : 0);
        free(old);
        break;
    }
    case K_CAS: {
        void *a = local_addr(w, h->off, h->len, &err);
        unsigned char old[64];
        if (a && (h->len > sizeof old || plen < 2 * h->len))
            a = NULL, err = MPI_ERR_INTERN;
        if (a && w->acc_native && nbr_op_atomic_cas(h->len, a, p, p + h->len, old)) {
            reply(peer, h->tok, err, 0, old, h->len); /* same_op: atomic (op.c) */
            break;
        }
        if (a) {
            nbr_acc_lock(me, w->rank);
            memcpy(old, a, h->len);
            if (memcmp(old, p + h->len, h->len) == 0)
                memcpy(a, p, h->len);
            nbr_acc_unlock(me);
        }
        reply(peer, h->tok, err, 0, old, a ? h->len : 0);
        break;
    }
    case K_AMO: {
        /* A queue node exists only in a queued-lock window's block (and only up to its size + 1,
         * the global word's queue). */
        if (h->type < 0 ||
            (h->type >= NBR_W_QNODE && (!w->lock_q || h->type >= NBR_W_QNEXT(w->size + 1)))) {
            reply(peer, h->tok, MPI_ERR_RMA_SYNC, 0, NULL, 0);
            break;
        }
        uint64_t *word = (uint64_t *)((char *)w->ctl + nbr_ctl_word_off(w->size, h->type));
        uint64_t old = nbr_tp_amo_shm(word, h->op, h->a, h->b);
        reply(peer, h->tok, MPI_SUCCESS, old, NULL, 0);
        break;
    }
    case K_NOTIFY: {
        nbr_peer_ctr_t *c = &me->peer[h->from];
        uint64_t *slot = h->op == NBR_NS_POSTED      ? &c->posted
                         : h->op == NBR_NS_COMPLETED ? &c->completed
                         : h->op == NBR_NS_FENCE     ? &c->fence
                                                     : &c->freed;
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* what the pair did before is visible first */
        __atomic_store_n(slot, h->a, __ATOMIC_RELEASE);
        reply(peer, h->tok, MPI_SUCCESS, 0, NULL, 0);
        break;
    }
    case K_PUT_PACKED:
    case K_PUT_PACKED_RNDV:
    case K_GET_PACKED:
    case K_GET_PACKED_RNDV:
    case K_ACC_PACKED:
        serve_packed(w, h, p, plen, peer);
        break;
    case K_RKEY: { /* reply: the region's base and size, then its packed key */
        char key[2 * sizeof(uint64_t) + NBR_UCX_KEY_MAX];
        size_t kl = 0;
        uint64_t rb = 0, rs = 0;
        err = w->flavor == MPI_WIN_FLAVOR_DYNAMIC
                  ? nbr_ucx_rkey_serve(w, h->off, key + 2 * sizeof rb, NBR_UCX_KEY_MAX, &kl, &rb,
                                       &rs)
                  : MPI_ERR_INTERN;
        memcpy(key, &rb, sizeof rb);
        memcpy(key + sizeof rb, &rs, sizeof rs);
        reply(peer, h->tok, err, 0, err == MPI_SUCCESS ? key : NULL,
              err == MPI_SUCCESS ? 2 * sizeof rb + kl : 0);
        break;
    }
    case K_REGIONS: { /* the table cannot change while we serve (both under the big lock) */
        uint64_t n = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (uint64_t)w->nregs : 0;
        uint64_t from = h->off < n ? h->off : n,
                 m = n - from < AM_REGS_PER ? n - from : AM_REGS_PER;
        uint64_t seq = __atomic_load_n(&w->ctl->reg_seq, __ATOMIC_ACQUIRE) & UINT32_MAX;
        reply(peer, h->tok, MPI_SUCCESS, seq << 32 | n, m ? w->regs + from : NULL,
              (size_t)m * sizeof(nbr_region_t));
        break;
    }
    default:
        fprintf(stderr, "libnbrma: unknown message kind %u from rank %d\n", h->kind, peer);
        reply(peer, h->tok, MPI_ERR_INTERN, 0, NULL, 0);
    }
}

static void got_reply(const am_rep_t *rep, const char *data, size_t n)
{
    nbr_tp_served++;
    uint32_t i = rep->tok;
    if (i >= ntok || !toks[i].used)
        return;
    if (toks[i].rndv_get) { /* its early error report: its data still completes the token */
        if (toks[i].w->tp_err == MPI_SUCCESS)
            toks[i].w->tp_err = rep->err;
        return;
    }
    if (toks[i].job && rep->len && n >= rep->len) {
        job_scatter(toks[i].job, toks[i].pos, data, (int64_t)rep->len);
    } else if (toks[i].dst && rep->len && n >= rep->len) {
        if (toks[i].res_ext)
            nbr_op_apply(MPI_REPLACE, toks[i].res_pair, data, toks[i].dst,
                         (MPI_Aint)rep->len / toks[i].res_ext);
        else
            memcpy(toks[i].dst, data, rep->len);
    }
    tok_done(i, rep->err, rep->val);
}

/* Serve an origin's waiting requests in order until one is a large put again (its payload must
 * land first) or is still on the emulated wire (due after `now`). */
static void dq_release(int peer, double now)
{
    while (dq_head[peer] && !rndv_in[peer] && dq_head[peer]->due <= now) {
        am_defer_t *d = dq_head[peer];
        if (!(dq_head[peer] = d->next))
            dq_tail[peer] = NULL;
        if (d->due > 0)
            wire_held--;
        am_hdr_t h;
        memcpy(&h, d->msg, sizeof h);
        serve(&h, d->msg + sizeof h, d->len - sizeof h, peer);
        free(d);
    }
}

/* Serve one ring from its head while its receives are complete (a completed set is always a
 * prefix of the ring from its head: a receive matches only after every earlier one did). */
static void ring_drain(am_ring_t *g)
{
    while (g->done[g->head]) {
        int i = g->head, cnt = 0;
        MPI_Status *st = &g->st[i];
        g->done[i] = 0;
        PMPI_Get_count(st, MPI_BYTE, &cnt);
        if (g == &ring_req && (size_t)cnt >= sizeof(am_hdr_t)) {
            int src = st->MPI_SOURCE;
            int wire = wire_lat > 0 || wire_bps > 0;
            if (rndv_in[src] || dq_head[src] || wire) {
                /* behind a large put of the same origin, or on the wire: wait (am_defer_t) */
                am_defer_t *d = malloc(sizeof *d + (size_t)cnt);
                if (!d) {
                    fprintf(stderr, "libnbrma: out of memory keeping a request of rank %d\n", src);
                    PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
                }
                d->next = NULL;
                d->len = (size_t)cnt;
                d->due = 0;
                if (wire) {
                    am_hdr_t h;
                    memcpy(&h, g->buf[i], sizeof h);
                    /* its bytes: the payload it carries or (rendezvous, gets) moves */
                    double bytes = (double)(h.kind == K_PUT_RNDV || h.kind == K_GET ||
                                                    h.kind == K_GET_RNDV ||
                                                    h.kind == K_PUT_PACKED_RNDV ||
                                                    h.kind == K_GET_PACKED ||
                                                    h.kind == K_GET_PACKED_RNDV
                                                ? h.len
                                                : (uint64_t)cnt),
                           now = mono_now(), start = link_free[src] > now ? link_free[src] : now;
                    link_free[src] = start + (wire_bps > 0 ? bytes / wire_bps : 0);
                    d->due = link_free[src] + wire_lat;
                    wire_held++;
                }
                memcpy(d->msg, g->buf[i], (size_t)cnt);
                if (dq_tail[src])
                    dq_tail[src]->next = d;
                else
                    dq_head[src] = d;
                dq_tail[src] = d;
            } else {
                am_hdr_t h;
                memcpy(&h, g->buf[i], sizeof h);
                serve(&h, (char *)g->buf[i] + sizeof h, (size_t)cnt - sizeof h, src);
            }
        } else if (g == &ring_rep && (size_t)cnt >= sizeof(am_rep_t)) {
            am_rep_t rep;
            memcpy(&rep, g->buf[i], sizeof rep);
            got_reply(&rep, (char *)g->buf[i] + sizeof rep, (size_t)cnt - sizeof rep);
        }
        if (ring_post(g, i) != MPI_SUCCESS) {
            fprintf(stderr, "libnbrma: cannot post a receive for active messages\n");
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_OTHER);
        }
        g->head = (i + 1) % AM_NPOST;
    }
}

/* What a completed request of reqs[] asks for. */
static void act_done(int i)
{
    am_act_t *a = &acts[i];
    switch (a->what) {
    case A_SEND:
        buf_put(a->buf, a->size);
        break;
    case A_PUT_RECV: {
        am_act_t c = *a;
        acts[i].what = 0;
        free(c.buf);
        reply(c.peer, c.tok, c.err, 0, NULL, 0); /* may grow the arrays */
        /* The payload is in: the origin's requests that waited behind it go now, in order,
         * until one of them is a large put again. */
        if (--rndv_in[c.peer] == 0)
            dq_release(c.peer, wire_held ? mono_now() : 0);
        return;
    }
    case A_GET_RECV:
        if (a->buf) { /* a packed get's piece, received whole: into the origin's buffer */
            am_tok_t *t = &toks[a->tok];
            if (a->tok < ntok && t->used && t->job)
                job_scatter(t->job, t->pos, a->buf, (int64_t)a->size);
            free(a->buf);
            a->buf = NULL;
        }
        tok_done(a->tok, MPI_SUCCESS, 0);
        break;
    case A_PUT_PACKED: {
        am_act_t c = *a;
        acts[i].what = 0;
        if (c.err == MPI_SUCCESS)
            c.err = unpack_into_window(c.w, c.lay, c.off, c.pos, c.buf, (int64_t)c.size);
        free(c.buf);
        free(c.lay);
        reply(c.peer, c.tok, c.err, 0, NULL, 0);
        if (--rndv_in[c.peer] == 0)
            dq_release(c.peer, wire_held ? mono_now() : 0);
        return;
    }
    case A_GET_SEND: {
        int peer = a->peer;
        free(a->buf);
        acts[i].what = 0;
        /* My window memory is no longer read: the origin's requests behind it go now. */
        if (--rndv_in[peer] == 0)
            dq_release(peer, wire_held ? mono_now() : 0);
        return;
    }
    }
    acts[i].what = 0;
}

void nbr_am_progress(void)
{
    if (!nbr_tp_on || am_busy)
        return;
    if (nbr_in_progress_thread() && nbr_thread_level != MPI_THREAD_MULTIPLE)
        return; /* the MPI library allows calls from the application's thread only */
    if (!all && act_add(MPI_REQUEST_NULL, (am_act_t){.what = 0}) == MPI_SUCCESS)
        nreq--; /* the combined arrays exist from here on */
    if (!all)
        return;
    am_busy = 1;
    for (;;) {
        const int n = 2 + nreq;
        all[0] = ring_req.r[ring_req.head];
        all[1] = ring_rep.r[ring_rep.head];
        if (nreq)
            memcpy(all + 2, reqs, (size_t)nreq * sizeof *all);
        int out = 0;
        if (PMPI_Testsome(n, all, &out, idx, sts) != MPI_SUCCESS || out == MPI_UNDEFINED ||
            out == 0)
            break;
        int nacts = 0;
        for (int k = 0; k < out; k++) {
            int i = idx[k];
            am_ring_t *g = i == 0 ? &ring_req : i == 1 ? &ring_rep : NULL;
            if (g) {
                g->r[g->head] = MPI_REQUEST_NULL;
                g->st[g->head] = sts[k];
                g->done[g->head] = 1;
            } else {
                reqs[i - 2] = MPI_REQUEST_NULL;
                idx[nacts++] = i - 2; /* idx[k'] for k' <= k is read already */
            }
        }
        int nold = nreq; /* acts added from here on are not among the completed */
        ring_drain(&ring_req);
        ring_drain(&ring_rep);
        for (int k = 0; k < nacts; k++)
            act_done(idx[k]);
        /* Drop what completed, keeping the order of the rest. */
        int j = 0;
        for (int i = 0; i < nreq; i++)
            if (acts[i].what || i >= nold) {
                reqs[j] = reqs[i];
                acts[j++] = acts[i];
            }
        nreq = j;
    }
    if (wire_held) { /* what the emulated wire delivers by now (one pass over origins) */
        double now = mono_now();
        for (int r = 0; r < am_world && wire_held; r++)
            if (dq_head[r] && !rndv_in[r])
                dq_release(r, now);
    }
    am_busy = 0;
}

void nbr_am_finalize(void)
{
    NBR_ENTER(); /* the progress thread may be serving: it sees nbr_tp_on drop under the lock */
    long spins = 0;
    /* What we sent must arrive (notifications of freed windows among it). */
    while (nreq) {
        nbr_am_progress();
        if (nreq)
            nbr_wait_step(&spins);
    }
    nbr_tp_on = 0;
    am_ring_t *rings[2] = {&ring_req, &ring_rep};
    for (int k = 0; k < 2 && rings_ready; k++)
        for (int i = 0; i < AM_NPOST; i++) {
            am_ring_t *g = rings[k];
            if (g->r[i] != MPI_REQUEST_NULL) {
                (void)PMPI_Cancel(&g->r[i]);
                (void)PMPI_Wait(&g->r[i], MPI_STATUS_IGNORE);
            }
            free(g->buf[i]);
            g->buf[i] = NULL;
        }
    nbr_tp_on = 0;
    if (am_comm != MPI_COMM_NULL)
        (void)PMPI_Comm_free(&am_comm);
    while (npool)
        free(pool[--npool]);
    for (int r = 0; r < am_world && dq_head; r++)
        while (dq_head[r]) {
            am_defer_t *d = dq_head[r];
            dq_head[r] = d->next;
            free(d);
        }
    free(rndv_in), free(dq_head), free(dq_tail), free(link_free);
    rndv_in = NULL;
    dq_head = dq_tail = NULL;
    link_free = NULL;
    wire_held = 0;
    free(reqs), free(acts), free(sts), free(idx), free(all), free(toks), free(credits), free(wins);
    reqs = NULL, acts = NULL, sts = NULL, idx = NULL, all = NULL, toks = NULL, credits = NULL,
    wins = NULL;
    capreq = 0, ntok = captok = 0, free_tok = UINT32_MAX, nwins_cap = 0;
    NBR_LEAVE();
}

/* Regions of a dynamic window through messages (the table above); every other entry is this
 * file's. */
const nbr_tp_ops_t nbr_tp_am_ops = {
    .name = "am",
    .ordered = 1, /* a pair's requests are served in the order they were sent (above) */
    .put = nbr_am_put,
    .get = nbr_am_get,
    .acc = nbr_am_acc,
    .cas = nbr_am_cas,
    .amo = nbr_am_amo,
    .notify = nbr_am_notify,
    .put_packed = nbr_am_put_packed,
    .get_packed = nbr_am_get_packed,
    .acc_packed = nbr_am_acc_packed,
    .regions = nbr_am_regions,
    .flush = NULL, /* acknowledgements complete operations by themselves */
};
