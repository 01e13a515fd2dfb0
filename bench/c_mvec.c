/*
** c_mvec.c -- the hand-written C loops that call transcendental functions.
**
** Compiled apart from c_loops.c with -ffast-math, because glibc's math.h only
** declares the SIMD variants of exp, sin and cos (libmvec: _ZGVeN16v_expf and
** friends, up to 4 ulp) under __FAST_MATH__; without them GCC calls scalar
** libm in the loop, which is not the limit a careful C programmer reaches.
** It also needs -fno-builtin-sin -fno-builtin-cos: otherwise GCC merges sin
** and cos of one value into a scalar sincos call before vectorising, and
** the sin**2 + cos**2 loop stays scalar.  bench/run.sh checks with nm that
** the object references the libmvec symbols (_ZGV...).
** Only these loops see -ffast-math; the program is linked without it, so the
** process does not get flush-to-zero mode.
*/
#include "bench_util.h"

#include <math.h>
#include <stdint.h>

void c_exp_f32(int64_t n, void **p, double alpha) {
  const float *a = p[0];
  float *out = p[1];
  ELEMENTWISE(n, i, out[i] = expf(a[i]););
}

void c_exp_f64(int64_t n, void **p, double alpha) {
  const double *a = p[0];
  double *out = p[1];
  ELEMENTWISE(n, i, out[i] = exp(a[i]););
}

void c_sincos_f64(int64_t n, void **p, double alpha) {
  const double *a = p[0];
  double *out = p[1];
  ELEMENTWISE(n, i, double s = sin(a[i]); double c = cos(a[i]); out[i] = s * s + c * c;);
}
