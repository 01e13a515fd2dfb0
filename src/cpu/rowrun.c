/*
** cpu/rowrun.c -- running the row form of a kernel (cpu/rowacc.c) for a
** reduction over outer axes: sum(x, axis=0) of a matrix in C order, where
** the segments (layout.c) are columns.  Start at rows_plan().
**
** The layout's kept axes come first and its reduced ones after (Layout);
** the row form applies where the innermost kept axis steps by one element
** in every input, so that the elements of a row of the reduced axes are
** contiguous across the columns.  Each segment's rows are cut into blocks
** of RR, fixed by the shape alone, and the columns into tiles.  A run goes
** in two passes over the pool:
**   1. each (tile, block) folds the block's rows, in memory's order, into
**      accumulators of its own, one per column;
**   2. each piece of a tile's columns combines its blocks' accumulators in
**      a fixed pairwise tree (reduce_tree's), finishes them into Partials,
**      and reduce_segments writes the results.
** Which thread folds a block, and how wide the tiles are, never changes an
** accumulator, so a result does not depend on the thread count.
*/
#include "cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a block: a column's accumulator takes them one after the other,
** so a float sum's error grows as RR + log2(blocks) roundings at most,
** where NumPy's sum over axis 0 adds all its rows in turn.  The blocks
** are also the work the threads share where the columns are few. */
#define RR 1024
/* A tile's accumulators, at most: the rows are read in runs of a tile's
** width, and longer runs read faster (measured: tiles of 16 KB, 2048
** columns of a float32 sum, 5 to 10% slower); loaded and stored once per
** ROWS_AT_ONCE rows, the accumulators need not stay in the first-level
** cache. */
#define TILE_BYTES (32 * 1024)
/* Tiles are not cut narrower than this many columns to give every thread
** a tile, and pass 2 takes pieces of this many columns. */
#define PIECE 256

bool rows_plan(const Layout *L, const Program *p, RowPlan *rp) {
  if (!L->axes || L->nseg < 2 || L->seg < 1) return false;
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_STORE) return false;
  /* The kept axes: those whose extents multiply to nseg. */
  int nk = -1;
  int64_t prod = 1;
  for (int d = 0; d < L->ndim && nk < 0; d++) {
    prod *= L->shape[d];
    if (prod == L->nseg) nk = d + 1;
    else if (prod > L->nseg) return false;
  }
  if (nk < 1 || L->shape[nk - 1] < ROWS_MIN_COLS) return false;
  for (int a = 0; a < L->narrays; a++) {
    const LayoutArray *x = &L->a[a];
    if (p->arrays[a].role == JITC_RESULT) continue;
    if (x->strides[nk - 1] != (int64_t)x->esize || (uintptr_t)x->base % x->esize) return false;
  }
  rp->nk = nk;
  rp->cols = L->shape[nk - 1];
  rp->outer = L->nseg / rp->cols;
#ifdef JITC_HAVE_LLVM
  rp->chunk = red_row_bytes(p, NULL);
  rp->direct = red_row_direct(p);
#else
  return false; /* no cpu target: nothing runs here */
#endif
  int64_t tile = (int64_t)(TILE_BYTES / (rp->chunk ? rp->chunk : 1)) * W;
  int64_t need = (rp->cols + W - 1) / W * W;
  rp->tile = tile < W ? W : tile > need ? need : tile;
  rp->ntiles = (rp->cols - 1) / rp->tile + 1;
  return true;
}

typedef struct RowJob {
  KernelFn fn;
  const Program *p;
  const Layout *L;
  const RowPlan *rp;
  const ParamSlot *params;
  int64_t bps;         /* blocks of RR per segment */
  int64_t per;         /* elements of a unit (the pool's scale) */
  int64_t pieces;      /* pass 2: pieces of PIECE columns per tile */
  unsigned char *acc;  /* block b of tile v: at + (v * bps + b) * tacc */
  size_t tacc;
  atomic_bool oom;
} RowJob;

/* The byte offset in array x of index i over axes [from, to) of L. */
static int64_t offset(const Layout *L, const LayoutArray *x, int from, int to, int64_t i) {
  int64_t off = 0;
  for (int d = to - 1; d >= from; d--) {
    off += i % L->shape[d] * x->strides[d];
    i /= L->shape[d];
  }
  return off;
}

/* A thread's parameter slots, the arrays' steps and row addresses: the
** program's parameters, then ROWS_SLOTS, then na steps and na pointers. */
static ParamSlot *slots_new(const RowJob *j, int64_t **steps, void ***arrays) {
  const Layout *L = j->L;
  const Program *p = j->p;
  int np = p->nparams, na = L->narrays;
  ParamSlot *ps = malloc(((size_t)np + ROWS_SLOTS) * sizeof *ps +
                         (size_t)na * (sizeof(int64_t) + sizeof(void *)));
  if (!ps) return NULL;
  if (np) memcpy(ps, j->params, (size_t)np * sizeof *ps);
  *steps = (int64_t *)(void *)(ps + np + ROWS_SLOTS);
  *arrays = (void **)(void *)(*steps + na);
  for (int a = 0; a < na; a++) {
    const LayoutArray *x = &L->a[a];
    (*steps)[a] = L->ndim > j->rp->nk && p->arrays[a].role != JITC_RESULT ? x->strides[L->ndim - 1] : 0;
    (*arrays)[a] = x->base;
  }
  return ps;
}

/* A thread's scratch for the passes: its slots, the arrays' steps and row
** addresses (slots_new); Partials for a piece's columns where it finishes
** them; one tile's accumulators where it folds and finishes a tile at once. */
typedef struct Scratch {
  ParamSlot *ps;
  int64_t *steps;
  void **arrays;
  Partial *part;
  unsigned char *acc;
} Scratch;

/* false, the job marked out of memory, where one is missing. */
static bool scratch_new(RowJob *j, Scratch *S, bool part, bool acc) {
  S->ps = slots_new(j, &S->steps, &S->arrays);
  S->part = part ? malloc((size_t)PIECE * (size_t)j->p->nreduce * sizeof(Partial)) : NULL;
  S->acc = acc ? malloc(j->tacc ? j->tacc : 1) : NULL;
  if (S->ps && (S->part || !part) && (S->acc || !acc)) return true;
  free(S->ps);
  free(S->part);
  free(S->acc);
  atomic_store(&j->oom, true);
  return false;
}

static void scratch_free(Scratch *S) {
  free(S->ps);
  free(S->part);
  free(S->acc);
}

/* Block b of tile v (of the columns of outer index o) of unit u: its rows
** folded run by run (a run: along the innermost reduced axis) into the
** accumulators at acc. */
static void fold_unit(const RowJob *j, const Scratch *S, int64_t u, unsigned char *acc) {
  const Layout *L = j->L;
  const Program *p = j->p;
  const RowPlan *rp = j->rp;
  ParamSlot *ps = S->ps, *rs = ps + p->nparams;
  void **arrays = S->arrays;
  int nk = rp->nk, last = L->ndim - 1;
  int64_t run = L->ndim > nk ? L->shape[last] : 1;
  int64_t v = u / j->bps, b = u % j->bps;
  int64_t o = v / rp->ntiles, c0 = v % rp->ntiles * rp->tile;
  int64_t tc = rp->cols - c0 < rp->tile ? rp->cols - c0 : rp->tile;
  int64_t rb = b * RR, len = L->seg - rb < RR ? L->seg - rb : RR;
  rs[0].bits = (uint64_t)(uintptr_t)acc;
  rs[1].i64 = ROWS_FOLD;
  rs[4].i64 = rb;
  rs[5].bits = (uint64_t)(uintptr_t)S->steps;
  for (int64_t r = rb; r < rb + len;) {
    int64_t m = run - r % run;
    if (m > rb + len - r) m = rb + len - r;
    for (int a = 0; a < L->narrays; a++) {
      const LayoutArray *x = &L->a[a];
      if (p->arrays[a].role == JITC_RESULT) continue;
      arrays[a] = x->base + offset(L, x, 0, nk - 1, o) + c0 * (int64_t)x->esize +
                  offset(L, x, nk, L->ndim, r);
    }
    rs[2].i64 = m;
    rs[3].i64 = r;
    j->fn(0, tc, arrays, ps);
    r += m;
  }
}

/* Pass 1, units [begin, end) of j->per elements: each unit's block folded
** into its accumulators of j->acc. */
static void fold_units(void *arg, int64_t begin, int64_t end) {
  RowJob *j = arg;
  Scratch S;
  if (!scratch_new(j, &S, false, false)) return;
  for (int64_t u = begin / j->per; u < end / j->per; u++)
    fold_unit(j, &S, u, j->acc + (size_t)u * j->tacc);
  scratch_free(&S);
}

/* Blocks [b0, b0 + n) of the columns [0, m) at acc (a piece of a tile)
** combined into block b0's, in reduce_tree's order. */
static void tree(const RowJob *j, ParamSlot *ps, void **arrays, unsigned char *acc, int64_t b0,
                 int64_t n, int64_t m) {
  if (n < 2) return;
  int64_t h = n / 2;
  tree(j, ps, arrays, acc, b0, h, m);
  tree(j, ps, arrays, acc, b0 + h, n - h, m);
  ParamSlot *rs = ps + j->p->nparams;
  rs[0].bits = (uint64_t)(uintptr_t)(acc + (size_t)b0 * j->tacc);
  rs[1].i64 = ROWS_COMBINE;
  rs[5].bits = (uint64_t)(uintptr_t)(acc + (size_t)(b0 + h) * j->tacc);
  j->fn(0, m, arrays, ps);
}

/* The results the row form writes itself: at most this many reductions. */
#define MAXRESULTS 16

/* Whether the results of segments [s, s + m) lie side by side in every
** result array, each aligned to its element (as reduce_segments writes
** them straight from finish_n), and where each starts (dst, in the
** program's order of its reductions). */
static bool results_at(const RowJob *j, int64_t s, int64_t m, void **dst) {
  const Program *p = j->p;
  const Layout *L = j->L;
  if (p->nreduce > MAXRESULTS) return false;
  int64_t run = L->kdim ? L->kshape[L->kdim - 1] : 1;
  for (int k = 0, r = 0; k < p->nstmts; k++) {
    const IrStmt *st = &p->stmts[k];
    if (st->kind != IR_REDUCE) continue;
    size_t es = jitc_dtype_size(p->arrays[st->slot].dtype);
    int64_t step = L->kdim ? L->a[st->slot].kstrides[L->kdim - 1] : 0;
    char *at = layout_result(L, st->slot, s);
    if ((step != (int64_t)es && m > 1) || s % run + m > run || (uintptr_t)at % es) return false;
    dst[r++] = at;
  }
  return true;
}

/* Piece k of tile v, unit u of pass 2: its blocks' accumulators (those of
** the tile at tacc, block by block) combined, finished (into the results,
** or into Partials then written). */
static void finish_piece(const RowJob *j, const Scratch *S, int64_t u, unsigned char *tacc) {
  const Program *p = j->p;
  const RowPlan *rp = j->rp;
  ParamSlot *ps = S->ps, *rs = ps + p->nparams;
  void **arrays = S->arrays;
  int64_t v = u / j->pieces, c = u % j->pieces * PIECE;
  int64_t o = v / rp->ntiles, c0 = v % rp->ntiles * rp->tile + c;
  int64_t m = rp->cols - c0 < PIECE ? rp->cols - c0 : PIECE;
  if (m <= 0) return; /* past the end of a run's last tile, a narrower one */
  if (m > rp->tile - c) m = rp->tile - c;
  unsigned char *acc = tacc + (size_t)(c / W) * rp->chunk;
  tree(j, ps, arrays, acc, 0, j->bps, m);
  rs[0].bits = (uint64_t)(uintptr_t)acc;
  void *dst[MAXRESULTS];
  if (rp->direct && results_at(j, o * rp->cols + c0, m, dst)) {
    rs[1].i64 = ROWS_RESULT; /* the kernel writes the results itself */
    rs[2].i64 = j->L->seg;
    rs[5].bits = (uint64_t)(uintptr_t)dst;
    j->fn(0, m, arrays, ps);
    return;
  }
  rs[1].i64 = ROWS_FINISH;
  rs[5].bits = (uint64_t)(uintptr_t)S->part;
  j->fn(0, m, arrays, ps);
  reduce_segments(p, j->L->seg, S->part, 1, j->L, o * rp->cols + c0, m);
}

/* Pass 2, units [begin, end) of j->per elements: piece k of tile v, its
** blocks combined, finished and written. */
static void finish_units(void *arg, int64_t begin, int64_t end) {
  RowJob *j = arg;
  Scratch S;
  if (!scratch_new(j, &S, true, false)) return;
  for (int64_t u = begin / j->per; u < end / j->per; u++)
    finish_piece(j, &S, u, j->acc + (size_t)(u / j->pieces) * (size_t)j->bps * j->tacc);
  scratch_free(&S);
}

/* Both passes at once where a segment is one block (its rows RR or fewer:
** sum(x, axis=0) of a wide and short matrix): each unit, a tile, folded
** into accumulators of the thread's own, then its pieces finished and
** written while those are in the cache, instead of all the tiles'
** accumulators going to memory and back between two passes. */
static void fold_finish_units(void *arg, int64_t begin, int64_t end) {
  RowJob *j = arg;
  Scratch S;
  if (!scratch_new(j, &S, true, true)) return;
  for (int64_t v = begin / j->per; v < end / j->per; v++) {
    fold_unit(j, &S, v, S.acc);
    for (int64_t k = 0; k < j->pieces; k++) finish_piece(j, &S, v * j->pieces + k, S.acc);
  }
  scratch_free(&S);
}

/* pool_run's count of units of `per` elements; per 1 where it overflows. */
static int64_t scale(int64_t units, int64_t *per) {
  int64_t total;
  if (__builtin_mul_overflow(units, *per, &total)) *per = 1;
  return units * *per;
}

jitc_status rows_run(jitc_context *ctx, Pool *pool, int threads, int most, KernelFn fn,
                     const Program *p, const Layout *L, const RowPlan *rp,
                     const ParamSlot *params, int *used) {
  RowPlan tp = *rp;
  RowJob j = {fn, p, L, &tp, params, (L->seg - 1) / RR + 1, 1, 1, NULL, 0, false};
  /* Narrower tiles where the blocks are fewer than the threads: the tiles'
  ** width changes no result. */
  while (tp.outer * tp.ntiles * j.bps < most && tp.tile >= 2 * PIECE) {
    tp.tile = (tp.tile / 2 + W - 1) / W * W;
    tp.ntiles = (tp.cols - 1) / tp.tile + 1;
  }
  int64_t tiles = tp.outer * tp.ntiles;
  j.tacc = (size_t)(tp.tile / W) * tp.chunk;
  j.pieces = (tp.tile - 1) / PIECE + 1;
  if (j.bps == 1) {
    j.per = tp.tile * (L->seg + 16);
    *used = pool_run(pool, threads, scale(tiles, &j.per), j.per, fold_finish_units, &j);
    return atomic_load(&j.oom) ? ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for "
                                           "the accumulators of a reduction over outer axes")
                               : JITC_OK;
  }
  /* Not cleared: a block's first row writes every accumulator (from the
  ** identity) before any is read, and pass 2 reads no others. */
  size_t bytes;
  if (__builtin_mul_overflow((size_t)tiles * (size_t)j.bps, j.tacc, &bytes) ||
      !(j.acc = malloc(bytes ? bytes : 1)))
    return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the accumulators of a "
                     "reduction over outer axes");
  /* The pool's scale: about the elements of a unit, so that it shares out
  ** work worth sharing only; a column's finish costs about as much as
  ** folding 16 of its elements (measured: pass 2 of a (4096, 4096) float32
  ** sum takes 0.015 ms on one thread, 0.03 to 0.07 on two, woken for it). */
  j.per = tp.tile * (L->seg < RR ? L->seg : RR);
  int u1 = pool_run(pool, threads, scale(tiles * j.bps, &j.per), j.per, fold_units, &j);
  j.per = PIECE * (j.bps + 16);
  int u2 = atomic_load(&j.oom) ? 0 : pool_run(pool, threads, scale(tiles * j.pieces, &j.per), j.per,
                                              finish_units, &j);
  *used = u1 > u2 ? u1 : u2;
  free(j.acc);
  return atomic_load(&j.oom) ? ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the "
                                         "accumulators of a reduction over outer axes") : JITC_OK;
}
