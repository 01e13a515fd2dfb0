"""exact.py -- reference values computed exactly, for the differential tests
(t_diff.py, fuzz_diff.py): NumPy has no fused multiply-add, and rounding a
rational to float32 through float64 can round twice."""
import math
from fractions import Fraction

import numpy as np


def round_f32(q):
    """The float32 nearest to the rational q, ties to even, without double
    rounding (q rounded to float64 first can land on a float32 midpoint)."""
    try:
        d = float(q)
    except OverflowError:
        return np.float32(np.inf if q > 0 else -np.inf)
    f = np.float32(d)
    if Fraction(d) == q or not np.isfinite(f):
        return f
    lo = f if float(f) <= d else np.nextafter(f, np.float32(-np.inf))
    hi = np.nextafter(lo, np.float32(np.inf))
    if not np.isfinite(hi) or not np.isfinite(lo):
        return f
    mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
    if Fraction(d) != mid:
        return f
    if q > mid:
        return hi
    if q < mid:
        return lo
    return f


def fma(x, y, z):
    """C's fma, x * y + z with one rounding, element by element, in the
    promoted float type (ints become float64)."""
    t = np.result_type(x, y, z)
    t = t if t.kind == "f" else np.dtype(np.float64)
    x, y, z = (np.asarray(v).astype(t) for v in (x, y, z))
    with np.errstate(all="ignore"):
        out = (x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)).astype(t)
    for k in range(x.size):
        a, b, c = float(x.flat[k]), float(y.flat[k]), float(z.flat[k])
        if not (math.isfinite(a) and math.isfinite(b)):
            continue  # x * y is inf or NaN exactly as the plain expression has it
        if not math.isfinite(c):
            out.flat[k] = c  # the exact product is finite, even where x * y overflows
            continue
        q = Fraction(a) * Fraction(b) + Fraction(c)
        if q == 0:
            continue  # the sign of an exact zero: the plain expression has it
        if t == np.float32:
            out.flat[k] = round_f32(q)
        else:
            try:
                out.flat[k] = float(q)
            except OverflowError:
                out.flat[k] = np.inf if q > 0 else -np.inf
    return out
