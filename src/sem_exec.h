/*
** sem_exec.h -- the loops of semantics.h (included there only, before the
** table expands): each type's exec_ function, which applies one operation
** to m elements of that type, and the C library's functions on floats.
**
** An exec_ function's cases are the operations its kind defines itself;
** the rest are rows of ops.h: the identity (F_INT_ID) on integers and bool,
** the C library's function of the LIBM column on float32 and float64, and,
** on float16 and bfloat16, whatever float32 computes, on their values
** widened and rounded back (half_via_f32).
*/
#ifndef JITC_SEM_EXEC_H
#define JITC_SEM_EXEC_H

/* Element-wise loops: TS the operands' C type, TR the result's. */
#define UN(TS, TR, f)                                                          \
  do {                                                                         \
    TR *r_ = dst;                                                              \
    const TS *x_ = a0;                                                         \
    for (int j = 0; j < m; j++) r_[j] = f(x_[j]);                              \
  } while (0)
#define BIN(TS, TR, f)                                                         \
  do {                                                                         \
    TR *r_ = dst;                                                              \
    const TS *x_ = a0, *y_ = a1;                                               \
    for (int j = 0; j < m; j++) r_[j] = f(x_[j], y_[j]);                       \
  } while (0)
#define TER(TS, TR, f)                                                         \
  do {                                                                         \
    TR *r_ = dst;                                                              \
    const TS *x_ = a0, *y_ = a1, *z_ = a2;                                     \
    for (int j = 0; j < m; j++) r_[j] = f(x_[j], y_[j], z_[j]);                \
  } while (0)
#define WHERE_LOOP(T)                                                          \
  do {                                                                         \
    T *r_ = dst;                                                               \
    const uint8_t *c_ = a0;                                                    \
    const T *x_ = a1, *y_ = a2;                                                \
    for (int j = 0; j < m; j++) r_[j] = c_[j] ? x_[j] : y_[j];                 \
  } while (0)
#define PRED_LOOP(T, pred)                                                     \
  do {                                                                         \
    uint8_t *r_ = dst;                                                         \
    const T *x_ = a0;                                                          \
    for (int j = 0; j < m; j++) r_[j] = pred(x_[j]) != 0;                      \
  } while (0)

/* The case of op ID in type S's exec_ function: S##_fn over the elements. */
#define ON1(S, ID, fn) case OP_##ID: UN(sem_##S, sem_##S, S##_##fn); return true;
#define ON2(S, ID, fn) case OP_##ID: BIN(sem_##S, sem_##S, S##_##fn); return true;
#define ON3(S, ID, fn) case OP_##ID: TER(sem_##S, sem_##S, S##_##fn); return true;
#define ON_CMP(S)                                                              \
  case OP_LT: BIN(sem_##S, uint8_t, S##_lt); return true;                      \
  case OP_LE: BIN(sem_##S, uint8_t, S##_le); return true;                      \
  case OP_GT: BIN(sem_##S, uint8_t, S##_gt); return true;                      \
  case OP_GE: BIN(sem_##S, uint8_t, S##_ge); return true;                      \
  case OP_EQ: BIN(sem_##S, uint8_t, S##_eq); return true;                      \
  case OP_NE: BIN(sem_##S, uint8_t, S##_ne); return true;
/* isnan, isinf, isfinite and signbit of integers and bool. */
#define ON_PRED_INT(S)                                                         \
  case OP_ISNAN: case OP_ISINF: fill_bool(dst, 0, m); return true;             \
  case OP_ISFINITE: fill_bool(dst, 1, m); return true;                         \
  case OP_SIGNBIT: {                                                           \
    uint8_t *r_ = dst;                                                         \
    const sem_##S *x_ = a0;                                                    \
    for (int j = 0; j < m; j++) r_[j] = S##_lt(x_[j], (sem_##S)0);             \
    return true;                                                               \
  }
#define EXEC_SIGNATURE(S)                                                      \
  static inline bool exec_##S(OpId op, void *dst, const void *a0, const void *a1, \
                              const void *a2, int m)

static inline void fill_bool(uint8_t *r, uint8_t v, int m) { memset(r, v, (size_t)m); }

/* A row's function that is the identity on integers and bool (F_INT_ID). */
static inline bool int_identity(OpId op, void *dst, const void *a0, size_t size, int m) {
  const OpInfo *o = &op_info[op];
  if (!(o->flags & F_INT_ID) || o->arity != 1) return false;
  if (dst != a0) memcpy(dst, a0, (size_t)m * size);
  return true;
}

/* abs is the identity on bool; fmin/fmax are minimum/maximum where there is
** no NaN to ignore. */
#define EXEC_BOOL(S)                                                           \
  EXEC_SIGNATURE(S) {                                                          \
    switch (op) {                                                              \
      ON2(S, ADD, add) ON2(S, MUL, mul) ON2(S, AND, and) ON2(S, OR, or)        \
      ON2(S, XOR, xor) ON1(S, INVERT, invert) ON1(S, ABS, same)                \
      ON2(S, MINIMUM, minimum) ON2(S, MAXIMUM, maximum)                        \
      ON2(S, FMIN, minimum) ON2(S, FMAX, maximum) ON3(S, CLIP, clip)           \
      ON_CMP(S) ON_PRED_INT(S)                                                 \
    default:                                                                   \
      return int_identity(op, dst, a0, sizeof(sem_##S), m);                    \
    }                                                                          \
  }

#define EXEC_INT(S)                                                            \
  EXEC_SIGNATURE(S) {                                                          \
    switch (op) {                                                              \
      ON2(S, ADD, add) ON2(S, SUB, sub) ON2(S, MUL, mul)                       \
      ON2(S, FLOORDIV, floordiv) ON2(S, MOD, mod) ON2(S, FMOD, fmod)           \
      ON2(S, POW, pow) ON2(S, AND, and) ON2(S, OR, or) ON2(S, XOR, xor)        \
      ON2(S, SHL, shl) ON2(S, SHR, shr) ON1(S, NEG, neg) ON1(S, INVERT, invert) \
      ON1(S, ABS, abs) ON1(S, SQUARE, square) ON1(S, RECIPROCAL, reciprocal)   \
      ON1(S, SIGN, sign) ON2(S, MINIMUM, minimum) ON2(S, MAXIMUM, maximum)     \
      ON2(S, FMIN, minimum) ON2(S, FMAX, maximum) ON3(S, CLIP, clip)           \
      ON_CMP(S) ON_PRED_INT(S)                                                 \
    default:                                                                   \
      return int_identity(op, dst, a0, sizeof(sem_##S), m);                    \
    }                                                                          \
  }

/* The C library's function of op's row (ops.h: LIBM) over m elements of T,
** P its member of LibmFn (f: float, d: double).  F_NANARG: a NaN argument
** is the result, sign and payload kept, as the compiling targets give it. */
#define LIBM_LOOP(T, P)                                                        \
  do {                                                                         \
    const OpInfo *o = &op_info[op];                                            \
    bool nanarg = (o->flags & F_NANARG) != 0;                                  \
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

/* float32 and float64; EXTRA: the cases of one type alone (float32's exp). */
#define EXEC_EXP(S) ON1(S, EXP, exp)
#define EXEC_FLT(S, P, EXTRA)                                                  \
  EXEC_SIGNATURE(S) {                                                          \
    switch (op) {                                                              \
      ON2(S, ADD, add) ON2(S, SUB, sub) ON2(S, MUL, mul) ON2(S, DIV, div)      \
      ON2(S, FLOORDIV, floordiv) ON2(S, MOD, mod) ON1(S, NEG, neg)             \
      ON1(S, SQUARE, square) ON1(S, RECIPROCAL, reciprocal) ON1(S, SIGN, sign) \
      ON2(S, MINIMUM, minimum) ON2(S, MAXIMUM, maximum)                        \
      ON2(S, FMIN, fmin) ON2(S, FMAX, fmax) ON3(S, CLIP, clip) ON_CMP(S) EXTRA \
    case OP_ISNAN: PRED_LOOP(sem_##S, isnan); return true;                     \
    case OP_ISINF: PRED_LOOP(sem_##S, isinf); return true;                     \
    case OP_ISFINITE: PRED_LOOP(sem_##S, isfinite); return true;               \
    case OP_SIGNBIT: PRED_LOOP(sem_##S, signbit); return true;                 \
    default:                                                                   \
      LIBM_LOOP(sem_##S, P);                                                   \
    }                                                                          \
  }

/* A float16 or bfloat16 operation: float32's on the values widened
** exactly, each result rounded to the type (comparisons and predicates give
** their bools as they are).  F_NANARG rows give a NaN argument itself, its
** 16 bits.  dst may be an operand's buffer: each chunk is widened before
** its results are written. */
typedef float (*HalfWiden)(uint16_t);
typedef uint16_t (*HalfRound)(float);
static inline bool half_via_f32(OpId op, void *dst, const void *a0, const void *a1,
                                const void *a2, int m, HalfWiden widen, HalfRound round) {
  enum { CH = 256 };
  const OpInfo *o = &op_info[op];
  const uint16_t *x[3] = {a0, a1, a2};
  bool to_bool = o->rule == R_COMPARE || o->rule == R_PRED;
  bool nanarg = (o->flags & F_NANARG) != 0;
  float w[3][CH], r[CH];
  if (o->arity < 1 || o->arity > 3) return false;
  for (int j0 = 0; j0 < m; j0 += CH) {
    int n = m - j0 < CH ? m - j0 : CH;
    for (int k = 0; k < o->arity; k++)
      for (int j = 0; j < n; j++) w[k][j] = widen(x[k][j0 + j]);
    if (to_bool) {
      if (!exec_f32(op, (uint8_t *)dst + j0, w[0], w[1], w[2], n)) return false;
      continue;
    }
    if (!exec_f32(op, r, w[0], w[1], w[2], n)) return false;
    uint16_t *d = (uint16_t *)dst + j0;
    for (int j = 0; j < n; j++) {
      uint16_t v = round(r[j]);
      for (int k = 0; nanarg && k < o->arity; k++)
        if (isnan(w[k][j])) {
          v = x[k][j0 + j];
          break;
        }
      d[j] = v;
    }
  }
  return true;
}

/* float16, bfloat16: F_STEP steps their own bits (S##_step, half.h). */
#define EXEC_HALF(S)                                                           \
  EXEC_SIGNATURE(S) {                                                          \
    switch (op) {                                                              \
      ON1(S, NEG, neg) ON1(S, ABS, abs) ON2(S, COPYSIGN, copysign)             \
      ON2(S, MINIMUM, minimum) ON2(S, MAXIMUM, maximum)                        \
      ON2(S, FMIN, fmin) ON2(S, FMAX, fmax) ON3(S, CLIP, clip)                 \
    default:                                                                   \
      if ((op_info[op].flags & F_STEP) && op_info[op].arity == 2) {            \
        BIN(sem_##S, sem_##S, S##_step);                                       \
        return true;                                                           \
      }                                                                        \
      return half_via_f32(op, dst, a0, a1, a2, m, S##_to_f32, f32_to_##S);     \
    }                                                                          \
  }

#endif /* JITC_SEM_EXEC_H */
