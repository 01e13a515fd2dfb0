/*
** bind.c -- the scalar values of a run, bound to a kernel's parameters: each
** value converted to its parameter's type into the slot the targets read
** (refusing what would not round-trip), then the weak expressions of
** scalars checked with those values, as Python would have computed them.
*/
#include "jitc_int.h"

#include <math.h>
#include <string.h>

/* Converts a bound value to the parameter's type, refusing what would not
** round-trip (an int that does not fit, a fractional value for an int).
** An integer value is in v->u.i (a uint64's as its bits), a float's in
** v->u.f; the slot gets the parameter type's bits, by the cast semantics. */
static jitc_status to_slot(jitc_context *ctx, const IrParam *p, const jitc_value *v,
                           ParamSlot *out) {
  if ((unsigned)v->dtype >= JITC_NDTYPES)
    return ctx_error(ctx, JITC_E_USAGE, "scalar '%s': unknown dtype", p->name);
  bool is_float = dtype_is_float(v->dtype), is_u64 = v->dtype == JITC_UINT64;
  bool is_complex = dtype_is_complex(v->dtype);
  double f = is_float ? v->u.f : is_u64 ? (double)(uint64_t)v->u.i : (double)v->u.i;
  int64_t i = is_float ? 0 : v->dtype == JITC_BOOL ? (v->u.i != 0) : v->u.i;
  const TypeInfo *ti = &type_info[p->type];
  Node c = {.kind = N_CONST, .type = p->type};
  memset(out, 0, sizeof *out);
  if (is_complex && !dtype_is_complex(p->type))
    return ctx_error(ctx, JITC_E_USAGE, "scalar '%s' is %s in this kernel; got a complex value",
                     p->name, ti->name);
  if (dtype_is_complex(p->type)) {
    /* Any value converts, as the cast rules convert its type. */
    Node d = {.kind = N_CONST, .type = is_float ? JITC_FLOAT64 : is_u64 ? JITC_UINT64 : JITC_INT64},
         cast = {.kind = N_OP, .op = OP_CAST, .type = p->type, .nargs = 1};
    if (is_complex) {
      d.type = JITC_COMPLEX128;
      d.k.z[0] = v->u.c.re;
      d.k.z[1] = v->u.c.im;
    } else if (is_float) {
      d.k.f = f;
    } else {
      d.k.i = i;
    }
    const Node *arg = &d;
    if (fold_op(&cast, &arg, false, &c) != FOLD_OK)
      return ctx_error(ctx, JITC_E_INTERNAL, "scalar '%s': no conversion", p->name);
    const_slot(&c, out);
    return JITC_OK;
  }
  if (dtype_is_float(p->type)) {
    Node d = {.kind = N_CONST, .type = JITC_FLOAT64, .k.f = f}, cast = {.kind = N_OP,
              .op = OP_CAST, .type = p->type, .nargs = 1};
    const Node *arg = &d;
    if (fold_op(&cast, &arg, false, &c) != FOLD_OK)
      return ctx_error(ctx, JITC_E_INTERNAL, "scalar '%s': no conversion", p->name);
    const_slot(&c, out);
    return JITC_OK;
  }
  if (p->type == JITC_BOOL) {
    if (is_float ? !(f == 0 || f == 1) : !(i == 0 || i == 1))
      return ctx_error(ctx, JITC_E_USAGE, "scalar '%s' is bool in this kernel; give 0 or 1, "
                       "True or False", p->name);
    out->b = (uint8_t)(is_float ? f != 0 : i != 0);
    return JITC_OK;
  }
  /* An integer type: the value must be integral and lie in the type's range
  ** and in the range of the narrower types it meets (fit_lo, fit_hi). */
  bool neg = is_float ? f < 0 : !is_u64 && i < 0;
  if (is_float) {
    if (!(f == floor(f)) || !(f >= -9223372036854775808.0 && f < 18446744073709551616.0))
      return ctx_error(ctx, JITC_E_USAGE, "scalar '%s' is an integer in this kernel; got "
                       "%.17g", p->name, f);
    i = f < 9223372036854775808.0 ? (int64_t)f : (int64_t)(uint64_t)f;
    is_u64 = f >= 9223372036854775808.0;
  }
  uint64_t mag = (uint64_t)i; /* the value, when not negative */
  /* A weak int of 2**63 or more (a Python int beside uint64, as NumPy takes
  ** it) where every reference to it converts to uint64 as it stands: its
  ** bits go in the int64 slot, and the conversion gives them back. */
  bool u64 = is_u64 && p->weak && p->type == JITC_INT64 && p->uses > 0 && p->u64_uses == p->uses;
  bool fits = neg ? i >= ti->lo && i >= p->fit_lo
                  : (mag <= ti->hi || u64) && (p->fit_hi == INT64_MAX || mag <= (uint64_t)p->fit_hi);
  if (!fits && !neg && p->weak && p->type == JITC_INT64 && mag > (uint64_t)INT64_MAX)
    return ctx_error(ctx, JITC_E_USAGE, "scalar '%s' = %llu does not fit in int64; an integer "
                     "of 2**63 or more is taken only where every use of the scalar meets uint64",
                     p->name, (unsigned long long)mag);
  if (!fits) {
    /* The narrower type it meets where the value fits its own (a weak int
    ** scalar meeting int32 somewhere), named as the range's type. */
    bool own = neg ? i >= ti->lo : mag <= ti->hi;
    const char *fit = own ? fit_type_name(p) : NULL, *meets = fit ? fit : ti->name;
    return ctx_error(ctx, JITC_E_USAGE, "scalar '%s' = %s%llu does not fit in %s, the type "
                     "it meets in the program", p->name, neg ? "-" : "",
                     neg ? (unsigned long long)(0 - mag) : (unsigned long long)mag, meets);
  }
  c.k.i = i;
  const_slot(&c, out);
  return JITC_OK;
}

jitc_status bind_scalars(jitc_context *ctx, const Program *p, const jitc_value *scalars,
                            ParamSlot *slots) {
  if (p->nparams && !scalars)
    return ctx_error(ctx, JITC_E_USAGE, "the kernel uses %d scalar%s; none given", p->nparams,
                     p->nparams == 1 ? "" : "s");
  for (int j = 0; j < p->nparams; j++) {
    jitc_status st = to_slot(ctx, &p->params[j], &scalars[j], &slots[j]);
    if (st)
      return st;
  }
  return JITC_OK;
}

jitc_status bind_check_weak(jitc_context *ctx, const jitc_kernel *k, const ParamSlot *slots) {
  const Program *p = k->prog;
  for (int j = 0; j < p->nchecks; j++) {
    const IrCheck *c = &p->checks[j];
    Node v;
    int where, line = 0, col = 0;
    FoldStatus st = fold_eval(p, c->value, slots, &v, &where);
    if (st == FOLD_UNKNOWN)
      continue;
    if (st == FOLD_OK) {
      const TypeInfo *ti = &type_info[c->meets];
      if (!dtype_is_int(c->meets) || v.type != JITC_INT64 ||
          (v.k.i >= ti->lo && (v.k.i < 0 || (uint64_t)v.k.i <= ti->hi)))
        continue;
      src_position(k->source, c->off, &line, &col);
      return ctx_error(ctx, JITC_E_USAGE, "the scalar expression at line %d, column %d is "
                       "%lld with these scalars, which does not fit in %s, the type it "
                       "meets in the program", line, col, (long long)v.k.i, ti->name);
    }
    src_position(k->source, where, &line, &col);
    return ctx_error(ctx, JITC_E_USAGE, "the scalar expression at line %d, column %d: %s",
                     line, col, fold_message(st));
  }
  return JITC_OK;
}
