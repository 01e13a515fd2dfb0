/*
** npymath.c -- math functions whose results must equal NumPy's bit for bit.
**
** NumPy evaluates float32 exp on x86-64 with its own vector loop, not with
** the C library: a Cody-Waite reduction x = k*ln2 + y followed by a ratio of
** minimax polynomials (degree 5 over degree 2), at most 2.52 ulp from the
** correctly rounded result.  Its results differ from glibc's expf in the
** last bit for about a third of all inputs, so the reference interpreter
** uses the same evaluation (every step rounded as NumPy rounds it, with
** fused multiply-adds) and prints exactly what NumPy prints.  Checked
** against np.exp on two million inputs spanning the whole finite range
** (tests/t_diff.py keeps checking it).
*/
#include "jitc_int.h"

#include <math.h>

float npy_expf(float x) {
  /* Above xmax the result overflows; below xmin it is below the smallest subnormal. */
  const float xmax = 88.72283935546875f, xmin = -103.97208404541015625f;
  if (isnan(x))
    return x;
  if (x > xmax)
    return INFINITY;
  if (x < xmin)
    return 0.0f;
  float k = rintf(x * 1.442695040888963407359924681001892137f); /* x / ln 2 */
  /* y = x - k*ln2, with ln2 split in a high and a low part (Cody-Waite). */
  float y = fmaf(k, -6.93145752e-1f, x);
  y = fmaf(k, -1.42860677e-6f, y);
  float p = fmaf(5.082762527590693718096e-04f, y, 6.757896990527504603057e-03f);
  p = fmaf(p, y, 5.114512081637298353406e-02f);
  p = fmaf(p, y, 2.473615434895520810817e-01f);
  p = fmaf(p, y, 7.257664613233124478488e-01f);
  p = fmaf(p, y, 9.999999999980870924916e-01f);
  float q = fmaf(2.159509375685829852307e-02f, y, -2.742335390411667452936e-01f);
  q = fmaf(q, y, 1.0f);
  return ldexpf(p / q, (int)k); /* k is in [-150, 128]: the conversion is exact */
}
