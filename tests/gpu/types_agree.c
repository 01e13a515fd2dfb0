/*
** types_agree.c -- for tests/gpu/types_gpu.c: elements of every type read
** from memory, and whether a target's answer agrees with interp's under the
** rules that types_gpu.c's head states.  complex64 and complex128 are two
** floats each, compared part by part: their arithmetic, picks and casts as
** floats' (interp's bits), their functions within 4 ulp in each part or 8
** epsilons of the larger part's magnitude (a part much smaller than the
** other carries the other's rounding).
*/
#include "types_agree.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

bool is_half(jitc_dtype t) { return type_info[t].kind == T_FLOAT && type_info[t].size == 2; }

/* A 16-bit float's value. */
static double half_value(jitc_dtype t, uint16_t h) {
  if (t == JITC_BFLOAT16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int e = h >> 10 & 31, m = h & 1023;
  double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(m + 1024, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -v : v;
}

double value(jitc_dtype t, const void *x, int64_t j) {
  if (dtype_is_complex(t)) /* part 2j; the imaginary part is element 2j + 1 of the part's type */
    return value(dtype_part(t), x, 2 * j);
  const char *p = (const char *)x + (size_t)j * type_info[t].size;
  union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
          uint64_t u64; int64_t i64; float f; double d; } v;
  memcpy(&v, p, (size_t)type_info[t].size);
  if (is_half(t))
    return half_value(t, v.u16);
  switch (type_info[t].kind * 16 + type_info[t].size) {
  case T_BOOL * 16 + 1: return v.u8 != 0;
  case T_SINT * 16 + 1: return v.i8;
  case T_SINT * 16 + 2: return v.i16;
  case T_SINT * 16 + 4: return v.i32;
  case T_SINT * 16 + 8: return (double)v.i64;
  case T_UINT * 16 + 1: return v.u8;
  case T_UINT * 16 + 2: return v.u16;
  case T_UINT * 16 + 4: return v.u32;
  case T_UINT * 16 + 8: return (double)v.u64;
  case T_FLOAT * 16 + 4: return v.f;
  default: return v.d;
  }
}

/* Element j of x's bits (a type of at most 8 bytes). */
static unsigned long long raw(jitc_dtype t, const void *x, int64_t j) {
  unsigned long long u = 0;
  memcpy(&u, (const char *)x + (size_t)j * type_info[t].size, (size_t)type_info[t].size);
  return u;
}

void show_elem(char out[120], jitc_dtype t, const void *x, int64_t j) {
  if (dtype_is_complex(t)) {
    jitc_dtype p = dtype_part(t);
    snprintf(out, 120, "%.17g%+.17gj (0x%llx, 0x%llx)", value(p, x, 2 * j), value(p, x, 2 * j + 1),
             raw(p, x, 2 * j), raw(p, x, 2 * j + 1));
  } else {
    snprintf(out, 120, "%.17g (0x%llx)", value(t, x, j), raw(t, x, j));
  }
}

/* A float's bits as an integer that orders like its value (for ulps). */
static int64_t ordered(jitc_dtype t, const void *x, int64_t j) {
  int sz = type_info[t].size;
  uint64_t u = 0;
  memcpy(&u, (const char *)x + (size_t)j * (size_t)sz, (size_t)sz);
  uint64_t sign = 1ull << (8 * sz - 1);
  return u & sign ? -(int64_t)(u & ~sign) : (int64_t)u;
}

/* One unit in the last place of 1.0 in float type t. */
static double epsilon(jitc_dtype t) {
  return t == JITC_FLOAT64 ? 0x1p-52 : t == JITC_FLOAT32 ? 0x1p-23
         : t == JITC_FLOAT16 ? 0x1p-10 : 0x1p-7;
}

/* How the result of op o on real operands agrees with interp's. */
static Agree real_agree(int o) {
  switch (o) {
  case OP_SUM: case OP_MEAN: return A_SUM;
  case OP_PROD: return A_PROD;
  /* bits moved, not computed (min and max of a reduction: which of several
  ** NaNs the GPU's tree keeps is not the first) */
  case OP_NEG: case OP_ABS: case OP_COPYSIGN: case OP_WHERE: case OP_MINIMUM: case OP_MAXIMUM:
  case OP_FMIN: case OP_FMAX: case OP_CLIP: case OP_ARGMIN: case OP_ARGMAX:
    return A_EXACT;
  /* exactly rounded on every target */
  case OP_SQRT: case OP_FLOOR: case OP_CEIL: case OP_TRUNC: case OP_RINT: case OP_FMOD:
  case OP_NEXTAFTER: case OP_FMA:
    return A_ANYNAN;
  default: /* the C library's other functions, and ** */
    return !op_info[o].libm ? A_ANYNAN : op_info[o].flags & F_NANARG ? A_FNAN : A_ULP;
  }
}

Agree op_agree(int o, jitc_dtype t) {
  Agree how = real_agree(o);
  if (!dtype_is_complex(t))
    return how;
  switch (o) {
  case OP_ANGLE: return A_ULP; /* atan2 of the parts, a real result */
  case OP_ABS: return A_ANYNAN; /* NumPy's sqrt(r^2 + 1) of the larger part: exact on every target */
  case OP_REAL: case OP_IMAG: case OP_CONJ: return A_EXACT;
  case OP_POW: return A_CPOW;
  case OP_SIGN: case OP_SQRT: return A_CULP; /* computed from several functions */
  default: return how == A_ULP || how == A_FNAN ? A_CULP : how;
  }
}

/* A complex function's part k of element j (p: the part's type): within 4
** ulp of interp's, or `eps` epsilons of interp's larger finite part (beside
** an infinite part, the other). */
static bool culp_agrees(jitc_dtype p, const void *x, const void *y, int64_t j, int k, double eps) {
  double a = value(p, x, 2 * j + k), b = value(p, y, 2 * j + k);
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  int64_t d = ordered(p, x, 2 * j + k) - ordered(p, y, 2 * j + k);
  if ((d < 0 ? -d : d) <= 4)
    return true;
  double re = fabs(value(p, y, 2 * j)), im = fabs(value(p, y, 2 * j + 1));
  double m = fmax(isfinite(re) ? re : 0, isfinite(im) ? im : 0);
  return isfinite(a) && isfinite(b) && fabs(a - b) <= eps * epsilon(p) * m;
}

double cpow_size(jitc_dtype t, const void *a, const void *b, int64_t j) {
  jitc_dtype p = dtype_part(t);
  double complex za = CMPLX(value(p, a, 2 * j), value(p, a, 2 * j + 1));
  double complex zb = CMPLX(value(p, b, 2 * j), value(p, b, 2 * j + 1));
  double complex z = zb * clog(za);
  double w = cabs(z), e = 8 * (1 + w) * epsilon(p); /* the phase's error bound, radians */
  /* Where it reaches the distance of the phase, b log a's imaginary part,
  ** to an axis, a part's sign (an infinite one, a zero) is not known. */
  if (!isfinite(w) || e >= fmin(fabs(cos(cimag(z))), fabs(sin(cimag(z)))))
    return INFINITY;
  return w;
}

bool agrees(jitc_dtype t, const void *x, const void *y, int64_t j, Agree how, double tol,
            bool argnan) {
  size_t sz = (size_t)type_info[t].size;
  if (!memcmp((const char *)x + (size_t)j * sz, (const char *)y + (size_t)j * sz, sz))
    return true;
  if (dtype_is_complex(t)) { /* part by part */
    jitc_dtype p = dtype_part(t);
    if (how == A_CPOW && !(8 * (1 + tol) * epsilon(p) < 1))
      return true; /* the phase, b log a's imaginary part, is not known at all */
    if (how == A_CULP || how == A_CPOW) {
      double eps = how == A_CPOW ? 8 * (1 + tol) : 8;
      return culp_agrees(p, x, y, j, 0, eps) && culp_agrees(p, x, y, j, 1, eps);
    }
    return agrees(p, x, y, 2 * j, how, tol, argnan) && agrees(p, x, y, 2 * j + 1, how, tol, argnan);
  }
  if (!dtype_is_float(t) || how == A_EXACT)
    return false;
  double a = value(t, x, j), b = value(t, y, j);
  if (how == A_PROD) /* the order decides whether it overflows, underflows, or meets inf * 0 */
    return isnan(a) && isnan(b) ? true
           : isnan(a) || isnan(b) ? a == 0 || b == 0 || isinf(a) || isinf(b)
                                  : signbit(a) == signbit(b);
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b) && !(how == A_FNAN && argnan) &&
           (how != A_NANSIGN || signbit(a) == signbit(b));
  if (how == A_ANYNAN || how == A_NANSIGN) /* not NaN, other bits: -0.0 against 0.0 too */
    return false;
  if (how == A_ULP || how == A_FNAN || how == A_CULP) { /* the largest finite value and inf are one unit apart */
    int64_t d = ordered(t, x, j) - ordered(t, y, j);
    return (d < 0 ? -d : d) <= (is_half(t) ? 1 : 4);
  }
  if (isinf(a) || isinf(b))
    return a == b;
  /* A_SUM: the inputs' rounding, and one unit of a 16-bit result */
  double u = is_half(t) ? fabs(b) * epsilon(t) : 0;
  return fabs(a - b) <= tol + u;
}

void report_ulps(const char *tag, const char *what, jitc_dtype t, const void *x, const void *y,
                 int64_t n) {
  jitc_dtype p = dtype_part(t);
  int parts = dtype_is_complex(t) ? 2 : 1;
  int64_t most = 0;
  double norm = 0;
  for (int64_t j = 0; j < n; j++) {
    double m = 0;
    bool finite = true;
    for (int k = 0; k < parts; k++) {
      double b = value(p, y, parts * j + k);
      finite &= isfinite(b) && isfinite(value(p, x, parts * j + k));
      m = fmax(m, fabs(b));
    }
    for (int k = 0; finite && k < parts; k++) {
      int64_t d = ordered(p, x, parts * j + k) - ordered(p, y, parts * j + k);
      most = d < 0 && -d > most ? -d : d > most ? d : most;
      if (m > 0)
        norm = fmax(norm, fabs(value(p, x, parts * j + k) - value(p, y, parts * j + k)) / m /
                              epsilon(p));
    }
  }
  printf("ulps types.%s: %s (%s): %lld ulp", tag, what, type_info[t].name, (long long)most);
  if (parts == 2)
    printf(", %.2f eps of the larger part", norm);
  printf("\n");
}
