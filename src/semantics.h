/*
** semantics.h -- the scalar semantics of the language: the executable form
** of docs/language.md.
**
** One static inline function per operation and element type, named by the
** type's CNAME (types.h): i32_add, u8_floordiv, f64_sign, f16_minimum; and
** sem_exec(), which applies one operation of the typed IR to m elements.
** The interpreter (interp/interp.c) runs programs with sem_exec over blocks
** of elements; the constant folder (fold.c) calls the same sem_exec on one
** element.  So a folded constant has exactly the bits that evaluating it at
** run time gives (NaN payloads and -0.0 included), and the two cannot drift
** apart.
**
** The functions are made from the table of types: each row of types.h
** expands DEFINE_<KIND>, which picks the helpers of its kind and size (a
** signed integer of 1 byte computes in uint32_t, its unsigned twin is
** uint8_t, ...).  Only what is truly one type's own is written by hand: the
** rounding of the 16-bit floats (half.h), NumPy's float32 exp, bool's
** arithmetic; the complex types have their own file (sem_complex.h).
**
** A function is written here only where NumPy's semantics need a case of
** their own (abs of integers, float32 exp, minimum's NaN rule, ...): any
** other is its row of ops.h, the C library function of the LIBM column on
** floats (sem_libm), the identity on integers and bool where the row says
** F_INT_ID, and its NaN argument unchanged where it says F_NANARG.  A new
** plain math function is one row there and nothing here.  float16 and
** bfloat16 compute every operation as float32 does on their values widened
** exactly, and round the result to their own type; only what moves a value
** without computing (unary -, abs, copysign, minimum, ...) works on their
** 16 bits, and F_STEP steps them.
**
** Every operation is defined for every input, with NumPy's results where
** NumPy defines them and no undefined behaviour in C: integer arithmetic is
** done in unsigned types at least as wide as int (so overflow wraps, and no
** operand is promoted to a signed int that could overflow), division and
** shift edge cases are tested before the C operator runs, and float-to-int
** casts saturate.
*/
#ifndef JITC_SEMANTICS_H
#define JITC_SEMANTICS_H

#include "jitc_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "half.h"

/* ===================================================================== */
/* Helpers, by kind and size                                              */
/* ===================================================================== */

/* The unsigned twin of an integer of SIZE bytes (casts wrap through it),
** and the unsigned type its arithmetic is done in: never narrower than int,
** so that uint16_t * uint16_t is not an int multiplication that overflows. */
#define UTWIN_1 uint8_t
#define UTWIN_2 uint16_t
#define UTWIN_4 uint32_t
#define UTWIN_8 uint64_t
#define UWIDE_1 uint32_t
#define UWIDE_2 uint32_t
#define UWIDE_4 uint32_t
#define UWIDE_8 uint64_t

/* ---- bool: values are 0 or 1; + is or, * is and, as in NumPy ---- */
#define BOOL_OPS(S)                                                            \
  static inline uint8_t S##_add(uint8_t a, uint8_t b) { return a | b; }        \
  static inline uint8_t S##_mul(uint8_t a, uint8_t b) { return a & b; }        \
  static inline uint8_t S##_and(uint8_t a, uint8_t b) { return a & b; }        \
  static inline uint8_t S##_or(uint8_t a, uint8_t b) { return a | b; }         \
  static inline uint8_t S##_xor(uint8_t a, uint8_t b) { return a ^ b; }        \
  static inline uint8_t S##_invert(uint8_t a) { return a ^ 1; }                \
  static inline uint8_t S##_same(uint8_t a) { return a; }                      \
  static inline uint8_t S##_minimum(uint8_t a, uint8_t b) { return a & b; }    \
  static inline uint8_t S##_maximum(uint8_t a, uint8_t b) { return a | b; }    \
  static inline uint8_t S##_clip(uint8_t x, uint8_t lo, uint8_t hi) {          \
    return (x | lo) & hi;                                                      \
  }

/* ---- integers ----
** S: prefix, T: type, W: its unsigned arithmetic type, BITS: width.  The
** conversion of an unsigned result back to T is modulo 2^BITS (two's
** complement), which every compiler jitc supports defines. */
#define INT_COMMON(S, T, W, BITS)                                              \
  static inline T S##_add(T a, T b) { return (T)((W)a + (W)b); }               \
  static inline T S##_sub(T a, T b) { return (T)((W)a - (W)b); }               \
  static inline T S##_mul(T a, T b) { return (T)((W)a * (W)b); }               \
  static inline T S##_neg(T a) { return (T)((W)0 - (W)a); }                    \
  static inline T S##_square(T a) { return (T)((W)a * (W)a); }                 \
  /* Repeated squaring, wrapping. */                                           \
  static inline T S##_upow(T a, T b) {                                         \
    W r = 1, x = (W)a, e = (W)b;                                               \
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
  static inline T S##_invert(T a) { return (T)~a; }                            \
  /* npy_lshift: a count outside [0, BITS), as unsigned, shifts everything    \
  ** out.  Negative operands are shifted as unsigned. */                       \
  static inline T S##_shl(T a, T b) {                                          \
    return (W)b < BITS ? (T)((W)a << (W)b) : 0;                                \
  }                                                                            \
  static inline T S##_same(T a) { return a; }                                  \
  static inline T S##_minimum(T a, T b) { return a < b ? a : b; }              \
  static inline T S##_maximum(T a, T b) { return a > b ? a : b; }              \
  static inline T S##_clip(T x, T lo, T hi) {                                  \
    return S##_minimum(S##_maximum(x, lo), hi);                                \
  }

#define SINT_OPS(S, T, W, BITS)                                                \
  INT_COMMON(S, T, W, BITS)                                                    \
  /* NumPy: x // 0 == 0; MIN // -1 wraps to MIN. */                            \
  static inline T S##_floordiv(T a, T b) {                                     \
    if (b == 0) return 0;                                                      \
    if (b == -1) return S##_neg(a);                                            \
    T q = (T)(a / b);                                                          \
    if (a % b != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);                    \
    return q;                                                                  \
  }                                                                            \
  /* The sign of the divisor, as Python; x % 0 == 0; MIN % -1 == 0. */         \
  static inline T S##_mod(T a, T b) {                                          \
    if (b == 0 || b == -1) return 0;                                           \
    T r = (T)(a % b);                                                          \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                        \
    return r;                                                                  \
  }                                                                            \
  /* C's %: the sign of the dividend (np.fmod). */                             \
  static inline T S##_fmod(T a, T b) {                                         \
    if (b == 0 || b == -1) return 0;                                           \
    return (T)(a % b);                                                         \
  }                                                                            \
  /* A negative exponent (an error in NumPy) gives the integer part of        \
  ** 1/a^-b: 1 for a == 1, +-1 for a == -1, else 0. */                         \
  static inline T S##_pow(T a, T b) {                                          \
    if (b < 0) {                                                               \
      if (a == 1) return 1;                                                    \
      if (a == -1) return ((W)b & 1) ? -1 : 1;                                 \
      return 0;                                                                \
    }                                                                          \
    return S##_upow(a, b);                                                     \
  }                                                                            \
  /* npy_rshift: arithmetic; a count outside [0, BITS) leaves the sign. */     \
  static inline T S##_shr(T a, T b) {                                          \
    if ((W)b < BITS) return (T)(a < 0 ? ~(~a >> (W)b) : a >> (W)b);            \
    return a < 0 ? -1 : 0;                                                     \
  }                                                                            \
  static inline T S##_abs(T a) { return a < 0 ? S##_neg(a) : a; }              \
  static inline T S##_sign(T a) { return (T)((a > 0) - (a < 0)); }             \
  /* 1/a truncated, as NumPy's loop computes it; 1/0 is 0 here (NumPy's is    \
  ** undefined). */                                                            \
  static inline T S##_reciprocal(T a) { return a == 1 || a == -1 ? a : 0; }

#define UINT_OPS(S, T, W, BITS)                                                \
  INT_COMMON(S, T, W, BITS)                                                    \
  /* C's division: x // 0 == 0 and x % 0 == 0, as NumPy. */                    \
  static inline T S##_floordiv(T a, T b) { return b ? (T)(a / b) : 0; }        \
  static inline T S##_mod(T a, T b) { return b ? (T)(a % b) : 0; }             \
  static inline T S##_fmod(T a, T b) { return S##_mod(a, b); }                 \
  static inline T S##_pow(T a, T b) { return S##_upow(a, b); }                 \
  /* Logical; a count of BITS or more shifts everything out. */                \
  static inline T S##_shr(T a, T b) { return (W)b < BITS ? (T)((W)a >> b) : 0; } \
  static inline T S##_abs(T a) { return a; }                                   \
  static inline T S##_sign(T a) { return a > 0; }                              \
  static inline T S##_reciprocal(T a) { return a == 1; }

/* ---- float32 and float64 ----
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

/* ---- float16 and bfloat16 ----
** What moves a value without computing one works on the 16 bits (so a NaN
** keeps its sign and payload, as float32's would); the selections compare
** the float32 values, with float32's rules above. */
#define HALF_OPS(S)                                                            \
  static inline uint16_t S##_neg(uint16_t a) { return a ^ 0x8000; }            \
  static inline uint16_t S##_abs(uint16_t a) { return a & 0x7fff; }            \
  static inline uint16_t S##_copysign(uint16_t a, uint16_t b) {                \
    return (uint16_t)((a & 0x7fff) | (b & 0x8000));                            \
  }                                                                            \
  static inline uint16_t S##_minimum(uint16_t a, uint16_t b) {                 \
    float x = S##_to_f32(a), y = S##_to_f32(b);                                \
    return isnan(x) ? a : x < y ? a : b;                                       \
  }                                                                            \
  static inline uint16_t S##_maximum(uint16_t a, uint16_t b) {                 \
    float x = S##_to_f32(a), y = S##_to_f32(b);                                \
    return isnan(x) ? a : x > y ? a : b;                                       \
  }                                                                            \
  static inline uint16_t S##_fmin(uint16_t a, uint16_t b) {                    \
    float x = S##_to_f32(a), y = S##_to_f32(b);                                \
    return isnan(y) ? a : x < y ? a : b;                                       \
  }                                                                            \
  static inline uint16_t S##_fmax(uint16_t a, uint16_t b) {                    \
    float x = S##_to_f32(a), y = S##_to_f32(b);                                \
    return isnan(y) ? a : x > y ? a : b;                                       \
  }                                                                            \
  static inline uint16_t S##_clip(uint16_t x, uint16_t lo, uint16_t hi) {      \
    return S##_minimum(S##_maximum(x, lo), hi);                                \
  }


/* float32 exp is NumPy's own evaluation (npymath.c), not expf: NumPy's
** results differ from the C library's in the last bit for many inputs, and
** printing what NumPy prints is part of the contract.  (float64 exp is the
** C library's, from the table; the 16-bit floats use float32's.) */
#define EXP_4(S) static inline float S##_exp(float x) { return npy_expf(x); }
#define EXP_8(S)

/* ---- comparisons (NaN compares false, != true) ---- */
#define CMP_OPS(S, T)                                                          \
  static inline uint8_t S##_lt(T a, T b) { return a < b; }                     \
  static inline uint8_t S##_le(T a, T b) { return a <= b; }                    \
  static inline uint8_t S##_gt(T a, T b) { return a > b; }                     \
  static inline uint8_t S##_ge(T a, T b) { return a >= b; }                    \
  static inline uint8_t S##_eq(T a, T b) { return a == b; }                    \
  static inline uint8_t S##_ne(T a, T b) { return a != b; }

/* ===================================================================== */
/* Every type's functions                                                 */
/* ===================================================================== */

#define DEFINE_T_BOOL(S, T, SIZE, LO, HI)                                      \
  BOOL_OPS(S) CMP_OPS(S, T) CONV_BOOL(S) EXEC_BOOL(S)
#define DEFINE_T_SINT(S, T, SIZE, LO, HI)                                      \
  SINT_OPS(S, T, UWIDE_##SIZE, SIZE * 8) CMP_OPS(S, T)                         \
  CONV_SINT(S, T, UTWIN_##SIZE, SIZE * 8, LO, HI) EXEC_INT(S)
#define DEFINE_T_UINT(S, T, SIZE, LO, HI)                                      \
  UINT_OPS(S, T, UWIDE_##SIZE, SIZE * 8) CMP_OPS(S, T)                         \
  CONV_UINT(S, T, SIZE * 8, HI) EXEC_INT(S)
#define DEFINE_T_FLOAT(S, T, SIZE, LO, HI) DEFINE_FLOAT_##SIZE(S, T)
#define DEFINE_T_COMPLEX(S, T, SIZE, LO, HI) DEFINE_CPLX_##SIZE(S, T)
#define DEFINE_CPLX_8(S, T)                                                    \
  CPLX_LIBM(S, T, float, f, float complex, CMPLXF, NPY_LOGE2F, NPY_LOG2EF, NPY_LOG10EF) \
  CPLX_OPS(S, T, float, f) CONV_CPLX(S, T, float) EXEC_CPLX(S, float)
#define DEFINE_CPLX_16(S, T)                                                   \
  CPLX_LIBM(S, T, double, , double complex, CMPLX, NPY_LOGE2, NPY_LOG2E, NPY_LOG10E) \
  CPLX_OPS(S, T, double, ) CONV_CPLX(S, T, double) EXEC_CPLX(S, double)
#define DEFINE_FLOAT_2(S, T) HALF_OPS(S) CONV_HALF(S) EXEC_HALF(S)
#define DEFINE_FLOAT_4(S, T)                                                   \
  FLT_OPS(S, T, f) EXP_4(S) CMP_OPS(S, T) CONV_FLT(S, T) EXEC_FLT(S, f, EXEC_EXP(S))
#define DEFINE_FLOAT_8(S, T)                                                   \
  FLT_OPS(S, T, ) EXP_8(S) CMP_OPS(S, T) CONV_FLT(S, T) EXEC_FLT(S, d, )

/* Each type's element (sem_i32 is int32_t, sem_f16 uint16_t), then its
** exec_ function declared, so that the 16-bit floats can call float32's. */
#define TYPE(id, name, shortname, cname, kind, size, chr, descr, ctype, cuda, llvm, lo, hi) \
  typedef ctype sem_##cname;                                                   \
  static inline bool exec_##cname(OpId op, void *dst, const void *a0, const void *a1, \
                                  const void *a2, int m);
#include "types.h"
#undef TYPE

#include "sem_cast.h"
#include "sem_exec.h"
#include "sem_complex.h"

#define TYPE(id, name, shortname, cname, kind, size, chr, descr, ctype, cuda, llvm, lo, hi) \
  DEFINE_##kind(cname, ctype, size, lo, hi)
#include "types.h"
#undef TYPE

/* ===================================================================== */
/* sem_cast and sem_exec                                                  */
/* ===================================================================== */

/* dst = the cast of m elements of src (type s) to type t: each element
** widens exactly to int64, uint64 or float64 (Wide), then converts to t. */
static inline void sem_cast(void *dst, jitc_dtype t, const void *src, jitc_dtype s, int m) {
  Wide w;
  for (int j0 = 0; j0 < m; j0 += WIDE_CHUNK) {
    int n = m - j0 < WIDE_CHUNK ? m - j0 : WIDE_CHUNK;
    WideKind k = W_I64;
    switch (s) {
#define TYPE(id, name, shortname, cname, kind, size, chr, descr, ctype, cuda, llvm, lo, hi) \
  case JITC_##id: k = widen_##cname(&w, (const sem_##cname *)src + j0, n); break;
#include "types.h"
#undef TYPE
    default: return;
    }
    switch (t) {
#define TYPE(id, name, shortname, cname, kind, size, chr, descr, ctype, cuda, llvm, lo, hi) \
  case JITC_##id: narrow_##cname((sem_##cname *)dst + j0, k, &w, n); break;
#include "types.h"
#undef TYPE
    default: return;
    }
  }
}

/* ---- ldexp, frexp and modf (ops.h: the rows of mixed types) ----
** The C library's, on float32 and float64 (the checker computes 16-bit
** floats in float32).  A NaN argument is every float result, sign and
** payload kept, as for the functions of one argument (F_NANARG); frexp's
** exponent of inf and NaN is 0, NumPy's (C leaves it unspecified).  The
** exponent of ldexp arrives as int32 (the checker clamps wider ones): x *
** 2^n rounded once, to inf or a signed 0 beyond the range. */
#define LDEXP_FAMILY(S, T, F)                                                     \
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
  }                                                                            \
  static inline bool S##_mixed(OpId op, void *dst, const void *a0, const void *a1, int m) { \
    T *r = dst;                                                                \
    const T *x = a0;                                                           \
    switch (op) {                                                              \
    case OP_LDEXP:                                                             \
      for (int j = 0; j < m; j++) r[j] = S##_ldexp(x[j], ((const int32_t *)a1)[j]); \
      return true;                                                             \
    case OP_FREXP: for (int j = 0; j < m; j++) r[j] = S##_frexp(x[j]); return true; \
    case OP_FREXP_EXP:                                                         \
      for (int j = 0; j < m; j++) ((int32_t *)dst)[j] = S##_frexp_exp(x[j]);   \
      return true;                                                             \
    case OP_MODF: for (int j = 0; j < m; j++) r[j] = S##_modf(x[j]); return true; \
    case OP_MODF_INT: for (int j = 0; j < m; j++) r[j] = S##_modf_int(x[j]); return true; \
    default: return false;                                                     \
    }                                                                          \
  }
LDEXP_FAMILY(f32, float, f)
LDEXP_FAMILY(f64, double, )

/* Op `op` over m elements into dst: r is the result type, t the operand
** type (of args[1] for where), as the typed IR has them.  Returns false for a
** combination the checker never produces. */
static inline bool sem_exec(OpId op, jitc_dtype r, jitc_dtype t, void *dst, const void *a0,
                            const void *a1, const void *a2, int m) {
  switch (op) {
  case OP_CAST:
    sem_cast(dst, r, a0, t, m);
    return true;
  case OP_COMPLEX: /* float parts make a complex value: the result type's loop */
    t = r;
    break;
  case OP_LDEXP: case OP_FREXP: case OP_FREXP_EXP: case OP_MODF: case OP_MODF_INT:
    return t == JITC_FLOAT32 ? f32_mixed(op, dst, a0, a1, m)
           : t == JITC_FLOAT64 ? f64_mixed(op, dst, a0, a1, m) : false;
  case OP_WHERE:
    /* Moves elements as their bits: a NaN keeps its sign and payload.  A
    ** complex64 is two floats (4-byte aligned), not a uint64_t. */
    if (t == JITC_COMPLEX64) {
      WHERE_LOOP(jitc_c64);
      return true;
    }
    switch (jitc_dtype_size(t)) {
    case 1: WHERE_LOOP(uint8_t); return true;
    case 2: WHERE_LOOP(uint16_t); return true;
    case 4: WHERE_LOOP(uint32_t); return true;
    case 8: WHERE_LOOP(uint64_t); return true;
    case 16: WHERE_LOOP(jitc_c128); return true;
    default: return false;
    }
  default:
    break;
  }
  switch (t) {
#define TYPE(id, name, shortname, cname, kind, size, chr, descr, ctype, cuda, llvm, lo, hi) \
  case JITC_##id: return exec_##cname(op, dst, a0, a1, a2, m);
#include "types.h"
#undef TYPE
  default:
    return false;
  }
}

#endif /* JITC_SEMANTICS_H */
