#!/usr/bin/env python3
"""t_types_cpu.py -- the element types int8, int16, uint8, uint16, uint32,
uint64, float16 and bfloat16 on the cpu target (src/cpu/convert.c, gen.c,
reduce.c), through the library, against NumPy and ml_dtypes with the
semantics of the types' contract (docs/language.md), and against interp
where interp runs the program:

  - every operator and function of ops.h on each type, on random data and
    the edges (integer ends, zero divisors, shift counts beyond the width,
    negative powers; for the 16-bit floats every one of the 65536 bit
    patterns: NaN, inf, -0.0, subnormals, the largest, values rounding to
    inf), bit for bit where float32 is exact, within one unit in the last
    place of the 16-bit type for the vector math functions; mixed pairs;
  - every cast between the 13 types, float to int saturating with NaN 0,
    one rounding into the 16-bit floats from float64 and the wide integers;
  - the reductions (unsigned order, 16-bit sums rounded once);
  - sizes 0, 1, 15, 16, 17, 33 (vector tails), threads 1 and 3: the same bits;
  - every x86-64 level the host runs (x86-64 to -v4, as the library says);
  - --emit asm: no call of a conversion helper at any level (__extendhfsf2,
    __truncsfhf2, __truncsfbf2, ...), F16C's instructions at v3 and v4.
Until the checker folds constants of the new types, programs use none.
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import math
import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reduce_lib import ROOT, BFLOAT16, JitcError, Runner, numpy_type, type_rows  # noqa: E402

if "cpu" not in os.environ.get("JITC_TARGETS", "interp cpu").split():
    print("skip types_cpu: the cpu target is not available")
    sys.exit(0)
if BFLOAT16 is None:
    print("skip types_cpu: ml_dtypes is not installed (python3 -m pip install ml_dtypes)")
    sys.exit(0)

LEVELS = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
UNAVAILABLE = 4  # JITC_E_UNAVAILABLE
FAILS = 0
R = Runner()
np.seterr(all="ignore")


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


TYPES = [T(r) for r in type_rows()]
BY = {t.name: t for t in TYPES}
NEW = TYPES[5:]  # jitc.h numbers 5 to 12: the types this group is about
INTS = [t for t in TYPES if t.kind in "iu"]
HALVES = [t for t in TYPES if t.half]
F32, F64 = BY["float32"], BY["float64"]


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print(f"FAIL types_cpu.{name}: {why}")
    else:
        print(f"ok types_cpu.{name}")


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


# ---- running ----

def run(prog, inputs, level, threads=0, n=None, scalars=None):
    """The program's outputs on the cpu target at `level` (None: native)."""
    if n is not None:
        inputs = {k: v[:n] for k, v in inputs.items()}
    return R.run(prog, inputs, "cpu", threads=threads, cpu=level, scalars=scalars)


def interp_runs_types():
    """Whether interp runs the new types (casts, integer and 16-bit float
    arithmetic give the right answers), so that cpu is compared with it."""
    try:
        got = R.run("o0 = u8(a)\no1 = f16(b)\no2 = bf16(b)\no3 = u8(a) + u8(a)",
                    {"a": np.array([300, -1], np.int32), "b": np.array([1.5, 65520], np.float32)},
                    "interp")
    except JitcError:
        return False
    return (list(got["o0"]) == [44, 255] and list(got["o1"].astype(float)) == [1.5, math.inf]
            and list(got["o2"].astype(float)) == [1.5, 65536.0] and list(got["o3"]) == [88, 254])


INTERP = interp_runs_types()


def against_interp(prog, stmts, inputs, got, refs):
    """interp's outputs o<k> must be cpu's bits, but where refs[k] allows
    ulps (the math functions of each target) or a NaN of any payload (an
    arithmetic result's)."""
    ref = R.run(prog, inputs, "interp")
    bad = []
    for k, (s, r) in enumerate(zip(stmts, refs)):
        v = ref[f"o{k}"]
        t = next(t for t in TYPES if t.np == v.dtype)
        ulps = r[2] if len(r) > 2 else 0
        nan = "any" if ulps or (len(r) > 3 and r[3] == "any") else "bits"
        why = differ(got[f"o{k}"], v, t, ulps, nan, r[4] if len(r) > 4 else None)
        if why:
            bad.append(f"{s}: {why}")
    return "; ".join(bad[:4]) or None


def program(stmts):
    return "\n".join(f"o{k} = {s}" for k, s in enumerate(stmts))


def check_outputs(name, stmts, refs, got, level_tag):
    """Compares output o<k> with refs[k] = (want, type, ulps[, nan_sign])."""
    bad = []
    for k, (s, r) in enumerate(zip(stmts, refs)):
        why = differ(got[f"o{k}"], *r)
        if why:
            bad.append(f"{s}: {why}")
    report(f"{level_tag}{name}", "; ".join(bad[:4]))


# ---- the operators and functions ----

CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
       "==": np.equal, "!=": np.not_equal}
# Exact in float32 (so exact in the 16-bit floats, computed in float32 and rounded).
FBIN = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "//": np.floor_divide,
        "%": np.remainder, "fmod": np.fmod, "minimum": np.minimum, "maximum": np.maximum,
        "fmin": np.fmin, "fmax": np.fmax, "copysign": np.copysign, "nextafter": np.nextafter}
FBIN_APPROX = {"**": np.power, "arctan2": np.arctan2, "hypot": np.hypot}
FUN = {"-": np.negative, "abs": np.abs, "sqrt": np.sqrt, "square": np.square,
       "reciprocal": lambda x: np.float32(1) / x if x.dtype == np.float32 else 1 / x,
       "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "sign": np.sign}
FUN_APPROX = ["cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
              "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"]
PRED = ["isnan", "isinf", "isfinite"]
OPERATORS = {"+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"} | set(CMP)


def call(op, *args):
    """The source of op on the named args."""
    if op in OPERATORS and len(args) == 2:
        return f"{args[0]} {op} {args[1]}"
    if op == "-" and len(args) == 1:
        return f"-{args[0]}"
    return f"{op}({', '.join(args)})"


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


ARITH = {"+", "-", "*", "/", "//", "%", "fmod", "nextafter", "sqrt", "square", "reciprocal"}


def int_pow(a, e, t):
    """a ** e wrapping; a negative e gives 1 // a ** -e (1, +-1 or 0)."""
    r = np.power(a, np.where(e < 0, 0, e).astype(t.np)) if t.kind == "i" else np.power(a, e)
    if t.kind == "i":
        odd = (e & 1) != 0
        neg = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(t.np)
        r = np.where(e < 0, neg, r)
    return r


def int_cases(t, rng):
    """(inputs, statements, refs) for integer type t."""
    a, b = pairs(t, 4000, rng)
    n = len(a)
    c, m = rand(t, n, rng), rng.random(n) < 0.5
    # shift counts and exponents: every count near the width, then any
    s = np.concatenate([np.tile(np.arange(-3, t.bits + 4), n // (t.bits + 7) + 1)[:n // 2],
                        rand(t, n - n // 2, rng).view(t.uint).astype(np.int64)]).astype(t.np)
    e = rng.integers(-3 if t.kind == "i" else 0, t.bits + 2, n).astype(t.np)
    ins = {"a": a, "b": b, "c": c, "m": m, "s": s, "e": e}
    st, refs = [], []

    def add(src, ref):
        st.append(src)
        refs.append(ref)
    same = lambda r: (r.astype(t.np), t, 0)  # noqa: E731
    for op, fn in (("+", np.add), ("-", np.subtract), ("*", np.multiply), ("//", np.floor_divide),
                   ("%", np.remainder), ("fmod", np.fmod), ("&", np.bitwise_and),
                   ("|", np.bitwise_or), ("^", np.bitwise_xor), ("minimum", np.minimum),
                   ("maximum", np.maximum), ("fmin", np.fmin), ("fmax", np.fmax)):
        add(call(op, "a", "b"), same(fn(a, b)))
    for op, fn in CMP.items():
        add(call(op, "a", "b"), (fn(a, b), BY["bool"], 0))
    add("a << s", same(np.left_shift(a, s)))
    add("a >> s", same(np.right_shift(a, s)))
    add("a ** e", same(int_pow(a, e, t)))
    add("a / b", (a.astype(np.float64) / b.astype(np.float64), F64, 0))
    add("-a", same(np.negative(a)))
    add("~a", same(np.invert(a)))
    for op, fn in (("abs", np.abs), ("square", np.square), ("sign", np.sign),
                   ("floor", lambda x: x), ("ceil", lambda x: x), ("trunc", lambda x: x)):
        add(f"{op}(a)", same(fn(a)))
    one = np.array(1, t.np)
    recip = np.where(a == 1, one, np.where(a.astype(np.int64) == -1, a, 0)) if t.kind == "i" else (a == 1)
    add("reciprocal(a)", same(recip))
    for op in PRED:
        add(f"{op}(a)", (np.full(n, op == "isfinite"), BY["bool"], 0))
    add("clip(a, b, c)", same(np.minimum(np.maximum(a, b), c)))
    add("where(m, a, b)", same(np.where(m, a, b)))
    # functions of integers give a float type (the checker's choice): the
    # reference follows the type of the output
    for op in ("sqrt", "exp", "sin"):
        add(f"{op}(a)", ("float", op))
    return ins, st, refs


def half_cases(t, rng):
    """(inputs, statements, refs) for a 16-bit float type t."""
    a, b = pairs(t, 2000, rng)
    n = len(a)
    u = np.resize(edges(t), n)  # every bit pattern, for the functions of one argument
    c, m = rand(t, n, rng), rng.random(n) < 0.5
    ins = {"a": a, "b": b, "c": c, "m": m, "u": u}
    st, refs = [], []
    picks = {"minimum": (False, True), "maximum": (True, True), "fmin": (False, False),
             "fmax": (True, False)}
    for op, fn in FBIN.items():
        st.append(call(op, "a", "b"))
        if op in picks:  # the operand's bits, NaN payloads too
            refs.append((pick_ref(t, *picks[op], a, b), t, 0, "bits"))
        elif op == "copysign":
            refs.append((bits_ref(t, a, lambda x: (x & 0x7FFF) | (b.view(np.uint16) & 0x8000)), t, 0, "bits"))
        elif op == "nextafter":  # the 16-bit type's own step (NumPy's, ml_dtypes')
            refs.append((np.nextafter(a, b), t, 0, "bits"))
        else:
            refs.append(float_ref(fn, t, a, b, arith=True))
    for op, fn in FBIN_APPROX.items():
        st.append(call(op, "a", "b"))
        refs.append(float_ref(fn, t, a, b, approx=True))
    for op, fn in CMP.items():
        st.append(call(op, "a", "b"))
        refs.append((fn(widen(a), widen(b)), BY["bool"], 0))
    for op, fn in FUN.items():
        st.append(call(op, "u"))
        if op in ("-", "abs"):
            refs.append((bits_ref(t, u, (lambda x: x ^ 0x8000) if op == "-" else (lambda x: x & 0x7FFF)),
                         t, 0, "bits"))
        else:
            refs.append(float_ref(fn, t, u, arith=op in ARITH))
    for op in FUN_APPROX:
        # a NaN argument is the result, its bits as they are (F_NANARG)
        st.append(call(op, "u"))
        want, _, ulps, _ = float_ref(getattr(np, op), t, u, approx=True)
        isnan = np.isnan(widen(u))
        refs.append((np.where(isnan, u, want), t, ulps, "any", isnan))
    for op in PRED:
        st.append(call(op, "u"))
        refs.append((getattr(np, op)(widen(u)), BY["bool"], 0))
    st.append("clip(a, b, c)")
    refs.append((pick_ref(t, False, True, pick_ref(t, True, True, a, b), c), t, 0, "bits"))
    # a * b is exact in float32 for 11-bit (and 8-bit) significands: fma is
    # a * b + c rounded once in float32
    st.append("fma(a, b, c)")
    refs.append(float_ref(lambda x, y, z: x * y + z, t, a, b, c, arith=True))
    st.append("where(m, a, b)")
    refs.append((np.where(m, a, b), t, 0, "bits"))
    return ins, st, refs


def resolve(refs, ins, got):
    """Fills the references that follow the output's type (int functions)."""
    out = []
    for k, r in enumerate(refs):
        if isinstance(r[0], str):
            ot = next(t for t in TYPES if t.np == got[f"o{k}"].dtype)
            src = next(t for t in TYPES if t.np == ins["a"].dtype)
            x = cast_ref(ins["a"], src, ot)
            r = float_ref(getattr(np, r[1]), ot, x, approx=r[1] != "sqrt", arith=True)
        out.append(r)
    return out


def test_ops(level, tag):
    for t in NEW:
        rng = np.random.default_rng(t.bits * 7 + t.size)
        ins, st, refs = half_cases(t, rng) if t.half else int_cases(t, rng)
        prog = program(st)
        try:
            got = run(prog, ins, level)
        except JitcError as e:
            report(f"{tag}ops.{t}", str(e)[:300])
            continue
        refs = resolve(refs, ins, got)
        check_outputs(f"ops.{t}", st, refs, got, tag)
        if level is None:
            if INTERP:
                report(f"interp.ops.{t}", against_interp(prog, st, ins, got, refs))
            # vector tails and threads: every prefix size, one thread or three
            bad = []
            for n in (0, 1, 15, 16, 17, 33):
                for th in (1, 3):
                    part = run(prog, ins, level, threads=th, n=n)
                    for k in part:
                        if part[k].tobytes() != got[k][:n].tobytes():
                            bad.append(f"n={n} threads={th} {k}")
            report(f"sizes.{t}", "; ".join(bad[:4]))


def test_mixed(level, tag):
    """Operands of two types: the checker's casts, then the op in the common type."""
    rng = np.random.default_rng(5)
    bad = []
    for s in TYPES:
        for u in TYPES:
            if s is u or (s not in NEW and u not in NEW):
                continue
            try:
                common = BY[np.result_type(s.np, u.np).name]
            except Exception:  # noqa: BLE001 -- NumPy refuses the pair (bfloat16's)
                continue
            a, b = values(s, 300, rng), values(u, 300, rng)
            k = min(len(a), len(b))
            a, b = a[rng.permutation(len(a))][:k], b[rng.permutation(len(b))][:k]
            x, y = cast_ref(a, s, common), cast_ref(b, u, common)
            ops = ["+", "*", "maximum", "where(m, a, b)"] + (["//"] if common.kind != "b" else [])
            signed_u64 = {s.kind, u.kind} == {"i", "u"} and 8 in (s.size, u.size) and common.kind == "f"
            if not signed_u64:  # exact compares of signed with uint64: the checker's rewrite
                ops += ["<", "=="]
            m = rng.random(k) < 0.5
            st = [o if "(" in o else call(o, "a", "b") for o in ops]
            try:
                got = run(program(st), {"a": a, "b": b, "m": m}, level)
            except JitcError as e:
                bad.append(f"{s}, {u}: {str(e)[:120]}")
                continue
            for j, o in enumerate(ops):
                fn = {"+": np.add, "*": np.multiply, "maximum": np.maximum, "//": np.floor_divide,
                      "<": np.less, "==": np.equal}.get(o, lambda p, q: np.where(m, p, q))
                if common.kind == "b" and o in ("+", "*", "maximum"):
                    fn = {"+": np.logical_or, "*": np.logical_and, "maximum": np.logical_or}[o]
                if common.half and o == "maximum":
                    want = (pick_ref(common, True, True, x, y), common, 0, "bits")
                elif o.startswith("where"):
                    want = (np.where(m, x, y), common, 0, "bits")
                elif o in CMP:
                    want = (fn(widen(x), widen(y)) if common.half else fn(x, y), BY["bool"], 0)
                elif common.kind == "f":
                    want = float_ref(fn, common, x, y, arith=o in ARITH)
                else:
                    want = (fn(x, y).astype(common.np), common, 0)
                why = differ(got[f"o{j}"], *want)
                if why:
                    bad.append(f"{s} {o} {u}: {why}")
    report(f"{tag}mixed_pairs", "; ".join(bad[:5]))


# ---- casts ----

def cast_data(s, rng):
    """Values of s for the casts: edges, random, and the rounding cases."""
    v = values(s, 3000 if not s.half else 0, rng)
    if s.kind in "iu" and s.size >= 4:
        # integers at the float types' rounding points: 2^k + halfway +- 1
        extra = []
        for k in range(8, s.bits - (s.kind == "i")):
            for h in (k - 24, k - 11, k - 8):
                if h >= 1:
                    for d in (-1, 0, 1):
                        extra += [(1 << k) + (1 << h) + d, (1 << k) + 3 * (1 << h) + d]
        extra = [x for x in extra if s.lo <= x <= s.hi]
        extra += [-x for x in extra if s.kind == "i" and -x >= s.lo]
        v = np.concatenate([v, np.array(extra, dtype=object).astype(s.np)])
    if s.kind == "f" and not s.half:
        # halfway between float16 and bfloat16 neighbours, and a hair off
        h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        f16 = widen(h.view(np.float16)).astype(np.float64)
        bf = widen(h.view(BFLOAT16)).astype(np.float64)
        mids = []
        for w in (f16, bf):
            w = w[np.isfinite(w)]
            w = np.unique(w)
            mid = (w[:-1] + w[1:]) / 2
            mids += [mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
        mids = np.concatenate(mids)
        mids = mids[rng.integers(0, len(mids), 6000)]
        if s.size == 4:
            mids = np.concatenate([mids.astype(np.float32),
                                   np.nextafter(mids.astype(np.float32), np.float32(np.inf))])
        v = np.concatenate([v, mids.astype(s.np)])
    return v


def test_casts(level, tag):
    for s in TYPES:
        rng = np.random.default_rng(11 + s.size)
        a = cast_data(s, rng)
        st = [f"{t.short}(a)" for t in TYPES]
        try:
            got = run(program(st), {"a": a}, level)
        except JitcError as e:
            report(f"{tag}casts.from_{s}", str(e)[:300])
            continue
        refs = [(cast_ref(a, s, t), t, 0, "bits") for t in TYPES]
        check_outputs(f"casts.from_{s}", st, refs, got, tag)
        if level is None and INTERP:
            report(f"interp.casts.from_{s}", against_interp(program(st), st, {"a": a}, got, refs))


# ---- constants and scalars ----

def folds_new_constants():
    """Whether the checker gives constants and scalars of the new types
    their values (uint8 + 1 is 2 where a is 1)."""
    try:
        got = run("b = a + 1\nc = a + s", {"a": np.ones(2, np.uint8)}, None,
                  scalars={"s": (3, TYPES.index(BY["uint8"]))})
    except JitcError:
        return False
    return list(got["b"]) == [2, 2] and list(got["c"]) == [4, 4]


def const_array(v, t, n):
    """n copies of literal v as type t, which it meets (NEP 50)."""
    if t.kind == "f":
        return cast_ref(np.full(n, float(v)), F64, t)
    return np.full(n, v, dtype=object).astype(t.np)


def test_constants(level, tag):
    """Literals and typed scalars of each type, as the constant or slot the
    kernel reads (a 16-bit float's bits from its float64 value)."""
    rng = np.random.default_rng(3)
    for t in NEW:
        a = edges(t) if t.half else values(t, 2000, rng)  # every 16-bit pattern, NaNs too
        n = len(a)
        big = min(t.hi, 2 ** 63 - 1) if t.kind != "f" else 0  # a literal is at most int64's
        # 1, -1 and -0.0 are identities LLVM may fold (x * 1.0 is x): the
        # result must still be computed, a signalling NaN made quiet
        lit = [1, -1, 3, 2.5, -0.0, 0.1, 65504, 1e-7] if t.half else [1, 3, 7, big, t.lo]
        sv = 0.1 if t.half else big - 1
        st = [f"a * {v!r}" if t.half else f"a + {v}" for v in lit] + ["a + s", "maximum(a, s)"]
        try:
            got = run(program(st), {"a": a}, level, scalars={"s": (sv, TYPES.index(t))})
        except JitcError as e:
            report(f"{tag}constants.{t}", str(e)[:300])
            continue
        refs = []
        for k, v in enumerate(lit):
            # a Python float with bfloat16 is float32 (ml_dtypes' promotion)
            ot = next(u for u in TYPES if u.np == got[f"o{k}"].dtype)
            c = const_array(v, ot, n)
            x = a if ot is t else cast_ref(a, t, ot)
            refs.append(float_ref(np.multiply, ot, x, c, arith=True) if ot.kind == "f" else
                        (x + c, ot, 0))
        c = const_array(sv, t, n)
        refs.append(float_ref(np.add, t, a, c, arith=True) if t.half else (a + c, t, 0))
        refs.append((pick_ref(t, True, True, a, c), t, 0, "bits") if t.half else
                    (np.maximum(a, c), t, 0))
        check_outputs(f"constants.{t}", st, refs, got, tag)
    # the programs of the benchmarks (bench/types_cpu.py)
    x = rand(BY["uint8"], 1003, rng)
    h = [values(BY["float16"], 1003, rng)[rng.permutation(1 << 16)][:1003] for _ in range(2)]
    got = run("y = (f32(x) - 127.5) / 127.5", {"x": x}, level)
    want = (x.astype(np.float32) - np.float32(127.5)) / np.float32(127.5)
    why = differ(got["y"], want, F32)
    got = run("c = a * b + 1", {"a": h[0], "b": h[1]}, level)
    f16 = BY["float16"]
    want = float_ref(np.add, f16, float_ref(np.multiply, f16, h[0], h[1])[0], np.ones(1003, np.float16))
    why = why or differ(got["c"], *want)
    report(f"{tag}constants.bench_programs", why)


# ---- reductions ----

with open(os.path.join(ROOT, "src", "cpu", "cpu.h")) as f:
    RB = int(next(line.split()[2] for line in f if line.startswith("#define RB ")))
ROPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]
NOID = {"min", "max", "argmin", "argmax"}


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


def reduce_ref(op, a, t):
    """(value, type, ulps) of reduction op over a of type t."""
    n = len(a)
    x = widen(a) if t.half else a
    if op in ("any", "all"):
        return getattr(np, op)(x != 0), BY["bool"], 0
    if op in ("argmin", "argmax"):
        return np.int64(getattr(np, op)(x)), BY["int64"], 0
    if op in ("min", "max"):
        nan = np.isnan(x) if t.kind == "f" else np.zeros(n, bool)
        if nan.any():  # the first NaN
            return a[np.argmax(nan)], t, 0
        return getattr(np, op)(a if not t.half else x).astype(t.np), t, 0
    if t.half:
        if op == "prod":  # float32 products, rounded once: within an ulp
            return np.prod(x.astype(np.float64)).astype(t.np), t, 1, False
        if op == "mean" and n == 0:
            return np.array(np.nan, t.np), t, 0, False
        ok = n <= RB  # beyond, float64's lanes need not be exact
        return fsum_ref(x.astype(np.float64), t, op == "mean"), t, 0 if ok else 1, False
    wide = BY["uint64"] if t.kind == "u" else BY["int64"]
    if op == "mean":
        return np.float64(np.mean(a.astype(np.float64))) if n else np.float64(np.nan), F64, 16
    f = np.sum if op == "sum" else np.prod
    return f(a.astype(wide.np)), wide, 0


def test_reductions(level, tag):
    for t in NEW:
        rng = np.random.default_rng(t.size * 3 + t.bits)
        bad = []
        prog = "\n".join(f"r_{op} = {op}(a)" for op in ROPS)
        noid = "\n".join(f"r_{op} = {op}(a)" for op in ROPS if op not in NOID)
        for n in (0, 1, 15, 17, RB - 1, RB + 1, 3 * RB + 5):
            for kind in ("edges", "plain"):
                a = values(t, n, rng)[rng.permutation(max(n, len(edges(t))))][:n] \
                    if kind == "edges" else rand(t, n, rng)
                if t.half and kind == "plain":  # no inf or NaN: sums to check
                    a = (rng.standard_normal(n) * 4).astype(np.float32).astype(t.np)
                try:
                    got = run(prog if n else noid, {"a": a}, level)
                except JitcError as e:
                    bad.append(f"n={n}: {str(e)[:200]}")
                    continue
                for op in ROPS:
                    if f"r_{op}" not in got:
                        continue
                    if op == "prod" and t.half and kind == "edges":
                        continue  # float32's overflow depends on the order
                    want, rt, *tol = reduce_ref(op, a, t)
                    g = np.array([got[f"r_{op}"]])
                    why = differ(g, np.array([want], rt.np), rt, *tol)
                    if why and op == "mean" and rt is F64:
                        why = None if math.isclose(float(g[0]), float(want), rel_tol=1e-12) or \
                            (math.isnan(g[0]) and math.isnan(want)) else why
                    if why:
                        bad.append(f"n={n} {kind} {op}: got {g[0]!r} want {want!r}")
                if level is None and n == 3 * RB + 5:
                    # the same bits on one thread, two, three and all
                    for th in (1, 2, 3):
                        other = run(prog, {"a": a}, level, threads=th)
                        diff = [k for k in got if np.asarray(got[k]).tobytes() !=
                                np.asarray(other[k]).tobytes()]
                        if diff:
                            bad.append(f"threads={th}: {diff} differ")
        report(f"{tag}reduce.{t}", "; ".join(bad[:4]))
    # 16-bit sums round once: 2048 + 1 + 1 is 2050, not 2048 (float16, per
    # step), and the sum of many small values is not stuck
    a = np.array([2048, 1, 1], np.float16)
    got = run("s = sum(a)\nm = mean(a)", {"a": a}, level)
    bf = np.array([256, 1, 1], BFLOAT16)
    gotb = run("s = sum(a)", {"a": bf}, level)
    why = [f"{nm} {g!r} want {w!r}" for nm, g, w in (("f16 sum", got["s"], 2050.0),
                                                     ("f16 mean", got["m"], np.float16(2050 / 3)),
                                                     ("bf16 sum", gotb["s"], 258.0)) if g != w]
    report(f"{tag}reduce.rounded_once", "; ".join(why))


# ---- the code ----

def test_asm():
    """No scalar conversion helper at any level; F16C at v3 and v4."""
    prog = "\n".join(["x = f32(h) * f32(g)", "y = f16(d)", "z = bf16(d)", "w = bf16(x)",
                      "v = h * h + h", "u = g * g", "k = f16(q)", "j = bf16(q)", "s = sum(h)",
                      "t = max(g)", "r = u8(h) + u8(g)"])
    dt = {"h": 11, "g": 12, "d": 4, "q": 2}
    bad = []
    for lv in LEVELS:
        try:
            text = R.emit(prog, dt, "cpu", "asm", cpu=lv)
        except JitcError as e:
            bad.append(f"{lv}: {str(e)[:200]}")
            continue
        calls = sorted({ln.split()[-1] for ln in text.splitlines()
                        if "call" in ln and ("hf" in ln or "bf" in ln or "__" in ln)})
        if calls:
            bad.append(f"{lv} calls {calls}")
        if lv in ("x86-64-v3", "x86-64-v4") and ("vcvtph2ps" not in text or "vcvtps2ph" not in text):
            bad.append(f"{lv}: no vcvtph2ps/vcvtps2ph")
    report("asm_no_conversion_calls", "; ".join(bad))


def available(level):
    try:
        R.run("b = a + a", {"a": np.ones(3, np.uint8)}, "cpu", cpu=level)
        return True
    except JitcError as e:
        if e.status != UNAVAILABLE:
            raise
        return False


if __name__ == "__main__":
    if not INTERP:
        print("skip types_cpu.interp: interp does not run the new types yet (compared with NumPy only)")
    CONSTANTS = folds_new_constants()
    if not CONSTANTS:
        print("skip types_cpu.constants: the checker does not give constants and scalars of "
              "the new types their values yet")
    test_ops(None, "")
    test_casts(None, "")
    if CONSTANTS:
        test_constants(None, "")
    test_mixed(None, "")
    test_reductions(None, "")
    test_asm()
    for lv in LEVELS:
        if not available(lv):
            print(f"skip types_cpu[{lv}]: this host cannot run code for it")
            continue
        tag = f"[{lv}]."
        test_ops(lv, tag)
        test_casts(lv, tag)
        if CONSTANTS:
            test_constants(lv, tag)
        test_mixed(lv, tag)
        test_reductions(lv, tag)
    R.close()
    sys.exit(1 if FAILS else 0)
