/* rma.c — the communication calls: Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap and their request-based variants, over the shared-memory transport.
 *
 * Every call checks, in order: the window is ref's (else forward), the target rank, that an
 * access epoch to the target is open, the datatypes, and that the target range lies inside the
 * target's window (one overflow-proof range check, nbr_range; docs/ref-internals.md, "Argument
 * checks"); then it moves the data. A call that moves no byte stops after the epoch check.
 * Contiguous predefined types take a short path (one memcpy for mapped memory: paper 001 §2.4 keeps
 * put/get near the hardware); other types walk both type maps chunk by chunk (001's "maximal block"
 * strategy). Accumulate-family calls run under the target's accumulate lock, which gives MPI's
 * element-wise atomicity and the default same-origin ordering for all of them alike. In a ready
 * epoch everything completes inside the call; in an epoch that is open but not ready yet (deferred
 * behind an earlier epoch, waiting for a post, a lock or the fence barrier) the call is checked,
 * recorded and returns at once; the progress engine carries it out on activation (paper 000
 * §VII-A), and flushes and the R-variants' requests complete then. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "nbr.h"
#include "op.h"
#include "transport/tp.h"

/* An open, ready access epoch covers `rank` (MPI-3.1 §11.5: fence, lock_all, a lock on it, or
 * PSCW start), so the call goes straight to memory. Every RMA call passes here once, so this also
 * counts the calls a fence epoch carried; a replayed call was counted when it was recorded. (The
 * replay used to save the count and put it back afterwards, but a replay may wait for credit,
 * which lets the big lock go: a fence of the application's thread meanwhile reset the count, and
 * the replay then restored the old epoch's, so MPI_Win_free after the next fence saw "RMA calls
 * issued after the last MPI_Win_fence" — acc_ops across virtual nodes, 2 runs of 25.) */
static inline int may_access(nbr_win_t *w, int rank)
{
    w->epoch_ops += !w->replaying;
    return w->all_direct || w->t[rank].direct;
}

/* The one range check every path shares (docs/ref-internals.md, "Argument checks"): the
 * bytes [lo, hi) of an access, relative to target_disp × disp_unit, lie inside [0, size).
 * Overflow-proof: the product is checked, and the sums are formed only after the bounds show
 * they cannot wrap. *off gets the byte displacement. MPI_SUCCESS, MPI_ERR_DISP (negative),
 * MPI_ERR_RMA_RANGE (outside, or not representable). */
static inline int nbr_range(MPI_Aint disp, int disp_unit, MPI_Aint lo, MPI_Aint hi, MPI_Aint size,
                            MPI_Aint *off)
{
    if (disp < 0)
        return MPI_ERR_DISP;
    if (__builtin_mul_overflow(disp, (MPI_Aint)disp_unit, off))
        return MPI_ERR_RMA_RANGE;
    /* 0 <= *off, so *off + lo cannot wrap; *off + hi is compared without forming it. */
    if (*off + lo < 0)
        return MPI_ERR_RMA_RANGE;
    if (hi > size || *off > size - hi)
        return MPI_ERR_RMA_RANGE;
    return MPI_SUCCESS;
}

/* Validate rank/epoch/range; on success *off is the target byte displacement of byte 0 and
 * *defer says the covering epoch is not ready: record the call instead of moving data. A call
 * that touches no target byte (lo == hi) has no range to check. */
static int target_check(nbr_win_t *w, const char *call, int rank, MPI_Aint disp, MPI_Aint lo,
                        MPI_Aint hi, MPI_Aint *off, int *defer)
{
    *defer = 0;
    *off = 0;
    if (NBR_UNLIKELY(rank < 0 || rank >= w->size))
        return nbr_err(w, call, MPI_ERR_RANK, "target_rank %d is not in the window's group of %d",
                       rank, w->size);
    nbr_tgt(w, rank); /* a lazy window's first use of the rank makes its descriptor (nbr.h) */
    if (!w->replaying && !may_access(w, rank)) {
        if (NBR_UNLIKELY(!nbr_access_epoch(w, rank)))
            return nbr_err(w, call, MPI_ERR_RMA_SYNC,
                           "no access epoch toward rank %d is open (call MPI_Win_fence, "
                           "MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all first)",
                           rank);
        *defer = 1;
    }
    if (NBR_UNLIKELY(disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC))
        return nbr_err(w, call, MPI_ERR_DISP, "target_disp %ld is negative", (long)disp);
    if (lo == hi)
        return MPI_SUCCESS;
    const nbr_target_t *t = &w->t[rank];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* disp is an absolute address (MPI_Aint may hold the upper half as negative): check
         * that disp + lo .. disp + hi exist before asking whether they are attached. */
        MPI_Aint b, blo, bhi;
        if (__builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, &b) ||
            __builtin_add_overflow(b, lo, &blo) || __builtin_add_overflow(b, hi, &bhi))
            return nbr_err(w, call, MPI_ERR_RMA_RANGE,
                           "target_disp %ld x disp_unit %d + %ld bytes is not an address",
                           (long)disp, t->disp_unit, (long)hi);
        if (*defer) /* the target may attach before it exposes: checked when carried out */
            return *off = b, MPI_SUCCESS;
        int rc = nbr_region_check(w, rank, blo, bhi);
        if (rc == MPI_SUCCESS)
            return *off = b, MPI_SUCCESS;
        if (rc != MPI_ERR_RMA_RANGE)
            return nbr_err(w, call, rc, "rank %d's region table could not be read", rank);
        return nbr_err(w, call, MPI_ERR_RMA_RANGE,
                       "address 0x%lx..0x%lx is not inside a region (or regions attached back to "
                       "back) of rank %d",
                       (unsigned long)blo, (unsigned long)bhi, rank);
    }
    if (NBR_UNLIKELY(nbr_range(disp, t->disp_unit, lo, hi, t->size, off) != MPI_SUCCESS))
        return nbr_err(w, call, MPI_ERR_RMA_RANGE,
                       "bytes %ld..%ld from target_disp %ld x disp_unit %d exceed rank %d's "
                       "window of %ld bytes",
                       (long)lo, (long)hi, (long)disp, t->disp_unit, rank, (long)t->size);
    return MPI_SUCCESS;
}

/* Record a call of an epoch that is not ready (000 §VII-A), then give the engine a turn: the
 * epoch may be ready now. An R-variant asked for a request (w->want_req): it completes when the
 * call is carried out. */
static int record(nbr_win_t *w, nbr_rec_t *r)
{
    if (w->want_req && !(r->req = w->got_req = nbr_req_new(w)))
        return nbr_err(w, r->call, MPI_ERR_NO_MEM, "out of memory for a request");
    int rc = nbr_record(w, r);
    if (rc != MPI_SUCCESS && w->got_req) {
        nbr_req_release(w->got_req);
        w->got_req = NULL;
    }
    /* The call has its request (got_req): what the engine issues now — a lock try, a release, a
     * notification of another epoch — must not become the call's request (tok_new makes one
     * for the first remote operation of an R-variant). That happened: the application then
     * waited on a notification's request, and the recorded call's leaked. */
    w->want_req = 0;
    nbr_progress();
    return rc;
}

/* Descriptors of the last predefined types seen: predefined handles never change meaning, so
 * the fast path skips the datatype module (derived handles can be freed and reused: not cached). */
static MPI_Datatype pre_type[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
static const nbr_dtype_t *pre_desc[2];

static inline const nbr_dtype_t *pre_lookup(MPI_Datatype t)
{
    return t == pre_type[0] ? pre_desc[0] : t == pre_type[1] ? pre_desc[1] : NULL;
}

static void pre_remember(const nbr_dtype_t *d)
{
    if (d->predefined && d->contig && d->type != pre_type[0]) {
        pre_type[1] = pre_type[0];
        pre_desc[1] = pre_desc[0];
        pre_type[0] = d->type;
        pre_desc[0] = d;
    }
}

static int types(nbr_win_t *w, const char *call, MPI_Datatype ot, MPI_Datatype tt,
                 const nbr_dtype_t **od, const nbr_dtype_t **td)
{
    if (nbr_dtype_get(ot, od) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_TYPE, "origin_datatype is not a valid datatype");
    if (nbr_dtype_get(tt, td) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_TYPE, "target_datatype is not a valid datatype");
    if (!nbr_dtype_committed(*od) || !nbr_dtype_committed(*td))
        return nbr_err(w, call, MPI_ERR_TYPE, "%s is not committed (call MPI_Type_commit first)",
                       nbr_dtype_committed(*od) ? "target_datatype" : "origin_datatype");
    pre_remember(*od);
    return MPI_SUCCESS;
}

/* A call that moves no byte (a zero count or a zero-size type on either side) is a no-op
 * whatever the other side's types (MPI-3.1 §11.3: no data, no type matching to do). */
static inline int moves_nothing(int ocount, const nbr_dtype_t *od, int tcount,
                                const nbr_dtype_t *td)
{
    return ocount == 0 || od->size == 0 || tcount == 0 || td->size == 0;
}

/* ---- packed transfers across nodes (paper 004 §III-A; layout.h) --------------------------------
 *
 * Toward another node a transfer whose target side is noncontiguous went as one request per
 * contiguous piece: a transpose of 1000 x 1000 ints was a million 4-byte requests (30 s against
 * the vendor's 1 s). When the target's blocks are small on average and its layout is short in
 * runs, the data crosses packed instead — the target scatters (put), gathers (get) or applies
 * (accumulate) it along the layout it receives with each message. Large blocks keep the
 * per-piece path: each piece is then a zero-copy transfer of its own. */
#define NBR_PACK_BLOCK 4096 /* average target block below which packing wins */
#define NBR_PACK_LAY   4096 /* bytes of layout a request may carry */

/* The runs of `count` elements of d (segments or, elem, whole basic elements) when packing is
 * worth it: the layout is noncontiguous, its blocks are small and its runs few. `mode` is the
 * window's NBRMA_NONCONTIG (004 §III-A, experiment F1): NBR_NC_BLOCKS never packs (one operation
 * per contiguous block, the hardware style), NBR_NC_PACKED packs whatever the block size, when
 * the layout fits in a request; NBR_NC_AUTO packs below NBR_PACK_BLOCK. */
static const nbr_runs_t *pack_runs(const nbr_dtype_t *d, int elem, int mode)
{
    int nblk = elem ? d->nelem : d->nseg;
    if (mode == NBR_NC_BLOCKS || d->contig || nblk <= 0 ||
        (mode == NBR_NC_AUTO && (double)d->size / nblk >= NBR_PACK_BLOCK))
        return NULL;
    const nbr_runs_t *r = nbr_runs_of(d, elem);
    return r && nbr_lay_wire_size(r->nrun) <= NBR_PACK_LAY ? r : NULL;
}

/* The origin's side of a packed transfer: its buffer as a cursor (or as the stream itself). */
static int pack_side(const nbr_dtype_t *d, int count, const void *buf, int elem, nbr_tp_side_t *sd)
{
    const nbr_runs_t *r = nbr_runs_of(d, elem);
    if (!r)
        return 0;
    *sd = (nbr_tp_side_t){.buf = buf,
                          .run = r->run,
                          .nrun = r->nrun,
                          .contig = d->contig,
                          .extent = d->extent,
                          .count = count,
                          .ebytes = r->bytes};
    return 1;
}

/* Toward a target whose memory the transport maps into this process (nbr_target_t.mapped: UCX
 * over shared memory), one operation per block is a copy of 20–35 ns a block (F1's quiet rerun,
 * docs/experiments-f.md), while a packed message costs the target's CPU 2.5–5 µs before the
 * first byte: blocks won up to 64–512 blocks and packed led by 1.2–2.3x from 512–4096 on (Open
 * MPI – MPICH). NBRMA_NONCONTIG=auto packs for such a target only above this many blocks. */
#define NBR_MAPPED_BLOCKS 256

/* A put or get toward another node, packed; 0 when the per-piece path should take it. */
static int move_packed(nbr_win_t *w, int write, void *obuf, int ocount, const nbr_dtype_t *od,
                       int rank, MPI_Aint off, int tcount, const nbr_dtype_t *td, int *rc)
{
    if (w->noncontig == NBR_NC_AUTO && w->t[rank].mapped &&
        (int64_t)tcount * td->nseg <= NBR_MAPPED_BLOCKS)
        return 0;
    const nbr_runs_t *tr = pack_runs(td, 0, w->noncontig);
    nbr_tp_side_t side;
    if (!tr || !pack_side(od, ocount, obuf, 0, &side))
        return 0;
    _Alignas(8) char lay[NBR_PACK_LAY];
    nbr_lay_write(lay, td, tr, tcount, 0);
    size_t laylen = nbr_lay_wire_size(tr->nrun);
    int64_t total = (int64_t)tcount * tr->bytes;
    *rc = write ? nbr_tp_of(w, rank)->put_packed(w, rank, off, lay, laylen, &side, total)
                : nbr_tp_of(w, rank)->get_packed(w, rank, off, lay, laylen, &side, total);
    return 1;
}

/* Move data between an origin buffer and target memory, chunk by chunk. */
static int move(nbr_win_t *w, const char *call, int write, void *obuf, int ocount,
                const nbr_dtype_t *od, int rank, MPI_Aint off, int tcount, const nbr_dtype_t *td)
{
    if (od->contig && td->contig && (MPI_Aint)ocount * od->size == (MPI_Aint)tcount * td->size) {
        size_t n = (size_t)ocount * (size_t)od->size;
        return write ? nbr_tp_put(w, rank, off, obuf, n) : nbr_tp_get(w, rank, off, obuf, n);
    }
    nbr_dtype_walk_t it;
    if (nbr_dtype_walk_init(&it, od, ocount, td, tcount) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "origin (%d x %s, %ld bytes) and target (%d x %s, %ld bytes) differ in size",
                       ocount, nbr_dtype_name(od->type), (long)(ocount * od->size), tcount,
                       nbr_dtype_name(td->type), (long)(tcount * td->size));
    MPI_Aint oo, to, len;
    int rc = MPI_SUCCESS;
    if (nbr_tp_remote(&w->t[rank]) &&
        move_packed(w, write, obuf, ocount, od, rank, off, tcount, td, &rc))
        return rc;
    if (!nbr_tp_remote(&w->t[rank]) && !w->t[rank].base) {
        /* A node peer's private memory (CMA): the pieces in batches, one system call per
         * NBR_CMA_BATCH of them instead of one each (a transpose of 1000 x 1000 ints was a
         * million system calls). */
        static _Thread_local nbr_cma_piece_t batch[NBR_CMA_BATCH];
        int nb = 0;
        while (rc == MPI_SUCCESS && nbr_dtype_walk_next(&it, &oo, &to, &len)) {
            batch[nb++] = (nbr_cma_piece_t){(char *)obuf + oo, off + to, (size_t)len};
            if (nb == NBR_CMA_BATCH) {
                rc = nbr_shm_cma_batch(w, rank, write, batch, nb);
                nb = 0;
            }
        }
        return rc == MPI_SUCCESS && nb ? nbr_shm_cma_batch(w, rank, write, batch, nb) : rc;
    }
    while (rc == MPI_SUCCESS && nbr_dtype_walk_next(&it, &oo, &to, &len))
        rc = write ? nbr_tp_put(w, rank, off + to, (char *)obuf + oo, (size_t)len)
                   : nbr_tp_get(w, rank, off + to, (char *)obuf + oo, (size_t)len);
    return rc;
}

/* What both put/get fast paths ask of a call: a contiguous predefined type, the same on both
 * sides, a rank of the window, a non-negative displacement and count, a static window, in bounds.
 * The target, with the call's byte offset and length; NULL to take the full path (which reports
 * every error). A lazy window's descriptor not made yet (size 0, no base) fails here or in the
 * callers' base and transport checks: the full path makes it. */
static inline __attribute__((always_inline)) nbr_target_t *
fast_range(nbr_win_t *w, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp, int tcount,
           MPI_Datatype tt, MPI_Aint *off, MPI_Aint *n)
{
    const nbr_dtype_t *d = pre_lookup(ot);
    if (!d || tt != ot || ocount != tcount || (unsigned)rank >= (unsigned)w->size ||
        (disp | ocount) < 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return NULL;
    nbr_target_t *t = &w->t[rank];
    *n = (MPI_Aint)ocount * d->size;
    /* nbr_range's check in two instructions: off and n are in [0, 2^63), so their unsigned sum
     * cannot wrap. */
    if (__builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, off) ||
        (uint64_t)*off + (uint64_t)*n > (uint64_t)t->size)
        return NULL;
    return t;
}

/* The scheduler of 002 §4 (epoch.c): in a ready epoch, a Put or Get of at least th bytes toward
 * a node peer or self (an iR) is held for the closing call or a flush, so that its copy runs while
 * the epoch's inter-node transfers (IR, issued in their calls) are in flight. Smaller ones (ir)
 * are carried out at once: queueing a few bytes costs more than it can hide. Not held: calls
 * being replayed, and the request-based Rput/Rget, whose request the application may wait for
 * inside the epoch (MPI-3.1 §11.3.5). Accumulates are never held (their ordering is kept by
 * carrying them out in call order). */
static inline int sched_holds(const nbr_win_t *w, int rank, MPI_Aint bytes)
{
    return bytes >= w->sched_th && !w->replaying && !w->want_req && w->t[rank].net == NBR_NET_SHM;
}

/* Delayed issue (paper 004 §III-D; NBRMA_ISSUE=delayed, info key nbrma_issue): in a ready epoch
 * every call is recorded — an operation object each — and carried out by the closing call or a
 * flush, as MPICH's lazy issue does for active messages; the replay keeps call order. A
 * request-based call is recorded unheld: its epoch is pushed for replay at once, so it and the
 * calls queued before it are carried out now, in order (its request may be waited for inside the
 * epoch). Eager (the default) carries each call out in its call. The fast paths are off in a
 * delayed window (sched_th is 0 there; acc_fast tests the flag). */
static inline int issue_queues(const nbr_win_t *w)
{
    return w->issue_delayed && !w->replaying;
}

/* The common case of paper 001 §2.4, and the same toward another node (001 §2.4's fast path,
 * carried to a transport): fast_range's checks, once, then
 *  - toward mapped target memory (a node peer, self) in an open epoch: one memcpy;
 *  - toward another node, in an open epoch, with eager issue: straight to the pair's transport
 *    (one UCP put or get over ucx, called directly), skipping the type table, the general
 *    argument checks and the walk (docs/ref-internals.md, "Fast paths across nodes").
 * Inlined into each entry point, inside the big lock when one is taken (a progress thread runs).
 * Returns 1 when it took the call (its result in *rc), 0 to take the full path. */
static inline __attribute__((always_inline)) int rw_fast(nbr_win_t *w, int write, void *obuf,
                                                         int ocount, MPI_Datatype ot, int rank,
                                                         MPI_Aint disp, int tcount, MPI_Datatype tt,
                                                         int *rc)
{
    MPI_Aint off, n;
    nbr_target_t *t = fast_range(w, ocount, ot, rank, disp, tcount, tt, &off, &n);
    if (!t)
        return 0;
    if (t->base) {
        if (n >= w->sched_th || !may_access(w, rank))
            return 0;
        write ? memcpy(t->base + off, obuf, (size_t)n) : memcpy(obuf, t->base + off, (size_t)n);
        *rc = MPI_SUCCESS;
        return 1;
    }
    if (!nbr_tp_remote(t) || n == 0 || issue_queues(w) || !(w->all_direct || t->direct))
        return 0;
    w->epoch_ops += !w->replaying; /* may_access's count */
#if NBR_HAVE_UCX
    if (NBR_LIKELY(t->net == NBR_NET_UCX)) {
        *rc = nbr_ucx_rw(w, rank, off, obuf, (size_t)n, write);
        return 1;
    }
#endif
    const nbr_tp_ops_t *tp = nbr_tp_table[t->net];
    *rc = write ? tp->put(w, rank, off, obuf, (size_t)n) : tp->get(w, rank, off, obuf, (size_t)n);
    return 1;
}

/* Put and Get past the fast paths: every argument checked, held or recorded calls, the walk. */
static __attribute__((noinline)) int put_get_full(const char *call, int write, void *obuf,
                                                  int ocount, MPI_Datatype ot, int rank,
                                                  MPI_Aint disp, int tcount, MPI_Datatype tt,
                                                  nbr_win_t *w)
{
    int rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (NBR_UNLIKELY(ocount < 0 || tcount < 0))
        return nbr_err(w, call, MPI_ERR_COUNT, "count %d is negative",
                       ocount < 0 ? ocount : tcount);
    const nbr_dtype_t *od, *td;
    rc = types(w, call, ot, tt, &od, &td);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint lo, hi, off;
    int defer;
    if (moves_nothing(ocount, od, tcount, td))
        return target_check(w, call, rank, disp, 0, 0, &off, &defer);
    nbr_dtype_span(td, tcount, &lo, &hi);
    if ((rc = target_check(w, call, rank, disp, lo, hi, &off, &defer)) != MPI_SUCCESS)
        return rc;
    int queue = !defer && issue_queues(w);
    int held = !defer && (queue ? !w->want_req : sched_holds(w, rank, (MPI_Aint)ocount * od->size));
    if (defer || held || queue)
        return record(w, &(nbr_rec_t){.kind = write ? NBR_RC_PUT : NBR_RC_GET,
                                      .rank = rank,
                                      .obuf = obuf,
                                      .rbuf = obuf,
                                      .ocount = ocount,
                                      .ot = ot,
                                      .disp = disp,
                                      .tcount = tcount,
                                      .tt = tt,
                                      .call = call,
                                      .held = (unsigned char)held});
    return move(w, call, write, obuf, ocount, od, rank, off, tcount, td);
}

static inline __attribute__((always_inline)) int put_get(const char *call, int write, void *obuf,
                                                         int ocount, MPI_Datatype ot, int rank,
                                                         MPI_Aint disp, int tcount, MPI_Datatype tt,
                                                         nbr_win_t *w)
{
    int rc;
    if (NBR_LIKELY(rw_fast(w, write, obuf, ocount, ot, rank, disp, tcount, tt, &rc)))
        return rc;
    return put_get_full(call, write, obuf, ocount, ot, rank, disp, tcount, tt, w);
}

/* ---- accumulate family ----------------------------------------------------------------------- */

/* The accumulate lock is held for at most this many bytes of work at a time: a large accumulate
 * lets go between chunks so that concurrent small ones (queued FIFO on the ticket lock) do not
 * wait for its whole length. Chunks end on element boundaries: each element is still updated
 * entirely under the lock (docs/ref-internals.md says why atomicity and ordering hold). */
#define NBR_ACC_CHUNK 65536

typedef struct {
    nbr_target_t *t;
    int me, chunked; /* chunked 0: keep the lock (the caller needs one hold for all) */
    MPI_Aint held;   /* bytes worked on since the lock was taken */
} acc_hold_t;

/* Account `bytes` of work done under the lock; after a chunk's worth, let waiters in. */
static inline void acc_progress(acc_hold_t *h, MPI_Aint bytes)
{
    if (h->chunked && (h->held += bytes) >= NBR_ACC_CHUNK) {
        nbr_acc_unlock(h->t);
        nbr_acc_lock(h->t, h->me);
        h->held = 0;
    }
}

/* The largest piece of `len` bytes (at most a chunk) made of whole `ext`-byte elements. */
static inline MPI_Aint acc_piece(MPI_Aint len, MPI_Aint ext)
{
    MPI_Aint n = len < NBR_ACC_CHUNK ? len : NBR_ACC_CHUNK;
    n -= n % ext;
    return n > 0 ? n : (len < ext ? len : ext);
}

/* target[...] = obuf op target[...], piece by piece, under the accumulate lock (taken by the
 * caller; held on return). `chunked`: released and retaken between chunks; 0 when the caller
 * read the same elements under this hold and must update them in it (get_accumulate). */
static int apply(nbr_win_t *w, const char *call, MPI_Op op, const void *obuf, int ocount,
                 const nbr_dtype_t *od, int rank, MPI_Aint off, int tcount, const nbr_dtype_t *td,
                 int chunked)
{
    acc_hold_t h = {&w->t[rank], w->rank, chunked, 0};
    nbr_dtype_walk_t it;
    MPI_Aint oo, to, len, ext;
    if (op == MPI_REPLACE) {
        /* Data bytes only (padding untouched), split only at the target's element boundaries.
         * A padded pair's data may sit packed (stride basic_size) or padded (basic_extent) in
         * one piece: such pieces are not split. */
        if (nbr_dtype_walk_init(&it, od, ocount, td, tcount) != MPI_SUCCESS)
            return nbr_err(w, call, MPI_ERR_TYPE, "origin and target data differ in size");
        ext = td->basic_size == td->basic_extent ? td->basic_extent : 0;
        while (nbr_dtype_walk_next(&it, &oo, &to, &len))
            for (MPI_Aint done = 0, n; done < len; done += n) {
                n = ext > 0 ? acc_piece(len - done, ext) : len - done;
                if (w->acc_native && ext > 0 && w->t[rank].base &&
                    nbr_op_atomic(op, td->basic, (const char *)obuf + oo + done,
                                  w->t[rank].base + off + to + done, NULL, n / ext))
                    continue; /* accumulate_ops=same_op: atomic instructions (op.c) */
                int rc = nbr_shm_write(w, rank, off + to + done, (const char *)obuf + oo + done,
                                       (size_t)n);
                if (rc != MPI_SUCCESS)
                    return rc;
                acc_progress(&h, n);
            }
        return MPI_SUCCESS;
    }
    /* Whole basic elements as C arrays (a padded pair type such as MPI_SHORT_INT is one element
     * of basic_extent bytes, never split at its padding). */
    if (nbr_dtype_walk_init_elem(&it, od, ocount, td, tcount) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_TYPE, "origin and target data differ in size");
    ext = td->basic_extent;
    unsigned char *tbase = w->t[rank].base;
    static _Alignas(16) unsigned char tmp[NBR_ACC_CHUNK];
    while (nbr_dtype_walk_next(&it, &oo, &to, &len))
        for (MPI_Aint done = 0, n; done < len; done += n) {
            const char *in = (const char *)obuf + oo + done;
            n = acc_piece(len - done, ext);
            if (tbase) {
                if (!w->acc_native ||
                    !nbr_op_atomic(op, td->basic, in, tbase + off + to + done, NULL, n / ext))
                    nbr_op_apply(op, td->basic, in, tbase + off + to + done, n / ext);
            } else { /* private target memory: read, combine, write back */
                int rc = nbr_shm_read(w, rank, off + to + done, tmp, (size_t)n);
                if (rc == MPI_SUCCESS) {
                    nbr_op_apply(op, td->basic, in, tmp, n / ext);
                    rc = nbr_shm_write(w, rank, off + to + done, tmp, (size_t)n);
                }
                if (rc != MPI_SUCCESS)
                    return rc;
            }
            acc_progress(&h, n);
        }
    return MPI_SUCCESS;
}

/* A type walk that hands out its pieces up to a byte budget, keeping the rest of a piece. */
typedef struct {
    nbr_dtype_walk_t it;
    MPI_Aint oo, to, len; /* the unconsumed part of the current piece */
} acc_walk_t;

static int acc_walk_take(acc_walk_t *a, MPI_Aint max, MPI_Aint *oo, MPI_Aint *to, MPI_Aint *len)
{
    if (!a->len && !nbr_dtype_walk_next(&a->it, &a->oo, &a->to, &a->len))
        return 0;
    *oo = a->oo, *to = a->to, *len = a->len < max ? a->len : max;
    a->oo += *len, a->to += *len, a->len -= *len;
    return 1;
}

/* The result walk and (unless MPI_NO_OP) the origin walk of a get_accumulate, both in the target's
 * elements. 0 when a type is not built from the target's basic type. */
static int acc_walks_init(acc_walk_t *r, acc_walk_t *a, MPI_Op op, const nbr_dtype_t *od,
                          int ocount, const nbr_dtype_t *rd, int rcount, const nbr_dtype_t *td,
                          int tcount)
{
    *r = (acc_walk_t){.len = 0};
    *a = (acc_walk_t){.len = 0};
    return nbr_dtype_walk_init_elem(&r->it, rd, rcount, td, tcount) == MPI_SUCCESS &&
           (op == MPI_NO_OP ||
            nbr_dtype_walk_init_elem(&a->it, od, ocount, td, tcount) == MPI_SUCCESS);
}

/* The origin's bytes for the next `len` bytes of target elements, gathered into tmp in target
 * order. */
static void acc_gather(acc_walk_t *a, const void *obuf, MPI_Aint len, char *tmp)
{
    for (MPI_Aint got = 0, oo, to, n; got < len; got += n) {
        if (!acc_walk_take(a, len - got, &oo, &to, &n))
            break; /* cannot happen: both walks cover the same target bytes */
        memcpy(tmp + got, (const char *)obuf + oo, (size_t)n);
    }
}

/* Get_accumulate on a window whose eligible pairs use atomic instructions (accumulate_ops=
 * same_op, MPI-3.1 §11.2.1; op.c): each piece of target elements is fetched and updated element
 * by element with one atomic instruction each (a piece whose first element is not aligned —
 * then none is — under the lock, as every other origin does for that location). Returns
 * MPI_ERR_TYPE with nothing done when the walks cannot pair the elements (the caller's path). */
static int get_apply_atomic(nbr_win_t *w, MPI_Op op, const void *obuf, int ocount,
                            const nbr_dtype_t *od, void *rbuf, int rcount, const nbr_dtype_t *rd,
                            int rank, MPI_Aint off, int tcount, const nbr_dtype_t *td)
{
    acc_walk_t r, a;
    if (!acc_walks_init(&r, &a, op, od, ocount, rd, rcount, td, tcount))
        return MPI_ERR_TYPE;
    MPI_Aint ext = td->basic_extent, budget = acc_piece(NBR_ACC_CHUNK, ext), oo, to, len;
    unsigned char *tbase = w->t[rank].base;
    static _Alignas(16) unsigned char tmp[NBR_ACC_CHUNK];
    while (acc_walk_take(&r, budget, &oo, &to, &len)) {
        if (op != MPI_NO_OP)
            acc_gather(&a, obuf, len, (char *)tmp);
        const void *in = op != MPI_NO_OP ? tmp : NULL;
        char *res = (char *)rbuf + oo;
        if (nbr_op_atomic(op, td->basic, in, tbase + off + to, res, len / ext))
            continue;
        nbr_acc_lock(&w->t[rank], w->rank);
        nbr_op_apply(MPI_REPLACE, td->basic, tbase + off + to, res, len / ext);
        if (op != MPI_NO_OP)
            nbr_op_apply(op, td->basic, tmp, tbase + off + to, len / ext);
        nbr_acc_unlock(&w->t[rank]);
    }
    return MPI_SUCCESS;
}

/* Get_accumulate's general path, a chunk per hold: copy a chunk of target elements into the
 * result buffer, combine the origin into the same elements, then let waiters in. Both walks go
 * through the target's elements in the same order in whole elements, so equal byte budgets
 * cover the same target bytes. Copies go through MPI_REPLACE's kernel (data bytes only, padding
 * untouched). MPI_ERR_TYPE, with nothing done, when the result or origin type is not built from
 * the target's basic type: the caller then holds the lock for the whole call. */
static int get_apply_chunked(nbr_win_t *w, MPI_Op op, const void *obuf, int ocount,
                             const nbr_dtype_t *od, void *rbuf, int rcount, const nbr_dtype_t *rd,
                             int rank, MPI_Aint off, int tcount, const nbr_dtype_t *td)
{
    acc_walk_t r, a;
    if (!acc_walks_init(&r, &a, op, od, ocount, rd, rcount, td, tcount))
        return MPI_ERR_TYPE;
    MPI_Aint ext = td->basic_extent, budget = acc_piece(NBR_ACC_CHUNK, ext), oo, to, len;
    unsigned char *tbase = w->t[rank].base;
    static _Alignas(16) unsigned char tmp[NBR_ACC_CHUNK];
    int rc = MPI_SUCCESS, more = 1;
    while (more && rc == MPI_SUCCESS) {
        MPI_Aint got = 0;
        nbr_acc_lock(&w->t[rank], w->rank);
        while (got < budget && rc == MPI_SUCCESS &&
               (more = acc_walk_take(&r, budget - got, &oo, &to, &len))) {
            char *res = (char *)rbuf + oo;
            if (tbase)
                nbr_op_apply(MPI_REPLACE, td->basic, tbase + off + to, res, len / ext);
            else if ((rc = nbr_shm_read(w, rank, off + to, tmp, (size_t)len)) == MPI_SUCCESS)
                nbr_op_apply(MPI_REPLACE, td->basic, tmp, res, len / ext);
            got += len;
        }
        for (MPI_Aint done = 0; op != MPI_NO_OP && done < got && rc == MPI_SUCCESS; done += len) {
            if (!acc_walk_take(&a, got - done, &oo, &to, &len))
                break; /* cannot happen: both walks cover the same bytes */
            const char *in = (const char *)obuf + oo;
            if (tbase) {
                nbr_op_apply(op, td->basic, in, tbase + off + to, len / ext);
            } else if ((rc = nbr_shm_read(w, rank, off + to, tmp, (size_t)len)) == MPI_SUCCESS) {
                nbr_op_apply(op, td->basic, in, tmp, len / ext);
                rc = nbr_shm_write(w, rank, off + to, tmp, (size_t)len);
            }
        }
        nbr_acc_unlock(&w->t[rank]);
    }
    return rc;
}

/* The accumulate family toward a remote target (transport/tp.h): accumulate deliveries of whole
 * target elements, at most NBR_AM_PIECE bytes each (each is applied under the target's
 * accumulate lock, so element-wise atomicity and same-origin ordering hold as over shared
 * memory). get_accumulate (rbuf != NULL): the result walk decides the pieces, the origin's bytes
 * for each are gathered in target-element order, and each piece's old contents land in the
 * result buffer when its acknowledgement arrives. */
#define NBR_AM_PIECE 16384
static int acc_remote(nbr_win_t *w, const char *call, MPI_Op op, const void *obuf, int ocount,
                      const nbr_dtype_t *od, void *rbuf, int rcount, const nbr_dtype_t *rd,
                      int rank, MPI_Aint off, int tcount, const nbr_dtype_t *td)
{
    MPI_Aint ext = td->basic_extent, budget = NBR_AM_PIECE - NBR_AM_PIECE % ext, oo, to, len;
    int rc = MPI_SUCCESS;
    /* Small noncontiguous target elements: packed (whole elements; results field by field). */
    /* accumulate_ops=same_op over a transport with its own atomics (ucx): pairs its atomics
     * serve (op.c's one-instruction pairs) go piece by piece through the table's acc, which
     * serves aligned elements with UCP atomics — all of an origin's accumulates to a location
     * through one channel, so they stay ordered (MPI-3.1 §11.7.2's default accumulate_ordering).
     * The compare-and-swap-loop pairs are packed to the target's CPU like any other.
     * NBRMA_ACC=hw (004 Fig. 1) over such a transport, or auto toward a target it maps: every
     * piece through its acc, which takes the target's accumulate lock itself, gets, computes and
     * puts (ucx.c); nothing packed. */
    int own_acc = nbr_tp_of(w, rank)->acc != nbr_am_acc;
    const nbr_runs_t *tr =
        own_acc && (nbr_acc_hw(w, rank) || (w->acc_native && nbr_op_atomic_native(op, td->basic)))
            ? NULL
            : pack_runs(td, 1, NBR_NC_AUTO);
    nbr_tp_side_t src, res;
    if (tr && (op == MPI_NO_OP || pack_side(od, ocount, obuf, 1, &src)) &&
        (!rbuf || pack_side(rd, rcount, rbuf, 1, &res))) {
        _Alignas(8) char lay[NBR_PACK_LAY];
        nbr_lay_write(lay, td, tr, tcount, 1);
        if (rbuf && rd->basic_size != rd->basic_extent)
            res.pair = rd->basic, res.pext = rd->basic_extent;
        return nbr_tp_of(w, rank)->acc_packed(w, rank, off, lay, nbr_lay_wire_size(tr->nrun), op,
                                              td->basic, ext, op == MPI_NO_OP ? NULL : &src,
                                              rbuf ? &res : NULL, (int64_t)tcount * tr->bytes);
    }
    if (!rbuf) {
        nbr_dtype_walk_t it;
        if (nbr_dtype_walk_init_elem(&it, od, ocount, td, tcount) != MPI_SUCCESS)
            return nbr_err(w, call, MPI_ERR_TYPE, "origin and target data differ in size");
        while (rc == MPI_SUCCESS && nbr_dtype_walk_next(&it, &oo, &to, &len))
            for (MPI_Aint done = 0, n; rc == MPI_SUCCESS && done < len; done += n) {
                n = len - done < budget ? len - done : budget;
                rc = nbr_tp_of(w, rank)->acc(w, rank, off + to + done, op, td->basic,
                                             (const char *)obuf + oo + done, NULL, (size_t)n);
            }
        return rc;
    }
    /* Contiguous on all three sides (fetch_and_op, a contiguous get_accumulate): the pieces go
     * straight from the origin's and into the result buffer, no gathering copy. */
    MPI_Aint total = (MPI_Aint)tcount * td->size;
    if (td->contig && rd->contig && (MPI_Aint)rcount * rd->size == total &&
        td->basic_size == td->basic_extent &&
        (op == MPI_NO_OP || (od->contig && (MPI_Aint)ocount * od->size == total))) {
        for (MPI_Aint done = 0, n; rc == MPI_SUCCESS && done < total; done += n) {
            n = total - done < budget ? total - done : budget;
            rc = nbr_tp_of(w, rank)->acc(w, rank, off + done, op, td->basic,
                                         op == MPI_NO_OP ? NULL : (const char *)obuf + done,
                                         (char *)rbuf + done, (size_t)n);
        }
        return rc;
    }
    acc_walk_t r, a;
    if (!acc_walks_init(&r, &a, op, od, ocount, rd, rcount, td, tcount))
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "origin, result and target types do not hold the same elements");
    char *tmp = op != MPI_NO_OP ? malloc((size_t)budget) : NULL;
    if (op != MPI_NO_OP && !tmp)
        return nbr_err(w, call, MPI_ERR_NO_MEM, "out of memory for an accumulate piece");
    while (rc == MPI_SUCCESS && acc_walk_take(&r, budget, &oo, &to, &len)) {
        if (op != MPI_NO_OP)
            acc_gather(&a, obuf, len, (char *)tmp);
        rc = nbr_tp_of(w, rank)->acc(w, rank, off + to, op, td->basic, tmp, (char *)rbuf + oo,
                                     (size_t)len);
    }
    free(tmp);
    return rc;
}

/* The shared checks of the accumulate family; `obuf` NULL for MPI_NO_OP. *nothing: the call
 * moves no byte (checked for rank and epoch only; the caller returns at once). */
static int acc_prepare(nbr_win_t *w, const char *call, int ocount, MPI_Datatype ot, int rank,
                       MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op, int no_op_ok,
                       const nbr_dtype_t **od, const nbr_dtype_t **td, MPI_Aint *off, int *defer,
                       int *nothing)
{
    *nothing = 0;
    if (ocount < 0 || tcount < 0)
        return nbr_err(w, call, MPI_ERR_COUNT, "count %d is negative",
                       ocount < 0 ? ocount : tcount);
    int rc = types(w, call, ot, tt, od, td);
    if (rc != MPI_SUCCESS)
        return rc;
    if (op == MPI_NO_OP && !no_op_ok)
        return nbr_err(w, call, MPI_ERR_OP,
                       "MPI_NO_OP is only for MPI_Get_accumulate and "
                       "MPI_Fetch_and_op");
    if ((*nothing = moves_nothing(ocount, *od, tcount, *td)))
        return target_check(w, call, rank, disp, 0, 0, off, defer);
    if ((*td)->basic == MPI_DATATYPE_NULL)
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "target_datatype %s mixes predefined types; accumulate needs one",
                       nbr_dtype_name(tt));
    /* MPI-3.1 §11.3.4: both types built from one predefined type, MPI_REPLACE included. */
    if (op != MPI_NO_OP && !nbr_dtype_same_basic(*od, *td))
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "origin (%s) and target (%s) are not built from the same predefined type",
                       nbr_dtype_name((*od)->basic != MPI_DATATYPE_NULL ? (*od)->basic : ot),
                       nbr_dtype_name((*td)->basic));
    if (op != MPI_NO_OP && op != MPI_REPLACE) {
        if (nbr_op_check(op, (*td)->basic) != MPI_SUCCESS)
            return nbr_err(w, call, MPI_ERR_OP, "%s is not defined on %s", nbr_op_name(op),
                           nbr_dtype_name((*td)->basic));
    }
    MPI_Aint lo, hi;
    nbr_dtype_span(*td, tcount, &lo, &hi);
    return target_check(w, call, rank, disp, lo, hi, off, defer);
}

/* acc_fast toward another node: accumulate_ops=same_op, a pair whose transport has its own
 * atomics (ucx), an (op, type) they serve (op.c's one-instruction pairs, which are also the pairs
 * the op is defined on), at most one accumulate piece. The same call of the transport's acc that
 * acc_remote makes for such a pair (so all of an origin's accumulates to a location still go
 * through one channel, MPI-3.1 §11.7.2), without the type table, the checks of acc_prepare and
 * the walk: half the instructions of a fetch_and_op + flush across nodes. */
static inline int acc_tp_fast(nbr_win_t *w, nbr_target_t *t, const nbr_dtype_t *d,
                              const void *obuf, void *rbuf, int rank, MPI_Aint off, MPI_Aint n,
                              MPI_Op op, int *rc)
{
    if (!w->acc_native || !nbr_tp_remote(t) || n == 0 || n > NBR_AM_PIECE - NBR_AM_PIECE % d->size ||
        !(w->all_direct || t->direct))
        return 0;
    const nbr_tp_ops_t *tp = nbr_tp_table[t->net];
    int s;
    if (tp->acc == nbr_am_acc || !(s = nbr_op_atomic_native(op, d->basic)))
        return 0;
    w->epoch_ops += !w->replaying; /* may_access's count */
#if NBR_HAVE_UCX
    if (NBR_LIKELY(t->net == NBR_NET_UCX)) {
        *rc = nbr_ucx_acc_fast(w, rank, off, op, d->basic, s, op == MPI_NO_OP ? NULL : obuf, rbuf,
                               (size_t)n);
        return 1;
    }
#endif
    *rc = tp->acc(w, rank, off, op, d->basic, op == MPI_NO_OP ? NULL : obuf, rbuf, (size_t)n);
    return 1;
}

/* The accumulate family's common case: the same contiguous predefined type on both sides, mapped
 * target memory, an open epoch, in bounds, an operation defined on the type. Still under the
 * target's accumulate lock, a chunk at a time (fetch and update of each chunk in one hold), so
 * it stays atomic element by element with every other accumulate call. `rbuf` receives
 * the old contents (Get_accumulate, Fetch_and_op) or is NULL. Returns 1 when done (*rc its
 * result: a transport's error across nodes), 0 to take the full path (which reports every
 * error). */
static inline __attribute__((always_inline)) int acc_fast(nbr_win_t *w, const void *obuf,
                                                          void *rbuf, int count, MPI_Datatype type,
                                                          int rank, MPI_Aint disp, MPI_Op op,
                                                          int *rc)
{
    const nbr_dtype_t *d = pre_lookup(type);
    if (!d || (unsigned)rank >= (unsigned)w->size || disp < 0 || count < 0 ||
        w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->issue_delayed)
        return 0;
    nbr_target_t *t = &w->t[rank];
    nbr_kernel_fn *k = NULL;
    MPI_Aint off, n = (MPI_Aint)count * d->size;
    *rc = MPI_SUCCESS;
    if (__builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, &off) ||
        (uint64_t)off + (uint64_t)n > (uint64_t)t->size || (op == MPI_NO_OP && !rbuf))
        return 0;
    if (!t->base)
        return acc_tp_fast(w, t, d, obuf, rbuf, rank, off, n, op, rc);
    if (!may_access(w, rank))
        return 0;
    unsigned char *p = t->base + off;
    /* accumulate_ops=same_op: an eligible pair at an aligned element, atomic instructions with
     * no lock (MPI-3.1 §11.2.1; op.c) — every other path of the window does the same for it.
     * (An eligible pair is one the op is defined on: no kernel check needed first.) */
    if (w->acc_native && nbr_op_atomic(op, type, obuf, p, rbuf, count))
        return 1;
    if (op != MPI_REPLACE && op != MPI_NO_OP && !(k = nbr_op_kernel(op, type)))
        return 0;
    for (MPI_Aint done = 0, len; done < n; done += len) { /* a chunk per lock hold */
        len = acc_piece(n - done, d->size);
        nbr_acc_lock(t, w->rank);
        if (rbuf)
            memcpy((char *)rbuf + done, p + done, (size_t)len);
        if (op == MPI_REPLACE)
            memcpy(p + done, (const char *)obuf + done, (size_t)len);
        else if (k)
            nbr_op_run(k, (const char *)obuf + done, p + done, len / d->size, d->extent);
        nbr_acc_unlock(t);
    }
    return 1;
}

static int accumulate(nbr_win_t *w, const char *call, const void *obuf, int ocount, MPI_Datatype ot,
                      int rank, MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op)
{
    int rc;
    if (ot == tt && ocount == tcount && acc_fast(w, obuf, NULL, ocount, ot, rank, disp, op, &rc))
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const nbr_dtype_t *od, *td;
    MPI_Aint off;
    int defer, nothing;
    rc = acc_prepare(w, call, ocount, ot, rank, disp, tcount, tt, op, 0, &od, &td, &off, &defer,
                         &nothing);
    if (rc != MPI_SUCCESS || nothing)
        return rc;
    if (defer || issue_queues(w))
        return record(w, &(nbr_rec_t){.kind = NBR_RC_ACC,
                                      .held = (unsigned char)(!defer && !w->want_req),
                                      .rank = rank,
                                      .obuf = obuf,
                                      .ocount = ocount,
                                      .ot = ot,
                                      .disp = disp,
                                      .tcount = tcount,
                                      .tt = tt,
                                      .op = op,
                                      .call = call});
    if (nbr_tp_remote(&w->t[rank]))
        return acc_remote(w, call, op, obuf, ocount, od, NULL, 0, NULL, rank, off, tcount, td);
    nbr_acc_lock(&w->t[rank], w->rank);
    rc = apply(w, call, op, obuf, ocount, od, rank, off, tcount, td, 1);
    nbr_acc_unlock(&w->t[rank]);
    return rc;
}

static int get_accumulate(nbr_win_t *w, const char *call, const void *obuf, int ocount,
                          MPI_Datatype ot, void *rbuf, int rcount, MPI_Datatype rt, int rank,
                          MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op)
{
    int rc;
    if (rt == tt && rcount == tcount && (op == MPI_NO_OP || (ot == tt && ocount == tcount)) &&
        acc_fast(w, obuf, rbuf, tcount, tt, rank, disp, op, &rc))
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const nbr_dtype_t *od, *td, *rd;
    MPI_Aint off;
    int defer, nothing;
    if (rcount < 0)
        return nbr_err(w, call, MPI_ERR_COUNT, "result_count %d is negative", rcount);
    if (nbr_dtype_get(rt, &rd) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_TYPE, "result_datatype is not a valid datatype");
    if (!nbr_dtype_committed(rd))
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "result_datatype is not committed (call MPI_Type_commit first)");
    if (op == MPI_NO_OP) { /* origin arguments are ignored */
        obuf = NULL;
        ot = rt;
        ocount = rcount;
    }
    rc = acc_prepare(w, call, ocount, ot, rank, disp, tcount, tt, op, 1, &od, &td, &off, &defer,
                     &nothing);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nothing || rcount == 0 || rd->size == 0) /* no byte to combine or to fetch */
        return MPI_SUCCESS;
    /* MPI-3.1 §11.3.4: the result buffer holds target elements, so the same predefined type. */
    if (!nbr_dtype_same_basic(rd, td))
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "result (%s) and target (%s) are not built from the same predefined type",
                       nbr_dtype_name(rd->basic != MPI_DATATYPE_NULL ? rd->basic : rt),
                       nbr_dtype_name(td->basic));
    if (defer || issue_queues(w))
        return record(w, &(nbr_rec_t){.kind = NBR_RC_GACC,
                                      .held = (unsigned char)(!defer && !w->want_req),
                                      .rank = rank,
                                      .obuf = obuf,
                                      .ocount = ocount,
                                      .ot = ot,
                                      .rbuf = rbuf,
                                      .rcount = rcount,
                                      .rt = rt,
                                      .disp = disp,
                                      .tcount = tcount,
                                      .tt = tt,
                                      .op = op,
                                      .call = call});
    if (nbr_tp_remote(&w->t[rank]))
        return acc_remote(w, call, op, obuf, ocount, od, rbuf, rcount, rd, rank, off, tcount, td);
    if (w->acc_native && w->t[rank].base && nbr_op_atomic_size(op, td->basic) &&
        (rc = get_apply_atomic(w, op, obuf, ocount, od, rbuf, rcount, rd, rank, off, tcount, td)) !=
            MPI_ERR_TYPE)
        return rc;
    if ((rc = get_apply_chunked(w, op, obuf, ocount, od, rbuf, rcount, rd, rank, off, tcount,
                                td)) != MPI_ERR_TYPE)
        return rc;
    nbr_acc_lock(&w->t[rank], w->rank);
    rc = move(w, call, 0, rbuf, rcount, rd, rank, off, tcount, td);
    if (rc == MPI_SUCCESS && op != MPI_NO_OP)
        rc = apply(w, call, op, obuf, ocount, od, rank, off, tcount, td, 0);
    nbr_acc_unlock(&w->t[rank]);
    return rc;
}

static int fetch_and_op(nbr_win_t *w, const char *call, const void *obuf, void *rbuf,
                        MPI_Datatype type, int rank, MPI_Aint disp, MPI_Op op)
{
    int rc;
    if (acc_fast(w, obuf, rbuf, 1, type, rank, disp, op, &rc))
        return rc;
    const nbr_dtype_t *d;
    if (nbr_dtype_get(type, &d) != MPI_SUCCESS || !d->predefined)
        return nbr_err(w, call, MPI_ERR_TYPE, "datatype must be predefined");
    pre_remember(d);
    return get_accumulate(w, call, obuf, 1, type, rbuf, 1, type, rank, disp, 1, type, op);
}

static int compare_and_swap(nbr_win_t *w, const char *call, const void *obuf, const void *cbuf,
                            void *rbuf, MPI_Datatype type, int rank, MPI_Aint disp)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const nbr_dtype_t *d;
    if (nbr_dtype_get(type, &d) != MPI_SUCCESS || nbr_op_cas_check(type) != MPI_SUCCESS)
        return nbr_err(w, call, MPI_ERR_TYPE,
                       "%s is not allowed: compare-and-swap takes an integer, logical or byte type",
                       nbr_dtype_name(type));
    MPI_Aint off;
    int defer;
    int rc = target_check(w, call, rank, disp, 0, d->size, &off, &defer);
    if (rc != MPI_SUCCESS)
        return rc;
    if (defer || issue_queues(w))
        return record(w, &(nbr_rec_t){.kind = NBR_RC_CAS,
                                      .held = (unsigned char)(!defer && !w->want_req),
                                      .rank = rank,
                                      .obuf = obuf,
                                      .cbuf = cbuf,
                                      .rbuf = rbuf,
                                      .ot = type,
                                      .disp = disp,
                                      .call = call});
    size_t n = (size_t)d->size;
    if (nbr_tp_remote(&w->t[rank]))
        return nbr_tp_of(w, rank)->cas(w, rank, off, obuf, cbuf, rbuf, n);
    if (w->acc_native && w->t[rank].base &&
        nbr_op_atomic_cas(n, w->t[rank].base + off, obuf, cbuf, rbuf)) /* same_op: op.c */
        return MPI_SUCCESS;
    unsigned char old[64];
    nbr_acc_lock(&w->t[rank], w->rank);
    rc = nbr_shm_read(w, rank, off, old, n);
    if (rc == MPI_SUCCESS && memcmp(old, cbuf, n) == 0)
        rc = nbr_shm_write(w, rank, off, obuf, n);
    nbr_acc_unlock(&w->t[rank]);
    if (rc == MPI_SUCCESS)
        memcpy(rbuf, old, n);
    return rc;
}

/* Carry out a recorded call (the engine's step 4, epoch.c): its epoch is ready now. */
int nbr_rma_exec(nbr_win_t *w, const nbr_rec_t *r)
{
    switch (r->kind) {
    case NBR_RC_PUT:
    case NBR_RC_GET:
        return put_get(r->call, r->kind == NBR_RC_PUT, r->rbuf, r->ocount, r->ot, r->rank, r->disp,
                       r->tcount, r->tt, w);
    case NBR_RC_ACC:
        return accumulate(w, r->call, r->obuf, r->ocount, r->ot, r->rank, r->disp, r->tcount, r->tt,
                          r->op);
    case NBR_RC_GACC:
        return get_accumulate(w, r->call, r->obuf, r->ocount, r->ot, r->rbuf, r->rcount, r->rt,
                              r->rank, r->disp, r->tcount, r->tt, r->op);
    case NBR_RC_CAS:
        return compare_and_swap(w, r->call, r->obuf, r->cbuf, r->rbuf, r->ot, r->rank, r->disp);
    }
    return MPI_ERR_INTERN;
}

/* ---- entry points ---------------------------------------------------------------------------- */

/* Put and Get: the fast paths first (rw_fast), inside the big lock when one is taken (only with a
 * progress thread or MPI_THREAD_MULTIPLE). */
NBR_API int MPI_Put(const void *obuf, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp,
                    int tcount, MPI_Datatype tt, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Put(obuf, ocount, ot, rank, disp, tcount, tt, win);
    NBR_ENTER();
    int rc = put_get("MPI_Put", 1, (void *)obuf, ocount, ot, rank, disp, tcount, tt, w);
    NBR_LEAVE();
    return rc;
}

NBR_API int MPI_Get(void *obuf, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp, int tcount,
                    MPI_Datatype tt, MPI_Win win)
{
    nbr_win_t *w = nbr_win_find(win);
    if (!w)
        return PMPI_Get(obuf, ocount, ot, rank, disp, tcount, tt, win);
    NBR_ENTER();
    int rc = put_get("MPI_Get", 0, obuf, ocount, ot, rank, disp, tcount, tt, w);
    NBR_LEAVE();
    return rc;
}

NBR_API int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp,
                           int tcount, MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
    NBR_SERVE(PMPI_Accumulate(obuf, ocount, ot, rank, disp, tcount, tt, op, win),
              accumulate(w, "MPI_Accumulate", obuf, ocount, ot, rank, disp, tcount, tt, op));
}

NBR_API int MPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype ot, void *rbuf,
                               int rcount, MPI_Datatype rt, int rank, MPI_Aint disp, int tcount,
                               MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
    NBR_SERVE(
        PMPI_Get_accumulate(obuf, ocount, ot, rbuf, rcount, rt, rank, disp, tcount, tt, op, win),
        get_accumulate(w, "MPI_Get_accumulate", obuf, ocount, ot, rbuf, rcount, rt, rank, disp,
                       tcount, tt, op));
}

NBR_API int MPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype type, int rank,
                             MPI_Aint disp, MPI_Op op, MPI_Win win)
{
    NBR_SERVE(PMPI_Fetch_and_op(obuf, rbuf, type, rank, disp, op, win),
              fetch_and_op(w, "MPI_Fetch_and_op", obuf, rbuf, type, rank, disp, op));
}

NBR_API int MPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype type,
                                 int rank, MPI_Aint disp, MPI_Win win)
{
    NBR_SERVE(PMPI_Compare_and_swap(obuf, cbuf, rbuf, type, rank, disp, win),
              compare_and_swap(w, "MPI_Compare_and_swap", obuf, cbuf, rbuf, type, rank, disp));
}

/* ---- request-based variants: complete inside the call in a ready epoch, at replay otherwise -- */

/* Run `call_expr` asking for a request; give the application the recorded call's request, or
 * one complete from birth. */
#define NBR_R_ENTRY(vendor_call, call_expr)                                                        \
    nbr_win_t *w = nbr_win_find(win);                                                              \
    if (!w)                                                                                        \
        return vendor_call;                                                                        \
    NBR_ENTER();                                                                                   \
    w->want_req = 1;                                                                               \
    w->got_req = NULL;                                                                             \
    w->op_req = NULL;                                                                              \
    int rc_ = call_expr;                                                                           \
    nbr_req_t *r_ = w->got_req;                                                                    \
    int issued_ = w->op_req != NULL; /* remote operations in flight finish it */                   \
    w->want_req = 0;                                                                               \
    w->got_req = NULL;                                                                             \
    w->op_req = NULL;                                                                              \
    if (issued_)                                                                                   \
        nbr_req_arm(r_);                                                                           \
    if (rc_ == MPI_SUCCESS)                                                                        \
        rc_ = r_ ? nbr_req_expose(r_, req) : nbr_req_done(req);                                    \
    else if (r_)                                                                                   \
        nbr_req_release(r_);                                                                       \
    NBR_LEAVE();                                                                                   \
    return rc_

NBR_API int MPI_Rput(const void *obuf, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp,
                     int tcount, MPI_Datatype tt, MPI_Win win, MPI_Request *req)
{
    NBR_R_ENTRY(PMPI_Rput(obuf, ocount, ot, rank, disp, tcount, tt, win, req),
                put_get("MPI_Rput", 1, (void *)obuf, ocount, ot, rank, disp, tcount, tt, w));
}

NBR_API int MPI_Rget(void *obuf, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp, int tcount,
                     MPI_Datatype tt, MPI_Win win, MPI_Request *req)
{
    NBR_R_ENTRY(PMPI_Rget(obuf, ocount, ot, rank, disp, tcount, tt, win, req),
                put_get("MPI_Rget", 0, obuf, ocount, ot, rank, disp, tcount, tt, w));
}

NBR_API int MPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp,
                            int tcount, MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    NBR_R_ENTRY(PMPI_Raccumulate(obuf, ocount, ot, rank, disp, tcount, tt, op, win, req),
                accumulate(w, "MPI_Raccumulate", obuf, ocount, ot, rank, disp, tcount, tt, op));
}

NBR_API int MPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype ot, void *rbuf,
                                int rcount, MPI_Datatype rt, int rank, MPI_Aint disp, int tcount,
                                MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    NBR_R_ENTRY(PMPI_Rget_accumulate(obuf, ocount, ot, rbuf, rcount, rt, rank, disp, tcount, tt, op,
                                     win, req),
                get_accumulate(w, "MPI_Rget_accumulate", obuf, ocount, ot, rbuf, rcount, rt, rank,
                               disp, tcount, tt, op));
}
