/*
** layout.h -- NumPy's iterator for a run: the broadcast shape, the axes
** coalesced, and blocks of elements moved between arrays of any strides and
** contiguous buffers (layout.c builds a Layout, move.c moves the blocks).
*/
#ifndef JITC_LAYOUT_H
#define JITC_LAYOUT_H

#include "jitc_int.h"

/* Where a run over arrays of any shape (jitc_run_arrays) finds element k of
** each array, k the position in C order in the broadcast shape: the shape
** with its extents of 1 dropped and the axes that step alike in every
** array merged (as NumPy's iterator coalesces), so that a contiguous
** program has one axis.  A target runs the same blocks of k as over a
** contiguous run; an array that is `direct` is used in place as then (its
** element k at base + k * esize, aligned), and the others are gathered
** into, or scattered from, a block of contiguous elements (or used in
** place for the block alone: layout_block). */
typedef struct LayoutArray {
  char *base;      /* element (0, ..., 0) */
  size_t esize;
  bool direct;
  bool written;    /* an output or in-place array: scattered after a block */
  bool read;       /* an input or in-place array: gathered before a block */
  int64_t *strides; /* ndim steps in bytes (Layout.mem) */
  int64_t run;      /* its elements are contiguous in runs of this many,
                       from element 0: a product of inner extents; 0 when
                       the last axis does not step by esize */
  int64_t zrun;     /* one element repeats in runs of this many (inner axes
                       of stride 0: a broadcast column, a 0-d array); 0 when
                       the last axis steps */
  int64_t *kstrides; /* with axes, a result's: kdim steps over the segments */
  bool kept;         /* such a result: addressed by segment alone (its strides
                        in the flat frame are not kept, nor coalesced over) */
} LayoutArray;

/* With reductions over axes (Program.by_axis), the reduced axes are taken
** innermost, after the kept ones, so that k runs segment after segment:
** segment s is elements [s * seg, (s + 1) * seg), the reduced axes' elements
** in C order, and its reductions give element s, in C order in the kept
** axes, of each result (layout_result). */
struct Layout {
  int ndim;          /* >= 1 */
  int64_t n;         /* elements */
  int64_t *shape;    /* ndim extents */
  int narrays;
  LayoutArray *a;    /* per kernel array; a JITC_RESULT array is direct */
  void **bases;      /* a[j].base for each j: the arrays of a contiguous run */
  bool transposed;   /* some array's last axis steps more than the one before
                        it: layout_gather moves whole rows of it in tiles, so
                        a target's blocks should hold a band of rows */
  bool bands;        /* layout_new's: the target moves bands of rows (Target.bands) */
  int vec;           /* the widest vectors, in bits, that a band's scatter may
                        use (tiles.c): the target's, for the level its
                        kernels run at; 0 as layout_new leaves it (SSE2) */
  bool axes;         /* segments (above): n == seg * nseg */
  int64_t seg, nseg;
  int kdim;          /* the kept axes, coalesced over the results */
  int64_t *kshape;
  void *mem;         /* what layout_free frees */
};

/* The broadcast shape of the inputs (jitc_broadcast_shape), with NumPy's
** error; with `outs`, the run's (NumPy's out=: widened to the outputs'),
** and with outs == 2 every written array checked to have it exactly. */
jitc_status layout_broadcast(jitc_context *ctx, const Program *p, const jitc_array *arrays,
                             int outs, int *ndim, int64_t *shape);
/* Builds *L for arrays (checked against the run's shape); *contig when
** every array is direct, so that jitc_run() over L->n elements is the run.
** `bands`: the target's (Target.bands). */
jitc_status layout_new(jitc_context *ctx, const Program *p, const jitc_array *arrays, bool bands,
                       Layout *L, bool *contig);
void layout_free(Layout *L);
/* Elements [lo, lo + m) of array j: whether they are one aligned
** contiguous run (block), all one element (const: inside one of its
** zero-stride runs) or every other element of one aligned row (every2),
** and if so *at is the address of element lo. */
bool layout_block(const Layout *L, int j, int64_t lo, int64_t m, char **at);
bool layout_const(const Layout *L, int j, int64_t lo, int64_t m, char **at);
bool layout_every2(const Layout *L, int j, int64_t lo, int64_t m, char **at);
/* Where a written array is scattered in tiles: the shift of a grid of
** blocks of bl elements (blocks [q bl - shift, (q + 1) bl - shift)) that
** starts each of its bands of rows on a 64-byte line, so that the lines are
** written whole; 0 where none is. */
int64_t layout_phase(const Layout *L, int64_t bl);
/* Copies elements [lo, lo + m) of array j to dst (contiguous), or from src. */
void layout_gather(const Layout *L, int j, int64_t lo, int64_t m, void *dst);
void layout_scatter(const Layout *L, int j, int64_t lo, int64_t m, const void *src);
/* tiles.c: rows [0, rows) of buf, w elements each one after the other,
** written as the columns of a transposed run at mem (its rows s2 bytes
** apart, their elements contiguous), past the caches where `stream`, in
** vectors of up to vec bits; false where it does not apply (elements of
** other than 4 or 8 bytes, a host other than x86-64). */
bool tiles_scatter(char *mem, int64_t s2, const char *buf, int64_t rows, int64_t w, size_t size,
                   bool stream, int vec);
/* With L->axes: the address of result array j's element of segment s. */
char *layout_result(const Layout *L, int j, int64_t s);

/* |s| without overflow: any stride is valid on an axis of one element,
** INT64_MIN too. */
static inline uint64_t stride_mag(int64_t s) { return s < 0 ? 0 - (uint64_t)s : (uint64_t)s; }

#endif
