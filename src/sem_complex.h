/*
** sem_complex.h -- the scalar semantics of complex64 and complex128, a part
** of semantics.h (included there only, before the table expands).
**
** Each operation is NumPy's loop for it, in the part's float type (float
** for complex64, double for complex128), so that interp and the constant
** folder give NumPy's bits:
**   * and square   re = fma(ar, br, -(ai*bi)), im = fma(ar, bi, ai*br): the
**                  multiply loop NumPy runs on hosts with FMA
**   / reciprocal   Smith's algorithm, as NumPy's divide loop writes it
**   comparisons    lexicographic: the real parts, then the imaginary ones
**   maximum ...    NumPy's picks (a NaN in either part of a propagates)
** docs/language.md states the contract.
*/
#ifndef JITC_SEM_COMPLEX_H
#define JITC_SEM_COMPLEX_H

#include <math.h>

/* NumPy's complex order (npy_math's CLT, CLE, ...): the real parts decide
** unless they are equal; any NaN part makes every comparison false but !=. */
#define C_LT(a, b) ((a).re < (b).re || ((a).re == (b).re && (a).im < (b).im))
#define C_LE(a, b) ((a).re < (b).re || ((a).re == (b).re && (a).im <= (b).im))
#define C_GT(a, b) ((a).re > (b).re || ((a).re == (b).re && (a).im > (b).im))
#define C_GE(a, b) ((a).re > (b).re || ((a).re == (b).re && (a).im >= (b).im))
#define C_NAN(a) (isnan((a).re) || isnan((a).im))

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
  static inline T S##_reciprocal(T a) { return S##_div((T){1, 0}, a); }        \
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
  static inline T S##_clip(T x, T lo, T hi) {                                  \
    return S##_minimum(S##_maximum(x, lo), hi);                                \
  }                                                                            \
  static inline uint8_t S##_isnan(T a) { return C_NAN(a); }                    \
  static inline uint8_t S##_isinf(T a) { return isinf(a.re) || isinf(a.im); }  \
  static inline uint8_t S##_isfinite(T a) { return isfinite(a.re) && isfinite(a.im); } \
  static inline P S##_abs(T a) { return hypot##F(a.re, a.im); }                \
  static inline P S##_real(T a) { return a.re; }                               \
  static inline P S##_imag(T a) { return a.im; }                               \
  static inline P S##_angle(T a) { return atan2##F(a.im, a.re); }              \
  static inline T S##_complex(P re, P im) { return (T){re, im}; }

/* The loops of a complex type: P the part's type.  OP_COMPLEX runs here
** too (sem_exec sends it by its result type). */
#define EXEC_CPLX(S, P)                                                        \
  EXEC_SIGNATURE(S) {                                                          \
    switch (op) {                                                              \
      ON2(S, ADD, add) ON2(S, SUB, sub) ON2(S, MUL, mul) ON2(S, DIV, div)      \
      ON1(S, NEG, neg) ON1(S, CONJ, conj) ON1(S, SQUARE, square)               \
      ON1(S, RECIPROCAL, reciprocal) ON2(S, MINIMUM, minimum)                  \
      ON2(S, MAXIMUM, maximum) ON2(S, FMIN, fmin) ON2(S, FMAX, fmax)           \
      ON3(S, CLIP, clip) ON_CMP(S)                                             \
    case OP_ISNAN: PRED_LOOP(sem_##S, S##_isnan); return true;                 \
    case OP_ISINF: PRED_LOOP(sem_##S, S##_isinf); return true;                 \
    case OP_ISFINITE: PRED_LOOP(sem_##S, S##_isfinite); return true;           \
    case OP_ABS: UN(sem_##S, P, S##_abs); return true;                         \
    case OP_REAL: UN(sem_##S, P, S##_real); return true;                       \
    case OP_IMAG: UN(sem_##S, P, S##_imag); return true;                       \
    case OP_ANGLE: UN(sem_##S, P, S##_angle); return true;                     \
    case OP_COMPLEX: BIN(P, sem_##S, S##_complex); return true;                \
    default:                                                                   \
      return false;                                                            \
    }                                                                          \
  }

#endif /* JITC_SEM_COMPLEX_H */
