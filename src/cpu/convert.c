/*
** cpu/convert.c -- conversions in the cpu target's generated code: the cast
** between any two element types (conv_cast), and the 16-bit floats' bits to
** and from float32 (conv_widen, conv_narrow, conv_round).  Part of
** generation (cpu/cpu.h): it builds LLVM IR and nothing else.
**
** float16 and bfloat16 values are their 16 bits, in memory and in
** registers; each operation widens its operands to float32 exactly, computes
** there and narrows the result, rounding to nearest even (cpu/half.c).
** A NaN widens quiet (vcvtph2ps sets the quiet bit of a signalling one;
** bfloat16's widening, a shift, does the same here) and narrows quiet,
** float16's keeping its sign and the top of its payload (vcvtps2ph),
** bfloat16's becoming ml_dtypes' NaN with its sign.
**
** LLVM 19 lowers `fpext half` and `fptrunc ... to half` to F16C's vcvtph2ps
** and vcvtps2ph where the machine has F16C (x86-64-v3 and up), elsewhere
** to calls of __extendhfsf2 and __truncsfhf2, one element at a time, which
** the JIT's process need not define; `fptrunc ... to bfloat` is a call of
** __truncsfbf2 at every level (AVX512-BF16's vcvtneps2bf16, where LLVM
** would use it, flushes subnormals).  So float16 uses F16C at v3 and v4,
** and integer arithmetic on the bits at the other levels; bfloat16 the
** integer arithmetic everywhere.  Both ways give the same bits.
**
** One rounding, always.  float64 becomes a 16-bit float through float32
** rounded to odd (an inexact result gets its last bit set), which rounds
** to nearest even as float64 would directly, since float32 has more than
** twice the bits plus two: 1 + 2^-11 + 2^-30 becomes float16's 1 + 2^-10,
** where float32 rounded to nearest would give 1 + 2^-11 and then 1.
** Integers of 32 and 64 bits take the same path through float64 (a 64-bit
** integer of more than 53 bits first has its low bits folded into one
** sticky bit, so that it is exact in float64).
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <math.h>

/* In the cache key (cpu/build.c): the build of this file. */
const char cpu_convert_stamp[] = "built " __DATE__ " " __TIME__;

/* ---- small builders ----
** On vectors of any number of lanes (the reductions' combining tree
** rounds halves of W): each takes it from its operand. */

static unsigned nlanes(LLVMValueRef v) { return LLVMGetVectorSize(LLVMTypeOf(v)); }
static LLVMTypeRef vtype(LLVMTypeRef et, LLVMValueRef like) {
  return LLVMVectorType(et, nlanes(like));
}
/* Constant x of element type et in every lane of a vector like `like`. */
static LLVMValueRef kconst(LLVMValueRef like, LLVMTypeRef et, uint64_t x) {
  LLVMValueRef v[W];
  for (unsigned k = 0; k < nlanes(like); k++) v[k] = LLVMConstInt(et, x, 0);
  return LLVMConstVector(v, nlanes(like));
}
/* In a function whose operand (setting the lane count) is L. */
#define ci32(x) kconst(L, G->ti32, x)
#define ci64(x) kconst(L, G->ti64, x)
static LLVMValueRef kfloat(Gen *G, LLVMValueRef like, double x) {
  LLVMValueRef v[W];
  for (unsigned k = 0; k < nlanes(like); k++) v[k] = LLVMConstReal(G->tf32, x);
  return LLVMConstVector(v, nlanes(like));
}
static LLVMValueRef bits_of(Gen *G, LLVMValueRef f) {
  return LLVMBuildBitCast(G->B, f, vtype(G->ti32, f), "");
}
static LLVMValueRef float_of(Gen *G, LLVMValueRef u) {
  return LLVMBuildBitCast(G->B, u, vtype(G->tf32, u), "");
}
static LLVMValueRef vi16(Gen *G, LLVMValueRef u) {
  return LLVMBuildTrunc(G->B, u, vtype(G->ti16, u), "");
}

/* Whether the machine converts float16 itself: F16C, from x86-64-v3. */
static bool has_f16c(Gen *G) { return G->gt->level >= 3; }

/* ---- float16 by integer arithmetic ---- */

/* The float32 of float16 bits h (<W x i32>, the low 16 bits).  Exponent
** and fraction moved to float32's places make a float32 2^112 times too
** small, subnormals included: the product is exact.  From 2^16 up they were
** inf or NaN: float32's largest exponent, a NaN made quiet.  (The
** compares here and below are signed on values below 2^31, which SSE2
** has.) */
static LLVMValueRef f16_widen_int(Gen *G, LLVMValueRef h) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = h;
  LLVMValueRef o = LLVMBuildShl(B, LLVMBuildAnd(B, h, ci32(0x7fff), ""), ci32(13), "");
  LLVMValueRef u = bits_of(G, LLVMBuildFMul(B, float_of(G, o), kfloat(G, o, 0x1p112), ""));
  LLVMValueRef top = sel(G, icmp(G, LLVMIntSGT, o, ci32(0x0f800000)), ci32(0x7fc00000), ci32(0x7f800000));
  u = sel(G, icmp(G, LLVMIntSGE, o, ci32(0x0f800000)), LLVMBuildOr(B, u, top, ""), u);
  LLVMValueRef sign = LLVMBuildShl(B, LLVMBuildAnd(B, h, ci32(0x8000), ""), ci32(16), "");
  return float_of(G, LLVMBuildOr(B, u, sign, ""));
}

/* The float16 bits (<W x i32>) of float32 v, rounded to nearest even. */
static LLVMValueRef f16_narrow_int(Gen *G, LLVMValueRef v) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = v;
  LLVMValueRef u = bits_of(G, v);
  LLVMValueRef sign = LLVMBuildAnd(B, u, ci32(0x80000000), "");
  LLVMValueRef a = LLVMBuildXor(B, u, sign, "");
  /* From 2^16 up: infinity, or NaN made quiet with the top of its payload
  ** (65520 up to 2^16 rounds to infinity below). */
  LLVMValueRef nan = icmp(G, LLVMIntSGT, a, ci32(0x7f800000));
  LLVMValueRef payload = LLVMBuildAnd(B, LLVMBuildLShr(B, a, ci32(13), ""), ci32(0x3ff), "");
  LLVMValueRef big = sel(G, nan, LLVMBuildOr(B, payload, ci32(0x7e00), ""), ci32(0x7c00));
  /* Below 2^-14, float16's subnormals: the float32 adder rounds a + 0.5,
  ** whose last bit is float16's 2^-24. */
  LLVMValueRef small = LLVMBuildFAdd(B, float_of(G, a), kfloat(G, a, 0.5), "");
  small = LLVMBuildSub(B, bits_of(G, small), ci32(0x3f000000), "");
  /* The normal numbers: the bias from 127 to 15 (-0x38000000), then 13
  ** bits rounded off to nearest even (a carry may reach infinity). */
  LLVMValueRef odd = LLVMBuildAnd(B, LLVMBuildLShr(B, a, ci32(13), ""), ci32(1), "");
  LLVMValueRef norm = LLVMBuildAdd(B, a, ci32(0xc8000fff), "");
  norm = LLVMBuildLShr(B, LLVMBuildAdd(B, norm, odd, ""), ci32(13), "");
  LLVMValueRef r = sel(G, icmp(G, LLVMIntSLT, a, ci32(0x38800000)), small, norm);
  r = sel(G, icmp(G, LLVMIntSGE, a, ci32(0x47800000)), big, r);
  return LLVMBuildOr(B, r, LLVMBuildLShr(B, sign, ci32(16), ""), "");
}

/* ---- bfloat16: the upper half of a float32 ---- */

/* The float32 bits of v rounded to bfloat16 (nearest even), the low 16 bits
** zero; a NaN becomes ml_dtypes' quiet NaN with v's sign. */
static LLVMValueRef bf16_round_bits(Gen *G, LLVMValueRef v) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = v;
  LLVMValueRef u = bits_of(G, v);
  LLVMValueRef odd = LLVMBuildAnd(B, LLVMBuildLShr(B, u, ci32(16), ""), ci32(1), "");
  LLVMValueRef r = LLVMBuildAdd(B, LLVMBuildAdd(B, u, ci32(0x7fff), ""), odd, "");
  LLVMValueRef nan = LLVMBuildOr(B, LLVMBuildAnd(B, u, ci32(0x80000000), ""), ci32(0x7fc00000), "");
  r = sel(G, isnan_v(G, v), nan, r);
  return LLVMBuildAnd(B, r, ci32(0xffff0000), "");
}

/* ---- the entry points for the 16-bit floats ---- */

LLVMValueRef conv_widen(Gen *G, jitc_dtype t, LLVMValueRef bits) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = bits;
  if (t == JITC_FLOAT16 && has_f16c(G)) {
    LLVMValueRef h = LLVMBuildBitCast(B, bits, vtype(LLVMHalfTypeInContext(G->C), L), "");
    return LLVMBuildFPExt(B, h, vtype(G->tf32, L), "");
  }
  LLVMValueRef u = LLVMBuildZExt(B, bits, vtype(G->ti32, L), "");
  if (t == JITC_FLOAT16) return f16_widen_int(G, u);
  u = LLVMBuildShl(B, u, ci32(16), "");
  LLVMValueRef nan = icmp(G, LLVMIntSGT, LLVMBuildAnd(B, u, ci32(0x7fffffff), ""), ci32(0x7f800000));
  return float_of(G, sel(G, nan, LLVMBuildOr(B, u, ci32(0x00400000), ""), u));
}

/* Whether float32 v is the result of an arithmetic instruction whose NaN
** is quiet however LLVM narrows it (in float16 arithmetic, where it
** shrinks the instruction, or converting): one that LLVM cannot fold to
** an operand, so none with a constant 0 or +-1 (x * 1.0 is x, x * -1.0 is
** -x, x + -0.0 is x, and so is x + 0.0 under --fast-math). */
static bool arith_result(LLVMValueRef v) {
  if (!LLVMIsAInstruction(v)) return false;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMFAdd: case LLVMFSub: case LLVMFMul: case LLVMFDiv: break;
  default: return false;
  }
  for (int k = 0; k < 2; k++) {
    LLVMValueRef op = LLVMGetOperand(v, (unsigned)k);
    if (!LLVMIsConstant(op)) continue;
    LLVMValueRef e = LLVMGetAggregateElement(op, 0); /* the constants are splats */
    LLVMBool lost;
    double c = e ? fabs(LLVMConstRealGetDouble(e, &lost)) : 0;
    if (!e || c == 0 || c == 1) return false;
  }
  return true;
}

LLVMValueRef conv_narrow(Gen *G, jitc_dtype t, LLVMValueRef v) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = v;
  if (t == JITC_FLOAT16 && has_f16c(G)) {
    /* vcvtps2ph makes a NaN quiet, but where v may be a widened operand (x
    ** ** 1 is x, sign(NaN) the NaN) LLVM folds `fptrunc (select (fpext x))`
    ** to select x, whose signalling NaN would stay: quiet it on the bits. */
    LLVMValueRef h = LLVMBuildFPTrunc(B, v, vtype(LLVMHalfTypeInContext(G->C), L), "");
    h = LLVMBuildBitCast(B, h, vtype(G->ti16, L), "");
    if (arith_result(v)) return h;
    LLVMValueRef nan = icmp(G, LLVMIntUGT, LLVMBuildAnd(B, h, kconst(h, G->ti16, 0x7fff), ""),
                            kconst(h, G->ti16, 0x7c00));
    return sel(G, nan, LLVMBuildOr(B, h, kconst(h, G->ti16, 0x0200), ""), h);
  }
  if (t == JITC_FLOAT16) return vi16(G, f16_narrow_int(G, v));
  return vi16(G, LLVMBuildLShr(B, bf16_round_bits(G, v), ci32(16), ""));
}

LLVMValueRef conv_round(Gen *G, jitc_dtype t, LLVMValueRef v) {
  if (t == JITC_BFLOAT16) return float_of(G, bf16_round_bits(G, v));
  return conv_widen(G, t, conv_narrow(G, t, v));
}

LLVMValueRef conv_const(Gen *G, jitc_dtype t, double x) {
  /* LLVM's own constant of the type, rounded from the double directly
  ** (APFloat, ties to even), then its bits: a constant still, so that
  ** arith_result sees it. */
  LLVMTypeRef ft = t == JITC_FLOAT16 ? LLVMHalfTypeInContext(G->C) : LLVMBFloatTypeInContext(G->C);
  return splat_const(LLVMConstBitCast(LLVMConstReal(ft, x), G->ti16));
}

/* ---- one rounding from float64 and the wide integers ---- */

/* float64 v rounded to float32 toward zero, its last bit set when inexact:
** rounded to odd.  NaN and infinity pass as fptrunc gives them. */
static LLVMValueRef to_odd_f32(Gen *G, LLVMValueRef v) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = v;
  LLVMValueRef f = LLVMBuildFPTrunc(B, v, vtype(G->tf32, L), "");
  LLVMValueRef back = LLVMBuildFPExt(B, f, LLVMTypeOf(v), "");
  LLVMValueRef away = fcmp(G, LLVMRealOGT, intr1(G, "llvm.fabs", back), intr1(G, "llvm.fabs", v));
  LLVMValueRef inexact = fcmp(G, LLVMRealONE, back, v);
  LLVMValueRef u = bits_of(G, f);
  u = sel(G, away, LLVMBuildSub(B, u, ci32(1), ""), u);
  u = sel(G, inexact, LLVMBuildOr(B, u, ci32(1), ""), u);
  return float_of(G, u);
}

/* The float64 of 64-bit integers x, exact after folding into one sticky bit
** (bit 12) the bits below the 53 that float64 holds; rounded later to 24
** bits or fewer, it rounds as x itself. */
static LLVMValueRef int64_sticky_f64(Gen *G, LLVMValueRef x, bool sgn) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef L = x;
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x)), neg = NULL, m = x;
  if (sgn) {
    neg = icmp(G, LLVMIntSLT, x, zero);
    m = sel(G, neg, LLVMBuildSub(B, zero, x, ""), x); /* INT64_MIN: 2^63, unsigned */
  }
  LLVMValueRef low = icmp(G, LLVMIntNE, LLVMBuildAnd(B, m, ci64(0xfff), ""), zero);
  LLVMValueRef jam = LLVMBuildOr(B, LLVMBuildAnd(B, m, ci64(~(uint64_t)0xfff), ""),
                                 sel(G, low, ci64(0x1000), zero), "");
  m = sel(G, icmp(G, LLVMIntUGE, m, ci64(1ull << 53)), jam, m);
  LLVMValueRef d = LLVMBuildUIToFP(B, m, vtype(G->tf64, L), "");
  return sgn ? sel(G, neg, LLVMBuildFNeg(B, d, ""), d) : d;
}

/* The float32 value whose rounding to a 16-bit float is that of integers
** or bool v of type `from` (exact up to 16 bits; wider, rounded to odd). */
static LLVMValueRef int_for_half(Gen *G, LLVMValueRef v, const TypeInfo *fi) {
  bool sgn = fi->kind == T_SINT;
  if (fi->size <= 2) {
    LLVMTypeRef vf = LLVMVectorType(G->tf32, W);
    return sgn ? LLVMBuildSIToFP(G->B, v, vf, "") : LLVMBuildUIToFP(G->B, v, vf, "");
  }
  LLVMTypeRef vd = LLVMVectorType(G->tf64, W);
  LLVMValueRef d = fi->size == 8 ? int64_sticky_f64(G, v, sgn)
                   : sgn        ? LLVMBuildSIToFP(G->B, v, vd, "")
                                : LLVMBuildUIToFP(G->B, v, vd, "");
  return to_odd_f32(G, d);
}

/* ---- casts ---- */

/* Conversion between any two types, as NumPy's astype() does, except that
** float to int saturates at the type's ends and NaN becomes 0 (defined for
** every input; NumPy's answer there depends on the machine).  A 16-bit
** float converts as the float32 it widens to; a float16 is made from the
** float32 (rounded to odd from wider values) that rounds to it, one
** rounding in all; a bfloat16 from the nearest float32, as ml_dtypes. */
LLVMValueRef conv_cast(Gen *G, LLVMValueRef v, jitc_dtype from, jitc_dtype to) {
  const TypeInfo *fi = &type_info[from], *ti = &type_info[to];
  LLVMBuilderRef B = G->B;
  LLVMTypeRef vt = vec_type(G, to);
  if (from == to) return v;
  if (is_half(from)) return conv_cast(G, conv_widen(G, from, v), JITC_FLOAT32, to);
  if (ti->kind == T_BOOL)
    return fi->kind == T_FLOAT ? fcmp(G, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)))
                               : icmp(G, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)));
  if (to == JITC_BFLOAT16 && !(fi->kind == T_FLOAT && fi->size == 4)) {
    /* ml_dtypes makes a bfloat16 of the float32 nearest a wider value or
    ** an integer: two roundings, as it does */
    LLVMTypeRef vf = LLVMVectorType(G->tf32, W);
    LLVMValueRef f = fi->kind == T_FLOAT ? LLVMBuildFPTrunc(B, v, vf, "")
                     : fi->kind == T_SINT ? LLVMBuildSIToFP(B, v, vf, "")
                                          : LLVMBuildUIToFP(B, v, vf, "");
    return conv_narrow(G, to, f);
  }
  if (is_half(to)) {
    LLVMValueRef f = fi->kind != T_FLOAT ? int_for_half(G, v, fi)
                     : fi->size == 8    ? to_odd_f32(G, v)
                                        : v;
    return conv_narrow(G, to, f);
  }
  if (ti->kind == T_FLOAT && fi->kind != T_FLOAT) /* one rounding, to float32 too */
    return fi->kind == T_SINT ? LLVMBuildSIToFP(B, v, vt, "") : LLVMBuildUIToFP(B, v, vt, "");
  if (ti->kind == T_FLOAT)
    return ti->size > fi->size ? LLVMBuildFPExt(B, v, vt, "") : LLVMBuildFPTrunc(B, v, vt, "");
  if (fi->kind == T_FLOAT) {
    /* Truncation toward zero, saturating; NaN gives 0 (LangRef). */
    LLVMTypeRef types[2] = {vt, LLVMTypeOf(v)};
    return intrinsic(G, ti->kind == T_UINT ? "llvm.fptoui.sat" : "llvm.fptosi.sat", types, 2, &v, 1);
  }
  /* Integers and bool: modulo 2^bits, extended by the source's sign. */
  unsigned wf = LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(v)));
  unsigned wt = LLVMGetIntTypeWidth(LLVMGetElementType(vt));
  if (wf == wt) return v;
  if (wf > wt) return LLVMBuildTrunc(B, v, vt, "");
  return fi->kind == T_SINT ? LLVMBuildSExt(B, v, vt, "") : LLVMBuildZExt(B, v, vt, "");
}

#endif /* JITC_HAVE_LLVM */
