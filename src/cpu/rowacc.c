/*
** cpu/rowacc.c -- generation of the row form of a kernel reducing over
** outer axes: sum(x, axis=0) of a matrix in C order, and any reduction
** whose reduced axes lie outside the kept ones in memory.  The kernel
** proper reduces a segment (a column) as one contiguous run, which such a
** layout would have to gather column by column; the row form instead walks
** the matrix in memory's order, a row at a time, and folds each row into
** the lanes of every column at once, a vector across the columns, as
** NumPy's loop for axis=0 does.  Pure, as cpu/gen.c, whose loop it reuses;
** cpu/rowrun.c runs it.
**
** The lanes are those the kernel keeps (cpu/reduce.c, "the row form"):
** for each column, the W lanes of each block of RB of its segment, lane k
** taking elements k, k + W, ... in order, then the same tree and the same
** Partials.  A result is therefore the same bits as the kernel gives for
** the column gathered into a contiguous run, on any thread count.
**
** The form is the kernel's signature, (begin, end, arrays, params), over
** the columns [begin, end) of a tile; after the program's parameter slots:
**   +0  the lane sets: chunk q of W columns at + q * red_row_bytes()
**   +1  nrows: the rows of this call
**   +2  the block offset of its first row (row - block start); or, when
**       finishing, the block's element count
**   +3  the address of each array's step from row to row, in bytes
**   +4  NULL to fold rows; else the Partials to finish into: column j's
**       of reduction r at + (j * nreduce + r) * sizeof(Partial)
**   +5  when finishing, the block's first element
** arrays[a] is array a's element (first row, column 0); column c of row r
** is at + r * step + c * size, the columns contiguous.
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <stdlib.h>

/* In the cache key of the row form (cpu/build.c): the build of this file. */
const char cpu_rowacc_stamp[] = "built " __DATE__ " " __TIME__;

/* The value of parameter slot nparams + k, of type t. */
static LLVMValueRef slot(Gen *G, LLVMValueRef pars, int k, LLVMTypeRef t, const char *name) {
  LLVMValueRef idx =
      LLVMConstInt(G->ti64, ((unsigned long long)G->prog->nparams + (unsigned)k) * sizeof(ParamSlot), 0);
  return LLVMBuildLoad2(G->B, t, LLVMBuildGEP2(G->B, G->ti8, pars, &idx, 1, ""), name);
}

/* A loop of i64 v from lo while v < hi, by step; the builder in its body.
** rows_close ends the body and leaves the builder after the loop. */
typedef struct Loop {
  LLVMBasicBlockRef pre, head, exit;
  LLVMValueRef v, lo;
  int64_t step;
} Loop;

static void rows_open(Gen *G, LLVMValueRef fn, Loop *L, LLVMValueRef lo, LLVMValueRef hi,
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

static void rows_close(Gen *G, Loop *L) {
  LLVMValueRef next = LLVMBuildAdd(G->B, L->v, LLVMConstInt(G->ti64, (unsigned long long)L->step, 0), "");
  LLVMBasicBlockRef last = LLVMGetInsertBlock(G->B);
  LLVMBuildBr(G->B, L->head);
  LLVMValueRef inc[2] = {L->lo, next};
  LLVMBasicBlockRef incb[2] = {L->pre, last};
  LLVMAddIncoming(L->v, inc, incb, 2);
  LLVMPositionBuilderAtEnd(G->B, L->exit);
}

/* Rows ahead of the one folded that are fetched into the cache: a tile's
** rows are short runs a whole row apart, which the hardware's prefetchers
** do not follow far enough (measured: docs/PERFORMANCE.md, "Reductions over
** an axis on the CPU"). */
#define ROWS_AHEAD 8

/* A prefetch of each cache line of the columns [begin, end) of array s's
** row r + ROWS_AHEAD.  (Past the array's end, a prefetch does nothing.) */
static void prefetch_row(Gen *G, LLVMValueRef fn, LLVMValueRef base, LLVMValueRef step,
                         LLVMValueRef r, LLVMValueRef begin, LLVMValueRef end, int s) {
  LLVMBuilderRef B = G->B;
  int64_t es = (int64_t)jitc_dtype_size(G->prog->arrays[s].dtype);
  LLVMValueRef ahead = LLVMBuildAdd(B, r, LLVMConstInt(G->ti64, ROWS_AHEAD, 0), "");
  ahead = LLVMBuildMul(B, ahead, step, "");
  LLVMValueRef row = LLVMBuildGEP2(B, G->ti8, base, &ahead, 1, "");
  Loop P;
  rows_open(G, fn, &P, begin, end, 64 / es > 0 ? 64 / es : 1, "ahead");
  LLVMValueRef o = LLVMBuildMul(B, P.v, LLVMConstInt(G->ti64, (unsigned long long)es, 0), "");
  LLVMValueRef at = LLVMBuildGEP2(B, G->ti8, row, &o, 1, "");
  LLVMTypeRef pt = G->tptr;
  /* read, high locality, data */
  LLVMValueRef args[4] = {at, LLVMConstInt(G->ti32, 0, 0), LLVMConstInt(G->ti32, 3, 0),
                          LLVMConstInt(G->ti32, 1, 0)};
  intrinsic(G, "llvm.prefetch", &pt, 1, args, 4);
  rows_close(G, &P);
}

int rows_gen(Gen *G, const char *fname) {
  const Program *p = G->prog;
  LLVMBuilderRef B = G->B;
  LLVMValueRef fn = new_fn(G, fname, -1);
  LLVMValueRef *base = malloc(sizeof(LLVMValueRef) * ((size_t)p->narrays + 1));
  LLVMValueRef *step = malloc(sizeof(LLVMValueRef) * ((size_t)p->narrays + 1));
  if (!fn || !base || !step) {
    free(base);
    free(step);
    return -1;
  }
  RowGen rg = {.chunk = (int64_t)red_row_bytes(p, G->racc)};
  LLVMValueRef begin = LLVMGetParam(fn, 0), end = LLVMGetParam(fn, 1);
  LLVMValueRef pars = LLVMGetParam(fn, 3);
  LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
  rg.acc = slot(G, pars, 0, G->tptr, "lanes");
  rg.c0 = begin;
  LLVMValueRef nrows = slot(G, pars, 1, G->ti64, "nrows");
  LLVMValueRef d0 = slot(G, pars, 2, G->ti64, "d0");
  LLVMValueRef steps = slot(G, pars, 3, G->tptr, "steps");
  LLVMValueRef part = slot(G, pars, 4, G->tptr, "partials");
  LLVMValueRef rb = slot(G, pars, 5, G->ti64, "rb");
  for (int s = 0; s < p->narrays; s++) {
    base[s] = load_array_ptr(G, LLVMGetParam(fn, 2), s);
    LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)s, 0);
    step[s] = LLVMBuildLoad2(B, G->ti64, LLVMBuildGEP2(B, G->ti64, steps, &idx, 1, ""), "");
  }
  load_params(G, pars, NULL, 0);
  LLVMBasicBlockRef fold = LLVMAppendBasicBlockInContext(G->C, fn, "fold");
  LLVMBasicBlockRef finish = LLVMAppendBasicBlockInContext(G->C, fn, "finish");
  LLVMBuildCondBr(B, LLVMBuildIsNull(B, part, ""), fold, finish);

  /* Each row: the arrays' row, its lane set, then the kernel's loop over
  ** the columns with the lanes in memory (cpu/reduce.c). */
  LLVMPositionBuilderAtEnd(B, fold);
  Loop R;
  rows_open(G, fn, &R, LLVMConstInt(G->ti64, 0, 0), nrows, 1, "row");
  for (int s = 0; s < p->narrays; s++) {
    LLVMValueRef off = LLVMBuildMul(B, R.v, step[s], "");
    G->arr[s] = LLVMBuildGEP2(B, G->ti8, base[s], &off, 1, "");
  }
  for (int s = 0; s < p->narrays; s++)
    if (p->arrays[s].role != JITC_RESULT) prefetch_row(G, fn, base[s], step[s], R.v, begin, end, s);
  LLVMValueRef d = LLVMBuildAdd(B, d0, R.v, "");
  rg.k = LLVMBuildAnd(B, d, LLVMConstInt(G->ti64, W - 1, 0), "");
  rg.off = LLVMBuildTrunc(B, LLVMBuildSub(B, d, rg.k, ""), G->ti32, "");
  rg.first = LLVMBuildICmp(B, LLVMIntSLT, d, LLVMConstInt(G->ti64, W, 0), "");
  G->row = &rg;
  gen_loop(G, fn, 0, p->nstmts, begin, end);
  rows_close(G, &R);
  LLVMBuildRetVoid(B);

  /* The Partials of the block, W columns at a time. */
  LLVMPositionBuilderAtEnd(B, finish);
  Loop Q;
  rows_open(G, fn, &Q, begin, end, W, "chunk");
  LLVMValueRef q = LLVMBuildSub(B, Q.v, begin, "");
  LLVMValueRef at = LLVMBuildMul(B, q, LLVMConstInt(G->ti64, (unsigned long long)(rg.chunk / W), 0), "");
  LLVMValueRef chunk = LLVMBuildGEP2(B, G->ti8, rg.acc, &at, 1, "");
  int64_t cstride = (int64_t)sizeof(Partial) * p->nreduce;
  for (int r = 0; r < p->nreduce; r++) {
    LLVMValueRef o = LLVMBuildMul(B, q, LLVMConstInt(G->ti64, (unsigned long long)cstride, 0), "");
    o = LLVMBuildAdd(B, o, LLVMConstInt(G->ti64, (unsigned long long)r * sizeof(Partial), 0), "");
    LLVMValueRef dst = LLVMBuildGEP2(B, G->ti8, part, &o, 1, "");
    red_row_finish(G, r, chunk, rb, d0, dst, cstride);
  }
  rows_close(G, &Q);
  LLVMBuildRetVoid(B);
  G->row = NULL;
  free(base);
  free(step);
  return 0;
}

#endif /* JITC_HAVE_LLVM */
