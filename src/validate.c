/*
** validate.c -- the IR validator: does a Program keep the contract of the
** typed IR that every back end relies on?
**
** The checker (check.c) promises its back ends a program they never have to
** second-guess (jitc_int.h, Node and Program): every node of a known kind
** and type, every operand of an op of the one type its typing rule allows,
** every array, parameter and temporary referred to existing with the type
** the node has, each temporary written once before it is read, and no array
** loaded after a statement stored to it.  A back end that met a program
** breaking this would compute something wrong, silently; so jitc.c runs this
** check between the front end and any target, and a violation, a bug in
** the front end, is reported as an internal error instead.
**
** The walk visits each op node of a statement once (nodes may be shared:
** x ** y at run time reads x twice), with an explicit stack (expressions nest
** deeply), so it takes time linear in the size of the program.
*/
#include "jitc_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct Validator {
  const Program *p;
  /* The nodes seen in the current statement: open addressing on the
  ** pointer, an entry of another statement (gen) counting as empty, so the
  ** table needs no clearing between statements. */
  struct Seen {
    const Node *n;
    int gen;
  } *seen;
  size_t nseen, cap;
  int gen;
  const Node **stack;
  size_t sp, scap;
  bool *defined;  /* per temporary: its IR_LET has run */
  bool *stored;   /* per array: a statement has stored to it */
  bool oom;
} Validator;

static bool is_dtype(int t) { return t >= 0 && t < JITC_NDTYPES; }

/* The typing contract of one op node (see Node in jitc_int.h), or NULL. */
static const char *check_op(const Node *n) {
  if ((int)n->op < 0 || n->op >= OP_COUNT)
    return "unknown op";
  const OpInfo *oi = &op_info[n->op];
  if (n->nargs != oi->arity)
    return "wrong operand count";
  for (int k = 0; k < n->nargs; k++)
    if (!n->args[k] || !is_dtype(n->args[k]->type))
      return "missing operand";
  jitc_dtype r = n->type, a = n->args[0]->type;
  /* Operands other than where's condition and a cast's source share one type. */
  int first = n->op == OP_WHERE ? 1 : 0;
  jitc_dtype t = n->args[first]->type;
  if (oi->kind == K_REDUCE)
    return "a reduction inside an expression";
  /* ldexp's exponent is int32 (R_LDEXP, below) */
  if (oi->kind != K_CAST && oi->rule != R_LDEXP)
    for (int k = first; k < n->nargs; k++)
      if (n->args[k]->type != t)
        return "operands of different types";
  /* ldexp and the two-result functions: 16-bit floats are computed in
  ** float32 (ops.h) */
  if ((oi->rule == R_LDEXP || (oi->flags & (F_TWO | F_SECOND))) && a != JITC_FLOAT32 &&
      a != JITC_FLOAT64)
    return "operand not float32 or float64";
  /* complex operands: the rows without F_REAL (ops.h), abs giving the part's type */
  if (dtype_is_complex(t) && (oi->flags & F_REAL))
    return "complex operands of a real function";
  if (n->op == OP_ABS && dtype_is_complex(t))
    return r == dtype_part(t) ? NULL : "abs of complex not of its part's type";
  switch (oi->rule) {
  case R_ARITH:
    if (r != t)
      return "result type differs from operands";
    /* bool + bool is or, bool * bool is and: the only arithmetic on bool */
    if (t == JITC_BOOL && n->op != OP_ADD && n->op != OP_MUL)
      return "bool operands";
    return NULL;
  case R_ARITH_NB:
  case R_SAME_NB:
    if (r != t)
      return "result type differs from operands";
    return t == JITC_BOOL ? "bool operands" : NULL;
  case R_TRUEDIV:
  case R_FLOAT:
    if (r != t)
      return "result type differs from operands";
    return dtype_is_float(t) || dtype_is_complex(t) ? NULL : "operands not float";
  case R_BITWISE:
    if (r != t)
      return "result type differs from operands";
    return dtype_is_float(t) || dtype_is_complex(t) ? "float operands" : NULL;
  case R_SHIFT:
    if (r != t)
      return "result type differs from operands";
    return dtype_is_int(t) ? NULL : "operands not integer";
  case R_COMPARE:
  case R_PRED:
    return r == JITC_BOOL ? NULL : "result not bool";
  case R_SAME:
  case R_PROMOTE:
    return r == t ? NULL : "result type differs from operands";
  case R_WHERE:
    if (a != JITC_BOOL)
      return "condition not bool";
    return r == t ? NULL : "result type differs from operands";
  case R_CAST: /* complex to complex or bool only (the checker's rule) */
    return dtype_is_complex(a) && !dtype_is_complex(r) && r != JITC_BOOL
               ? "complex cast to a real type" : NULL;
  case R_LDEXP:
    if (n->args[1]->type != JITC_INT32)
      return "exponent not int32";
    return r == a ? NULL : "result type differs from operands";
  case R_EXPONENT:
    return r == JITC_INT32 ? NULL : "result not int32";
  case R_PART: /* real, imag: only of complex operands in the IR */
  case R_ANGLE:
    return dtype_is_complex(t) && r == dtype_part(t) ? NULL : "not complex to its part's type";
  case R_CONJ:
    return dtype_is_complex(t) && r == t ? NULL : "not complex to the same type";
  case R_COMPLEX:
    return (t == JITC_FLOAT32 || t == JITC_FLOAT64) && r == dtype_complex_of(t)
               ? NULL : "parts not float32 or float64, or the result not their complex type";
  case R_LIKE: /* the checker makes them their operand, or a constant */
    return "copy or ones_like in the IR";
  case R_RSUM: case R_RSAME: case R_RMEAN: case R_RBOOL: case R_RARG:
    return "a reduction inside an expression";
  }
  return "unknown type rule";
}

/* One node, apart from its operands, or NULL. */
static const char *check_node(Validator *V, const Node *n) {
  const Program *p = V->p;
  if (!is_dtype(n->type))
    return "node of unknown type";
  switch (n->kind) {
  case N_CONST:
    return NULL;
  case N_INDEX:
    if (p->by_axis)
      return "the element index beside a reduction over axes";
    return n->type == JITC_INT64 ? NULL : "index not int64";
  case N_LOAD:
    if (n->slot < 0 || n->slot >= p->narrays || p->arrays[n->slot].dtype != n->type)
      return "load of an unknown array, or with the wrong type";
    if (p->arrays[n->slot].role == JITC_OUTPUT || p->arrays[n->slot].role == JITC_RESULT)
      return "load of an output array";
    return V->stored[n->slot] ? "load of an array after a store to it" : NULL;
  case N_PARAM:
    if (n->slot < 0 || n->slot >= p->nparams || p->params[n->slot].type != n->type)
      return "unknown parameter, or with the wrong type";
    return NULL;
  case N_TEMP:
    if (n->slot < 0 || n->slot >= p->ntemps || p->temps[n->slot] != n->type)
      return "unknown temporary, or with the wrong type";
    return V->defined[n->slot] ? NULL : "temporary read before its let";
  case N_OP:
    return check_op(n);
  }
  return "unknown node kind";
}

static size_t slot_of(const Validator *V, const Node *n) {
  uintptr_t x = (uintptr_t)n;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 7) & (V->cap - 1);
}

/* Adds n to the nodes seen in this statement; false if it was there (or
** out of memory). */
static bool first_visit(Validator *V, const Node *n) {
  if ((V->nseen + 1) * 2 > V->cap) {
    size_t ocap = V->cap, ncap = ocap ? ocap * 2 : 1024;
    struct Seen *old = V->seen;
    V->seen = calloc(ncap, sizeof *V->seen);
    if (!V->seen) {
      V->seen = old;
      V->oom = true;
      return false;
    }
    V->cap = ncap;
    for (size_t k = 0; k < ocap; k++)
      if (old[k].n && old[k].gen == V->gen) {
        size_t h = slot_of(V, old[k].n);
        while (V->seen[h].n)
          h = (h + 1) & (V->cap - 1);
        V->seen[h] = old[k];
      }
    free(old);
  }
  size_t h = slot_of(V, n);
  while (V->seen[h].n && V->seen[h].gen == V->gen) {
    if (V->seen[h].n == n)
      return false;
    h = (h + 1) & (V->cap - 1);
  }
  V->seen[h] = (struct Seen){n, V->gen};
  V->nseen++;
  return true;
}

static bool push(Validator *V, const Node *n) {
  if (V->sp == V->scap) {
    size_t ncap = V->scap ? V->scap * 2 : 256;
    const Node **s = realloc(V->stack, ncap * sizeof *s);
    if (!s) {
      V->oom = true;
      return false;
    }
    V->stack = s;
    V->scap = ncap;
  }
  V->stack[V->sp++] = n;
  return true;
}

/* Every node of the expression `root` (each op once): why one breaks the
** contract, or NULL.  Each expression starts afresh, as the rules for loads
** and temporaries depend on the statement. */
static const char *check_expr(Validator *V, const Node *root) {
  if (!root)
    return "missing value";
  V->gen++;
  V->nseen = 0;
  V->sp = 0;
  if (!push(V, root))
    return NULL;
  while (V->sp > 0) {
    const Node *n = V->stack[--V->sp];
    /* Only an op can repeat a whole subtree; a leaf is checked again. */
    if (n->kind == N_OP && !first_visit(V, n))
      continue;
    const char *why = check_node(V, n);
    if (why)
      return why;
    if (n->kind == N_OP)
      for (int k = 0; k < n->nargs; k++)
        if (!push(V, n->args[k]))
          return NULL;
  }
  return NULL;
}

/* A reduction's axes (IrAxes): distinct axes in range, one for argmin and
** argmax, the same set as the program's first reduction, and
** Program.by_axis set where some reduction has axes. */
static const char *check_axes(const Program *p, const IrStmt *st) {
  const IrAxes *ax = st->axes;
  if (ax && (!p->by_axis || ax->n < 0 || ax->n > JITC_MAXDIMS || (!ax->given && ax->n) ||
             (!ax->given && !ax->keepdims) || (ax->given && !ax->tuple && ax->n != 1)))
    return "axes of a malformed shape, or without by_axis";
  if (ax && ax->tuple && (st->op == OP_ARGMIN || st->op == OP_ARGMAX))
    return "a tuple of axes for argmin or argmax";
  for (int k = 0; ax && k < ax->n; k++) {
    if (ax->axes[k] < -JITC_MAXDIMS || ax->axes[k] >= JITC_MAXDIMS)
      return "an axis out of every shape's bounds";
    for (int q = 0; q < k; q++)
      if (ax->axes[q] == ax->axes[k])
        return "an axis given twice";
  }
  const IrStmt *first = st;
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE) {
      first = &p->stmts[s];
      break;
    }
  const IrAxes *fx = first->axes;
  bool g1 = fx && fx->given, g2 = ax && ax->given;
  if (g1 != g2 || (g1 && fx->n != ax->n))
    return "reductions over different sets of axes";
  for (int k = 0; g1 && k < ax->n; k++) {
    bool found = false;
    for (int q = 0; q < fx->n; q++)
      found |= fx->axes[q] == ax->axes[k];
    if (!found)
      return "reductions over different sets of axes";
  }
  return NULL;
}

static const char *check_stmt(Validator *V, const IrStmt *st) {
  const Program *p = V->p;
  const char *why = check_expr(V, st->value);
  if (!why && st->kind != IR_REDUCE && st->axes)
    why = "axes on a statement that does not reduce";
  if (why || V->oom)
    return why;
  switch (st->kind) {
  case IR_STORE:
    if (st->slot < 0 || st->slot >= p->narrays)
      return "store to an unknown array";
    if (p->arrays[st->slot].role == JITC_INPUT || p->arrays[st->slot].role == JITC_RESULT)
      return "store to an input array or a reduction's result";
    if (st->value->type != p->arrays[st->slot].dtype)
      return "stored value's type differs from the array's";
    V->stored[st->slot] = true;
    return NULL;
  case IR_LET:
    if (st->slot < 0 || st->slot >= p->ntemps)
      return "let of an unknown temporary";
    if (st->value->type != p->temps[st->slot])
      return "temporary's value of another type";
    if (V->defined[st->slot])
      return "temporary assigned twice";
    V->defined[st->slot] = true;
    return NULL;
  case IR_REDUCE:
    if (st->slot < 0 || st->slot >= p->narrays || p->arrays[st->slot].role != JITC_RESULT)
      return "reduction into an array that is not a result";
    if ((unsigned)st->op >= OP_COUNT || op_info[st->op].kind != K_REDUCE)
      return "reduction by an op that is not one";
    if (reduce_input(st->op, st->value->type) != st->value->type)
      return "reduced value not of the reduction's input type";
    if (reduce_result(st->op, st->value->type) != p->arrays[st->slot].dtype)
      return "result array not of the reduction's result type";
    if (V->stored[st->slot])
      return "result reduced twice";
    if ((why = check_axes(V->p, st)))
      return why;
    V->stored[st->slot] = true;
    return NULL;
  }
  return "unknown statement kind";
}

static const char *check_program(Validator *V) {
  const Program *p = V->p;
  for (int k = 0; k < p->narrays; k++)
    if (!is_dtype(p->arrays[k].dtype) || (unsigned)p->arrays[k].role > JITC_RESULT)
      return "array of unknown dtype or role";
  for (int k = 0; k < p->nparams; k++)
    if (!is_dtype(p->params[k].type))
      return "parameter of unknown type";
  for (int k = 0; k < p->ntemps; k++)
    if (!is_dtype(p->temps[k]))
      return "temporary of unknown type";
  return NULL;
}

jitc_status validate_program(jitc_context *ctx, const Program *p) {
  Validator V = {.p = p};
  V.defined = calloc((size_t)p->ntemps + 1, sizeof *V.defined);
  V.stored = calloc((size_t)p->narrays + 1, sizeof *V.stored);
  const char *why = NULL;
  int where = 0; /* statement number, 1-based; 0: the declarations */
  if (!V.defined || !V.stored) {
    V.oom = true;
  } else if (!(why = check_program(&V))) {
    int nreduce = 0;
    for (int s = 0; s < p->nstmts && !why && !V.oom; s++) {
      where = s + 1;
      why = check_stmt(&V, &p->stmts[s]);
      nreduce += p->stmts[s].kind == IR_REDUCE;
    }
    /* Every result is some reduction's, and Program.nreduce counts them. */
    if (!why && !V.oom) {
      where = 0;
      for (int k = 0; k < p->narrays && !why; k++)
        if (p->arrays[k].role == JITC_RESULT && !V.stored[k])
          why = "a result array that no reduction writes";
      if (!why && nreduce != p->nreduce)
        why = "nreduce differs from the reductions' count";
      bool axes = false;
      for (int s = 0; s < p->nstmts; s++)
        axes |= p->stmts[s].kind == IR_REDUCE && p->stmts[s].axes;
      if (!why && axes != p->by_axis)
        why = "by_axis without a reduction over axes";
    }
    /* The weak expressions to evaluate before each run: every temporary
    ** has its value by then. */
    for (int c = 0; c < p->nchecks && !why && !V.oom; c++) {
      where = -(c + 1);
      why = is_dtype(p->checks[c].meets) ? check_expr(&V, p->checks[c].value)
                                         : "check against an unknown type";
    }
  }
  free(V.seen);
  free(V.stack);
  free(V.defined);
  free(V.stored);
  if (V.oom)
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory while validating the program");
  if (!why)
    return JITC_OK;
  if (where > 0)
    return ctx_error(ctx, JITC_E_INTERNAL, "malformed program: statement %d: %s", where, why);
  if (where < 0)
    return ctx_error(ctx, JITC_E_INTERNAL, "malformed program: run-time check %d: %s", -where,
                     why);
  return ctx_error(ctx, JITC_E_INTERNAL, "malformed program: %s", why);
}
