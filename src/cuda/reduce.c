/*
** cuda/reduce.c -- the reductions of the target `cuda` as CUDA C: what
** cuda/gen.c adds to a kernel when the program has IR_REDUCE statements.
**
** The same two steps as src/reduce.c, on the GPU.  Each thread folds its
** elements into a register accumulator, `jitc_part<A>` (the value in the
** accumulator type A of reduce_acc, and for argmin and argmax the index of
** the element it holds, -1 for none yet; min and max start from +-inf or
** the integer type's end instead, and need no index), with the element-wise
** statements of the same pass.  After its loop each block combines its
** threads' accumulators in a fixed tree (warp shuffles, then the warps'
** results through shared memory, all reductions in step) and writes one
** partial per reduction to device scratch.  jitc_finish, run by one block,
** combines the partials of every block of every launch in a fixed order
** (thread t takes partials t, t + 256, ... in turn, then the same block
** tree) and writes each result's one element, finished as reduce_finish
** does.  On one stream the last block of the last launch runs it, found
** with an integer counter (atomicInc, which wraps it back to 0); when the
** partials come from two streams (the host pipeline) or from no launch
** (n == 0), the kernel jitc_r does, and for a split program's kernels (a
** group's kernel holds the group's reductions alone) jitc_r0, jitc_r1, ...,
** CUDA_RCHUNK reductions each.
** The grid is a function of n and the device only, so the same inputs give
** the same bits on every run; no float is ever added atomically.
**
** A reduction over complex elements has the same functions, written by
** cuda/complex.c; its accumulator is loaded and shuffled part by part, and
** its min and max keep their element's index as argmin and argmax do (the
** first of equal elements, 0j and -0j, and the first NaN are NumPy's).
** Per reduction K (named by its result array's slot) the generated C has:
** jitc_pK (its partial type), jitc_idK() (the partial of no elements),
** jitc_stepK(acc, x, i) (one element), jitc_cK (combine, a functor for
** the shuffles) and jitc_finK(acc, n) (the result).  Pure, like the rest
** of generation.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* The reductions the text at hand is about: their result arrays' slots in
** increasing order, the order of their parameters in every kernel. */
typedef struct Sel {
  int *k, n;
} Sel;

/* The reductions of statements [from, to); n is -1 when out of memory
** (b->oom set). */
static Sel sel_range(Buf *b, const Program *p, int from, int to) {
  Sel S = {malloc(sizeof(int) * ((size_t)(to - from) + 1)), 0};
  if (!S.k) {
    b->oom = true;
    S.n = -1;
    return S;
  }
  for (int s = from; s < to; s++)
    if (p->stmts[s].kind == IR_REDUCE)
      S.k[S.n++] = p->stmts[s].slot;
  qsort(S.k, (size_t)S.n, sizeof(int), by_value);
  return S;
}

/* Whether b comes before a: for min and argmin the smaller, for max and
** argmax the larger, a NaN before everything (the first NaN wins). */
static void emit_before(Buf *b, int k, const char *T, bool fl, bool less) {
  buf_printf(b, DEV "bool jitc_bef%d(const %s b, const %s a) { ", k, T, T);
  if (fl) /* a NaN: never; else b NaN, or b < a (b > a): !(b >= a) (!(b <= a)) */
    buf_printf(b, "return a == a && !(b %s a); }\n", less ? ">=" : "<=");
  else
    buf_printf(b, "return b %c a; }\n", less ? '<' : '>');
}

/* The identity of min (less) or max over accumulator type t: +-inf for
** floats, the integer type's greatest or least value (types.h), true or
** false. */
static void extreme_identity(char *out, size_t len, jitc_dtype t, bool less) {
  if (t == JITC_FLOAT32) {
    snprintf(out, len, "%s", less ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)");
  } else if (t == JITC_FLOAT64) {
    snprintf(out, len, "%s", less ? "__longlong_as_double(0x7ff0000000000000ll)"
                                  : "__longlong_as_double(0xfff0000000000000ull)");
  } else {
    Node c = {.kind = N_CONST, .type = t};
    c.k.i = less ? (int64_t)type_info[t].hi : type_info[t].lo;
    cuda_literal(out, len, &c);
  }
}

/* The accumulator's type: reduce_acc's, but float32 for float16 and
** bfloat16, whose values are held as bits: their sums, products and
** comparisons are done in float32 (or wider) and rounded once at the end. */
static jitc_dtype acc_type(OpId op, jitc_dtype in) {
  jitc_dtype acc = reduce_acc(op, in);
  return cuda_is_half(acc) ? JITC_FLOAT32 : acc;
}

/* The functions of the reduction of statement st (see the head). */
static void emit_one(Buf *b, const Program *p, const IrStmt *st) {
  if (dtype_is_complex(st->value->type)) {
    cuda_complex_reduce(b, p, st);
    return;
  }
  int k = st->slot;
  OpId op = st->op;
  jitc_dtype in = st->value->type, acc = acc_type(op, in), res = reduce_result(op, in);
  const char *A = cuda_ctype(acc), *I = cuda_ctype(in), *R = cuda_ctype(res);
  const char *U = cuda_utype(acc);
  bool fl = dtype_is_float(acc), arg = op == OP_ARGMIN || op == OP_ARGMAX;
  bool ext = arg || op == OP_MIN || op == OP_MAX, less = op == OP_MIN || op == OP_ARGMIN;
  buf_printf(b, "\n// %s = %s() of %s elements, accumulated in %s.\n", p->arrays[k].name,
             op_info[op].name, jitc_dtype_name(in), jitc_dtype_name(acc));
  cuda_part_type(b, k, A);
  /* min and max start from the value every element replaces or equals
  ** (+inf for a float min; a NaN replaces it too), so that they need no
  ** index: an element's index is kept for argmin and argmax alone. */
  char id[64];
  snprintf(id, sizeof id, "%s", op == OP_PROD || op == OP_ALL ? "1" : "0");
  if (ext && !arg)
    extreme_identity(id, sizeof id, acc, less);
  buf_printf(b, DEV "jitc_p%d jitc_id%d() { jitc_p%d a; a.v = (%s)%s; a.idx = %d; return a; }\n",
             k, k, k, A, id, ext && !arg ? 0 : -1);
  /* An element of a 16-bit float type is widened to float32 first (by the
  ** hardware: a NaN stays a NaN, and which NaN a tree of them keeps is no
  ** element's in particular anyway). */
  const char *bname = "b";
  char widen[96] = "";
  if (cuda_is_half(in)) {
    bname = "x";
    snprintf(widen, sizeof widen, "  const f32 b = jitc_up_%s(x);\n", I);
  }
  /* The accumulation, on a.v and b (an element or another partial's v). */
  char f[160];
  switch (op) {
  case OP_SUM:
  case OP_MEAN:
    if (fl)
      snprintf(f, sizeof f, "a.v + (%s)b", A);
    else /* wraps, as NumPy */
      snprintf(f, sizeof f, "(%s)((%s)a.v + (%s)b)", A, U, U);
    break;
  case OP_PROD:
    if (fl)
      snprintf(f, sizeof f, "a.v * (%s)b", A);
    else
      snprintf(f, sizeof f, "(%s)((%s)a.v * (%s)b)", A, U, U);
    break;
  case OP_ANY: snprintf(f, sizeof f, "(b8)(a.v | b)"); break;
  case OP_ALL: snprintf(f, sizeof f, "(b8)(a.v & b)"); break;
  default: f[0] = 0; break;
  }
  if (ext && !arg) {
    emit_before(b, k, A, fl, less);
    buf_printf(b, DEV "void jitc_step%d(jitc_p%d &a, const %s %s, const i64 i) {\n%s"
                  "  (void)i; if (jitc_bef%d(b, a.v)) a.v = b;\n}\n", k, k, I, bname, widen, k);
    buf_printf(b, "struct jitc_c%d {\n  " DEV "jitc_p%d operator()(const jitc_p%d a, const jitc_p%d b) const {\n"
                  "    return jitc_bef%d(b.v, a.v) ? b : a;\n  }\n};\n", k, k, k, k, k);
  } else if (ext) {
    emit_before(b, k, A, fl, less);
    /* One thread's elements come in increasing index: ties keep a. */
    buf_printf(b, DEV "void jitc_step%d(jitc_p%d &a, const %s %s, const i64 i) {\n%s"
                  "  if (a.idx < 0 || jitc_bef%d(b, a.v)) { a.v = b; a.idx = i; }\n}\n",
               k, k, I, bname, widen, k);
    buf_printf(b, "struct jitc_c%d {\n  " DEV "jitc_p%d operator()(const jitc_p%d a, const jitc_p%d b) const {\n"
                  "    if (a.idx < 0) return b;\n    if (b.idx < 0) return a;\n"
                  "    if (jitc_bef%d(b.v, a.v)) return b;\n", k, k, k, k, k);
    if (fl)
      buf_puts(b, "    if ((a.v == b.v || (a.v != a.v && b.v != b.v)) && b.idx < a.idx) return b;\n");
    else
      buf_puts(b, "    if (a.v == b.v && b.idx < a.idx) return b;\n");
    buf_puts(b, "    return a;\n  }\n};\n");
  } else {
    if (*widen)
      buf_printf(b, DEV "void jitc_step%d(jitc_p%d &a, const %s %s, const i64 i) {\n%s"
                    "  (void)i; a.v = %s;\n}\n", k, k, I, bname, widen, f);
    else
      buf_printf(b, DEV "void jitc_step%d(jitc_p%d &a, const %s b, const i64 i) { (void)i; a.v = %s; }\n",
                 k, k, I, f);
    /* f with b read as the other partial's value. */
    buf_printf(b, "struct jitc_c%d {\n  " DEV "jitc_p%d operator()(jitc_p%d a, const jitc_p%d p) const {\n"
                  "    const %s b = p.v; a.v = %s; return a;\n  }\n};\n", k, k, k, k, A, f);
  }
  buf_printf(b, DEV "%s jitc_fin%d(const jitc_p%d a, const i64 n) { (void)n; ", R, k, k);
  if (arg)
    buf_puts(b, "return a.idx; }\n");
  else if (op == OP_MEAN && res == JITC_BFLOAT16) /* through float32, as the cast */
    buf_puts(b, "return jitc_narrow_bf16((f32)(n > 0 ? a.v / (f64)n : "
                "__longlong_as_double(0x7ff8000000000000ll))); }\n");
  else if (op == OP_MEAN && cuda_is_half(res)) /* rounded once, from the float64 quotient */
    buf_printf(b, "return jitc_narrow64_%s(n > 0 ? a.v / (f64)n : __longlong_as_double(0x7ff8000000000000ll)); }\n",
               R);
  else if (op == OP_MEAN)
    buf_printf(b, "return n > 0 ? (%s)(a.v / (f64)n) : (%s)__longlong_as_double(0x7ff8000000000000ll); }\n",
               R, R);
  else if (res == JITC_BFLOAT16 && acc == JITC_FLOAT64) /* through float32, as the cast */
    buf_puts(b, "return jitc_narrow_bf16((f32)a.v); }\n");
  else if (cuda_is_half(res))
    buf_printf(b, acc == JITC_FLOAT64 ? "return jitc_narrow64_%s(a.v); }\n" : "return jitc_down_%s(a.v); }\n", R);
  else if (res == JITC_BOOL)
    buf_puts(b, "return (b8)(a.v != 0); }\n");
  else
    buf_printf(b, "return (%s)a.v; }\n", R);
}

/* fmt once per selected reduction, given its slot three times (a format
** may use fewer). */
static void put_sel(Buf *b, Sel S, const char *fmt) {
  for (int j = 0; j < S.n; j++)
    buf_printf(b, fmt, S.k[j], S.k[j], S.k[j]);
}

static void put_result_params(Buf *b, const Program *p, Sel S) {
  for (int j = 0; j < S.n; j++)
    buf_printf(b, ", %s *__restrict__ a%d", cuda_ctype(p->arrays[S.k[j]].dtype), S.k[j]);
}

static void put_blocks(Buf *b, Sel S, const char *write);

/* Whether the reduction whose result is array k is over complex elements
** (its accumulator is complex but for argmin and argmax's index). */
static bool complex_red(const Program *p, int k) {
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE && p->stmts[s].slot == k)
      return dtype_is_complex(p->stmts[s].value->type);
  return false;
}

/* Partials a thread of jitc_finish loads before it combines them. */
enum { R_UNROLL = 4 };

/* jitc_finish<name>, run by one whole block: the np partials of every
** block of every launch combined in a fixed order (thread t: partials t,
** t + 256, ..., the loads of several going out first; read from L2, as
** other blocks wrote them), then the block tree, then the results of n
** elements; for the selected reductions. */
static void emit_finish(Buf *b, const Program *p, Sel S, const char *name) {
  buf_printf(b, "\n// The results from the np partials of all blocks, by one whole block.\n"
                DEV "void jitc_finish%s(const u32 np, const i64 n", name);
  put_sel(b, S, ", const jitc_p%d *__restrict__ q%d");
  put_result_params(b, p, S);
  buf_puts(b, ") {\n");
  put_sel(b, S, "  jitc_p%d x%d = jitc_id%d();\n");
  buf_printf(b, "  for (u32 j = threadIdx.x; j < np; j += %d) {\n", CUDA_BLOCK * R_UNROLL);
  for (int j = 0; j < S.n; j++)
    buf_printf(b, "    jitc_p%d y%d[%d];\n", S.k[j], S.k[j], R_UNROLL);
  buf_printf(b, "#pragma unroll\n    for (int u = 0; u < %d; u++)\n      if (j + u * %d < np) {\n",
             R_UNROLL, CUDA_BLOCK);
  for (int j = 0; j < S.n; j++) {
    int k = S.k[j];
    if (complex_red(p, k)) /* no __ldcg of a struct: part by part */
      buf_printf(b, "        y%d[u].v.re = __ldcg(&jitc_at(q%d, j + u * %d).v.re);\n"
                    "        y%d[u].v.im = __ldcg(&jitc_at(q%d, j + u * %d).v.im);\n",
                 k, k, CUDA_BLOCK, k, k, CUDA_BLOCK);
    else
      buf_printf(b, "        y%d[u].v = __ldcg(&jitc_at(q%d, j + u * %d).v);\n", k, k, CUDA_BLOCK);
    buf_printf(b, "        y%d[u].idx = __ldcg(&jitc_at(q%d, j + u * %d).idx);\n", k, k, CUDA_BLOCK);
  }
  buf_printf(b, "      }\n#pragma unroll\n    for (int u = 0; u < %d; u++)\n      if (j + u * %d < np) {\n",
             R_UNROLL, CUDA_BLOCK);
  for (int j = 0; j < S.n; j++)
    buf_printf(b, "        x%d = jitc_c%d()(x%d, y%d[u]);\n", S.k[j], S.k[j], S.k[j], S.k[j]);
  buf_puts(b, "      }\n  }\n");
  put_blocks(b, S, "        a%d[0] = jitc_fin%d(x%d, n);\n");
  buf_puts(b, "}\n");
}

void cuda_reduce_use(bool used[H_NHELPERS][JITC_NDTYPES], const Program *p) {
  for (int s = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE)
      continue;
    jitc_dtype in = st->value->type, res = reduce_result(st->op, in);
    if (dtype_is_complex(in)) { /* the accumulator's arithmetic, the element's comparisons */
      cuda_complex_use(used, H_CARITH, reduce_acc(st->op, in));
      cuda_complex_use(used, H_CARITH, in);
      cuda_complex_use(used, H_CARITH, res == JITC_INT64 ? in : res);
    }
    if (cuda_is_half(in))
      cuda_helper_use(used, H_HALFHW, in);
    /* jitc_fin's rounding: bfloat16 from float64 through float32 (H_HALF) */
    bool from64 = st->op == OP_MEAN || acc_type(st->op, in) == JITC_FLOAT64;
    if (cuda_is_half(res))
      cuda_helper_use(used, !from64 ? H_HALFHW : res == JITC_BFLOAT16 ? H_HALF : H_HALF64, res);
  }
}

/* Whether a reduction of p is over complex elements. */
static bool any_complex(const Program *p) {
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE && dtype_is_complex(p->stmts[s].value->type))
      return true;
  return false;
}

/* Every reduction of p, in slot order. */
static Sel sel_all(Buf *b, const Program *p) {
  return sel_range(b, p, 0, p->nstmts);
}

void cuda_reduce_text(Buf *b, const Program *p, bool split) {
  if (!p->nreduce)
    return;
  buf_printf(b, "\n// Reductions: a partial is an accumulator and, for min, max, argmin and\n"
                "// argmax, the index of the element it holds (-1: none yet).  A block's\n"
                "// partial of a whole reduction is at jitc_at(q, block): %d bytes apart\n"
                "// whatever the type, so that a launch after the first can place its own.\n"
                "template <typename T> struct jitc_part { T v; i64 idx; };\n"
                "template <typename P> " DEV "P &jitc_at(P *q, const i64 k) { return *(P *)((char *)q + k * %d); }\n"
                "template <typename P> " DEV "const P &jitc_at(const P *q, const i64 k) {\n"
                "  return *(const P *)((const char *)q + k * %d);\n}\n"
                DEV "b8 jitc_shfl(const b8 v, const int o) { return (b8)__shfl_down_sync(0xffffffffu, (int)v, o); }\n"
                "template <typename T> " DEV "T jitc_shfl(const T v, const int o) { return __shfl_down_sync(0xffffffffu, v, o); }\n"
                "template <typename T, typename C> " DEV "jitc_part<T> jitc_down(jitc_part<T> a, const C c, const int o) {\n"
                "  jitc_part<T> b;\n  b.v = jitc_shfl(a.v, o);\n  b.idx = __shfl_down_sync(0xffffffffu, a.idx, o);\n"
                "  return c(a, b);\n}\n"
                , (int)CUDA_PART, (int)CUDA_PART, (int)CUDA_PART);
  if (any_complex(p)) /* no shuffle of a struct: part by part */
    for (int t = JITC_COMPLEX64; t <= JITC_COMPLEX128; t++)
      buf_printf(b, DEV "%s jitc_shfl(const %s v, const int o) {\n  %s r;\n"
                    "  r.re = __shfl_down_sync(0xffffffffu, v.re, o);\n"
                    "  r.im = __shfl_down_sync(0xffffffffu, v.im, o);\n  return r;\n}\n",
                 cuda_ctype(t), cuda_ctype(t), cuda_ctype(t));
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE)
      emit_one(b, p, &p->stmts[s]);
  if (split)
    return;
  Sel S = sel_all(b, p);
  emit_finish(b, p, S, "");
  free(S.k);
}

void cuda_reduce_params(Buf *b, const Program *p, int from, int to) {
  Sel S = sel_range(b, p, from, to);
  put_sel(b, S, ", jitc_p%d *__restrict__ q%d");
  free(S.k);
}

void cuda_reduce_init(Buf *b, const Program *p, int from, int to) {
  Sel S = sel_range(b, p, from, to);
  put_sel(b, S, "  jitc_p%d x%d = jitc_id%d();\n");
  free(S.k);
}

void cuda_block_tree(Buf *b, CudaEach each, const void *of) {
  char sh[64];
  snprintf(sh, sizeof sh, "    __shared__ jitc_p%%d sh%%d[%d];\n", CUDA_BLOCK / 32);
  each(b, of, sh);
  buf_puts(b, "#pragma unroll\n    for (int o = 16; o > 0; o >>= 1) {\n");
  each(b, of, "      x%d = jitc_down(x%d, jitc_c%d(), o);\n");
  buf_puts(b, "    }\n    if ((threadIdx.x & 31) == 0) {\n");
  each(b, of, "      sh%d[threadIdx.x >> 5] = x%d;\n");
  buf_puts(b, "    }\n    __syncthreads();\n    if (threadIdx.x < 32) {\n");
  snprintf(sh, sizeof sh, "      x%%d = sh%%d[threadIdx.x & %d];\n", CUDA_BLOCK / 32 - 1);
  each(b, of, sh);
  buf_printf(b, "#pragma unroll\n      for (int o = %d; o > 0; o >>= 1) {\n", CUDA_BLOCK / 64);
  each(b, of, "        x%d = jitc_down(x%d, jitc_c%d(), o);\n");
}

static void each_sel(Buf *b, const void *S, const char *fmt) { put_sel(b, *(const Sel *)S, fmt); }

/* The block's partial of each selected reduction in thread 0, all of them
** in step (cuda_block_tree); thread 0 then does `write` (a line given the
** slot three times, the partial in xK). */
static void put_blocks(Buf *b, Sel S, const char *write) {
  buf_puts(b, "  {\n");
  cuda_block_tree(b, each_sel, &S);
  buf_puts(b, "      }\n      if (threadIdx.x == 0) {\n");
  put_sel(b, S, write);
  buf_puts(b, "      }\n    }\n  }\n");
}

void cuda_reduce_tail(Buf *b, const Program *p, int from, int to) {
  Sel S = sel_range(b, p, from, to);
  put_blocks(b, S, "        jitc_at(q%d, blockIdx.x) = x%d;\n");
  free(S.k);
}

void cuda_reduce_final_params(Buf *b, const Program *p) {
  buf_puts(b, ", const u32 np, const i64 ntot, unsigned *__restrict__ cnt");
  Sel S = sel_all(b, p);
  put_result_params(b, p, S);
  free(S.k);
}

void cuda_reduce_last(Buf *b, const Program *p) {
  buf_puts(b, "  // The last launch of a run: the last block to finish writes the results.\n"
              "  // The counter wraps back to 0 for the next run.\n"
              "  if (np) {\n    __shared__ bool last;\n    if (threadIdx.x == 0) {\n"
              "      __threadfence();\n"
              "      last = atomicInc(cnt, gridDim.x - 1) == gridDim.x - 1;\n    }\n"
              "    __syncthreads();\n    if (last) {\n      __threadfence();\n"
              "      jitc_finish(np, ntot");
  Sel S = sel_all(b, p);
  put_sel(b, S, ", &jitc_at(q%d, -(i64)(np - gridDim.x))");
  put_sel(b, S, ", a%d");
  free(S.k);
  buf_puts(b, ");\n    }\n  }\n");
}

/* jitc_r<name>: the selected reductions' results (jitc_finish<name>) from
** all their partials. */
static void emit_rkernel(Buf *b, const Program *p, Sel S, const char *name) {
  buf_printf(b, "extern \"C\" __global__ void __launch_bounds__(256) jitc_r%s(const u32 np, const i64 n",
             name);
  put_sel(b, S, ", const jitc_p%d *__restrict__ q%d");
  put_result_params(b, p, S);
  buf_printf(b, ") {\n  jitc_finish%s(np, n", name);
  put_sel(b, S, ", q%d");
  put_sel(b, S, ", a%d");
  buf_puts(b, ");\n}\n");
}

int cuda_reduce_nkernels(const Program *p, bool split) {
  if (!p->nreduce)
    return 0;
  return split ? (p->nreduce + CUDA_RCHUNK - 1) / CUDA_RCHUNK : 1;
}

void cuda_reduce_kernel(Buf *b, const Program *p, bool split) {
  if (!p->nreduce)
    return;
  Sel S = sel_all(b, p);
  if (!split) {
    buf_puts(b, "\n// The results when the partials come from several streams or kernels.\n");
    emit_rkernel(b, p, S, "");
  }
  /* A split program's reductions are finished CUDA_RCHUNK at a time, each
  ** chunk by its own kernel: one function of them all would take NVRTC
  ** time quadratic in their number, and their pointers could pass the
  ** limit on a kernel's parameters. */
  for (int c = 0; split && c * CUDA_RCHUNK < S.n; c++) {
    Sel C = {S.k + c * CUDA_RCHUNK, S.n - c * CUDA_RCHUNK};
    if (C.n > CUDA_RCHUNK)
      C.n = CUDA_RCHUNK;
    char name[16];
    snprintf(name, sizeof name, "%d", c);
    emit_finish(b, p, C, name);
    buf_printf(b, "\n// The results of reductions %d to %d (in the order of their arrays).\n",
               c * CUDA_RCHUNK, c * CUDA_RCHUNK + C.n - 1);
    emit_rkernel(b, p, C, name);
  }
  free(S.k);
}
