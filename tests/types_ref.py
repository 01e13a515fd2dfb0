"""types_ref.py -- the contract of the element types (docs/language.md) as
NumPy and ml_dtypes compute it, for the tests of each target
(tests/t_types_cpu.py): the types of src/types.h, the exact roundings and
the saturating casts, the float16 and bfloat16 rules (each operation in
float32, then rounded; NaN quiet, picks keeping the operands' bits), data
with the edges of each type, and the comparison of results bit for bit."""
import math
from fractions import Fraction

import numpy as np

from reduce_lib import numpy_type, type_rows


class T:
    """A type of the table: name, short (its cast), kind, size, NumPy dtype."""

    def __init__(self, row):
        self.name, self.short, self.kind, self.size = row["name"], row["short"], row["kind"], row["size"]
        self.np = np.dtype(numpy_type(self.name))
        self.half = self.kind == "f" and self.size == 2
        self.bits = 8 * self.size
        self.uint = np.dtype(f"u{self.size}")
        if self.kind in "iu":
            info = np.iinfo(self.np)
            self.lo, self.hi = int(info.min), int(info.max)
        elif self.kind == "b":
            self.lo, self.hi = 0, 1
        # fraction and exponent bits of a float
        self.man = {2: 10 if self.name == "float16" else 7, 4: 23, 8: 52}.get(self.size)
        self.ex = self.bits - 1 - self.man if self.kind == "f" else None

    def __repr__(self):
        return self.name


# The real types (complex64 and complex128 are the complex group's).
TYPES = [T(r) for r in type_rows() if r["kind"] != "c"]
BY = {t.name: t for t in TYPES}
NEW = TYPES[5:]  # jitc.h numbers 5 to 12: the types added to the first five
F32, F64 = BY["float32"], BY["float64"]


# ---- reference semantics ----

def widen(a):
    """A 16-bit float array's float32 values: exact, a NaN made quiet (the
    contract: a NaN of a 16-bit float is quiet; F16C's widening quiets it)."""
    f = a.astype(np.float32)
    u = f.view(np.uint32)
    return np.where(np.isnan(f), u | np.uint32(0x00400000), u).view(np.float32)


def round_to(x, t):
    """x (a finite Python float or int) rounded to nearest even in float type
    t, computed exactly: a Python float (inf where it overflows)."""
    f = Fraction(x)
    if f == 0:
        return math.copysign(0.0, x) if isinstance(x, float) else 0.0
    s = -1 if f < 0 else 1
    a = abs(f)
    bias = 2 ** (t.ex - 1) - 1
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, 1 - bias)
    unit = Fraction(2) ** (e - t.man)
    v = round(a / unit) * unit  # Fraction's round: half to even
    if v > (2 - Fraction(1, 2 ** t.man)) * Fraction(2) ** bias:
        return s * math.inf
    return s * float(v)


def exact_to(vals, t):
    """Python numbers (or NaN) rounded once to float type t, as an array."""
    out = [v if isinstance(v, float) and (math.isnan(v) or math.isinf(v)) else round_to(v, t)
           for v in vals]
    return np.array(out, np.float64).astype(t.np)  # exact: already values of t


def sat_int(vals, t):
    """Float values truncated toward zero, saturated to int type t, NaN 0."""
    out = []
    for x in vals:
        x = float(x)
        v = 0 if math.isnan(x) else (t.hi if x > 0 else t.lo) if math.isinf(x) else math.trunc(x)
        out.append(min(max(v, t.lo), t.hi))
    return np.array(out, dtype=t.np)


def nan_bits(a, s, t):
    """The bits of the NaN that a float NaN of type s (array a) becomes in
    16-bit float type t: quiet, with its sign; float16 keeps the top of the
    payload (as F16C), bfloat16 is ml_dtypes' NaN."""
    if s.size == 8:
        u = a.view(np.uint64)
        sign, top = (u >> np.uint64(48)) & np.uint64(0x8000), (u >> np.uint64(42)) & np.uint64(0x3FF)
    else:
        u = (widen(a) if s.half else a).view(np.uint32)
        sign, top = (u >> np.uint32(16)) & np.uint32(0x8000), (u >> np.uint32(13)) & np.uint32(0x3FF)
    return (sign | (top | 0x7E00 if t.name == "float16" else 0x7FC0)).astype(np.uint16)


def cast_ref(a, s, t):
    """The cast of array a of type s to type t, by the contract."""
    if s is t:
        return a.copy()
    if t.half and s.kind == "f":
        r = cast_value(a, s, t)
        isnan = nan_of(a, s)
        return np.where(isnan, nan_bits(a, s, t), r.view(np.uint16)).view(t.np)
    return cast_value(a, s, t)


def cast_value(a, s, t):
    if t.kind == "b":
        return (widen(a) if s.half else a) != 0
    if s.kind == "b":
        return a.astype(t.np)
    if s.kind in "iu" and t.kind in "iu":
        return a.astype(t.np)  # wraps
    if t.kind in "iu":
        return sat_int(widen(a) if s.half else a, t)
    if t.name == "bfloat16" and (s.kind in "iu" or s.size == 8):
        # ml_dtypes: through the nearest float32, two roundings
        with np.errstate(over="ignore"):
            return exact_to([float(np.float32(v)) for v in a], t)
    if t.half and (s.kind in "iu" or s.size == 8):
        return exact_to([int(v) for v in a] if s.kind in "iu" else [float(v) for v in a], t)
    if s.half:
        a = widen(a)
    return a.astype(t.np)  # exact, or float32 -> 16 bits and float64 -> float32: one rounding


def nan_of(a, t):
    return np.isnan(widen(a)) if t.half else np.isnan(a) if t.kind == "f" else np.zeros(len(a), bool)


def ordered(a, t):
    """Float bits as integers in the order of the values (for ulps)."""
    u = a.view(t.uint).astype(np.int64) if t.size < 8 else a.view(np.int64)
    sign = np.int64(1) << (t.bits - 1)
    mag = u & (sign - 1) if t.size < 8 else u & np.int64(0x7FFFFFFFFFFFFFFF)
    return np.where(u & sign if t.size < 8 else u < 0, -mag, mag)


def differ(got, want, t, ulps=0, nan="sign", exact=None):
    """Why got (type t) is not want: None if equal.  Floats: the same bits;
    ulps allows that many units in the last place; where want is NaN, got
    must be a NaN with the same bits (nan "bits"), or (a 16-bit one quiet)
    with the same sign ("sign") or any sign ("any": an arithmetic result's
    NaN has the machine's sign).  exact: a mask of lanes whose bits must be
    want's whatever it is."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"dtype/shape {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
    g, w = got.view(t.uint), want.view(t.uint)
    if t.kind != "f":
        bad = g != w
    else:
        gn, wn = nan_of(got, t), nan_of(want, t)
        sign = np.array(1 << (t.bits - 1), t.uint)
        bad = gn != wn
        if nan == "bits":
            bad |= gn & wn & (g != w)
        else:
            if nan == "sign":
                bad |= gn & wn & ((g & sign) != (w & sign))
            if t.half:  # quiet, where not exactly an operand's bits
                quiet = (g & np.array(1 << (t.man - 1), t.uint)) != 0
                bad |= gn & ~quiet & (True if exact is None else ~exact)
        num = ~gn & ~wn
        if ulps:
            bad |= num & (np.abs(ordered(got, t) - ordered(want, t)) > ulps)
        else:
            bad |= num & (g != w)
    if exact is not None:
        bad |= exact & (g != w)
    idx = np.nonzero(bad)[0]
    if not len(idx):
        return None
    k = idx[:3]
    return (f"{len(idx)} of {len(got)} differ, e.g. at {list(k)}: got "
            f"{[hex(int(x)) for x in g[k]]} want {[hex(int(x)) for x in w[k]]}")


# ---- data ----

def edges(t):
    """Edge values of type t."""
    if t.kind == "b":
        return np.array([False, True])
    if t.kind in "iu":
        v = {t.lo, t.lo + 1, t.hi, t.hi - 1, 0, 1, 2, 3, 7, t.hi // 2, t.hi // 2 + 1}
        if t.kind == "i":
            v |= {-1, -2, -3, -7, t.lo // 2}
        return np.array(sorted(v), dtype=t.np)
    if t.half:
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(t.np)  # every pattern
    info = np.finfo(t.np)
    v = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, np.inf, -np.inf, np.nan, -np.nan,
         float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal),
         65504.0, 65519.99, 65520.0, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14,
         3.3895313892515355e38, 3.4e38, 2.0 ** 24 + 1, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63, 2.0 ** 64,
         -2.0 ** 63, 4294967295.5, 255.5, 256.0, -128.5, -129.0, 127.9, 1e30, -1e30]
    if t.size == 8:
        v += [1 + 2.0 ** -11 + 2.0 ** -30, 1 + 2.0 ** -8 + 2.0 ** -40, 1 + 2.0 ** -11, 1e300,
              5e-324, 2.0 ** 53, 2.0 ** 64 - 2048]
    return np.array(v, t.np)


def rand(t, n, rng):
    """n random values of type t over its whole range."""
    if t.kind == "b":
        return rng.random(n) < 0.5
    if t.kind in "iu":
        return rng.integers(0, 1 << t.bits, n, dtype=np.uint64).astype(t.uint).view(t.np)
    if t.half:
        return rng.integers(0, 1 << 16, n).astype(np.uint16).view(t.np)
    # float32/float64: half normal values, half any bit pattern
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)).astype(t.np)
    pat = rng.integers(0, 1 << 62, n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, n, dtype=np.uint64)
    pat = pat.astype(t.uint).view(t.np)
    return np.where(rng.random(n) < 0.5, x, pat)


def values(t, n, rng):
    """Edges then random values of t, n in all (at least the edges)."""
    e = edges(t)
    return np.concatenate([e, rand(t, max(0, n - len(e)), rng)])


def pairs(t, n, rng):
    """Two arrays of t: every pair of edges (sampled for the 16-bit floats), then random."""
    e = edges(t)
    if len(e) > 64:
        e = np.concatenate([e[rng.integers(0, len(e), 300)], np.array(
            [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504, 2.0 ** -24, 0.5, 2, 3],
            np.float32).astype(t.np)])
    a, b = np.repeat(e, len(e)), np.tile(e, len(e))
    m = max(0, n - len(a))
    return np.concatenate([a, rand(t, m, rng)]), np.concatenate([b, rand(t, m, rng)])


# ---- the operations ----

def float_ref(fn, t, *xs, approx=False, arith=False):
    """fn on float type t by the contract: the 16-bit floats in float32,
    then rounded.  (want, t, ulps, nan mode) for check_outputs: an
    arithmetic result's NaN (arith, approx) may have either sign."""
    ct = np.float32 if t.half else t.np
    r = fn(*[widen(x) if t.half else x.astype(ct) for x in xs])
    if r.dtype == np.bool_:
        return r, BY["bool"], 0
    return r.astype(t.np), t, (1 if t.half else 4) if approx else 0, "any" if arith or approx else "sign"


def pick_ref(t, max_, nan_a, a, b):
    """minimum, maximum (nan_a) or fmin, fmax of 16-bit floats: one
    operand's bits, as it is."""
    wa, wb = widen(a), widen(b)
    c = (wa > wb if max_ else wa < wb) | np.isnan(wa if nan_a else wb)
    return np.where(c, a, b)


def bits_ref(t, a, fn):
    """An operation on the bits of a 16-bit float array."""
    return fn(a.view(np.uint16)).astype(np.uint16).view(t.np)


def int_pow(a, e, t):
    """a ** e wrapping; a negative e gives 1 // a ** -e (1, +-1 or 0)."""
    r = np.power(a, np.where(e < 0, 0, e).astype(t.np)) if t.kind == "i" else np.power(a, e)
    if t.kind == "i":
        odd = (e & 1) != 0
        neg = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(t.np)
        r = np.where(e < 0, neg, r)
    return r


def const_array(v, t, n):
    """n copies of literal v as type t, which it meets (NEP 50)."""
    if t.kind == "f":
        return cast_ref(np.full(n, float(v)), F64, t)
    return np.full(n, v, dtype=object).astype(t.np)


def fsum_ref(x, t, mean=False):
    """The sum (or mean) of float values x (float64), rounded once to t."""
    if np.isnan(x).any() or (np.isinf(x).any() and len(set(x[np.isinf(x)])) > 1):
        return np.array([np.nan], np.float64).astype(t.np)[0]
    if np.isinf(x).any():
        return np.array([x[np.isinf(x)][0]]).astype(t.np)[0]
    s = Fraction(0)
    for v in x:
        s += Fraction(float(v))
    if mean:
        s = Fraction(float(s / len(x))) if len(x) else Fraction(0)
    return np.array([round_to(s, t) if s else 0.0]).astype(t.np)[0]
