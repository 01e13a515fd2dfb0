/*
** cpu/math.c -- the math functions of the cpu target's generated code: for
** each function of ops.h with a C library name, which library computes it
** on the machine compiled for, and the fixes where a library is wrong.
** Part of generation (cpu/cpu.h): it builds LLVM IR and asks nothing of the
** host but what the caller passes in (GenTarget: the x86-64 level, the
** vector width, which vector libraries are loaded).  Start at math_gen().
**
** Every value is a vector of W lanes.  A function comes from glibc's
** libmvec or from SLEEF, at the vector width of the machine's level (128
** bits up to x86-64-v2, 256 on v3, 512 on v4): per level, function and
** float type the faster of the two that stays within 4 ulp with the C
** library's special values (math_fns), with fixes at the ends of the range
** (edge_fixed, tiny_fixed, range_fixed).  A function that no vector library
** has, or every function on a host without them, is the C library's, called
** one lane at a time: so a new plain libm row of ops.h works here as is.
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* In the cache key (cpu/build.c). */
const char cpu_math_stamp[] = "built " __DATE__ " " __TIME__;

/* ---- the choice of library ---- */

/* Each function comes from the fastest vector library that is accurate
** enough, chosen per x86-64 level, function and float type by measurement
** (bench/vecmath_speed.c and bench/vecmath_levels.c, bench/README.md): the
** speed of the level's own variants, and the accuracy and special values
** of each choice checked at each level (tests/t_cpu.sh runs its accuracy
** group once per level the host executes).
**   'm'  glibc's libmvec, the level's variant (_ZGVbN2v_exp for x86-64 and
**        v2, _ZGVdN4v_exp for v3, _ZGVeN8v_exp for v4): documented to
**        4 ulp, special values as libm's.
**   '1'  SLEEF's 1.0-ulp functions (hypot: 0.5 ulp, "u05"), the level's
**        variant (Sleef_expd2_u10sse2, _u10sse4, Sleef_expd4_u10avx2,
**        Sleef_expd8_u10avx512f).
**   '3'  SLEEF's 3.5-ulp functions, where they are faster.
** pick holds one pair (float32, float64) per level, x86-64 to v4.  Without
** libmvec SLEEF is used: u35 where chosen, else u10, with the range fixes
** of range_fixed; without SLEEF, libm one lane at a time. */
enum { U10, U35, MVEC };

/* The function's name in every library is its libm name (op_info[].libm). */
typedef struct MathFn {
  OpId op;
  const char *ulp;     /* SLEEF's suffix of the fallback, "" for exact */
  const char *fastulp; /* SLEEF's faster variant, for --fast-math where SLEEF is used */
  const char *pick;    /* per level "f32f64 f32f64 f32f64 f32f64" from 'm', '1', '3' */
} MathFn;

static const MathFn math_fns[] = {
  /*                           x86-64 v2 v3 v4 */
  {OP_CBRT,   "u10", "u35",   "mm mm mm mm"},
  {OP_EXP,    "u10", NULL,    "1m 1m 1m 1m"},
  {OP_EXP2,   "u10", "u35",   "mm mm mm 1m"},
  {OP_EXPM1,  "u10", NULL,    "mm mm mm mm"},
  {OP_LOG,    "u10", "u35",   "mm mm mm 33"},
  {OP_LOG2,   "u10", "u35",   "mm mm mm 33"},
  {OP_LOG10,  "u10", NULL,    "mm mm mm mm"},
  {OP_LOG1P,  "u10", NULL,    "mm mm mm mm"},
  {OP_SIN,    "u10", "u35",   "33 33 mm 33"},
  {OP_COS,    "u10", "u35",   "33 33 mm 33"},
  {OP_TAN,    "u10", "u35",   "mm mm mm 3m"},
  {OP_ASIN,   "u10", "u35",   "33 33 33 33"},
  {OP_ACOS,   "u10", "u35",   "33 33 m3 33"},
  {OP_ATAN,   "u10", "u35",   "mm mm mm 3m"},
  {OP_SINH,   "u10", "u35",   "mm mm mm mm"},
  {OP_COSH,   "u10", "u35",   "mm mm mm mm"},
  {OP_TANH,   "u10", "u35",   "m3 m3 m3 m3"},
  {OP_ASINH,  "u10", NULL,    "mm mm mm mm"},
  {OP_ACOSH,  "u10", NULL,    "mm mm mm mm"},
  {OP_ATANH,  "u10", NULL,    "mm mm mm mm"},
  {OP_ATAN2,  "u10", "u35",   "m3 m3 mm 33"},
  {OP_HYPOT,  "u05", "u35",   "mm mm mm mm"},
  {OP_POW,    "u10", NULL,    "mm mm mm mm"},
};

static const MathFn *math_fn(OpId op) {
  for (size_t k = 0; k < sizeof math_fns / sizeof math_fns[0]; k++)
    if (math_fns[k].op == op) return &math_fns[k];
  return NULL;
}

/* Lanes [off, off+n) of v. */
static LLVMValueRef sub_vec(Gen *G, LLVMValueRef v, int off, int n) {
  LLVMValueRef m[W];
  for (int k = 0; k < n; k++) m[k] = LLVMConstInt(G->ti32, (unsigned)(off + k), 0);
  return LLVMBuildShuffleVector(G->B, v, LLVMGetPoison(LLVMTypeOf(v)), LLVMConstVector(m, (unsigned)n), "");
}
/* Concatenates parts[0..np) of n lanes each. */
static LLVMValueRef concat(Gen *G, LLVMValueRef *parts, int np, int n) {
  while (np > 1) {
    int j = 0;
    for (int k = 0; k < np; k += 2, j++) {
      LLVMValueRef m[W];
      for (int l = 0; l < 2 * n; l++) m[l] = LLVMConstInt(G->ti32, (unsigned)l, 0);
      parts[j] = LLVMBuildShuffleVector(G->B, parts[k], parts[k + 1],
                                        LLVMConstVector(m, (unsigned)(2 * n)), "");
    }
    np = j;
    n *= 2;
  }
  return parts[0];
}

/* Calls function `name` of nargs arguments of type `ft` (a vector of n lanes
** or a scalar when n == 1), declaring it in the module on first use.  The
** declaration says the function reads and writes no memory, so that two
** calls with the same arguments (sin(a) * sin(a)) are computed once: true
** of the vector libraries; libm may set errno, which no kernel reads. */
static LLVMValueRef call_ext(Gen *G, const char *name, LLVMTypeRef et, int n,
                             LLVMValueRef *args, int nargs) {
  LLVMTypeRef t = n > 1 ? LLVMVectorType(et, (unsigned)n) : et;
  LLVMTypeRef params[3] = {t, t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, (unsigned)nargs, 0);
  LLVMValueRef f = LLVMGetNamedFunction(G->M, name);
  if (!f) {
    f = LLVMAddFunction(G->M, name, fty);
    static const char *const attrs[] = {"nounwind", "willreturn", "nosync", "nofree"};
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
      unsigned kind = LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k]));
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(G->C, kind, 0));
    }
    /* memory(none): the attribute's value 0 is no access to any memory. */
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(G->C, LLVMGetEnumAttributeKindForName("memory", 6), 0));
  }
  return LLVMBuildCall2(G->B, fty, f, args, (unsigned)nargs, "");
}

/* Calls the vector function `name` of `lanes` lanes on the W lanes of args,
** in W / lanes pieces; a scalar function (lanes 1) once per lane. */
static LLVMValueRef call_split(Gen *G, const char *name, LLVMTypeRef et, int lanes,
                               LLVMValueRef *args, int nargs) {
  if (lanes == 1) {
    LLVMValueRef r = LLVMGetPoison(LLVMVectorType(et, W));
    for (int l = 0; l < W; l++) {
      LLVMValueRef idx = LLVMConstInt(G->ti32, (unsigned)l, 0), a[3];
      for (int k = 0; k < nargs; k++) a[k] = LLVMBuildExtractElement(G->B, args[k], idx, "");
      r = LLVMBuildInsertElement(G->B, r, call_ext(G, name, et, 1, a, nargs), idx, "");
    }
    return r;
  }
  LLVMValueRef parts[W];
  int np = W / lanes;
  for (int p = 0; p < np; p++) {
    LLVMValueRef a[3];
    for (int k = 0; k < nargs; k++) a[k] = np == 1 ? args[k] : sub_vec(G, args[k], p * lanes, lanes);
    parts[p] = call_ext(G, name, et, lanes, a, nargs);
  }
  return np == 1 ? parts[0] : concat(G, parts, np, lanes);
}

/* Calls function op on args, from the library math_fns picks for t on the
** machine (see above), else libm; *lib (if not NULL) is set to the library
** used: MVEC, U10 or U35 for SLEEF, -1 for libm. */
static LLVMValueRef math_call_lib(Gen *G, OpId op, jitc_dtype t, LLVMValueRef *args, int nargs,
                                  int *lib) {
  static const char mvec_isa[5] = {0, 'b', 'b', 'd', 'e'};
  static const char *const sleef_isa[5] = {"", "sse2", "sse4", "avx2", "avx512f"};
  const GenTarget *gt = G->gt;
  const VecLibs *vl = &gt->libs;
  const MathFn *mf = math_fn(op);
  const char *fname = op_info[op].libm;
  LLVMTypeRef et = scalar_type(G, t);
  bool f32 = t == JITC_FLOAT32;
  int lanes = gt->vec_bits / (f32 ? 32 : 64), dummy;
  char name[64];
  if (!lib) lib = &dummy;
  if (!fname) unreachable();
  char pick = !mf ? 0 : gt->level ? mf->pick[(gt->level - 1) * 3 + (f32 ? 0 : 1)] : '1';
  if (pick == 'm' && vl->mvec && gt->level) {
    snprintf(name, sizeof name, "_ZGV%cN%d%s_%s%s", mvec_isa[gt->level], lanes,
             nargs == 2 ? "vv" : "v", fname, f32 ? "f" : "");
    if (vl->has(vl->host, VL_MVEC, name)) {
      *lib = MVEC;
      return call_split(G, name, et, lanes, args, nargs);
    }
  }
  if (mf && vl->sleef) {
    /* The level's own variant, else SLEEF's dispatcher (which picks by
    ** the host running it). */
    const char *ulp = (pick == '3' || gt->fast) && mf->fastulp ? mf->fastulp : mf->ulp;
    for (int tries = 0; tries < 4; tries++) {
      if (tries == 2) ulp = mf->ulp;
      snprintf(name, sizeof name, "Sleef_%s%c%d%s%s%s", fname, f32 ? 'f' : 'd', lanes,
               *ulp ? "_" : "", ulp, tries % 2 ? "" : sleef_isa[gt->level]);
      if (vl->has(vl->host, VL_SLEEF, name)) {
        *lib = ulp == mf->ulp ? U10 : U35;
        return call_split(G, name, et, lanes, args, nargs);
      }
    }
  }
  /* No vector library has it: libm, one lane at a time. */
  *lib = -1;
  snprintf(name, sizeof name, "%s%s", fname, f32 ? "f" : "");
  return call_split(G, name, et, 1, args, nargs);
}

static LLVMValueRef math_call(Gen *G, OpId op, jitc_dtype t, LLVMValueRef *args, int nargs) {
  return math_call_lib(G, op, t, args, nargs, NULL);
}

/* SLEEF's sinh, cosh, asinh, acosh and log1p are accurate on a bounded
** range (sinhf: |x| <= 88.5, asinhf: |x| <= 1.8e19, ...) and return inf
** beyond it where the true result is finite.  Outside, these identities
** hold to the precision of the type and are computed instead:
**   sinh, cosh:   e^|x| / 2 = exp(|x| - 1) * (e / 2)  (|x| - 1 is exact)
**   asinh, acosh: log(2|x|) = log(|x|) + ln 2
**   log1p:        log(x), as x + 1 rounds to x */
static LLVMValueRef range_fixed(Gen *G, OpId op, jitc_dtype t, LLVMValueRef a) {
  bool f32 = t == JITC_FLOAT32;
  int lib;
  LLVMValueRef r = math_call_lib(G, op, t, &a, 1, &lib);
  /* libmvec and libm are accurate over the whole range. */
  if (lib != U10 && lib != U35) return r;
  LLVMValueRef ax = intr1(G, "llvm.fabs", a), big, alt;
  if (op == OP_SINH || op == OP_COSH) {
    big = fcmp(G, LLVMRealOGT, ax, vconst_f(G, t, f32 ? 88.0 : 709.0));
    LLVMValueRef m1 = LLVMBuildFSub(G->B, ax, vconst_f(G, t, 1.0), "");
    alt = LLVMBuildFMul(G->B, math_call(G, OP_EXP, t, &m1, 1),
                        vconst_f(G, t, 1.3591409142295225), "");
    if (op == OP_SINH) alt = intr2(G, "llvm.copysign", alt, a);
  } else if (op == OP_LOG1P) {
    big = fcmp(G, LLVMRealOGT, a, vconst_f(G, t, f32 ? 1e30 : 1e300));
    alt = math_call(G, OP_LOG, t, &a, 1);
  } else {
    big = fcmp(G, LLVMRealOGT, op == OP_ACOSH ? a : ax, vconst_f(G, t, f32 ? 1e18 : 1e150));
    alt = LLVMBuildFAdd(G->B, math_call(G, OP_LOG, t, &ax, 1),
                        vconst_f(G, t, 0.69314718055994531), "");
    if (op == OP_ASINH) alt = intr2(G, "llvm.copysign", alt, a);
  }
  /* inf stays with SLEEF, which gets it right. */
  big = LLVMBuildAnd(G->B, big, fcmp(G, LLVMRealONE, ax, vconst_f(G, t, INFINITY)), "");
  return sel(G, big, alt, r);
}

/* C99 Annex F: a function of one NaN argument returns that NaN, sign and
** all.  Some vector functions return another NaN (SLEEF's atan, tanh and
** acos give the positive one), so NaN lanes take the argument itself: one
** compare and one blend. */
static LLVMValueRef nan_arg(Gen *G, LLVMValueRef a, LLVMValueRef r) {
  return sel(G, isnan_v(G, a), a, r);
}

/* Whether some lane of v is above c (NaN lanes are not): lanes at most c
** become c (a max instruction), then one horizontal maximum, which may
** assume no NaN. */
static LLVMValueRef any_above(Gen *G, jitc_dtype t, LLVMValueRef v, double c) {
  LLVMValueRef vc = vconst_f(G, t, c);
  LLVMValueRef m = intr1(G, "llvm.vector.reduce.fmax", sel(G, fcmp(G, LLVMRealOGT, v, vc), v, vc));
  LLVMSetFastMathFlags(m, LLVMFastMathNoNaNs);
  return LLVMBuildFCmp(G->B, LLVMRealOGT, m, LLVMConstReal(scalar_type(G, t), c), "");
}

/* Results the vector libraries get wrong at the top of the range, where
** the true result is still finite: exp(709.78) is 1.797e308, not inf, and
** pow(5.64e102, 3) is 1.798e308; SLEEF's cut-offs (and, on AVX-512, some
** of libmvec's) are a few ulp early.  The lanes that became inf from
** finite arguments below the true threshold are recomputed from identities
** that hold to the precision of the type (about 2 ulp):
**   exp:   e^x = e^(x-1) * e         (x - 1 is exact there)
**   exp2:  2^x = 2^(x-1) * 2         (exact)
**   power: x^y = (|x|^(y/2))^2 with the sign of the library's inf; where
**          the result really overflows this gives inf again.
** Those inputs are rare: a branch skips the fix unless one lane needs it,
** tested with one horizontal maximum (of the argument for exp and exp2,
** of |result| for power), so the common case pays a few instructions. */
static LLVMValueRef edge_fixed(Gen *G, OpId op, jitc_dtype t, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = G->B;
  bool f32 = t == JITC_FLOAT32, pow = op == OP_POW;
  LLVMValueRef args[2] = {a, b};
  /* The largest argument with a finite result, rounded up in the type,
  ** and a bound below which no library overflows.  (Tested before the
  ** call, while the argument is still in registers.) */
  double top = op == OP_EXP ? (f32 ? 88.72283935546875 : 709.78271289338397)
                            : (f32 ? 128.0 : 1024.0);
  LLVMValueRef maybe = pow ? NULL : any_above(G, t, a, top - 1);
  int lib;
  LLVMValueRef r = math_call_lib(G, op, t, args, pow ? 2 : 1, &lib);
  if (lib < 0) return r; /* libm: right everywhere */
  LLVMValueRef inf = vconst_f(G, t, INFINITY), ar = intr1(G, "llvm.fabs", r);
  if (pow) maybe = any_above(G, t, ar, f32 ? FLT_MAX : DBL_MAX);
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(B));
  LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
  LLVMBasicBlockRef fix = LLVMAppendBasicBlockInContext(G->C, fn, "edge.fix");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(G->C, fn, "edge.join");
  LLVMBuildCondBr(B, maybe, fix, join);

  LLVMPositionBuilderAtEnd(B, fix);
  LLVMValueRef bad = fcmp(G, LLVMRealOEQ, ar, inf), alt;
  if (pow) {
    /* y / 2 must be exact: |y| above the subnormals (a tinier y
    ** overflows only for x == 0, where inf is right). */
    LLVMValueRef ab = intr1(G, "llvm.fabs", b);
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", a), inf), "");
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOLT, ab, inf), "");
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOGT, ab, vconst_f(G, t, f32 ? 0x1p-100 : 0x1p-1000)), "");
    LLVMValueRef h_args[2] = {intr1(G, "llvm.fabs", a),
                              LLVMBuildFMul(B, b, vconst_f(G, t, 0.5), "")};
    LLVMValueRef h = math_call(G, OP_POW, t, h_args, 2);
    alt = intr2(G, "llvm.copysign", LLVMBuildFMul(B, h, h, ""), r);
  } else {
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOLT, a, vconst_f(G, t, top)), "");
    LLVMValueRef m1 = LLVMBuildFSub(B, a, vconst_f(G, t, 1.0), "");
    alt = LLVMBuildFMul(B, math_call(G, op, t, &m1, 1),
                        vconst_f(G, t, op == OP_EXP ? 2.718281828459045 : 2.0), "");
  }
  LLVMValueRef fixed = sel(G, bad, alt, r);
  LLVMBasicBlockRef fix_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, join);

  LLVMPositionBuilderAtEnd(B, join);
  LLVMValueRef phi = LLVMBuildPhi(B, LLVMTypeOf(r), "");
  LLVMValueRef vals[2] = {r, fixed};
  LLVMBasicBlockRef blocks[2] = {from, fix_end};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

/* Tiny arguments of the functions that are x + O(x^2) there: x itself,
** as every correctly rounded function gives it (below 2^-30 in float32,
** 2^-60 in float64, the next terms are far below half an ulp).  Some of
** the vector libraries flush the smallest subnormals to 0 (log1p, asinh,
** tan of 5e-324), which turns x / log1p(x) into inf. */
static LLVMValueRef tiny_fixed(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef r) {
  double tiny = t == JITC_FLOAT32 ? 0x1p-30 : 0x1p-60;
  return sel(G, fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", a), vconst_f(G, t, tiny)), a, r);
}

/* ---- ldexp, frexp and modf: exact, on the bits ----
** LLVM has llvm.ldexp and llvm.frexp, but x86-64 calls the C library for
** them one lane at a time.  These are a few integer and float instructions
** per lane instead, with the results of semantics.h's (a NaN argument is
** every float result, frexp's exponent of inf and NaN is 0). */

/* The integer vector of t's bits, t's fraction bits and exponent bias. */
static LLVMTypeRef bits_type(Gen *G, jitc_dtype t) {
  return LLVMVectorType(t == JITC_FLOAT32 ? G->ti32 : G->ti64, W);
}
static int frac_bits(jitc_dtype t) { return t == JITC_FLOAT32 ? 23 : 52; }
static int exp_bias(jitc_dtype t) { return t == JITC_FLOAT32 ? 127 : 1023; }
static LLVMValueRef ivec(Gen *G, LLVMTypeRef vt, long long x) {
  return splat_const(LLVMConstInt(LLVMGetElementType(vt), (unsigned long long)x, 1));
}

/* x * 2^n, n int32 lanes, rounded once (musl's scalbn): while n is beyond
** the normal exponents, x is scaled by 2^bias, or toward the subnormals by
** a step that leaves the last rounding to the final product; two steps
** reach any result that is not inf or 0, and n is then clamped. */
static LLVMValueRef ldexp_lanes(Gen *G, jitc_dtype t, LLVMValueRef x, LLVMValueRef n) {
  LLVMBuilderRef B = G->B;
  int bias = exp_bias(t), step = bias - 1 - (frac_bits(t) + 1);
  LLVMTypeRef it = LLVMTypeOf(n);
  LLVMValueRef hi = ivec(G, it, bias), lo = ivec(G, it, 1 - bias), y = x;
  for (int k = 0; k < 2; k++) {
    LLVMValueRef up = icmp(G, LLVMIntSGT, n, hi), down = icmp(G, LLVMIntSLT, n, lo);
    y = LLVMBuildFMul(B, y, sel(G, up, vconst_f(G, t, ldexp(1, bias)),
                                sel(G, down, vconst_f(G, t, ldexp(1, -step)), vconst_f(G, t, 1))), "");
    n = LLVMBuildSub(B, n, sel(G, up, hi, sel(G, down, ivec(G, it, -step), ivec(G, it, 0))), "");
  }
  n = sel(G, icmp(G, LLVMIntSGT, n, hi), hi, sel(G, icmp(G, LLVMIntSLT, n, lo), lo, n));
  LLVMTypeRef bt = bits_type(G, t);
  if (t == JITC_FLOAT64) n = LLVMBuildSExt(B, n, bt, "");
  LLVMValueRef e = LLVMBuildShl(B, LLVMBuildAdd(B, n, ivec(G, bt, bias), ""),
                                ivec(G, bt, frac_bits(t)), "");
  return LLVMBuildFMul(B, y, LLVMBuildBitCast(B, e, vec_type(G, t), ""), "");
}

/* frexp(x): the mantissa in [0.5, 1) with x's sign and the exponent, from
** the bits of x, a subnormal x scaled into the normal numbers first
** (exactly).  Zeros, infinities and NaNs are their own mantissa, with
** exponent 0. */
static LLVMValueRef frexp_lanes(Gen *G, jitc_dtype t, LLVMValueRef x, bool exponent) {
  LLVMBuilderRef B = G->B;
  int fb = frac_bits(t), bias = exp_bias(t);
  LLVMTypeRef bt = bits_type(G, t);
  LLVMValueRef ax = intr1(G, "llvm.fabs", x);
  LLVMValueRef sub = fcmp(G, LLVMRealOLT, ax, vconst_f(G, t, ldexp(1, 1 - bias)));
  LLVMValueRef y = sel(G, sub, LLVMBuildFMul(B, x, vconst_f(G, t, ldexp(1, fb + 2)), ""), x);
  LLVMValueRef yb = LLVMBuildBitCast(B, y, bt, "");
  LLVMValueRef special = LLVMBuildOr(B, fcmp(G, LLVMRealOEQ, x, vconst_f(G, t, 0)),
                                     fcmp(G, LLVMRealUGE, ax, vconst_f(G, t, INFINITY)), "");
  if (exponent) {
    LLVMValueRef e = LLVMBuildAnd(B, LLVMBuildLShr(B, yb, ivec(G, bt, fb), ""),
                                  ivec(G, bt, 2 * bias + 1), "");
    e = LLVMBuildAdd(B, e, sel(G, sub, ivec(G, bt, 1 - bias - fb - 2), ivec(G, bt, 1 - bias)), "");
    if (t == JITC_FLOAT64) e = LLVMBuildTrunc(B, e, LLVMVectorType(G->ti32, W), "");
    return sel(G, special, LLVMConstNull(LLVMTypeOf(e)), e);
  }
  LLVMValueRef m = LLVMBuildOr(B, LLVMBuildAnd(B, yb, ivec(G, bt, ~((long long)(2 * bias + 1) << fb)), ""),
                               ivec(G, bt, (long long)(bias - 1) << fb), "");
  return sel(G, special, x, LLVMBuildBitCast(B, m, vec_type(G, t), ""));
}

/* modf(x): the integral part trunc(x), and the fractional part x - trunc(x)
** (exact) with x's sign, 0 for infinities. */
static LLVMValueRef modf_lanes(Gen *G, jitc_dtype t, LLVMValueRef x, bool integral) {
  LLVMValueRef w = intr1(G, "llvm.trunc", x);
  if (integral) return w;
  LLVMValueRef inf = fcmp(G, LLVMRealOEQ, intr1(G, "llvm.fabs", x), vconst_f(G, t, INFINITY));
  LLVMValueRef f = sel(G, inf, vconst_f(G, t, 0), LLVMBuildFSub(G->B, x, w, ""));
  return intr2(G, "llvm.copysign", f, x);
}

LLVMValueRef math_mixed(Gen *G, OpId op, jitc_dtype t, LLVMValueRef *args) {
  LLVMValueRef x = args[0], r;
  switch (op) {
  case OP_LDEXP: r = ldexp_lanes(G, t, x, args[1]); break;
  case OP_FREXP: r = frexp_lanes(G, t, x, false); break;
  case OP_FREXP_EXP: return frexp_lanes(G, t, x, true);
  case OP_MODF: r = modf_lanes(G, t, x, false); break;
  case OP_MODF_INT: r = modf_lanes(G, t, x, true); break;
  default: unreachable();
  }
  return nan_arg(G, x, r);
}

/* ---- the entry points ---- */

LLVMValueRef math_gen(Gen *G, OpId op, jitc_dtype t, LLVMValueRef *args, int nargs) {
  LLVMValueRef a = args[0], r;
  switch (op) {
  case OP_EXP: case OP_EXP2: r = edge_fixed(G, op, t, a, NULL); break;
  case OP_SINH: case OP_COSH: case OP_ACOSH: r = range_fixed(G, op, t, a); break;
  case OP_ASINH: case OP_LOG1P: r = tiny_fixed(G, t, a, range_fixed(G, op, t, a)); break;
  case OP_TAN: r = tiny_fixed(G, t, a, math_call(G, op, t, &a, 1)); break;
  default: r = math_call(G, op, t, args, nargs); break;
  }
  return op_info[op].flags & F_NANARG ? nan_arg(G, a, r) : r;
}

LLVMValueRef math_pow(Gen *G, jitc_dtype t, LLVMValueRef x, LLVMValueRef y) {
  return edge_fixed(G, OP_POW, t, x, y);
}

LLVMValueRef math_accurate(Gen *G, OpId op, LLVMValueRef a) {
  static const char *const sleef_isa[5] = {"", "sse2", "sse4", "avx2", "avx512f"};
  const GenTarget *gt = G->gt;
  int lanes = gt->vec_bits / 64;
  char name[64];
  for (int tries = 0; gt->libs.sleef && tries < 2; tries++) {
    snprintf(name, sizeof name, "Sleef_%sd%d_u10%s", op_info[op].libm, lanes,
             tries ? "" : sleef_isa[gt->level]);
    if (gt->libs.has(gt->libs.host, VL_SLEEF, name)) return call_split(G, name, G->tf64, lanes, &a, 1);
  }
  return call_split(G, op_info[op].libm, G->tf64, 1, &a, 1);
}

#endif /* JITC_HAVE_LLVM */
