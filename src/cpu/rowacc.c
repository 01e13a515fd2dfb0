/*
** cpu/rowacc.c -- generation of the row form of a kernel reducing over
** outer axes: sum(x, axis=0) of a matrix in C order, and any reduction
** whose reduced axes lie outside the kept ones in memory.  The kernel
** proper reduces a segment (a column) as one contiguous run, which such a
** layout would have to gather column by column; the row form instead walks
** the matrix in memory's order and folds each row into an accumulator per
** column, a vector across the columns, as NumPy's loop for axis=0 does.
** Pure, as cpu/gen.c, whose loop body it reuses; cpu/rowrun.c runs it.
**
** A column's accumulator (cpu/reduce.c, "the row form") takes the rows of
** a block of its segment one after the other, in their order; the blocks,
** fixed by the shape, are then combined in a fixed tree (rowrun.c).  So a
** result does not depend on the thread count, nor on how the columns are
** cut into tiles.  It is not the bits of the column reduced as a
** contiguous run, whose float sums add in W lanes.
**
** The form is the kernel's signature, (begin, end, arrays, params), over
** the columns [begin, end) of a tile; after the program's parameter slots:
**   +0  the accumulators: chunk q of W columns at + q * red_row_bytes()
**   +1  what the call does: ROWS_FOLD, ROWS_COMBINE or ROWS_FINISH
**   +2  fold: the rows of this call
**   +3  fold: the index in the segment of its first row
**   +4  fold: the index of the first row of its block
**   +5  fold: the address of each array's step from row to row, in bytes;
**       combine: the accumulators of later rows, combined into +0's;
**       finish: the Partials, column j's of reduction r at
**       + (j * nreduce + r) * sizeof(Partial);
**       result: an array of each reduction's address of column 0's
**       result, the columns' results contiguous (red_row_direct; +2 the
**       elements of a column, a mean's n)
** arrays[a] is array a's element (first row, column 0); column c of row r
** is at + r * step + c * size, the columns contiguous.
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <stdlib.h>

/* In the cache key of the row form (cpu/build.c): the build of this file. */
const char cpu_rowacc_stamp[] = "built " __DATE__ " " __TIME__ " rows " STR(ROWS_AT_ONCE);

/* The value of parameter slot nparams + k, of type t. */
static LLVMValueRef slot(Gen *G, LLVMValueRef pars, int k, LLVMTypeRef t, const char *name) {
  LLVMValueRef idx =
      LLVMConstInt(G->ti64, ((unsigned long long)G->prog->nparams + (unsigned)k) * sizeof(ParamSlot), 0);
  return LLVMBuildLoad2(G->B, t, LLVMBuildGEP2(G->B, G->ti8, pars, &idx, 1, ""), name);
}

static LLVMValueRef i64c(Gen *G, int64_t v) { return LLVMConstInt(G->ti64, (unsigned long long)v, 1); }

/* A loop of i64 v from lo while v < hi, by step; the builder in its body.
** loop_close ends the body and leaves the builder after the loop, where v
** is the first value that failed the test. */
typedef struct Loop {
  LLVMBasicBlockRef pre, head, exit;
  LLVMValueRef v, lo;
  int64_t step;
} Loop;

static void loop_open(Gen *G, LLVMValueRef fn, Loop *L, LLVMValueRef lo, LLVMValueRef hi,
                      int64_t step, const char *name) {
  LLVMBuilderRef B = G->B;
  L->pre = LLVMGetInsertBlock(B);
  L->lo = lo;
  L->step = step;
  L->head = LLVMAppendBasicBlockInContext(G->C, fn, name);
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(G->C, fn, "");
  L->exit = LLVMAppendBasicBlockInContext(G->C, fn, "");
  LLVMBuildBr(B, L->head);
  LLVMPositionBuilderAtEnd(B, L->head);
  L->v = LLVMBuildPhi(B, G->ti64, name);
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, L->v, hi, ""), body, L->exit);
  LLVMPositionBuilderAtEnd(B, body);
}

static void loop_close(Gen *G, Loop *L) {
  LLVMValueRef next = LLVMBuildAdd(G->B, L->v, i64c(G, L->step), "");
  LLVMBasicBlockRef last = LLVMGetInsertBlock(G->B);
  LLVMBuildBr(G->B, L->head);
  LLVMValueRef inc[2] = {L->lo, next};
  LLVMBasicBlockRef incb[2] = {L->pre, last};
  LLVMAddIncoming(L->v, inc, incb, 2);
  LLVMPositionBuilderAtEnd(G->B, L->exit);
}

/* The arrays as a fold sees them: each one's first row and step, and the
** rows of the iteration (array s of row u at rows[u * narrays + s]). */
typedef struct Rows {
  LLVMValueRef *base, *step, *rows;
} Rows;

/* Each row of the loop over the columns folds the next ROWS_AT_ONCE rows:
** the row ROWS_AT_ONCE ahead is fetched into the second-level cache, for
** the next iteration of the loop over the rows (measured:
** docs/PERFORMANCE.md, "Reductions over an axis on the CPU").  The
** hardware's prefetchers follow that many streams a row apart too late. */
static void prefetch(Gen *G, const Rows *X, int u) {
  const Program *p = G->prog;
  for (int s = 0; s < p->narrays; s++) {
    if (p->arrays[s].role == JITC_RESULT) continue;
    int64_t es = (int64_t)jitc_dtype_size(p->arrays[s].dtype);
    LLVMValueRef o = LLVMBuildMul(G->B, X->step[s], i64c(G, ROWS_AT_ONCE), "");
    o = LLVMBuildAdd(G->B, o, LLVMBuildMul(G->B, G->i, i64c(G, es), ""), "");
    LLVMValueRef at = LLVMBuildGEP2(G->B, G->ti8, X->rows[u * p->narrays + s], &o, 1, "");
    LLVMTypeRef pt = G->tptr;
    /* read, locality 2 (the second-level cache), data */
    LLVMValueRef args[4] = {at, LLVMConstInt(G->ti32, 0, 0), LLVMConstInt(G->ti32, 2, 0),
                            LLVMConstInt(G->ti32, 1, 0)};
    intrinsic(G, "llvm.prefetch", &pt, 1, args, 4);
  }
}

/* The body for the W columns at G->i of the n rows at X->rows, row u's
** index idx[u]; `first`: row 0 is its block's first. */
static void fold(Gen *G, const Rows *X, int n, LLVMValueRef first, LLVMValueRef *idx) {
  int na = G->prog->narrays;
  for (int u = 0; u < n; u++) {
    prefetch(G, X, u);
    for (int s = 0; s < na; s++) G->arr[s] = X->rows[u * na + s];
    G->row->off = idx[u];
    G->row->first = first;
    G->row->load = u == 0;
    G->row->store = u == n - 1;
    gen_body(G, 0, G->prog->nstmts);
  }
}

/* The loop over the columns [begin, end) of the n rows from row r (index
** r0 in the segment; rb: its block's first row): full vectors, then the
** rest under a mask. */
static void columns(Gen *G, LLVMValueRef fn, LLVMValueRef begin, LLVMValueRef end, Rows *X,
                    int n, LLVMValueRef r, LLVMValueRef r0, LLVMValueRef rb) {
  LLVMBuilderRef B = G->B;
  int na = G->prog->narrays;
  LLVMValueRef idx[ROWS_AT_ONCE];
  for (int u = 0; u < n; u++) {
    LLVMValueRef ru = LLVMBuildAdd(B, r, i64c(G, u), "");
    for (int s = 0; s < na; s++) {
      LLVMValueRef o = LLVMBuildMul(B, ru, X->step[s], "");
      X->rows[u * na + s] = LLVMBuildGEP2(B, G->ti8, X->base[s], &o, 1, "");
    }
    idx[u] = LLVMBuildAdd(B, r0, ru, "");
  }
  LLVMValueRef first = LLVMBuildICmp(B, LLVMIntEQ, idx[0], rb, "first");
  Loop C;
  loop_open(G, fn, &C, begin, LLVMBuildSub(B, end, i64c(G, W - 1), ""), W, "col");
  G->i = C.v;
  G->mask = NULL;
  fold(G, X, n, first, idx);
  loop_close(G, &C);
  LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(G->C, fn, "tail");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, fn, "");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, C.v, end, ""), tail, done);
  LLVMPositionBuilderAtEnd(B, tail);
  LLVMValueRef iota[W];
  for (int k = 0; k < W; k++) iota[k] = i64c(G, k);
  G->mask = icmp(G, LLVMIntSLT, LLVMConstVector(iota, W), splat(G, LLVMBuildSub(B, end, C.v, "")));
  fold(G, X, n, first, idx);
  G->mask = NULL;
  LLVMBuildBr(B, done);
  LLVMPositionBuilderAtEnd(B, done);
}

/* A loop over the chunks of W columns of [begin, end): chunk at acc (and
** at other, if not NULL) for the body; q, the chunk's number. */
static void chunks_open(Gen *G, LLVMValueRef fn, Loop *Q, LLVMValueRef begin, LLVMValueRef end,
                        LLVMValueRef *acc, LLVMValueRef *other, LLVMValueRef *q) {
  loop_open(G, fn, Q, begin, end, W, "chunk");
  *q = LLVMBuildSub(G->B, Q->v, begin, "");
  LLVMValueRef at = LLVMBuildMul(G->B, *q, i64c(G, G->row->chunk / W), "");
  *acc = LLVMBuildGEP2(G->B, G->ti8, *acc, &at, 1, "");
  if (other) *other = LLVMBuildGEP2(G->B, G->ti8, *other, &at, 1, "");
}

int rows_gen(Gen *G, const char *fname) {
  const Program *p = G->prog;
  LLVMBuilderRef B = G->B;
  LLVMValueRef fn = new_fn(G, fname, -1);
  size_t na = (size_t)p->narrays + 1;
  Rows X = {malloc(sizeof(LLVMValueRef) * na), malloc(sizeof(LLVMValueRef) * na),
            malloc(sizeof(LLVMValueRef) * na * ROWS_AT_ONCE)};
  if (!fn || !X.base || !X.step || !X.rows) {
    free(X.base);
    free(X.step);
    free(X.rows);
    return -1;
  }
  RowGen rg = {.chunk = (int64_t)red_row_bytes(p, G->racc)};
  LLVMValueRef begin = LLVMGetParam(fn, 0), end = LLVMGetParam(fn, 1);
  LLVMValueRef pars = LLVMGetParam(fn, 3);
  LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
  rg.acc = slot(G, pars, 0, G->tptr, "acc");
  rg.c0 = begin;
  G->row = &rg;
  LLVMValueRef what = slot(G, pars, 1, G->ti64, "what");
  LLVMValueRef nrows = slot(G, pars, 2, G->ti64, "nrows");
  LLVMValueRef r0 = slot(G, pars, 3, G->ti64, "r0");
  LLVMValueRef rb = slot(G, pars, 4, G->ti64, "rb");
  LLVMValueRef other = slot(G, pars, 5, G->tptr, "other");
  LLVMBasicBlockRef folds = LLVMAppendBasicBlockInContext(G->C, fn, "fold");
  LLVMBasicBlockRef combine = LLVMAppendBasicBlockInContext(G->C, fn, "combine");
  LLVMBasicBlockRef finish = LLVMAppendBasicBlockInContext(G->C, fn, "finish");
  LLVMBasicBlockRef result = LLVMAppendBasicBlockInContext(G->C, fn, "result");
  LLVMValueRef sw = LLVMBuildSwitch(B, what, folds, 3);
  LLVMAddCase(sw, i64c(G, ROWS_COMBINE), combine);
  LLVMAddCase(sw, i64c(G, ROWS_FINISH), finish);
  LLVMAddCase(sw, i64c(G, ROWS_RESULT), result);

  /* The rows ROWS_AT_ONCE at a time, then the rest one by one. */
  LLVMPositionBuilderAtEnd(B, folds);
  for (int s = 0; s < p->narrays; s++) {
    X.base[s] = load_array_ptr(G, LLVMGetParam(fn, 2), s);
    LLVMValueRef at = i64c(G, s);
    X.step[s] = LLVMBuildLoad2(B, G->ti64, LLVMBuildGEP2(B, G->ti64, other, &at, 1, ""), "");
  }
  load_params(G, pars, NULL, 0);
  Loop R, R1;
  loop_open(G, fn, &R, i64c(G, 0), LLVMBuildSub(B, nrows, i64c(G, ROWS_AT_ONCE - 1), ""),
            ROWS_AT_ONCE, "rows");
  columns(G, fn, begin, end, &X, ROWS_AT_ONCE, R.v, r0, rb);
  loop_close(G, &R);
  loop_open(G, fn, &R1, R.v, nrows, 1, "row");
  columns(G, fn, begin, end, &X, 1, R1.v, r0, rb);
  loop_close(G, &R1);
  LLVMBuildRetVoid(B);

  /* Another block's accumulators into these. */
  LLVMPositionBuilderAtEnd(B, combine);
  Loop Q;
  LLVMValueRef a = rg.acc, b = other, q;
  chunks_open(G, fn, &Q, begin, end, &a, &b, &q);
  for (int r = 0; r < p->nreduce; r++) red_row_combine(G, r, a, b);
  loop_close(G, &Q);
  LLVMBuildRetVoid(B);

  /* The Partials, W columns at a time. */
  LLVMPositionBuilderAtEnd(B, finish);
  a = rg.acc;
  chunks_open(G, fn, &Q, begin, end, &a, NULL, &q);
  int64_t cstride = (int64_t)sizeof(Partial) * p->nreduce;
  for (int r = 0; r < p->nreduce; r++) {
    LLVMValueRef o = LLVMBuildMul(B, q, i64c(G, cstride), "");
    o = LLVMBuildAdd(B, o, i64c(G, r * (int64_t)sizeof(Partial)), "");
    red_row_finish(G, r, a, LLVMBuildGEP2(B, G->ti8, other, &o, 1, ""), cstride);
  }
  loop_close(G, &Q);
  LLVMBuildRetVoid(B);

  /* The results, W columns at a time, the last chunk's under a mask. */
  LLVMPositionBuilderAtEnd(B, result);
  if (red_row_direct(p)) {
    LLVMValueRef iota[W];
    for (int k = 0; k < W; k++) iota[k] = i64c(G, k);
    a = rg.acc;
    chunks_open(G, fn, &Q, begin, end, &a, NULL, &q);
    G->mask = icmp(G, LLVMIntSLT, LLVMConstVector(iota, W), splat(G, LLVMBuildSub(B, end, Q.v, "")));
    for (int r = 0; r < p->nreduce; r++) {
      LLVMValueRef at = i64c(G, r);
      LLVMValueRef d = LLVMBuildLoad2(B, G->tptr, LLVMBuildGEP2(B, G->tptr, other, &at, 1, ""), "");
      red_row_result(G, r, a, d, q, nrows);
    }
    G->mask = NULL;
    loop_close(G, &Q);
  }
  LLVMBuildRetVoid(B);
  G->row = NULL;
  free(X.base);
  free(X.step);
  free(X.rows);
  return 0;
}

#endif /* JITC_HAVE_LLVM */
