/*
** cuda/helpers.c -- the device functions that the generated CUDA C calls
** where one C operator does not give NumPy's answer: integer division and
** shifts that never trap, saturating casts, NaN-propagating minimum, a
** hypot that does not overflow, sign bits moved without touching NaNs.
**
** Each is the device twin of a scalar function of interp/interp.c (which defines
** the semantics), written once as a template over the element type and
** emitted only for the types a program uses.  cuda/gen.c asks for them
** with cuda_helper_use() and writes them with cuda_helper_text(); start
** reading at cuda_helper_text.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdio.h>

/* The unsigned integer type of t's size, which holds its bits. */
const char *cuda_utype(jitc_dtype t) {
  for (int u = 0; u < JITC_NDTYPES; u++)
    if (type_info[u].kind == T_UINT && type_info[u].size == type_info[t].size)
      return type_info[u].cname;
  unreachable(); /* types.h has an unsigned type of every size */
}

const char *cuda_wtype(jitc_dtype t) {
  return type_info[t].size < 4 ? cuda_utype(JITC_UINT32) : cuda_utype(t);
}

void cuda_typedefs(Buf *b, unsigned dtypes) {
  /* The integers and the wider floats always (the kernels' indices and the
  ** helpers use them); the 16-bit floats where the program has them (the
  ** complex types: cuda_complex_typedefs). */
  for (int t = 0; t < JITC_NDTYPES; t++)
    if (!cuda_is_half(t) && !dtype_is_complex(t))
      buf_printf(b, "typedef %s %s;\n", type_info[t].cuda, type_info[t].cname);
  /* CUDA's __half and __nv_bfloat16 come from headers that NVRTC does not
  ** have built in: a 16-bit float is a struct of its bits instead, so that
  ** no C operator can touch it unconverted. */
  for (int t = 0; t < JITC_NDTYPES; t++)
    if (cuda_is_half(t) && dtypes >> t & 1)
      buf_printf(b, "struct %s { %s h; }; // %s, as its bits\n", type_info[t].cname,
                 cuda_utype(t), type_info[t].name);
  buf_putc(b, '\n');
}

/* Writes `tpl` with $T (the C type), $U (its unsigned twin), $V (the type
** its arithmetic is done in, cuda_wtype), $S (the type's name, used as a
** suffix), $F ("f" for float32 libm names), $W (bits) and $I (a 16-bit
** float's inf as bits). */
static void put_tpl(Buf *b, const char *tpl, jitc_dtype t) {
  for (const char *c = tpl; *c; c++) {
    if (*c != '$') {
      buf_putc(b, *c);
      continue;
    }
    switch (*++c) {
    case 'T': buf_puts(b, cuda_ctype(t)); break;
    case 'U': buf_puts(b, cuda_utype(t)); break;
    case 'V': buf_puts(b, cuda_wtype(t)); break;
    case 'S': buf_puts(b, cuda_ctype(t)); break;
    case 'F': buf_puts(b, t == JITC_FLOAT32 ? "f" : ""); break;
    case 'W': buf_printf(b, "%d", 8 * type_info[t].size); break;
    case 'I': buf_puts(b, t == JITC_FLOAT16 ? "0x7c00u" : "0x7f80u"); break;
    default: buf_putc(b, '$'); c--; break;
    }
  }
}

/* The helpers of a 16-bit float type that move its bits, as semantics.h's
** HALF_OPS do: a NaN operand comes back as it is, sign and payload, as
** NumPy's float16 and ml_dtypes' bfloat16 give it; comparisons on the
** values widened. */
static void half_helper_text(Buf *b, CudaHelper h, jitc_dtype t) {
  switch (h) {
  case H_ISNAN:
    put_tpl(b, DEV "b8 jitc_isnan_$S(const $T x) { return (x.h & 0x7fffu) > $I; }\n"
               DEV "b8 jitc_isinf_$S(const $T x) { return (x.h & 0x7fffu) == $I; }\n"
               DEV "b8 jitc_isfinite_$S(const $T x) { return (x.h & $I) != $I; }\n", t);
    return;
  case H_MINIMUM:
  case H_MAXIMUM:
  case H_FMIN:
  case H_FMAX: {
    static const char *const name[] = {"minimum", "maximum", "fmin", "fmax"};
    int k = h - H_MINIMUM;
    char tpl[300];
    snprintf(tpl, sizeof tpl, "%s" DEV "$T jitc_%s_$S(const $T a, const $T b) {\n"
             "  return jitc_isnan_$S(%s) ? a : jitc_up_$S(a) %c jitc_up_$S(b) ? a : b;\n}\n",
             k ? "" : "// NaN-propagating (minimum) or ignoring one NaN (fmin), on the values.\n",
             name[k], k < 2 ? "a" : "b", k % 2 ? '>' : '<');
    put_tpl(b, tpl, t);
    return;
  }
  case H_CLIP:
    put_tpl(b, DEV "$T jitc_clip_$S($T x, $T lo, $T hi) { return jitc_minimum_$S(jitc_maximum_$S(x, lo), hi); }\n", t);
    return;
  case H_SIGNBIT:
    put_tpl(b, "// -x, |x| and copysign(x, y) on the sign bit.\n"
               DEV "$T jitc_neg_$S($T x) { x.h ^= 0x8000u; return x; }\n"
               DEV "$T jitc_abs_$S($T x) { x.h &= 0x7fffu; return x; }\n"
               DEV "$T jitc_copysign_$S($T x, const $T y) { x.h = (u16)((x.h & 0x7fffu) | (y.h & 0x8000u)); return x; }\n",
            t);
    return;
  case H_NANARG:
    /* As interp: an F_NANARG function (ops.h) gives the argument itself;
    ** another (sqrt, floor, sign, ...) computes in float32 and rounds, which
    ** gives the argument made quiet (float16, the payload's top kept) or
    ** bfloat16's 0x7fc0 with the sign. */
    put_tpl(b, "// f(x) for a function of one argument when x is a NaN: x itself (nanarg),\n"
               "// or x as float32's function gives it back, rounded (nanq).\n"
               DEV "$T jitc_nanarg_$S(const $T x, const $T r) { return jitc_isnan_$S(x) ? x : r; }\n", t);
    put_tpl(b, t == JITC_FLOAT16
                   ? DEV "$T jitc_nanq_$S($T x, const $T r) {\n"
                         "  if (!jitc_isnan_$S(x)) return r;\n  x.h |= 0x200u;\n  return x;\n}\n"
                   : DEV "$T jitc_nanq_$S($T x, const $T r) {\n"
                         "  if (!jitc_isnan_$S(x)) return r;\n  x.h = (u16)((x.h & 0x8000u) | 0x7fc0u);\n  return x;\n}\n",
            t);
    return;
  case H_STEP: {
    /* half.h's f16_step and bf16_step: NumPy's float16 and ml_dtypes'
    ** bfloat16 differ in the NaN they give; equal operands give y (C99's
    ** rule). */
    bool f16 = t == JITC_FLOAT16;
    char tpl[900];
    snprintf(tpl, sizeof tpl,
             "// F_STEP's step toward y in the 16 bits (float32's would round back to x): a NaN\n"
             "// operand gives 0x%04x; equal operands give y (C99); from a zero the least\n"
             "// subnormal toward y; else one unit in the last place up or down.\n"
             DEV "$T jitc_step_$S(const $T x, const $T y) {\n"
             "  $T r;\n"
             "  if (jitc_isnan_$S(x) || jitc_isnan_$S(y)) { r.h = 0x%04xu; return r; }\n"
             "  const f32 fx = jitc_up_$S(x), fy = jitc_up_$S(y);\n"
             "  if (fx == fy) return y;\n"
             "  if ((x.h & 0x7fffu) == 0) { r.h = (u16)((y.h & 0x8000u) | 1u); return r; }\n"
             "  r.h = (u16)((fx < fy) == !(x.h & 0x8000u) ? x.h + 1u : x.h - 1u);\n"
             "  return r;\n}\n",
             f16 ? 0x7e00 : 0x7fc0, f16 ? 0x7e00 : 0x7fc0);
    put_tpl(b, tpl, t);
    return;
  }
  default:
    return; /* the conversions: cuda_convert_text */
  }
}

/* The helpers' text, for one type.  Each is the device twin of interp/interp.c's
** function of the same name. */
void cuda_helper_text(Buf *b, CudaHelper h, jitc_dtype t) {
  /* Unsigned integers: C's division, logical shifts, no sign to test (a
  ** comparison of an unsigned value with 0 would draw NVRTC's warning). */
  bool un = type_info[t].kind == T_UINT;
  if (h >= H_CARITH) /* cuda/complex.c's and cuda/cmath.c's */
    return;
  if (cuda_is_half(t)) {
    half_helper_text(b, h, t);
    return;
  }
  switch (h) {
  case H_FLOORDIV:
    if (un)
      put_tpl(b, "// x // 0 == 0.\n"
                 DEV "$T jitc_floordiv_$S($T a, $T b) { return b == 0 ? ($T)0 : ($T)(a / b); }\n", t);
    else if (dtype_is_int(t))
      put_tpl(b, "// x // 0 == 0; MIN // -1 wraps to MIN.\n"
                 DEV "$T jitc_floordiv_$S($T a, $T b) {\n"
                 "  if (b == 0) return 0;\n"
                 "  if (b == -1) return ($T)(($U)0 - ($U)a);\n"
                 "  $T q = a / b;\n"
                 "  if (a % b != 0 && ((a < 0) != (b < 0))) q--;\n"
                 "  return q;\n}\n", t);
    else
      put_tpl(b, "// npy_divmod: floor quotient and remainder with the divisor's sign.\n"
                 DEV "$T jitc_divmod_$S($T a, $T b, $T *modulus) {\n"
                 "  $T mod = fmod$F(a, b);\n"
                 "  if (b == 0) { *modulus = mod; return a / b; }\n"
                 "  $T div = (a - mod) / b;\n"
                 "  if (mod != 0) {\n"
                 "    if ((b < 0) != (mod < 0)) { mod += b; div -= 1; }\n"
                 "  } else {\n"
                 "    mod = copysign$F(($T)0, b);\n"
                 "  }\n"
                 "  $T fl;\n"
                 "  if (div != 0) {\n"
                 "    fl = floor$F(div);\n"
                 "    if (div - fl > ($T)0.5) fl += 1;\n"
                 "  } else {\n"
                 "    fl = copysign$F(($T)0, a / b);\n"
                 "  }\n"
                 "  *modulus = mod;\n"
                 "  return fl;\n}\n", t);
    return;
  case H_MOD:
    if (un)
      put_tpl(b, "// x % 0 == 0.\n"
                 DEV "$T jitc_mod_$S($T a, $T b) { return b == 0 ? ($T)0 : ($T)(a % b); }\n", t);
    else if (dtype_is_int(t))
      put_tpl(b, "// The divisor's sign; x % 0 == 0; MIN % -1 == 0.\n"
                 DEV "$T jitc_mod_$S($T a, $T b) {\n"
                 "  if (b == 0 || b == -1) return 0;\n"
                 "  $T r = a % b;\n"
                 "  if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
                 "  return r;\n}\n", t);
    return; /* floats: jitc_divmod, emitted by H_FLOORDIV */
  case H_FMOD:
    if (un)
      put_tpl(b, DEV "$T jitc_fmod_$S($T a, $T b) { return b == 0 ? ($T)0 : ($T)(a % b); }\n", t);
    else
      put_tpl(b, DEV "$T jitc_fmod_$S($T a, $T b) { return b == 0 || b == -1 ? 0 : a % b; }\n", t);
    return;
  case H_POW:
    if (un)
      put_tpl(b, "// Wrapping repeated squaring.\n"
                 DEV "$T jitc_pow_$S($T a, $T b) {\n"
                 "  $V r = 1, x = a, e = b;\n"
                 "  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }\n"
                 "  return ($T)r;\n}\n", t);
    else
      put_tpl(b, "// Wrapping repeated squaring; a negative exponent gives trunc(1/a^-b).\n"
               DEV "$T jitc_pow_$S($T a, $T b) {\n"
               "  if (b < 0) return a == 1 ? ($T)1 : a == -1 ? ((($U)b & 1) ? ($T)-1 : ($T)1) : ($T)0;\n"
               "  $V r = 1, x = ($U)a, e = ($U)b;\n"
               "  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }\n"
               "  return ($T)r;\n}\n", t);
    return;
  case H_SHL:
    put_tpl(b, "// npy_lshift: counts outside [0, $W) shift everything out.\n"
               DEV "$T jitc_shl_$S($T a, $T b) { return ($U)b < $W ? ($T)(($U)a << ($U)b) : 0; }\n",
            t);
    return;
  case H_SHR:
    if (un)
      put_tpl(b, "// Logical; counts of $W or more shift everything out.\n"
                 DEV "$T jitc_shr_$S($T a, $T b) { return b < $W ? ($T)(a >> b) : ($T)0; }\n", t);
    else
      put_tpl(b, "// npy_rshift: counts outside [0, $W) leave only the sign.\n"
               DEV "$T jitc_shr_$S($T a, $T b) {\n"
               "  if (($U)b < $W) return a < 0 ? ~(~a >> ($U)b) : a >> ($U)b;\n"
               "  return a < 0 ? -1 : 0;\n}\n", t);
    return;
  case H_ISNAN:
    /* On the bits, so that no math flag can assume NaNs away. */
    if (t == JITC_FLOAT32)
      buf_puts(b, DEV "b8 jitc_isnan_f32(f32 x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }\n"
                  DEV "b8 jitc_isinf_f32(f32 x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }\n"
                  DEV "b8 jitc_isfinite_f32(f32 x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }\n");
    else
      buf_puts(b, DEV "b8 jitc_isnan_f64(f64 x) { return ((u64)__double_as_longlong(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }\n"
                  DEV "b8 jitc_isinf_f64(f64 x) { return ((u64)__double_as_longlong(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }\n"
                  DEV "b8 jitc_isfinite_f64(f64 x) { return ((u64)__double_as_longlong(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }\n");
    return;
  case H_MINIMUM:
    put_tpl(b, "// NaN-propagating; equal operands (0.0, -0.0) give the second.\n"
               DEV "$T jitc_minimum_$S($T a, $T b) { return jitc_isnan_$S(a) ? a : a < b ? a : b; }\n", t);
    return;
  case H_MAXIMUM:
    put_tpl(b, DEV "$T jitc_maximum_$S($T a, $T b) { return jitc_isnan_$S(a) ? a : a > b ? a : b; }\n", t);
    return;
  case H_FMIN:
    put_tpl(b, "// Ignores one NaN.\n"
               DEV "$T jitc_fmin_$S($T a, $T b) { return jitc_isnan_$S(b) ? a : a < b ? a : b; }\n", t);
    return;
  case H_FMAX:
    put_tpl(b, DEV "$T jitc_fmax_$S($T a, $T b) { return jitc_isnan_$S(b) ? a : a > b ? a : b; }\n", t);
    return;
  case H_CLIP:
    if (dtype_is_float(t))
      put_tpl(b, DEV "$T jitc_clip_$S($T x, $T lo, $T hi) { return jitc_minimum_$S(jitc_maximum_$S(x, lo), hi); }\n", t);
    else
      put_tpl(b, DEV "$T jitc_clip_$S($T x, $T lo, $T hi) { $T y = x > lo ? x : lo; return y < hi ? y : hi; }\n", t);
    return;
  case H_SAT32:
  case H_SAT64:
  case H_HALF:
  case H_HALFHW:
  case H_HALF64:
  case H_ODD:
    return; /* cuda_convert_text */
  case H_HYPOT:
    /* CUDA's hypot is within 2 ulp, which near the top of the range rounds
    ** finite results (hypot(1, DBL_MAX)) up to inf.  float32: exact squares
    ** and one rounding of the sum in double.  float64: the larger side when
    ** the other is negligible; near the top, CUDA's result on operands
    ** scaled by 2^-600 (exact), refined by one Newton step whose residual is
    ** computed with exact products (fma), then scaled back. */
    if (t == JITC_FLOAT32)
      buf_puts(b, "// hypot: exactly rounded squares and sum in double.\n"
                  DEV "f32 jitc_hypot_f32(f32 a, f32 b) {\n"
                  "  if (jitc_isinf_f32(a) || jitc_isinf_f32(b)) return __uint_as_float(0x7f800000u);\n"
                  "  return (f32)sqrt((f64)a * (f64)a + (f64)b * (f64)b);\n}\n");
    else
      buf_puts(b, "// hypot that does not round finite results up to inf near the top of the range.\n"
                  DEV "f64 jitc_hypot_f64(f64 a, f64 b) {\n"
                  "  if (jitc_isinf_f64(a) || jitc_isinf_f64(b)) return __longlong_as_double(0x7ff0000000000000ll);\n"
                  "  f64 fa = fabs(a), fb = fabs(b);\n"
                  "  f64 v = fa > fb ? fa : fb, w = fa > fb ? fb : fa;\n"
                  "  if (w <= v * 0x1p-54) return v; // exactly rounded: the other side is negligible\n"
                  "  if (!(v > 0x1p1000)) return hypot(a, b);\n"
                  "  f64 x = v * 0x1p-600, y = w * 0x1p-600;\n"
                  "  f64 h = hypot(x, y);\n"
                  "  f64 hh = h * h, hl = fma(h, h, -hh);\n"
                  "  f64 xx = x * x, xl = fma(x, x, -xx);\n"
                  "  f64 yy = y * y, yl = fma(y, y, -yy);\n"
                  "  f64 r = ((xx - hh) + yy) + ((xl + yl) - hl);\n"
                  "  return (h + r / (2 * h)) * 0x1p600;\n}\n");
    return;
  case H_SIGNBIT:
    /* PTX's neg, abs and copysign may return another NaN than the one they
    ** were given (the GPU's neg and abs of a NaN give the canonical, positive
    ** NaN), and the compiler turns sign-bit arithmetic written in C back into
    ** them.  So the sign bit is moved by integer instructions it cannot see
    ** through: a NaN keeps its sign, as on every target. */
    if (t == JITC_FLOAT32)
      buf_puts(b, "// -x, |x| and copysign(x, y) on the sign bit alone (NaNs keep theirs).\n"
                  DEV "f32 jitc_neg_f32(f32 x) {\n"
                  "  u32 r; asm(\"xor.b32 %0, %1, 0x80000000;\" : \"=r\"(r) : \"r\"(__float_as_uint(x)));\n"
                  "  return __uint_as_float(r);\n}\n"
                  DEV "f32 jitc_abs_f32(f32 x) {\n"
                  "  u32 r; asm(\"and.b32 %0, %1, 0x7fffffff;\" : \"=r\"(r) : \"r\"(__float_as_uint(x)));\n"
                  "  return __uint_as_float(r);\n}\n"
                  DEV "f32 jitc_copysign_f32(f32 x, f32 y) {\n"
                  "  u32 r;\n"
                  "  asm(\"{ .reg .b32 m, s; and.b32 m, %1, 0x7fffffff; and.b32 s, %2, 0x80000000; \"\n"
                  "      \"or.b32 %0, m, s; }\" : \"=r\"(r) : \"r\"(__float_as_uint(x)), \"r\"(__float_as_uint(y)));\n"
                  "  return __uint_as_float(r);\n}\n");
    else
      buf_puts(b, "// -x, |x| and copysign(x, y) on the sign bit alone (NaNs keep theirs).\n"
                  DEV "f64 jitc_neg_f64(f64 x) {\n"
                  "  u64 r;\n"
                  "  asm(\"xor.b64 %0, %1, 0x8000000000000000;\" : \"=l\"(r) : \"l\"((u64)__double_as_longlong(x)));\n"
                  "  return __longlong_as_double((i64)r);\n}\n"
                  DEV "f64 jitc_abs_f64(f64 x) {\n"
                  "  u64 r;\n"
                  "  asm(\"and.b64 %0, %1, 0x7fffffffffffffff;\" : \"=l\"(r) : \"l\"((u64)__double_as_longlong(x)));\n"
                  "  return __longlong_as_double((i64)r);\n}\n"
                  DEV "f64 jitc_copysign_f64(f64 x, f64 y) {\n"
                  "  u64 r;\n"
                  "  asm(\"{ .reg .b64 m, s; and.b64 m, %1, 0x7fffffffffffffff; \"\n"
                  "      \"and.b64 s, %2, 0x8000000000000000; or.b64 %0, m, s; }\"\n"
                  "      : \"=l\"(r) : \"l\"((u64)__double_as_longlong(x)), \"l\"((u64)__double_as_longlong(y)));\n"
                  "  return __longlong_as_double((i64)r);\n}\n");
    return;
  case H_STEP:
    return; /* floats of 32 and 64 bits: the C library's function */
  case H_NANARG:
    /* C99 Annex F: a function of one NaN argument returns that NaN.  CUDA's
    ** math library returns its canonical NaN instead. */
    put_tpl(b, "// f(x) for a function of one argument: x itself when x is a NaN.\n"
               DEV "$T jitc_nanarg_$S($T x, $T r) { return x != x ? x : r; }\n", t);
    return;
  case H_MIXED:
    /* ldexp, frexp and modf (ops.h: the rows of mixed types): CUDA's, which
    ** are exact, with the special values of semantics.h. */
    put_tpl(b, "// ldexp, frexp, modf: a NaN argument is every float result; frexp's\n"
               "// exponent of inf and NaN is 0 (CUDA's is unspecified).\n"
               DEV "$T jitc_ldexp_$S($T x, i32 n) { return x != x ? x : ldexp$F(x, n); }\n"
               DEV "$T jitc_frexp_$S($T x) { int e; $T m = frexp$F(x, &e); return x != x ? x : m; }\n"
               DEV "i32 jitc_frexp_exp_$S($T x) { int e; frexp$F(x, &e); return jitc_isfinite_$S(x) ? e : 0; }\n"
               DEV "$T jitc_modf_$S($T x) { $T w; $T f = modf$F(x, &w); return x != x ? x : f; }\n"
               DEV "$T jitc_modf_int_$S($T x) { $T w; modf$F(x, &w); return x != x ? x : w; }\n", t);
    return;
  default: /* the complex types' (above) */
    break;
  }
}

void cuda_helper_use(bool used[H_NHELPERS][JITC_NDTYPES], CudaHelper h, jitc_dtype t) {
  used[h][t] = true; /* a complex type's: cuda_complex_use */
  /* What the helpers' texts call. */
  if ((h == H_MINIMUM || h == H_MAXIMUM || h == H_FMIN || h == H_FMAX) && dtype_is_float(t))
    used[H_ISNAN][t] = true;
  if (h == H_CLIP && dtype_is_float(t)) {
    cuda_helper_use(used, H_MINIMUM, t);
    cuda_helper_use(used, H_MAXIMUM, t);
  }
  if (h == H_MOD && dtype_is_float(t))
    used[H_FLOORDIV][t] = true;
  if (h == H_HYPOT || h == H_MIXED)
    used[H_ISNAN][t] = true; /* jitc_isinf_*, jitc_isfinite_* */
  if (h == H_HALFHW && t == JITC_BFLOAT16)
    used[H_HALF][t] = true; /* jitc_narrow_bf16 */
  if (cuda_is_half(t) && (h == H_MINIMUM || h == H_MAXIMUM || h == H_FMIN || h == H_FMAX ||
                          h == H_SIGNBIT || h == H_NANARG || h == H_STEP)) {
    used[H_ISNAN][t] = true;
    used[H_HALFHW][t] = true; /* jitc_up_* */
  }
}
