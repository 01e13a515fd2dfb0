/*
** check.c -- names, roles and types: the AST becomes the typed IR.
**
** Typing follows NumPy 2 (NEP 50).  Arrays, `i`, function results and typed
** scalars are strong; literals, the constants and weak scalars are weak, like
** Python scalars: a weak value is computed in its Python type (bool, int64 or
** float64) and converted to the type of the strong operand it meets, by the
** NEP 50 rule (int32 array + 1 is int32; float32 array * 2.5 is float32; int
** array + 2.5 is float64).  Every conversion becomes an explicit OP_CAST (or
** a converted constant), so the back ends never promote anything.
**
** Roles: an array read before it is assigned is an input (or, if assigned
** later, updated in place); an array assigned first is a new output.  Within
** one element statements run in order, and a read after an assignment reads
** the assigned value, kept in a temporary.
**
** Errors are reported with their position and checking goes on; a node that
** failed to type gets the poison flag so that no error cascades from it.
*/
#include "jitc_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A typed value during checking: a node, and whether it is weak. */
typedef struct Val {
  Node *n;
  bool weak;
  bool bad; /* an error was reported below: report nothing more about it */
} Val;

/* A name the program uses. */
typedef enum SymKind { SYM_ARRAY, SYM_PARAM, SYM_TEMP } SymKind;

typedef struct Sym {
  const char *name;
  SymKind kind;
  int slot;       /* array, param or temp index */
  bool weak;      /* temps: holds a weak value */
  Node *konst;    /* temps: the weak constant it holds, or NULL */
  int current;    /* arrays: temp holding the value assigned so far, or -1 */
  bool read, assigned, read_first;
  jitc_dtype dtype;
  bool has_dtype; /* arrays: dtype known (declared, or from the first assignment) */
  bool provided;
  bool poisoned;  /* defined by a statement with a syntax error: uses stay quiet */
  int first_off;
  struct Sym *next;  /* program order */
  struct Sym *hnext; /* hash chain */
} Sym;

#define SYM_BUCKETS 4096 /* a power of two */

typedef struct Checker {
  Compiler *C;
  const jitc_options *opt;
  Sym *syms, *last;   /* in program order */
  Sym **buckets;      /* SYM_BUCKETS chains: lookups stay O(1) in long programs */
  int narrays, nparams, ntemps;
  /* growable IR statement list and temp types, rebuilt in the arena */
  IrStmt *stmts;
  int nstmts, cap;
  jitc_dtype *temps;
  int tcap;
  IrParam *params; /* indexed by param slot */
  int pcap;
  IrCheck *checks; /* weak expressions of scalars, checked before each run */
  int nchecks, ccap;
  AstProgram *ast; /* for "read before it is assigned" */
  int stmt;        /* index of the statement after the one being checked */
} Checker;

bool dtype_is_int(jitc_dtype t) { return t == JITC_INT32 || t == JITC_INT64; }
bool dtype_is_float(jitc_dtype t) { return t == JITC_FLOAT32 || t == JITC_FLOAT64; }

/* NumPy's promotion table for the five types. */
jitc_dtype promote(jitc_dtype a, jitc_dtype b) {
  if (a == b)
    return a;
  if (a == JITC_BOOL)
    return b;
  if (b == JITC_BOOL)
    return a;
  if (dtype_is_int(a) && dtype_is_int(b))
    return JITC_INT64;
  if (dtype_is_float(a) && dtype_is_float(b))
    return JITC_FLOAT64;
  /* int with float: int32 + float32 is float64 too (float32 cannot hold every int32) */
  return JITC_FLOAT64;
}

static const char *tname(jitc_dtype t) { return jitc_dtype_name(t); }

static bool grow(Checker *K, void **v, int *cap, int need, size_t elem);

/* ---- nodes ---- */

static Node *new_node(Checker *K, NodeKind kind, jitc_dtype type, int off) {
  Node *n = arena_alloc(K->C->arena, sizeof *n);
  if (!n) {
    static Node dummy;
    dummy = (Node){.kind = N_CONST, .type = JITC_INT64};
    return &dummy;
  }
  n->kind = kind;
  n->type = type;
  n->off = off;
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

static Val bad_val(Checker *K, int off) {
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
static Node *convert(Checker *K, Val v, jitc_dtype t) {
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
  /* weak float */
  return dtype_is_float(strong) ? strong : JITC_FLOAT64;
}

/* Converts a weak value to the strong type t it meets, checking that an
** integer fits: a constant now, a scalar or an expression of scalars
** before each run.  `meets` says what has type t, for the message. */
static Node *convert_weak_to(Checker *K, Val v, jitc_dtype t, const char *meets) {
  if (!v.weak) /* where() converts both of its values through here */
    return convert(K, v, t);
  if (v.n->kind == N_CONST && v.n->type == JITC_INT64 && t == JITC_INT32 &&
      (v.n->k.i < INT32_MIN || v.n->k.i > INT32_MAX) && !v.bad) {
    error_at(K->C, v.n->off, "the integer %lld does not fit in int32, the type of %s",
             (long long)v.n->k.i, meets);
  }
  if (v.n->kind == N_PARAM && v.n->type == JITC_INT64 && t == JITC_INT32)
    K->params[v.n->slot].fit_int32 = true;
  if ((v.n->kind == N_OP || v.n->kind == N_TEMP) &&
      grow(K, (void **)&K->checks, &K->ccap, K->nchecks + 1, sizeof(IrCheck)))
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
    } else {
      strong = promote(strong, v[k].n->type);
    }
  }
  *weak = !any_strong;
  if (!any_strong)
    return wk;
  /* Weak operands join one at a time, as NumPy's result_type does. */
  jitc_dtype t = strong;
  for (int k = 0; k < n; k++)
    if (v[k].weak)
      t = weak_with(v[k].n->type, t);
  return t;
}

/* ---- symbols ---- */

static unsigned sym_hash(const char *name) {
  return (unsigned)hash64(name, strlen(name), 0) & (SYM_BUCKETS - 1);
}

static Sym *lookup(Checker *K, const char *name) {
  if (!K->buckets)
    return NULL;
  for (Sym *s = K->buckets[sym_hash(name)]; s; s = s->hnext)
    if (strcmp(s->name, name) == 0)
      return s;
  return NULL;
}

static Sym *add_sym(Checker *K, const char *name, SymKind kind, int off) {
  if (!K->buckets)
    K->buckets = arena_alloc(K->C->arena, SYM_BUCKETS * sizeof(Sym *));
  Sym *s = arena_alloc(K->C->arena, sizeof *s);
  if (!s || !K->buckets)
    return NULL;
  s->name = name;
  s->kind = kind;
  s->current = -1;
  s->first_off = off;
  if (K->last)
    K->last->next = s;
  else
    K->syms = s;
  K->last = s;
  unsigned h = sym_hash(name);
  s->hnext = K->buckets[h];
  K->buckets[h] = s;
  return s;
}

static bool grow(Checker *K, void **v, int *cap, int need, size_t elem) {
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

static int new_temp(Checker *K, jitc_dtype t) {
  if (!grow(K, (void **)&K->temps, &K->tcap, K->ntemps + 1, sizeof(jitc_dtype)))
    return 0;
  K->temps[K->ntemps] = t;
  return K->ntemps++;
}

static void emit(Checker *K, IrStmtKind kind, int slot, Node *value, int off) {
  if (!grow(K, (void **)&K->stmts, &K->cap, K->nstmts + 1, sizeof(IrStmt)))
    return;
  K->stmts[K->nstmts++] = (IrStmt){kind, slot, value, off};
}

static bool is_constant_name(const char *s) {
  static const char *const names[] = {"pi", "inf", "nan", "True", "False", "true", "false"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (strcmp(s, names[k]) == 0)
      return true;
  return false;
}

static bool is_reduction(const char *s) {
  return !strcmp(s, "sum") || !strcmp(s, "prod") || !strcmp(s, "min") || !strcmp(s, "max");
}

/* Names for "did you mean": functions, constants and the program's symbols. */
static const char *suggest(Checker *K, const char *name, bool want_function) {
  const char *names[256];
  int n = 0;
#define FN(s, id) if (n < 256) names[n++] = s;
#define CAST(s, t) if (n < 256) names[n++] = s;
#include "ops.h"
#undef FN
#undef CAST
  if (!want_function) {
    static const char *const consts[] = {"pi", "inf", "nan", "True", "False", "i"};
    for (size_t k = 0; k < sizeof consts / sizeof consts[0]; k++)
      names[n++] = consts[k];
    for (Sym *s = K->syms; s && n < 256; s = s->next)
      names[n++] = s->name;
    for (int k = 0; k < K->C->narrays && n < 256; k++)
      names[n++] = K->C->arrays[k].name;
    for (int k = 0; k < K->C->nscalars && n < 256; k++)
      names[n++] = K->C->scalars[k].name;
  }
  return nearest_name(name, names, n);
}

/* ---- expressions ---- */

static Val check_expr(Checker *K, Ast *a);

static const jitc_array_decl *declared_array(Checker *K, const char *name) {
  for (int k = 0; k < K->C->narrays; k++)
    if (K->C->arrays[k].name && strcmp(K->C->arrays[k].name, name) == 0)
      return &K->C->arrays[k];
  return NULL;
}

static const jitc_scalar_decl *declared_scalar(Checker *K, const char *name) {
  for (int k = 0; k < K->C->nscalars; k++)
    if (K->C->scalars[k].name && strcmp(K->C->scalars[k].name, name) == 0)
      return &K->C->scalars[k];
  return NULL;
}

/* Whether a later statement assigns `name` (for a clearer message). */
static bool assigned_later(AstProgram *P, int from, const char *name) {
  for (int k = from; k < P->nstmts; k++) {
    AstStmt *s = &P->stmts[k];
    if ((s->kind == S_ASSIGN || s->kind == S_AUG) && s->name && !strcmp(s->name, name))
      return true;
    if (s->kind == S_EXPR && !strcmp(name, "out"))
      return true;
  }
  return false;
}

static Val check_name(Checker *K, Ast *a) {
  const char *name = a->name;
  int off = a->off;
  if (!strcmp(name, "i")) {
    if (a->kind == A_INDEX) {
      error_at(K->C, off, "'i' is the element index, not an array");
      return bad_val(K, off);
    }
    return (Val){new_node(K, N_INDEX, JITC_INT64, off), false, false};
  }
  if (is_constant_name(name)) {
    if (a->kind == A_INDEX) {
      error_at(K->C, off, "'%s' is a constant, not an array", name);
      return bad_val(K, off);
    }
    Node *n;
    if (!strcmp(name, "pi") || !strcmp(name, "inf") || !strcmp(name, "nan")) {
      n = new_node(K, N_CONST, JITC_FLOAT64, off);
      n->k.f = !strcmp(name, "pi") ? 3.141592653589793 : !strcmp(name, "inf") ? INFINITY : NAN;
    } else {
      n = new_node(K, N_CONST, JITC_BOOL, off);
      n->k.i = name[0] == 'T' || name[0] == 't';
    }
    return (Val){n, true, false};
  }
  if (is_reduction(name)) {
    error_at(K->C, off, "'%s' is reserved for reductions, which this version does not have%s",
             name, !strcmp(name, "min") ? "; for the element-wise minimum use minimum(a, b)"
                   : !strcmp(name, "max") ? "; for the element-wise maximum use maximum(a, b)"
                                          : "");
    return bad_val(K, off);
  }
  if (op_lookup_function(name, strlen(name), NULL) >= 0) {
    error_at(K->C, off, "'%s' is a function; call it as %s(...)", name, name);
    return bad_val(K, off);
  }
  Sym *s = lookup(K, name);
  if (s && s->poisoned)
    return bad_val(K, off);
  if (!s) {
    const jitc_scalar_decl *sd = declared_scalar(K, name);
    if (sd) {
      s = add_sym(K, name, SYM_PARAM, off);
      if (!s || !grow(K, (void **)&K->params, &K->pcap, K->nparams + 1, sizeof(IrParam)))
        return bad_val(K, off);
      s->slot = K->nparams++;
      s->weak = sd->weak;
      jitc_dtype t = sd->dtype;
      if (sd->weak)
        t = t == JITC_BOOL ? JITC_BOOL : dtype_is_float(t) ? JITC_FLOAT64 : JITC_INT64;
      s->dtype = t;
      K->params[s->slot] = (IrParam){s->name, t, sd->weak, false};
    }
  }
  if (s && s->kind == SYM_PARAM) {
    if (a->kind == A_INDEX) {
      error_at(K->C, off, "'%s' is a scalar, not an array; write %s", name, name);
      return bad_val(K, off);
    }
    Node *n = new_node(K, N_PARAM, s->dtype, off);
    n->slot = s->slot;
    return (Val){n, s->weak, false};
  }
  if (s && s->kind == SYM_TEMP) {
    if (a->kind == A_INDEX) {
      error_at(K->C, off, "'%s' is a let temporary, not an array; write %s", name, name);
      return bad_val(K, off);
    }
    if (s->konst) { /* a weak constant: folds on, as Python's value would */
      Node *n = new_node(K, N_CONST, s->konst->type, off);
      n->k = s->konst->k;
      return (Val){n, true, false};
    }
    Node *n = new_node(K, N_TEMP, K->temps[s->slot], off);
    n->slot = s->slot;
    return (Val){n, s->weak, false};
  }
  if (s && s->kind == SYM_ARRAY) {
    s->read = true;
    if (s->current >= 0) {
      Node *n = new_node(K, N_TEMP, K->temps[s->current], off);
      n->slot = s->current;
      return (Val){n, false, false};
    }
    Node *n = new_node(K, N_LOAD, s->dtype, off);
    n->slot = s->slot;
    return (Val){n, false, false};
  }
  /* A new array, read before any assignment: an input. */
  const jitc_array_decl *ad = declared_array(K, name);
  if (!ad && !K->opt->implicit_inputs) {
    if (assigned_later(K->ast, K->stmt, name)) {
      error_at(K->C, off, "'%s' is read before it is assigned", name);
    } else {
      const char *near = suggest(K, name, false);
      if (near)
        error_at(K->C, off, "unknown name '%s'; did you mean '%s'?", name, near);
      else
        error_at(K->C, off, "unknown name '%s'", name);
    }
    return bad_val(K, off);
  }
  s = add_sym(K, name, SYM_ARRAY, off);
  if (!s)
    return bad_val(K, off);
  s->slot = K->narrays++;
  s->read = s->read_first = true;
  s->provided = ad != NULL;
  s->dtype = ad ? ad->dtype : K->opt->implicit_dtype;
  s->has_dtype = true;
  Node *n = new_node(K, N_LOAD, s->dtype, off);
  n->slot = s->slot;
  return (Val){n, false, false};
}

/* Whether a weak int meeting int32 in a comparison must widen it to int64:
** NumPy compares an out-of-range Python int with an int32 array and gives
** the true answer (a_int32 < 3000000000 is all true), where arithmetic
** refuses it.  A scalar's value is known only at run time: always widen. */
static bool compare_wide(Val *v, int n, jitc_dtype t) {
  if (t != JITC_INT32)
    return false;
  for (int k = 0; k < n; k++)
    if (v[k].weak && v[k].n->type == JITC_INT64 &&
        (v[k].n->kind != N_CONST || v[k].n->k.i < INT32_MIN || v[k].n->k.i > INT32_MAX))
      return true;
  return false;
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

/* Types op applied to already-checked operands; `off` is the operator.
** `call`: written as a function call (power(x, y) rather than x ** y). */
static Val apply(Checker *K, OpId op, int off, Val *v, int n, jitc_dtype cast_to, bool call) {
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
    args[1] = convert_weak(K, v[1], t);
    args[2] = convert_weak(K, v[2], t);
    return (Val){new_op(K, OP_WHERE, t, off, 3, args), false, false};
  }
  bool weak;
  jitc_dtype t = common_type(v, n, &weak);
  const char *sym = info->name;
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
      else
        error_at(K->C, off, "'%s' is not supported for bool operands (NumPy would give int8, "
                 "which jitc lacks); convert first, e.g. with i32(...)", sym);
      return bad_val(K, off);
    }
    result = t;
    break;
  case R_SAME_NB:
    if (t == JITC_BOOL) {
      if (op == OP_NEG)
        error_at(K->C, off, "unary '-' is not supported for bool; use '~' (not)");
      else
        error_at(K->C, off, "%s() is not supported for bool (NumPy would give %s); convert "
                 "first, e.g. with i32(...)", sym, op == OP_SIGN ? "an error" : "int8");
      return bad_val(K, off);
    }
    result = t;
    break;
  case R_TRUEDIV:
    result = t = dtype_is_float(t) ? t : JITC_FLOAT64;
    break;
  case R_FLOAT:
    if (t == JITC_BOOL) {
      error_at(K->C, off, "%s() of bool is not supported (NumPy would give float16, which jitc "
               "lacks); convert first, e.g. with f32(...)", sym);
      return bad_val(K, off);
    }
    result = t = dtype_is_float(t) ? t : JITC_FLOAT64;
    break;
  case R_BITWISE:
    if (dtype_is_float(t)) {
      error_at(K->C, off, "'%s' needs integer or bool operands, not %s",
               info->spell ? info->spell : sym, tname(t));
      return bad_val(K, off);
    }
    result = t;
    break;
  case R_SHIFT:
    if (!dtype_is_int(t)) {
      error_at(K->C, off, "'%s' needs integer operands, not %s", sym, tname(t));
      return bad_val(K, off);
    }
    result = t;
    break;
  case R_COMPARE:
    if (!weak && compare_wide(v, n, t))
      t = JITC_INT64;
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
    if (e->kind == N_CONST && !dtype_is_float(e->type) && e->k.i < 0) {
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

static Val check_power(Checker *K, int off, Val *v, bool call);

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

static Val check_call(Checker *K, Ast *a) {
  const char *name = a->name;
  jitc_dtype cast_to = JITC_FLOAT64;
  int op = op_lookup_function(name, strlen(name), &cast_to);
  if (op < 0) {
    Sym *s = lookup(K, name);
    if (is_reduction(name))
      error_at(K->C, a->off, "'%s' is reserved for reductions, which this version does not "
               "have%s", name,
               !strcmp(name, "min") ? "; for the element-wise minimum use minimum(a, b)"
               : !strcmp(name, "max") ? "; for the element-wise maximum use maximum(a, b)" : "");
    else if (s || declared_array(K, name) || declared_scalar(K, name))
      error_at(K->C, a->off, "'%s' is not a function", name);
    else {
      const char *near = suggest(K, name, true);
      if (near)
        error_at(K->C, a->off, "unknown function '%s'; did you mean '%s'?", name, near);
      else
        error_at(K->C, a->off, "unknown function '%s'", name);
    }
    for (int k = 0; k < a->nargs; k++)
      check_expr(K, a->args[k]); /* report errors inside the arguments too */
    return bad_val(K, a->off);
  }
  int arity = op_info[op].arity;
  if (a->nargs != arity) {
    error_at(K->C, a->off, "%s() takes %d argument%s but %d %s given", name, arity,
             arity == 1 ? "" : "s", a->nargs, a->nargs == 1 ? "was" : "were");
    return bad_val(K, a->off);
  }
  Val v[3];
  for (int k = 0; k < arity; k++)
    v[k] = check_expr(K, a->args[k]);
  if (op == OP_POW)
    return check_power(K, a->off, v, true);
  return apply(K, (OpId)op, a->off, v, arity, cast_to, true);
}

/* x ** y and power(x, y).  NumPy 2 (its ** and np.power alike) evaluates an
** array raised to a scalar 2 as square(x), to 0.5 as sqrt(x) and to -1 as
** reciprocal(x); jitc does the same for an exponent that is a constant
** (after folding: a ** (0.25 + 0.25) and a ** f64(0.5) are sqrt), so that results
** match NumPy's (pow and sqrt differ at -inf and -0.0) and x ** 2 costs
** one multiplication on every target.  Squaring is exact, so integers and
** 2.0 take the same path. */
static Val check_power(Checker *K, int off, Val *v, bool call) {
  /* np.power takes the fast paths for any scalar exponent, whatever the
  ** base; Python's `**` of two weak values is C's pow. */
  if (!v[0].bad && !v[1].bad && (!v[0].weak || call) && v[1].n->kind == N_CONST &&
      v[1].n->type != JITC_BOOL) {
    bool weak;
    jitc_dtype t = common_type(v, 2, &weak);
    double e = dtype_is_float(v[1].n->type) ? v[1].n->k.f : (double)v[1].n->k.i;
    int fast = -1;
    if (e == 2 && t != JITC_BOOL)
      fast = OP_SQUARE;
    else if (e == 0.5 && dtype_is_float(t))
      fast = OP_SQRT;
    else if (e == -1 && dtype_is_float(t))
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
      r.n->args[1]->kind != N_CONST && is_uniform(r.n->args[1]) &&
      (call || !is_uniform(r.n->args[0]))) {
    Node *x = r.n->args[0], *half = new_node(K, N_CONST, r.n->type, off);
    half->k.f = 0.5;
    Node *eq[2] = {r.n->args[1], half};
    Node *w[3] = {new_op(K, OP_EQ, JITC_BOOL, off, 2, eq),
                  new_op(K, OP_SQRT, r.n->type, off, 1, &x), r.n};
    r.n = new_op(K, OP_WHERE, r.n->type, off, 3, w);
  }
  return r;
}

static Val check_expr(Checker *K, Ast *a) {
  switch (a->kind) {
  case A_INT: {
    Node *n = new_node(K, N_CONST, JITC_INT64, a->off);
    n->k.i = a->ival;
    return (Val){n, true, false};
  }
  case A_FLOAT: {
    Node *n = new_node(K, N_CONST, JITC_FLOAT64, a->off);
    n->k.f = a->fval;
    return (Val){n, true, false};
  }
  case A_NAME:
  case A_INDEX:
    return check_name(K, a);
  case A_CALL:
    return check_call(K, a);
  case A_UNARY: {
    if (a->nargs < 1)
      return bad_val(K, a->off);
    Val v = check_expr(K, a->args[0]);
    if (v.bad)
      return v;
    if (a->op < 0) { /* unary plus: NumPy's positive, an error on bool */
      if (v.n->type == JITC_BOOL && v.weak) /* Python's: +True is 1 */
        return (Val){convert(K, v, JITC_INT64), true, false};
      if (v.n->type == JITC_BOOL) {
        error_at(K->C, a->off, "unary '+' is not supported for bool");
        return bad_val(K, a->off);
      }
      return v;
    }
    /* The minus of a literal folds, so -2147483648 is one int32 literal. */
    return apply(K, (OpId)a->op, a->off, &v, 1, JITC_BOOL, false);
  }
  case A_BINARY: {
    if (a->nargs < 2)
      return bad_val(K, a->off);
    Val v[2] = {check_expr(K, a->args[0]), check_expr(K, a->args[1])};
    if (a->op == OP_POW)
      return check_power(K, a->off, v, false);
    return apply(K, (OpId)a->op, a->off, v, 2, JITC_BOOL, false);
  }
  }
  unreachable();
}

/* ---- statements ---- */

/* NumPy's same-kind casting, for in-place operators. */
static bool same_kind(jitc_dtype from, jitc_dtype to) {
  if (from == to || from == JITC_BOOL)
    return true;
  if (dtype_is_int(from))
    return to != JITC_BOOL;
  return dtype_is_float(to); /* float to float only */
}

static void assign(Checker *K, AstStmt *s, const char *name, Val v, bool in_place) {
  if (v.bad)
    return;
  int off = s->name_off;
  if (!strcmp(name, "i") || is_constant_name(name)) {
    error_at(K->C, off, "cannot assign to '%s': it is %s", name,
             !strcmp(name, "i") ? "the element index" : "a constant");
    return;
  }
  if (op_lookup_function(name, strlen(name), NULL) >= 0 || is_reduction(name)) {
    error_at(K->C, off, "cannot assign to '%s': it is the name of a function", name);
    return;
  }
  Sym *sym = lookup(K, name);
  if (!sym && declared_scalar(K, name)) {
    error_at(K->C, off, "cannot assign to '%s': it is a scalar parameter", name);
    return;
  }
  if (sym && sym->kind == SYM_PARAM) {
    error_at(K->C, off, "cannot assign to '%s': it is a scalar parameter", name);
    return;
  }
  if (sym && sym->kind == SYM_TEMP) {
    error_at(K->C, off, "cannot assign to '%s': it is a let temporary (use another let)", name);
    return;
  }
  if (!sym) {
    const jitc_array_decl *ad = declared_array(K, name);
    sym = add_sym(K, name, SYM_ARRAY, off);
    if (!sym)
      return;
    sym->slot = K->narrays++;
    sym->provided = ad != NULL;
    if (ad) {
      sym->dtype = ad->dtype;
      sym->has_dtype = true;
    }
  }
  if (!sym->has_dtype) {
    /* A new output takes the value's type; a weak value takes its Python type. */
    sym->dtype = v.n->type;
    sym->has_dtype = true;
  }
  jitc_dtype t = sym->dtype;
  if (in_place && !same_kind(v.n->type, t)) {
    error_at(K->C, s->off, "cannot store the %s result of '%s %s= ...' in %s array '%s' "
             "(in-place operators keep the array's type and NumPy's same-kind rule refuses "
             "this); write %s = %s(...) to convert explicitly",
             tname(v.n->type), name, op_info[s->op].name, tname(t), name, name, tname(t));
    return;
  }
  char meets[160];
  snprintf(meets, sizeof meets, "array '%s' it is stored in", name);
  Node *value = v.weak ? convert_weak_to(K, v, t, meets) : convert(K, v, t);
  int tmp = new_temp(K, t);
  emit(K, IR_LET, tmp, value, s->off);
  Node *ref = new_node(K, N_TEMP, t, s->off);
  ref->slot = tmp;
  emit(K, IR_STORE, sym->slot, ref, s->off);
  sym->assigned = true;
  sym->current = tmp;
}

static void check_stmt(Checker *K, AstStmt *s) {
  switch (s->kind) {
  case S_LET: {
    const char *name = s->name;
    if (!strcmp(name, "i") || is_constant_name(name) || is_reduction(name) ||
        op_lookup_function(name, strlen(name), NULL) >= 0 || !strcmp(name, "let")) {
      error_at(K->C, s->name_off, "'%s' is reserved and cannot be a let name", name);
      check_expr(K, s->value);
      return;
    }
    Sym *old = lookup(K, name);
    if (old || declared_array(K, name) || declared_scalar(K, name)) {
      error_at(K->C, s->name_off, "'%s' is already defined%s", name,
               old && old->kind == SYM_TEMP ? " by an earlier let" : "");
      check_expr(K, s->value);
      return;
    }
    Val v = check_expr(K, s->value);
    if (v.bad)
      return;
    int tmp = new_temp(K, v.n->type);
    emit(K, IR_LET, tmp, v.n, s->off);
    Sym *sym = add_sym(K, name, SYM_TEMP, s->name_off);
    if (!sym)
      return;
    sym->slot = tmp;
    sym->weak = v.weak;
    if (v.weak && v.n->kind == N_CONST)
      sym->konst = v.n;
    return;
  }
  case S_EXPR:
    assign(K, s, "out", check_expr(K, s->value), false);
    return;
  case S_ASSIGN:
    assign(K, s, s->name, check_expr(K, s->value), false);
    return;
  case S_AUG: {
    /* a op= b is a = a op b, with the in-place casting rule. */
    Ast target = {.kind = A_NAME, .off = s->name_off, .name = s->name};
    Sym *sym = lookup(K, s->name);
    if (sym && sym->kind != SYM_ARRAY) {
      assign(K, s, s->name, (Val){NULL, false, false}, true); /* reports why */
      return;
    }
    Val lhs = check_expr(K, &target);
    Val rhs = check_expr(K, s->value);
    Val v[2] = {lhs, rhs};
    Val r = s->op == OP_POW ? check_power(K, s->off, v, false)
                            : apply(K, (OpId)s->op, s->off, v, 2, JITC_BOOL, false);
    assign(K, s, s->name, r, true);
    return;
  }
  }
}

Program *check(Compiler *C, AstProgram *ast) {
  Checker K = {.C = C, .opt = C->opt, .ast = ast};
  for (int k = 0; k < ast->nstmts; k++) {
    AstStmt *s = &ast->stmts[k];
    K.stmt = k + 1;
    if (!s->bad) {
      check_stmt(&K, s);
    } else if (s->name && !lookup(&K, s->name)) {
      /* Its target exists but has no known value: later uses stay quiet. */
      Sym *sym = add_sym(&K, s->name, s->kind == S_LET ? SYM_TEMP : SYM_ARRAY, s->name_off);
      if (sym)
        sym->poisoned = true;
    }
  }
  Program *p = arena_alloc(C->arena, sizeof *p);
  if (!p)
    return NULL;
  if (ast->nstmts == 0)
    error_at(C, 0, "the program is empty: write an assignment like 'a[i] += 1' or an "
             "expression like 'exp(a)'");
  p->narrays = K.narrays;
  p->arrays = arena_alloc(C->arena, (size_t)(K.narrays + 1) * sizeof(IrArray));
  if (!p->arrays)
    return NULL;
  for (Sym *s = K.syms; s; s = s->next) {
    if (s->kind != SYM_ARRAY || s->poisoned)
      continue;
    jitc_role role = s->read_first ? (s->assigned ? JITC_INOUT : JITC_INPUT) : JITC_OUTPUT;
    p->arrays[s->slot] = (IrArray){s->name, role, s->dtype, s->provided};
  }
  p->nparams = K.nparams;
  p->params = K.params;
  p->ntemps = K.ntemps;
  p->temps = K.temps;
  p->nstmts = K.nstmts;
  p->stmts = K.stmts;
  p->nchecks = K.nchecks;
  p->checks = K.checks;
  return p;
}
