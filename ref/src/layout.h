/* layout.h — a typed buffer's layout in few words, so that a noncontiguous transfer can cross
 * nodes as one packed message that the target scatters itself (paper 004 §III-A: one
 * active message per transfer beats one operation per contiguous block once blocks are small).
 *
 * A datatype's flattening (dtype.h) lists every contiguous segment of one element; a transpose
 * of 1000 x 1000 ints has a million of them. Almost every real type is regular, though: its
 * segments form arithmetic progressions, and those progressions again. A *run* says so in six
 * numbers — `len` bytes at off + j*stride2 + i*stride for j < n2, i < n (j outer) — and the
 * layout of `count` elements is (extent, count, runs of one element). The transpose becomes one
 * run; a vector one; a struct one per field. The runs of a type are computed once, on first use,
 * and kept with its flattening. */
#ifndef NBR_LAYOUT_H
#define NBR_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

typedef struct {
    int64_t off, len, stride, n, stride2, n2;
} nbr_run_t;

typedef struct nbr_runs {
    int nrun;
    int64_t bytes; /* data bytes of one element (the sum of the runs) */
    nbr_run_t run[];
} nbr_runs_t;

/* The runs of one element of d: its segments (elem == 0) or its whole basic elements as C arrays
 * (elem == 1, what accumulate walks). NULL when out of memory. Thread-safe, computed once. */
const nbr_runs_t *nbr_runs_of(const nbr_dtype_t *d, int elem);
/* Free what nbr_runs_of cached on a derived type's flattening (its delete callback). */
void nbr_runs_release(nbr_dtype_t *d);

/* A layout on the wire: a header, then nrun runs, all little-endian int64 (processes of one job
 * share their byte order). */
typedef struct {
    int64_t extent, count;
    int32_t nrun, elem;
} nbr_lay_hdr_t;

static inline size_t nbr_lay_wire_size(int nrun)
{
    return sizeof(nbr_lay_hdr_t) + (size_t)nrun * sizeof(nbr_run_t);
}
/* Write the layout of `count` elements of d (runs r) at dst (nbr_lay_wire_size bytes). */
void nbr_lay_write(void *dst, const nbr_dtype_t *d, const nbr_runs_t *r, int64_t count, int elem);
/* Check a received layout of `size` bytes: sane header, runs within bounds, no overflow in any
 * offset it can produce; the data bytes it describes in *total and the bytes it spans in [*lo,
 * *hi). 0 when malformed. */
int nbr_lay_check(const void *wire, size_t size, int64_t *total, int64_t *lo, int64_t *hi);

/* A cursor over a layout: the pieces of the packed stream in order, as byte offsets from the
 * buffer's start, from any stream offset. */
typedef struct {
    const nbr_run_t *run;
    int nrun;
    int64_t extent, count, ebytes;
    int64_t e, j, i, in; /* element, run position, bytes already taken of the current block */
    int r;
} nbr_lay_cur_t;

void nbr_lay_cur_init(nbr_lay_cur_t *c, const nbr_run_t *run, int nrun, int64_t extent,
                      int64_t count, int64_t ebytes);
/* From a wire layout (already checked). */
void nbr_lay_cur_wire(nbr_lay_cur_t *c, const void *wire);
/* Move to stream offset `pos` (bytes from the stream's start). */
void nbr_lay_seek(nbr_lay_cur_t *c, int64_t pos);
/* The next piece of at most `max` bytes: 1 with its offset and length, 0 at the end. */
int nbr_lay_next(nbr_lay_cur_t *c, int64_t max, int64_t *off, int64_t *len);

/* Gather `len` stream bytes from position `pos` of buffer buf (laid out as cursor c) into out,
 * and scatter back. */
void nbr_lay_gather(nbr_lay_cur_t *c, const char *buf, int64_t pos, char *out, int64_t len);
void nbr_lay_scatter(nbr_lay_cur_t *c, char *buf, int64_t pos, const char *in, int64_t len);

#endif
