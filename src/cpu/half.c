/*
** cpu/half.c -- the operations of the 16-bit floats (float16, bfloat16) in
** the cpu target's generated code.  Part of generation (cpu/cpu.h); cpu/gen.c's
** gen_op() calls it for every operation whose operands are of these types.
**
** An operation computes in float32 on its operands widened exactly and
** rounds its result to the type (half_result), as NumPy's float16 loops and
** ml_dtypes do, with float32's semantics of the operation (its vector math
** included).  What only moves a value computes nothing and works on the 16
** bits instead (half_bits_op), so a NaN keeps its payload, signalling or
** not: neg, abs and copysign on the sign bit; minimum, maximum, fmin, fmax
** and clip pick one operand's bits by comparing the float32 values; a
** function of one NaN argument (F_NANARG) gives that argument's bits.  An
** F_STEP row steps to the neighbouring value of the 16-bit type (float32's
** step would round back to its operand), as NumPy's and ml_dtypes' do.
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

/* Constant x in every lane of the 16-bit type. */
static LLVMValueRef k16(Gen *G, unsigned x) {
  return splat_const(LLVMConstInt(G->ti16, x, 0));
}

/* Which of (a, with float32 value wa) and (b, wb) minimum or maximum (max)
** picks: a where it compares so or is NaN (nan_a), or where b is NaN
** (fmin, fmax); else b.  *w gets the picked operand's float32 value. */
static LLVMValueRef pick(Gen *G, bool max, bool nan_a, LLVMValueRef a, LLVMValueRef b,
                         LLVMValueRef wa, LLVMValueRef wb, LLVMValueRef *w) {
  LLVMValueRef c = fcmp(G, max ? LLVMRealOGT : LLVMRealOLT, wa, wb);
  c = LLVMBuildOr(G->B, c, isnan_v(G, nan_a ? wa : wb), "");
  if (w) *w = sel(G, c, wa, wb);
  return sel(G, c, a, b);
}

/* The step from x toward y (F_STEP) in the bits of type t: NaN for a NaN operand (NumPy's
** float16 NaN, ml_dtypes' bfloat16 NaN), and for equal operands y (C99's
** rule: NumPy 2.5's for float16, ml_dtypes' for bfloat16); from a zero the
** least subnormal toward y; else one unit in the last place up or down. */
static LLVMValueRef step(Gen *G, jitc_dtype t, LLVMValueRef x, LLVMValueRef y, LLVMValueRef wx,
                         LLVMValueRef wy) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef pos = icmp(G, LLVMIntEQ, LLVMBuildAnd(B, x, k16(G, 0x8000), ""), k16(G, 0));
  LLVMValueRef up = icmp(G, LLVMIntEQ, fcmp(G, LLVMRealOLT, wx, wy), pos);
  LLVMValueRef r = sel(G, up, LLVMBuildAdd(B, x, k16(G, 1), ""), LLVMBuildSub(B, x, k16(G, 1), ""));
  LLVMValueRef zero = icmp(G, LLVMIntEQ, LLVMBuildAnd(B, x, k16(G, 0x7fff), ""), k16(G, 0));
  r = sel(G, zero, LLVMBuildOr(B, LLVMBuildAnd(B, y, k16(G, 0x8000), ""), k16(G, 1), ""), r);
  r = sel(G, fcmp(G, LLVMRealOEQ, wx, wy), y, r);
  LLVMValueRef nan = LLVMBuildOr(B, isnan_v(G, wx), isnan_v(G, wy), "");
  return sel(G, nan, k16(G, t == JITC_FLOAT16 ? 0x7e00 : 0x7fc0), r);
}

LLVMValueRef half_bits_op(Gen *G, const Node *n, LLVMValueRef *a, LLVMValueRef *w) {
  LLVMBuilderRef B = G->B;
  LLVMValueRef wlo;
  bool max = n->op == OP_MAXIMUM || n->op == OP_FMAX;
  switch (n->op) {
  case OP_NEG: return LLVMBuildXor(B, a[0], k16(G, 0x8000), "");
  case OP_ABS: return LLVMBuildAnd(B, a[0], k16(G, 0x7fff), "");
  case OP_SIGNBIT: return LLVMBuildICmp(B, LLVMIntSLT, a[0], k16(G, 0), "");
  case OP_COPYSIGN:
    return LLVMBuildOr(B, LLVMBuildAnd(B, a[0], k16(G, 0x7fff), ""),
                       LLVMBuildAnd(B, a[1], k16(G, 0x8000), ""), "");
  case OP_MINIMUM: case OP_MAXIMUM: return pick(G, max, true, a[0], a[1], w[0], w[1], NULL);
  case OP_FMIN: case OP_FMAX: return pick(G, max, false, a[0], a[1], w[0], w[1], NULL);
  case OP_CLIP: {
    /* minimum(maximum(x, lo), hi), NaN propagating */
    LLVMValueRef lo = pick(G, true, true, a[0], a[1], w[0], w[1], &wlo);
    return pick(G, false, true, lo, a[2], wlo, w[2], NULL);
  }
  default:
    if ((op_info[n->op].flags & F_STEP) && n->nargs == 2) return step(G, n->type, a[0], a[1], w[0], w[1]);
    return NULL;
  }
}

LLVMValueRef half_result(Gen *G, const Node *n, LLVMValueRef r, LLVMValueRef *a, LLVMValueRef *w) {
  r = conv_narrow(G, n->type, r);
  if (op_info[n->op].flags & F_NANARG)
    for (int k = n->nargs - 1; k >= 0; k--) r = sel(G, isnan_v(G, w[k]), a[k], r);
  return r;
}

#endif /* JITC_HAVE_LLVM */
