/*
** sem_cast.h -- the conversions between element types, a part of
** semantics.h (included there only, before the table expands).
**
** A cast widens each element exactly to one of four wide values (int64
** for bool and signed integers, uint64 for unsigned ones, float64 for
** floats: every float type widens to it exactly; complex128 for complex
** types), then converts that to the target type.  So 15 types need 4
** conversions each rather than 225, and each conversion is NumPy's
** (docs/language.md, "Casts"):
**   to bool               != 0 (NaN is true)
**   integer to integer    wraps, modulo 2^BITS
**   float to integer      truncates toward zero and saturates at the type's
**                         ends; NaN gives 0 (C leaves these undefined,
**                         NumPy's results depend on the machine)
**   integer to float      rounds to nearest even once (int64 to float32
**                         directly, not through float64); to a 16-bit
**                         float through float32, which is exact for every
**                         integer float16 can hold, and is how ml_dtypes
**                         converts to bfloat16
**   float to float        rounds to nearest even (half.h for the 16-bit
**                         floats: float64 to bfloat16 through float32)
**   real to complex       the real part converts as to the part's float
**                         type, the imaginary part is +0
**   complex to complex    each part rounds to nearest even
**   complex to bool       either part != 0 (NaN is true)
**   complex to other real types: the real part, as NumPy's astype (with
**                         its ComplexWarning); the checker never asks for it
*/
#ifndef JITC_SEM_CAST_H
#define JITC_SEM_CAST_H

enum { WIDE_CHUNK = 256 };
typedef enum WideKind { W_I64, W_U64, W_F64, W_C128 } WideKind;
typedef union Wide {
  int64_t i[WIDE_CHUNK];
  uint64_t u[WIDE_CHUNK];
  double f[WIDE_CHUNK];
  struct {
    double re[WIDE_CHUNK], im[WIDE_CHUNK]; /* re is f: the real part */
  } c;
} Wide;

/* widen_S: n elements of S into w, returning which field holds them;
** narrow_S: n wide values of kind k into elements of S. */
#define WIDEN_FN(S, T, FIELD, KIND, TO)                                        \
  static inline WideKind widen_##S(Wide *w, const T *x, int n) {               \
    for (int j = 0; j < n; j++) w->FIELD[j] = TO(x[j]);                        \
    return KIND;                                                               \
  }
#define NARROW_FN(S, T)                                                        \
  static inline void narrow_##S(T *r, WideKind k, const Wide *w, int n) {      \
    switch (k) {                                                               \
    case W_I64: for (int j = 0; j < n; j++) r[j] = S##_from_i64(w->i[j]); return; \
    case W_U64: for (int j = 0; j < n; j++) r[j] = S##_from_u64(w->u[j]); return; \
    case W_F64: for (int j = 0; j < n; j++) r[j] = S##_from_f64(w->f[j]); return; \
    case W_C128:                                                               \
      for (int j = 0; j < n; j++) r[j] = S##_from_c128(w->c.re[j], w->c.im[j]); \
      return;                                                                  \
    }                                                                          \
  }
/* A real type from a complex value: its real part (bool has its own). */
#define FROM_C128(S, T)                                                        \
  static inline T S##_from_c128(double re, double im) { return S##_from_f64(re); }
#define WIDE_I64(x) ((int64_t)(x))
#define WIDE_U64(x) ((uint64_t)(x))
#define WIDE_F64(x) ((double)(x))

/* A bool element is its byte: a cast reads it as stored (the interpreter's
** bools are 0 or 1). */
#define CONV_BOOL(S)                                                           \
  static inline uint8_t S##_from_i64(int64_t x) { return x != 0; }             \
  static inline uint8_t S##_from_u64(uint64_t x) { return x != 0; }            \
  static inline uint8_t S##_from_f64(double x) { return x != 0; }              \
  static inline uint8_t S##_from_c128(double re, double im) { return re != 0 || im != 0; } \
  WIDEN_FN(S, uint8_t, i, W_I64, WIDE_I64) NARROW_FN(S, uint8_t)

/* Signed: U is the unsigned twin, LO and HI the type's ends.  From a
** double: below 2^(BITS-1) and above -2^(BITS-1) - 1 the truncation fits;
** the bound 2^(BITS-1) is a power of two, exact in a double. */
#define CONV_SINT(S, T, U, BITS, LO, HI)                                       \
  static inline T S##_from_i64(int64_t x) { return (T)(U)(uint64_t)x; }        \
  static inline T S##_from_u64(uint64_t x) { return (T)(U)x; }                 \
  static inline T S##_from_f64(double x) {                                     \
    const double lim = (double)((uint64_t)1 << ((BITS) - 1));                  \
    if (isnan(x)) return 0;                                                    \
    if (x >= lim) return HI;                                                   \
    if (x <= -lim - 1) return LO;                                              \
    return (T)x;                                                               \
  }                                                                            \
  FROM_C128(S, T) WIDEN_FN(S, T, i, W_I64, WIDE_I64) NARROW_FN(S, T)

/* Unsigned: negative values (all of them, -0.5 truncating to 0 aside)
** saturate to 0, 2^BITS and above to HI. */
#define CONV_UINT(S, T, BITS, HI)                                              \
  static inline T S##_from_i64(int64_t x) { return (T)(uint64_t)x; }           \
  static inline T S##_from_u64(uint64_t x) { return (T)x; }                    \
  static inline T S##_from_f64(double x) {                                     \
    const double lim = 2.0 * (double)((uint64_t)1 << ((BITS) - 1));            \
    if (!(x > -1.0)) return 0; /* NaN too */                                   \
    if (x >= lim) return HI;                                                   \
    return (T)x;                                                               \
  }                                                                            \
  FROM_C128(S, T) WIDEN_FN(S, T, u, W_U64, WIDE_U64) NARROW_FN(S, T)

/* float32, float64: C's conversions round to nearest (an int64 or uint64
** to float32 in one rounding). */
#define CONV_FLT(S, T)                                                         \
  static inline T S##_from_i64(int64_t x) { return (T)x; }                     \
  static inline T S##_from_u64(uint64_t x) { return (T)x; }                    \
  static inline T S##_from_f64(double x) { return (T)x; }                      \
  FROM_C128(S, T) WIDEN_FN(S, T, f, W_F64, WIDE_F64) NARROW_FN(S, T)

/* float16, bfloat16 (half.h). */
#define CONV_HALF(S)                                                           \
  static inline uint16_t S##_from_i64(int64_t x) { return f32_to_##S((float)x); } \
  static inline uint16_t S##_from_u64(uint64_t x) { return f32_to_##S((float)x); } \
  static inline uint16_t S##_from_f64(double x) { return f64_to_##S(x); }      \
  static inline double S##_to_f64(uint16_t x) { return (double)S##_to_f32(x); } \
  FROM_C128(S, uint16_t) WIDEN_FN(S, uint16_t, f, W_F64, S##_to_f64) NARROW_FN(S, uint16_t)

/* complex64, complex128: P the part's type.  From a real value as the part's
** float type converts it (an int64 to float32 in one rounding). */
#define CONV_CPLX(S, T, P)                                                     \
  static inline T S##_from_i64(int64_t x) { return (T){(P)x, 0}; }             \
  static inline T S##_from_u64(uint64_t x) { return (T){(P)x, 0}; }            \
  static inline T S##_from_f64(double x) { return (T){(P)x, 0}; }              \
  static inline T S##_from_c128(double re, double im) { return (T){(P)re, (P)im}; } \
  static inline WideKind widen_##S(Wide *w, const T *x, int n) {               \
    for (int j = 0; j < n; j++) {                                              \
      w->c.re[j] = x[j].re;                                                    \
      w->c.im[j] = x[j].im;                                                    \
    }                                                                          \
    return W_C128;                                                             \
  }                                                                            \
  NARROW_FN(S, T)

#endif /* JITC_SEM_CAST_H */
