/*
** check.c -- names, roles and types: the AST becomes the typed IR.
**
** Typing follows NumPy 2 (NEP 50).  Arrays, `i`, function results and typed
** scalars are strong; literals, the constants and weak scalars are weak, like
** Python scalars: a weak value is computed in its Python type (bool, int64 or
** float64) and converted to the type of the strong operand it meets, by the
** NEP 50 rule (int32 array + 1 is int32; float32 array * 2.5 is float32; int
** array + 2.5 is float64).  Every conversion becomes an explicit OP_CAST (or
** a converted constant), so the back ends never promote anything.  Those
** rules are type.c; this file resolves names and walks the program.
**
** Roles: an array read before it is assigned is an input (or, if assigned
** later, updated in place); an array assigned first is a new output.  Within
** one element statements run in order, and a read after an assignment reads
** the assigned value, kept in a temporary.
**
** Errors are reported with their position and checking goes on; a node that
** failed to type gets the poison flag so that no error cascades from it, and
** so does a name that a failed statement defines and whose type it would set.
*/
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


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

static int new_temp(Checker *K, jitc_dtype t) {
  if (!checker_grow(K, (void **)&K->temps, &K->tcap, K->ntemps + 1, sizeof(jitc_dtype)))
    return 0;
  K->temps[K->ntemps] = t;
  return K->ntemps++;
}

static IrStmt *emit(Checker *K, IrStmtKind kind, int slot, Node *value, int off) {
  if (!checker_grow(K, (void **)&K->stmts, &K->cap, K->nstmts + 1, sizeof(IrStmt)))
    return NULL;
  K->stmts[K->nstmts] = (IrStmt){kind, slot, value, off, OP_COUNT};
  return &K->stmts[K->nstmts++];
}

static bool is_constant_name(const char *s) {
  static const char *const names[] = {"pi", "inf", "nan", "True", "False", "true", "false"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (strcmp(s, names[k]) == 0)
      return true;
  return false;
}

/* Whether `name` is one the language gives a value, that a bare use reads:
** the index `i` or a constant other than the literals True and False.  A
** caller who declares such a name takes it over (check_name). */
static bool is_language_value(const char *s) {
  return !strcmp(s, "i") || (is_constant_name(s) && strcmp(s, "True") && strcmp(s, "False"));
}

/* The reduction called `name` (sum, amin, ...), or -1. */
static int reduction_op(const char *name) {
  int op = op_lookup_function(name, strlen(name), NULL);
  return op >= 0 && op_info[op].kind == K_REDUCE ? op : -1;
}

/* Names for "did you mean": functions, constants and the program's symbols. */
static const char *suggest(Checker *K, const char *name, bool want_function) {
  const char *names[256];
  int n = 0;
  if (want_function) {
    for (int op = 0; op < OP_COUNT && n < 256; op++)
      if ((op_info[op].kind == K_FUNCTION || op_info[op].kind == K_REDUCE) &&
          !(op_info[op].flags & F_SECOND))
        names[n++] = op_info[op].name;
#define FN(s, id) if (n < 256) names[n++] = s;
#include "ops.h"
#undef FN
    for (int t = 0; t < JITC_NDTYPES && n < 255; t++) { /* the casts */
      names[n++] = type_info[t].name;
      names[n++] = type_info[t].shortname;
    }
  } else { /* a bare name: a function there is an error, never the fix */
    static const char *const consts[] = {"pi", "inf", "nan", "True", "False", "i"};
    for (size_t k = 0; k < sizeof consts / sizeof consts[0] && n < 256; k++)
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
static void poison(Checker *K, const char *name, SymKind kind, int off);
static Val check_symbol(Checker *K, Ast *a);

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

/* With implicit inputs, a read of an undefined name makes an input the
** caller never gave: a typo of a name defined before it (`tmp = a * 2;
** c = tpm + 1`) would run on data nobody chose.  Such a name is refused when
** it is one slip (typo_of) from a name the program has met with a meaning
** before this read: an array it assigned, a declared array or scalar it
** used, a let, a constant.  Names first read here, like the `x2` of
** `y = x1 + x2`, are not compared with each other, nor with what comes
** later: `ypos = xpos + 1` reads an input xpos.  A declared name the
** program never uses is no candidate either: with `alpah` declared and
** `alpha` read, the declaration is the likelier slip, which the caller
** sees as a name the kernel does not use. */
static const char *implicit_typo(Checker *K, const char *name) {
  const char *names[256];
  int n = 0;
  static const char *const consts[] = {"pi", "inf", "nan", "True", "False", "true", "false"};
  for (size_t k = 0; k < sizeof consts / sizeof consts[0]; k++)
    names[n++] = consts[k];
  for (Sym *s = K->syms; s && n < 256; s = s->next)
    if (s->kind != SYM_ARRAY || s->assigned || s->provided || s->poisoned)
      names[n++] = s->name;
  return typo_of(name, names, n);
}

/* Whether the caller declared `name`.  A declared name is the caller's
** array or scalar wherever it is not called, also when the language gives
** it a meaning (`i`, `pi`, a function's name): the caller's variable wins,
** as numexpr's caller's variables do; `sum(x)` stays the function. */
static bool declared(Checker *K, const char *name) {
  return declared_array(K, name) || declared_scalar(K, name);
}

/* Notes that the program read `name` (i or a constant) with the language's
** meaning: jitc_kernel_language_name() tells a binding that looks names up
** in its caller's variables which ones it must look for. */
static void note_language_name(Checker *K, const char *name) {
  for (int k = 0; k < K->nlang; k++)
    if (!strcmp(K->lang[k], name))
      return;
  if (checker_grow(K, (void **)&K->lang, &K->lcap, K->nlang + 1, sizeof(const char *)))
    K->lang[K->nlang++] = name;
}

/* Whether a later statement assigns `name` (for a clearer message). */
static bool assigned_later(AstProgram *P, int from, const char *name) {
  for (int k = from; k < P->nstmts; k++) {
    AstStmt *s = &P->stmts[k];
    if ((s->kind == S_ASSIGN || s->kind == S_AUG || s->kind == S_TWO) && s->name &&
        !strcmp(s->name, name))
      return true;
    if (s->kind == S_TWO && s->name2 && !strcmp(s->name2, name))
      return true;
    if (s->kind == S_EXPR && !strcmp(name, "out"))
      return true;
  }
  return false;
}

static Val check_name(Checker *K, Ast *a) {
  const char *name = a->name;
  int off = a->off;
  if (declared(K, name))
    return check_symbol(K, a);
  if (is_language_value(name) && a->kind == A_NAME)
    note_language_name(K, name);
  if (!strcmp(name, "i")) {
    if (a->kind == A_INDEX) {
      error_at(K->C, off, "'i' is the element index, not an array");
      return bad_val(K, off);
    }
    if (!K->index_used)
      K->index_used = true, K->index_off = off;
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
  if (op_lookup_function(name, strlen(name), NULL) >= 0) {
    error_at(K->C, off, "'%s' is a function; call it as %s(...)", name, name);
    return bad_val(K, off);
  }
  return check_symbol(K, a);
}

/* A name that is the program's or the caller's: an array, a scalar or a let. */
static Val check_symbol(Checker *K, Ast *a) {
  const char *name = a->name;
  int off = a->off;
  Sym *s = lookup(K, name);
  if (s && s->poisoned)
    return bad_val(K, off);
  if (!s) {
    const jitc_scalar_decl *sd = declared_scalar(K, name);
    if (sd) {
      s = add_sym(K, name, SYM_PARAM, off);
      if (!s || !checker_grow(K, (void **)&K->params, &K->pcap, K->nparams + 1, sizeof(IrParam)))
        return bad_val(K, off);
      s->slot = K->nparams++;
      s->weak = sd->weak;
      jitc_dtype t = sd->dtype;
      if (sd->weak)
        t = t == JITC_BOOL         ? JITC_BOOL
            : dtype_is_float(t)    ? JITC_FLOAT64
            : dtype_is_complex(t)  ? JITC_COMPLEX128
                                   : JITC_INT64;
      s->dtype = t;
      K->params[s->slot] = (IrParam){s->name, t, sd->weak, INT64_MIN, INT64_MAX};
    }
  }
  if (s && s->kind == SYM_PARAM) {
    if (a->kind == A_INDEX) {
      error_at(K->C, off, "'%s' is a scalar, not an array; write %s", name, name);
      return bad_val(K, off);
    }
    Node *n = new_node(K, N_PARAM, s->dtype, off);
    n->slot = s->slot;
    K->params[s->slot].uses++;
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
  if (s && s->kind == SYM_ARRAY && s->reduced) {
    error_at(K->C, off, "'%s' is the result of %s(), known only after every element has been "
             "read: it cannot be used in the program that computes it (use it in a second "
             "program)", name, op_info[s->red_op].name);
    return bad_val(K, off);
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
  const char *near = ad ? NULL : implicit_typo(K, name);
  if (near) {
    error_at(K->C, off, "unknown name '%s'; did you mean '%s'? (an input this close to a "
             "defined name must be declared)", name, near);
    poison(K, name, SYM_ARRAY, off);
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

static Val check_call(Checker *K, Ast *a) {
  const char *name = a->name;
  jitc_dtype cast_to = JITC_FLOAT64;
  int op = op_lookup_function(name, strlen(name), &cast_to);
  if (op >= 0 && op_info[op].kind == K_REDUCE) {
    misplaced_reduction(K, a, (OpId)op);
    for (int k = 0; k < a->nargs; k++) /* its axes are not the error */
      if (a->args[k]->kind != A_KEYWORD && (k == 0 || a->args[k]->kind != A_TUPLE))
        check_expr(K, a->args[k]);
    return bad_val(K, a->off);
  }
  if (op < 0) {
    Sym *s = lookup(K, name);
    if (s || declared_array(K, name) || declared_scalar(K, name))
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
  if (op_info[op].flags & F_TWO) {
    error_at(K->C, a->off, "%s() has two results; assign them to two names, as in "
             "'a, b = %s(...)'", name, name);
    for (int k = 0; k < a->nargs; k++)
      check_expr(K, a->args[k]);
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
  if (op == OP_ABS && !strcmp(name, "fabs"))
    return check_fabs(K, a->off, v);
  if (op == OP_LDEXP)
    return check_ldexp(K, a->off, v);
  return apply(K, (OpId)op, a->off, v, arity, cast_to, true);
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
  case A_IMAG: { /* a Python complex: weak complex128 */
    Node *n = new_node(K, N_CONST, JITC_COMPLEX128, a->off);
    n->k.z[0] = 0;
    n->k.z[1] = a->fval;
    return (Val){n, true, false};
  }
  case A_NAME:
  case A_INDEX:
    return check_name(K, a);
  case A_CALL:
    return check_call(K, a);
  case A_KEYWORD:
  case A_TUPLE:
    return misplaced_arg(K, a);
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

/* `name` is defined by a statement that failed (its error is reported):
** it exists but has no known value or type, so later uses stay quiet. */
static void poison(Checker *K, const char *name, SymKind kind, int off) {
  Sym *sym = add_sym(K, name, kind, off);
  if (sym)
    sym->poisoned = true;
}

/* Reports why `name` cannot be assigned, if it cannot.  The name keeps its
** meaning (a constant, a scalar, a let), so it is not poisoned, and the
** value's own errors are independent of this one. */
static bool cannot_assign(Checker *K, const char *name, int off) {
  Sym *sym = lookup(K, name);
  if (declared_array(K, name))
    return false; /* the caller's array, whatever the language calls it */
  if (declared_scalar(K, name))
    error_at(K->C, off, "cannot assign to '%s': it is a scalar parameter", name);
  else if (!strcmp(name, "i") || is_constant_name(name))
    error_at(K->C, off, "cannot assign to '%s': it is %s", name,
             !strcmp(name, "i") ? "the element index" : "a constant");
  else if (op_lookup_function(name, strlen(name), NULL) >= 0)
    error_at(K->C, off, "cannot assign to '%s': it is the name of a function", name);
  else if (sym && sym->kind == SYM_PARAM)
    error_at(K->C, off, "cannot assign to '%s': it is a scalar parameter", name);
  else if (sym && sym->kind == SYM_TEMP)
    error_at(K->C, off, "cannot assign to '%s': it is a let temporary (use another let)", name);
  else
    return false;
  return true;
}

/* Stores v in array `name`, a target that can be assigned, written at
** name_off. */
static void store_at(Checker *K, AstStmt *s, const char *name, int name_off, Val v,
                     bool in_place) {
  int off = name_off;
  Sym *sym = lookup(K, name);
  if (v.bad && !sym && !declared_array(K, name)) {
    /* A new output would take the failed value's type: it has none. */
    poison(K, name, SYM_ARRAY, off);
    return;
  }
  /* A failed value is reported; an array whose type is known keeps it
  ** (stores convert to it), so errors in its later uses are independent.
  ** A poisoned output still has no type: a later value cannot give it one. */
  if (v.bad || (sym && sym->poisoned))
    return;
  if (sym && sym->reduced) {
    error_at(K->C, off, "'%s' already holds the result of %s(); give this value another name",
             name, op_info[sym->red_op].name);
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
  char into[160];
  snprintf(into, sizeof into, "to store it in array '%s'", name);
  if (!complex_converts(K, v.n->type, t, off, into))
    return;
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

static void store(Checker *K, AstStmt *s, const char *name, Val v, bool in_place) {
  store_at(K, s, name, s->name_off, v, in_place);
}

/* name = op(x), a reduction over all elements: its result is an array of
** role JITC_RESULT, one element of NumPy's result type. */
static void check_reduce(Checker *K, AstStmt *s, const char *name, bool ok) {
  Ast *call = s->value;
  OpId op = (OpId)reduction_op(call->name);
  int off = s->kind == S_EXPR ? s->off : s->name_off;
  Ast *x;
  const IrAxes *axes;
  if (!reduce_args(K, call, op, &x, &axes)) {
    if (x)
      check_expr(K, x);
    if (ok && !lookup(K, name))
      poison(K, name, SYM_ARRAY, off);
    return;
  }
  Val v = check_expr(K, x);
  if (!ok)
    return;
  Sym *sym = lookup(K, name);
  if (sym && !sym->poisoned) {
    if (sym->reduced)
      error_at(K->C, off, "'%s' already holds the result of %s(); give this one another name",
               name, op_info[sym->red_op].name);
    else
      error_at(K->C, off, "'%s' is an array of elements; the result of %s() needs a name of "
               "its own", name, call->name);
    return;
  }
  if (sym || v.bad) {
    if (!sym)
      poison(K, name, SYM_ARRAY, off);
    return;
  }
  jitc_dtype t = v.n->type; /* a weak value has its Python type, as np.sum(2.5) */
  jitc_dtype in = reduce_input(op, t), res = reduce_result(op, t);
  const jitc_array_decl *ad = declared_array(K, name);
  if (ad && ad->dtype != res) {
    error_at(K->C, off, "'%s' is declared %s, but %s() of %s values is %s", name,
             tname(ad->dtype), op_info[op].name, tname(t), tname(res));
    poison(K, name, SYM_ARRAY, off);
    return;
  }
  sym = add_sym(K, name, SYM_ARRAY, off);
  if (!sym)
    return;
  sym->slot = K->narrays++;
  sym->provided = ad != NULL;
  sym->dtype = res;
  sym->has_dtype = sym->assigned = sym->reduced = true;
  sym->red_op = op;
  K->dtypes |= 1u << res;
  IrStmt *st = emit(K, IR_REDUCE, sym->slot, convert(K, (Val){v.n, false, false}, in), s->off);
  if (!st)
    return;
  st->op = op;
  st->axes = axes;
  K->nreduce++;
  axes_note(K, K->nstmts - 1, call->off);
}

/* `c == a + 1` as a whole statement, where `c` is no name the program or
** the caller knows: with implicit inputs `c` would become an input of ones
** and the comparison `out`, an assignment mistyped (as C compilers warn of
** `if (a = b)`).  Parentheses, `(c == a)`, or `out = c == a` say that the
** comparison is meant; a known `c` (Python's variables) is compared. */
static bool eq_typo(Checker *K, const AstStmt *s) {
  const Ast *e = s->value;
  if (!K->opt->implicit_inputs || e->kind != A_BINARY || e->op != OP_EQ || e->paren ||
      e->nargs != 2)
    return false;
  const Ast *l = e->args[0];
  if ((l->kind != A_NAME && l->kind != A_INDEX) || l->paren || lookup(K, l->name) ||
      declared_array(K, l->name) || declared_scalar(K, l->name) || is_constant_name(l->name) ||
      !strcmp(l->name, "i"))
    return false;
  error_at(K->C, e->off, "'==' compares; did you mean '=' to assign '%s'? (to store the "
           "comparison, write out = %s == ...)", l->name, l->name);
  return true;
}

/* The functions of two results, for messages: "frexp(), modf()". */
static const char *two_result_names(Checker *K) {
  Buf b = {0};
  for (int op = 0; op < OP_COUNT; op++)
    if (op_info[op].flags & F_TWO)
      buf_printf(&b, "%s%s()", b.len ? ", " : "", op_info[op].name);
  const char *r = arena_strdup(K->C->arena, b.s ? b.s : "");
  buf_free(&b);
  return r ? r : "";
}

/* NAME, NAME = f(x), f a function of two results (ops.h: F_TWO): x is
** evaluated once, into a let temporary unless it is a value no store can
** change (a constant, a scalar, `i`, a temporary), and the names store the
** results in order, each as `NAME = expr` would.  So an array that x reads
** is read before either name is assigned. */
static void check_two(Checker *K, AstStmt *s) {
  Ast *call = s->value;
  int op = call->kind == A_CALL ? op_lookup_function(call->name, strlen(call->name), NULL) : -1;
  bool ok[2] = {!cannot_assign(K, s->name, s->name_off),
                !cannot_assign(K, s->name2, s->name2_off)};
  if (ok[0] && ok[1] && !strcmp(s->name, s->name2)) {
    error_at(K->C, s->name2_off, "'%s' is assigned twice in one statement; give each result "
             "a name of its own", s->name2);
    ok[1] = false;
  }
  Val r[2];
  if (op < 0 || !(op_info[op].flags & F_TWO) || call->nargs != 1) {
    if (op >= 0 && (op_info[op].flags & F_TWO))
      error_at(K->C, call->off, "%s() takes 1 argument but %d were given", call->name,
               call->nargs);
    else if (op >= 0)
      error_at(K->C, call->off, "%s() has one result; two names take the two results of %s",
               call->name, two_result_names(K));
    else if (call->kind != A_CALL)
      error_at(K->C, call->off, "two names take the two results of %s, not of an expression",
               two_result_names(K));
    if (op >= 0 || call->kind != A_CALL)
      for (int k = 0; k < call->nargs; k++)
        check_expr(K, call->args[k]);
    else
      check_expr(K, call); /* an unknown function: says so */
    r[0] = r[1] = bad_val(K, call->off);
  } else {
    Val x = check_expr(K, call->args[0]);
    if (x.bad) {
      r[0] = r[1] = x;
    } else if (dtype_is_complex(x.n->type)) {
      r[0] = r[1] = complex_refused(K, (OpId)op, call->off, x.n->type, true);
    } else {
      jitc_dtype t;
      Node *xc = two_operand(K, x, &t);
      if (xc->kind == N_OP || xc->kind == N_LOAD) {
        int tmp = new_temp(K, xc->type);
        emit(K, IR_LET, tmp, xc, s->off);
        xc = new_node(K, N_TEMP, xc->type, call->off);
        xc->slot = tmp;
      }
      for (int k = 0; k < 2; k++)
        r[k] = (Val){two_result(K, (OpId)(op + k), call->off, xc, t), false, false};
    }
  }
  if (ok[0])
    store_at(K, s, s->name, s->name_off, r[0], false);
  if (ok[1])
    store_at(K, s, s->name2, s->name2_off, r[1], false);
}

static void check_stmt(Checker *K, AstStmt *s) {
  switch (s->kind) {
  case S_TWO:
    check_two(K, s);
    return;
  case S_LET: {
    const char *name = s->name;
    if (!strcmp(name, "i") || is_constant_name(name) ||
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
    if (v.bad) { /* reported: the name is known, its uses stay quiet */
      poison(K, name, SYM_TEMP, s->name_off);
      return;
    }
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
    if (eq_typo(K, s))
      return;
    /* fall through */
  case S_ASSIGN: {
    const char *name = s->kind == S_EXPR ? "out" : s->name;
    bool ok = !cannot_assign(K, name, s->name_off);
    if (s->value->kind == A_CALL && reduction_op(s->value->name) >= 0) {
      check_reduce(K, s, name, ok);
      return;
    }
    Val v = check_expr(K, s->value);
    if (ok)
      store(K, s, name, v, false);
    return;
  }
  case S_AUG: {
    /* a op= b is a = a op b, with the in-place casting rule. */
    if (cannot_assign(K, s->name, s->name_off)) {
      check_expr(K, s->value);
      return;
    }
    Ast target = {.kind = A_NAME, .off = s->name_off, .name = s->name};
    Val lhs = check_expr(K, &target);
    Val rhs = check_expr(K, s->value);
    Val v[2] = {lhs, rhs};
    Val r = s->op == OP_POW ? check_power(K, s->off, v, false)
                            : apply(K, (OpId)s->op, s->off, v, 2, JITC_BOOL, false);
    store(K, s, s->name, r, true);
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
    } else {
      if (s->name && !lookup(&K, s->name))
        poison(&K, s->name, s->kind == S_LET ? SYM_TEMP : SYM_ARRAY, s->name_off);
      if (s->name2 && !lookup(&K, s->name2))
        poison(&K, s->name2, SYM_ARRAY, s->name2_off);
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
    jitc_role role = s->reduced ? JITC_RESULT
                     : s->read_first ? (s->assigned ? JITC_INOUT : JITC_INPUT) : JITC_OUTPUT;
    p->arrays[s->slot] = (IrArray){s->name, role, s->dtype, s->provided};
    K.dtypes |= 1u << s->dtype;
  }
  for (int k = 0; k < K.nparams; k++)
    K.dtypes |= 1u << K.params[k].type;
  p->nparams = K.nparams;
  p->params = K.params;
  p->ntemps = K.ntemps;
  p->temps = K.temps;
  p->nstmts = K.nstmts;
  p->stmts = K.stmts;
  p->nchecks = K.nchecks;
  p->checks = K.checks;
  p->nreduce = K.nreduce;
  p->dtypes = K.dtypes;
  p->lang = K.lang;
  p->nlang = K.nlang;
  axes_finish(&K, p);
  return p;
}
