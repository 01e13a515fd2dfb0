/*
** half.h -- the two 16-bit float formats and their conversions, written by
** hand because they are each format's own: float16 (IEEE 754 binary16,
** NumPy's np.float16: 5 exponent bits, 10 fraction bits) and bfloat16
** (ml_dtypes.bfloat16: the upper half of a float32, 8 exponent bits, 7
** fraction bits).  An element of either is its 16 bits (uint16_t); it
** computes as the float32 it widens to exactly (semantics.h).
**
** Rounding is to nearest, ties to even, keeping subnormals and overflowing
** to infinity, as NumPy and ml_dtypes round:
**   float64 -> float16    directly from the double, in one rounding, as
**                         np.float64(x).astype(np.float16)
**   float32 -> float16    the same (a float32 widens to float64 exactly)
**   float32 -> bfloat16   the upper 16 bits, rounded (ml_dtypes)
**   float64 -> bfloat16   through float32, as ml_dtypes converts: two
**                         roundings, so 1 + 2^-8 + 2^-40 gives 1.0
**                         (tests/t_types_interp.py checks this against
**                         ml_dtypes)
** NaN stays NaN with its sign, made quiet: float16 keeps the upper bits of
** the payload both ways; bfloat16 from float32 is ml_dtypes' quiet NaN
** (0x7fc0 with the sign), and widens to float32 by appending zeros to the
** payload.
*/
#ifndef JITC_HALF_H
#define JITC_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t half_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float half_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ---- float16 ---- */

static inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (uint32_t)(h >> 10) & 0x1f, m = h & 0x3ffu;
  if (e == 0x1f) /* inf, or a NaN made quiet */
    return half_bits_f32(sign | 0x7f800000u | (m ? 0x400000u | m << 13 : 0));
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float32 */
    float v = (float)m * 0x1p-24f;
    return sign ? -v : v;
  }
  return half_bits_f32(sign | (e + 112) << 23 | m << 13);
}

static inline uint16_t f64_to_f16(double d) {
  uint64_t x;
  memcpy(&x, &d, sizeof x);
  uint16_t sign = (uint16_t)(x >> 48 & 0x8000);
  uint64_t ax = x & 0x7fffffffffffffffu;
  if (ax > 0x7ff0000000000000u) /* NaN: quiet, the payload's upper bits */
    return (uint16_t)(sign | 0x7e00 | (ax >> 42 & 0x3ff));
  if (ax >= 0x40effe0000000000u) /* 65520 and up, a tie above 65504: inf */
    return (uint16_t)(sign | 0x7c00);
  int e = (int)(ax >> 52);
  uint64_t mant;
  int shift;
  if (e >= 1023 - 14) {
    /* Normal in float16: rebias the exponent, then keep the fraction's
    ** upper 10 bits; a carry of the rounding moves into the exponent. */
    mant = ax - ((uint64_t)(1023 - 15) << 52);
    shift = 42;
  } else {
    /* Subnormal (or zero) in float16: a multiple of 2^-24. */
    shift = 1051 - e;
    if (shift > 53) /* below 2^-25, half the least subnormal */
      return sign;
    mant = (ax & 0xfffffffffffffu) | (uint64_t)1 << 52;
  }
  uint64_t q = mant >> shift, rem = mant & (((uint64_t)1 << shift) - 1);
  uint64_t half = (uint64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    q++;
  return (uint16_t)(sign | q);
}

static inline uint16_t f32_to_f16(float f) { return f64_to_f16((double)f); }

/* ---- bfloat16 ---- */

static inline float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  if ((h & 0x7fff) > 0x7f80) /* a NaN, made quiet */
    u |= 0x400000u;
  return half_bits_f32(u);
}

static inline uint16_t f32_to_bf16(float f) {
  uint32_t u = half_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16 & 0x8000) | 0x7fc0);
  /* Adding just under half of the dropped part, plus its last kept bit,
  ** carries exactly when the rounding goes up (ties to even); it carries
  ** into the exponent, and from the largest finite value into inf. */
  u += 0x7fffu + (u >> 16 & 1);
  return (uint16_t)(u >> 16);
}

static inline uint16_t f64_to_bf16(double d) { return f32_to_bf16((float)d); }

/* ---- one step toward y (ops.h's F_STEP function), in the 16 bits ----
** From x (neither NaN, not equal to y) toward y: from a zero, the least
** subnormal of y's sign; else the magnitude steps up or down by one unit
** of its last place, into inf past the largest finite value. */
static inline uint16_t half_step(uint16_t x, uint16_t y, float fx, float fy) {
  if ((x & 0x7fff) == 0)
    return (uint16_t)((y & 0x8000) | 1);
  return (uint16_t)((fx < fy) == !(x & 0x8000) ? x + 1 : x - 1);
}

/* NumPy's on float16: a NaN operand gives NumPy's NaN; equal operands
** give y, C99's rule and NumPy 2.5's (the step from 0.0 toward -0.0 is
** -0.0; NumPy 2.4 gave x), as float32 and float64 do through C's. */
static inline uint16_t f16_step(uint16_t x, uint16_t y) {
  float fx = f16_to_f32(x), fy = f16_to_f32(y);
  if (isnan(fx) || isnan(fy))
    return 0x7e00;
  return fx == fy ? y : half_step(x, y, fx, fy);
}

/* ml_dtypes' on bfloat16: equal operands give y, as C's function does. */
static inline uint16_t bf16_step(uint16_t x, uint16_t y) {
  float fx = bf16_to_f32(x), fy = bf16_to_f32(y);
  if (isnan(fx) || isnan(fy))
    return 0x7fc0;
  return fx == fy ? y : half_step(x, y, fx, fy);
}

#endif /* JITC_HALF_H */
