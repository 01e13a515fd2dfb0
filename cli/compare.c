/*
** compare.c -- whether the targets of -t all agree: each output of each
** target against the first target's, element by element, in ulps.
**
** An element disagrees when it differs by more than 4 ulps (1e6 with
** --fast-math) and by more than 8 machine epsilons of the output's largest
** magnitude (the second allowance absorbs cancellation in sums of rounded
** terms).  Ulps are those of the output's own type (float16 and bfloat16
** in their own precision), or of a narrower float type the program
** computes in (jitc_kernel_uses_dtype): a value that passed through
** float32 carries float32's error even when widened (f64(sin(x)) for
** float32 x), one that passed through float16 float16's.  Integers and
** bools must be equal.  A float reduction's result (`s = sum(x)`) is the
** sum of n terms that each target adds in its own order: it may differ by
** n + 8 epsilons of its magnitude (a sum that cancels may still disagree,
** and then -t all says so).  A complex output compares part by part, each
** part as a float of the part type (float32 for complex64), the magnitude
** allowance from the largest part of the output.
*/
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spacing of float type t at magnitude ax (finite, a value of t): the
** step to the next value up, or down from the largest finite one. */
static double ulp_in(jitc_dtype t, double ax) {
  size_t size = jitc_dtype_size(t);
  unsigned char cell[8];
  elem_set_float(cell, t, 0, ax);
  /* Neighbouring floats of one sign have neighbouring bit patterns. */
  uint64_t bits = 0;
  memcpy(&bits, cell, size);
  uint64_t up = bits + 1;
  memcpy(cell, &up, size);
  double next = elem_get(cell, t, 0);
  if (isfinite(next))
    return next - ax;
  uint64_t down = bits - 1;
  memcpy(cell, &down, size);
  return ax - elem_get(cell, t, 0);
}

/* Array A of the first target against B of another, in ulps of type `unit`:
** the agreement, and the first element beyond the tolerance in *bad (-1:
** none). */
static Agree compare_array(const Arr *A, const Arr *B, int64_t n, jitc_dtype unit,
                           bool fast_math, int64_t *bad) {
  /* A complex array as the floats of its parts: element e is 2e and 2e+1. */
  int parts = elem_kind(A->dtype) == EK_COMPLEX ? 2 : 1;
  jitc_dtype t = elem_part_type(A->dtype);
  size_t esize = jitc_dtype_size(t);
  bool fp = elem_kind(t) == EK_FLOAT;
  double eps = ldexp(1.0, 1 - elem_mant_bits(unit));
  int64_t count = A->data.n * parts; /* n: the elements a reduction adds */
  double scale = 0;
  for (int64_t e = 0; fp && e < count; e++) {
    double x = elem_get(A->data.data, t, e);
    if (isfinite(x) && fabs(x) > scale)
      scale = fabs(x);
  }
  /* A reduction's result: its n terms were added in another order. */
  double abs_tol = (A->role == JITC_RESULT ? (double)n + 8 : 8) * eps * scale;
  n = count;
  double tol = fast_math ? 1e6 : 4;
  double ulps = 0;
  int64_t where = -1;
  *bad = -1;
  for (int64_t e = 0; e < n; e++) {
    double d = 0, x = 0, y = 0;
    if (fp) {
      x = elem_get(A->data.data, t, e);
      y = elem_get(B->data.data, t, e);
      if ((isnan(x) && isnan(y)) || x == y)
        continue;
      if (!isfinite(x) || !isfinite(y)) {
        d = INFINITY;
      } else {
        /* x's magnitude in the unit's type (rounded: a float64 x beyond
        ** float32's range has float64's spacing there). */
        double ax = fabs(x), au = fabs(elem_round(unit, x));
        d = fabs(x - y) / (isfinite(au) ? ulp_in(unit, au) : ulp_in(t, ax));
      }
    } else if (memcmp((char *)A->data.data + e * (int64_t)esize,
                      (char *)B->data.data + e * (int64_t)esize, esize)) {
      d = INFINITY;
    }
    if (d > ulps) {
      ulps = d;
      where = e;
    }
    if (*bad < 0 && d > tol && !(fp && isfinite(d) && fabs(x - y) <= abs_tol))
      *bad = e / parts;
  }
  return (Agree){ulps, unit, *bad < 0, where < 0};
}

static bool inexact(jitc_dtype t) {
  return elem_kind(t) == EK_FLOAT || elem_kind(t) == EK_COMPLEX;
}

/* The float type whose ulps measure float or complex output type t: t's
** (of its parts), or the narrowest float type the kernel computes in (a
** complex type's parts) when that is narrower. */
static jitc_dtype ulp_unit(const jitc_kernel *k, jitc_dtype t) {
  jitc_dtype unit = elem_part_type(t);
  for (int u = 0; u < JITC_NDTYPES && inexact(t); u++)
    if (inexact((jitc_dtype)u) && jitc_kernel_uses_dtype(k, (jitc_dtype)u) &&
        elem_mant_bits((jitc_dtype)u) < elem_mant_bits(unit))
      unit = elem_part_type((jitc_dtype)u);
  return unit;
}

/* The element at memory position e of a, as NumPy indexes it: "5" in 1-D,
** "(1, 2)" in N-d, whatever a's memory order. */
static void element_text(const HostArray *a, int64_t e, char *out, size_t outsz) {
  if (a->ndim == 1) {
    snprintf(out, outsz, "%lld", (long long)e);
    return;
  }
  int64_t idx[NPY_MAXDIMS];
  for (int q = 0; q < a->ndim; q++) {
    int d = a->fortran ? q : a->ndim - 1 - q;
    idx[d] = e % a->shape[d];
    e /= a->shape[d];
  }
  shape_text(idx, a->ndim, out, outsz);
}

/* Every target after the first against the first: a line per output
** (unless quiet or --json) and a message per disagreement.  EX_DISAGREE
** when any disagrees. */
int compare_targets(Run *r) {
  const Cli *cli = &r->cli;
  const Result *ref = &r->results[0];
  int status = EX_OK;
  for (int j = 1; j < r->nres; j++) {
    Result *res = &r->results[j];
    res->agree = calloc((size_t)r->narrs + 1, sizeof *res->agree);
    if (!res->agree) {
      fprintf(stderr, "jitc: out of memory\n");
      return EX_OSERR;
    }
    for (int a = 0; a < r->narrs; a++) {
      const Arr *A = &ref->arrs[a], *B = &res->arrs[a];
      if (A->role == JITC_INPUT)
        continue;
      int64_t bad;
      Agree g = compare_array(A, B, r->n, ulp_unit(ref->kernel, A->dtype),
                              cli->opt.fast_math, &bad);
      res->agree[a] = g;
      if (!cli->quiet && !cli->json)
        printf("%s: %s vs %s: largest difference %.3g ulp%s%s%s\n", A->name,
               jitc_target_name(ref->target), jitc_target_name(res->target), g.ulps,
               g.ulps_in == elem_part_type(A->dtype) ? "" : " of ",
               g.ulps_in == elem_part_type(A->dtype) ? "" : jitc_dtype_name(g.ulps_in),
               g.identical ? " (identical)" : "");
      if (bad >= 0) {
        size_t esize = jitc_dtype_size(A->dtype);
        char *x = format_value((char *)A->data.data + bad * (int64_t)esize, A->dtype);
        char *y = format_value((char *)B->data.data + bad * (int64_t)esize, A->dtype);
        char where[NPY_MAXDIMS * 22];
        element_text(&A->data, bad, where, sizeof where);
        fprintf(stderr, "jitc: targets disagree on '%s' at element %s: %s gives %s, %s "
                "gives %s\n", A->name, where, jitc_target_name(ref->target),
                x ? x : "?", jitc_target_name(res->target), y ? y : "?");
        free(x);
        free(y);
        status = EX_DISAGREE;
      }
    }
  }
  return status;
}
