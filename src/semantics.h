/*
** semantics.h -- the scalar semantics of the language: the executable form
** of docs/language.md.
**
** One static inline function per operation and element type (b_add, l_pow,
** d_floordiv, the casts sat_i32, wrap_i32, ...), and sem_exec(), which
** applies one operation of the typed IR to m elements.  The interpreter
** (interp/interp.c) runs programs with sem_exec over blocks of elements; the
** constant folder (fold.c) calls the same sem_exec on one element.  So a
** folded constant has exactly the bits that evaluating it at run time
** gives (NaN payloads and -0.0 included), and the two cannot drift apart.
**
** A function is written here only where NumPy's semantics need a case of
** their own (abs of integers, float32 exp, minimum's NaN rule, ...): any
** other is its row of ops.h, the C library function of the LIBM column on
** floats (sem_libm), the identity on integers and bool where the row says
** F_INT_ID, and its NaN argument unchanged where it says F_NANARG.  A new
** plain math function is one row there and nothing here.
**
** Every operation is defined for every input, with NumPy's results where
** NumPy defines them and no undefined behaviour in C: integer arithmetic is
** done in unsigned types (so overflow wraps), division and shift edge cases
** are tested before the C operator runs, and float-to-int casts saturate.
*/
#ifndef JITC_SEMANTICS_H
#define JITC_SEMANTICS_H

#include "jitc_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ===================================================================== */
/* Scalar semantics, one function per op and element type                */
/* ===================================================================== */

/* Type prefixes: b bool (stored as one byte, 0 or 1), i int32, l int64,
** f float32, d float64.  T_x is the C type of prefix x. */
#define T_b uint8_t
#define T_i int32_t
#define T_l int64_t
#define T_f float
#define T_d double

/* ---- bool: values are 0 or 1; + is or, * is and, as in NumPy ---- */

static inline uint8_t b_add(uint8_t a, uint8_t b) { return a | b; }
static inline uint8_t b_mul(uint8_t a, uint8_t b) { return a & b; }
static inline uint8_t b_and(uint8_t a, uint8_t b) { return a & b; }
static inline uint8_t b_or(uint8_t a, uint8_t b) { return a | b; }
static inline uint8_t b_xor(uint8_t a, uint8_t b) { return a ^ b; }
static inline uint8_t b_invert(uint8_t a) { return a ^ 1; }
static inline uint8_t b_same(uint8_t a) { return a; }
static inline uint8_t b_minimum(uint8_t a, uint8_t b) { return a & b; }
static inline uint8_t b_maximum(uint8_t a, uint8_t b) { return a | b; }
static inline uint8_t b_clip(uint8_t x, uint8_t lo, uint8_t hi) { return (x | lo) & hi; }

/* ---- integers ----
** S: prefix, T: type, U: its unsigned twin, BITS: width.  The conversion of
** an unsigned result back to T is modulo 2^BITS (two's complement), which
** every compiler jitc supports defines. */
#define INT_OPS(S, T, U, BITS)                                                 \
  static inline T S##_add(T a, T b) { return (T)((U)a + (U)b); }               \
  static inline T S##_sub(T a, T b) { return (T)((U)a - (U)b); }               \
  static inline T S##_mul(T a, T b) { return (T)((U)a * (U)b); }               \
  static inline T S##_neg(T a) { return (T)((U)0 - (U)a); }                    \
  static inline T S##_square(T a) { return (T)((U)a * (U)a); }                 \
  /* NumPy: x // 0 == 0; MIN // -1 wraps to MIN. */                            \
  static inline T S##_floordiv(T a, T b) {                                     \
    if (b == 0) return 0;                                                      \
    if (b == -1) return S##_neg(a);                                            \
    T q = a / b;                                                               \
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;                               \
    return q;                                                                  \
  }                                                                            \
  /* The sign of the divisor, as Python; x % 0 == 0; MIN % -1 == 0. */         \
  static inline T S##_mod(T a, T b) {                                          \
    if (b == 0 || b == -1) return 0;                                           \
    T r = a % b;                                                               \
    if (r != 0 && ((r < 0) != (b < 0))) r += b;                                \
    return r;                                                                  \
  }                                                                            \
  /* C's %: the sign of the dividend (np.fmod). */                             \
  static inline T S##_fmod(T a, T b) {                                         \
    if (b == 0 || b == -1) return 0;                                           \
    return a % b;                                                              \
  }                                                                            \
  /* Repeated squaring, wrapping.  A negative exponent (an error in NumPy)    \
  ** gives the integer part of 1/a^-b: 1 for a == 1, +-1 for a == -1, else 0. */ \
  static inline T S##_pow(T a, T b) {                                          \
    if (b < 0) {                                                               \
      if (a == 1) return 1;                                                    \
      if (a == -1) return ((U)b & 1) ? -1 : 1;                                 \
      return 0;                                                                \
    }                                                                          \
    U r = 1, x = (U)a, e = (U)b;                                               \
    while (e) {                                                                \
      if (e & 1) r *= x;                                                       \
      x *= x;                                                                  \
      e >>= 1;                                                                 \
    }                                                                          \
    return (T)r;                                                               \
  }                                                                            \
  static inline T S##_and(T a, T b) { return a & b; }                          \
  static inline T S##_or(T a, T b) { return a | b; }                           \
  static inline T S##_xor(T a, T b) { return a ^ b; }                          \
  static inline T S##_invert(T a) { return ~a; }                               \
  /* npy_lshift / npy_rshift: a count outside [0, BITS) shifts everything     \
  ** out (>> keeps the sign).  Negative operands are shifted as unsigned. */   \
  static inline T S##_shl(T a, T b) {                                          \
    return (U)b < BITS ? (T)((U)a << (U)b) : 0;                                \
  }                                                                            \
  static inline T S##_shr(T a, T b) {                                          \
    if ((U)b < BITS) return a < 0 ? ~(~a >> (U)b) : a >> (U)b;                 \
    return a < 0 ? -1 : 0;                                                     \
  }                                                                            \
  static inline T S##_abs(T a) { return a < 0 ? S##_neg(a) : a; }              \
  static inline T S##_same(T a) { return a; }                                  \
  static inline T S##_sign(T a) { return (T)((a > 0) - (a < 0)); }             \
  /* 1/a truncated, as NumPy's loop computes it; 1/0 is 0 here (NumPy's is    \
  ** undefined). */                                                            \
  static inline T S##_reciprocal(T a) { return a == 1 || a == -1 ? a : 0; }    \
  static inline T S##_minimum(T a, T b) { return a < b ? a : b; }              \
  static inline T S##_maximum(T a, T b) { return a > b ? a : b; }              \
  static inline T S##_clip(T x, T lo, T hi) {                                  \
    return S##_minimum(S##_maximum(x, lo), hi);                                \
  }

INT_OPS(i, int32_t, uint32_t, 32)
INT_OPS(l, int64_t, uint64_t, 64)

/* ---- floats ----
** S: prefix, T: type, F: the libm suffix ("f" for float, nothing for double). */

#define FLT_OPS(S, T, F)                                                       \
  static inline T S##_add(T a, T b) { return a + b; }                          \
  static inline T S##_sub(T a, T b) { return a - b; }                          \
  static inline T S##_mul(T a, T b) { return a * b; }                          \
  static inline T S##_div(T a, T b) { return a / b; }                          \
  static inline T S##_neg(T a) { return -a; }                                  \
  static inline T S##_square(T a) { return a * a; }                            \
  static inline T S##_reciprocal(T a) { return (T)1 / a; }                     \
  /* npy_divmod: the quotient and remainder of floor division, with the      \
  ** remainder's sign that of the divisor and the quotient snapped to an      \
  ** integer.  b == 0 gives a / b and fmod(a, 0) (NaN). */                     \
  static inline T S##_divmod(T a, T b, T *modulus) {                           \
    T mod = fmod##F(a, b);                                                     \
    if (b == 0) {                                                              \
      *modulus = mod;                                                          \
      return a / b;                                                            \
    }                                                                          \
    T div = (a - mod) / b;                                                     \
    if (mod != 0) {                                                            \
      if (isless(b, 0) != isless(mod, 0)) {                                    \
        mod += b;                                                              \
        div -= 1;                                                              \
      }                                                                        \
    } else {                                                                   \
      mod = copysign##F(0, b);                                                 \
    }                                                                          \
    T floordiv;                                                                \
    if (div != 0) {                                                            \
      floordiv = floor##F(div);                                                \
      if (isgreater(div - floordiv, (T)0.5)) floordiv += 1;                    \
    } else {                                                                   \
      floordiv = copysign##F(0, a / b);                                        \
    }                                                                          \
    *modulus = mod;                                                            \
    return floordiv;                                                           \
  }                                                                            \
  static inline T S##_floordiv(T a, T b) {                                     \
    T mod;                                                                     \
    return S##_divmod(a, b, &mod);                                             \
  }                                                                            \
  static inline T S##_mod(T a, T b) {                                          \
    T mod;                                                                     \
    S##_divmod(a, b, &mod);                                                    \
    return mod;                                                                \
  }                                                                            \
  /* NumPy: NaN stays NaN, both zeros give +0. */                              \
  static inline T S##_sign(T a) {                                              \
    return a > 0 ? (T)1 : a < 0 ? (T)-1 : a == 0 ? (T)0 : a;                   \
  }                                                                            \
  /* minimum/maximum propagate a NaN of either side; fmin/fmax ignore one.    \
  ** Equal operands (0.0 and -0.0) give the second, as NumPy does. */         \
  static inline T S##_minimum(T a, T b) { return isnan(a) ? a : a < b ? a : b; } \
  static inline T S##_maximum(T a, T b) { return isnan(a) ? a : a > b ? a : b; } \
  static inline T S##_fmin(T a, T b) { return isnan(b) ? a : a < b ? a : b; }  \
  static inline T S##_fmax(T a, T b) { return isnan(b) ? a : a > b ? a : b; }  \
  static inline T S##_clip(T x, T lo, T hi) {                                  \
    return S##_minimum(S##_maximum(x, lo), hi);                                \
  }

FLT_OPS(f, float, f)
FLT_OPS(d, double, )

/* ---- ldexp, frexp and modf (ops.h: the rows of mixed types) ----
** The C library's, on float32 and float64 (the checker computes 16-bit
** floats in float32).  A NaN argument is every float result, sign and
** payload kept, as for the functions of one argument (F_NANARG); frexp's
** exponent of inf and NaN is 0, NumPy's (C leaves it unspecified).  The
** exponent of ldexp arrives as int32 (the checker clamps wider ones): x *
** 2^n rounded once, to inf or a signed 0 beyond the range. */
#define MIXED_OPS(S, T, F)                                                     \
  static inline T S##_ldexp(T x, int32_t n) { return isnan(x) ? x : ldexp##F(x, n); } \
  static inline T S##_frexp(T x) {                                             \
    int e;                                                                     \
    return isnan(x) ? x : frexp##F(x, &e);                                     \
  }                                                                            \
  static inline int32_t S##_frexp_exp(T x) {                                   \
    int e = 0;                                                                 \
    frexp##F(x, &e);                                                           \
    return isfinite(x) ? e : 0;                                                \
  }                                                                            \
  static inline T S##_modf(T x) {                                              \
    T w;                                                                       \
    return isnan(x) ? x : modf##F(x, &w);                                      \
  }                                                                            \
  static inline T S##_modf_int(T x) {                                          \
    T w;                                                                       \
    modf##F(x, &w);                                                            \
    return isnan(x) ? x : w;                                                   \
  }
MIXED_OPS(f, float, f)
MIXED_OPS(d, double, )

/* float32 exp is NumPy's own evaluation (npymath.c), not expf: NumPy's
** results differ from the C library's in the last bit for many inputs, and
** printing what NumPy prints is part of the contract.  (float64 exp is the
** C library's, from the table.) */
static inline float f_exp(float x) { return npy_expf(x); }

/* ---- names whose meaning depends on the type ----
** abs is the identity on bool (on floats it is the table's fabs); fmin/fmax
** are minimum/maximum where there is no NaN to ignore. */
#define ALIAS1(S, name, to) \
  static inline T_##S S##_##name(T_##S x) { return S##_##to(x); }
#define ALIAS2(S, name, to) \
  static inline T_##S S##_##name(T_##S x, T_##S y) { return S##_##to(x, y); }
ALIAS1(b, abs_, same) ALIAS1(i, abs_, abs) ALIAS1(l, abs_, abs)
ALIAS2(b, fmin_, minimum) ALIAS2(b, fmax_, maximum)
ALIAS2(i, fmin_, minimum) ALIAS2(i, fmax_, maximum)
ALIAS2(l, fmin_, minimum) ALIAS2(l, fmax_, maximum)
ALIAS2(f, fmin_, fmin) ALIAS2(f, fmax_, fmax)
ALIAS2(d, fmin_, fmin) ALIAS2(d, fmax_, fmax)

/* ---- comparisons, for every type (NaN compares false, != true) ---- */
#define CMP_OPS(S)                                                            \
  static inline uint8_t S##_lt(T_##S a, T_##S b) { return a < b; }            \
  static inline uint8_t S##_le(T_##S a, T_##S b) { return a <= b; }           \
  static inline uint8_t S##_gt(T_##S a, T_##S b) { return a > b; }            \
  static inline uint8_t S##_ge(T_##S a, T_##S b) { return a >= b; }           \
  static inline uint8_t S##_eq(T_##S a, T_##S b) { return a == b; }           \
  static inline uint8_t S##_ne(T_##S a, T_##S b) { return a != b; }
CMP_OPS(b)
CMP_OPS(i)
CMP_OPS(l)
CMP_OPS(f)
CMP_OPS(d)

/* ---- casts ----
** To bool: != 0 (NaN is true).  Float to int: truncation toward zero,
** saturating at the type's limits, NaN -> 0 (C leaves these undefined;
** NumPy's results depend on the machine).  int64 -> int32 wraps. */
static inline int32_t sat_i32(double x) {
  if (isnan(x)) return 0;
  if (x >= 2147483648.0) return INT32_MAX;
  if (x <= -2147483649.0) return INT32_MIN;
  return (int32_t)x;
}
static inline int64_t sat_i64(double x) {
  if (isnan(x)) return 0;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  if (x < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}
static inline int32_t wrap_i32(int64_t x) { return (int32_t)(uint32_t)(uint64_t)x; }

/* ===================================================================== */
/* sem_exec: one op of the typed IR over m elements                       */
/* ===================================================================== */

#define UN(S, R, fn)                                                           \
  do {                                                                         \
    T_##R *r_ = dst;                                                           \
    const T_##S *x_ = a0;                                                      \
    for (int j = 0; j < m; j++) r_[j] = S##_##fn(x_[j]);                       \
  } while (0)
#define BIN(S, R, fn)                                                          \
  do {                                                                         \
    T_##R *r_ = dst;                                                           \
    const T_##S *x_ = a0, *y_ = a1;                                            \
    for (int j = 0; j < m; j++) r_[j] = S##_##fn(x_[j], y_[j]);                \
  } while (0)
#define TER(S, R, fn)                                                          \
  do {                                                                         \
    T_##R *r_ = dst;                                                           \
    const T_##S *x_ = a0, *y_ = a1, *z_ = a2;                                  \
    for (int j = 0; j < m; j++) r_[j] = S##_##fn(x_[j], y_[j], z_[j]);        \
  } while (0)

/* ldexp: x of prefix S, n int32. */
#define LDEXP_LOOP(S)                                                          \
  do {                                                                         \
    T_##S *r_ = dst;                                                           \
    const T_##S *x_ = a0;                                                      \
    const int32_t *n_ = a1;                                                    \
    for (int j = 0; j < m; j++) r_[j] = S##_ldexp(x_[j], n_[j]);               \
  } while (0)

/* Dispatch on the operand type t to M(prefix, result prefix, fn). */
#define ON_B(M, fn) case JITC_BOOL: M(b, b, fn); return true;
#define ON_INT(M, fn) \
  case JITC_INT32: M(i, i, fn); return true; \
  case JITC_INT64: M(l, l, fn); return true;
#define ON_FLT(M, fn) \
  case JITC_FLOAT32: M(f, f, fn); return true; \
  case JITC_FLOAT64: M(d, d, fn); return true;
#define ON_CMP(fn)                                   \
  case JITC_BOOL: BIN(b, b, fn); return true;        \
  case JITC_INT32: BIN(i, b, fn); return true;       \
  case JITC_INT64: BIN(l, b, fn); return true;       \
  case JITC_FLOAT32: BIN(f, b, fn); return true;     \
  case JITC_FLOAT64: BIN(d, b, fn); return true;

#define OP_NUM(id, M, fn) case OP_##id: switch (t) { ON_INT(M, fn) ON_FLT(M, fn) default: return false; }
#define OP_ALL(id, M, fn) case OP_##id: switch (t) { ON_B(M, fn) ON_INT(M, fn) ON_FLT(M, fn) default: return false; }
#define OP_FLT(id, M, fn) case OP_##id: switch (t) { ON_FLT(M, fn) default: return false; }
#define OP_INT(id, M, fn) case OP_##id: switch (t) { ON_INT(M, fn) default: return false; }
#define OP_BI(id, M, fn) case OP_##id: switch (t) { ON_B(M, fn) ON_INT(M, fn) default: return false; }
#define OP_CMP(id, fn) case OP_##id: switch (t) { ON_CMP(fn) default: return false; }

static inline void fill_bool(uint8_t *r, uint8_t v, int m) { memset(r, v, (size_t)m); }

/* dst = cast of m elements of src (type s) to type t. */
#define CAST_LOOP(TS, TD, expr)                                                \
  do {                                                                         \
    TD *r_ = dst;                                                              \
    const TS *x_ = src;                                                        \
    for (int j = 0; j < m; j++) {                                              \
      TS x = x_[j];                                                            \
      r_[j] = (expr);                                                          \
    }                                                                          \
  } while (0)
#define CAST_FROM(TS)                                                          \
  switch (t) {                                                                 \
  case JITC_BOOL: CAST_LOOP(TS, uint8_t, x != 0); return;                      \
  case JITC_INT32: CAST_LOOP(TS, int32_t, TO_I32(x)); return;                  \
  case JITC_INT64: CAST_LOOP(TS, int64_t, TO_I64(x)); return;                  \
  case JITC_FLOAT32: CAST_LOOP(TS, float, (float)x); return;                   \
  case JITC_FLOAT64: CAST_LOOP(TS, double, (double)x); return;                 \
  default: return;                                                             \
  }

static inline void sem_cast(void *dst, jitc_dtype t, const void *src, jitc_dtype s, int m) {
  switch (s) {
  case JITC_BOOL:
#define TO_I32(x) (int32_t)(x)
#define TO_I64(x) (int64_t)(x)
    CAST_FROM(uint8_t)
  case JITC_INT32:
    CAST_FROM(int32_t)
  case JITC_INT64:
#undef TO_I32
#define TO_I32(x) wrap_i32(x)
    CAST_FROM(int64_t)
  case JITC_FLOAT32:
#undef TO_I32
#undef TO_I64
#define TO_I32(x) sat_i32(x)
#define TO_I64(x) sat_i64(x)
    CAST_FROM(float)
  case JITC_FLOAT64:
    CAST_FROM(double)
#undef TO_I32
#undef TO_I64
  default:
    return;
  }
}

/* isnan, isinf, isfinite. */
static inline void sem_pred(uint8_t *r, OpId op, jitc_dtype t, const void *a0, int m) {
  if (!dtype_is_float(t)) {
    fill_bool(r, op == OP_ISFINITE, m);
    return;
  }
  if (t == JITC_FLOAT32) {
    const float *x = a0;
    for (int j = 0; j < m; j++)
      r[j] = op == OP_ISNAN ? isnan(x[j]) != 0 : op == OP_ISINF ? isinf(x[j]) != 0 : isfinite(x[j]) != 0;
  } else {
    const double *x = a0;
    for (int j = 0; j < m; j++)
      r[j] = op == OP_ISNAN ? isnan(x[j]) != 0 : op == OP_ISINF ? isinf(x[j]) != 0 : isfinite(x[j]) != 0;
  }
}

#define WHERE_LOOP(T)                                                          \
  do {                                                                         \
    T *r_ = dst;                                                               \
    const uint8_t *c_ = a0;                                                    \
    const T *x_ = a1, *y_ = a2;                                                \
    for (int j = 0; j < m; j++) r_[j] = c_[j] ? x_[j] : y_[j];                 \
  } while (0)

/* The C library's function of op's row (ops.h: LIBM) over m elements of
** float type t, or, for F_INT_ID rows, the identity on integers and bool.
** F_NANARG: a NaN argument is the result, sign and payload kept, as the
** compiling targets give it. */
#define LIBM_LOOP(T, P)                                                        \
  do {                                                                         \
    T *r_ = dst;                                                               \
    const T *x_ = a0, *y_ = a1, *z_ = a2;                                      \
    switch (o->arity) {                                                        \
    case 1:                                                                    \
      if (!o->fn.P##1) return false;                                           \
      for (int j = 0; j < m; j++)                                              \
        r_[j] = nanarg && isnan(x_[j]) ? x_[j] : o->fn.P##1(x_[j]);            \
      return true;                                                             \
    case 2:                                                                    \
      if (!o->fn.P##2) return false;                                           \
      for (int j = 0; j < m; j++)                                              \
        r_[j] = nanarg && isnan(x_[j])   ? x_[j]                               \
                : nanarg && isnan(y_[j]) ? y_[j]                               \
                                         : o->fn.P##2(x_[j], y_[j]);           \
      return true;                                                             \
    case 3:                                                                    \
      if (!o->fn.P##3) return false;                                           \
      for (int j = 0; j < m; j++)                                              \
        r_[j] = nanarg && isnan(x_[j])   ? x_[j]                               \
                : nanarg && isnan(y_[j]) ? y_[j]                               \
                : nanarg && isnan(z_[j]) ? z_[j]                               \
                                         : o->fn.P##3(x_[j], y_[j], z_[j]);    \
      return true;                                                             \
    default:                                                                   \
      return false;                                                            \
    }                                                                          \
  } while (0)

static inline bool sem_libm(OpId op, jitc_dtype t, void *dst, const void *a0,
                            const void *a1, const void *a2, int m) {
  const OpInfo *o = &op_info[op];
  bool nanarg = (o->flags & F_NANARG) != 0;
  switch (t) {
  case JITC_FLOAT32: LIBM_LOOP(float, f);
  case JITC_FLOAT64: LIBM_LOOP(double, d);
  default:
    if (!(o->flags & F_INT_ID) || o->arity != 1) return false;
    if (dst != a0) memcpy(dst, a0, (size_t)m * jitc_dtype_size(t));
    return true;
  }
}

/* The cases an op's type needs when NumPy's semantics differ from the
** C library's (a float op that has none goes to sem_libm). */
#define OP_INTS(id, M, fn) case OP_##id: switch (t) { ON_INT(M, fn) default: break; } break;

/* Op `op` over m elements into dst: r is the result type, t the operand
** type (of args[1] for where), as the typed IR has them.  Returns false for a
** combination the checker never produces. */
static inline bool sem_exec(OpId op, jitc_dtype r, jitc_dtype t, void *dst, const void *a0,
                            const void *a1, const void *a2, int m) {
  switch (op) {
    OP_ALL(ADD, BIN, add)
    OP_NUM(SUB, BIN, sub)
    OP_ALL(MUL, BIN, mul)
    OP_FLT(DIV, BIN, div)
    OP_NUM(FLOORDIV, BIN, floordiv)
    OP_NUM(MOD, BIN, mod)
    OP_INTS(FMOD, BIN, fmod)
    OP_INTS(POW, BIN, pow)
    OP_BI(AND, BIN, and)
    OP_BI(OR, BIN, or)
    OP_BI(XOR, BIN, xor)
    OP_INT(SHL, BIN, shl)
    OP_INT(SHR, BIN, shr)
    OP_CMP(LT, lt)
    OP_CMP(LE, le)
    OP_CMP(GT, gt)
    OP_CMP(GE, ge)
    OP_CMP(EQ, eq)
    OP_CMP(NE, ne)
    OP_NUM(NEG, UN, neg)
    OP_BI(INVERT, UN, invert)
  case OP_ABS:
    switch (t) { ON_B(UN, abs_) ON_INT(UN, abs_) default: break; }
    break;
    OP_NUM(SQUARE, UN, square)
    OP_NUM(RECIPROCAL, UN, reciprocal)
    OP_NUM(SIGN, UN, sign)
    OP_ALL(MINIMUM, BIN, minimum)
    OP_ALL(MAXIMUM, BIN, maximum)
    OP_ALL(FMIN, BIN, fmin_)
    OP_ALL(FMAX, BIN, fmax_)
    OP_ALL(CLIP, TER, clip)
  case OP_EXP:
    if (t == JITC_FLOAT32) {
      UN(f, f, exp);
      return true;
    }
    break;
  case OP_WHERE:
    switch (jitc_dtype_size(t)) {
    case 1: WHERE_LOOP(uint8_t); return true;
    case 4: if (t == JITC_INT32) WHERE_LOOP(int32_t); else WHERE_LOOP(float); return true;
    case 8: if (t == JITC_INT64) WHERE_LOOP(int64_t); else WHERE_LOOP(double); return true;
    default: return false;
    }
  case OP_ISNAN:
  case OP_ISINF:
  case OP_ISFINITE:
    sem_pred(dst, op, t, a0, m);
    return true;
    OP_FLT(FREXP, UN, frexp)
    OP_FLT(MODF, UN, modf)
    OP_FLT(MODF_INT, UN, modf_int)
  case OP_FREXP_EXP:
    switch (t) { case JITC_FLOAT32: UN(f, i, frexp_exp); return true;
                 case JITC_FLOAT64: UN(d, i, frexp_exp); return true; default: return false; }
  case OP_LDEXP:
    switch (t) { case JITC_FLOAT32: LDEXP_LOOP(f); return true;
                 case JITC_FLOAT64: LDEXP_LOOP(d); return true; default: return false; }
  case OP_CAST:
    sem_cast(dst, r, a0, t, m);
    return true;
  default:
    break;
  }
  return sem_libm(op, t, dst, a0, a1, a2, m);
}

#endif /* JITC_SEMANTICS_H */
