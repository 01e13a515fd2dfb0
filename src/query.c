/*
** query.c -- the questions a caller asks of a compiled kernel (jitc.h):
** its arrays, their roles, types and, for a run over given inputs, their
** shapes; its scalars; its reductions and their axes; the names it read
** with the language's meaning.
*/
#include "jitc_int.h"
#include "layout.h"

#include <string.h>

int jitc_kernel_array_count(const jitc_kernel *k) { return k ? k->prog->narrays : 0; }

jitc_status jitc_kernel_array(const jitc_kernel *k, int index, const char **name,
                              jitc_role *role, jitc_dtype *dtype) {
  if (!k || index < 0 || index >= k->prog->narrays)
    return JITC_E_USAGE;
  const IrArray *a = &k->prog->arrays[index];
  if (name)
    *name = a->name;
  if (role)
    *role = a->role;
  if (dtype)
    *dtype = a->dtype;
  return JITC_OK;
}

int jitc_kernel_scalar_count(const jitc_kernel *k) { return k ? k->prog->nparams : 0; }

jitc_status jitc_kernel_scalar(const jitc_kernel *k, int index, const char **name,
                               jitc_dtype *dtype) {
  if (!k || index < 0 || index >= k->prog->nparams)
    return JITC_E_USAGE;
  if (name)
    *name = k->prog->params[index].name;
  if (dtype)
    *dtype = k->prog->params[index].type;
  return JITC_OK;
}

/* The reduction statement giving result array `index`, or NULL. */
static const IrStmt *kernel_reduction(const Program *p, int index) {
  if (index < 0 || index >= p->narrays || p->arrays[index].role != JITC_RESULT)
    return NULL;
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE && p->stmts[s].slot == index)
      return &p->stmts[s];
  return NULL;
}

const char *jitc_kernel_reduction(const jitc_kernel *k, int index) {
  const IrStmt *st = k ? kernel_reduction(k->prog, index) : NULL;
  return st ? op_info[st->op].name : NULL;
}

int jitc_kernel_language_name_count(const jitc_kernel *k) { return k ? k->prog->nlang : 0; }

const char *jitc_kernel_language_name(const jitc_kernel *k, int index) {
  return k && index >= 0 && index < k->prog->nlang ? k->prog->lang[index] : NULL;
}

int jitc_kernel_find_array(const jitc_kernel *k, const char *name) {
  for (int j = 0; k && name && j < k->prog->narrays; j++)
    if (!strcmp(k->prog->arrays[j].name, name))
      return j;
  return -1;
}

int jitc_kernel_uses_dtype(const jitc_kernel *k, jitc_dtype t) {
  return k && (unsigned)t < JITC_NDTYPES && (k->prog->dtypes >> t & 1u);
}

int jitc_kernel_find_scalar(const jitc_kernel *k, const char *name) {
  for (int j = 0; k && name && j < k->prog->nparams; j++)
    if (!strcmp(k->prog->params[j].name, name))
      return j;
  return -1;
}

jitc_status jitc_kernel_reduction_axes(const jitc_kernel *k, int index, int *naxes, int *axes,
                                       int *keepdims) {
  const IrStmt *st = k ? kernel_reduction(k->prog, index) : NULL;
  if (!st)
    return JITC_E_USAGE;
  const IrAxes *ax = st->axes;
  if (naxes)
    *naxes = ax && ax->given ? ax->n : -1;
  for (int d = 0; axes && ax && ax->given && d < ax->n; d++)
    axes[d] = ax->axes[d];
  if (keepdims)
    *keepdims = ax && ax->keepdims;
  return JITC_OK;
}

/* ---- shapes, for given inputs ---- */

jitc_status jitc_broadcast_shape(jitc_context *ctx, const jitc_kernel *k,
                                 const jitc_array *arrays, int *ndim, int64_t *shape) {
  if (!ctx || !k || !ndim || !shape || (!arrays && k->prog->narrays))
    return JITC_E_USAGE;
  if (ctx->diags.n || ctx->diags.text.s) /* as in jitc_run */
    diags_clear(&ctx->diags);
  return layout_broadcast(ctx, k->prog, arrays, 0, ndim, shape);
}

jitc_status jitc_array_shape(jitc_context *ctx, const jitc_kernel *k, const jitc_array *arrays,
                             int index, int *ndim, int64_t *shape) {
  if (!ctx || !k || !ndim || !shape || (!arrays && k->prog->narrays) || index < 0 ||
      index >= k->prog->narrays)
    return JITC_E_USAGE;
  if (ctx->diags.n || ctx->diags.text.s) /* as in jitc_run */
    diags_clear(&ctx->diags);
  const Program *p = k->prog;
  int nd;
  int64_t s[JITC_MAXDIMS];
  bool red[JITC_MAXDIMS];
  jitc_status st = layout_broadcast(ctx, p, arrays, 1, &nd, s);
  if (st)
    return st;
  switch (p->arrays[index].role) {
  case JITC_INPUT:
    *ndim = arrays[index].ndim;
    if (*ndim)
      memcpy(shape, arrays[index].shape, (size_t)*ndim * sizeof *shape);
    return JITC_OK;
  case JITC_RESULT:
    if ((st = axes_resolve(ctx, p, nd, red)))
      return st;
    axes_result_shape(p, index, nd, s, red, ndim, shape);
    return JITC_OK;
  default:
    *ndim = nd;
    memcpy(shape, s, (size_t)nd * sizeof *s);
    return JITC_OK;
  }
}
