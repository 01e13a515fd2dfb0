/*
** sem_complex.h -- the scalar semantics of complex64 and complex128, a part
** of semantics.h (included there only, before the table expands).
**
** Each operation is NumPy's loop for it, in the part's float type (float
** for complex64, double for complex128), so that interp and the constant
** folder give NumPy's bits on an x86-64 host with FMA (checked against
** NumPy 2.4 on glibc, tests/t_complex.py):
**   * and square   re = fma(ar, br, -(ai*bi)), im = fma(ar, bi, ai*br): the
**                  SIMD multiply loop (a multiply-add in each lane)
**   /              Smith's algorithm, as NumPy's divide loop writes it
**   reciprocal     NumPy's own loop (not 1 / z: 1 / 0 is nan+nanj there)
**   abs            NumPy's SIMD loop: the larger part times
**                  sqrt(fma(r, r, 1)), r the ratio of the smaller to it
**   **             npymath's npy_cpow: exponents that are integers below 100
**                  in size by repeated products (plain, without fma), others
**                  the C library's cpow
**   exp log sqrt sin cos tan arcsin ... arctanh: the C library's cexp,
**                  clog, ... (NumPy calls them on Linux); exp2, expm1, log2,
**                  log10, log1p: npymath's formulas over them
**   sign           z / |z| with NumPy 2's cases; rint each part
**   comparisons    lexicographic: the real parts, then the imaginary ones
**   maximum ...    NumPy's picks (a NaN in either part of a propagates)
** A NaN result is NaN; which sign it has is the hardware's and not part of
** the contract (NumPy's SIMD lanes and C's fma order their operands
** differently).  docs/language.md states the contract.
*/
#ifndef JITC_SEM_COMPLEX_H
#define JITC_SEM_COMPLEX_H

#include <complex.h>
#include <math.h>

/* C11's CMPLX and CMPLXF, which glibc's complex header defines for GCC alone:
** the builtin they expand to, for clang (`make fuzz` builds with it). */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif

/* npymath's constants, as exp2, log2 and log10 of complex values scale by
** them (in the part's type: the float ones rounded from these). */
#define NPY_LOGE2 0.693147180559945309417232121458176568
#define NPY_LOG2E 1.442695040888963407359924681001892137
#define NPY_LOG10E 0.434294481903251827651128918916605082
#define NPY_LOGE2F 0.693147180559945309417232121458176568f
#define NPY_LOG2EF 1.442695040888963407359924681001892137f
#define NPY_LOG10EF 0.434294481903251827651128918916605082f

/* NumPy's complex order (its loops' CLT, CLE, ...): the real parts decide
** unless they are equal, then the imaginary parts; a NaN in any part makes
** every comparison false but !=. */
#define C_NAN(a) (isnan((a).re) || isnan((a).im))
#define C_LT(a, b) (((a).re < (b).re && !C_NAN(a) && !C_NAN(b)) || ((a).re == (b).re && (a).im < (b).im))
#define C_LE(a, b) (((a).re < (b).re && !C_NAN(a) && !C_NAN(b)) || ((a).re == (b).re && (a).im <= (b).im))
#define C_GT(a, b) (((a).re > (b).re && !C_NAN(a) && !C_NAN(b)) || ((a).re == (b).re && (a).im > (b).im))
#define C_GE(a, b) (((a).re > (b).re && !C_NAN(a) && !C_NAN(b)) || ((a).re == (b).re && (a).im >= (b).im))
/* clip's order (NumPy's PyArray_CLT): plainly lexicographic. */
#define C_CLIP_LT(a, b) ((a).re == (b).re ? (a).im < (b).im : (a).re < (b).re)

/* S: prefix, T: the element (jitc_c64), P: the part's type, F: the libm
** suffix of P ("f" for float, nothing for double). */
#define CPLX_OPS(S, T, P, F)                                                   \
  static inline T S##_add(T a, T b) { return (T){a.re + b.re, a.im + b.im}; }  \
  static inline T S##_sub(T a, T b) { return (T){a.re - b.re, a.im - b.im}; }  \
  static inline T S##_neg(T a) { return (T){-a.re, -a.im}; }                   \
  static inline T S##_conj(T a) { return (T){a.re, -a.im}; }                   \
  static inline T S##_mul(T a, T b) {                                          \
    return (T){fma##F(a.re, b.re, -(a.im * b.im)), fma##F(a.re, b.im, a.im * b.re)}; \
  }                                                                            \
  static inline T S##_square(T a) { return S##_mul(a, a); }                    \
  /* NumPy's divide loop: Smith's algorithm; 0 / 0 divides each part of a   \
  ** by the zero, giving inf or NaN parts. */                                  \
  static inline T S##_div(T a, T b) {                                          \
    P br = fabs##F(b.re), bi = fabs##F(b.im);                                  \
    if (br >= bi) {                                                            \
      if (br == 0 && bi == 0) return (T){a.re / br, a.im / br};                \
      P rat = b.im / b.re, scl = (P)1 / (b.re + b.im * rat);                   \
      return (T){(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};        \
    }                                                                          \
    P rat = b.re / b.im, scl = (P)1 / (b.im + b.re * rat);                     \
    return (T){(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};          \
  }                                                                            \
  /* NumPy's reciprocal loop: 1 / 0 is nan+nanj, not Smith's inf+nanj. */     \
  static inline T S##_reciprocal(T a) {                                        \
    if (fabs##F(a.im) <= fabs##F(a.re)) {                                      \
      P r = a.im / a.re, d = a.re + a.im * r;                                  \
      return (T){1 / d, -r / d};                                               \
    }                                                                          \
    P r = a.re / a.im, d = a.re * r + a.im;                                    \
    return (T){r / d, -1 / d};                                                 \
  }                                                                            \
  static inline uint8_t S##_lt(T a, T b) { return C_LT(a, b); }                \
  static inline uint8_t S##_le(T a, T b) { return C_LE(a, b); }                \
  static inline uint8_t S##_gt(T a, T b) { return C_GT(a, b); }                \
  static inline uint8_t S##_ge(T a, T b) { return C_GE(a, b); }                \
  static inline uint8_t S##_eq(T a, T b) { return a.re == b.re && a.im == b.im; } \
  static inline uint8_t S##_ne(T a, T b) { return a.re != b.re || a.im != b.im; } \
  /* NumPy's loops: maximum keeps a when it has a NaN part or a >= b;       \
  ** fmax keeps a when b has a NaN part or a >= b. */                         \
  static inline T S##_maximum(T a, T b) { return C_NAN(a) || C_GE(a, b) ? a : b; } \
  static inline T S##_minimum(T a, T b) { return C_NAN(a) || C_LE(a, b) ? a : b; } \
  static inline T S##_fmax(T a, T b) { return C_NAN(b) || C_GE(a, b) ? a : b; }    \
  static inline T S##_fmin(T a, T b) { return C_NAN(b) || C_LE(a, b) ? a : b; }    \
  /* NumPy's clip loop: max(x, lo) then min(., hi), each keeping its first  \
  ** operand when it has a NaN part or is strictly beyond the second. */       \
  static inline T S##_clip(T x, T lo, T hi) {                                  \
    T m = C_CLIP_LT(lo, x) || C_NAN(x) ? x : lo;                               \
    return C_CLIP_LT(m, hi) || C_NAN(m) ? m : hi;                              \
  }                                                                            \
  static inline uint8_t S##_isnan(T a) { return C_NAN(a); }                    \
  static inline uint8_t S##_isinf(T a) { return isinf(a.re) || isinf(a.im); }  \
  static inline uint8_t S##_isfinite(T a) { return isfinite(a.re) && isfinite(a.im); } \
  /* NumPy's SIMD absolute: an inf part makes it inf, else a NaN part NaN. */ \
  static inline P S##_abs(T a) {                                               \
    P x = fabs##F(a.re), y = fabs##F(a.im);                                    \
    if (isinf(x) || isinf(y)) return (P)INFINITY;                              \
    if (isnan(x) || isnan(y)) return (P)NAN;                                   \
    P big = x > y ? x : y, small = x > y ? y : x;                              \
    P r = big == 0 || small == (P)INFINITY ? 0 : small / big;                  \
    return sqrt##F(fma##F(r, r, 1)) * big;                                     \
  }                                                                            \
  static inline P S##_real(T a) { return a.re; }                               \
  static inline P S##_imag(T a) { return a.im; }                               \
  static inline P S##_angle(T a) { return atan2##F(a.im, a.re); }              \
  static inline T S##_complex(P re, P im) { return (T){re, im}; }             \
  static inline T S##_rint(T a) { return (T){rint##F(a.re), rint##F(a.im)}; }  \
  /* NumPy 2's sign: z / |z| (|z| as hypot), 0 for 0, NaN for a NaN part or \
  ** two infinite parts, the unit toward one infinite part. */               \
  static inline T S##_sign(T a) {                                              \
    P m = hypot##F(a.re, a.im);                                                \
    if (isnan(m)) return (T){NAN, NAN};                                        \
    if (isinf(m)) {                                                            \
      if (isinf(a.re)) return isinf(a.im) ? (T){NAN, NAN} : (T){a.re > 0 ? 1 : -1, 0}; \
      return (T){0, a.im > 0 ? 1 : -1};                                        \
    }                                                                          \
    if (m == 0) return (T){0, 0};                                              \
    return (T){a.re / m, a.im / m};                                            \
  }                                                                            \
  /* npymath's products and quotients of npy_cpow: plain, without fma. */    \
  static inline T S##_pmul(T a, T b) {                                         \
    return (T){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};          \
  }                                                                            \
  static inline T S##_pow(T a, T b) {                                          \
    if (b.re == 0 && b.im == 0) return (T){1, 0};                              \
    if (a.re == 0 && a.im == 0) return b.re > 0 ? (T){0, 0} : (T){NAN, NAN};   \
    if (b.im == 0 && b.re > -100 && b.re < 100 && b.re == (P)(int)b.re) {      \
      int n = (int)b.re;                                                       \
      if (n == 1) return a;                                                    \
      if (n == 2) return S##_pmul(a, a);                                       \
      if (n == 3) return S##_pmul(a, S##_pmul(a, a));                          \
      T acc = {1, 0}, p = a;                                                   \
      unsigned e = n < 0 ? (unsigned)-n : (unsigned)n, mask = 1;               \
      for (;;) {                                                               \
        if (e & mask) acc = S##_pmul(acc, p);                                  \
        mask <<= 1;                                                            \
        if (e < mask) break;                                                   \
        p = S##_pmul(p, p);                                                    \
      }                                                                        \
      return n < 0 ? S##_div((T){1, 0}, acc) : acc;                            \
    }                                                                          \
    return S##_from_c(cpow##F(S##_to_c(a), S##_to_c(b)));                      \
  }

/* The C library's complex functions on T, and npymath's formulas over them
** (MK: CMPLX or CMPLXF, CT the C complex type). */
#define CPLX_LIBM(S, T, P, F, CT, MK, LOGE2, LOG2E, LOG10E)                    \
  typedef CT S##_ctype;                                                        \
  static inline CT S##_to_c(T a) { return MK(a.re, a.im); }                    \
  static inline T S##_from_c(CT z) { return (T){creal##F(z), cimag##F(z)}; }   \
  static inline T S##_exp2(T a) {                                              \
    return S##_from_c(cexp##F(MK(a.re * LOGE2, a.im * LOGE2)));                \
  }                                                                            \
  static inline T S##_log2(T a) {                                              \
    T l = S##_from_c(clog##F(S##_to_c(a)));                                    \
    return (T){l.re * LOG2E, l.im * LOG2E};                                    \
  }                                                                            \
  static inline T S##_log10(T a) {                                             \
    T l = S##_from_c(clog##F(S##_to_c(a)));                                    \
    return (T){l.re * LOG10E, l.im * LOG10E};                                  \
  }                                                                            \
  static inline T S##_expm1(T a) {                                             \
    P h = sin##F(a.im / 2);                                                    \
    return (T){expm1##F(a.re) * cos##F(a.im) - 2 * h * h, exp##F(a.re) * sin##F(a.im)}; \
  }                                                                            \
  static inline T S##_log1p(T a) {                                             \
    P l = hypot##F(a.re + 1, a.im);                                            \
    return (T){log##F(l), atan2##F(a.im, a.re + 1)};                           \
  }                                                                            \
  /* The C library's function of op, or NULL. */                               \
  static inline CT (*S##_cfn(OpId op))(CT) {                                   \
    switch (op) {                                                              \
    case OP_EXP: return cexp##F;                                               \
    case OP_LOG: return clog##F;                                               \
    case OP_SQRT: return csqrt##F;                                             \
    case OP_SIN: return csin##F;                                               \
    case OP_COS: return ccos##F;                                               \
    case OP_TAN: return ctan##F;                                               \
    case OP_ASIN: return casin##F;                                             \
    case OP_ACOS: return cacos##F;                                             \
    case OP_ATAN: return catan##F;                                             \
    case OP_SINH: return csinh##F;                                             \
    case OP_COSH: return ccosh##F;                                             \
    case OP_TANH: return ctanh##F;                                             \
    case OP_ASINH: return casinh##F;                                           \
    case OP_ACOSH: return cacosh##F;                                           \
    case OP_ATANH: return catanh##F;                                           \
    default: return NULL;                                                      \
    }                                                                          \
  }

/* The loops of a complex type: P the part's type.  OP_COMPLEX runs here
** too (sem_exec sends it by its result type). */
#define EXEC_CPLX(S, P)                                                        \
  EXEC_SIGNATURE(S) {                                                          \
    switch (op) {                                                              \
      ON2(S, ADD, add) ON2(S, SUB, sub) ON2(S, MUL, mul) ON2(S, DIV, div)      \
      ON1(S, NEG, neg) ON1(S, CONJ, conj) ON1(S, SQUARE, square)               \
      ON1(S, RECIPROCAL, reciprocal) ON2(S, MINIMUM, minimum)                  \
      ON2(S, MAXIMUM, maximum) ON2(S, FMIN, fmin) ON2(S, FMAX, fmax)           \
      ON3(S, CLIP, clip) ON_CMP(S) ON2(S, POW, pow) ON1(S, EXP2, exp2)          \
      ON1(S, LOG2, log2) ON1(S, LOG10, log10) ON1(S, EXPM1, expm1)             \
      ON1(S, LOG1P, log1p) ON1(S, SIGN, sign) ON1(S, RINT, rint)               \
      ON1(S, ROUND, rint)                                                      \
    case OP_ISNAN: PRED_LOOP(sem_##S, S##_isnan); return true;                 \
    case OP_ISINF: PRED_LOOP(sem_##S, S##_isinf); return true;                 \
    case OP_ISFINITE: PRED_LOOP(sem_##S, S##_isfinite); return true;           \
    case OP_ABS: UN(sem_##S, P, S##_abs); return true;                         \
    case OP_REAL: UN(sem_##S, P, S##_real); return true;                       \
    case OP_IMAG: UN(sem_##S, P, S##_imag); return true;                       \
    case OP_ANGLE: UN(sem_##S, P, S##_angle); return true;                     \
    case OP_COMPLEX: BIN(P, sem_##S, S##_complex); return true;                \
    default: {                                                                 \
      S##_ctype (*fn)(S##_ctype) = S##_cfn(op);                                \
      if (!fn) return false;                                                   \
      sem_##S *r_ = dst;                                                       \
      const sem_##S *x_ = a0;                                                  \
      for (int j = 0; j < m; j++) r_[j] = S##_from_c(fn(S##_to_c(x_[j])));     \
      return true;                                                             \
    }                                                                          \
    }                                                                          \
  }

#endif /* JITC_SEM_COMPLEX_H */
