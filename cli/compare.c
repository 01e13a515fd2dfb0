/*
** compare.c -- whether the targets of -t all agree: each output of each
** target against the first target's, element by element, in ulps.
**
** An element disagrees when it differs by more than 4 ulps (1e6 with
** --fast-math) and by more than 8 machine epsilons of the output's largest
** magnitude (the second allowance absorbs cancellation in sums of rounded
** terms).  A value that passed through float32 carries float32's error even
** when widened (f64(sin(x)) for float32 x, or f64(sin(f32(x))) for
** float64 x): when the program has anything in float32
** (jitc_kernel_uses_dtype), ulps and epsilons are float32's.  Integers and
** bools must be equal.  A float reduction's result (`s = sum(x)`) is the sum
** of n terms that each target adds in its own order: it may differ by
** n + 8 epsilons of its magnitude (a sum that cancels may still disagree,
** and then -t all says so).
*/
#include "cli.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double load(const HostArray *a, bool f32, int64_t e) {
  return f32 ? ((const float *)a->data)[e] : ((const double *)a->data)[e];
}

/* Array A of the first target against B of another: the agreement, and
** the first element beyond the tolerance in *bad (-1: none). */
static Agree compare_array(const Arr *A, const Arr *B, int64_t n, bool via_f32, bool fast_math,
                           int64_t *bad) {
  size_t esize = jitc_dtype_size(A->dtype);
  bool f32 = A->dtype == JITC_FLOAT32, fp = f32 || A->dtype == JITC_FLOAT64;
  bool narrow = f32 || via_f32;
  double eps = narrow ? 0x1p-23 : 0x1p-52;
  int64_t count = A->role == JITC_RESULT ? 1 : n;
  double scale = 0;
  for (int64_t e = 0; fp && e < count; e++) {
    double x = load(&A->data, f32, e);
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
      x = load(&A->data, f32, e);
      y = load(&B->data, f32, e);
      if ((isnan(x) && isnan(y)) || x == y)
        continue;
      if (!isfinite(x) || !isfinite(y)) {
        d = INFINITY;
      } else {
        double ax = fabs(x);
        double u = narrow && ax <= FLT_MAX
                       ? (double)(nextafterf((float)ax, INFINITY) - (float)ax)
                       : nextafter(ax, INFINITY) - ax;
        d = fabs(x - y) / u;
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
      *bad = e;
  }
  return (Agree){ulps, narrow && !f32, *bad < 0, where < 0};
}

/* Every target after the first against the first: a line per output
** (unless quiet or --json) and a message per disagreement.  EX_DISAGREE
** when any disagrees. */
int compare_targets(Run *r) {
  const Cli *cli = &r->cli;
  const Result *ref = &r->results[0];
  bool via_f32 = jitc_kernel_uses_dtype(ref->kernel, JITC_FLOAT32);
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
      Agree g = compare_array(A, B, r->n, via_f32, cli->opt.fast_math, &bad);
      res->agree[a] = g;
      if (!cli->quiet && !cli->json)
        printf("%s: %s vs %s: largest difference %.3g ulp%s%s\n", A->name,
               jitc_target_name(ref->target), jitc_target_name(res->target), g.ulps,
               g.ulps_of_f32 ? " of float32" : "", g.identical ? " (identical)" : "");
      if (bad >= 0) {
        size_t esize = jitc_dtype_size(A->dtype);
        char *x = format_value((char *)A->data.data + bad * (int64_t)esize, A->dtype);
        char *y = format_value((char *)B->data.data + bad * (int64_t)esize, A->dtype);
        fprintf(stderr, "jitc: targets disagree on '%s' at element %lld: %s gives %s, %s "
                "gives %s\n", A->name, (long long)bad, jitc_target_name(ref->target),
                x ? x : "?", jitc_target_name(res->target), y ? y : "?");
        free(x);
        free(y);
        status = EX_DISAGREE;
      }
    }
  }
  return status;
}
