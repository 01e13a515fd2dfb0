/*
** reduce.c -- the semantics of reductions: sum, prod, min, max, mean, any,
** all, argmin and argmax over all the elements of a run.
**
** A target reduces in two steps.  Each fixed block of elements becomes a
** Partial (reduce_step, or the target's own vector loop computing the
** same thing), and the partials of the blocks are combined in a fixed
** pairwise tree (reduce_tree), then finished into the result's type
** (reduce_finish).  Blocks are fixed by the element count alone, never by
** the number of threads, and the tree is fixed by the number of blocks, so
** the same inputs give the same bits on every run.
**
** NumPy's rules, per op (docs/language.md, "Reductions"):
**   sum, prod  integers and bool accumulate in int64, wrapping; float32 sums
**              in float64 (a float32 result at least as accurate as NumPy's
**              pairwise sum), float32 products in float32
**   min, max   NaN wins; no identity
**   mean       the sum in float64 (float32: rounded at the end) over n
**   any, all   or, and of the elements' truth
**   argmin,    the index of the first extreme element, a NaN counting as
**   argmax     the extreme; no identity
** The interp target uses these functions on each block; the cpu target's
** kernels write Partials and combine them here; the cuda target computes the
** same on the GPU (cuda/gen.c).
*/
#include "jitc_int.h"

#include <math.h>
#include <string.h>

static const OpInfo *red(OpId op) {
  if ((unsigned)op >= OP_COUNT || op_info[op].kind != K_REDUCE) unreachable();
  return &op_info[op];
}

jitc_dtype reduce_result(OpId op, jitc_dtype t) {
  switch (red(op)->rule) {
  case R_RSUM: return dtype_is_float(t) ? t : type_info[t].kind == T_UINT ? JITC_UINT64 : JITC_INT64;
  case R_RSAME: return t;
  case R_RMEAN: return dtype_is_float(t) ? t : JITC_FLOAT64;
  case R_RBOOL: return JITC_BOOL;
  case R_RARG: return JITC_INT64;
  default: unreachable();
  }
}

jitc_dtype reduce_input(OpId op, jitc_dtype t) {
  switch (red(op)->rule) {
  case R_RSUM: case R_RMEAN: return reduce_result(op, t);
  case R_RBOOL: return JITC_BOOL;
  default: return t;
  }
}

jitc_dtype reduce_acc(OpId op, jitc_dtype in) {
  bool small = type_info[in].kind == T_FLOAT && type_info[in].size < 8;
  if ((op == OP_SUM || op == OP_MEAN) && small) return JITC_FLOAT64;
  /* The 16-bit floats' products in float32, rounded once at the end. */
  if (op == OP_PROD && small) return JITC_FLOAT32;
  return in;
}

/* ---- one element ---- */

/* Element j of x (type t) as a Partial's value: integers and bool in i,
** floats in f. */
static Partial value_at(jitc_dtype t, const void *x, int64_t j) {
  Partial p = {.idx = -1};
  switch (t) {
  case JITC_BOOL: p.v.i = ((const uint8_t *)x)[j] != 0; break;
  case JITC_INT32: p.v.i = ((const int32_t *)x)[j]; break;
  case JITC_INT64: p.v.i = ((const int64_t *)x)[j]; break;
  case JITC_FLOAT32: p.v.f = ((const float *)x)[j]; break;
  case JITC_FLOAT64: p.v.f = ((const double *)x)[j]; break;
  default: unreachable();
  }
  return p;
}

/* Whether b's value comes before a's for argmin (less) or argmax: a NaN
** first of all; equal values are ordered by index elsewhere.  The values
** of type t (an unsigned type's v.i is its bits). */
static bool before(bool less, jitc_dtype t, Partial b, Partial a) {
  if (dtype_is_float(t)) {
    if (isnan(a.v.f)) return false;
    if (isnan(b.v.f)) return true;
    return less ? b.v.f < a.v.f : b.v.f > a.v.f;
  }
  if (type_info[t].kind == T_UINT) {
    uint64_t x = (uint64_t)b.v.i, y = (uint64_t)a.v.i;
    return less ? x < y : x > y;
  }
  return less ? b.v.i < a.v.i : b.v.i > a.v.i;
}

static bool equal(bool fl, Partial a, Partial b) {
  if (fl) return a.v.f == b.v.f || (isnan(a.v.f) && isnan(b.v.f));
  return a.v.i == b.v.i;
}

Partial reduce_identity(OpId op, jitc_dtype in) {
  bool fl = dtype_is_float(reduce_acc(op, in));
  Partial p = {.idx = -1};
  switch (op) {
  case OP_PROD: if (fl) p.v.f = 1.0; else p.v.i = 1; break;
  case OP_ALL: p.v.i = 1; break;
  case OP_MIN: case OP_MAX: case OP_ARGMIN: case OP_ARGMAX: /* none: idx -1 says empty */
  default: if (fl) p.v.f = 0.0; else p.v.i = 0; break;
  }
  return p;
}

Partial reduce_combine(OpId op, jitc_dtype in, Partial a, Partial b) {
  jitc_dtype acc = reduce_acc(op, in);
  bool fl = dtype_is_float(acc);
  Partial r = a;
  switch (op) {
  case OP_SUM: case OP_MEAN:
    if (fl) r.v.f = a.v.f + b.v.f;
    else r.v.i = (int64_t)((uint64_t)a.v.i + (uint64_t)b.v.i); /* wraps, as NumPy */
    return r;
  case OP_PROD:
    if (acc == JITC_FLOAT32) r.v.f = (float)a.v.f * (float)b.v.f;
    else if (fl) r.v.f = a.v.f * b.v.f;
    else r.v.i = (int64_t)((uint64_t)a.v.i * (uint64_t)b.v.i);
    return r;
  case OP_ANY: r.v.i = a.v.i | b.v.i; return r;
  case OP_ALL: r.v.i = a.v.i & b.v.i; return r;
  case OP_MIN: case OP_MAX: case OP_ARGMIN: case OP_ARGMAX: {
    if (a.idx < 0) return b;
    if (b.idx < 0) return a;
    bool less = op == OP_MIN || op == OP_ARGMIN;
    if (before(less, acc, b, a)) return b;
    if (equal(fl, a, b) && b.idx < a.idx) return b;
    return a;
  }
  default: unreachable();
  }
}

void reduce_step(OpId op, jitc_dtype in, Partial *acc, const void *x, int64_t first, int m) {
  bool fl = dtype_is_float(in);
  switch (op) {
  case OP_SUM: case OP_MEAN:
    if (fl) {
      /* Pairwise within the block too, so that interp's float64 sum is at
      ** least as accurate as NumPy's: eight running sums, then a tree. */
      double s[8] = {0};
      int j = 0;
      for (; j + 8 <= m; j += 8)
        for (int q = 0; q < 8; q++) s[q] += value_at(in, x, j + q).v.f;
      for (; j < m; j++) s[j & 7] += value_at(in, x, j).v.f;
      acc->v.f += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
      return;
    }
    break;
  case OP_ANY:
    for (int j = 0; j < m && !acc->v.i; j++) acc->v.i = ((const uint8_t *)x)[j] != 0;
    return;
  case OP_ALL:
    for (int j = 0; j < m && acc->v.i; j++) acc->v.i = ((const uint8_t *)x)[j] != 0;
    return;
  default:
    break;
  }
  for (int j = 0; j < m; j++) {
    Partial e = value_at(in, x, j);
    e.idx = first + j;
    *acc = reduce_combine(op, in, *acc, e);
  }
}

Partial reduce_tree(OpId op, jitc_dtype in, const Partial *p, int64_t np) {
  if (np <= 0) return reduce_identity(op, in);
  if (np == 1) return p[0];
  int64_t half = np / 2;
  return reduce_combine(op, in, reduce_tree(op, in, p, half),
                        reduce_tree(op, in, p + half, np - half));
}

/* The bits of x rounded to nearest even in the binary format of `man`
** fraction bits and `ex` exponent bits (float16: 10, 5; bfloat16: 7, 8),
** directly from float64; a NaN quiet, with its sign and the top of its
** payload. */
static uint16_t round_small(double x, int man, int ex) {
  uint64_t d;
  memcpy(&d, &x, sizeof d);
  uint32_t sign = (uint32_t)(d >> 63) << (man + ex), inf = ((1u << ex) - 1) << man;
  int bias = (1 << (ex - 1)) - 1, e;
  if (isnan(x))
    return (uint16_t)(sign | inf | 1u << (man - 1) | (uint32_t)(d >> (52 - man) & ((1u << man) - 1)));
  double a = fabs(x);
  if (a == 0 || isinf(a)) return (uint16_t)(sign | (a == 0 ? 0 : inf));
  frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
  int ue = e - 1 < 1 - bias ? 1 - bias : e - 1; /* the subnormals' scale below */
  /* q: a in units of the last place, rounded (the scaling is exact); a
  ** carry into the exponent field is the next binade, or infinity. */
  uint64_t bits = ((uint64_t)(ue + bias - 1) << man) + (uint64_t)rint(ldexp(a, man - ue));
  return (uint16_t)(sign | (bits >= inf ? inf : (uint32_t)bits));
}

void reduce_finish(OpId op, jitc_dtype in, Partial acc, int64_t n, void *out) {
  jitc_dtype r = reduce_result(op, in);
  const TypeInfo *ti = &type_info[r];
  double f = acc.v.f;
  int64_t i = acc.v.i;
  if (op == OP_ARGMIN || op == OP_ARGMAX)
    i = acc.idx;
  else if (op == OP_MEAN)
    f = n > 0 ? acc.v.f / (double)n : NAN;
  if (r == JITC_BOOL) {
    *(uint8_t *)out = i != 0;
  } else if (ti->kind == T_FLOAT) {
    uint16_t h;
    switch (ti->size) {
    case 8: *(double *)out = f; break;
    case 4: *(float *)out = (float)f; break;
    default:
      h = r == JITC_FLOAT16 ? round_small(f, 10, 5) : round_small(f, 7, 8);
      memcpy(out, &h, sizeof h);
    }
  } else {
    /* An integer result: its low bytes (min and max are in range). */
    switch (ti->size) {
    case 1: *(uint8_t *)out = (uint8_t)i; break;
    case 2: *(uint16_t *)out = (uint16_t)i; break;
    case 4: *(uint32_t *)out = (uint32_t)i; break;
    default: *(uint64_t *)out = (uint64_t)i; break;
    }
  }
}

void reduce_results(const Program *p, int64_t n, const Partial *part, int64_t nblocks,
                    void *const *arrays) {
  int r = 0;
  for (int s = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE) continue;
    jitc_dtype in = st->value->type;
    Partial acc = reduce_tree(st->op, in, part ? part + r * nblocks : NULL, part ? nblocks : 0);
    reduce_finish(st->op, in, acc, n, arrays[st->slot]);
    r++;
  }
}
