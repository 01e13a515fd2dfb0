/*
** cpu/reduce.c -- generation for the cpu target's reductions (IR_REDUCE):
** the running state each keeps in the kernel's loop and the Partial
** (src/reduce.c) it writes at the end of each block of RB elements.  Pure, as
** cpu/gen.c, whose loops call it (red_* in cpu/cpu.h).
**
** Each reduction keeps W lanes (RAcc): lane k folds the elements k, k + W,
** k + 2W, ... of the block of RB, in the order of their indices, so a
** block's lanes depend on the block alone (the thread count never changes
** it).  Lanes past the end of the elements see the identity.
** At the block's end the lanes are combined in a fixed tree, halves first
** (src/reduce.c's combine, vectorised), into one Partial.
**
** A complex accumulator's lanes are one vector of 2W parts (cpu/complex.c):
** sums add it whole, products multiply as complex values, and min, max,
** argmin and argmax keep offsets as the floats do, in NumPy's complex order
** with a NaN in either part first of all.
**
** The row form (cpu/rowacc.c) keeps instead one accumulator per column, in
** memory, W columns to a vector: the same operations on other elements,
** and blocks of rows combined as src/reduce.c combines Partials.
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <math.h>
#include <stddef.h>

/* In the cache key (cpu/build.c): the build of this file. */
const char cpu_reduce_stamp[] = "built " __DATE__ " " __TIME__;

static bool is_minmax(OpId op) {
  return op == OP_MIN || op == OP_MAX || op == OP_ARGMIN || op == OP_ARGMAX;
}
static bool is_less(OpId op) { return op == OP_MIN || op == OP_ARGMIN; }
/* Whether reduction st keeps its lanes' offsets (RAcc.indexed). */
static bool is_indexed(const IrStmt *st) {
  return st->op == OP_ARGMIN || st->op == OP_ARGMAX ||
         (is_minmax(st->op) && (dtype_is_float(st->value->type) ||
                                dtype_is_complex(st->value->type)));
}

/* The type of the lanes: the accumulator's (reduce_acc) as a register
** holds it (a 16-bit float as float32), bool as i1 for any and all and as i8
** for min, max and the arg- ones. */
static LLVMTypeRef acc_scalar(Gen *G, const IrStmt *st) {
  jitc_dtype in = st->value->type;
  if (st->op == OP_ANY || st->op == OP_ALL) return G->ti1;
  if (is_minmax(st->op) && in == JITC_BOOL) return G->ti8;
  return scalar_type(G, compute_type(reduce_acc(st->op, in)));
}
static bool acc_float(Gen *G, const IrStmt *st) {
  LLVMTypeRef t = acc_scalar(G, st);
  return t == G->tf32 || t == G->tf64;
}
static bool acc_complex(const IrStmt *st) { return dtype_is_complex(st->value->type); }
/* The lanes' vector: 2W parts for a complex accumulator. */
static LLVMTypeRef acc_vtype(Gen *G, const IrStmt *st) {
  return LLVMVectorType(acc_scalar(G, st), acc_complex(st) ? 2 * W : W);
}
/* Condition c of the elements for the lanes' vector. */
static LLVMValueRef for_lanes(Gen *G, const IrStmt *st, LLVMValueRef c) {
  return acc_complex(st) ? cx_both(G, c) : c;
}
/* Whether a value holds a NaN (either part of a complex one). */
static LLVMValueRef nan_in(Gen *G, const IrStmt *st, LLVMValueRef v) {
  if (!acc_complex(st)) return isnan_v(G, v);
  LLVMValueRef re = isnan_v(G, cx_part(G, v, 0));
  return LLVMBuildOr(G->B, re, isnan_v(G, cx_part(G, v, 1)), "");
}

/* W lanes of the identity: 0, 1, true for all; for min, max and the arg-
** ones the last value in their order (+-inf, the type's extremes), which
** every other element comes before. */
static LLVMValueRef acc_identity(Gen *G, const IrStmt *st) {
  LLVMTypeRef t = acc_scalar(G, st);
  bool fl = acc_float(G, st);
  int64_t k = 0;
  if (st->op == OP_PROD || st->op == OP_ALL) k = 1;
  if (acc_complex(st)) {
    /* (k, 0), or the last value of the order in both parts */
    double x = !is_minmax(st->op) ? (double)k : is_less(st->op) ? INFINITY : -INFINITY;
    LLVMValueRef v[2 * W];
    for (int j = 0; j < 2 * W; j++) v[j] = LLVMConstReal(t, j < W || is_minmax(st->op) ? x : 0.0);
    return LLVMConstVector(v, 2 * W);
  }
  if (fl && is_minmax(st->op))
    return splat_const(LLVMConstReal(t, is_less(st->op) ? INFINITY : -INFINITY));
  if (is_minmax(st->op)) {
    const TypeInfo *ti = &type_info[st->value->type];
    k = is_less(st->op) ? (int64_t)ti->hi : ti->lo;
  }
  return splat_const(fl ? LLVMConstReal(t, (double)k) : LLVMConstInt(t, (unsigned long long)k, 1));
}

/* Integer x comes before a for min/argmin (less) or max/argmax: the
** predicate, unsigned for the unsigned types. */
static LLVMIntPredicate int_before(const IrStmt *st, bool less) {
  bool u = is_unsigned(st->value->type);
  return less ? (u ? LLVMIntULT : LLVMIntSLT) : (u ? LLVMIntUGT : LLVMIntSGT);
}

/* Whether value x comes before value a for min/argmin (less) or max/argmax,
** lane by lane: a NaN first of all (src/reduce.c's before()). */
static LLVMValueRef before_v(Gen *G, const IrStmt *st, LLVMValueRef x, LLVMValueRef a) {
  bool less = is_less(st->op);
  if (!acc_float(G, st)) return icmp(G, int_before(st, less), x, a);
  if (acc_complex(st)) {
    LLVMValueRef nan = nan_in(G, st, x);
    LLVMValueRef c = LLVMBuildOr(G->B, nan, cx_compare(G, less ? OP_LT : OP_GT, x, a), "");
    return LLVMBuildAnd(G->B, c, LLVMBuildNot(G->B, nan_in(G, st, a), ""), "");
  }
  /* Unordered-or-less is true for a NaN x, and a NaN a is never passed.
  ** (One builder call per statement: the order of the instructions, which
  ** --emit llvm shows, must not depend on the C compiler's order of
  ** evaluating arguments.) */
  LLVMValueRef lt = fcmp(G, less ? LLVMRealULT : LLVMRealUGT, x, a);
  LLVMValueRef ord = fcmp(G, LLVMRealORD, a, a);
  return LLVMBuildAnd(G->B, lt, ord, "");
}

/* The operation of an unindexed reduction on two sets of lanes.  An
** accumulator of a 16-bit float type rounds each sum and product to it. */
static LLVMValueRef acc_op(Gen *G, const IrStmt *st, LLVMValueRef a, LLVMValueRef x) {
  bool fl = acc_float(G, st), u = is_unsigned(st->value->type);
  jitc_dtype acc = reduce_acc(st->op, st->value->type);
  LLVMValueRef r;
  switch (st->op) {
  case OP_SUM: case OP_MEAN:
    r = fl ? LLVMBuildFAdd(G->B, a, x, "") : LLVMBuildAdd(G->B, a, x, ""); /* wraps */
    break;
  case OP_PROD:
    if (acc_complex(st)) return cx_mul(G, a, x);
    r = fl ? LLVMBuildFMul(G->B, a, x, "") : LLVMBuildMul(G->B, a, x, "");
    break;
  case OP_ANY: return LLVMBuildOr(G->B, a, x, "");
  case OP_ALL: return LLVMBuildAnd(G->B, a, x, "");
  case OP_MIN: return intr2(G, u ? "llvm.umin" : "llvm.smin", a, x);
  case OP_MAX: return intr2(G, u ? "llvm.umax" : "llvm.smax", a, x);
  default: unreachable();
  }
  return is_half(acc) ? conv_round(G, acc, r) : r;
}

/* Folds the W elements x (the statement's value at G->i, under G->mask)
** into R's lanes. */
static void acc_update(Gen *G, RAcc *R, LLVMValueRef x) {
  const IrStmt *st = R->st;
  LLVMTypeRef vt = acc_vtype(G, st);
  if (is_half(st->value->type)) x = conv_widen(G, st->value->type, x);
  if (LLVMTypeOf(x) != vt) /* float32 summed in float64; bool as 0 or 1 */
    x = acc_float(G, st) ? LLVMBuildFPExt(G->B, x, vt, "") : LLVMBuildZExt(G->B, x, vt, "");
  if (!R->indexed) {
    if (G->mask) x = sel(G, for_lanes(G, st, G->mask), x, acc_identity(G, st));
    R->val = acc_op(G, st, R->val, x);
    return;
  }
  /* The lane takes x if x comes before its value; equal values keep the
  ** earlier element.  The lanes start at the identity, the last value of
  ** the order, with no offset: a lane that never takes an element holds
  ** only elements equal to the identity, and its first is the one to keep
  ** (acc_finish).  Lanes past the end see the identity.  Selects only, no
  ** logic on masks, which x86 code generation packs and unpacks. */
  if (G->mask) x = sel(G, for_lanes(G, st, G->mask), x, acc_identity(G, st));
  bool less = is_less(st->op);
  LLVMValueRef off = G->row ? G->row->off /* the row form: the row's index, i64 */
                             : LLVMBuildTrunc(G->B, LLVMBuildSub(G->B, G->i, G->rb, ""), G->ti32, "");
  off = splat(G, off);
  if (!acc_float(G, st)) {
    LLVMValueRef take = icmp(G, int_before(st, less), x, R->val);
    R->val = sel(G, take, x, R->val);
    R->off = sel(G, take, off, R->off);
    return;
  }
  /* Unordered-or-less takes a NaN x; a lane holding a NaN keeps it. */
  LLVMValueRef take = acc_complex(st) ? before_v(G, st, x, R->val)
                                      : fcmp(G, less ? LLVMRealULT : LLVMRealUGT, x, R->val);
  LLVMValueRef keep = nan_in(G, st, R->val);
  LLVMValueRef val = sel(G, for_lanes(G, st, take), x, R->val);
  LLVMValueRef offs = sel(G, take, off, R->off);
  R->val = sel(G, for_lanes(G, st, keep), R->val, val);
  R->off = sel(G, keep, R->off, offs);
}

/* Lanes [from, from + m) of v. */
static LLVMValueRef lanes(Gen *G, LLVMValueRef v, int from, int m) {
  LLVMValueRef idx[W];
  for (int k = 0; k < m; k++) idx[k] = LLVMConstInt(G->ti32, (unsigned)(from + k), 0);
  return LLVMBuildShuffleVector(G->B, v, LLVMGetPoison(LLVMTypeOf(v)), LLVMConstVector(idx, (unsigned)m), "");
}
/* The values of lanes [from, from + m) of the accumulator's v: of a complex
** one, both halves. */
static LLVMValueRef vlanes(Gen *G, const IrStmt *st, LLVMValueRef v, int from, int m) {
  if (!acc_complex(st)) return lanes(G, v, from, m);
  LLVMValueRef re = lanes(G, cx_part(G, v, 0), from, m);
  return cx_pack(G, re, lanes(G, cx_part(G, v, 1), from, m));
}

/* One step of the tree of an indexed reduction: lanes a (elements ia) and
** b (ib) into *val and *idx, as reduce_combine: b when a is empty, or b is
** not and comes first, or they are equal and b's element is the earlier. */
static void pick(Gen *G, const IrStmt *st, LLVMValueRef a, LLVMValueRef ia, LLVMValueRef b,
                 LLVMValueRef ib, LLVMValueRef *val, LLVMValueRef *idx) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(ia));
  LLVMValueRef eq = acc_complex(st) ? cx_compare(G, OP_EQ, a, b)
                    : acc_float(G, st) ? fcmp(G, LLVMRealOEQ, a, b) : icmp(G, LLVMIntEQ, a, b);
  if (acc_float(G, st)) {
    LLVMValueRef na = nan_in(G, st, a);
    LLVMValueRef nb = nan_in(G, st, b);
    eq = LLVMBuildOr(B, eq, LLVMBuildAnd(B, na, nb, ""), "");
  }
  LLVMValueRef earlier = LLVMBuildAnd(B, eq, icmp(G, LLVMIntSLT, ib, ia), "");
  LLVMValueRef first = LLVMBuildOr(B, before_v(G, st, b, a), earlier, "");
  LLVMValueRef empty = icmp(G, LLVMIntSLT, ia, zero);
  LLVMValueRef has = icmp(G, LLVMIntSGE, ib, zero);
  LLVMValueRef take = LLVMBuildOr(B, empty, LLVMBuildAnd(B, has, first, ""), "");
  *val = sel(G, for_lanes(G, st, take), b, a);
  *idx = sel(G, take, ib, ia);
}

/* The element indices of lanes k (a vector of lane numbers, or one) whose
** first elements are `first` and whose offsets are off (i32; -1: took
** none), in a block of len elements: a lane that took none keeps its first
** element (acc_update), if it has one; -1 where it has none. */
static LLVMValueRef lane_index(Gen *G, LLVMValueRef first, LLVMValueRef off, LLVMValueRef k,
                               LLVMValueRef len) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef vi = LLVMBuildAdd(B, first, LLVMBuildZExt(B, off, LLVMVectorType(G->ti64, W), ""), "");
  bool vec = LLVMGetTypeKind(LLVMTypeOf(k)) == LLVMVectorTypeKind;
  LLVMValueRef has = icmp(G, LLVMIntSLT, k, vec ? splat(G, len) : len);
  LLVMValueRef none = sel(G, has, first, LLVMConstAllOnes(LLVMTypeOf(vi)));
  LLVMValueRef took = icmp(G, LLVMIntSGE, off, LLVMConstNull(LLVMTypeOf(off)));
  return sel(G, took, vi, none);
}

/* The Partial at dst of the value in lane re of val (its imaginary part
** in lane im, of a complex one) and element index idx. */
static void store_partial(Gen *G, const IrStmt *st, LLVMValueRef val, unsigned re, unsigned im,
                          LLVMValueRef idx, LLVMValueRef dst) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef v = LLVMBuildExtractElement(B, val, LLVMConstInt(G->ti32, re, 0), "");
  if (acc_complex(st)) {
    LLVMValueRef vim = LLVMBuildExtractElement(B, val, LLVMConstInt(G->ti32, im, 0), "");
    if (LLVMTypeOf(vim) != G->tf64) vim = LLVMBuildFPExt(B, vim, G->tf64, "");
    LLVMValueRef o = LLVMConstInt(G->ti64, offsetof(Partial, im), 0);
    LLVMSetAlignment(LLVMBuildStore(B, vim, LLVMBuildGEP2(B, G->ti8, dst, &o, 1, "")), 8);
  }
  if (acc_float(G, st)) {
    if (LLVMTypeOf(v) != G->tf64) v = LLVMBuildFPExt(B, v, G->tf64, "");
  } else if (LLVMTypeOf(v) != G->ti64) {
    /* As reduce.c reads v.i: the value, or an unsigned type's bits. */
    bool sgn = type_info[reduce_acc(st->op, st->value->type)].kind == T_SINT;
    v = sgn ? LLVMBuildSExt(B, v, G->ti64, "") : LLVMBuildZExt(B, v, G->ti64, "");
  }
  LLVMSetAlignment(LLVMBuildStore(B, v, dst), 8);
  LLVMValueRef eight = LLVMConstInt(G->ti64, 8, 0);
  LLVMSetAlignment(LLVMBuildStore(B, idx, LLVMBuildGEP2(B, G->ti8, dst, &eight, 1, "")), 8);
}

/* R's lanes (values val, offsets off) combined into the Partial at dst,
** for the block of len elements that starts at element G->rb. */
static void acc_finish(Gen *G, const RAcc *R, LLVMValueRef val, LLVMValueRef off, LLVMValueRef len,
                       LLVMValueRef dst) {
  const IrStmt *st = R->st;
  LLVMBuilderRef B = G->B;
  LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned long long)-1, 1);
  if (!R->indexed) {
    for (int h = W / 2; h >= 1; h /= 2) {
      LLVMValueRef a = vlanes(G, st, val, 0, h);
      LLVMValueRef b = vlanes(G, st, val, h, h);
      val = acc_op(G, st, a, b);
    }
    /* min and max of integers: the block is not empty. */
    if (is_minmax(st->op)) idx = G->rb;
  } else {
    LLVMValueRef iota[W];
    for (int k = 0; k < W; k++) iota[k] = LLVMConstInt(G->ti64, (unsigned)k, 0);
    LLVMValueRef first = LLVMBuildAdd(B, splat(G, G->rb), LLVMConstVector(iota, W), "");
    LLVMValueRef vidx = lane_index(G, first, off, LLVMConstVector(iota, W), len);
    for (int h = W / 2; h >= 1; h /= 2) {
      LLVMValueRef a = vlanes(G, st, val, 0, h);
      LLVMValueRef b = vlanes(G, st, val, h, h);
      LLVMValueRef ia = lanes(G, vidx, 0, h);
      LLVMValueRef ib = lanes(G, vidx, h, h);
      pick(G, st, a, ia, b, ib, &val, &vidx);
    }
    idx = LLVMBuildExtractElement(B, vidx, LLVMConstInt(G->ti32, 0, 0), "");
  }
  store_partial(G, st, val, 0, 1, idx, dst);
}

/* ---- the row form (cpu/rowacc.c) ----
** Each column keeps one value of each reduction's accumulator, and an
** indexed reduction the index of its element in the segment (i64): W
** columns' values are one vector, which the rows of a block update in their
** order, as a lane of the kernel takes its elements.  A block's first row
** starts them from the identity, with its own index: a column that never
** takes an element holds only elements equal to the identity, and the first
** of them is the one to keep (acc_update).  Blocks are then combined as
** reduce_combine combines Partials, and a column's value and index are its
** Partial. */

/* Bytes of one value of reduction st's accumulator in memory: bool as a byte. */
static size_t lane_bytes(const IrStmt *st) {
  jitc_dtype in = st->value->type;
  if (st->op == OP_ANY || st->op == OP_ALL || (is_minmax(st->op) && in == JITC_BOOL)) return 1;
  return jitc_dtype_size(compute_type(reduce_acc(st->op, in)));
}

size_t red_row_bytes(const Program *p, RAcc *racc) {
  size_t at = 0;
  for (int s = 0, r = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE) continue;
    if (racc) racc[r].roff = (int64_t)at;
    at += (size_t)W * lane_bytes(st) + (is_indexed(st) ? (size_t)W * 8 : 0);
    r++;
  }
  return at;
}

/* The address of R's values (idx: indices) in the chunk at `chunk`. */
static LLVMValueRef row_addr(Gen *G, const RAcc *R, LLVMValueRef chunk, bool idx) {
  int64_t at = R->roff + (idx ? W * (int64_t)lane_bytes(R->st) : 0);
  LLVMValueRef o = LLVMConstInt(G->ti64, (unsigned long long)at, 0);
  return LLVMBuildGEP2(G->B, G->ti8, chunk, &o, 1, "");
}

/* R's values (bool from bytes), or its indices, in the chunk at `chunk`. */
static LLVMValueRef row_load(Gen *G, const RAcc *R, LLVMValueRef chunk, bool idx) {
  LLVMTypeRef st = acc_scalar(G, R->st);
  LLVMTypeRef mt = idx ? LLVMVectorType(G->ti64, W)
                   : st == G->ti1 ? LLVMVectorType(G->ti8, W) : acc_vtype(G, R->st);
  LLVMValueRef v = LLVMBuildLoad2(G->B, mt, row_addr(G, R, chunk, idx), "");
  LLVMSetAlignment(v, 16);
  return !idx && st == G->ti1 ? LLVMBuildTrunc(G->B, v, LLVMVectorType(st, W), "") : v;
}

/* Stores R's values val (and indices idx) in the chunk at `chunk`. */
static void row_store(Gen *G, const RAcc *R, LLVMValueRef chunk, LLVMValueRef val, LLVMValueRef idx) {
  if (acc_scalar(G, R->st) == G->ti1) val = LLVMBuildZExt(G->B, val, LLVMVectorType(G->ti8, W), "");
  LLVMSetAlignment(LLVMBuildStore(G->B, val, row_addr(G, R, chunk, false)), 16);
  if (R->indexed) LLVMSetAlignment(LLVMBuildStore(G->B, idx, row_addr(G, R, chunk, true)), 16);
}

/* The chunk of the W columns at G->i. */
static LLVMValueRef row_chunk(Gen *G) {
  RowGen *rg = G->row;
  LLVMValueRef at = LLVMBuildSub(G->B, G->i, rg->c0, "");
  at = LLVMBuildMul(G->B, at, LLVMConstInt(G->ti64, (unsigned long long)(rg->chunk / W), 0), "");
  return LLVMBuildGEP2(G->B, G->ti8, rg->acc, &at, 1, "");
}

/* R's values for the row from memory (at the block's first row the
** identity, and the row's index), or back to memory. */
static void row_move(Gen *G, RAcc *R, bool store) {
  LLVMValueRef chunk = row_chunk(G);
  if (store) {
    row_store(G, R, chunk, R->val, R->off);
    return;
  }
  R->val = sel(G, G->row->first, acc_identity(G, R->st), row_load(G, R, chunk, false));
  if (R->indexed) R->off = sel(G, G->row->first, splat(G, G->row->off), row_load(G, R, chunk, true));
}

void red_row_combine(Gen *G, int r, LLVMValueRef a, LLVMValueRef b) {
  const RAcc *R = &G->racc[r];
  LLVMValueRef va = row_load(G, R, a, false), vb = row_load(G, R, b, false), ia = NULL;
  if (!R->indexed) va = acc_op(G, R->st, va, vb);
  else pick(G, R->st, va, row_load(G, R, a, true), vb, row_load(G, R, b, true), &va, &ia);
  row_store(G, R, a, va, ia);
}

void red_row_finish(Gen *G, int r, LLVMValueRef chunk, LLVMValueRef dst, int64_t cstride) {
  const RAcc *R = &G->racc[r];
  const IrStmt *st = R->st;
  LLVMBuilderRef B = G->B;
  LLVMValueRef val = row_load(G, R, chunk, false), idx = R->indexed ? row_load(G, R, chunk, true) : NULL;
  /* min and max of integers: any index but -1, which says empty */
  LLVMValueRef none = LLVMConstInt(G->ti64, is_minmax(st->op) ? 0 : (unsigned long long)-1, 1);
  for (unsigned j = 0; j < W; j++) {
    LLVMValueRef o = LLVMConstInt(G->ti64, (unsigned long long)(j * cstride), 0);
    LLVMValueRef d = LLVMBuildGEP2(B, G->ti8, dst, &o, 1, "");
    LLVMValueRef ix = idx ? LLVMBuildExtractElement(B, idx, LLVMConstInt(G->ti32, j, 0), "") : none;
    store_partial(G, st, val, j, W + j, ix, d);
  }
}

bool red_row_direct(const Program *p) {
  for (int s = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE) continue;
    jitc_dtype in = st->value->type, acc = compute_type(reduce_acc(st->op, in));
    jitc_dtype r = reduce_result(st->op, in);
    bool op = st->op == OP_SUM || st->op == OP_PROD || st->op == OP_MEAN || st->op == OP_MIN ||
              st->op == OP_MAX;
    if (!op || dtype_is_complex(in) || (acc != JITC_FLOAT32 && acc != JITC_FLOAT64) ||
        (r != JITC_FLOAT32 && r != JITC_FLOAT64))
      return false;
  }
  return true;
}

void red_row_result(Gen *G, int r, LLVMValueRef chunk, LLVMValueRef dst, LLVMValueRef q,
                    LLVMValueRef n) {
  const IrStmt *st = G->racc[r].st;
  LLVMBuilderRef B = G->B;
  LLVMValueRef v = row_load(G, &G->racc[r], chunk, false);
  if (st->op == OP_MEAN) { /* in float64, as reduce_finish divides */
    LLVMTypeRef dt = LLVMVectorType(G->tf64, W);
    if (LLVMTypeOf(v) != dt) v = LLVMBuildFPExt(B, v, dt, "");
    v = LLVMBuildFDiv(B, v, splat(G, LLVMBuildSIToFP(B, n, G->tf64, "")), "");
  }
  jitc_dtype rt = reduce_result(st->op, st->value->type);
  LLVMTypeRef vt = LLVMVectorType(scalar_type(G, rt), W);
  if (LLVMTypeOf(v) != vt)
    v = rt == JITC_FLOAT32 ? LLVMBuildFPTrunc(B, v, vt, "") : LLVMBuildFPExt(B, v, vt, "");
  store_vec(G, rt, dst, q, v);
}

void red_init(Gen *G) {
  const Program *p = G->prog;
  for (int s = 0, r = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    G->rnum[s] = st->kind == IR_REDUCE ? r : -1;
    if (st->kind != IR_REDUCE) continue;
    G->racc[r].st = st;
    G->racc[r++].indexed = is_indexed(st);
  }
}

void red_update(Gen *G, int s, LLVMValueRef x) {
  RAcc *R = &G->racc[G->rnum[s]];
  if (G->row && G->row->load) row_move(G, R, false);
  acc_update(G, R, x);
  if (G->row && G->row->store) row_move(G, R, true);
}

/* (cpu/cpu.h) The running values of the reductions among statements [from,
** to) through gen_loop's blocks, by step: 0, in the head, phis whose value from
** `from` (the block before the loop) is the current one; 1, the value from
** the body's end `from`; 2, in the tail, the head's phis again; 3 and 4, in
** `done`, phis of the head's values (from the tail check) and of the
** tail's (from its end). */
void red_phis(Gen *G, int from, int to, LLVMBasicBlockRef bb, int step) {
  for (int s = from; s < to && !G->row; s++) { /* the row form's are in memory */
    if (G->prog->stmts[s].kind != IR_REDUCE) continue;
    RAcc *R = &G->racc[G->rnum[s]];
    LLVMValueRef *cur[2] = {&R->val, &R->off}, *phi[2] = {&R->pval, &R->poff};
    for (int q = 0; q < 1 + R->indexed; q++) {
      LLVMValueRef v = *cur[q];
      if (step == 0 || step == 3) {
        LLVMValueRef old = step == 0 ? v : *phi[q];
        *phi[q] = LLVMBuildPhi(G->B, LLVMTypeOf(old), "");
        LLVMAddIncoming(*phi[q], &old, &bb, 1);
        if (step == 0) *cur[q] = *phi[q];
      } else if (step == 2) {
        *cur[q] = *phi[q];
      } else {
        LLVMAddIncoming(*phi[q], &v, &bb, 1);
        if (step == 4) *cur[q] = *phi[q];
      }
    }
  }
}

void red_load_out(Gen *G, LLVMValueRef pars) {
  LLVMValueRef idx1 = LLVMConstInt(G->ti64, ((unsigned)G->prog->nparams + 1) * sizeof(ParamSlot), 0);
  LLVMValueRef idx2 = LLVMConstInt(G->ti64, ((unsigned)G->prog->nparams + 2) * sizeof(ParamSlot), 0);
  G->part = LLVMBuildLoad2(G->B, G->tptr, LLVMBuildGEP2(G->B, G->ti8, pars, &idx1, 1, ""), "partials");
  G->nblocks = LLVMBuildLoad2(G->B, G->ti64, LLVMBuildGEP2(G->B, G->ti8, pars, &idx2, 1, ""), "nblocks");
}

void red_start(Gen *G) {
  for (int r = 0; r < G->prog->nreduce; r++) {
    RAcc *R = &G->racc[r];
    R->val = acc_identity(G, R->st);
    R->off = R->indexed ? splat_const(LLVMConstInt(G->ti32, (unsigned long long)-1, 1)) : NULL;
  }
}

void red_end(Gen *G, int from, int to, LLVMValueRef bend) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef bi = LLVMBuildUDiv(B, G->rb, LLVMConstInt(G->ti64, RB, 0), "");
  LLVMValueRef len = LLVMBuildSub(B, bend, G->rb, "");
  for (int s = from; s < to; s++) {
    int r = G->rnum[s];
    if (r < 0) continue;
    LLVMValueRef k = LLVMBuildAdd(B, LLVMBuildMul(B, LLVMConstInt(G->ti64, (unsigned)r, 0), G->nblocks, ""), bi, "");
    k = LLVMBuildMul(B, k, LLVMConstInt(G->ti64, sizeof(Partial), 0), "");
    LLVMValueRef dst = LLVMBuildGEP2(B, G->ti8, G->part, &k, 1, "");
    acc_finish(G, &G->racc[r], G->racc[r].val, G->racc[r].off, len, dst);
  }
}

/* Split kernels keep the lanes of reduction r in the scratch between the
** calls of its group: the values (bool as bytes), then the offsets. */
static void acc_move(Gen *G, RAcc *R, bool store) {
  LLVMBuilderRef B = G->B;
  LLVMTypeRef st = acc_scalar(G, R->st);
  LLVMTypeRef mt = st == G->ti1 ? LLVMVectorType(G->ti8, W) : acc_vtype(G, R->st);
  LLVMTypeRef ot = LLVMVectorType(G->ti32, W);
  LLVMValueRef o0 = LLVMConstInt(G->ti64, (unsigned long long)R->scr, 0);
  LLVMValueRef o1 = LLVMConstInt(G->ti64, (unsigned long long)R->scr + W * 16, 0);
  LLVMValueRef pv = LLVMBuildGEP2(B, G->ti8, G->scratch, &o0, 1, "");
  LLVMValueRef po = LLVMBuildGEP2(B, G->ti8, G->scratch, &o1, 1, "");
  if (store) {
    LLVMValueRef v = st == G->ti1 ? LLVMBuildZExt(B, R->val, mt, "") : R->val;
    LLVMSetAlignment(LLVMBuildStore(B, v, pv), 64);
    if (R->indexed) LLVMSetAlignment(LLVMBuildStore(B, R->off, po), 64);
    return;
  }
  LLVMValueRef v = LLVMBuildLoad2(B, mt, pv, "");
  LLVMSetAlignment(v, 64);
  R->val = st == G->ti1 ? LLVMBuildTrunc(B, v, LLVMVectorType(st, W), "") : v;
  R->off = NULL;
  if (R->indexed) {
    R->off = LLVMBuildLoad2(B, ot, po, "");
    LLVMSetAlignment(R->off, 64);
  }
}

void red_move(Gen *G, int from, int to, bool store) {
  for (int s = from; s < to; s++)
    if (G->rnum[s] >= 0) acc_move(G, &G->racc[G->rnum[s]], store);
}

bool red_some(Gen *G, int from, int to) {
  for (int s = from; s < to; s++)
    if (G->rnum[s] >= 0) return true;
  return false;
}

void red_finish_fn(Gen *G, LLVMValueRef fn, int from, int to) {
  LLVMPositionBuilderAtEnd(G->B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
  G->rb = LLVMGetParam(fn, 0);
  G->scratch = LLVMGetParam(fn, 3);
  red_load_out(G, LLVMGetParam(fn, 2));
  red_move(G, from, to, false);
  red_end(G, from, to, LLVMGetParam(fn, 1));
  LLVMBuildRetVoid(G->B);
}

/* A branch, not a select: at a block's first call the scratch holds
** nothing yet, and is not read. */
void red_resume(Gen *G, int from, int to, LLVMValueRef first) {
  LLVMBuilderRef B = G->B;
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(B);
  LLVMValueRef fn = LLVMGetBasicBlockParent(entry);
  LLVMBasicBlockRef load = LLVMAppendBasicBlockInContext(G->C, fn, "lanes.load");
  LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(G->C, fn, "lanes");
  LLVMBuildCondBr(B, first, go, load);
  LLVMPositionBuilderAtEnd(B, load);
  red_move(G, from, to, false);
  LLVMBuildBr(B, go);
  LLVMPositionBuilderAtEnd(B, go);
  for (int s = from; s < to; s++) {
    if (G->rnum[s] < 0) continue;
    RAcc *R = &G->racc[G->rnum[s]];
    LLVMValueRef id[2] = {acc_identity(G, R->st),
                          splat_const(LLVMConstInt(G->ti32, (unsigned long long)-1, 1))};
    LLVMValueRef *cur[2] = {&R->val, &R->off};
    for (int q = 0; q < 1 + R->indexed; q++) {
      LLVMValueRef phi = LLVMBuildPhi(B, LLVMTypeOf(*cur[q]), "");
      LLVMValueRef inc[2] = {id[q], *cur[q]};
      LLVMBasicBlockRef incb[2] = {entry, load};
      LLVMAddIncoming(phi, inc, incb, 2);
      *cur[q] = phi;
    }
  }
}

#endif /* JITC_HAVE_LLVM */
