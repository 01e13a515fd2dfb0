/*
** cpu/gen.c -- generation for the cpu target: the typed IR of a program
** (check.c) becomes one LLVM module holding the kernel (KernelFn in
** jitc_int.h), a loop over the elements [begin, end).  Pure: it builds IR
** and nothing else; building and running are cpu/build.c and cpu/run.c,
** the math functions cpu/math.c, the reductions' lanes cpu/reduce.c, the
** complex types cpu/complex.c (cpu/cpu.h).
** Start at cpu_gen_module() at the end, then gen_loop() and gen_op().
**
** This file vectorises the loop itself: every value of the program is a
** vector of W elements, and one iteration does W elements with plain vector
** loads, arithmetic and stores.  The last, partial iteration runs the same
** vector code under a mask (llvm.masked.load/store), so there is no scalar
** epilogue: every element goes through the same instructions and the same
** math functions, whatever the array length or the thread split.  (Leaving
** the loop to LLVM's vectoriser would give a scalar tail whose math calls
** can differ from the vector ones in the last bit.)
**
** Everything but the math functions is exact LLVM IR with no fast-math
** flags (unless --fast-math), written so that no input is undefined
** behaviour: integer division and remainder are guarded with selects, shift
** counts are clamped, float to int conversions saturate (cpu/convert.c).
** The operators of ops.h come from its table where a row says enough (an
** LLVM intrinsic, the identity on integers, a libm function); gen_arith()
** spells out the others, signed or unsigned as the operand type's kind
** says.  The 16-bit floats compute in float32, each result rounded to its
** type (gen_op, cpu/half.c).
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- building blocks (more in cpu/cpu.h) ---- */

static LLVMValueRef vconst_i(Gen *G, jitc_dtype t, int64_t x) {
  return splat_const(LLVMConstInt(scalar_type(G, t), (unsigned long long)x, 1));
}
static LLVMValueRef vzero(Gen *G, jitc_dtype t) {
  return LLVMConstNull(vec_type(G, t));
}

/* Applies the --fast-math flags to a floating-point instruction: those
** that allow reassociation and contraction, not those that assume away NaN
** and infinity (isnan() must keep working). */
static LLVMValueRef fm(Gen *G, LLVMValueRef v) {
  if (G->gt->fast && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMFastMathAllowReassoc | LLVMFastMathNoSignedZeros |
                                LLVMFastMathAllowReciprocal | LLVMFastMathAllowContract |
                                LLVMFastMathApproxFunc);
  return v;
}

/* ---- operators ---- */

static LLVMValueRef gen_node(Gen *G, const Node *n);

/* Integer a / b and a % b (C, truncating) made total: b == 0 gives 0 for
** both, MIN / -1 gives MIN and MIN % -1 gives 0 (signed).  The divisor
** is replaced by 1 in those lanes, so the division itself never traps. */
static void safe_divrem(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef *q, LLVMValueRef *r) {
  LLVMValueRef zero = vzero(G, t), one = vconst_i(G, t, 1);
  LLVMValueRef bz = icmp(G, LLVMIntEQ, b, zero);
  if (is_unsigned(t)) {
    LLVMValueRef d = sel(G, bz, one, b);
    if (q) *q = sel(G, bz, zero, LLVMBuildUDiv(G->B, a, d, ""));
    if (r) *r = sel(G, bz, zero, LLVMBuildURem(G->B, a, d, ""));
    return;
  }
  LLVMValueRef ovf = LLVMBuildAnd(G->B, icmp(G, LLVMIntEQ, a, vconst_i(G, t, type_info[t].lo)),
                                  icmp(G, LLVMIntEQ, b, vconst_i(G, t, -1)), "");
  LLVMValueRef bad = LLVMBuildOr(G->B, bz, ovf, "");
  LLVMValueRef d = sel(G, bad, one, b);
  if (q) *q = sel(G, bz, zero, sel(G, ovf, a, LLVMBuildSDiv(G->B, a, d, "")));
  if (r) *r = sel(G, bad, zero, LLVMBuildSRem(G->B, a, d, ""));
}

/* NumPy's float divmod (npy_divmod): floor division and the remainder with
** the sign of the divisor, with NumPy's handling of zeros and infinities. */
static void float_divmod(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef b,
                         LLVMValueRef *floordiv, LLVMValueRef *modulus) {
  LLVMValueRef zero = vzero(G, t), one = vconst_f(G, t, 1.0);
  LLVMValueRef mod = fm(G, LLVMBuildFRem(G->B, a, b, ""));
  LLVMValueRef bz = fcmp(G, LLVMRealOEQ, b, zero);
  LLVMValueRef div = fm(G, LLVMBuildFDiv(G->B, fm(G, LLVMBuildFSub(G->B, a, mod, "")), b, ""));
  LLVMValueRef modnz = fcmp(G, LLVMRealUNE, mod, zero);
  LLVMValueRef blt = fcmp(G, LLVMRealOLT, b, zero), mlt = fcmp(G, LLVMRealOLT, mod, zero);
  LLVMValueRef fix = LLVMBuildAnd(G->B, modnz, icmp(G, LLVMIntNE, blt, mlt), "");
  LLVMValueRef mod2 = sel(G, fix, fm(G, LLVMBuildFAdd(G->B, mod, b, "")), mod);
  mod2 = sel(G, modnz, mod2, intr2(G, "llvm.copysign", zero, b));
  div = sel(G, fix, fm(G, LLVMBuildFSub(G->B, div, one, "")), div);
  LLVMValueRef fl = intr1(G, "llvm.floor", div);
  LLVMValueRef up = fcmp(G, LLVMRealOGT, fm(G, LLVMBuildFSub(G->B, div, fl, "")), vconst_f(G, t, 0.5));
  fl = sel(G, up, fm(G, LLVMBuildFAdd(G->B, fl, one, "")), fl);
  LLVMValueRef q = fm(G, LLVMBuildFDiv(G->B, a, b, ""));
  LLVMValueRef divnz = fcmp(G, LLVMRealUNE, div, zero);
  fl = sel(G, divnz, fl, intr2(G, "llvm.copysign", zero, q));
  /* b == 0: a / b and fmod(a, b). */
  if (floordiv) *floordiv = sel(G, bz, q, fl);
  if (modulus) *modulus = sel(G, bz, mod, mod2);
}

/* NumPy's minimum/maximum: NaN propagates; between equal values (0.0 and
** -0.0) the second operand wins. */
static LLVMValueRef fminmax(Gen *G, bool max, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef c = fcmp(G, max ? LLVMRealOGT : LLVMRealOLT, a, b);
  return sel(G, LLVMBuildOr(G->B, c, isnan_v(G, a), ""), a, b);
}

/* Integer power by squaring, wrapping like NumPy's; negative exponents
** give 1 / a**-e truncated: 1 for a == 1, +-1 for a == -1, 0 otherwise. */
static LLVMValueRef int_pow(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef e) {
  LLVMValueRef zero = vzero(G, t), one = vconst_i(G, t, 1);
  LLVMValueRef r = one, base = a, x = e;
  bool uns = is_unsigned(t);
  int bits = 8 * type_info[t].size;
  for (int k = 0; k < bits - !uns; k++) { /* a sign bit is handled below */
    LLVMValueRef odd = icmp(G, LLVMIntNE, LLVMBuildAnd(G->B, x, one, ""), zero);
    r = sel(G, odd, LLVMBuildMul(G->B, r, base, ""), r);
    base = LLVMBuildMul(G->B, base, base, "");
    x = LLVMBuildLShr(G->B, x, one, "");
  }
  if (uns) return r;
  LLVMValueRef neg = icmp(G, LLVMIntSLT, e, zero);
  LLVMValueRef isone = icmp(G, LLVMIntEQ, a, one);
  LLVMValueRef ism1 = icmp(G, LLVMIntEQ, a, vconst_i(G, t, -1));
  LLVMValueRef eodd = icmp(G, LLVMIntNE, LLVMBuildAnd(G->B, e, one, ""), zero);
  LLVMValueRef negr = sel(G, isone, one, sel(G, ism1, sel(G, eodd, vconst_i(G, t, -1), one), zero));
  return sel(G, neg, negr, r);
}

/* The operation of node n on W lanes (args), in its compute types: the
** 16-bit floats as float32 (gen_op narrows the result).  First what the row
** of ops.h says: the identity on integers (F_INT_ID), an LLVM intrinsic on
** floats; then the operations whose semantics need code of their own;
** last, a float function of the C library (cpu/math.c). */
static LLVMValueRef gen_arith(Gen *G, const Node *n, LLVMValueRef *args) {
  const OpInfo *oi = &op_info[n->op];
  jitc_dtype t = compute_type(n->type);
  jitc_dtype at = n->nargs > 0 ? compute_type(n->args[0]->type) : t;
  LLVMValueRef a = args[0], b = args[1], c = args[2];
  LLVMBuilderRef B = G->B;
  bool f = dtype_is_float(at), uns = is_unsigned(at);
  if (!f && (oi->flags & F_INT_ID)) return a;
  /* sqrt is the one intrinsic that --fast-math may approximate. */
  if (f && oi->llvm && n->op != OP_SQRT) {
    LLVMTypeRef vt = vec_type(G, t);
    return intrinsic(G, oi->llvm, &vt, 1, args, n->nargs);
  }
  switch (n->op) {
  case OP_ADD:
    if (t == JITC_BOOL) return LLVMBuildOr(B, a, b, "");
    return f ? fm(G, LLVMBuildFAdd(B, a, b, "")) : LLVMBuildAdd(B, a, b, "");
  case OP_SUB:
    if (t == JITC_BOOL) return LLVMBuildXor(B, a, b, "");
    return f ? fm(G, LLVMBuildFSub(B, a, b, "")) : LLVMBuildSub(B, a, b, "");
  case OP_MUL:
    if (t == JITC_BOOL) return LLVMBuildAnd(B, a, b, "");
    return f ? fm(G, LLVMBuildFMul(B, a, b, "")) : LLVMBuildMul(B, a, b, "");
  case OP_DIV:
    return fm(G, LLVMBuildFDiv(B, a, b, ""));
  case OP_FLOORDIV:
  case OP_MOD: {
    LLVMValueRef q, r;
    if (f) {
      float_divmod(G, t, a, b, &q, &r);
      return n->op == OP_FLOORDIV ? q : r;
    }
    safe_divrem(G, t, a, b, &q, &r);
    if (uns) return n->op == OP_FLOORDIV ? q : r;
    /* Round toward minus infinity: when the remainder is non-zero and its
    ** sign differs from the divisor's, q - 1 and r + b. */
    LLVMValueRef zero = vzero(G, t);
    LLVMValueRef adj = LLVMBuildAnd(B, icmp(G, LLVMIntNE, r, zero),
                                    icmp(G, LLVMIntNE, icmp(G, LLVMIntSLT, r, zero),
                                         icmp(G, LLVMIntSLT, b, zero)), "");
    if (n->op == OP_FLOORDIV) return sel(G, adj, LLVMBuildSub(B, q, vconst_i(G, t, 1), ""), q);
    return sel(G, adj, LLVMBuildAdd(B, r, b, ""), r);
  }
  case OP_FMOD:
    /* frem is C's fmod, exact; SLEEF's vector fmod fails on subnormal
    ** divisors. */
    if (f) {
      return fm(G, LLVMBuildFRem(B, a, b, ""));
    } else {
      LLVMValueRef r;
      safe_divrem(G, t, a, b, NULL, &r);
      return r;
    }
  case OP_POW:
    if (f) {
      /* The common exponents 1 and 2 are exact (x, x*x), as NumPy's
      ** fast paths are. */
      LLVMValueRef r = math_pow(G, t, a, b);
      r = sel(G, fcmp(G, LLVMRealOEQ, b, vconst_f(G, t, 2.0)), fm(G, LLVMBuildFMul(B, a, a, "")), r);
      return sel(G, fcmp(G, LLVMRealOEQ, b, vconst_f(G, t, 1.0)), a, r);
    }
    return int_pow(G, t, a, b);
  case OP_AND: return LLVMBuildAnd(B, a, b, "");
  case OP_OR: return LLVMBuildOr(B, a, b, "");
  case OP_XOR: return LLVMBuildXor(B, a, b, "");
  case OP_SHL:
  case OP_SHR: {
    /* NumPy: a count outside [0, width) shifts everything out (<< gives 0,
    ** >> gives the sign).  The count is clamped so LLVM never sees an
    ** over-wide shift, which would be poison. */
    int w = 8 * type_info[t].size;
    LLVMValueRef in = icmp(G, LLVMIntULT, b, vconst_i(G, t, w));
    if (n->op == OP_SHL || uns) {
      LLVMValueRef sh = sel(G, in, b, vzero(G, t));
      sh = n->op == OP_SHL ? LLVMBuildShl(B, a, sh, "") : LLVMBuildLShr(B, a, sh, "");
      return sel(G, in, sh, vzero(G, t));
    }
    return LLVMBuildAShr(B, a, sel(G, in, b, vconst_i(G, t, w - 1)), "");
  }
  case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE: {
    static const LLVMRealPredicate fp[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                           LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
    static const LLVMIntPredicate sp[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                          LLVMIntSGE, LLVMIntEQ, LLVMIntNE};
    static const LLVMIntPredicate up[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT,
                                          LLVMIntUGE, LLVMIntEQ, LLVMIntNE};
    int k = n->op - OP_LT;
    if (f) return fcmp(G, fp[k], a, b);
    return icmp(G, uns ? up[k] : sp[k], a, b);
  }
  case OP_NEG:
    return f ? fm(G, LLVMBuildFNeg(B, a, "")) : LLVMBuildSub(B, vzero(G, t), a, "");
  case OP_INVERT:
    return LLVMBuildXor(B, a, LLVMConstAllOnes(vec_type(G, t)), "");
  case OP_ABS:
    if (uns) return a;
    return sel(G, icmp(G, LLVMIntSLT, a, vzero(G, t)), LLVMBuildSub(B, vzero(G, t), a, ""), a);
  case OP_SQRT: return fm(G, intr1(G, oi->llvm, a));
  case OP_SQUARE:
    return f ? fm(G, LLVMBuildFMul(B, a, a, "")) : LLVMBuildMul(B, a, a, "");
  case OP_RECIPROCAL:
    if (f) return fm(G, LLVMBuildFDiv(B, vconst_f(G, t, 1.0), a, ""));
    else {
      LLVMValueRef q;
      safe_divrem(G, t, vconst_i(G, t, 1), a, &q, NULL);
      return q;
    }
  case OP_SIGN: {
    LLVMValueRef zero = vzero(G, t);
    if (f) {
      LLVMValueRef s = sel(G, fcmp(G, LLVMRealOGT, a, zero), vconst_f(G, t, 1.0),
                           sel(G, fcmp(G, LLVMRealOLT, a, zero), vconst_f(G, t, -1.0), zero));
      return sel(G, isnan_v(G, a), a, s);
    }
    if (uns) return LLVMBuildZExt(B, icmp(G, LLVMIntNE, a, zero), vec_type(G, t), "");
    return sel(G, icmp(G, LLVMIntSGT, a, zero), vconst_i(G, t, 1),
               sel(G, icmp(G, LLVMIntSLT, a, zero), vconst_i(G, t, -1), zero));
  }
  case OP_MINIMUM: case OP_MAXIMUM: case OP_FMIN: case OP_FMAX: {
    bool max = n->op == OP_MAXIMUM || n->op == OP_FMAX;
    if (f && (n->op == OP_MINIMUM || n->op == OP_MAXIMUM)) return fminmax(G, max, a, b);
    /* fmin, fmax: a NaN operand is ignored; between equal values the second wins. */
    LLVMValueRef c2 = f ? fcmp(G, max ? LLVMRealOGT : LLVMRealOLT, a, b) : NULL;
    if (f) return sel(G, LLVMBuildOr(B, c2, isnan_v(G, b), ""), a, b);
    if (t == JITC_BOOL) return max ? LLVMBuildOr(B, a, b, "") : LLVMBuildAnd(B, a, b, "");
    return sel(G, icmp(G, max ? (uns ? LLVMIntUGT : LLVMIntSGT) : (uns ? LLVMIntULT : LLVMIntSLT), a, b),
               a, b);
  }
  case OP_CLIP: {
    /* NumPy: minimum(maximum(a, lo), hi), NaN propagating. */
    if (f) {
      LLVMValueRef lo = sel(G, LLVMBuildOr(B, fcmp(G, LLVMRealOGT, a, b), isnan_v(G, a), ""), a, b);
      return sel(G, LLVMBuildOr(B, fcmp(G, LLVMRealOLT, lo, c), isnan_v(G, lo), ""), lo, c);
    }
    LLVMIntPredicate gt = uns ? LLVMIntUGT : LLVMIntSGT;
    LLVMIntPredicate lt = uns ? LLVMIntULT : LLVMIntSLT;
    LLVMValueRef lo = sel(G, icmp(G, gt, a, b), a, b);
    return sel(G, icmp(G, lt, lo, c), lo, c);
  }
  case OP_WHERE: return sel(G, a, b, c);
  case OP_ISNAN:
    return f ? isnan_v(G, a) : LLVMConstNull(vec_type(G, JITC_BOOL));
  case OP_ISINF:
    if (!f) return LLVMConstNull(vec_type(G, JITC_BOOL));
    return fcmp(G, LLVMRealOEQ, intr1(G, "llvm.fabs", a), vconst_f(G, at, INFINITY));
  case OP_SIGNBIT: /* the sign bit, a NaN's too: as an integer's */
    if (f) return icmp(G, LLVMIntSLT, LLVMBuildBitCast(B, a, vec_type(G, at == JITC_FLOAT32 ? JITC_INT32 : JITC_INT64), ""),
                       vzero(G, at == JITC_FLOAT32 ? JITC_INT32 : JITC_INT64));
    return uns ? LLVMConstNull(vec_type(G, JITC_BOOL)) : icmp(G, LLVMIntSLT, a, vzero(G, at));
  case OP_ISFINITE:
    if (!f) return LLVMConstAllOnes(vec_type(G, JITC_BOOL));
    return fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", a), vconst_f(G, at, INFINITY));
  case OP_LDEXP: case OP_FREXP: case OP_FREXP_EXP: case OP_MODF: case OP_MODF_INT:
    return math_mixed(G, n->op, at, args);
  default:
    if (!f || !oi->libm) unreachable();
    return math_gen(G, n->op, t, args, n->nargs);
  }
}

/* The operation of node n: its operands, then gen_arith, which an
** operation on 16-bit floats reaches through cpu/half.c's functions: on the
** operands widened to float32, its result narrowed. */
static LLVMValueRef gen_op(Gen *G, const Node *n) {
  LLVMValueRef args[3] = {NULL, NULL, NULL}, wide[3] = {NULL, NULL, NULL};
  for (int k = 0; k < n->nargs; k++) args[k] = gen_node(G, n->args[k]);
  if (cx_involved(n)) return cx_op(G, n, args);
  if (n->op == OP_CAST) return conv_cast(G, args[0], n->args[0]->type, n->type);
  if (n->op == OP_WHERE || !is_half(n->args[0]->type)) return gen_arith(G, n, args);
  for (int k = 0; k < n->nargs; k++) wide[k] = conv_widen(G, n->args[k]->type, args[k]);
  LLVMValueRef r = half_bits_op(G, n, args, wide);
  if (r) return r;
  r = gen_arith(G, n, wide);
  return is_half(n->type) ? half_result(G, n, r, args, wide) : r;
}

/* The block's scratch of temporary t. */
static LLVMValueRef scratch_of(Gen *G, int t) {
  LLVMValueRef off = LLVMConstInt(G->ti64, (unsigned long long)G->scr_off[t], 0);
  return LLVMBuildGEP2(G->B, G->ti8, G->scratch, &off, 1, "");
}

static LLVMValueRef gen_node(Gen *G, const Node *n) {
  switch (n->kind) {
  case N_CONST:
    if (is_half(n->type)) return conv_const(G, n->type, n->k.f);
    if (dtype_is_complex(n->type)) return cx_const(G, n->type, n->k.z[0], n->k.z[1]);
    if (dtype_is_float(n->type)) return vconst_f(G, n->type, n->k.f);
    return vconst_i(G, n->type, n->k.i);
  case N_LOAD: {
    int s = n->slot;
    if (!G->load[s]) G->load[s] = load_array(G, s);
    return G->load[s];
  }
  case N_PARAM: return G->par[n->slot];
  case N_INDEX: {
    LLVMValueRef iota[W];
    for (int k = 0; k < W; k++) iota[k] = LLVMConstInt(G->ti64, (unsigned)k, 0);
    return LLVMBuildAdd(G->B, splat(G, G->i), LLVMConstVector(iota, W), "");
  }
  case N_TEMP:
    /* Not computed in this group: an earlier group left it in scratch. */
    if (!G->tmp[n->slot])
      G->tmp[n->slot] = load_vec(G, G->prog->temps[n->slot], scratch_of(G, n->slot),
                                 LLVMBuildSub(G->B, G->i, G->blk, ""));
    return G->tmp[n->slot];
  case N_OP: return gen_op(G, n);
  }
  unreachable();
}

/* Statements [from, to) for the W elements at G->i (under G->mask when
** set).  Temporaries that later groups read also go to their scratch. */
void gen_body(Gen *G, int from, int to) {
  const Program *p = G->prog;
  memset(G->load, 0, sizeof(LLVMValueRef) * (size_t)(p->narrays ? p->narrays : 1));
  memset(G->tmp, 0, sizeof(LLVMValueRef) * (size_t)(p->ntemps ? p->ntemps : 1));
  for (int s = from; s < to; s++) {
    const IrStmt *st = &p->stmts[s];
    LLVMValueRef v = gen_node(G, st->value);
    if (st->kind == IR_LET) {
      G->tmp[st->slot] = v;
      if (G->scr_off[st->slot] >= 0)
        store_vec(G, p->temps[st->slot], scratch_of(G, st->slot),
                  LLVMBuildSub(G->B, G->i, G->blk, ""), v);
      continue;
    }
    if (st->kind == IR_REDUCE) {
      red_update(G, s, v);
      continue;
    }
    store_vec(G, p->arrays[st->slot].dtype, G->arr[st->slot], G->i, v);
  }
}

/* ---- the shape of the kernel ----
**
** LLVM's instruction schedulers and a few other passes take time
** quadratic in the size of a basic block, so one loop body holding a
** whole large program (a thousand outputs, a long chain of lets) took
** seconds to compile and ten thousand statements minutes.  A program
** larger than GROUP_COST is cut into groups (split.c), each its own
** function and loop, and the thread's range is walked in blocks of `blk`
** elements: every group runs over the block before the next group starts.
** A temporary read by a later group than the one computing it is kept for
** the block in scratch memory, which cpu_run allocates per call and passes
** after the parameters (run_range).  Programs of one group get exactly the
** single loop they always had. */

/* Rough instructions per group (split.c's cost of a statement). */
#define GROUP_COST 256

/* In the cache key (cpu/build.c): what changes the code generated. */
const char cpu_gen_stamp[] = "width " STR(W) " group_cost " STR(GROUP_COST) " reduce_cost "
                             STR(SPLIT_REDUCE_COST) " rb " STR(RB)
                             " built " __DATE__ " " __TIME__;
/* Scratch per call: the block is made no larger than fits this (but at
** least W elements); and the largest block. */
#define SCRATCH_BYTES (64 * 1024)
#define MAX_BLOCK 1024

/* The groups of p (gstart, as split_program gives) and, for several, the
** block size and each crossing temporary's offset in the scratch (scr_off,
** -1 for the others), then the reductions' lanes from *rstate on.  Returns
** the number of groups (-1: out of memory) and the scratch bytes a call
** needs in *bytes. */
static int plan_groups(const Program *p, int *gstart, int *blk, int64_t *scr_off, size_t *bytes,
                       size_t *rstate) {
  bool *cross = calloc((size_t)p->ntemps + 1, sizeof(bool));
  size_t per_elem = 0;
  int ng = cross ? split_program(p, GROUP_COST, gstart, cross, &per_elem) : -1;
  *bytes = 0;
  *blk = per_elem ? (int)(SCRATCH_BYTES / per_elem) / W * W : MAX_BLOCK;
  *blk = *blk > MAX_BLOCK ? MAX_BLOCK : *blk < W ? W : *blk;
  for (int t = 0; ng > 1 && t < p->ntemps; t++)
    if (cross[t]) {
      scr_off[t] = (int64_t)*bytes;
      *bytes += jitc_dtype_size(p->temps[t]) * (size_t)*blk;
      *bytes = (*bytes + 63) / 64 * 64;
    }
  *rstate = *bytes;
  if (ng > 1) *bytes += (size_t)p->nreduce * RSTATE;
  free(cross);
  return ng;
}

size_t cpu_gen_scratch(const Program *p) {
  int *gstart = malloc(sizeof(int) * ((size_t)p->nstmts + 2));
  int64_t *off = malloc(sizeof(int64_t) * ((size_t)p->ntemps + 1));
  int blk;
  size_t bytes = SIZE_MAX, rstate;
  if (gstart && off && plan_groups(p, gstart, &blk, off, &bytes, &rstate) < 0) bytes = SIZE_MAX;
  free(gstart);
  free(off);
  return bytes;
}

/* Emits from the current block the loop over [lo, hi) for statements
** [from, to), then appends the block `done` and leaves the builder there:
**   loop:   for (i = lo; i + W <= hi; i += W) body(full vectors)
**   tail:   if (i < hi) body(masked to hi - i lanes) */
static void gen_loop(Gen *G, LLVMValueRef fn, int from, int to, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMBuilderRef B = G->B;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(G->C, fn, "loop");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(G->C, fn, "body");
  LLVMBasicBlockRef tailc = LLVMAppendBasicBlockInContext(G->C, fn, "tail.check");
  LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(G->C, fn, "tail");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, fn, "done");
  /* last = hi - W: the loop runs while i <= last, without overflow since
  ** hi >= 0. */
  LLVMValueRef last = LLVMBuildSub(B, hi, LLVMConstInt(G->ti64, W, 0), "last");
  LLVMBuildBr(B, head);

  LLVMPositionBuilderAtEnd(B, head);
  LLVMValueRef i = LLVMBuildPhi(B, G->ti64, "i");
  red_phis(G, from, to, pre, 0);
  LLVMBuildCondBr(B, icmp(G, LLVMIntSLE, i, last), body, tailc);

  LLVMPositionBuilderAtEnd(B, body);
  G->i = i;
  G->mask = NULL;
  gen_body(G, from, to);
  LLVMValueRef next = LLVMBuildAdd(B, i, LLVMConstInt(G->ti64, W, 0), "i.next");
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, head);
  LLVMValueRef inc[2] = {lo, next};
  LLVMBasicBlockRef incb[2] = {pre, body_end};
  LLVMAddIncoming(i, inc, incb, 2);
  red_phis(G, from, to, body_end, 1);

  LLVMPositionBuilderAtEnd(B, tailc);
  LLVMBuildCondBr(B, icmp(G, LLVMIntSLT, i, hi), tail, done);

  LLVMPositionBuilderAtEnd(B, tail);
  G->i = i;
  LLVMValueRef iota[W];
  for (int k = 0; k < W; k++) iota[k] = LLVMConstInt(G->ti64, (unsigned)k, 0);
  LLVMValueRef rem = LLVMBuildSub(B, hi, i, "rem");
  G->mask = icmp(G, LLVMIntSLT, LLVMConstVector(iota, W), splat(G, rem));
  red_phis(G, from, to, NULL, 2);
  gen_body(G, from, to);
  LLVMBasicBlockRef tail_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, done);

  LLVMPositionBuilderAtEnd(B, done);
  red_phis(G, from, to, tailc, 3);
  red_phis(G, from, to, tail_end, 4);
}

/* A function named `name` of the kernel's parameters (begin, end, arrays,
** params), nounwind, with a 64-byte aligned frame: the vector math
** functions spill whole vectors, and with the caller's 16-byte alignment the
** speed of exp(a) depended on where the process's stack happened to start
** (8 or 13 ms, per process).  A group (nptrs >= 0) takes instead (begin,
** end, params, scratch) and its nptrs arrays, each noalias: the arrays do
** not overlap, and saying so spares LLVM's schedulers a dependence between
** every two stores. */
LLVMValueRef new_fn(Gen *G, const char *name, int nptrs) {
  bool group = nptrs >= 0;
  int np = group ? 4 + nptrs : 4;
  LLVMTypeRef *params = malloc(sizeof(LLVMTypeRef) * (size_t)np);
  if (!params) return NULL;
  for (int k = 0; k < np; k++) params[k] = k < 2 ? G->ti64 : G->tptr;
  LLVMTypeRef fty = LLVMFunctionType(G->tvoid, params, (unsigned)np, 0);
  free(params);
  LLVMValueRef fn = LLVMAddFunction(G->M, name, fty);
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  for (int k = 3; k <= np; k++)
    LLVMAddAttributeAtIndex(fn, (unsigned)k, LLVMCreateEnumAttribute(G->C, noalias, 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(G->C, nounwind, 0));
  unsigned alignstack = LLVMGetEnumAttributeKindForName("alignstack", 10);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(G->C, alignstack, 64));
  if (group) {
    /* Each group is compiled on its own: that is the point of groups. */
    unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(G->C, noinline, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
  }
  static const char *const names[2][4] = {{"begin", "end", "arrays", "params"},
                                          {"begin", "end", "params", "scratch"}};
  for (unsigned k = 0; k < 4; k++)
    LLVMSetValueName2(LLVMGetParam(fn, k), names[group][k], strlen(names[group][k]));
  return fn;
}

static void mark_used(const Node *n, int stamp, int *arr_used, int *par_used) {
  if (n->kind == N_LOAD) arr_used[n->slot] = stamp;
  if (n->kind == N_PARAM) par_used[n->slot] = stamp;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++) mark_used(n->args[k], stamp, arr_used, par_used);
}

/* Loads in the current block array pointer s from the table `arrays`. */
LLVMValueRef load_array_ptr(Gen *G, LLVMValueRef arrays, int s) {
  LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)s, 0);
  LLVMValueRef pp = LLVMBuildGEP2(G->B, G->tptr, arrays, &idx, 1, "");
  char name[80];
  snprintf(name, sizeof name, "%s", G->prog->arrays[s].name);
  return LLVMBuildLoad2(G->B, G->tptr, pp, name);
}

/* Loads in the current block the parameters that par_used marks with
** `stamp` (all when par_used is NULL) as splat vectors. */
void load_params(Gen *G, LLVMValueRef pars, const int *par_used, int stamp) {
  const Program *p = G->prog;
  for (int s = 0; s < p->nparams; s++) {
    if (par_used && par_used[s] != stamp) continue;
    jitc_dtype t = p->params[s].type;
    LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)s * sizeof(ParamSlot), 0);
    LLVMValueRef pp = LLVMBuildGEP2(G->B, G->ti8, pars, &idx, 1, "");
    if (dtype_is_complex(t)) {
      G->par[s] = cx_param(G, t, pp, p->params[s].name);
      continue;
    }
    LLVMValueRef v = LLVMBuildLoad2(G->B, mem_type(G, t), pp, p->params[s].name);
    if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstInt(G->ti8, 0, 0));
    G->par[s] = splat(G, v);
  }
}

/* A loop over [lo, hi) in steps of `step` elements, opened and closed
** around its body:
**   head:  b = phi(lo, bend); if (b < hi) run else exit
**   run:   bend = hi - b > step ? b + step : hi (no overflow); the body */
typedef struct StepLoop {
  LLVMBasicBlockRef pre, head, exit;
  LLVMValueRef lo, b, bend;
} StepLoop;

static void step_open(Gen *G, LLVMValueRef fn, StepLoop *L, LLVMValueRef lo, LLVMValueRef hi,
                      int64_t step, const char *const names[4]) {
  LLVMBuilderRef B = G->B;
  L->pre = LLVMGetInsertBlock(B);
  L->lo = lo;
  L->head = LLVMAppendBasicBlockInContext(G->C, fn, names[0]);
  LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(G->C, fn, names[1]);
  L->exit = LLVMAppendBasicBlockInContext(G->C, fn, names[2]);
  LLVMBuildBr(B, L->head);
  LLVMPositionBuilderAtEnd(B, L->head);
  L->b = LLVMBuildPhi(B, G->ti64, names[3]);
  LLVMBuildCondBr(B, icmp(G, LLVMIntSLT, L->b, hi), run, L->exit);
  LLVMPositionBuilderAtEnd(B, run);
  LLVMValueRef k = LLVMConstInt(G->ti64, (unsigned long long)step, 0);
  LLVMValueRef more = icmp(G, LLVMIntSGT, LLVMBuildSub(B, hi, L->b, ""), k);
  L->bend = sel(G, more, LLVMBuildAdd(B, L->b, k, ""), hi);
}

/* Closes L from the current block and leaves the builder at its exit. */
static void step_close(Gen *G, StepLoop *L) {
  LLVMBasicBlockRef last = LLVMGetInsertBlock(G->B);
  LLVMBuildBr(G->B, L->head);
  LLVMValueRef inc[2] = {L->lo, L->bend};
  LLVMBasicBlockRef incb[2] = {L->pre, last};
  LLVMAddIncoming(L->b, inc, incb, 2);
  LLVMPositionBuilderAtEnd(G->B, L->exit);
}

static const char *const block_names[4] = {"block", "block.run", "exit", "b"};
static const char *const rblock_names[4] = {"rblock", "rblock.run", "rblock.exit", "rb"};

/* Builds the split kernel `fname` of ng groups (gstart as split_program
** gives) over blocks of blk elements:
**   fname:     scratch = the address in the slot after the parameters
**              for (b = begin; b < end; b += blk)
**                for each group g: fname.gG(b, min(b + blk, end), params, scratch,
**                                          the group's arrays...)
**   fname.gG:  the group's parameters, then gen_loop.
** With reductions, the loop over blocks of blk runs within each block of
** RB (blk is a multiple of W, so every lane keeps its elements), and each
** group with reductions keeps their lanes in the scratch between its
** calls: its first call in the block of RB starts them from the identity,
** every call puts them back, and after the block's last call the kernel
** calls fname.eG(rb, block end, params, scratch), which writes their
** Partials.  Everything per reduction is in its group's functions, so that
** the kernel stays small however many reductions there are. */
static int gen_split(Gen *G, const char *fname, const int *gstart, int ng, int blk,
                     size_t scratch_bytes) {
  const Program *p = G->prog;
  LLVMBuilderRef B = G->B;
  int *arr_used = calloc((size_t)p->narrays + 1, sizeof(int));
  int *par_used = calloc((size_t)p->nparams + 1, sizeof(int));
  int *slots = malloc(sizeof(int) * ((size_t)p->narrays + 1));
  LLVMValueRef *args = malloc(sizeof(LLVMValueRef) * ((size_t)p->narrays + 4));
  LLVMValueRef kfn = new_fn(G, fname, -1);
  int rc = -1;
  if (!arr_used || !par_used || !slots || !args || !kfn) goto out;
  LLVMValueRef begin = LLVMGetParam(kfn, 0), end = LLVMGetParam(kfn, 1);
  LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(G->C, kfn, "entry"));
  /* The scratch's address follows the parameters (run_range). */
  LLVMValueRef scratch = LLVMConstNull(G->tptr);
  if (scratch_bytes) {
    LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)p->nparams * sizeof(ParamSlot), 0);
    LLVMValueRef pp = LLVMBuildGEP2(B, G->ti8, LLVMGetParam(kfn, 3), &idx, 1, "");
    scratch = LLVMBuildLoad2(B, G->tptr, pp, "scratch");
  }
  StepLoop RL, L;
  if (p->nreduce) {
    step_open(G, kfn, &RL, begin, end, RB, rblock_names);
    begin = RL.b;
    end = RL.bend;
  }
  step_open(G, kfn, &L, begin, end, blk, block_names);
  for (int g = 0; g < ng; g++) {
    int stamp = g + 1, n = 0;
    for (int s = gstart[g]; s < gstart[g + 1]; s++) {
      mark_used(p->stmts[s].value, stamp, arr_used, par_used);
      if (p->stmts[s].kind == IR_STORE) arr_used[p->stmts[s].slot] = stamp;
    }
    for (int s = 0; s < p->narrays; s++)
      if (arr_used[s] == stamp) slots[n++] = s;
    /* The call, in the kernel's loop. */
    args[0] = L.b;
    args[1] = L.bend;
    args[2] = LLVMGetParam(kfn, 3);
    args[3] = scratch;
    for (int k = 0; k < n; k++) args[4 + k] = load_array_ptr(G, LLVMGetParam(kfn, 2), slots[k]);
    char name[80];
    snprintf(name, sizeof name, "%s.g%d", fname, g);
    LLVMValueRef fn = new_fn(G, name, n);
    if (!fn) goto out;
    LLVMBuildCall2(B, LLVMGlobalGetValueType(fn), fn, args, (unsigned)(4 + n), "");
    LLVMBasicBlockRef at = LLVMGetInsertBlock(B);
    /* The group's function. */
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
    for (int k = 0; k < n; k++) G->arr[slots[k]] = LLVMGetParam(fn, (unsigned)(4 + k));
    load_params(G, LLVMGetParam(fn, 2), par_used, stamp);
    G->blk = LLVMGetParam(fn, 0);
    G->scratch = LLVMGetParam(fn, 3);
    bool red = red_some(G, gstart[g], gstart[g + 1]);
    if (red) {
      /* The block of RB this call is in: blocks start on its multiples. */
      G->rb = LLVMBuildAnd(B, G->blk, LLVMConstInt(G->ti64, (unsigned long long)-RB, 1), "rb");
      red_resume(G, gstart[g], gstart[g + 1], icmp(G, LLVMIntEQ, G->blk, G->rb));
    }
    gen_loop(G, fn, gstart[g], gstart[g + 1], G->blk, LLVMGetParam(fn, 1));
    if (red) red_move(G, gstart[g], gstart[g + 1], true);
    LLVMBuildRetVoid(B);
    LLVMPositionBuilderAtEnd(B, at);
  }
  step_close(G, &L);
  for (int g = 0; p->nreduce && g < ng; g++) {
    if (!red_some(G, gstart[g], gstart[g + 1])) continue;
    char name[80];
    snprintf(name, sizeof name, "%s.e%d", fname, g);
    LLVMValueRef fn = new_fn(G, name, 0);
    if (!fn) goto out;
    LLVMValueRef eargs[4] = {RL.b, RL.bend, LLVMGetParam(kfn, 3), scratch};
    LLVMBuildCall2(B, LLVMGlobalGetValueType(fn), fn, eargs, 4, "");
    LLVMBasicBlockRef at = LLVMGetInsertBlock(B);
    red_finish_fn(G, fn, gstart[g], gstart[g + 1]);
    LLVMPositionBuilderAtEnd(B, at);
  }
  if (p->nreduce) step_close(G, &RL);
  LLVMBuildRetVoid(B);
  rc = 0;
out:
  free(arr_used);
  free(par_used);
  free(slots);
  free(args);
  return rc;
}

/* Builds module M with the kernel `fname`: one function whose entry block
** loads the array pointers and the parameters, then one loop (gen_loop)
** over [begin, end), within a loop over the blocks of RB when there are
** reductions; or, for a program of several groups, gen_split. */
static int gen_module(Gen *G, const char *fname) {
  const Program *p = G->prog;
  int *gstart = malloc(sizeof(int) * (size_t)(p->nstmts + 2));
  int rc = -1, blk;
  size_t bytes, rstate;
  if (!gstart) goto out;
  int ng = plan_groups(p, gstart, &blk, G->scr_off, &bytes, &rstate);
  if (ng < 0) goto out;
  for (int r = 0; r < p->nreduce; r++) G->racc[r].scr = (int64_t)(rstate + (size_t)r * RSTATE);
  if (G->gt->rows) { /* the row form: of a program of one group */
    rc = ng == 1 ? G->gt->rows(G, fname) : -1;
    goto out;
  }
  if (ng > 1) {
    rc = gen_split(G, fname, gstart, ng, blk, bytes);
    goto out;
  }
  LLVMValueRef fn = new_fn(G, fname, -1);
  if (!fn) goto out;
  LLVMPositionBuilderAtEnd(G->B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
  for (int s = 0; s < p->narrays; s++) G->arr[s] = load_array_ptr(G, LLVMGetParam(fn, 2), s);
  load_params(G, LLVMGetParam(fn, 3), NULL, 0);
  LLVMValueRef begin = LLVMGetParam(fn, 0), end = LLVMGetParam(fn, 1);
  if (!p->nreduce) {
    gen_loop(G, fn, 0, p->nstmts, begin, end);
  } else {
    red_load_out(G, LLVMGetParam(fn, 3));
    StepLoop RL;
    step_open(G, fn, &RL, begin, end, RB, rblock_names);
    G->rb = RL.b;
    red_start(G);
    gen_loop(G, fn, 0, p->nstmts, RL.b, RL.bend);
    red_end(G, 0, p->nstmts, RL.bend);
    step_close(G, &RL);
  }
  LLVMBuildRetVoid(G->B);
  rc = 0;
out:
  free(gstart);
  return rc;
}

LLVMModuleRef cpu_gen_module(const GenTarget *gt, const Program *p, const char *fname,
                             LLVMContextRef *Cp) {
  Gen G = {0};
  G.gt = gt;
  G.prog = p;
  G.C = LLVMContextCreate();
  *Cp = G.C;
  G.M = LLVMModuleCreateWithNameInContext("jitc", G.C);
  G.B = LLVMCreateBuilderInContext(G.C);
  G.ti1 = LLVMInt1TypeInContext(G.C);
  G.ti8 = LLVMInt8TypeInContext(G.C);
  G.ti16 = LLVMInt16TypeInContext(G.C);
  G.ti32 = LLVMInt32TypeInContext(G.C);
  G.ti64 = LLVMInt64TypeInContext(G.C);
  G.tf32 = LLVMFloatTypeInContext(G.C);
  G.tf64 = LLVMDoubleTypeInContext(G.C);
  G.tptr = LLVMPointerTypeInContext(G.C, 0);
  G.tvoid = LLVMVoidTypeInContext(G.C);
  size_t na = (size_t)p->narrays + 1, np = (size_t)p->nparams + 1, nt = (size_t)p->ntemps + 1;
  G.arr = calloc(na, sizeof *G.arr);
  G.load = calloc(na, sizeof *G.load);
  G.par = calloc(np, sizeof *G.par);
  G.tmp = calloc(nt, sizeof *G.tmp);
  G.scr_off = malloc(nt * sizeof *G.scr_off);
  G.racc = calloc((size_t)p->nreduce + 1, sizeof *G.racc);
  G.rnum = malloc(((size_t)p->nstmts + 1) * sizeof *G.rnum);
  for (size_t t = 0; G.scr_off && t < nt; t++) G.scr_off[t] = -1;
  if (G.racc && G.rnum) red_init(&G);
  LLVMModuleRef M = G.M;
  if (!G.arr || !G.load || !G.par || !G.tmp || !G.scr_off || !G.racc || !G.rnum ||
      gen_module(&G, fname) != 0) {
    LLVMDisposeModule(M);
    M = NULL;
  } else {
    /* The machine's attributes on the kernel and its groups, so that what
    ** the optimiser sees and what --emit llvm shows is what runs.
    ** min-legal-vector-width keeps the vector math's arguments in registers
    ** of the level's width (their ABI) on CPUs that prefer narrower vectors. */
    char width[8];
    snprintf(width, sizeof width, "%d", gt->vec_bits);
    const char *attrs[3][2] = {{"target-cpu", gt->cpu}, {"target-features", gt->features},
                               {"min-legal-vector-width", width}};
    for (LLVMValueRef fn = LLVMGetFirstFunction(M); fn; fn = LLVMGetNextFunction(fn)) {
      if (LLVMIsDeclaration(fn)) continue;
      for (int a = 0; a < 3; a++)
        if (*attrs[a][1])
          LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                  LLVMCreateStringAttribute(G.C, attrs[a][0], (unsigned)strlen(attrs[a][0]),
                                                            attrs[a][1], (unsigned)strlen(attrs[a][1])));
    }
  }
  LLVMDisposeBuilder(G.B);
  free(G.arr);
  free(G.load);
  free(G.par);
  free(G.tmp);
  free(G.scr_off);
  free(G.racc);
  free(G.rnum);
  return M;
}

#endif /* JITC_HAVE_LLVM */
