/*
** cpu/complex.c -- complex64 and complex128 in the cpu target's generated
** code: their values in registers and memory, their arithmetic,
** comparisons, casts and functions.  Part of generation (cpu/cpu.h): it
** builds LLVM IR and nothing else.  cpu/gen.c hands it every operation
** with a complex operand or result (cx_op), and the loads, stores,
** constants and parameters of the complex types.
**
** A complex value of m elements (m = W in the loop) is one vector of 2m
** parts: the real parts in lanes [0, m), the imaginary parts in [m, 2m).
** Each part is then a plain vector of the part's float type, so the
** arithmetic is the real types' vector code on the halves, and what works
** part by part (+, -, unary -, casts between the complex types, where's
** select, the reductions' sums) works on the whole vector at once.
** Memory holds NumPy's layout, the parts of each element side by side: a
** load reads 2m parts and splits the even lanes from the odd ones (one or
** two shuffles per register), a store interleaves them back; the masked
** tail masks each element's two parts together.
**
** Everything but exp and angle gives interp's bits (semantics.h,
** sem_complex.h): * is fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br), exact on
** every level: llvm.fma, an instruction from x86-64-v3 on; below, complex64's
** in float64 (fmaf_f64) and complex128's the C library's fma one lane at a
** time (llvm.fma's lowering there); / is Smith's algorithm with its three
** branches computed and selected, since each is free of traps; reciprocal,
** abs, the order, the picks and clip are NumPy's loops likewise, rint each
** part.  The other functions (log, sqrt, **, sign, ...) call the semantics
** themselves, the very code interp runs (cpu/host.c, W elements a call),
** but for two: angle is the vector math's arctan2, as the real arctan2, and
** exp, the common one, computes its usual lanes from the vector math
** (e^re (cos im, sin im), complex64 in float64, complex128 from 1-ulp
** functions) and leaves the others (a part not finite, a real part that
** overflows) to the semantics.
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <float.h>
#include <math.h>

/* In the cache key (cpu/build.c): the build of this file. */
const char cpu_complex_stamp[] = "built " __DATE__ " " __TIME__;

/* ---- the two halves of a value ---- */

static unsigned nlanes(LLVMValueRef v) { return LLVMGetVectorSize(LLVMTypeOf(v)); }

LLVMValueRef cx_part(Gen *G, LLVMValueRef v, int k) {
  unsigned m = nlanes(v) / 2, idx[W];
  for (unsigned j = 0; j < m; j++) idx[j] = (unsigned)k * m + j;
  return shuffle(G, v, NULL, idx, m);
}

LLVMValueRef cx_pack(Gen *G, LLVMValueRef re, LLVMValueRef im) {
  unsigned m = nlanes(re), idx[2 * W];
  for (unsigned j = 0; j < 2 * m; j++) idx[j] = j;
  return shuffle(G, re, im, idx, 2 * m);
}

/* An m-lane condition for both halves of a complex value. */
LLVMValueRef cx_both(Gen *G, LLVMValueRef c) {
  unsigned m = nlanes(c), idx[2 * W];
  for (unsigned j = 0; j < 2 * m; j++) idx[j] = j % m;
  return shuffle(G, c, NULL, idx, 2 * m);
}

/* Memory's order (re0, im0, re1, im1, ...) to the halves, and back. */
static LLVMValueRef from_memory(Gen *G, LLVMValueRef v) {
  unsigned m = nlanes(v) / 2, idx[2 * W];
  for (unsigned j = 0; j < 2 * m; j++) idx[j] = j < m ? 2 * j : 2 * (j - m) + 1;
  return shuffle(G, v, NULL, idx, 2 * m);
}
static LLVMValueRef to_memory(Gen *G, LLVMValueRef v) {
  unsigned m = nlanes(v) / 2, idx[2 * W];
  for (unsigned j = 0; j < 2 * m; j++) idx[j] = j % 2 ? m + j / 2 : j / 2;
  return shuffle(G, v, NULL, idx, 2 * m);
}
/* The mask of memory's 2W parts: each element's two side by side. */
static LLVMValueRef memory_mask(Gen *G, LLVMValueRef mask) {
  unsigned idx[2 * W];
  for (unsigned j = 0; j < 2 * W; j++) idx[j] = j / 2;
  return shuffle(G, mask, NULL, idx, 2 * W);
}

static LLVMTypeRef part_type(Gen *G, jitc_dtype t) { return scalar_type(G, t); }
static LLVMValueRef vzero_of(Gen *G, jitc_dtype t) { return LLVMConstNull(vec_type(G, t)); }
static LLVMValueRef part_const(Gen *G, LLVMValueRef like, double x) {
  LLVMValueRef v[2 * W];
  for (unsigned k = 0; k < nlanes(like); k++) v[k] = LLVMConstReal(LLVMGetElementType(LLVMTypeOf(like)), x);
  return LLVMConstVector(v, nlanes(like));
}

/* ---- memory, constants, parameters ---- */

/* The W elements of complex type t at element idx of base, under mask
** (lanes out of it read as 0) when not NULL. */
static LLVMValueRef load_masked(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx,
                                LLVMValueRef mask) {
  LLVMTypeRef pt = part_type(G, t), vt = LLVMVectorType(pt, 2 * W);
  LLVMValueRef p = LLVMBuildGEP2(G->B, LLVMArrayType(pt, 2), base, &idx, 1, "");
  unsigned align = (unsigned)jitc_dtype_size(t) / 2;
  LLVMValueRef v;
  if (mask) {
    LLVMTypeRef types[2] = {vt, G->tptr};
    LLVMValueRef args[4] = {p, LLVMConstInt(G->ti32, align, 0), memory_mask(G, mask),
                            LLVMConstNull(vt)};
    v = intrinsic(G, "llvm.masked.load", types, 2, args, 4);
  } else {
    v = LLVMBuildLoad2(G->B, vt, p, "");
    LLVMSetAlignment(v, align);
  }
  return from_memory(G, v);
}

static void store_masked(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx,
                         LLVMValueRef v, LLVMValueRef mask) {
  LLVMTypeRef pt = part_type(G, t), vt = LLVMVectorType(pt, 2 * W);
  LLVMValueRef p = LLVMBuildGEP2(G->B, LLVMArrayType(pt, 2), base, &idx, 1, "");
  unsigned align = (unsigned)jitc_dtype_size(t) / 2;
  v = to_memory(G, v);
  if (mask) {
    LLVMTypeRef types[2] = {vt, G->tptr};
    LLVMValueRef args[4] = {v, p, LLVMConstInt(G->ti32, align, 0), memory_mask(G, mask)};
    intrinsic(G, "llvm.masked.store", types, 2, args, 4);
  } else {
    LLVMSetAlignment(LLVMBuildStore(G->B, v, p), align);
  }
}

LLVMValueRef cx_load(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx) {
  return load_masked(G, t, base, idx, G->mask);
}

void cx_store(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v) {
  store_masked(G, t, base, idx, v, G->mask);
}

LLVMValueRef cx_const(Gen *G, jitc_dtype t, double re, double im) {
  LLVMValueRef v[2 * W];
  for (int k = 0; k < W; k++) {
    v[k] = LLVMConstReal(part_type(G, t), re);
    v[W + k] = LLVMConstReal(part_type(G, t), im);
  }
  return LLVMConstVector(v, 2 * W);
}

LLVMValueRef cx_param(Gen *G, jitc_dtype t, LLVMValueRef slot, const char *name) {
  LLVMTypeRef pt = part_type(G, t);
  LLVMValueRef one = LLVMConstInt(G->ti64, 1, 0);
  LLVMValueRef re = LLVMBuildLoad2(G->B, pt, slot, name);
  LLVMValueRef im = LLVMBuildLoad2(G->B, pt, LLVMBuildGEP2(G->B, pt, slot, &one, 1, ""), "");
  re = splat(G, re);
  return cx_pack(G, re, splat(G, im));
}

/* ---- arithmetic ---- */

static LLVMValueRef v_add(Gen *G, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(G->B, a, b, ""); }
static LLVMValueRef v_sub(Gen *G, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(G->B, a, b, ""); }
static LLVMValueRef v_mul(Gen *G, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(G->B, a, b, ""); }
static LLVMValueRef v_div(Gen *G, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(G->B, a, b, ""); }
/* fmaf without an FMA unit (x86-64 and -v2, where llvm.fma is a call of
** the C library's fmaf per lane), exactly, in float64: a * b is exact
** there; the sum s, rounded to nearest, becomes the sum rounded to odd (an
** inexact s with an even last bit moves one ulp toward the exact sum,
** whose error TwoSum gives), which rounds to float32 as the exact sum
** would, float64 having more than twice float32's bits plus two. */
static LLVMValueRef fmaf_f64(Gen *G, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMBuilderRef B = G->B;
  LLVMTypeRef vd = LLVMVectorType(G->tf64, nlanes(a)), vi = LLVMVectorType(G->ti64, nlanes(a));
  LLVMValueRef x = LLVMBuildFPExt(B, a, vd, ""), y = LLVMBuildFPExt(B, b, vd, "");
  LLVMValueRef z = LLVMBuildFPExt(B, c, vd, "");
  LLVMValueRef p = LLVMBuildFMul(B, x, y, "");
  LLVMValueRef s = LLVMBuildFAdd(B, p, z, "");
  LLVMValueRef bb = LLVMBuildFSub(B, s, p, "");
  LLVMValueRef pe = LLVMBuildFSub(B, p, LLVMBuildFSub(B, s, bb, ""), "");
  LLVMValueRef err = LLVMBuildFAdd(B, pe, LLVMBuildFSub(B, z, bb, ""), "");
  LLVMValueRef bits = LLVMBuildBitCast(B, s, vi, "");
  LLVMValueRef zero = LLVMConstNull(vi), ones[2 * W];
  for (unsigned k = 0; k < nlanes(a); k++) ones[k] = LLVMConstInt(G->ti64, 1, 0);
  LLVMValueRef one = LLVMConstVector(ones, nlanes(a)); /* a's lanes: the tree's halves too */
  LLVMValueRef even = icmp(G, LLVMIntEQ, LLVMBuildAnd(B, bits, one, ""), zero);
  LLVMValueRef adj = LLVMBuildAnd(B, even, fcmp(G, LLVMRealONE, err, LLVMConstNull(vd)), "");
  /* away from zero when err has s's sign, else toward it */
  LLVMValueRef ebits = LLVMBuildBitCast(B, err, vi, "");
  LLVMValueRef away = icmp(G, LLVMIntSGE, LLVMBuildXor(B, ebits, bits, ""), zero);
  LLVMValueRef step = sel(G, away, one, LLVMConstAllOnes(vi));
  bits = sel(G, adj, LLVMBuildAdd(B, bits, step, ""), bits);
  return LLVMBuildFPTrunc(B, LLVMBuildBitCast(B, bits, vd, ""), LLVMTypeOf(a), "");
}

static LLVMValueRef fma3(Gen *G, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  if (G->gt->level >= 1 && G->gt->level <= 2 && LLVMGetElementType(t) == G->tf32)
    return fmaf_f64(G, a, b, c);
  LLVMValueRef args[3] = {a, b, c};
  return intrinsic(G, "llvm.fma", &t, 1, args, 3);
}
static LLVMValueRef and2(Gen *G, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildAnd(G->B, a, b, ""); }
static LLVMValueRef or2(Gen *G, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildOr(G->B, a, b, ""); }

/* NumPy's multiply on FMA hosts, as sem_complex.h. */
LLVMValueRef cx_mul(Gen *G, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef ar = cx_part(G, a, 0), ai = cx_part(G, a, 1);
  LLVMValueRef br = cx_part(G, b, 0), bi = cx_part(G, b, 1);
  LLVMValueRef re = fma3(G, ar, br, LLVMBuildFNeg(G->B, v_mul(G, ai, bi), ""));
  LLVMValueRef im = fma3(G, ar, bi, v_mul(G, ai, br));
  return cx_pack(G, re, im);
}

/* NumPy's divide: Smith's algorithm.  The three cases are computed for
** every lane and selected (a NaN divisor takes the last, as the C code's
** comparisons send it). */
static LLVMValueRef cx_div(Gen *G, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef ar = cx_part(G, a, 0), ai = cx_part(G, a, 1);
  LLVMValueRef br = cx_part(G, b, 0), bi = cx_part(G, b, 1);
  LLVMValueRef abr = intr1(G, "llvm.fabs", br), abi = intr1(G, "llvm.fabs", bi);
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(br)), one = part_const(G, br, 1.0);
  LLVMValueRef first = fcmp(G, LLVMRealOGE, abr, abi);
  LLVMValueRef zr = fcmp(G, LLVMRealOEQ, abr, zero);
  LLVMValueRef bothz = and2(G, zr, fcmp(G, LLVMRealOEQ, abi, zero));
  /* |br| >= |bi| */
  LLVMValueRef rat = v_div(G, bi, br);
  LLVMValueRef scl = v_div(G, one, v_add(G, br, v_mul(G, bi, rat)));
  LLVMValueRef re1 = v_mul(G, v_add(G, ar, v_mul(G, ai, rat)), scl);
  LLVMValueRef im1 = v_mul(G, v_sub(G, ai, v_mul(G, ar, rat)), scl);
  /* both zero */
  LLVMValueRef re0 = v_div(G, ar, abr), im0 = v_div(G, ai, abr);
  /* |br| < |bi| */
  LLVMValueRef rat2 = v_div(G, br, bi);
  LLVMValueRef scl2 = v_div(G, one, v_add(G, bi, v_mul(G, br, rat2)));
  LLVMValueRef re2 = v_mul(G, v_add(G, v_mul(G, ar, rat2), ai), scl2);
  LLVMValueRef im2 = v_mul(G, v_sub(G, v_mul(G, ai, rat2), ar), scl2);
  LLVMValueRef re = sel(G, first, sel(G, bothz, re0, re1), re2);
  LLVMValueRef im = sel(G, first, sel(G, bothz, im0, im1), im2);
  return cx_pack(G, re, im);
}

/* ---- comparisons ---- */

/* (One builder call per argument list here and below: the order of the
** instructions, which --emit llvm shows, must not depend on the C
** compiler's order of evaluating arguments.) */
static LLVMValueRef any_nan(Gen *G, LLVMValueRef v) {
  LLVMValueRef re = isnan_v(G, cx_part(G, v, 0));
  return or2(G, re, isnan_v(G, cx_part(G, v, 1)));
}

/* Comparison op (OP_LT .. OP_NE) of complex a and b, as sem_complex.h's
** C_LT ...: the real parts decide unless they are equal, and only where no
** part is NaN; equal real parts, the imaginary ones. */
LLVMValueRef cx_compare(Gen *G, OpId op, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef ar = cx_part(G, a, 0), ai = cx_part(G, a, 1);
  LLVMValueRef br = cx_part(G, b, 0), bi = cx_part(G, b, 1);
  LLVMValueRef req = fcmp(G, LLVMRealOEQ, ar, br);
  switch (op) {
  case OP_EQ: return and2(G, req, fcmp(G, LLVMRealOEQ, ai, bi));
  case OP_NE: {
    LLVMValueRef rne = fcmp(G, LLVMRealUNE, ar, br);
    return or2(G, rne, fcmp(G, LLVMRealUNE, ai, bi));
  }
  default: break;
  }
  static const LLVMRealPredicate strict[] = {LLVMRealOLT, LLVMRealOLT, LLVMRealOGT, LLVMRealOGT};
  static const LLVMRealPredicate then[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
  int k = op - OP_LT;
  LLVMValueRef nan = any_nan(G, a);
  nan = or2(G, nan, any_nan(G, b));
  LLVMValueRef real = fcmp(G, strict[k], ar, br);
  real = and2(G, real, LLVMBuildNot(G->B, nan, ""));
  return or2(G, real, and2(G, req, fcmp(G, then[k], ai, bi)));
}

/* clip's order (sem_complex.h's C_CLIP_LT): plainly lexicographic. */
static LLVMValueRef clip_lt(Gen *G, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef ar = cx_part(G, a, 0), ai = cx_part(G, a, 1);
  LLVMValueRef br = cx_part(G, b, 0), bi = cx_part(G, b, 1);
  LLVMValueRef req = fcmp(G, LLVMRealOEQ, ar, br);
  LLVMValueRef im = fcmp(G, LLVMRealOLT, ai, bi);
  return sel(G, req, im, fcmp(G, LLVMRealOLT, ar, br));
}

/* NumPy's clip: m = x where lo < x or x has a NaN part, else lo; then m
** where m < hi or m has a NaN part, else hi. */
static LLVMValueRef cx_clip(Gen *G, LLVMValueRef x, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMValueRef c = clip_lt(G, lo, x);
  c = or2(G, c, any_nan(G, x));
  LLVMValueRef m = sel(G, cx_both(G, c), x, lo);
  c = clip_lt(G, m, hi);
  c = or2(G, c, any_nan(G, m));
  return sel(G, cx_both(G, c), m, hi);
}

/* minimum, maximum (a when it has a NaN part or compares so), fmin, fmax
** (a when b has a NaN part or a compares so). */
static LLVMValueRef cx_pick(Gen *G, OpId op, LLVMValueRef a, LLVMValueRef b) {
  bool max = op == OP_MAXIMUM || op == OP_FMAX;
  bool nan_a = op == OP_MAXIMUM || op == OP_MINIMUM;
  LLVMValueRef nan = any_nan(G, nan_a ? a : b);
  LLVMValueRef c = or2(G, nan, cx_compare(G, max ? OP_GE : OP_LE, a, b));
  return sel(G, cx_both(G, c), a, b);
}

/* ---- functions ---- */

/* NumPy's reciprocal loop: r = im / re, 1 / (re + im r) and -r / that
** where |im| <= |re| (else the mirror), both computed and selected. */
static LLVMValueRef cx_reciprocal(Gen *G, LLVMValueRef a) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef re = cx_part(G, a, 0), im = cx_part(G, a, 1), one = part_const(G, re, 1.0);
  LLVMValueRef are = intr1(G, "llvm.fabs", re);
  LLVMValueRef first = fcmp(G, LLVMRealOLE, intr1(G, "llvm.fabs", im), are);
  LLVMValueRef r1 = v_div(G, im, re);
  LLVMValueRef d1 = v_add(G, re, v_mul(G, im, r1));
  LLVMValueRef x1 = v_div(G, one, d1);
  LLVMValueRef y1 = v_div(G, LLVMBuildFNeg(B, r1, ""), d1);
  LLVMValueRef r2 = v_div(G, re, im);
  LLVMValueRef d2 = v_add(G, v_mul(G, re, r2), im);
  LLVMValueRef x2 = v_div(G, r2, d2);
  LLVMValueRef y2 = v_div(G, LLVMBuildFNeg(B, one, ""), d2);
  LLVMValueRef x = sel(G, first, x1, x2);
  return cx_pack(G, x, sel(G, first, y1, y2));
}

/* NumPy's absolute value: the larger part m times sqrt(fma(r, r, 1)), r
** the smaller part over m (0 where m is 0); an infinite part gives inf,
** else a NaN part NaN.  Exact, as the fma is on every level. */
static LLVMValueRef cx_abs(Gen *G, LLVMValueRef a) {
  LLVMValueRef x = intr1(G, "llvm.fabs", cx_part(G, a, 0));
  LLVMValueRef y = intr1(G, "llvm.fabs", cx_part(G, a, 1));
  LLVMValueRef inf = part_const(G, x, INFINITY), zero = LLVMConstNull(LLVMTypeOf(x));
  LLVMValueRef xgt = fcmp(G, LLVMRealOGT, x, y);
  LLVMValueRef big = sel(G, xgt, x, y);
  LLVMValueRef small = sel(G, xgt, y, x);
  LLVMValueRef none = fcmp(G, LLVMRealOEQ, big, zero);
  none = or2(G, none, fcmp(G, LLVMRealOEQ, small, inf));
  LLVMValueRef r = sel(G, none, zero, v_div(G, small, big));
  LLVMValueRef m = intr1(G, "llvm.sqrt", fma3(G, r, r, part_const(G, x, 1.0)));
  m = v_mul(G, m, big);
  LLVMValueRef nan = isnan_v(G, x);
  nan = or2(G, nan, isnan_v(G, y));
  m = sel(G, nan, part_const(G, x, NAN), m);
  LLVMValueRef isinf = fcmp(G, LLVMRealOEQ, x, inf);
  isinf = or2(G, isinf, fcmp(G, LLVMRealOEQ, y, inf));
  return sel(G, isinf, inf, m);
}

/* The entry block's new slot for W elements of the largest type, 64-byte
** aligned: the arguments and result of a call of the semantics. */
static LLVMValueRef frame_slot(Gen *G) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(G->B);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(LLVMGetBasicBlockParent(here));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(G->C);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(b, first);
  else LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef s = LLVMBuildAlloca(b, LLVMArrayType(G->ti8, W * 16), "sem");
  LLVMSetAlignment(s, 64);
  LLVMDisposeBuilder(b);
  return s;
}

/* v (of type t, W lanes) to memory at p, in its array layout, and back. */
static void spill(Gen *G, jitc_dtype t, LLVMValueRef p, LLVMValueRef v) {
  LLVMValueRef zero = LLVMConstInt(G->ti64, 0, 0);
  if (dtype_is_complex(t)) {
    store_masked(G, t, p, zero, v, NULL);
    return;
  }
  if (t == JITC_BOOL) v = LLVMBuildZExt(G->B, v, LLVMVectorType(G->ti8, W), "");
  LLVMSetAlignment(LLVMBuildStore(G->B, v, p), 64);
}
static LLVMValueRef unspill(Gen *G, jitc_dtype t, LLVMValueRef p) {
  if (dtype_is_complex(t)) return load_masked(G, t, p, LLVMConstInt(G->ti64, 0, 0), NULL);
  LLVMValueRef v = LLVMBuildLoad2(G->B, LLVMVectorType(t == JITC_BOOL ? G->ti8 : scalar_type(G, t), W), p, "");
  LLVMSetAlignment(v, 64);
  if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)));
  return v;
}

/* Node n on the W elements args by the semantics themselves: a call of
** the library's cpu_host_sem (cpu/host.c) with the operands and the result
** in the frame, in their arrays' layout. */
static LLVMValueRef sem_call(Gen *G, const Node *n, LLVMValueRef *args) {
  LLVMValueRef p[4] = {frame_slot(G), NULL, NULL, NULL};
  for (int k = 0; k < n->nargs; k++) {
    p[k + 1] = frame_slot(G);
    spill(G, n->args[k]->type, p[k + 1], args[k]);
  }
  for (int k = n->nargs; k < 3; k++) p[k + 1] = LLVMConstNull(G->tptr);
  LLVMTypeRef params[6] = {G->ti32, G->tptr, G->tptr, G->tptr, G->tptr, G->ti32};
  LLVMTypeRef fty = LLVMFunctionType(G->tvoid, params, 6, 0);
  LLVMValueRef f = LLVMGetNamedFunction(G->M, CPU_HOST_SEM);
  if (!f) {
    f = LLVMAddFunction(G->M, CPU_HOST_SEM, fty);
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(G->C, kind, 0));
  }
  uint32_t code = cpu_host_code(n->op, n->type, n->args[n->op == OP_WHERE ? 1 : 0]->type);
  LLVMValueRef cargs[6] = {LLVMConstInt(G->ti32, code, 0), p[0], p[1], p[2], p[3],
                           LLVMConstInt(G->ti32, W, 0)};
  LLVMBuildCall2(G->B, fty, f, cargs, 6, "");
  return unspill(G, n->type, p[0]);
}

/* Whether some lane of condition c is true. */
static LLVMValueRef any_lane(Gen *G, LLVMValueRef c) { return intr1(G, "llvm.vector.reduce.or", c); }

/* exp(z) = e^re (cos im, sin im) where both parts are finite and re is
** at most glibc's threshold of scaling (88 for complex64, 709 for
** complex128), from the vector math: complex64 in float64 (its results
** rounded once from values within a few float64 ulp), complex128 from
** functions within 1 ulp (at most 3.5 ulp for each product).  A branch
** sends the rare vectors holding any other lane to the semantics (glibc's
** cexpf, cexp: infinities, NaN, overflow), whose lanes replace those. */
static LLVMValueRef cx_exp(Gen *G, const Node *n, LLVMValueRef a) {
  jitc_dtype t = n->type, ft = dtype_part(t);
  bool c64 = ft == JITC_FLOAT32;
  LLVMValueRef re = cx_part(G, a, 0), im = cx_part(G, a, 1);
  LLVMValueRef fast = fcmp(G, LLVMRealOLE, re, vconst_f(G, ft, c64 ? 88 : 709));
  fast = and2(G, fast, fcmp(G, LLVMRealOGT, re, vconst_f(G, ft, -INFINITY)));
  fast = and2(G, fast, fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", im), vconst_f(G, ft, INFINITY)));
  LLVMValueRef slow = LLVMBuildNot(G->B, fast, "");
  /* glibc's tiny imaginary parts: sin = im, cos = 1 */
  LLVMValueRef tiny = fcmp(G, LLVMRealOLE, intr1(G, "llvm.fabs", im), vconst_f(G, ft, c64 ? FLT_MIN : DBL_MIN));
  LLVMValueRef x = re, y = im;
  if (c64) {
    LLVMTypeRef vd = LLVMVectorType(G->tf64, W);
    x = LLVMBuildFPExt(G->B, re, vd, "");
    y = LLVMBuildFPExt(G->B, im, vd, "");
  }
  /* Outside the fast lanes the arguments are made 0, so that no vector
  ** function meets what it may get wrong. */
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
  x = sel(G, fast, x, zero);
  y = sel(G, fast, y, zero);
  LLVMValueRef e, s, c;
  if (c64) {
    e = math_gen(G, OP_EXP, JITC_FLOAT64, &x, 1);
    s = math_gen(G, OP_SIN, JITC_FLOAT64, &y, 1);
    c = math_gen(G, OP_COS, JITC_FLOAT64, &y, 1);
  } else {
    e = math_accurate(G, OP_EXP, x);
    s = math_accurate(G, OP_SIN, y);
    c = math_accurate(G, OP_COS, y);
  }
  s = sel(G, tiny, y, s);
  c = sel(G, tiny, part_const(G, c, 1.0), c);
  LLVMValueRef rr = v_mul(G, e, c), ri = v_mul(G, e, s);
  if (c64) {
    LLVMTypeRef vf = LLVMVectorType(G->tf32, W);
    rr = LLVMBuildFPTrunc(G->B, rr, vf, "");
    ri = LLVMBuildFPTrunc(G->B, ri, vf, "");
  }
  LLVMValueRef r = cx_pack(G, rr, ri);
  /* The rare vectors with a lane outside: those lanes from the semantics. */
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(G->B));
  LLVMBasicBlockRef from = LLVMGetInsertBlock(G->B);
  LLVMBasicBlockRef fix = LLVMAppendBasicBlockInContext(G->C, fn, "cexp.slow");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(G->C, fn, "cexp.join");
  LLVMBuildCondBr(G->B, any_lane(G, slow), fix, join);
  LLVMPositionBuilderAtEnd(G->B, fix);
  LLVMValueRef both = cx_both(G, slow);
  LLVMValueRef lib = sel(G, both, sem_call(G, n, &a), r);
  LLVMBasicBlockRef fix_end = LLVMGetInsertBlock(G->B);
  LLVMBuildBr(G->B, join);
  LLVMPositionBuilderAtEnd(G->B, join);
  LLVMValueRef phi = LLVMBuildPhi(G->B, LLVMTypeOf(r), "");
  LLVMValueRef vals[2] = {r, lib};
  LLVMBasicBlockRef blocks[2] = {from, fix_end};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

/* ---- casts ---- */

static LLVMValueRef cx_cast(Gen *G, LLVMValueRef v, jitc_dtype from, jitc_dtype to) {
  if (from == to) return v;
  if (dtype_is_complex(from) && dtype_is_complex(to)) {
    LLVMTypeRef vt = vec_type(G, to);
    return jitc_dtype_size(to) > jitc_dtype_size(from) ? LLVMBuildFPExt(G->B, v, vt, "")
                                                        : LLVMBuildFPTrunc(G->B, v, vt, "");
  }
  if (dtype_is_complex(from)) {
    /* to bool: either part non-zero (NaN too); to a real type: the real
    ** part, as NumPy's astype (the checker never asks for it) */
    if (to == JITC_BOOL) {
      LLVMValueRef re = fcmp(G, LLVMRealUNE, cx_part(G, v, 0), vzero_of(G, dtype_part(from)));
      return or2(G, re, fcmp(G, LLVMRealUNE, cx_part(G, v, 1), vzero_of(G, dtype_part(from))));
    }
    return conv_cast(G, cx_part(G, v, 0), dtype_part(from), to);
  }
  jitc_dtype pt = dtype_part(to);
  return cx_pack(G, conv_cast(G, v, from, pt), vzero_of(G, pt));
}

/* ---- the operations ---- */

bool cx_involved(const Node *n) {
  if (dtype_is_complex(n->type)) return true;
  for (int k = 0; k < n->nargs; k++)
    if (dtype_is_complex(n->args[k]->type)) return true;
  return false;
}

LLVMValueRef cx_op(Gen *G, const Node *n, LLVMValueRef *args) {
  LLVMValueRef a = args[0], b = args[1];
  jitc_dtype t = n->args[0]->type, ft = dtype_part(t);
  LLVMBuilderRef B = G->B;
  switch (n->op) {
  case OP_CAST: return cx_cast(G, a, t, n->type);
  case OP_ADD: return v_add(G, a, b);
  case OP_SUB: return v_sub(G, a, b);
  case OP_NEG: return LLVMBuildFNeg(B, a, "");
  case OP_MUL: return cx_mul(G, a, b);
  case OP_SQUARE: return cx_mul(G, a, a);
  case OP_DIV: return cx_div(G, a, b);
  case OP_RECIPROCAL: return cx_reciprocal(G, a);
  case OP_RINT:
  case OP_ROUND: return intr1(G, "llvm.roundeven", a);
  case OP_CONJ: {
    LLVMValueRef re = cx_part(G, a, 0);
    return cx_pack(G, re, LLVMBuildFNeg(B, cx_part(G, a, 1), ""));
  }
  case OP_REAL: return cx_part(G, a, 0);
  case OP_IMAG: return cx_part(G, a, 1);
  case OP_COMPLEX: return cx_pack(G, a, b);
  case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE:
    return cx_compare(G, n->op, a, b);
  case OP_MINIMUM: case OP_MAXIMUM: case OP_FMIN: case OP_FMAX:
    return cx_pick(G, n->op, a, b);
  case OP_CLIP: return cx_clip(G, a, b, args[2]);
  case OP_WHERE: return sel(G, cx_both(G, a), b, args[2]);
  case OP_ISNAN: return any_nan(G, a);
  case OP_ISINF: case OP_ISFINITE: {
    LLVMValueRef inf = vconst_f(G, ft, INFINITY);
    LLVMValueRef re = intr1(G, "llvm.fabs", cx_part(G, a, 0));
    LLVMValueRef im = intr1(G, "llvm.fabs", cx_part(G, a, 1));
    bool isinf = n->op == OP_ISINF;
    LLVMValueRef r = fcmp(G, isinf ? LLVMRealOEQ : LLVMRealOLT, re, inf);
    LLVMValueRef i = fcmp(G, isinf ? LLVMRealOEQ : LLVMRealOLT, im, inf);
    return isinf ? or2(G, r, i) : and2(G, r, i);
  }
  case OP_ABS: return cx_abs(G, a);
  case OP_EXP: return cx_exp(G, n, a);
  case OP_ANGLE: {
    LLVMValueRef yx[2];
    yx[0] = cx_part(G, a, 1);
    yx[1] = cx_part(G, a, 0);
    return math_gen(G, OP_ATAN2, ft, yx, 2);
  }
  default: return sem_call(G, n, args);
  }
}

#endif /* JITC_HAVE_LLVM */
