/*
** fold.c -- constant folding, and the evaluation of weak scalar expressions.
**
** In NumPy's model a weak value (a literal, a constant, a weak scalar) is a
** Python scalar, and an expression of weak values only is computed by
** Python, with unbounded ints, before NumPy sees its value: `a_int32 +
** 2**31` is refused because 2147483648 does not fit int32, `2 ** -1` is 0.5.
** jitc computes such an expression in int64, float64 or bool with the
** run-time semantics of semantics.h (so a folded constant has exactly the
** bits evaluation gives, NaN and -0.0 included) and refuses where Python's
** answer would differ from that: an integer result outside int64, an
** integer or float division by zero, a negative shift count, an integer
** raised to a negative power that arrives at run time.
**
** The checker folds expressions of constants while it types them, so that
** range checks and the negative-exponent rule see their values.  An
** expression that involves weak scalars cannot be folded; the checker
** records it (Program.checks) and jitc.c evaluates it here before each run,
** with the scalars' values, for the same checks.
*/
#include "jitc_int.h"

#include <math.h>

#include "semantics.h"

/* One value of any type, as sem_exec reads and writes it: a parameter's
** slot has that layout. */
typedef ParamSlot Scalar;

/* The wide type that holds a constant of type t in its Node: integers and
** bool in k.i (uint64 values as their bits), floats in k.f, complex values
** in k.z (two doubles: complex128's element), exactly. */
static jitc_dtype node_wide(jitc_dtype t) {
  if (dtype_is_float(t)) return JITC_FLOAT64;
  if (dtype_is_complex(t)) return JITC_COMPLEX128;
  return type_info[t].kind == T_UINT ? JITC_UINT64 : JITC_INT64;
}

/* A constant's value, converted from its Node by the cast rules (which
** give the value itself: it is one of its type's). */
static Scalar load(const Node *c) {
  Scalar s;
  memset(&s, 0, sizeof s);
  const void *k = dtype_is_float(c->type)     ? (const void *)&c->k.f
                  : dtype_is_complex(c->type) ? (const void *)c->k.z
                                              : (const void *)&c->k.i;
  if ((unsigned)c->type < JITC_NDTYPES) sem_cast(&s, c->type, k, node_wide(c->type), 1);
  return s;
}

static void store(Node *out, jitc_dtype t, const Scalar *s) {
  out->kind = N_CONST;
  out->type = t;
  out->nargs = 0;
  if ((unsigned)t >= JITC_NDTYPES) return;
  if (dtype_is_float(t))
    sem_cast(&out->k.f, JITC_FLOAT64, s, t, 1);
  else if (dtype_is_complex(t))
    sem_cast(out->k.z, JITC_COMPLEX128, s, t, 1);
  else
    sem_cast(&out->k.i, node_wide(t), s, t, 1);
}

void const_slot(const Node *c, ParamSlot *out) { *out = load(c); }

/* Where Python's unbounded integers (or its exceptions) would give another
** answer than the int64 / float64 semantics for op on weak a and b. */
static FoldStatus python_differs(OpId op, jitc_dtype t, const Scalar *a, const Scalar *b) {
  int64_t r;
  if (t == JITC_FLOAT64) {
    if ((op == OP_DIV || op == OP_FLOORDIV || op == OP_MOD) && b->f64 == 0)
      return FOLD_ZERODIV;
    /* 0.0 ** -1 raises; 0.0 ** -inf is inf in Python too */
    if (op == OP_POW && a->f64 == 0 && b->f64 < 0 && !isinf(b->f64))
      return FOLD_ZERODIV;
    return FOLD_OK;
  }
  if (t != JITC_INT64)
    return FOLD_OK;
  int64_t x = a->i64, y = b ? b->i64 : 0;
  switch (op) {
  case OP_ADD: return __builtin_add_overflow(x, y, &r) ? FOLD_OVERFLOW : FOLD_OK;
  case OP_SUB: return __builtin_sub_overflow(x, y, &r) ? FOLD_OVERFLOW : FOLD_OK;
  case OP_MUL: return __builtin_mul_overflow(x, y, &r) ? FOLD_OVERFLOW : FOLD_OK;
  case OP_NEG: return x == INT64_MIN ? FOLD_OVERFLOW : FOLD_OK;
  case OP_FLOORDIV:
  case OP_MOD:
    if (y == 0)
      return FOLD_ZERODIV;
    return op == OP_FLOORDIV && x == INT64_MIN && y == -1 ? FOLD_OVERFLOW : FOLD_OK;
  case OP_SHL:
    if (y < 0)
      return FOLD_NEGSHIFT;
    if (x == 0)
      return FOLD_OK;
    if (y >= 64)
      return FOLD_OVERFLOW;
    return (int64_t)((uint64_t)x << y) >> y != x ? FOLD_OVERFLOW : FOLD_OK;
  case OP_SHR: return y < 0 ? FOLD_NEGSHIFT : FOLD_OK;
  case OP_POW: {
    if (y < 0)
      return FOLD_NEGPOW;
    /* Overflow of repeated squaring, where the result is not 0, 1 or -1 */
    if (x == 0 || x == 1 || x == -1)
      return FOLD_OK;
    int64_t acc = 1;
    for (int64_t e = 0; e < y; e++) /* |x| >= 2: at most 63 steps before overflow */
      if (__builtin_mul_overflow(acc, x, &acc))
        return FOLD_OVERFLOW;
    return FOLD_OK;
  }
  default:
    return FOLD_OK;
  }
}

/* ---- Python's complex arithmetic (CPython 3.11's complex objects) ----
** Weak complex values are Python's: their products, quotients and powers
** are computed as Python computes them (no fma, a quotient divided by the
** denominator, powers by repeated products or through polar form), and
** refused where Python raises. */

static jitc_c128 py_prod(jitc_c128 a, jitc_c128 b) {
  return (jitc_c128){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

/* _Py_c_quot; *zero: the divisor is 0 (Python's ZeroDivisionError). */
static jitc_c128 py_quot(jitc_c128 a, jitc_c128 b, bool *zero) {
  double abr = fabs(b.re), abi = fabs(b.im);
  if (abr >= abi) {
    if (abr == 0) {
      *zero = true;
      return (jitc_c128){0, 0};
    }
    double ratio = b.im / b.re, denom = b.re + b.im * ratio;
    return (jitc_c128){(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
  }
  if (abi >= abr) {
    double ratio = b.re / b.im, denom = b.re * ratio + b.im;
    return (jitc_c128){(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
  }
  return (jitc_c128){NAN, NAN}; /* a NaN part in b */
}

/* complex_pow: small integer exponents by squaring (c_powi), others in
** polar form (_Py_c_pow).  Python raises where the C library sets errno:
** a zero base to a negative or complex power, cos and sin of an infinite
** phase (a domain error: 1j ** inf), and an infinite part (ERANGE). */
static FoldStatus py_pow(jitc_c128 a, jitc_c128 b, jitc_c128 *r) {
  bool zero = false;
  if (b.im == 0 && b.re == floor(b.re) && fabs(b.re) <= 100) {
    long n = (long)b.re, e = n < 0 ? -n : n;
    jitc_c128 acc = {1, 0}, p = a;
    for (long mask = 1; e >= mask; mask <<= 1) {
      if (e & mask) acc = py_prod(acc, p);
      p = py_prod(p, p);
    }
    *r = n > 0 ? acc : py_quot((jitc_c128){1, 0}, acc, &zero);
  } else if (b.re == 0 && b.im == 0) {
    *r = (jitc_c128){1, 0};
  } else if (a.re == 0 && a.im == 0) {
    zero = b.im != 0 || b.re < 0;
    *r = (jitc_c128){0, 0};
  } else {
    double vabs = hypot(a.re, a.im), len = pow(vabs, b.re), at = atan2(a.im, a.re);
    double phase = at * b.re;
    if (b.im != 0) {
      len /= exp(at * b.im);
      phase += b.im * log(vabs);
    }
    if (isinf(phase))
      return FOLD_CPOWDOM;
    *r = (jitc_c128){len * cos(phase), len * sin(phase)};
  }
  if (zero) return FOLD_ZERODIV;
  return isinf(r->re) || isinf(r->im) ? FOLD_CPOWOVER : FOLD_OK;
}

/* op of weak complex values a and b into *r: FOLD_UNKNOWN where Python's
** answer is NumPy's (sem_exec computes it). */
static FoldStatus python_complex(OpId op, const Scalar *a, const Scalar *b, Scalar *r) {
  bool zero = false;
  switch (op) {
  case OP_MUL: r->c128 = py_prod(a->c128, b->c128); return FOLD_OK;
  case OP_DIV:
    r->c128 = py_quot(a->c128, b->c128, &zero);
    return zero ? FOLD_ZERODIV : FOLD_OK;
  case OP_POW: return py_pow(a->c128, b->c128, &r->c128);
  case OP_LT: case OP_LE: case OP_GT: case OP_GE: return FOLD_NOORDER;
  default: return FOLD_UNKNOWN;
  }
}

FoldStatus fold_op(const Node *n, const Node *const *args, bool python, Node *out) {
  if (n->kind != N_OP || n->nargs < 1 || n->nargs > 3)
    return FOLD_UNKNOWN;
  Scalar v[3], r;
  memset(&r, 0, sizeof r);
  for (int k = 0; k < n->nargs; k++) {
    if (args[k]->kind != N_CONST)
      return FOLD_UNKNOWN;
    v[k] = load(args[k]);
  }
  jitc_dtype t = args[n->op == OP_WHERE ? 1 : 0]->type;
  if (python && t == JITC_COMPLEX128 && n->nargs == 2) {
    FoldStatus st = python_complex(n->op, &v[0], &v[1], &r);
    if (st != FOLD_UNKNOWN) {
      if (st == FOLD_OK) {
        store(out, n->type, &r);
        out->off = n->off;
      }
      return st;
    }
  }
  if (python && n->nargs <= 2) {
    FoldStatus st = python_differs(n->op, t, &v[0], n->nargs == 2 ? &v[1] : NULL);
    if (st != FOLD_OK)
      return st;
  }
  if (!sem_exec(n->op, n->type, t, &r, &v[0], &v[1], &v[2], 1))
    return FOLD_UNKNOWN;
  store(out, n->type, &r);
  out->off = n->off;
  return FOLD_OK;
}

/* The value of a let temporary: the value of its IR_LET. */
static const Node *let_value(const Program *p, int slot) {
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_LET && p->stmts[s].slot == slot)
      return p->stmts[s].value;
  return NULL;
}

static FoldStatus eval(const Program *p, const Node *n, const ParamSlot *params, Node *out,
                       int *where, int depth) {
  if (depth > 1000)
    return FOLD_UNKNOWN;
  switch (n->kind) {
  case N_CONST:
    *out = *n;
    return FOLD_OK;
  case N_PARAM: {
    Scalar v = params[n->slot];
    if (n->type == JITC_BOOL)
      v.b = v.b != 0;
    *out = (Node){.off = n->off};
    store(out, n->type, &v);
    return FOLD_OK;
  }
  case N_TEMP: {
    const Node *v = let_value(p, n->slot);
    return v ? eval(p, v, params, out, where, depth + 1) : FOLD_UNKNOWN;
  }
  case N_OP: {
    Node vals[3];
    const Node *args[3];
    for (int k = 0; k < n->nargs && k < 3; k++) {
      FoldStatus st = eval(p, n->args[k], params, &vals[k], where, depth + 1);
      if (st != FOLD_OK)
        return st;
      args[k] = &vals[k];
    }
    /* Every operator below a weak root is itself weak (Python's). */
    FoldStatus st = fold_op(n, args, op_info[n->op].kind == K_OPERATOR, out);
    if (st != FOLD_OK && st != FOLD_UNKNOWN)
      *where = n->off;
    return st;
  }
  default:
    return FOLD_UNKNOWN;
  }
}

FoldStatus fold_eval(const Program *p, const Node *n, const ParamSlot *params, Node *out,
                     int *where) {
  *where = n->off;
  return eval(p, n, params, out, where, 0);
}

const char *fold_message(FoldStatus st) {
  switch (st) {
  case FOLD_OVERFLOW:
    return "the integer result does not fit in int64 (Python's integers would not overflow)";
  case FOLD_ZERODIV:
    return "division by zero of weak values (Python raises ZeroDivisionError)";
  case FOLD_NEGSHIFT:
    return "negative shift count of weak values (Python raises ValueError)";
  case FOLD_NOORDER:
    return "Python's complex numbers have no order (Python raises TypeError); compare "
           "real(...) or abs(...)";
  case FOLD_CPOWOVER:
    return "complex exponentiation of weak values overflows (Python raises OverflowError)";
  case FOLD_CPOWDOM:
    return "complex exponentiation of weak values at an infinite angle (Python raises "
           "ZeroDivisionError: the C library's cos(inf) is a domain error)";
  case FOLD_NEGPOW:
    return "a weak integer raised to a negative weak integer at run time (Python's result "
           "would be a float); give the exponent as a float";
  default:
    return "the value cannot be computed";
  }
}
