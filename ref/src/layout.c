/* layout.c — a typed buffer's layout as runs of arithmetic progressions (layout.h), its wire
 * form, and a cursor that walks the packed stream from any position. */
#include "layout.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t runs_mu = PTHREAD_MUTEX_INITIALIZER;

/* Level 1: consecutive segments of one length at a constant stride. Level 2: consecutive level-1
 * runs alike in (len, stride, n) whose offsets again progress by a constant. Greedy and linear:
 * a transpose's million segments become one run. */
static nbr_runs_t *compress(const nbr_seg_t *seg, int nseg)
{
    nbr_run_t *l1 = malloc((size_t)(nseg ? nseg : 1) * sizeof *l1);
    if (!l1)
        return NULL;
    int n1 = 0;
    int64_t bytes = 0;
    for (int i = 0; i < nseg;) {
        int64_t off = seg[i].off, len = seg[i].len, stride = 0, n = 1;
        if (i + 1 < nseg && seg[i + 1].len == len) {
            stride = seg[i + 1].off - off;
            while (i + n < nseg && seg[i + n].len == len && seg[i + n].off == off + n * stride)
                n++;
        }
        if (n == 1)
            stride = 0;
        l1[n1++] = (nbr_run_t){off, len, stride, n, 0, 1};
        bytes += len * n;
        i += (int)n;
    }
    int n2 = 0;
    for (int k = 0; k < n1;) {
        nbr_run_t a = l1[k];
        int64_t m = 1, delta = 0;
        if (k + 1 < n1 && l1[k + 1].len == a.len && l1[k + 1].stride == a.stride &&
            l1[k + 1].n == a.n) {
            delta = l1[k + 1].off - a.off;
            while (k + m < n1 && l1[k + m].len == a.len && l1[k + m].stride == a.stride &&
                   l1[k + m].n == a.n && l1[k + m].off == a.off + m * delta)
                m++;
        }
        a.stride2 = m > 1 ? delta : 0;
        a.n2 = m;
        l1[n2++] = a; /* n2 <= k: writes behind the reads */
        k += (int)m;
    }
    nbr_runs_t *r = malloc(sizeof *r + (size_t)n2 * sizeof(nbr_run_t));
    if (r) {
        r->nrun = n2;
        r->bytes = bytes;
        if (n2)
            memcpy(r->run, l1, (size_t)n2 * sizeof(nbr_run_t));
    }
    free(l1);
    return r;
}

const nbr_runs_t *nbr_runs_of(const nbr_dtype_t *d, int elem)
{
    nbr_runs_t *const *slot = &d->runs[elem ? 1 : 0];
    nbr_runs_t *r = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    pthread_mutex_lock(&runs_mu);
    if (!(r = __atomic_load_n(slot, __ATOMIC_ACQUIRE))) {
        r = elem ? compress(d->elem, d->nelem) : compress(d->seg, d->nseg);
        /* the flattening is shared and otherwise immutable: only this cache slot changes */
        if (r)
            __atomic_store_n((nbr_runs_t **)slot, r, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&runs_mu);
    return r;
}

void nbr_runs_release(nbr_dtype_t *d)
{
    free(d->runs[0]);
    free(d->runs[1]);
    d->runs[0] = d->runs[1] = NULL;
}

void nbr_lay_write(void *dst, const nbr_dtype_t *d, const nbr_runs_t *r, int64_t count, int elem)
{
    nbr_lay_hdr_t h = {.extent = d->extent, .count = count, .nrun = r->nrun, .elem = elem};
    memcpy(dst, &h, sizeof h);
    memcpy((char *)dst + sizeof h, r->run, (size_t)r->nrun * sizeof(nbr_run_t));
}

/* lo/hi of the bytes one run touches, relative to the element; 0 on overflow. */
static int run_span(const nbr_run_t *r, int64_t *lo, int64_t *hi)
{
    int64_t a, b, l, h;
    if (r->len <= 0 || r->n <= 0 || r->n2 <= 0 || __builtin_mul_overflow(r->n - 1, r->stride, &a) ||
        __builtin_mul_overflow(r->n2 - 1, r->stride2, &b))
        return 0;
    l = r->off;
    h = r->off;
    if (__builtin_add_overflow(l, a < 0 ? a : 0, &l) || __builtin_add_overflow(l, b < 0 ? b : 0, &l) ||
        __builtin_add_overflow(h, a > 0 ? a : 0, &h) || __builtin_add_overflow(h, b > 0 ? b : 0, &h) ||
        __builtin_add_overflow(h, r->len, &h))
        return 0;
    *lo = l, *hi = h;
    return 1;
}

int nbr_lay_check(const void *wire, size_t size, int64_t *total, int64_t *lo, int64_t *hi)
{
    nbr_lay_hdr_t h;
    if (size < sizeof h)
        return 0;
    memcpy(&h, wire, sizeof h);
    if (h.nrun <= 0 || h.count <= 0 || size < nbr_lay_wire_size(h.nrun))
        return 0;
    const nbr_run_t *run = (const nbr_run_t *)((const char *)wire + sizeof h);
    int64_t elo = INT64_MAX, ehi = INT64_MIN, eb = 0;
    for (int k = 0; k < h.nrun; k++) {
        nbr_run_t r;
        memcpy(&r, run + k, sizeof r);
        int64_t l, u, b;
        if (!run_span(&r, &l, &u) || __builtin_mul_overflow(r.len, r.n, &b) ||
            __builtin_mul_overflow(b, r.n2, &b) || __builtin_add_overflow(eb, b, &eb))
            return 0;
        elo = l < elo ? l : elo;
        ehi = u > ehi ? u : ehi;
    }
    int64_t span, t;
    if (__builtin_mul_overflow(h.count - 1, h.extent, &span) ||
        __builtin_mul_overflow(eb, h.count, &t) || __builtin_add_overflow(elo, span < 0 ? span : 0, &elo) ||
        __builtin_add_overflow(ehi, span > 0 ? span : 0, &ehi))
        return 0;
    *total = t, *lo = elo, *hi = ehi;
    return 1;
}

void nbr_lay_cur_init(nbr_lay_cur_t *c, const nbr_run_t *run, int nrun, int64_t extent,
                      int64_t count, int64_t ebytes)
{
    *c = (nbr_lay_cur_t){
        .run = run, .nrun = nrun, .extent = extent, .count = count, .ebytes = ebytes};
}

void nbr_lay_cur_wire(nbr_lay_cur_t *c, const void *wire)
{
    nbr_lay_hdr_t h;
    memcpy(&h, wire, sizeof h);
    const nbr_run_t *run = (const nbr_run_t *)((const char *)wire + sizeof h);
    int64_t eb = 0;
    for (int k = 0; k < h.nrun; k++)
        eb += run[k].len * run[k].n * run[k].n2;
    nbr_lay_cur_init(c, run, h.nrun, h.extent, h.count, eb);
}

void nbr_lay_seek(nbr_lay_cur_t *c, int64_t pos)
{
    c->e = c->j = c->i = c->in = 0;
    c->r = 0;
    if (c->ebytes <= 0 || c->nrun <= 0) {
        c->e = c->count;
        return;
    }
    c->e = pos / c->ebytes;
    int64_t rem = pos % c->ebytes;
    for (;;) {
        const nbr_run_t *r = &c->run[c->r];
        int64_t rb = r->len * r->n * r->n2;
        if (rem < rb) {
            int64_t blk = rem / r->len;
            c->j = blk / r->n;
            c->i = blk % r->n;
            c->in = rem % r->len;
            return;
        }
        rem -= rb;
        c->r++;
    }
}

int nbr_lay_next(nbr_lay_cur_t *c, int64_t max, int64_t *off, int64_t *len)
{
    if (c->e >= c->count || max <= 0)
        return 0;
    const nbr_run_t *r = &c->run[c->r];
    int64_t left = r->len - c->in, take = left < max ? left : max;
    *off = c->e * c->extent + r->off + c->j * r->stride2 + c->i * r->stride + c->in;
    *len = take;
    if ((c->in += take) == r->len) {
        c->in = 0;
        if (++c->i == r->n) {
            c->i = 0;
            if (++c->j == r->n2) {
                c->j = 0;
                if (++c->r == c->nrun) {
                    c->r = 0;
                    c->e++;
                }
            }
        }
    }
    return 1;
}

void nbr_lay_gather(nbr_lay_cur_t *c, const char *buf, int64_t pos, char *out, int64_t len)
{
    int64_t off, n;
    nbr_lay_seek(c, pos);
    while (len > 0 && nbr_lay_next(c, len, &off, &n)) {
        memcpy(out, buf + off, (size_t)n);
        out += n;
        len -= n;
    }
}

void nbr_lay_scatter(nbr_lay_cur_t *c, char *buf, int64_t pos, const char *in, int64_t len)
{
    int64_t off, n;
    nbr_lay_seek(c, pos);
    while (len > 0 && nbr_lay_next(c, len, &off, &n)) {
        memcpy(buf + off, in, (size_t)n);
        in += n;
        len -= n;
    }
}
