"""fuzz_data.py -- the input arrays of tests/fuzz_diff.py: random values of
every type of the vocabulary (fuzz_vocab.py) with the edge values of that
type mixed in, or arrays made only of edge values.

Edges of an integer type: 0, small values of both signs, the counts at
which shifts of its width and of 64 bits end, its ends and their
neighbours, the square root of its largest value (where square overflows),
and the ends of every narrower integer type (where casts wrap), all that
the type holds.  Edges of a float type: F_EDGE (float64 values: the special
values, the ends and subnormals of float64 and float32, the overflow
thresholds of exp, exp2, sinh, cosh and power in float64 and float32, the
halfway points of float16 and bfloat16 rounding) rounded to the type, its
own largest value, smallest normal and subnormal values of both signs and
the thresholds of its own functions (fuzz_vocab.float_thresholds), each
with its neighbour toward zero in the type.  Edges of a complex type: every
pair of its part's special values (0, -0.0, 1, -1, 0.5, inf, -inf, NaN of
both signs, the largest, the smallest normal and subnormal values), so that
inf and NaN meet every value in either part, and random pairs of its
part's edges.  Random complex values: each part random as its float type's.
"""
import math

import numpy as np

from fuzz_vocab import apply, finfo, float_thresholds, iscomplex, isfloat

LN_MAX = 709.782712893384  # log(DBL_MAX), rounded down
D_MAX = float(np.finfo(np.float64).max)
F_MAX = float(np.finfo(np.float32).max)
F_EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -7.0, 0.1, 1e-310, -1e-310,
          2.2250738585072014e-308, 1e300, -1e300, D_MAX, -D_MAX, float("nan"), -float("nan"),
          float("inf"), float("-inf"), 709.78, -745.1, 88.72, -103.9, 2147483648.0,
          9.3e18, -9.3e18, F_MAX, -F_MAX, 1e-45, -1e-45, 1.5707963267948966, 1e22,
          # the smallest subnormals of both types, both signs
          5e-324, -5e-324, 1e-323, -1e-323, 1.401298464324817e-45, -1.401298464324817e-45,
          2.802596928649634e-45, 1.1754942106924411e-38,
          # overflow thresholds: exp/expm1, sinh/cosh, exp2, power of 10 and 2
          LN_MAX, LN_MAX - 2**-40, LN_MAX - 2**-30, LN_MAX - 2**-24, LN_MAX - 2**-21,
          LN_MAX + 1e-13, 710.4758600739439, 710.4758600739439 - 2**-22, 1024.0,
          1024 - 2**-40, 1024 - 2**-30, 1024 - 2**-22, 308.25471555991675,
          308.25471555991675 - 2**-30, 308.2547155599167 - 2**-22, -1024.0, -1074.0, -1075.0,
          88.72283935546875, 88.7228317, 89.41598510742188, 89.415985, 128.0, 127.99999,
          38.53183979, -745.1332191019411, -744.44, -708.4, -103.97, -87.33, -149.0, -150.0,
          2**-30, -2**-30, 1e-20, -1e-20,
          # float16 and bfloat16 rounding: the largest values and where rounding
          # overflows, the smallest subnormals and half of them, ties and one
          # bit beyond (float64 -> float16 rounds once, -> bfloat16 through float32)
          65504.0, 65519.99, 65520.0, -65520.0, 3.3895313892515355e38, 3.3961775292304e38,
          2**-24, 2**-25, -2**-25, 3 * 2**-26, 2**-14, 2**-133, 2**-134, -2**-134,
          1 + 2**-11, 1 + 2**-11 + 2**-30, 1 + 2**-8, 1 + 2**-8 + 2**-40, 1 + 2**-8 + 2**-20,
          2049.0, 257.0, 16777217.0]
SIZES = [0, 1, 2, 7, 15, 16, 17, 31, 33, 64, 100, 257, 1000, 4099, 20011]


def int_edges(dt, lo, hi):
    bits = dt.itemsize * 8
    vals = {0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, bits - 1, bits, bits + 1, lo, lo + 1,
            hi, hi - 1, hi // 2, hi // 2 + 1, math.isqrt(hi), math.isqrt(hi) + 1}
    for k in (7, 8, 15, 16, 31, 32, 63):
        vals |= {2**k - 1, 2**k, 2**k + 1, -2**k, -2**k - 1, -2**k + 1}
    vals |= {-v for v in list(vals) if v <= 64}
    return np.array(sorted(v for v in vals if lo <= v <= hi), dtype=dt)


def float_edges(dt):
    fi = finfo(dt)
    own = [float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
           float(fi.tiny) - float(fi.smallest_subnormal), 1 + float(fi.eps)]
    own += float_thresholds(dt)
    own += [-v for v in own]
    with np.errstate(all="ignore"):
        e = np.array(F_EDGE + own, dtype=np.float64).astype(dt)
        if dt != np.float64:
            # values beside its own thresholds and subnormals, in the type
            e = np.concatenate([e, np.nextafter(e, np.zeros(1, dt))])
    # once each, by bits (0.0 and -0.0, NaN and -NaN stay apart)
    _, first = np.unique(e.view("u%d" % dt.itemsize), return_index=True)
    return e[np.sort(first)]


def complex_edges(V, t):
    dt, part = V.np[t], V.np[V.part[t]]
    fi = finfo(part)
    key = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, -np.nan, float(fi.max),
                    float(fi.tiny), float(fi.smallest_subnormal)]).astype(part)
    re, im = np.meshgrid(key, key)
    pe = float_edges(part)
    prng = np.random.default_rng(len(pe))  # the same edges every time
    re = np.concatenate([re.ravel(), prng.choice(pe, 120)])
    im = np.concatenate([im.ravel(), prng.choice(pe, 120)])
    e = np.empty(re.size, dt)
    e.real, e.imag = re, im  # by parts: the NaNs' signs and -0.0 stay
    return e


def edges(V, t):
    dt = V.np[t]
    if dt == np.bool_:
        return np.array([False, True])
    if iscomplex(dt):
        return complex_edges(V, t)
    if dt in V.lo:
        return int_edges(dt, V.lo[dt], V.hi[dt])
    return float_edges(dt)


def make_data(V, rng, t, n, fill=None, sprinkle=True):
    """n values of type t: random values with edge cases sprinkled in (not
    with sprinkle False: a complex value's parts, whose edges are sprinkled
    as pairs); fill ("full", v) is a constant array, ("edges",) every edge
    value."""
    dt = V.np[t]
    if fill and fill[0] == "full":
        return np.full(n, fill[1], dt)
    edge = edges(V, t)
    if fill and fill[0] == "edges":
        return edge[rng.permutation(np.arange(n) % len(edge))] if n else edge[:0]
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if iscomplex(dt):
        a = np.empty(n, dt)
        a.real = make_data(V, rng, V.part[t], n, sprinkle=False)
        a.imag = make_data(V, rng, V.part[t], n, sprinkle=False)
    elif dt in V.lo:
        lo, hi = V.lo[dt], V.hi[dt]
        c = rng.random()
        if c < 0.4:
            a = rng.integers(max(lo, -100), min(hi, 100), n, endpoint=True)
        elif c < 0.7:
            a = rng.integers(max(lo, -70000), min(hi, 70000), n, endpoint=True)
        else:
            a = rng.integers(lo, hi, n, dtype=dt, endpoint=True)
        a = a.astype(dt)
    else:
        # Spread over 80 binary orders of magnitude, or over the whole range
        # of a type narrower than that (float16: its subnormals to inf).
        fi = finfo(dt)
        spread = (max(-40.0, math.log(float(fi.smallest_subnormal))),
                  min(40.0, math.log(float(fi.max)) + 1))
        c = rng.random()
        if c < 0.4:
            a = rng.standard_normal(n) * 3
        elif c < 0.7:
            a = rng.uniform(-1, 1, n)
        else:
            a = rng.standard_normal(n) * np.exp(rng.uniform(*spread, n))
        with np.errstate(all="ignore"):
            a = a.astype(dt)
    k = min(n, int(rng.integers(0, len(edge) + 1))) if sprinkle else 0
    if k:
        where = rng.choice(n, k, replace=False)
        a[where] = rng.choice(edge, k)
    return a


def nan_keep(V, funcs, ufunc):
    """Per float type, the unary functions whose NaN result keeps the sign of
    a NaN argument in NumPy here (C99 Annex F returns the argument; NumPy's
    own SIMD loops may not): only those are compared with the NaN's sign."""
    keep = {}
    for t in V.strong:
        if not isfloat(V.np[t]):
            continue
        x = np.full(37, -np.nan, V.np[t])
        with np.errstate(all="ignore"):
            keep[t] = sorted(f for f, (arity, rule) in funcs.items()
                             if arity == 1 and rule == "float" and ufunc.get(f)
                             and np.signbit(apply(ufunc[f], x)).all()
                             and np.signbit(apply(ufunc[f], x[:1])).all())
    return keep
