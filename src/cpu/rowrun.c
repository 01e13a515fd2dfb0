/*
** cpu/rowrun.c -- running the row form of a kernel (cpu/rowacc.c) for a
** reduction over outer axes: sum(x, axis=0) of a matrix in C order, where
** the segments (layout.c) are columns.  Start at rows_plan().
**
** The layout's kept axes come first and its reduced ones after (Layout);
** the row form applies where the innermost kept axis steps by one element
** in every input, so that the elements of a row of the reduced axes are
** contiguous across the columns.  The columns are cut into tiles whose
** lanes fit the first-level cache; a tile's rows are read in memory's
** order, each one folded into the lanes of all its columns, and at each
** block's end the lanes become the columns' Partials, which reduce_segments
** finishes as for any segments.  A tile (or, where there are few tiles, a
** tile's block of RB rows) is one thread's unit of work, and every column's
** Partials are the same whatever thread computes them, so the thread count
** never changes a result.
*/
#include "cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The lane sets of a tile's columns: within the first-level cache, with
** the rows streaming through. */
#define TILE_BYTES (16 * 1024)

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
  int64_t bps;      /* blocks of RB per segment */
  int64_t per;      /* elements of a unit (the pool's scale) */
  bool spread;      /* units of a tile's block each, finished after */
  Partial *part;    /* spread: every segment's Partials */
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

/* Tile t of the columns of outer index o, block b of its rows: the rows
** folded run by run (a run: along the innermost reduced axis), then the
** block's Partials into part (column j's of reduction r at j * nreduce +
** r), from tpart. */
static void run_block(const RowJob *j, ParamSlot *ps, void **arrays, int64_t o, int64_t c0,
                      int64_t tc, int64_t b, Partial *tpart) {
  const Layout *L = j->L;
  const Program *p = j->p;
  int nk = j->rp->nk, np = p->nparams, last = L->ndim - 1;
  int64_t rb = b * RB, len = L->seg - rb < RB ? L->seg - rb : RB;
  int64_t run = L->ndim > nk ? L->shape[last] : 1;
  for (int64_t r = rb; r < rb + len;) {
    int64_t m = run - r % run;
    if (m > rb + len - r) m = rb + len - r;
    for (int a = 0; a < L->narrays; a++) {
      const LayoutArray *x = &L->a[a];
      if (p->arrays[a].role == JITC_RESULT) continue;
      arrays[a] = x->base + offset(L, x, 0, nk - 1, o) + c0 * (int64_t)x->esize +
                  offset(L, x, nk, L->ndim, r);
    }
    ps[np + 1].i64 = m;
    ps[np + 2].i64 = r - rb;
    ps[np + 4].bits = 0;
    j->fn(0, tc, arrays, ps);
    r += m;
  }
  ps[np + 2].i64 = len;
  ps[np + 4].bits = (uint64_t)(uintptr_t)tpart;
  ps[np + 5].i64 = rb;
  j->fn(0, tc, arrays, ps);
}

/* Units [begin, end) of j->per elements: the pool's callback. */
static void run_units(void *arg, int64_t begin, int64_t end) {
  RowJob *j = arg;
  const Layout *L = j->L;
  const Program *p = j->p;
  const RowPlan *rp = j->rp;
  int np = p->nparams, nr = p->nreduce, na = L->narrays;
  size_t acc = (size_t)(rp->tile / W) * rp->chunk;
  size_t head = ((size_t)np + 6) * sizeof(ParamSlot) + (size_t)na * (sizeof(int64_t) + sizeof(void *));
  size_t tparts = (size_t)rp->tile * (size_t)nr * sizeof(Partial);
  size_t mine = j->spread ? 0 : tparts * (size_t)j->bps; /* the tile's segments' Partials */
  head = (head + 63) / 64 * 64;
  unsigned char *mem = aligned_alloc(64, (head + acc + tparts + mine + 63) / 64 * 64);
  if (!mem) {
    atomic_store(&j->oom, true);
    return;
  }
  /* The lane sets are read at a lane set's first row only after it is
  ** written; cleared all the same, so that no byte is ever undefined. */
  memset(mem + head, 0, acc);
  ParamSlot *ps = (ParamSlot *)(void *)mem;
  if (np) memcpy(ps, j->params, (size_t)np * sizeof *ps);
  int64_t *steps = (int64_t *)(void *)(ps + np + 6);
  void **arrays = (void **)(void *)(steps + na);
  for (int a = 0; a < na; a++) {
    const LayoutArray *x = &L->a[a];
    steps[a] = L->ndim > rp->nk && p->arrays[a].role != JITC_RESULT ? x->strides[L->ndim - 1] : 0;
    arrays[a] = x->base;
  }
  ps[np].bits = (uint64_t)(uintptr_t)(mem + head);
  ps[np + 3].bits = (uint64_t)(uintptr_t)steps;
  Partial *tpart = (Partial *)(void *)(mem + head + acc);
  Partial *own = (Partial *)(void *)(mem + head + acc + tparts);
  for (int64_t u = begin / j->per; u < end / j->per; u++) {
    int64_t b0 = 0, b1 = j->bps, v = u;
    if (j->spread) {
      b0 = u % j->bps;
      b1 = b0 + 1;
      v = u / j->bps;
    }
    int64_t o = v / rp->ntiles, c0 = v % rp->ntiles * rp->tile;
    int64_t tc = rp->cols - c0 < rp->tile ? rp->cols - c0 : rp->tile;
    int64_t s0 = o * rp->cols + c0; /* the tile's first segment */
    for (int64_t b = b0; b < b1; b++) {
      run_block(j, ps, arrays, o, c0, tc, b, tpart);
      Partial *to = j->spread ? j->part + s0 * nr * j->bps : own;
      for (int64_t c = 0; c < tc; c++)
        for (int r = 0; r < nr; r++) to[(c * nr + r) * j->bps + b] = tpart[c * nr + r];
    }
    if (!j->spread) reduce_segments(p, L->seg, own, j->bps, L, s0, tc);
  }
  free(mem);
}

jitc_status rows_run(jitc_context *ctx, Pool *pool, int threads, int most, KernelFn fn,
                     const Program *p, const Layout *L, const RowPlan *rp,
                     const ParamSlot *params, int *used) {
  RowJob j = {fn, p, L, rp, params, (L->seg - 1) / RB + 1, 1, false, NULL, false};
  int64_t tiles = rp->outer * rp->ntiles;
  j.spread = j.bps > 1 && tiles < 2 * (int64_t)most && most > 1;
  int64_t units = tiles * (j.spread ? j.bps : 1);
  /* The pool's scale: about the elements of a unit, so that it shares out
  ** work worth sharing only. */
  int64_t per = rp->tile * (j.spread ? RB : L->seg), total;
  j.per = __builtin_mul_overflow(units, per, &total) ? 1 : per;
  if (j.spread) {
    size_t n = (size_t)L->nseg * (size_t)p->nreduce * (size_t)j.bps;
    if (!(j.part = malloc(n * sizeof(Partial))))
      return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the partial reductions");
  }
  *used = pool_run(pool, threads, units * j.per, j.per, run_units, &j);
  if (j.spread && !atomic_load(&j.oom)) reduce_segments(p, L->seg, j.part, j.bps, L, 0, L->nseg);
  free(j.part);
  return atomic_load(&j.oom) ? ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the "
                                         "lanes of a reduction over outer axes") : JITC_OK;
}
