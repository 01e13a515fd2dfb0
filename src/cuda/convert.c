/*
** cuda/convert.c -- conversions in the generated CUDA C: constants as
** literals of their exact type, casts between any two element types, and
** the device functions those casts call.
**
** The rules are the language's (docs/language.md; interp defines them):
** integers wrap into narrower or other-signed integers; floats truncate
** into integers and saturate at the type's ends, NaN giving 0; integers
** round to floats once.  float16 and bfloat16 are held as their bits
** (cuda_typedefs): every cast from one widens it to float32 exactly first;
** every cast to one rounds to nearest even once, from float32 or directly
** from float64 (an integer wider than float64's mantissa is first rounded
** to odd in float64, which keeps that one rounding exact).
**
** CUDA's own half types need the toolkit's fp16 and bf16 headers, which NVRTC 13
** does not have built in: they would need the toolkit's include directory
** on every machine (a pip-installed NVRTC has none) and cost 5 to 10 ms of
** CPU time per compile.  So the conversions are written here, in two
** kinds.  The exact ones (H_HALF, H_HALF64), for casts, convert a NaN as
** interp does (half.h), which the hardware does not (it makes its
** canonical NaN): quiet, with its sign; float16 keeps the top of the
** payload both ways, bfloat16 widens with its payload and rounds a NaN to
** 0x7fc0 with its sign.  float16 uses the PTX cvt
** instructions, which every GPU architecture has, and bfloat16 integer
** operations (its bits are the top half of a float32's).  The hardware's
** (H_HALFHW), one instruction each, are for arithmetic, whose NaNs are the
** GPU's own anyway: the NaN tests of the exact ones made NVRTC take twice
** to three times as long on a kernel computing in float16 (it unrolls
** every conversion of a vector step), and the ops that give a NaN operand
** back work on the bits instead (helpers.c).
*/
#include "../jitc_int.h"
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- constants ---- */

/* The bits of v in 16-bit float type t: rounded to nearest even directly
** from double, overflowing to inf, NaN as the device functions convert it. */
uint16_t cuda_half_bits(double v, jitc_dtype t) {
  bool bf = t == JITC_BFLOAT16;
  int mant = bf ? 7 : 10, emax = bf ? 127 : 15; /* stored mantissa bits, largest exponent */
  uint16_t sign = signbit(v) ? 0x8000 : 0, inf = (uint16_t)(0x7fff ^ ((1u << mant) - 1));
  if (isnan(v)) { /* quiet, the payload's top (half.h's f64_to_f16) */
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    if (bf)
      return sign | 0x7fc0;
    return (uint16_t)(sign | 0x7e00 | (u >> 42 & 0x3ff));
  }
  double a = fabs(v);
  if (a == 0)
    return sign;
  if (isinf(a))
    return sign | inf;
  int e;
  frexp(a, &e); /* a = f * 2^e, 0.5 <= f < 1: the leading bit is 2^(e - 1) */
  e -= 1;
  if (e < 1 - emax)
    e = 1 - emax; /* subnormal: the quantum of the least exponent */
  double q = ldexp(1.0, e - mant);
  double m = nearbyint(a / q); /* a / q is exact; round to nearest even */
  if (m >= ldexp(1.0, mant + 1)) { /* rounded up to the next power of two */
    m /= 2;
    e += 1;
  }
  if (e > emax)
    return sign | inf;
  uint32_t bits = (uint32_t)m; /* < 2^(mant + 1) */
  if (bits >> mant) /* normal: the exponent's field, the leading bit implicit */
    bits = (uint32_t)(e + emax) << mant | (bits & ((1u << mant) - 1));
  return (uint16_t)(sign | bits);
}

double cuda_half_value(double v, jitc_dtype t) {
  if (isnan(v))
    return v;
  uint16_t h = cuda_half_bits(v, t);
  bool bf = t == JITC_BFLOAT16;
  int mant = bf ? 7 : 10, emax = bf ? 127 : 15;
  int ef = (h & 0x7fff) >> mant, m = h & ((1 << mant) - 1);
  double a = ef == (2 * emax + 1) ? INFINITY
             : ef ? ldexp(m + (1 << mant), ef - emax - mant)
                  : ldexp(m, 1 - emax - mant);
  return h & 0x8000 ? -a : a;
}

/* An integer of type t (value v; a uint64 holds its bits in v) as a C literal. */
static void int_literal(char *out, size_t len, jitc_dtype t, int64_t v) {
  const char *T = cuda_ctype(t);
  switch (type_info[t].size * (type_info[t].kind == T_UINT ? -1 : 1)) {
  case 4:
    if (v == INT32_MIN)
      snprintf(out, len, "(-2147483647 - 1)");
    else
      snprintf(out, len, v < 0 ? "(%lld)" : "%lld", (long long)v);
    return;
  case 8:
    if (v == INT64_MIN)
      snprintf(out, len, "(-9223372036854775807ll - 1)");
    else
      snprintf(out, len, v < 0 ? "(%lldll)" : "%lldll", (long long)v);
    return;
  case -4: snprintf(out, len, "%lluu", (unsigned long long)(uint32_t)v); return;
  case -8: snprintf(out, len, "%lluull", (unsigned long long)v); return;
  default: /* the types C promotes to int */
    snprintf(out, len, "((%s)%lld)", T, (long long)v);
    return;
  }
}

/* A float32 or float64 as a literal that reads back exactly. */
static void float_literal(char *out, size_t len, jitc_dtype t, double f) {
  if (!isfinite(f)) {
    if (t == JITC_FLOAT32) {
      float g = (float)f;
      uint32_t bits;
      memcpy(&bits, &g, sizeof bits);
      snprintf(out, len, "__uint_as_float(0x%08xu)", (unsigned)bits);
    } else {
      uint64_t bits;
      memcpy(&bits, &f, sizeof bits);
      snprintf(out, len, "__longlong_as_double(0x%016llxll)", (unsigned long long)bits);
    }
    return;
  }
  char d[40];
  if (t == JITC_FLOAT32) {
    /* The shortest decimal when it reads back as f both straight to float
    ** and through double (a compiler may do either); else hexadecimal. */
    float g = (float)f;
    fmt_float(d, g);
    if ((float)strtod(d, NULL) != g || strtof(d, NULL) != g)
      snprintf(d, sizeof d, "%a", (double)g);
    else if (!strpbrk(d, ".eEx"))
      strcat(d, ".0");
    snprintf(out, len, d[0] == '-' ? "(%sf)" : "%sf", d);
  } else {
    fmt_double(d, f);
    if (strtod(d, NULL) != f)
      snprintf(d, sizeof d, "%a", f);
    else if (!strpbrk(d, ".eEx"))
      strcat(d, ".0");
    snprintf(out, len, d[0] == '-' ? "(%s)" : "%s", d);
  }
}

void cuda_literal(char *out, size_t len, const Node *c) {
  jitc_dtype t = c->type;
  if (t == JITC_BOOL)
    snprintf(out, len, "((b8)%d)", c->k.i != 0);
  else if (dtype_is_int(t))
    int_literal(out, len, t, c->k.i);
  else if (cuda_is_half(t))
    snprintf(out, len, "%s{0x%04x}", cuda_ctype(t), (unsigned)cuda_half_bits(c->k.f, t));
  else if (dtype_is_complex(t)) {
    char re[56], im[56];
    float_literal(re, sizeof re, dtype_part(t), c->k.z[0]);
    float_literal(im, sizeof im, dtype_part(t), c->k.z[1]);
    snprintf(out, len, "%s{%s, %s}", cuda_ctype(t), re, im);
  } else
    float_literal(out, len, t, c->k.f);
}

/* ---- casts ---- */

static void use(bool used[H_NHELPERS][JITC_NDTYPES], CudaHelper h, jitc_dtype t) {
  cuda_helper_use(used, h, t);
}

void cuda_cast(Buf *o, bool used[H_NHELPERS][JITC_NDTYPES], jitc_dtype r, jitc_dtype t,
               const char *x) {
  const char *R = cuda_ctype(r), *S = cuda_ctype(t);
  if (r == t) {
    buf_puts(o, x);
  } else if (r == JITC_BOOL) { /* NaN is true; a 16-bit float's bits but the sign */
    if (cuda_is_half(t))
      buf_printf(o, "(b8)((%s.h & 0x7fff) != 0)", x);
    else
      buf_printf(o, "(b8)(%s != 0)", x);
  } else if (cuda_is_half(t)) {
    /* to float32 first: exactly where a NaN reaches the result (a float,
    ** whose NaN keeps its sign: the hardware's cvt.f32.f16 makes every NaN
    ** its canonical positive one, which float64 got on an H100), else by
    ** the hardware (an integer takes a NaN as 0) */
    bool exact = dtype_is_float(r);
    use(used, exact ? H_HALF : H_HALFHW, t);
    char w[96];
    snprintf(w, sizeof w, "jitc_%s_%s(%s)", exact ? "widen" : "up", S, x);
    cuda_cast(o, used, r, JITC_FLOAT32, w);
  } else if (cuda_is_half(r)) {
    size_t size = type_info[t].size;
    if (r == JITC_BFLOAT16 && (t == JITC_FLOAT64 || (dtype_is_int(t) && size >= 4))) {
      /* ml_dtypes: through the nearest float32, two roundings */
      use(used, H_HALF, r);
      buf_printf(o, "jitc_narrow_%s((f32)(%s))", R, x);
    } else if (t == JITC_FLOAT64 || (dtype_is_int(t) && size == 4)) { /* exact in float64 */
      use(used, H_HALF64, r);
      buf_printf(o, t == JITC_FLOAT64 ? "jitc_narrow64_%s(%s)" : "jitc_narrow64_%s((f64)%s)", R, x);
    } else if (dtype_is_int(t) && size == 8) {
      use(used, H_HALF64, r);
      use(used, H_ODD, t);
      buf_printf(o, "jitc_narrow64_%s(jitc_odd_%s(%s))", R, S, x);
    } else if (t == JITC_FLOAT32) {
      use(used, H_HALF, r);
      buf_printf(o, "jitc_narrow_%s(%s)", R, x);
    } else { /* bool and the integers exact in float32, never NaN */
      use(used, H_HALFHW, r);
      buf_printf(o, "jitc_down_%s((f32)%s)", R, x);
    }
  } else if (dtype_is_float(t) && dtype_is_int(r)) {
    use(used, t == JITC_FLOAT32 ? H_SAT32 : H_SAT64, r);
    buf_printf(o, "jitc_to_%s_%s(%s)", R, S, x);
  } else if (type_info[r].kind == T_SINT && dtype_is_int(t) &&
             (type_info[r].size < type_info[t].size ||
              (type_info[r].size == type_info[t].size && type_info[t].kind == T_UINT))) {
    /* wraps: to the unsigned type first, which C defines modulo 2^bits */
    buf_printf(o, "(%s)(%s)%s", R, cuda_utype(r), x);
  } else {
    buf_printf(o, "(%s)%s", R, x);
  }
}

/* ---- the device functions ---- */

/* The saturating cast from float type f to integer type r. */
static void sat_text(Buf *b, jitc_dtype r, jitc_dtype f) {
  const char *R = cuda_ctype(r), *F = cuda_ctype(f);
  int bits = 8 * type_info[r].size;
  char hi[48], lo[48];
  int_literal(hi, sizeof hi, r, (int64_t)type_info[r].hi);
  int_literal(lo, sizeof lo, r, type_info[r].lo);
  buf_printf(b, "// Saturating, NaN -> 0.\n" DEV "%s jitc_to_%s_%s(%s x) {\n", R, R, F, F);
  if (type_info[r].kind == T_UINT) {
    buf_printf(b, "  if (!(x >= (%s)1.0)) return 0; // NaN, negative, or truncated to 0\n"
                  "  if (x >= (%s)%.1f) return %s;\n", F, F, ldexp(1, bits), hi);
  } else {
    buf_printf(b, "  if (x != x) return 0;\n  if (x >= (%s)%.1f) return %s;\n"
                  "  if (x < (%s)%.1f) return %s;\n", F, ldexp(1, bits - 1), hi, F,
               -ldexp(1, bits - 1), lo);
  }
  buf_printf(b, "  return (%s)x;\n}\n", R);
}

static void half_text(Buf *b, jitc_dtype t) {
  if (t == JITC_FLOAT16) {
    buf_puts(b, "// float16 <-> float32: the hardware's conversions; a NaN as interp converts it\n"
                "// (made quiet, the sign and the top of the payload kept).\n"
                DEV "f32 jitc_widen_f16(const f16 x) {\n"
                "  if ((x.h & 0x7fffu) > 0x7c00u)\n"
                "    return __uint_as_float((u32)(x.h & 0x8000u) << 16 | 0x7fc00000u | (u32)(x.h & 0x3ffu) << 13);\n"
                "  f32 r;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(r) : \"h\"(x.h));\n  return r;\n}\n"
                DEV "f16 jitc_narrow_f16(const f32 x) {\n"
                "  const u32 u = __float_as_uint(x);\n  f16 r;\n"
                "  if ((u & 0x7fffffffu) > 0x7f800000u)\n"
                "    r.h = (u16)(u >> 16 & 0x8000u | 0x7e00u | (u >> 13 & 0x3ffu));\n"
                "  else\n    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(r.h) : \"f\"(x));\n"
                "  return r;\n}\n");
  } else {
    buf_puts(b, "// bfloat16 <-> float32: its bits are the top half of a float32's (a NaN made\n"
                "// quiet); rounded to nearest even on the bits, a NaN to 0x7fc0 with its sign.\n"
                DEV "f32 jitc_widen_bf16(const bf16 x) {\n"
                "  return __uint_as_float((u32)x.h << 16 | ((x.h & 0x7fffu) > 0x7f80u ? 0x400000u : 0u));\n}\n"
                DEV "bf16 jitc_narrow_bf16(const f32 x) {\n"
                "  const u32 u = __float_as_uint(x);\n  bf16 r;\n"
                "  r.h = (u & 0x7fffffffu) > 0x7f800000u ? (u16)(u >> 16 & 0x8000u | 0x7fc0u)\n"
                "                                       : (u16)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);\n"
                "  return r;\n}\n");
  }
}

/* The hardware's conversions, one instruction each: exact but for a NaN,
** which stays a NaN (the GPU's canonical one).  For arithmetic, whose NaNs
** are the GPU's own anyway, so that the many conversions of a kernel that
** computes in float16 cost NVRTC and the GPU no more than they must. */
static void halfhw_text(Buf *b, jitc_dtype t) {
  if (t == JITC_FLOAT16) {
    buf_puts(b, "// float16 <-> float32 in one instruction each (a NaN's payload is the GPU's).\n"
                DEV "f32 jitc_up_f16(const f16 x) { f32 r; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(r) : \"h\"(x.h)); return r; }\n"
                DEV "f16 jitc_down_f16(const f32 x) { f16 r; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(r.h) : \"f\"(x)); return r; }\n");
  } else {
    /* cvt.rn.bf16.f32 needs sm_80 */
    buf_puts(b, "// bfloat16 <-> float32 in one instruction each (a NaN's payload is the GPU's).\n"
                DEV "f32 jitc_up_bf16(const bf16 x) { return __uint_as_float((u32)x.h << 16); }\n"
                DEV "bf16 jitc_down_bf16(const f32 x) {\n"
                "#if __CUDA_ARCH__ >= 800\n"
                "  bf16 r;\n  asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(r.h) : \"f\"(x));\n  return r;\n"
                "#else\n  return jitc_narrow_bf16(x);\n#endif\n}\n");
  }
}

/* float64 to float16 in one rounding (H_HALF64, float16's alone: bfloat16
** goes from float64 through the nearest float32, two roundings, as
** ml_dtypes converts it). */
static void half64_text(Buf *b, jitc_dtype t) {
  if (t != JITC_FLOAT16)
    return;
  buf_puts(b, "// float64 -> float16 in one rounding; a NaN as interp converts it (quiet).\n"
              DEV "f16 jitc_narrow64_f16(const f64 x) {\n"
              "  const u64 u = (u64)__double_as_longlong(x);\n  f16 r;\n"
              "  if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)\n"
              "    r.h = (u16)((u32)(u >> 48) & 0x8000u | 0x7e00u | ((u32)(u >> 42) & 0x3ffu));\n"
              "  else\n    asm(\"cvt.rn.f16.f64 %0, %1;\" : \"=h\"(r.h) : \"d\"(x));\n"
              "  return r;\n}\n");
}

void cuda_convert_text(Buf *b, CudaHelper h, jitc_dtype t) {
  switch (h) {
  case H_SAT32: sat_text(b, t, JITC_FLOAT32); return;
  case H_SAT64: sat_text(b, t, JITC_FLOAT64); return;
  case H_HALF: half_text(b, t); return;
  case H_HALFHW: halfhw_text(b, t); return;
  case H_HALF64: half64_text(b, t); return;
  case H_ODD: {
    bool un = type_info[t].kind == T_UINT;
    buf_printf(b, "// Rounded to odd in float64: toward zero, the last bit set when inexact.\n"
                  DEV "f64 jitc_odd_%s(const %s x) {\n  const f64 d = %s(x);\n"
                  "  return (%s)d == x ? d : __longlong_as_double(__double_as_longlong(d) | 1);\n}\n",
               cuda_ctype(t), cuda_ctype(t), un ? "__ull2double_rz" : "__ll2double_rz",
               cuda_ctype(t));
    return;
  }
  default: return;
  }
}
