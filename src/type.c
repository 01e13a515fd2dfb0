/*
** type.c -- NumPy 2's typing of each operation (NEP 50), for the checker.
**
** A weak value (a literal, a constant, a weak scalar: Python's scalars)
** takes the type of the strong operand it meets; strong operands promote
** by NumPy's lattice (promote(), below, from the UP rows of types.h); each
** op's typing rule is its RULE column in ops.h.  Every conversion becomes an explicit OP_CAST or a
** converted constant, so the back ends never promote anything, and an
** operator of weak constants only is folded here, as Python would compute
** it.  check.c walks the program and calls apply() for every operation.
*/
#include "check.h"

#include <math.h>
#include <string.h>

/* The types each type reaches in NumPy's promotion lattice (types.h, UP),
** itself included: bit u of reach[t] says t converts to u safely. */
static uint32_t reach_of(jitc_dtype t) {
  static const struct {
    jitc_dtype from, to;
  } up[] = {
#define UP(from, to) {JITC_##from, JITC_##to},
#include "types.h"
#undef UP
  };
  uint32_t r = 1u << t, last = 0;
  while (r != last) { /* the closure: few types, few edges */
    last = r;
    for (size_t k = 0; k < sizeof up / sizeof up[0]; k++)
      if (r & (1u << up[k].from))
        r |= 1u << up[k].to;
  }
  return r;
}

/* The order NumPy chooses among the types two types both reach: the lower
** kind first (integers before floats: int8 with uint8 is int16, not
** float16), then the smaller, then float16 before bfloat16 (the table's
** order). */
static int type_rank(jitc_dtype t) {
  static const int kind_rank[] = {[T_BOOL] = 0, [T_SINT] = 1, [T_UINT] = 1, [T_FLOAT] = 2,
                                  [T_COMPLEX] = 3};
  return (kind_rank[type_info[t].kind] * 16 + type_info[t].size) * 64 + (int)t;
}

/* NumPy's promotion: of the types both reach in the lattice, the first by
** type_rank().  JITC_NDTYPES where there is none, or NumPy refuses. */
jitc_dtype promote(jitc_dtype a, jitc_dtype b) {
  if (a == b)
    return a;
  static const struct {
    jitc_dtype a, b;
  } refused[] = {
#define NOUP(a, b) {JITC_##a, JITC_##b},
#include "types.h"
#undef NOUP
  };
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
    if ((a == refused[k].a && b == refused[k].b) || (a == refused[k].b && b == refused[k].a))
      return JITC_NDTYPES;
  uint32_t both = reach_of(a) & reach_of(b);
  int best = JITC_NDTYPES;
  for (int t = 0; t < JITC_NDTYPES; t++)
    if ((both >> t & 1) && (best == JITC_NDTYPES || type_rank((jitc_dtype)t) < type_rank((jitc_dtype)best)))
      best = t;
  return (jitc_dtype)best;
}

bool checker_grow(Checker *K, void **v, int *cap, int need, size_t elem) {
  if (need <= *cap)
    return true;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap < need)
    ncap *= 2;
  void *nv = arena_alloc(K->C->arena, (size_t)ncap * elem);
  if (!nv)
    return false;
  if (*cap)
    memcpy(nv, *v, (size_t)*cap * elem);
  *v = nv;
  *cap = ncap;
  return true;
}

/* ---- nodes and conversions ---- */

Node *new_node(Checker *K, NodeKind kind, jitc_dtype type, int off) {
  Node *n = arena_alloc(K->C->arena, sizeof *n);
  if (!n) {
    static Node dummy;
    dummy = (Node){.kind = N_CONST, .type = JITC_INT64};
    return &dummy;
  }
  n->kind = kind;
  n->type = type;
  n->off = off;
  K->dtypes |= 1u << type;
  return n;
}

static Node *new_op(Checker *K, OpId op, jitc_dtype type, int off, int nargs, Node **args) {
  Node *n = new_node(K, N_OP, type, off);
  n->op = op;
  n->nargs = nargs;
  for (int k = 0; k < nargs; k++)
    n->args[k] = args[k];
  return n;
}

Val bad_val(Checker *K, int off) {
  return (Val){new_node(K, N_CONST, JITC_INT64, off), true, true};
}

/* Converts a constant's value to type t by the cast rules, exactly as a
** cast at run time would (2.5 stored into an int array is 2). */
static Node *const_to(Checker *K, Node *c, jitc_dtype t) {
  Node *n = new_node(K, N_CONST, t, c->off);
  Node cast = {.kind = N_OP, .op = OP_CAST, .type = t, .nargs = 1, .args = {c}, .off = c->off};
  const Node *arg = c;
  if (fold_op(&cast, &arg, false, n) != FOLD_OK)
    unreachable();
  return n;
}

/* Converts v to type t: a cast node, or a converted constant. */
Node *convert(Checker *K, Val v, jitc_dtype t) {
  if (v.n->type == t)
    return v.n;
  if (v.n->kind == N_CONST && (v.weak || !dtype_is_float(v.n->type) || dtype_is_float(t)))
    return const_to(K, v.n, t);
  Node *arg = v.n;
  return new_op(K, OP_CAST, t, v.n->off, 1, &arg);
}

/* The type a weak value takes next to a strong type (NEP 50). */
static jitc_dtype weak_with(jitc_dtype weak, jitc_dtype strong) {
  if (weak == JITC_BOOL)
    return strong;
  if (weak == JITC_INT64)
    return strong == JITC_BOOL ? JITC_INT64 : strong;
  if (dtype_is_complex(strong))
    return strong;
  /* weak complex: complex128 with integers, else the complex type of the
  ** float's width (float16 and bfloat16 with 1j are complex64) */
  if (dtype_is_complex(weak))
    return dtype_is_float(strong) ? dtype_complex_of(strong) : JITC_COMPLEX128;
  /* weak float: float64 with integers; ml_dtypes' bfloat16 with a Python
  ** float gives float32 */
  if (strong == JITC_BFLOAT16)
    return JITC_FLOAT32;
  return dtype_is_float(strong) ? strong : JITC_FLOAT64;
}

/* The least float type NumPy computes a function of type t in (sqrt of
** int8 is float16, of int16 float32, of int32 float64): the first float
** type by promotion's order that t converts to safely. */
static jitc_dtype float_for(jitc_dtype t) {
  if (dtype_is_float(t) || dtype_is_complex(t))
    return t;
  jitc_dtype best = JITC_FLOAT64;
  for (int f = 0; f < JITC_NDTYPES; f++)
    if (dtype_is_float((jitc_dtype)f) && promote(t, (jitc_dtype)f) == (jitc_dtype)f &&
        type_info[f].size < type_info[best].size && f != JITC_BFLOAT16)
      best = (jitc_dtype)f;
  return best;
}

const char *fit_type_name(const IrParam *pa) {
  for (int t = 0; t < JITC_NDTYPES; t++) {
    const TypeInfo *ti = &type_info[t];
    if (dtype_is_int((jitc_dtype)t) && ti->lo == pa->fit_lo &&
        (ti->hi > INT64_MAX ? INT64_MAX : (int64_t)ti->hi) == pa->fit_hi)
      return ti->name;
  }
  return NULL;
}

/* Converts a weak value to the strong type t it meets, checking that an
** integer fits: a constant now, a scalar or an expression of scalars
** before each run.  `meets` says what has type t, for the message. */
Node *convert_weak_to(Checker *K, Val v, jitc_dtype t, const char *meets) {
  if (!v.weak) /* where() converts both of its values through here */
    return convert(K, v, t);
  const TypeInfo *ti = &type_info[t];
  bool narrower = dtype_is_int(t) && t != JITC_INT64; /* than a weak int, int64 */
  if (v.n->kind == N_CONST && v.n->type == JITC_INT64 && narrower && !v.bad &&
      (v.n->k.i < ti->lo || (v.n->k.i >= 0 && (uint64_t)v.n->k.i > ti->hi))) {
    error_at(K->C, v.n->off, "the integer %lld does not fit in %s, the type of %s",
             (long long)v.n->k.i, ti->name, meets);
  }
  if (v.n->kind == N_PARAM && v.n->type == JITC_INT64 && t == JITC_UINT64)
    K->params[v.n->slot].u64_uses++;
  if (v.n->kind == N_PARAM && v.n->type == JITC_INT64 && narrower) {
    IrParam *p = &K->params[v.n->slot];
    if (ti->lo > p->fit_lo)
      p->fit_lo = ti->lo;
    if (ti->hi < (uint64_t)p->fit_hi)
      p->fit_hi = (int64_t)ti->hi;
  }
  if ((v.n->kind == N_OP || v.n->kind == N_TEMP) &&
      checker_grow(K, (void **)&K->checks, &K->ccap, K->nchecks + 1, sizeof(IrCheck)))
    K->checks[K->nchecks++] = (IrCheck){v.n, t, v.n->off};
  return convert(K, v, t);
}

static Node *convert_weak(Checker *K, Val v, jitc_dtype t) {
  return convert_weak_to(K, v, t, "the other operand");
}

/* Promotes operands: returns the common type and whether the result is weak. */
static jitc_dtype common_type(Val *v, int n, bool *weak) {
  bool any_strong = false;
  jitc_dtype strong = JITC_BOOL, wk = JITC_BOOL;
  for (int k = 0; k < n; k++) {
    if (v[k].weak)
      wk = promote(wk, v[k].n->type);
    else if (!any_strong) {
      strong = v[k].n->type;
      any_strong = true;
    } else if (strong != JITC_NDTYPES) {
      strong = promote(strong, v[k].n->type);
    }
  }
  *weak = !any_strong;
  if (!any_strong)
    return wk;
  /* Weak operands join one at a time, as NumPy's result_type does. */
  jitc_dtype t = strong;
  for (int k = 0; k < n && t != JITC_NDTYPES; k++)
    if (v[k].weak)
      t = weak_with(v[k].n->type, t);
  return t;
}

/* Reports that v[0..n) have no common type (bfloat16 with int32: NumPy
** raises DTypePromotionError), naming the first pair that has none. */
static Val no_common_type(Checker *K, Val *v, int n, int off) {
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (!v[a].weak && !v[b].weak && promote(v[a].n->type, v[b].n->type) == JITC_NDTYPES) {
        error_at(K->C, off, "%s and %s have no common type (NumPy refuses to promote them); "
                 "convert one first, e.g. with f32(...)", tname(v[a].n->type),
                 tname(v[b].n->type));
        return bad_val(K, off);
      }
  error_at(K->C, off, "the operands have no common type (NumPy refuses to promote them)");
  return bad_val(K, off);
}

/* ---- operations ---- */

/* Whether a weak int meeting int32 in a comparison must widen it to int64:
** NumPy compares an out-of-range Python int with an int32 array and gives
** the true answer (a_int32 < 3000000000 is all true), where arithmetic
** refuses it.  A scalar's value is known only at run time: always widen. */
static bool compare_wide(Val *v, int n, jitc_dtype t) {
  const TypeInfo *ti = &type_info[t];
  if (!dtype_is_int(t) || t == JITC_INT64)
    return false;
  for (int k = 0; k < n; k++)
    if (v[k].weak && v[k].n->type == JITC_INT64 &&
        (v[k].n->kind != N_CONST || v[k].n->k.i < ti->lo ||
         (v[k].n->k.i >= 0 && (uint64_t)v[k].n->k.i > ti->hi)))
      return true;
  return false;
}

/* a OP b exactly, for a of a signed type and b of uint64, whose promotion
** (float64) would round: NumPy 2 compares them exactly.  With a in int64
** and u = uint64(a) (a wraps only when negative):
**   a < b  is  a < 0 | u < b        a > b  is  a >= 0 & u > b
**   a <= b is  a < 0 | u <= b       a >= b is  a >= 0 & u >= b
**   a == b is  a >= 0 & u == b      a != b is  a < 0 | u != b          */
static Node *compare_mixed(Checker *K, OpId op, int off, Node *a, Node *b) {
  if (a->type != JITC_INT64)
    a = new_op(K, OP_CAST, JITC_INT64, off, 1, &a);
  Node *zero = new_node(K, N_CONST, JITC_INT64, off);
  zero->k.i = 0;
  bool negative_true = op == OP_LT || op == OP_LE || op == OP_NE;
  Node *sign_args[2] = {a, zero};
  Node *sign = new_op(K, negative_true ? OP_LT : OP_GE, JITC_BOOL, off, 2, sign_args);
  Node *u = new_op(K, OP_CAST, JITC_UINT64, off, 1, &a);
  Node *cmp_args[2] = {u, b};
  Node *cmp = new_op(K, op, JITC_BOOL, off, 2, cmp_args);
  Node *both[2] = {sign, cmp};
  return new_op(K, negative_true ? OP_OR : OP_AND, JITC_BOOL, off, 2, both);
}

/* The comparison with its sides swapped: a < b is b > a. */
static OpId mirrored(OpId op) {
  switch (op) {
  case OP_LT: return OP_GT;
  case OP_LE: return OP_GE;
  case OP_GT: return OP_LT;
  case OP_GE: return OP_LE;
  default: return op;
  }
}

/* An operator of weak operands only is Python's: folded when its operands
** are constants (refused where Python's answer would differ), so that range
** checks and the sign of an exponent see the value. */
static Val fold_weak(Checker *K, Node *n) {
  for (int k = 0; k < n->nargs; k++)
    if (n->args[k]->kind != N_CONST)
      return (Val){n, true, false};
  Node *c = new_node(K, N_CONST, n->type, n->off);
  FoldStatus st = fold_op(n, (const Node *const *)n->args, true, c);
  if (st == FOLD_UNKNOWN)
    return (Val){n, true, false};
  if (st != FOLD_OK) {
    error_at(K->C, n->off, "%s", fold_message(st));
    return bad_val(K, n->off);
  }
  return (Val){c, true, false};
}

/* ---- complex operands ---- */

Val complex_refused(Checker *K, OpId op, int off, jitc_dtype t, bool call) {
  const OpInfo *info = &op_info[op];
  const char *hint = op == OP_ATAN2   ? "; angle(z) is the argument of a complex number"
                     : op == OP_HYPOT ? "; abs(z) is the magnitude of a complex number"
                     : op == OP_FLOOR || op == OP_CEIL || op == OP_TRUNC
                         ? "; apply it to real(z) and imag(z)"
                         : "";
  if (info->kind == K_OPERATOR && !call)
    error_at(K->C, off, "'%s' is not defined for %s operands (NumPy has no loop for complex "
             "numbers)", info->spell, tname(t));
  else
    error_at(K->C, off, "%s() is not defined for %s (NumPy has no loop for complex numbers)%s",
             info->name, tname(t), hint);
  return bad_val(K, off);
}

bool complex_converts(Checker *K, jitc_dtype from, jitc_dtype to, int off, const char *into) {
  if (!dtype_is_complex(from) || dtype_is_complex(to) || to == JITC_BOOL)
    return true;
  error_at(K->C, off, "cannot convert %s to %s%s%s: that discards the imaginary part (NumPy "
           "warns, ComplexWarning); take real(z) or abs(z) first, e.g. %s(real(z))",
           tname(from), tname(to), into ? " " : "", into ? into : "", type_info[to].shortname);
  return false;
}

/* real(x), imag(x) (R_PART).  Of a weak value the result is weak: Python's
** x.real and x.imag are Python scalars (True.real is the int 1). */
static Val check_part(Checker *K, OpId op, int off, Val x) {
  jitc_dtype t = x.n->type;
  if (x.weak && t == JITC_BOOL) {
    x.n = convert(K, x, JITC_INT64);
    t = JITC_INT64;
  }
  if (dtype_is_complex(t)) {
    Node *n = new_op(K, op, dtype_part(t), off, 1, &x.n);
    return x.weak ? fold_weak(K, n) : (Val){n, false, false};
  }
  if (op == OP_REAL)
    return x;
  Node *zero = new_node(K, N_CONST, t, off); /* k all zero: 0, 0.0 */
  return (Val){zero, x.weak, false};
}

/* conjugate(x) (R_CONJ): the op on complex values; a real value is its own
** conjugate, bool's computed in int8 (NumPy's loop). */
static Val check_conj(Checker *K, int off, Val x) {
  jitc_dtype t = x.n->type;
  if (dtype_is_complex(t))
    return (Val){new_op(K, OP_CONJ, t, off, 1, &x.n), false, false};
  return (Val){convert(K, x, t == JITC_BOOL ? JITC_INT8 : t), false, false};
}

/* copy(x), ones_like(x) (R_LIKE), as np.copy and np.ones_like: of x's type,
** strong (a weak x is already of its default type: np.copy(2) is an int64
** array).  No op of the IR: copy(x) is x, and ones_like(x) the constant 1
** of that type (True, 1+0j), x giving only its shape, as every array the
** program reads does. */
static Val check_like(Checker *K, OpId op, int off, Val x) {
  if (op == OP_COPY)
    return (Val){x.n, false, false};
  jitc_dtype t = x.n->type;
  Node *one = new_node(K, N_CONST, t, off);
  if (dtype_is_complex(t))
    one->k.z[0] = 1.0;
  else if (dtype_is_float(t))
    one->k.f = 1.0;
  else
    one->k.i = 1;
  return (Val){one, false, false};
}

/* angle(x) (R_ANGLE): of a complex value its argument, in the part's type;
** of a real x, arctan2(0, x) as np.angle computes it (x as an array, 0 a
** Python int: angle of int8 is float16, of bool float64). */
static Val check_angle(Checker *K, int off, Val x) {
  jitc_dtype t = x.n->type;
  if (dtype_is_complex(t))
    return (Val){new_op(K, OP_ANGLE, dtype_part(t), off, 1, &x.n), false, false};
  Val args[2] = {{new_node(K, N_CONST, JITC_INT64, off), true, false}, {x.n, false, false}};
  return apply(K, OP_ATAN2, off, args, 2, JITC_BOOL, true);
}

/* complex(re, im) (R_COMPLEX): both parts in the float type R_FLOAT gives
** their common type t (a 16-bit float widened to float32), the result the
** complex type of that width; of weak values a weak complex128, as
** Python's complex(re, im). */
static Val check_complex(Checker *K, int off, Val *v, jitc_dtype t, bool weak) {
  if (dtype_is_complex(t)) {
    error_at(K->C, off, "complex(re, im) takes real parts, not %s; z + w * 1j combines "
             "complex values", tname(t));
    return bad_val(K, off);
  }
  jitc_dtype f = weak ? JITC_FLOAT64 : float_for(t);
  jitc_dtype part = type_info[f].size < 4 ? JITC_FLOAT32 : f;
  Node *args[2];
  for (int k = 0; k < 2; k++) {
    Val x = {convert_weak(K, v[k], f), false, false};
    args[k] = convert(K, x, part);
  }
  Node *n = new_op(K, OP_COMPLEX, dtype_complex_of(part), off, 2, args);
  return weak ? fold_weak(K, n) : (Val){n, false, false};
}

/* np.clip of an integer array drops a Python int bound at or beyond the
** end of the array's type (NumPy 2's _clip: min <= iinfo.min, max >=
** iinfo.max), where the bound would not fit that type: here the bound
** becomes the type's end, which clips nothing either.  A bound of scalars
** is clamped so in the kernel, and checked to fit before each run as any
** weak expression is (a min above the type's end still does not fit). */
static void clip_bounds(Checker *K, int off, Val *v) {
  jitc_dtype a = v[0].n->type;
  if (v[0].weak || v[0].bad || !dtype_is_int(a))
    return;
  const TypeInfo *ti = &type_info[a];
  for (int k = 1; k <= 2; k++) {
    bool lo = k == 1;
    Val *b = &v[k];
    if (!b->weak || b->bad || b->n->type != JITC_INT64 || (lo ? ti->lo == INT64_MIN : ti->hi >= INT64_MAX))
      continue; /* not a Python int, or no int64 goes past the end */
    int64_t end = lo ? ti->lo : (int64_t)ti->hi;
    bool konst = b->n->kind == N_CONST;
    if (konst && (lo ? b->n->k.i > end : b->n->k.i < end))
      continue; /* a literal inside the type: as it is */
    Node *e = new_node(K, N_CONST, JITC_INT64, b->n->off);
    e->k.i = end;
    Node *args[2] = {b->n, e};
    b->n = konst ? e : new_op(K, lo ? OP_MAXIMUM : OP_MINIMUM, JITC_INT64, off, 2, args);
  }
}

/* Types op applied to already-checked operands; `off` is the operator.
** `call`: written as a function call (power(x, y) rather than x ** y). */
Val apply(Checker *K, OpId op, int off, Val *v, int n, jitc_dtype cast_to, bool call) {
  for (int k = 0; k < n; k++)
    if (v[k].bad)
      return bad_val(K, off);
  const OpInfo *info = &op_info[op];
  /* Python scalars passed to a function are weak for promotion, but the
  ** result is a NumPy scalar: strong (sqrt(2) and power(2, 40) are int64
  ** and float64 NumPy scalars). */
  bool is_fn = call || op_info[op].kind != K_OPERATOR;
  Node *args[3];
  if (op == OP_CAST) {
    if (!complex_converts(K, v[0].n->type, cast_to, off, NULL))
      return bad_val(K, off);
    /* A Python scalar converted by a NumPy type must fit it: np.int32(2**31)
    ** raises. */
    if (v[0].weak)
      return (Val){convert_weak_to(K, v[0], cast_to, "the cast"), false, false};
    Node *arg = v[0].n;
    if (arg->type == cast_to)
      return (Val){arg, false, false};
    return (Val){new_op(K, OP_CAST, cast_to, off, 1, &arg), false, false};
  }
  if (op == OP_WHERE) {
    Val c = v[0];
    args[0] = c.weak ? convert_weak(K, c, JITC_BOOL)
              : c.n->type == JITC_BOOL ? c.n : convert(K, c, JITC_BOOL);
    bool weak;
    jitc_dtype t = common_type(v + 1, 2, &weak);
    if (t == JITC_NDTYPES)
      return no_common_type(K, v + 1, 2, off);
    args[1] = convert_weak(K, v[1], t);
    args[2] = convert_weak(K, v[2], t);
    return (Val){new_op(K, OP_WHERE, t, off, 3, args), false, false};
  }
  if (op == OP_CLIP)
    clip_bounds(K, off, v);
  bool weak;
  jitc_dtype t = common_type(v, n, &weak);
  if (t == JITC_NDTYPES)
    return no_common_type(K, v, n, off);
  const char *sym = info->name;
  if (dtype_is_complex(t) && (info->flags & F_REAL))
    return complex_refused(K, op, off, t, call);
  switch (info->rule) { /* the rules of their own, before promotion's */
  case R_PART: return check_part(K, op, off, v[0]);
  case R_CONJ: return check_conj(K, off, v[0]);
  case R_ANGLE: return check_angle(K, off, v[0]);
  case R_COMPLEX: return check_complex(K, off, v, t, weak);
  case R_LIKE: return check_like(K, op, off, v[0]);
  default: break;
  }
  /* Python's bools are ints: True + True is 2, ~True is -2 (NumPy's
  ** np.True_ + np.True_ would be True; a program's weak values are Python's). */
  if (weak && !is_fn && t == JITC_BOOL &&
      (info->rule == R_ARITH || info->rule == R_ARITH_NB || info->rule == R_SAME_NB ||
       info->rule == R_SHIFT || op == OP_INVERT))
    t = JITC_INT64;
  jitc_dtype result;
  switch (info->rule) {
  case R_ARITH:
  case R_ARITH_NB:
  case R_PROMOTE:
  case R_SAME:
    if (t == JITC_BOOL && info->rule == R_ARITH_NB) {
      if (op == OP_SUB)
        error_at(K->C, off, "'-' is not supported for bool operands; use '^' (exclusive or)");
      else if (op == OP_NEG)
        error_at(K->C, off, "unary '-' is not supported for bool; use '~' (not)");
      else /* // % ** fmod: NumPy computes bool in int8 */
        goto as_int8;
      return bad_val(K, off);
    }
    /* np.round keeps integers (the identity) but rounds bool as rint
    ** does, in float16 */
    if (op == OP_ROUND && t == JITC_BOOL)
      t = JITC_FLOAT16;
    result = op == OP_ABS ? dtype_part(t) : t; /* abs of complex: its magnitude */
    break;
  case R_SAME_NB:
    if (t == JITC_BOOL) {
      if (op == OP_NEG)
        error_at(K->C, off, "unary '-' is not supported for bool; use '~' (not)");
      else if (op == OP_SIGN)
        error_at(K->C, off, "sign() is not supported for bool, as in NumPy; convert first, "
                 "e.g. with i8(...)");
      else /* square, reciprocal: int8 */
        goto as_int8;
      return bad_val(K, off);
    }
    result = t;
    break;
  case R_TRUEDIV:
    result = t = dtype_is_float(t) || dtype_is_complex(t) ? t : JITC_FLOAT64;
    break;
  case R_FLOAT:
    /* NumPy's loop: the least float type each operand converts to safely,
    ** which may be narrower than that of their promotion (copysign of int8
    ** and uint8 is float16, not float32 as of int16); a Python scalar is of
    ** the common type (copysign(-1, bool) is int64's: float64) */
    if (!dtype_is_float(t)) {
      jitc_dtype f = JITC_FLOAT16;
      for (int k = 0; k < n; k++)
        f = promote(f, float_for(v[k].weak ? t : v[k].n->type));
      t = f;
    }
    result = t;
    break;
  case R_BITWISE:
    if (dtype_is_float(t) || dtype_is_complex(t)) {
      error_at(K->C, off, "'%s' needs integer or bool operands, not %s",
               info->spell ? info->spell : sym, tname(t));
      return bad_val(K, off);
    }
    result = t;
    break;
  case R_SHIFT:
    if (t == JITC_BOOL)
      goto as_int8;
    if (!dtype_is_int(t)) {
      error_at(K->C, off, "'%s' needs integer operands, not %s", sym, tname(t));
      return bad_val(K, off);
    }
    result = t;
    break;
  as_int8: /* bool operands of an integer operation: NumPy's int8 */
    result = t = JITC_INT8;
    break;
  case R_COMPARE:
    if (!weak && compare_wide(v, n, t)) {
      /* uint64 with a weak int out of its range: the exact comparison of
      ** int64 with uint64 below; any narrower type: in int64 */
      if (t == JITC_UINT64) {
        int w = v[0].weak ? 0 : 1;
        Node *x = convert(K, v[w], JITC_INT64), *u = v[1 - w].n;
        return (Val){compare_mixed(K, w == 0 ? op : mirrored(op), off, x, u), false, false};
      }
      t = JITC_INT64;
    }
    if (!weak && t == JITC_FLOAT64 && n == 2) {
      for (int k = 0; k < 2; k++) /* signed with uint64: exact, not in float64 */
        if (!v[k].weak && type_info[v[k].n->type].kind == T_SINT && !v[1 - k].weak &&
            v[1 - k].n->type == JITC_UINT64)
          return (Val){compare_mixed(K, k == 0 ? op : mirrored(op), off, v[k].n, v[1 - k].n),
                       false, false};
    }
    result = JITC_BOOL;
    break;
  case R_PRED:
    result = JITC_BOOL;
    break;
  default:
    unreachable();
  }
  if (op == OP_POW && dtype_is_int(t)) {
    Node *e = v[1].n;
    if (e->kind == N_CONST && type_info[e->type].kind == T_SINT && e->k.i < 0) {
      if (weak && !is_fn) {
        /* Python: 2 ** -1 is 0.5 */
        result = t = JITC_FLOAT64;
      } else {
        error_at(K->C, e->off, "integers to negative integer powers are not allowed; use a "
                 "float exponent (** -%lld.0)", (long long)-e->k.i);
        return bad_val(K, off);
      }
    }
  }
  for (int k = 0; k < n; k++)
    args[k] = v[k].weak && (!weak || is_fn) ? convert_weak(K, v[k], t) : convert(K, v[k], t);
  Node *node = new_op(K, op, result, off, n, args);
  if (weak && !is_fn)
    return fold_weak(K, node);
  return (Val){node, false, false};
}

/* Whether n has one value for all elements: scalars and constants only.
** (Recursion is bounded by the parser's nesting limit.) */
static bool is_uniform(const Node *n) {
  if (n->kind == N_CONST || n->kind == N_PARAM)
    return true;
  if (n->kind != N_OP)
    return false;
  for (int k = 0; k < n->nargs; k++)
    if (!is_uniform(n->args[k]))
      return false;
  return true;
}

/* fabs(x): abs over np.fabs's loops, which are float alone, so an integer
** or bool is computed in the least float type that holds it (int8:
** float16, int32: float64; a Python int: float64), as sqrt's is, and a
** complex number is refused. */
Val check_fabs(Checker *K, int off, Val *v) {
  if (v[0].bad)
    return v[0];
  jitc_dtype t = v[0].n->type;
  if (dtype_is_complex(t)) {
    error_at(K->C, off, "fabs() is not defined for %s (NumPy has no loop for complex "
             "numbers); abs(z) is the magnitude of a complex number", tname(t));
    return bad_val(K, off);
  }
  if (!dtype_is_float(t)) {
    jitc_dtype f = v[0].weak ? JITC_FLOAT64 : float_for(t);
    v[0].n = v[0].weak ? convert_weak(K, v[0], f) : convert(K, v[0], f);
  }
  return apply(K, OP_ABS, off, v, 1, JITC_FLOAT64, true);
}

/* x ** y and power(x, y).  NumPy 2 (its ** and np.power alike) evaluates an
** array raised to a scalar 2 as square(x), to 0.5 as sqrt(x) and to -1 as
** reciprocal(x); jitc does the same for an exponent that is a constant
** (after folding: a ** (0.25 + 0.25) and a ** f64(0.5) are sqrt), so that results
** match NumPy's (pow and sqrt differ at -inf and -0.0) and x ** 2 costs
** one multiplication on every target.  Squaring is exact, so integers and
** 2.0 take the same path. */
Val check_power(Checker *K, int off, Val *v, bool call) {
  /* np.power takes the fast paths for any scalar exponent, whatever the
  ** base; Python's `**` of two weak values is C's pow. */
  if (!v[0].bad && !v[1].bad && (!v[0].weak || call) && v[1].n->kind == N_CONST &&
      v[1].n->type != JITC_BOOL && !dtype_is_complex(v[1].n->type)) {
    bool weak;
    jitc_dtype t = common_type(v, 2, &weak);
    if (t == JITC_NDTYPES)
      return no_common_type(K, v, 2, off);
    double e = dtype_is_float(v[1].n->type) ? v[1].n->k.f : (double)v[1].n->k.i;
    /* A complex base: only `**` of a Python int 2 or -1, or a Python float
    ** 0.5, is NumPy's fast path (np.power and 2.0 compute the power, whose
    ** products round differently from square's). */
    bool cfast = dtype_is_complex(t) && !call && v[1].weak;
    bool pyint = v[1].n->type == JITC_INT64, pyfloat = v[1].n->type == JITC_FLOAT64;
    int fast = -1;
    if (dtype_is_complex(t) && !(cfast && (pyint ? e == 2 || e == -1 : pyfloat && e == 0.5)))
      fast = -1;
    else if (e == 2 && t != JITC_BOOL) {
      fast = OP_SQUARE;
      /* NumPy's `bool_array ** 2` squares the array as it is (int8), where
      ** np.power(b, 2) computes in int64 */
      if (!call && v[0].n->type == JITC_BOOL && v[1].weak && !dtype_is_float(v[1].n->type))
        t = JITC_BOOL;
    }
    else if (e == 0.5 && (dtype_is_float(t) || dtype_is_complex(t)))
      fast = OP_SQRT;
    else if (e == -1 && (dtype_is_float(t) || dtype_is_complex(t)))
      fast = OP_RECIPROCAL;
    if (fast >= 0) {
      Val base = {convert(K, v[0], t), false, false};
      return apply(K, (OpId)fast, off, &base, 1, JITC_BOOL, call);
    }
  }
  Val r = apply(K, OP_POW, off, v, 2, JITC_BOOL, call);
  /* A float array raised to a scalar known only at run time: NumPy's fast
  ** path decides by the value, so the kernel does too for 0.5, where pow
  ** and sqrt differ at -inf and -0.0.  (A scalar base with `**` is NumPy's
  ** scalar power, C's pow; np.power takes the fast path for scalars too.)  (For 2 and -1, pow has the special
  ** values of square and reciprocal, and differs at most in rounding.) */
  if (!r.bad && !r.weak && r.n->kind == N_OP && r.n->op == OP_POW &&
      dtype_is_float(v[0].n->type) && v[1].n->type != JITC_BOOL &&
      !dtype_is_complex(v[1].n->type) &&
      r.n->args[1]->kind != N_CONST && is_uniform(r.n->args[1]) &&
      (call || !is_uniform(r.n->args[0]))) {
    Node *x = r.n->args[0], *half = new_node(K, N_CONST, r.n->type, off);
    half->k.f = 0.5;
    Node *eq[2] = {r.n->args[1], half};
    Node *w[3] = {new_op(K, OP_EQ, JITC_BOOL, off, 2, eq),
                  new_op(K, OP_SQRT, r.n->type, off, 1, &x), r.n};
    r.n = new_op(K, OP_WHERE, r.n->type, off, 3, w);
  }
  /* A complex array to a Python scalar known only at run time: `**` takes
  ** NumPy's fast paths by the value, an int 2 or -1, a float 0.5 (whose
  ** results differ from the power's in rounding and at the specials). */
  Node *e = v[1].n;
  if (!call && !r.bad && !r.weak && r.n->kind == N_OP && r.n->op == OP_POW &&
      dtype_is_complex(r.n->type) && v[1].weak && e->kind != N_CONST &&
      (e->type == JITC_INT64 || e->type == JITC_FLOAT64) && is_uniform(e) &&
      !is_uniform(r.n->args[0])) {
    Node *x = r.n->args[0];
    bool pyint = e->type == JITC_INT64;
    for (int k = pyint ? 1 : 0; k >= 0; k--) { /* -1 inside, then 2 (or 0.5) */
      Node *c = new_node(K, N_CONST, e->type, off);
      if (pyint)
        c->k.i = k ? -1 : 2;
      else
        c->k.f = 0.5;
      OpId fast = pyint ? (k ? OP_RECIPROCAL : OP_SQUARE) : OP_SQRT;
      Node *eq[2] = {e, c};
      Node *w[3] = {new_op(K, OP_EQ, JITC_BOOL, off, 2, eq), new_op(K, fast, r.n->type, off, 1, &x),
                    r.n};
      r.n = new_op(K, OP_WHERE, r.n->type, off, 3, w);
    }
  }
  return r;
}

/* NumPy's same-kind casting, for in-place operators. */
bool same_kind(jitc_dtype from, jitc_dtype to) {
  if (from == to || from == JITC_BOOL)
    return true;
  if (type_info[from].kind == T_SINT) /* signed to unsigned is not the same kind */
    return to != JITC_BOOL && type_info[to].kind != T_UINT;
  if (type_info[from].kind == T_UINT)
    return to != JITC_BOOL;
  if (dtype_is_complex(from)) /* complex to complex only */
    return dtype_is_complex(to);
  return dtype_is_float(to) || dtype_is_complex(to); /* float to float or complex */
}


/* ---- the functions of mixed types: ldexp, frexp, modf ---- */

/* The type a row of mixed types computes in: t itself, float32 for the
** 16-bit floats (exact; the results are rounded back to t, as NumPy's
** loops for float16 and ml_dtypes' for bfloat16 do). */
static jitc_dtype wide_float(jitc_dtype t) { return type_info[t].size < 4 ? JITC_FLOAT32 : t; }

/* ldexp(x, n) as NumPy resolves it.  Its loops are x float16, float32 or
** float64 (ml_dtypes adds bfloat16 with int32) with n int32 or int64, and
** the first that both operands reach safely is taken: x's type is the
** least float holding it, and an int64 or uint32 n takes the int64 loop
** (bfloat16 then computes in float32: NumPy's answer is float32).  A
** Python scalar fits any loop where an array of the other operand has a
** kind (bool < integer < float) at least its own, and is an array of its
** default type (int64, float64) where not: so a Python int x is float16
** next to an integer array n but float64 next to a bool n or a Python n; a
** Python bool x is float16, a Python float float64; a Python int n must
** fit int32 next to an integer or float x, and takes the int64 loop next to
** a bool or Python x.  n in the IR is int32: the int64 loop clamps it to
** int32's range. */
Val check_ldexp(Checker *K, int off, Val *v) {
  if (v[0].bad || v[1].bad)
    return bad_val(K, off);
  jitc_dtype xt = v[0].n->type, nt = v[1].n->type;
  if (dtype_is_complex(xt))
    return complex_refused(K, OP_LDEXP, off, xt, true);
  if (!dtype_is_int(nt) && nt != JITC_BOOL) {
    error_at(K->C, v[1].n->off, "ldexp(x, n) needs an integer exponent n, not %s (NumPy has "
             "no loop for it)", tname(nt));
    return bad_val(K, off);
  }
  if (nt == JITC_UINT64) {
    error_at(K->C, v[1].n->off, "ldexp(x, n) takes no uint64 exponent (NumPy has no loop for "
             "it: uint64 does not convert safely to int64); convert it, e.g. i64(n)");
    return bad_val(K, off);
  }
  jitc_dtype t;
  if (!v[0].weak)
    t = float_for(xt);
  else if (xt == JITC_INT64)
    t = !v[1].weak && nt != JITC_BOOL ? JITC_FLOAT16 : JITC_FLOAT64;
  else
    t = xt == JITC_BOOL ? JITC_FLOAT16 : JITC_FLOAT64;
  bool wide = v[1].weak ? nt == JITC_INT64 && (v[0].weak || xt == JITC_BOOL)
                        : nt == JITC_INT64 || nt == JITC_UINT32;
  if (t == JITC_BFLOAT16 && wide)
    t = JITC_FLOAT32;
  Val x = {convert_weak_to(K, v[0], t, "ldexp's x"), false, false};
  Node *args[2] = {convert(K, x, wide_float(t)), NULL};
  if (wide) {
    Node *clip[3] = {convert(K, v[1], JITC_INT64), new_node(K, N_CONST, JITC_INT64, off),
                     new_node(K, N_CONST, JITC_INT64, off)};
    clip[1]->k.i = INT32_MIN;
    clip[2]->k.i = INT32_MAX;
    Node *c = new_op(K, OP_CLIP, JITC_INT64, off, 3, clip);
    args[1] = new_op(K, OP_CAST, JITC_INT32, off, 1, &c);
  } else {
    args[1] = convert_weak_to(K, v[1], JITC_INT32, "ldexp's exponent n");
  }
  Node *r = new_op(K, OP_LDEXP, args[0]->type, off, 2, args);
  return (Val){convert(K, (Val){r, false, false}, t), false, false};
}

/* x of a two-result function (frexp, modf) in the type the row computes
** in; *t gets the type of its float results, NumPy's (R_FLOAT: the least
** float holding x, a Python scalar by its Python type). */
Node *two_operand(Checker *K, Val x, jitc_dtype *t) {
  *t = float_for(x.n->type);
  Val v = {convert_weak_to(K, x, *t, "the function's argument"), false, false};
  return convert(K, v, wide_float(*t));
}

/* Result `op` (a row of a two-result function) of x, the operand
** two_operand() gave, as the value of type t's results or int32. */
Node *two_result(Checker *K, OpId op, int off, Node *x, jitc_dtype t) {
  bool exponent = op_info[op].rule == R_EXPONENT;
  Node *r = new_op(K, op, exponent ? JITC_INT32 : x->type, off, 1, &x);
  return exponent ? r : convert(K, (Val){r, false, false}, t);
}
