/*
** axis.c -- reductions over axes: sum(x, axis=0), max(x, (0, 2)),
** argmin(x, axis=-1, keepdims=True), as NumPy's np.sum and numexpr take
** them.
**
** The checker's half reads a reduction's arguments (the operand, then the
** axis, positional or by keyword, and keepdims) into an IrAxes, as written:
** an axis must be a constant, because the result's shape is a property of
** the compiled program.  A program's reductions share one set of axes, so
** that one pass computes them all: the broadcast shape is cut into
** segments, one per element of the results, by taking the reduced axes
** innermost (layout.c), and each segment is reduced as a whole reduction
** is.  The element index `i` is then not the position in C order, and a
** program reading it beside a reduction over axes is refused.
**
** The run's half gives the axes their meaning for a shape: NumPy's
** AxisError for an axis beyond the shape's dimensions, its "duplicate value"
** for two axes that name one, and the result's shape (the broadcast shape
** without the reduced axes, or with extents of 1 for them under keepdims).
*/
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the checker's half ---- */

/* The value of an axis written as a constant integer (3, -1, +2, (1)), or
** false. */
static bool axis_literal(const Ast *a, int64_t *v) {
  if (a->kind == A_INT) {
    *v = a->ival;
    return true;
  }
  if (a->kind == A_UNARY && a->nargs == 1 && (a->op < 0 || a->op == OP_NEG) &&
      a->args[0]->kind == A_INT && !a->args[0]->paren) {
    *v = a->op < 0 ? a->args[0]->ival : -a->args[0]->ival;
    return true;
  }
  return false;
}

/* Reads one axis a into R->axes; false after reporting an error. */
static bool read_axis(Checker *K, const char *fn, const Ast *a, IrAxes *R) {
  int64_t v;
  if (!axis_literal(a, &v)) {
    error_at(K->C, a->off, "the axis of %s() must be a constant integer or a tuple of them, "
             "as in axis=0 or axis=(0, 2): the result's shape is fixed when the program is "
             "compiled", fn);
    return false;
  }
  if (v < -JITC_MAXDIMS || v >= JITC_MAXDIMS) {
    error_at(K->C, a->off, "axis %lld is out of bounds for every array: arrays have at most "
             "%d dimensions", (long long)v, JITC_MAXDIMS);
    return false;
  }
  for (int k = 0; k < R->n; k++)
    if (R->axes[k] == v) {
      error_at(K->C, a->off, "axis %lld is repeated in the axes of %s() (NumPy: duplicate "
               "value in 'axis')", (long long)v, fn);
      return false;
    }
  R->axes[R->n++] = (int)v;
  return true;
}

/* The axis argument a (an integer or a tuple of them) into R. */
static bool read_axes(Checker *K, const char *fn, OpId op, const Ast *a, IrAxes *R) {
  R->given = true;
  if (a->kind != A_TUPLE)
    return read_axis(K, fn, a, R);
  if (op == OP_ARGMIN || op == OP_ARGMAX) {
    error_at(K->C, a->off, "%s() takes one axis, not a tuple of them (as NumPy's %s)", fn, fn);
    return false;
  }
  R->tuple = true;
  for (int k = 0; k < a->nargs; k++)
    if (!read_axis(K, fn, a->args[k], R))
      return false;
  return true;
}

/* keepdims=True or False (or 1, 0). */
static bool read_keepdims(Checker *K, const char *fn, const Ast *a, IrAxes *R) {
  if (a->kind == A_NAME && !a->paren && (!strcmp(a->name, "True") || !strcmp(a->name, "False"))) {
    R->keepdims = a->name[0] == 'T';
    return true;
  }
  if (a->kind == A_INT && (a->ival == 0 || a->ival == 1)) {
    R->keepdims = a->ival == 1;
    return true;
  }
  error_at(K->C, a->off, "keepdims of %s() must be True or False", fn);
  return false;
}

bool reduce_args(Checker *K, Ast *call, OpId op, Ast **operand, const IrAxes **axes) {
  const char *fn = call->name;
  *operand = NULL;
  *axes = NULL;
  IrAxes R = {0};
  const Ast *axis = NULL;
  bool keepdims = false;
  int npos = 0;
  for (int k = 0; k < call->nargs; k++) {
    Ast *a = call->args[k];
    if (a->kind != A_KEYWORD) {
      if (npos == 0)
        *operand = a;
      else if (npos == 1)
        axis = a;
      npos++;
      continue;
    }
    if (!strcmp(a->name, "axis") && !axis) {
      axis = a->args[0];
    } else if (!strcmp(a->name, "axis") || (!strcmp(a->name, "keepdims") && keepdims)) {
      error_at(K->C, a->off, "%s() got multiple values for argument '%s'", fn, a->name);
      return false;
    } else if (!strcmp(a->name, "keepdims")) {
      if (!read_keepdims(K, fn, a->args[0], &R))
        return false;
      keepdims = true;
    } else {
      error_at(K->C, a->off, "%s() got an unexpected keyword argument '%s'; it takes axis "
               "and keepdims", fn, a->name);
      return false;
    }
  }
  if (npos < 1 || npos > 2) {
    error_at(K->C, call->off, "%s() takes 1 argument (and an axis) but %d were given", fn,
             npos);
    return false;
  }
  /* axis=None: every axis, NumPy's default */
  if (axis && axis->kind == A_NAME && !strcmp(axis->name, "None"))
    axis = NULL;
  if (axis && !read_axes(K, fn, op, axis, &R))
    return false;
  if (!R.given && !R.keepdims)
    return true; /* the whole reduction, as it always was */
  IrAxes *copy = arena_alloc(K->C->arena, sizeof *copy);
  if (!copy)
    return true; /* out of memory: jitc.c reports it */
  *copy = R;
  *axes = copy;
  return true;
}

/* Whether a and b reduce over the same axes of any shape: every axis, or
** the same axes as written (in any order). */
static bool same_set(const IrAxes *a, const IrAxes *b) {
  bool ga = a && a->given, gb = b && b->given;
  if (!ga || !gb)
    return ga == gb;
  if (a->n != b->n)
    return false;
  for (int k = 0; k < a->n; k++) {
    bool found = false;
    for (int q = 0; q < b->n && !found; q++)
      found = a->axes[k] == b->axes[q];
    if (!found)
      return false;
  }
  return true;
}

/* "(0, 2)", "every axis": a set of axes for a message. */
static const char *set_text(char *buf, size_t cap, const IrAxes *a) {
  if (!a || !a->given)
    return "every axis";
  size_t at = (size_t)snprintf(buf, cap, "axis (");
  for (int k = 0; k < a->n && at < cap; k++)
    at += (size_t)snprintf(buf + at, cap - at, k ? ", %d" : "%d", a->axes[k]);
  if (at < cap)
    snprintf(buf + at, cap - at, a->n == 1 ? ",)" : ")");
  return buf;
}

/* The name of the result array in `slot`. */
static const char *result_name(Checker *K, int slot) {
  for (Sym *s = K->syms; s; s = s->next)
    if (s->kind == SYM_ARRAY && s->slot == slot && s->reduced)
      return s->name;
  return "?";
}

void axes_note(Checker *K, int stmt, int off) {
  const IrStmt *st = &K->stmts[stmt];
  if (!K->first_reduce) {
    K->first_reduce = stmt + 1;
    return;
  }
  const IrStmt *first = &K->stmts[K->first_reduce - 1];
  if (same_set(first->axes, st->axes))
    return;
  char b1[400], b2[400];
  int line, col;
  src_position(K->C->src, first->off, &line, &col);
  error_at(K->C, off, "one program reduces over one set of axes: %s() here reduces over %s, "
           "and %s() giving '%s' on line %d over %s; compute it in a program of its own",
           op_info[st->op].name, set_text(b1, sizeof b1, st->axes), op_info[first->op].name,
           result_name(K, first->slot), line, set_text(b2, sizeof b2, first->axes));
}

void axes_finish(Checker *K, Program *p) {
  for (int s = 0; s < p->nstmts; s++)
    p->by_axis |= p->stmts[s].kind == IR_REDUCE && p->stmts[s].axes;
  if (p->by_axis && K->index_used)
    error_at(K->C, K->index_off, "the element index 'i' has no meaning beside a reduction over "
             "an axis, which visits the elements segment by segment rather than in C order; "
             "compute it in a program of its own");
}

Val misplaced_arg(Checker *K, const Ast *a) {
  if (a->kind == A_KEYWORD)
    error_at(K->C, a->off, "a keyword argument ('%s=') is taken only by a reduction (sum, prod, "
             "min, max, mean, any, all, argmin, argmax: axis= and keepdims=)", a->name);
  else
    error_at(K->C, a->off, "a tuple is only the axis of a reduction, as in sum(x, "
             "axis=(0, 1))");
  return bad_val(K, a->off);
}

/* Whether a reduction's call names an axis: axis=, or a second positional
** argument that is one (a constant integer or a tuple; max(a, b) of an
** array b means maximum(a, b)). */
static bool names_axis(const Ast *call) {
  int64_t v;
  for (int k = 0; k < call->nargs; k++) {
    const Ast *a = call->args[k];
    if (a->kind == A_KEYWORD ? !strcmp(a->name, "axis")
                             : k == 1 && (a->kind == A_TUPLE || axis_literal(a, &v)))
      return true;
  }
  return false;
}

void misplaced_reduction(Checker *K, const Ast *call, OpId op) {
  const char *fn = call->name;
  /* The result is complete only when the pass over the elements ends, and
  ** over an axis it has a shape of its own: no expression of the pass can
  ** take it in, whatever its shape. */
  if (names_axis(call)) {
    error_at(K->C, call->off, "%s() over an axis gives an array of its own shape (the "
             "broadcast shape without the reduced axes), known only after every element has "
             "been read, so it must be the whole value of an assignment, as in 's = %s(..., "
             "axis=...)'; use it in a second program", fn, fn);
    return;
  }
  error_at(K->C, call->off, "%s() reduces all elements to one value, so it must be the whole "
           "value of an assignment, as in 's = %s(...)'%s", fn, fn,
           op == OP_MIN ? "; for the element-wise minimum use minimum(a, b)"
           : op == OP_MAX ? "; for the element-wise maximum use maximum(a, b)" : "");
}

/* ---- the run's half ---- */

/* Reduction st's axes for a shape of nd dimensions into red[] (red[d]:
** axis d is reduced), with NumPy's errors. */
static jitc_status resolve(jitc_context *ctx, const Program *p, const IrStmt *st, int nd,
                           bool *red) {
  const IrAxes *ax = st->axes;
  bool all = !ax || !ax->given;
  for (int d = 0; d < nd; d++)
    red[d] = all;
  if (all)
    return JITC_OK;
  const char *fn = op_info[st->op].name, *res = p->arrays[st->slot].name;
  for (int k = 0; k < ax->n; k++) {
    int a = ax->axes[k];
    if (nd == 0 && !ax->tuple && (a == 0 || a == -1))
      continue; /* NumPy takes axis 0 of a 0-d array as no axis */
    if (a < -nd || a >= nd)
      return ctx_error(ctx, JITC_E_INPUT, "%s() giving '%s': axis %d is out of bounds for "
                       "array of dimension %d", fn, res, a, nd);
    int d = a < 0 ? a + nd : a;
    if (red[d])
      return ctx_error(ctx, JITC_E_INPUT, "%s() giving '%s': axis %d names an axis given "
                       "before, of an array of dimension %d (NumPy: duplicate value in 'axis')",
                       fn, res, a, nd);
    red[d] = true;
  }
  return JITC_OK;
}

jitc_status axes_resolve(jitc_context *ctx, const Program *p, int nd, bool *red) {
  bool mine[JITC_MAXDIMS];
  bool first = true;
  for (int s = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE)
      continue;
    jitc_status e = resolve(ctx, p, st, nd, first ? red : mine);
    if (e)
      return e;
    first = false;
  }
  if (first)
    for (int d = 0; d < nd; d++)
      red[d] = false;
  return JITC_OK;
}

void axes_result_shape(const Program *p, int j, int nd, const int64_t *shape, const bool *red,
                       int *rnd, int64_t *rshape) {
  const IrAxes *ax = NULL;
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE && p->stmts[s].slot == j)
      ax = p->stmts[s].axes;
  int n = 0;
  for (int d = 0; d < nd && ax; d++) {
    if (!red[d])
      rshape[n++] = shape[d];
    else if (ax->keepdims)
      rshape[n++] = 1;
  }
  *rnd = n;
}
