#!/usr/bin/env python3
"""t_diff.py -- differential tests: jitc's results against NumPy's.

Each case is a jitc program, input arrays and, per output, the value NumPy
computes for it (NumPy 2 semantics, NEP 50: literals are written as Python
scalars so that promotion matches).  The program runs through the CLI:

    jitc -t TARGET -q --in a=A.npy ... --out o=O.npy ... [-D s=V[:T]] 'PROGRAM'

and every output file is compared with NumPy's value, dtype included:
exactly (bit for bit, any NaN equal to any NaN, -0.0 distinct from 0.0) for
integer, bool and exactly rounded float results, within a few ulp for the
transcendental functions.  Where jitc defines what NumPy leaves undefined
(float-to-int casts of NaN and huge values, integer powers with negative
exponents, integer reciprocal of 0) the expected value is computed here by
the rule of docs/language.md.

Small cases are batched: one program with one output per operator or
function, so that a few hundred checks cost one process start.  When a
batched program is rejected, its statements are run one by one to name the
culprit.

Environment:
  JITC          the binary (default build/jitc)
  JITC_TARGETS  targets to test, space separated (default "interp"); every
                target is compared with NumPy and, unless it is interp,
                with interp's output
  JITC_ULP_<T>  ulp tolerance of target T against interp for the functions
                that are not exactly rounded (default: interp 0, others 4)
  JITC_NUMPY_ULP  tolerance of interp against NumPy for those (default 4)
  JITC_DIFF_SEED  random seed (default 20240601)
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why" per case.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import exact

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
TARGETS = os.environ.get("JITC_TARGETS", "interp").split() or ["interp"]
SEED = int(os.environ.get("JITC_DIFF_SEED", "20240601"))

# Tolerances, in units in the last place, for results that are not exactly
# rounded.  NumPy itself uses its own SIMD versions of many functions (SVML
# on AVX-512 machines, its own float32 exp/log/sin/cos), each within about
# 4 ulp of the true value, while interp uses the C library (glibc: within
# 1-2 ulp).  So NumPy and interp may differ by NUMPY_ULP; another target
# may differ from interp by its stated accuracy, and from NumPy by both.
NUMPY_ULP = int(os.environ.get("JITC_NUMPY_ULP", "4"))


def target_ulp(t):
    default = 0 if t == "interp" else 4
    return int(os.environ.get("JITC_ULP_" + t.upper(), default))


EXACT = "exact"
ULP = "ulp"
EXACT_INTERP = "exact on interp"  # bit for bit on interp, within the tolerance elsewhere

B, I32, I64, F32, F64 = (np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64),
                         np.dtype(np.float32), np.dtype(np.float64))
DTYPES = [B, I32, I64, F32, F64]
SHORT = {B: "bool", I32: "int32", I64: "int64", F32: "float32", F64: "float64"}

rng = np.random.default_rng(SEED)
np.seterr(all="ignore")

# ---------------------------------------------------------------------------
# Edge data
# ---------------------------------------------------------------------------

F_EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 7.25, 0.1,
          100.0, 1e-310, 2.2250738585072014e-308, 1e300, -1e300, 1.7976931348623157e308,
          float("nan"), float("inf"), float("-inf"), 9007199254740993.0]
F32_EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 7.25, 0.1,
            100.0, 1e-40, 1.1754943508222875e-38, 1e30, -1e30, 3.4028234663852886e38,
            float("nan"), float("inf"), float("-inf"), 16777217.0]
# Values at the edges of the float -> int conversions.
CAST_EDGE = [2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 2147483647.5,
             -2147483648.5, 9.223372036854775807e18, -9.223372036854775808e18, 1e19, -1e19,
             0.9, -0.9, 1e10, -1e10, 4294967296.0, -0.0]
I32_EDGE = [0, 1, -1, 2, -2, 3, -3, 7, -7, 10, 31, 32, 33, -32, 63, 64, 65, 100, -100, 46341,
            2**31 - 1, -2**31, 2**31 - 2, -2**31 + 1]
I64_EDGE = [0, 1, -1, 2, -2, 3, -3, 7, -7, 10, 31, 32, 33, 63, 64, 65, -64, 3037000500,
            -3037000500, 2**63 - 1, -2**63, 2**63 - 2, -2**63 + 1, 2**31]
B_EDGE = [False, True]


def edges(dt):
    return np.array({B: B_EDGE, I32: I32_EDGE, I64: I64_EDGE, F32: F32_EDGE, F64: F_EDGE}[dt],
                    dtype=dt)


def rand(dt, n):
    """n random values of dtype dt: a mix of small and large magnitudes."""
    if dt == B:
        return rng.integers(0, 2, n).astype(B)
    if dt.kind == "i":
        info = np.iinfo(dt)
        small = rng.integers(-1000, 1000, n)
        big = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        return np.where(rng.integers(0, 3, n) == 0, big, small).astype(dt)
    x = rng.standard_normal(n) * 10.0
    x = np.where(rng.integers(0, 4, n) == 0, np.round(x), x)
    return x.astype(dt)


def pair_data(ta, tb, extra=101):
    """Every edge value of ta against every edge value of tb, then random pairs."""
    ea, eb = edges(ta), edges(tb)
    a = np.concatenate([np.repeat(ea, len(eb)), rand(ta, extra)])
    b = np.concatenate([np.tile(eb, len(ea)), rand(tb, extra)])
    return a.astype(ta), b.astype(tb)


def unary_data(dt, extra=300):
    parts = [edges(dt), rand(dt, extra)]
    if dt.kind == "f":
        parts.append(np.array(CAST_EDGE, dtype=dt))
        parts.append(rng.uniform(-1, 1, 64).astype(dt))      # arcsin, arctanh, ...
        parts.append(rng.uniform(1, 50, 32).astype(dt))      # arccosh, log
        parts.append(np.array([1e-8, -1e-8, 1e-20, 0.75, 710.0, -745.0, 89.0, -104.0],
                              dtype=dt))
        parts.append(np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 4.4999, 4.5, 5.5],
                              dtype=dt))                     # rint: half to even
    return np.concatenate(parts).astype(dt)


# ---------------------------------------------------------------------------
# The semantics NumPy leaves open (docs/language.md)
# ---------------------------------------------------------------------------

def cast(x, dt):
    """jitc's conversion: to bool != 0; float to int saturating, NaN -> 0."""
    x = np.asarray(x)
    dt = np.dtype(dt)
    if dt == B:
        return x != 0
    if dt.kind == "i" and x.dtype.kind == "f":
        bits = dt.itemsize * 8
        t = np.trunc(np.where(np.isnan(x), 0, x).astype(np.float64))
        hi = t >= 2.0 ** (bits - 1)
        lo = t < -(2.0 ** (bits - 1))
        mid = np.where(hi | lo, 0, t).astype(dt)
        info = np.iinfo(dt)
        return np.where(hi, info.max, np.where(lo, info.min, mid)).astype(dt)
    return x.astype(dt)


def ipow(a, b):
    """Integer power, wrapping; negative exponents: 1 ** -n = 1,
    (-1) ** -n = +-1, anything else 0 (NumPy raises)."""
    neg = b < 0
    r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    odd = (b % 2) != 0
    negr = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(neg, negr, r).astype(r.dtype)


def power(a, b):
    """jitc's ** (Python scalars weak, as in NumPy): ints by ipow; floats by
    C's pow.  The exponent is made an array because NumPy computes x ** 0.5
    with a scalar exponent as sqrt(x), which differs from pow at -inf and
    -0.0."""
    t = np.result_type(a, b)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    a = np.broadcast_to(np.asarray(a).astype(t), shape)
    b = np.array(np.broadcast_to(np.asarray(b).astype(t), shape))
    if t.kind == "i":
        return ipow(a, b)
    return np.power(a, b)


def pow_operator(a, e):
    """NumPy's ndarray ** with a Python scalar exponent: for float arrays it
    is square(a) for 2, sqrt(a) for 0.5 and reciprocal(a) for -1 (NumPy's
    fast paths, which jitc's ** follows); otherwise power() above."""
    a = np.asarray(a)
    if a.dtype.kind == "f" and e in (2, 0.5, -1):
        with np.errstate(all="ignore"):
            return a ** e
    return power(a, e)


def reciprocal(a):
    if a.dtype.kind == "i":
        return np.where((a == 1) | (a == -1), a, 0).astype(a.dtype)
    return np.reciprocal(a)


def clip(x, lo, hi):
    """jitc's clip: minimum(maximum(x, lo), hi) with NumPy's NaN-propagating
    minimum and maximum (which give the second operand when equal)."""
    return np.minimum(np.maximum(x, lo), hi)


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def _ordered(x):
    """Float bits mapped to int64 in value order (-0.0 and 0.0 both 0)."""
    it = np.int32 if x.dtype == F32 else np.int64
    bits = x.view(it).astype(np.int64)
    sign_min = np.int64(-(2 ** 31)) if x.dtype == F32 else np.int64(-(2 ** 63))
    return np.where(bits < 0, sign_min - bits, bits)


def ulp_close(got, exp, ulps):
    """Finite values at most `ulps` representable numbers apart."""
    o1, o2 = _ordered(got), _ordered(exp)
    # o1 - o2 can only wrap for huge values of opposite signs: far apart anyway.
    far = ((o1 < 0) != (o2 < 0)) & ((np.abs(o1) > 2 ** 61) | (np.abs(o2) > 2 ** 61))
    return np.isfinite(got) & np.isfinite(exp) & ~far & (np.abs(o1 - o2) <= ulps)


def mismatch(got, exp, mode, ulps):
    """None if got matches exp, else (index or None, reason)."""
    if got.dtype != exp.dtype:
        return None, "dtype %s, expected %s" % (got.dtype, exp.dtype)
    if got.shape != exp.shape:
        return None, "shape %s, expected %s" % (got.shape, exp.shape)
    if got.size == 0:
        return None
    if exp.dtype.kind == "f":
        it = {2: np.int16, 4: np.int32, 8: np.int64}[exp.dtype.itemsize]
        same = (got.view(it) == exp.view(it)) | (np.isnan(got) & np.isnan(exp))
        if mode == ULP:
            same |= ulp_close(got, exp, ulps)
    else:
        same = got == exp
    bad = np.flatnonzero(~same)
    if len(bad) == 0:
        return None
    return int(bad[0]), "%d of %d elements differ" % (len(bad), got.size)


def show(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float):
        return "%r (%s)" % (v, v.hex())
    return repr(v)


# ---------------------------------------------------------------------------
# Running jitc
# ---------------------------------------------------------------------------

TMP = tempfile.mkdtemp(prefix="jitc_diff_")


class Result:
    def __init__(self, rc, err, outs):
        self.rc, self.err, self.outs = rc, err, outs


def run_jitc(target, prog, infiles, outnames, defines=(), n=None, tag="c"):
    d = tempfile.mkdtemp(dir=TMP, prefix=tag + "_")
    args = [JITC, "-t", target, "-q"]
    for name, path in infiles.items():
        args += ["--in", "%s=%s" % (name, path)]
    paths = {}
    for o in outnames:
        paths[o] = os.path.join(d, "out_%s.npy" % o)
        args += ["--out", "%s=%s" % (o, paths[o])]
    for df in defines:
        args += ["-D", df]
    if n is not None:
        args += ["-n", str(n)]
    args.append(prog)
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return Result(-1, "timed out", None)
    if p.returncode != 0:
        shutil.rmtree(d, ignore_errors=True)
        return Result(p.returncode, p.stderr.strip(), None)
    outs = {}
    try:
        for o in outnames:
            outs[o] = np.load(paths[o])
    except Exception as e:  # a missing or unreadable output is a failure
        shutil.rmtree(d, ignore_errors=True)
        return Result(0, "output not readable: %s" % e, None)
    shutil.rmtree(d, ignore_errors=True)
    return Result(0, "", outs)


class Case:
    """One program.  stmts: [(output, expression, expected, mode)]; the
    program is the statements joined, unless `prog` gives it whole (then
    stmts only name the outputs to check)."""

    def __init__(self, name, ins, stmts, prog=None, defines=(), n=None):
        self.name, self.ins, self.stmts = name, ins, stmts
        self.prog = prog if prog is not None else "\n".join(
            "%s = %s" % (o, e) for o, e, _, _ in stmts)
        self.defines, self.n = list(defines), n


passed = failed = 0


def report_ok(name):
    global passed
    passed += 1
    print("ok " + name, flush=True)


def report_fail(name, why, details=()):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why), flush=True)
    for line in details:
        print("    " + line, flush=True)


def describe(case, o, expr, idx, got, exp):
    prog = case.prog.strip().replace("\n", "; ")
    lines = ["program: " + prog if len(prog) < 300 else "statement: %s = %s" % (o, expr)]
    lines.append("inputs: " + ", ".join("%s %s[%d]" % (k, SHORT.get(v.dtype, v.dtype), v.size)
                                         for k, v in case.ins.items())
                 + (" defines: " + " ".join(case.defines) if case.defines else ""))
    if idx is not None:
        vals = ", ".join("%s=%s" % (k, show(v.flat[idx])) for k, v in case.ins.items()
                         if v.size > idx)
        lines.append("first difference at [%d]: %s" % (idx, vals))
        lines.append("  got      %s" % show(got.flat[idx]))
        lines.append("  expected %s" % show(exp.flat[idx]))
    return lines


def save_inputs(case):
    files = {}
    d = tempfile.mkdtemp(dir=TMP, prefix="in_")
    for k, v in case.ins.items():
        files[k] = os.path.join(d, k + ".npy")
        np.save(files[k], v)
    return files


def run_case(case):
    """Runs a case on every target; one ok/FAIL line."""
    files = save_inputs(case)
    outnames = [o for o, _, _, _ in case.stmts]
    problems = []
    interp_outs = None
    for t in TARGETS:
        r = run_jitc(t, case.prog, files, outnames, case.defines, case.n)
        if r.rc != 0 or r.outs is None:
            why = "target %s: exit %d: %s" % (t, r.rc, r.err.splitlines()[0] if r.err else "")
            details = [l for l in r.err.splitlines()[:6]]
            if r.rc == 65 and len(case.stmts) > 1 and case.prog == "\n".join(
                    "%s = %s" % (o, e) for o, e, _, _ in case.stmts):
                # Name the statements that are rejected on their own.
                for o, e, _, _ in case.stmts:
                    r1 = run_jitc(t, "%s = %s" % (o, e), files, [o], case.defines, case.n)
                    if r1.rc != 0:
                        details.append("rejected: %s = %s  (exit %d: %s)" % (
                            o, e, r1.rc, r1.err.splitlines()[0] if r1.err else ""))
            problems.append((why, details))
            continue
        if t == "interp":
            interp_outs = r.outs
        for o, e, exp, mode in case.stmts:
            if mode == EXACT_INTERP:
                mode = EXACT if t == "interp" else ULP
            got = r.outs[o]
            exp = np.asarray(exp)
            tol = NUMPY_ULP + target_ulp(t)
            m = mismatch(got, exp, mode, tol)
            if m is not None:
                idx, why = m
                problems.append(("target %s: %s = %s: %s" % (t, o, e, why),
                                 describe(case, o, e, idx, got, exp)))
            if t != "interp" and interp_outs is not None:
                m = mismatch(got, interp_outs[o], mode, target_ulp(t))
                if m is not None:
                    idx, why = m
                    problems.append(("target %s vs interp: %s = %s: %s" % (t, o, e, why),
                                     describe(case, o, e, idx, got, interp_outs[o])))
    if not problems:
        report_ok(case.name)
    else:
        details = []
        for why, d in problems[1:6]:
            details.append(why)
        report_fail(case.name, problems[0][0], problems[0][1] + details)


def run_error(name, prog, ins, want_rc, defines=(), must_mention=None):
    """A program that every target must refuse with exit code want_rc, and
    without writing its output."""
    files = save_inputs(Case(name, ins, []))
    for t in TARGETS:
        r = run_jitc(t, prog, files, ["zz"], defines)
        if r.rc != want_rc:
            report_fail(name, "target %s: exit %d, expected %d (%s)" % (
                t, r.rc, want_rc, r.err.splitlines()[0] if r.err else "no message"),
                ["program: " + prog])
            return
        if must_mention and must_mention not in r.err:
            report_fail(name, "target %s: message does not mention %r: %s" % (
                t, must_mention, r.err), ["program: " + prog])
            return
    report_ok(name)


def skip(name, why):
    print("skip %s: %s" % (name, why), flush=True)


# ---------------------------------------------------------------------------
# The operator and function tables
# ---------------------------------------------------------------------------

def not_bool(*ts):
    return lambda tr: tr != B


def always(tr):
    return True


def int_or_bool(tr):
    return tr.kind in "bi"


def is_int(tr):
    return tr.kind == "i"


def is_float(tr):
    return tr.kind == "f"


# Binary: (key, template, expected(a, b), mode, valid(result type)).  The
# mode "auto" is exact for integer results and ULP for float results.
BINARY = [
    ("add", "{a} + {b}", np.add, EXACT, always),
    ("sub", "{a} - {b}", np.subtract, EXACT, lambda t: t != B),
    ("mul", "{a} * {b}", np.multiply, EXACT, always),
    ("div", "{a} / {b}", np.true_divide, EXACT, always),
    ("floordiv", "{a} // {b}", np.floor_divide, EXACT, lambda t: t != B),
    ("mod", "{a} % {b}", np.remainder, EXACT, lambda t: t != B),
    ("pow", "{a} ** {b}", power, "auto", lambda t: t != B),
    ("power", "power({a}, {b})", power, "auto", lambda t: t != B),
    ("pow2", "pow({a}, {b})", power, "auto", lambda t: t != B),
    ("and", "{a} & {b}", np.bitwise_and, EXACT, int_or_bool),
    ("or", "{a} | {b}", np.bitwise_or, EXACT, int_or_bool),
    ("xor", "{a} ^ {b}", np.bitwise_xor, EXACT, int_or_bool),
    ("shl", "{a} << {b}", np.left_shift, EXACT, is_int),
    ("shr", "{a} >> {b}", np.right_shift, EXACT, is_int),
    ("lt", "{a} < {b}", np.less, EXACT, always),
    ("le", "{a} <= {b}", np.less_equal, EXACT, always),
    ("gt", "{a} > {b}", np.greater, EXACT, always),
    ("ge", "{a} >= {b}", np.greater_equal, EXACT, always),
    ("eq", "{a} == {b}", np.equal, EXACT, always),
    ("ne", "{a} != {b}", np.not_equal, EXACT, always),
    ("fmod", "fmod({a}, {b})", np.fmod, EXACT, lambda t: t != B),
    ("arctan2", "arctan2({a}, {b})", np.arctan2, ULP, lambda t: t != B),
    ("atan2", "atan2({a}, {b})", np.arctan2, ULP, lambda t: t != B),
    ("hypot", "hypot({a}, {b})", np.hypot, ULP, lambda t: t != B),
    ("copysign", "copysign({a}, {b})", np.copysign, EXACT, lambda t: t != B),
    ("nextafter", "nextafter({a}, {b})", np.nextafter, EXACT, lambda t: t != B),
    ("minimum", "minimum({a}, {b})", np.minimum, EXACT, always),
    ("maximum", "maximum({a}, {b})", np.maximum, EXACT, always),
    ("fmin", "fmin({a}, {b})", np.fmin, EXACT, always),
    ("fmax", "fmax({a}, {b})", np.fmax, EXACT, always),
]


def f_of(fn):
    """A NumPy float function, as jitc types it (ints become float64)."""
    def g(a):
        return fn(a.astype(F64) if a.dtype.kind != "f" else a)
    return g


TRANSCENDENTAL = ["cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
                  "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                  "arcsinh", "arccosh", "arctanh"]
C_ALIAS = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
           "arccosh": "acosh", "arctanh": "atanh"}

UNARY = [
    ("neg", "-{a}", np.negative, EXACT, lambda t: t != B),
    ("pos", "+{a}", lambda a: a.copy(), EXACT, lambda t: t != B),
    ("invert", "~{a}", np.invert, EXACT, lambda t: t.kind in "bi"),
    ("abs", "abs({a})", np.abs, EXACT, always),
    ("absolute", "absolute({a})", np.abs, EXACT, always),
    ("fabs", "fabs({a})", np.abs, EXACT, is_float),
    ("sqrt", "sqrt({a})", f_of(np.sqrt), EXACT, lambda t: t != B),
    ("square", "square({a})", np.square, EXACT, lambda t: t != B),
    ("reciprocal", "reciprocal({a})", reciprocal, EXACT, lambda t: t != B),
    ("floor", "floor({a})", np.floor, EXACT, always),
    ("ceil", "ceil({a})", np.ceil, EXACT, always),
    ("trunc", "trunc({a})", np.trunc, EXACT, always),
    ("rint", "rint({a})", f_of(np.rint), EXACT, lambda t: t != B),
    ("round", "round({a})", np.round, EXACT, always),
    ("sign", "sign({a})", np.sign, EXACT, lambda t: t != B),
    ("isnan", "isnan({a})", np.isnan, EXACT, always),
    ("signbit", "signbit({a})", np.signbit, EXACT, always),
    ("isinf", "isinf({a})", np.isinf, EXACT, always),
    ("isfinite", "isfinite({a})", np.isfinite, EXACT, always),
    ("copy", "copy({a})", np.copy, EXACT, always),
    ("ones_like", "ones_like({a})", np.ones_like, EXACT, always),
] + [(f, "%s({a})" % f, f_of(getattr(np, f)), ULP, lambda t: t != B)
     for f in TRANSCENDENTAL] + [
    (c, "%s({a})" % c, f_of(getattr(np, f)), ULP, lambda t: t != B)
    for f, c in C_ALIAS.items()] + [
    ("c_" + name, "%s({a})" % name, (lambda dt: lambda a: cast(a, dt))(dt), EXACT, always)
    for name, dt in [("f32", F32), ("float32", F32), ("f64", F64), ("float64", F64),
                     ("i32", I32), ("int32", I32), ("i64", I64), ("int64", I64),
                     ("bool", B)]]


def mode_for(mode, exp):
    if mode == "auto":
        return ULP if np.asarray(exp).dtype.kind == "f" else EXACT
    return mode


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

def binary_cases():
    for ta in DTYPES:
        for tb in DTYPES:
            a, b = pair_data(ta, tb)
            tr = np.result_type(ta, tb)
            stmts = []
            for key, tmpl, fn, mode, valid in BINARY:
                if not valid(tr):
                    continue
                exp = fn(a, b)
                stmts.append(("o_" + key, tmpl.format(a="a", b="b"), exp, mode_for(mode, exp)))
            run_case(Case("binary %s %s (%d ops)" % (SHORT[ta], SHORT[tb], len(stmts)),
                          {"a": a, "b": b}, stmts))


def unary_cases():
    for t in DTYPES:
        a = unary_data(t)
        stmts = []
        for key, tmpl, fn, mode, valid in UNARY:
            if valid(t):
                exp = fn(a)
                stmts.append(("o_" + key, tmpl.format(a="a"), exp, mode_for(mode, exp)))
        run_case(Case("unary %s (%d functions)" % (SHORT[t], len(stmts)), {"a": a}, stmts))


def ternary_cases():
    n = 500
    # where: every condition type (non-zero is true), several value types.
    pairs = [(F64, F64), (F32, I32), (I32, I64), (B, B), (F32, F32), (B, I32), (I64, F32)]
    for tc in DTYPES:
        c = np.concatenate([edges(tc), rand(tc, n)])
        m = len(c)
        ins = {"c": c}
        stmts = []
        for k, (tx, ty) in enumerate(pairs):
            x = np.resize(unary_data(tx), m)
            y = rand(ty, m)
            ins["x%d" % k], ins["y%d" % k] = x, y
            stmts.append(("w%d" % k, "where(c, x%d, y%d)" % (k, k), np.where(c != 0, x, y),
                          EXACT))
        x, xf, xi = ins["x0"], ins["x4"], ins["x2"]
        stmts += [
            ("wl0", "where(c, x0, 0)", np.where(c != 0, x, 0), EXACT),
            ("wl1", "where(c, 1.5, x4)", np.where(c != 0, 1.5, xf), EXACT),
            ("wl2", "where(c, 1, 2)", np.where(c != 0, 1, 2), EXACT),
            ("wl3", "where(c, x2, -1)", np.where(c != 0, xi, -1), EXACT),
            ("wl4", "where(c, x2, 2.5)", np.where(c != 0, xi, 2.5), EXACT),
        ]
        run_case(Case("where cond %s" % SHORT[tc], ins, stmts))

    # clip: NaN-propagating, types promoted; weak literal bounds.  Expected:
    # minimum(maximum(x, lo), hi), which is np.clip's value except for the
    # sign of a zero equal to a bound (np.clip keeps x's zero when the bounds
    # are scalars and the bound's when they are arrays).
    x = unary_data(F64)
    m = len(x)
    lo = np.resize(np.array([0.0, -1.0, np.nan, -np.inf, 2.0, -0.0]), m)
    hi = np.resize(np.array([1.0, np.nan, 5.0, np.inf, 1.0, 0.0, 3.0]), m)
    xs = np.resize(unary_data(F32), m)
    xi = np.resize(rand(I32, m), m)
    xb = np.resize(rand(B, m), m)
    lb = np.resize(rand(B, m), m)
    hb = np.resize(rand(B, m), m)
    stmts = [
        ("c0", "clip(x, lo, hi)", np.clip(x, lo, hi), EXACT),
        ("c1", "clip(xs, -1.5, 1.5)", np.clip(xs, -1.5, 1.5), EXACT),
        ("c2", "clip(xi, -100, 100)", np.clip(xi, -100, 100), EXACT),
        ("c3", "clip(xi, lo, hi)", np.clip(xi, lo, hi), EXACT),
        ("c4", "clip(xs, f32(lo), f32(hi))", np.clip(xs, lo.astype(F32), hi.astype(F32)), EXACT),
        ("c5", "clip(xb, lb, hb)", np.clip(xb, lb, hb), EXACT),
        ("c6", "clip(xi, 0.5, 10)", clip(xi, 0.5, 10), EXACT),
        ("c7", "clip(x, 0, 1)", clip(x, 0, 1), EXACT),
        ("c8", "clip(x, -0.0, 0.0)", clip(x, -0.0, 0.0), EXACT),
    ]
    run_case(Case("clip", {"x": x, "lo": lo, "hi": hi, "xs": xs, "xi": xi, "xb": xb,
                           "lb": lb, "hb": hb}, stmts))

    # np.clip of an integer array drops a Python int bound at or beyond the
    # end of the array's type (NumPy 2), which would not fit the type: as a
    # literal and as a scalar (-D), whose bound is clamped in the kernel.
    u8 = np.arange(256, dtype=np.uint8)
    i8 = np.arange(-128, 128, dtype=np.int8)
    stmts = [
        ("d0", "clip(u8, 1, 300)", np.clip(u8, 1, 300), EXACT),
        ("d1", "clip(u8, -5, 200)", np.clip(u8, -5, 200), EXACT),
        ("d2", "clip(i8, -1000, 1000)", np.clip(i8, -1000, 1000), EXACT),
        ("d3", "clip(i8, lo, hi)", np.clip(i8, -1000, 5), EXACT),
        ("d4", "clip(u8, lo + 1003, hi)", np.clip(u8, 3, 5), EXACT),
        ("d5", "clip(i8, -128, 127)", np.clip(i8, -128, 127), EXACT),
    ]
    run_case(Case("clip of ints, bounds past the type", {"u8": u8, "i8": i8}, stmts,
                  defines=["lo=-1000", "hi=5"]))
    # A min above the type's end still does not fit, as NumPy's raises.
    run_error("clip of uint8 with a min scalar of 300 is refused", "o = clip(a, s, 400)",
              {"a": u8}, 64, defines=["s=300"])

    # fma: one rounding.  z = -(x*y rounded) makes the result the product's
    # rounding error, which only a fused operation gets right.
    for t in (F32, F64):
        k = 300
        x = np.concatenate([rand(t, k), edges(t)])
        y = np.concatenate([rand(t, k) * t.type(1.0001), edges(t)[::-1]])
        z = np.concatenate([-(x[:k] * y[:k]), np.resize(edges(t), len(edges(t)))])
        z[::7] = rand(t, len(z[::7]))
        x, y, z = x.astype(t), y.astype(t), z.astype(t)
        xi = rng.integers(-1000, 1000, len(x)).astype(I32)
        stmts = [
            ("f0", "fma(x, y, z)", exact.fma(x, y, z), EXACT),
            ("f1", "fma(x, 2, 1)", exact.fma(x, np.full_like(x, 2), np.full_like(x, 1)), EXACT),
            ("f2", "fma(xi, y, z)", exact.fma(xi.astype(F64), y.astype(F64), z.astype(F64)),
             EXACT),
        ]
        run_case(Case("fma %s" % SHORT[t], {"x": x, "y": y, "z": z, "xi": xi}, stmts))


def literal_cases():
    """Weak literals take the other operand's type (NEP 50)."""
    for t in DTYPES:
        a = unary_data(t, 100)
        forms = [
            ("a + 1", lambda a: a + 1),
            ("a * 2.5", lambda a: a * 2.5),
            ("a + True", lambda a: a + True),
            ("a / 2", lambda a: a / 2),
            ("a < 1.5", lambda a: a < 1.5),
            ("a == 1", lambda a: a == 1),
            ("a * -3", lambda a: a * -3),
            ("a + 0.1", lambda a: a + 0.1),
            ("maximum(a, 0)", lambda a: np.maximum(a, 0)),
            ("minimum(a, 2.5)", lambda a: np.minimum(a, 2.5)),
            ("a + 1e300", lambda a: a + 1e300),
        ]
        if t != B:
            forms += [
                ("a - 1", lambda a: a - 1),
                ("a // 2", lambda a: a // 2),
                ("a % 3", lambda a: a % 3),
                ("a % -3", lambda a: a % -3),
                ("a ** 2", lambda a: pow_operator(a, 2)),
                ("a ** 2.0", lambda a: pow_operator(a, 2.0)),
                ("a ** 0.5", lambda a: pow_operator(a, 0.5)),
                ("2 ** a", lambda a: power(2, a)),
                ("1 - a", lambda a: 1 - a),
                ("10 // a", lambda a: 10 // a),
                ("fmod(a, 3)", lambda a: np.fmod(a, 3)),
                ("sqrt(a) + 1", lambda a: f_of(np.sqrt)(a) + 1),
            ]
        if t.kind in "bi":
            forms += [("a & 1", lambda a: a & 1), ("a | 2", lambda a: a | 2),
                      ("a ^ True", lambda a: a ^ True)]
        if t.kind == "i":
            forms += [("a << 3", lambda a: a << 3), ("a >> 1", lambda a: a >> 1),
                      ("a << 40", lambda a: a << 40), ("a >> 70", lambda a: a >> 70),
                      ("a + 2147483647", lambda a: a + 2147483647),
                      ("a * -2147483648", lambda a: a * -2147483648),
                      ("a + 2.5", lambda a: a + 2.5)]
        if t == I64 or t.kind == "f":
            forms += [("a + 3000000000", lambda a: a + 3000000000)]
        if t.kind == "f":
            forms += [("a ** -1", lambda a: pow_operator(a, -1)),
                      ("a ** -2.5", lambda a: power(a, -2.5))]
        stmts = []
        for k, (e, fn) in enumerate(forms):
            exp = np.asarray(fn(a))
            mode = ULP if ("**" in e and exp.dtype.kind == "f") or "sqrt" in e else EXACT
            if "sqrt" in e:
                mode = EXACT
            stmts.append(("l%d" % k, e, exp, mode))
        run_case(Case("weak literals %s (%d forms)" % (SHORT[t], len(stmts)), {"a": a}, stmts))

    # Literal-only values are int64 / float64; constants.
    a = np.zeros(7)
    stmts = [
        ("k0", "a * 0 + (1 + 2)", a * 0 + (1 + 2), EXACT),
        ("k1", "1 + 2 + a * 0", 1 + 2 + a * 0, EXACT),
        ("k2", "(7 // 2) + i * 0", np.full(7, 3, I64), EXACT),
        ("k3", "2 ** -1 + i * 0", np.full(7, 0.5), EXACT),
        ("k4", "i * 0 + 2 ** 62", np.full(7, 2**62, I64), EXACT),
        ("k5", "pi + a", np.pi + a, EXACT),
        ("k6", "-inf + a", -np.inf + a, EXACT),
        ("k7", "nan + a", np.nan + a, EXACT),
        ("k8", "i + 7 // -2", np.arange(7) + 7 // -2, EXACT),
        ("k9", "i + 7 % -2", np.arange(7) + 7 % -2, EXACT),
        ("k10", "(i < 3) & True", np.arange(7) < 3, EXACT),
        ("k11", "(i < 3) | false", np.arange(7) < 3, EXACT),
        ("k12", "(i > 3) ^ true", ~(np.arange(7) > 3), EXACT),
        ("k13", "where(i > 2, True, False)", np.arange(7) > 2, EXACT),
        ("k14", "sqrt(2) + i", np.sqrt(2.0) + np.arange(7), EXACT),
        ("k15", "f32(i) * 0.5", np.arange(7).astype(F32) * 0.5, EXACT),
        ("k16", "i * 2", np.arange(7) * 2, EXACT),
        ("k17", "a + i", a + np.arange(7), EXACT),
        ("k18", "i % 3 == 0", np.arange(7) % 3 == 0, EXACT),
        ("k19", "-2 ** 2 + i * 0", np.full(7, -4, I64), EXACT),
        ("k20", "2 ** 3 ** 2 + i * 0", np.full(7, 512, I64), EXACT),
        ("k21", "1e308 * 10 + a", np.full(7, np.inf), EXACT),
        ("k22", "f32(i) + 16777217", np.arange(7).astype(F32) + F32.type(16777217), EXACT),
    ]
    run_case(Case("literal-only values and constants", {"a": a}, stmts))

    # Bare expression: assigns to `out`.
    a = unary_data(F32, 50)
    run_case(Case("bare expression -> out", {"a": a},
                  [("out", "a * 2", a * 2, EXACT)], prog="a * 2"))


def scalar_cases():
    """-D scalars: weak unless typed; new values need no recompile."""
    a32 = rand(I32, 200)
    f32 = unary_data(F32, 100)
    f64 = unary_data(F64, 100)
    bb = rand(B, 200)
    ins = {"a": a32, "f": np.resize(f32, 200), "g": np.resize(f64, 200), "b": bb}
    f, g = ins["f"], ins["g"]
    cases = [
        (["s=3"], [("a + s", a32 + 3), ("f * s", f * 3), ("b + s", bb + 3), ("g - s", g - 3)]),
        (["s=2.5"], [("a * s", a32 * 2.5), ("f * s", f * 2.5), ("b * s", bb * 2.5)]),
        (["s=2.5:f64"], [("f * s", f * np.float64(2.5)), ("a * s", a32 * np.float64(2.5))]),
        (["s=0.1:f32"], [("f + s", f + np.float32(0.1)), ("g + s", g + np.float32(0.1)),
                         ("a + s", a32 + np.float32(0.1))]),
        (["s=3:i32"], [("a + s", a32 + np.int32(3)), ("b + s", bb + np.int32(3)),
                       ("f + s", f + np.int32(3))]),
        (["s=7:i64"], [("a + s", a32 + np.int64(7)), ("a // s", a32 // np.int64(7))]),
        (["s=True"], [("b & s", bb & True), ("a * s", a32 * True), ("b + s", bb + True)]),
        (["s=-3", "t=0.5"], [("a ** 2 + s", power(a32, np.int32(2)) + np.int32(-3)),
                             ("f * t + s", f * 0.5 - 3), ("maximum(a, s)", np.maximum(a32, -3))]),
        (["s=-2:i64"], [("i64(a) ** s", ipow(a32.astype(I64), np.full(200, -2, I64)))]),
        (["s=-1:i32"], [("a ** s", ipow(a32, np.full(200, -1, I32)))]),
    ]
    for k, (defs, forms) in enumerate(cases):
        stmts = [("s%d" % j, e, np.asarray(v), EXACT) for j, (e, v) in enumerate(forms)]
        # Only the arrays these forms read: jitc refuses an --in the program does not use.
        used = {n for e, _ in forms for n in re.findall(r"[a-z]\w*", e)}
        run_case(Case("scalars %s" % " ".join(defs), {n: v for n, v in ins.items() if n in used},
                      stmts, defines=defs))
    # A weak int that does not fit the int32 it meets: refused at run time.
    run_error("scalar 3000000000 meeting int32 is refused", "o = a + s", {"a": a32},
              64, defines=["s=3000000000"])


def inplace_cases():
    """Compound assignment and in-place updates; reads after an assignment
    see the new value."""
    for t in (I32, I64, F32, F64):
        x = unary_data(t, 200) if t.kind == "f" else rand(t, 300)
        steps = [("+=", "3", lambda v: v + 3), ("-=", "1", lambda v: v - 1),
                 ("*=", "2", lambda v: v * 2), ("//=", "3", lambda v: v // 3),
                 ("%=", "1000", lambda v: v % 1000), ("**=", "2",
                                                      lambda v: power(v, 2))]
        if t.kind == "i":
            steps += [("&=", "255", lambda v: v & 255), ("|=", "256", lambda v: v | 256),
                      ("^=", "7", lambda v: v ^ 7), ("<<=", "3", lambda v: v << 3),
                      (">>=", "1", lambda v: v >> 1)]
        else:
            steps += [("/=", "4", lambda v: v / 4)]
        lines, stmts = [], []
        v = x.copy()
        for k, (op, lit, fn) in enumerate(steps):
            v = np.asarray(fn(v)).astype(t)
            lines.append("x %s %s" % (op, lit))
            lines.append("c%d = x" % k)
            stmts.append(("c%d" % k, "x after x %s %s" % (op, lit), v.copy(), EXACT))
        stmts.append(("x", "x", v, EXACT))
        run_case(Case("in-place %s (%d compound ops)" % (SHORT[t], len(steps)), {"x": x},
                      stmts, prog="\n".join(lines)))
    # Index syntax; an output that is read after being assigned; lets.
    a = unary_data(F64, 100)
    b = np.resize(unary_data(F64, 100)[::-1], len(a))
    t0 = a * 2
    u = t0 + b
    prog = """
    # temporaries, several outputs, reads of assigned arrays
    let t = a * 2
    let u = t + b; c = u * t
    d = where(t > 0, u, -u)
    a[i] = a[i] + 1
    e = a * 10; a += 1
    f = c + d
    """
    c = u * t0
    d = np.where(t0 > 0, u, -u)
    a1 = a + 1
    e = a1 * 10
    a2 = a1 + 1
    stmts = [("c", "u * t", c, EXACT), ("d", "where(t > 0, u, -u)", d, EXACT),
             ("e", "a * 10 (a updated)", e, EXACT), ("a", "a (+1 twice)", a2, EXACT),
             ("f", "c + d", c + d, EXACT)]
    run_case(Case("let, in-place, several outputs", {"a": a, "b": b}, stmts, prog=prog))
    # The stored array keeps its dtype; same-kind casts on assignment.
    xi = rand(I32, 100)
    xf = unary_data(F32, 50)
    xf = np.resize(xf, 100)
    prog = "xi += 2.5 > 1\nxf += xi\ny = xi"
    stmts = [("xi", "xi += True", xi + True, EXACT),
             ("xf", "xf += xi", (xf + (xi + True)).astype(F32), EXACT),
             ("y", "y = xi", xi + True, EXACT)]
    run_case(Case("in-place keeps the array dtype", {"xi": xi, "xf": xf}, stmts, prog=prog))


def precedence_cases():
    n = 200
    a = rng.integers(-50, 50, n).astype(I64)
    b = rng.integers(-50, 50, n).astype(I64)
    c = rng.integers(1, 20, n).astype(I64)
    d = rng.integers(0, 7, n).astype(I64)
    x = rng.standard_normal(n)
    forms = [
        ("-a ** 2", -(power(a, 2))),
        ("a + b * c", a + b * c),
        ("a - b - c", (a - b) - c),
        ("x / 2 / 4", (x / 2) / 4),
        ("a // c * c + a % c", a // c * c + a % c),
        ("a << 1 + 1", a << 2),
        ("a & b | c ^ d", (a & b) | (c ^ d)),
        ("a | b ^ c & d", a | (b ^ (c & d))),
        ("(a + b == c * 2)", (a + b) == (c * 2)),
        ("~a & b", (~a) & b),
        ("a | b == c", (a | b) == c),
        ("-a // 3", (-a) // 3),
        ("a * -b", a * -b),
        ("- - a", a),
        ("+a - -b", a + b),
        ("c ** 2 ** 2", power(c, power(np.full(n, 2, I64), np.full(n, 2, I64)))),
        ("(a < b) & (b < c)", (a < b) & (b < c)),
        ("a >> d << d", (a >> d) << d),
        ("-x ** 2", -power(x, 2)),
        ("2 ** -x", power(2, -x)),
        ("a + (b * c)", a + b * c),
        ("(a + b) * c", (a + b) * c),
        ("~(a < b)", ~(a < b)),
        ("x * 2 > x + 1", x * 2 > x + 1),
    ]
    stmts = [("p%d" % k, e, np.asarray(v), ULP if "**" in e and "x" in e else EXACT)
             for k, (e, v) in enumerate(forms)]
    run_case(Case("precedence and associativity (%d forms)" % len(stmts),
                  {"a": a, "b": b, "c": c, "d": d, "x": x}, stmts))


def size_cases():
    for n in (0, 1, 7, 64):
        for t in (F64, F32, I32):
            a = rand(t, n)
            b = rand(t, n)
            stmts = [
                ("c", "a * 2 + b", a * 2 + b, EXACT),
                ("d", "where(a > b, a, b) + i", np.where(a > b, a, b) + np.arange(n), EXACT),
                ("e", "abs(a) // 3", np.abs(a) // 3, EXACT),
            ]
            if t.kind == "f":
                stmts.append(("s", "sin(a) * b", np.sin(a) * b, ULP))
            run_case(Case("size %d %s" % (n, SHORT[t]), {"a": a, "b": b}, stmts))
    n = 1000003
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    run_case(Case("size %d float64" % n, {"x": x, "y": y}, [
        ("c", "x * y + 1", x * y + 1, EXACT),
        ("d", "x // y", x // y, EXACT),
        ("e", "exp(x) * y", np.exp(x) * y, ULP),
        ("k", "i64(x * 1000) % 7", cast(x * 1000, I64) % 7, EXACT),
    ]))
    xi = rng.integers(-2**31, 2**31, n, dtype=I32)
    yi = rng.integers(-40, 40, n, dtype=I32)
    run_case(Case("size %d int32" % n, {"x": xi, "y": yi}, [
        ("c", "x * y + i32(i)", xi * yi + np.arange(n).astype(I32), EXACT),
        ("d", "x // y + x % y + (x << y)", xi // yi + xi % yi + (xi << yi), EXACT),
        ("e", "x ** 3", power(xi, np.int32(3)), EXACT),
    ]))
    xf = rng.standard_normal(n).astype(F32)
    run_case(Case("size %d float32 in place" % n, {"x": xf}, [
        ("x", "x = sqrt(abs(x)) * 2 + 1", np.sqrt(np.abs(xf)) * 2 + 1, EXACT),
        ("s", "sin(x) (before the update)", np.sin(xf), ULP),
    ], prog="s = sin(x)\nx = sqrt(abs(x)) * 2 + 1"))


def shape_cases():
    """Arrays of any shape are processed element by element: results must
    be NumPy's element for element, whatever the memory order."""
    a = rand(F32, 60).reshape(3, 4, 5)
    b = rand(I32, 60).reshape(3, 4, 5)
    run_case(Case("shape (3, 4, 5) C order", {"a": a, "b": b}, [
        ("c", "a * 2 + b", a * 2 + b, EXACT), ("d", "b // 3", b // 3, EXACT)]))
    af, bf = np.asfortranarray(a), np.asfortranarray(b)
    run_case(Case("shape (3, 4, 5) Fortran order", {"a": af, "b": bf}, [
        ("c", "a * 2 + b", af * 2 + bf, EXACT), ("d", "b // 3", bf // 3, EXACT)]))
    run_case(Case("shape (3, 4, 5) C and Fortran order mixed", {"a": a, "b": bf}, [
        ("c", "a * 2 + b", a * 2 + bf, EXACT)]))


def numpy_simd_exp():
    """True when NumPy evaluates float32 exp with its own vector loop (x86-64
    with AVX2+FMA3 or AVX-512F), whose results jitc reproduces bit for bit."""
    try:
        f = np._core._multiarray_umath.__cpu_features__
    except AttributeError:
        return False
    return bool((f.get("AVX2") and f.get("FMA3")) or f.get("AVX512F"))


def exp_f32_cases():
    """float32 exp prints what NumPy prints (docs/language.md, Accuracy)."""
    name = "float32 exp equals NumPy's bit for bit"
    if not numpy_simd_exp():
        skip(name, "this NumPy uses the C library's expf here (no AVX2+FMA3 or AVX-512F)")
        return
    x = np.concatenate([
        np.random.RandomState(1).randn(5).astype(F32),              # the README example
        rng.uniform(-104.5, 89.5, 400000).astype(F32),              # the whole finite range
        rng.uniform(-1, 1, 100000).astype(F32),
        (rng.standard_normal(100000) * 1e-6).astype(F32),
        np.array([88.72283, 88.72284, 88.7229, -103.97208, -103.9721, -87.3, -87.4, -100.0,
                  -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38],
                 dtype=F32)])
    run_case(Case(name, {"x": x}, [("e", "exp(x)", np.exp(x), EXACT_INTERP)]))


def error_cases():
    """The semantic refusals that decide what a program means."""
    a = rand(I32, 10)
    f = rand(F32, 10)
    bb = rand(B, 10)
    ins = {"a": a, "f": f, "b": bb}
    run_error("int ** negative literal is refused", "zz = a ** -1", ins, 65)
    run_error("int32 + literal beyond int32 is refused", "zz = a + 3000000000", ins, 65)
    run_error("bool - bool is refused", "zz = b - b", ins, 65)
    run_error("sign(bool) is refused", "zz = sign(b)", ins, 65)
    run_error("float & is refused", "zz = f & a", ins, 65)
    run_error("float << is refused", "zz = f << 1", ins, 65)
    run_error("int /= is refused (same-kind)", "a /= 2", ins, 65)
    run_error("chained comparison is refused", "zz = a < a < a", ins, 65)


def nan_sign_cases():
    """The sign of a NaN, bit for bit on every target (docs/language.md,
    "The sign of a NaN"): the sign operations move it, casts between float
    types keep it, and a function of one NaN argument returns that NaN.
    Each output is copysign(1.0, ...) so that the sign shows as +-1."""
    for t in (F32, F64):
        x = np.array([np.nan, -np.nan] * 9, t)  # odd tails in every vector width
        sgn = lambda v: np.copysign(np.ones(v.shape, t), v)
        other = F64 if t == F32 else F32
        stmts = [
            ("s0", "copysign(1.0, x)", sgn(x), EXACT),
            ("s1", "copysign(1.0, -x)", sgn(-x), EXACT),
            ("s2", "copysign(1.0, abs(x))", np.ones(x.shape, t), EXACT),
            ("s3", "copysign(1.0, where(i < 0, 0.0, x))", sgn(x), EXACT),
            ("s4", "copysign(1.0, %s(%s(x)))" % (SHORT[t], SHORT[other]), sgn(x), EXACT),
            ("s5", "copysign(x, -nan)", -np.abs(x), EXACT),
        ]
        funcs = ["sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
                 "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                 "arccosh", "arctanh", "floor", "ceil", "trunc", "rint"]
        stmts += [("g%d" % k, "copysign(1.0, %s(x))" % f, sgn(x), EXACT)
                  for k, f in enumerate(funcs)]
        run_case(Case("NaN signs %s" % SHORT[t], {"x": x}, stmts))


def weak_value_cases():
    """Weak values are Python's scalars, as NumPy 2 sees them: expressions of
    constants fold by the run-time rules before they meet an array, power()
    of weak values is a NumPy scalar, out-of-range ints compare truly."""
    n = 7
    a = np.array([5, -1, 0, 2147483647, -2147483648, 7, 3], dtype=I32)
    a64 = np.array([5, -1, 0, 2**63 - 1, -2**63, 7, 3], dtype=I64)
    bb = np.array([True, False, True, False, True, True, False])
    f = np.array([-np.inf, -0.0, 0.0, 4.0, 2.0, np.nan, np.inf], dtype=F32)
    g = f.astype(F64)

    def stored(dt, v):
        o = np.zeros(n, dtype=dt)
        o[...] = v
        return o
    # A float constant stored into an int array is converted, not its bits.
    prog = "o = i; o = 2.5\nx = i32(i); x = 2.5E-3\ny = i32(i); y = pi\nz = i; z = -2.5"
    run_case(Case("float constant stored into int arrays", {}, [
        ("o", "2.5 into int64", stored(I64, 2.5), EXACT),
        ("x", "2.5E-3 into int32", stored(I32, 2.5e-3), EXACT),
        ("y", "pi into int32", stored(I32, np.pi), EXACT),
        ("z", "-2.5 into int64", stored(I64, -2.5), EXACT)], prog=prog, n=n))
    # inf and nan (NumPy refuses them): the cast rule, saturating, NaN -> 0.
    prog = "o = i; o = inf\nx = i32(i); x = -inf\ny = i32(i); y = nan"
    run_case(Case("inf and nan stored into int arrays (the cast rule)", {}, [
        ("o", "inf into int64", cast(np.full(n, np.inf), I64), EXACT),
        ("x", "-inf into int32", cast(np.full(n, -np.inf), I32), EXACT),
        ("y", "nan into int32", cast(np.full(n, np.nan), I32), EXACT)], prog=prog, n=n))

    # power() of weak values is a strong NumPy scalar.
    run_case(Case("power of weak values is strong", {"a": a, "f": f}, [
        ("p0", "power(2, 40) + a", a + np.power(2, 40), EXACT),
        ("p1", "power(2.0, 3.0) + f", f + np.power(2.0, 3.0), EXACT),
        ("p2", "pow(2, 3) * a", np.power(2, 3) * a, EXACT),
        ("p3", "a + 2 ** 3", a + 2 ** 3, EXACT)]))

    # Constant expressions fold before they meet an array.
    stmts = [
        ("c0", "a >= 2147483647 + 32", a >= 2147483647 + 32, EXACT),
        ("c1", "a + (2 ** 30 - 1) * 2", a + (2 ** 30 - 1) * 2, EXACT),
        ("c2", "2 ** (0 - 1) + i * 0", 2 ** (0 - 1) + np.arange(n) * 0, EXACT),
        ("c3", "2 ** ~0 + i * 0", 2 ** ~0 + np.arange(n) * 0, EXACT),
        ("c4", "a * (3 - 4)", a * (3 - 4), EXACT),
        ("c5", "a64 + 2 ** 62 * -2", a64 + 2 ** 62 * -2, EXACT),
        ("c6", "f * (1.5 + 1)", f * (1.5 + 1), EXACT),
        ("c7", "f + (0.1 + 0.2)", f + (0.1 + 0.2), EXACT),
        ("c8", "g * -(0.0)", g * -(0.0), EXACT),
        ("c9", "g + (nan * 0)", g + (np.nan * 0), EXACT),
        ("c10", "-1 << 63 ^ a64", (-1 << 63) ^ a64, EXACT),
    ]
    run_case(Case("constant expressions fold (%d forms)" % len(stmts),
                  {"a": a, "a64": a64, "f": f, "g": g}, stmts))

    # Python's bools are ints in weak arithmetic.
    run_case(Case("weak bool arithmetic is Python's", {"a": a, "b": bb}, [
        ("b0", "a + (True + True)", a + (True + True), EXACT),
        ("b1", "a + ~True", a + ~int(True), EXACT),  # Python: ~True == -2
        ("b2", "a * -True", a * -True, EXACT),
        ("b3", "a + (True - False)", a + (True - False), EXACT),
        ("b4", "a + +True", a + +True, EXACT),
        ("b5", "b & (True & True)", bb & (True & True), EXACT),
        ("b6", "b ^ (True ^ True)", bb ^ (True ^ True), EXACT),
        ("b7", "b + True", bb + True, EXACT),
        ("b8", "a + (True << 3)", a + (True << 3), EXACT),
        ("b9", "a + i32(True + True)", a + np.int32(True + True), EXACT)]))

    # Comparisons with ints outside the array's type: the true answer.
    stmts = []
    k = 0
    for arr, name in ((a, "a"), (a64, "a64"), (bb, "b")):
        for v in (3000000000, -3000000000, 2147483648):
            for op in ("<", "<=", ">", ">=", "==", "!="):
                e = "%s %s %d" % (name, op, v)
                stmts.append(("q%d" % k, e, eval("arr %s v" % op), EXACT))
                k += 1
    run_case(Case("comparisons with out-of-range ints (%d forms)" % len(stmts),
                  {"a": a, "a64": a64, "b": bb}, stmts))
    run_case(Case("comparisons with an out-of-range weak scalar", {"a": a}, [
        ("s0", "a < w", a < 3000000000, EXACT), ("s1", "a != w", a != 3000000000, EXACT),
        ("s2", "a >= w * 2", a >= 6000000000, EXACT)], defines=["w=3000000000"]))
    run_case(Case("weak scalar expressions are Python's", {"a": a}, [
        ("s0", "a + (b + b)", a + (True + True), EXACT),
        ("s1", "a + (w - 2999999990) * 2", a + (3000000000 - 2999999990) * 2, EXACT)],
        defines=["w=3000000000", "b=True"]))

    # A float array to a scalar 0.5 is sqrt, however the 0.5 is written.
    for t, x in ((F32, f), (F64, g)):
        run_case(Case("power(x, 0.5) is sqrt %s" % SHORT[t], {"x": x}, [
            ("h0", "power(x, 0.5)", np.power(x, 0.5), EXACT),
            ("h1", "x ** (0.25 + 0.25)", x ** (0.25 + 0.25), EXACT),
            ("h2", "pow(x, 0.5) + x ** 0.5", np.power(x, 0.5) + x ** 0.5, EXACT),
            ("h3", "x ** f64(0.5)", x ** np.float64(0.5), EXACT),
            ("h4", "x ** f32(0.5)", x ** np.float32(0.5), EXACT)]))
        run_case(Case("x ** w, w = 0.5 at run time, is sqrt %s" % SHORT[t], {"x": x}, [
            ("h0", "x ** w", x ** 0.5, EXACT), ("h1", "power(x, w)", np.power(x, 0.5), EXACT)],
            defines=["w=0.5"]))
        run_case(Case("x ** w, w = 3 at run time, is pow %s" % SHORT[t], {"x": x}, [
            ("h0", "x ** w", power(x, 3), ULP)], defines=["w=3"]))

    # A scalar base: np.power takes sqrt for a scalar 0.5 exponent too, while
    # `**` of scalars is Python's or NumPy's scalar power, C's pow.
    n1 = np.zeros(3)
    v = np.float64(0.5)
    with np.errstate(invalid="ignore"):
        run_case(Case("power of a scalar base to 0.5", {}, [
            ("q0", "pow(-inf, 0.5) + i * 0", np.power(-np.inf, 0.5) + n1, EXACT),
            ("q1", "power(-0.0, 0.5)", np.full(3, np.power(-0.0, 0.5)), EXACT),
            ("q2", "(-inf) ** 0.5 + i * 0", (-np.inf) ** 0.5 + n1, EXACT),
            ("q3", "(-inf) ** v + i * 0", (-np.inf) ** v + n1, EXACT),
            ("q4", "power(-inf, v) + i * 0", np.power(-np.inf, v) + n1, EXACT)],
            defines=["v=0.5:f64"], n=3))

    # Strong values inside where() are not weak expressions; 0.0 ** -inf is
    # inf in Python (0.0 ** -1 raises).
    n1 = np.arange(3)
    with np.errstate(divide="ignore"):
        run_case(Case("where of strong values; 0.0 ** -inf", {}, [
            ("w0", "where(i >= 0, (i + 5) / 0, 1.0)", np.where(n1 >= 0, (n1 + 5) / 0, 1.0), EXACT),
            ("w1", "(False ** (-inf)) + i * 0", (False ** -np.inf) + n1 * 0, EXACT)], n=3))

    # Refusals: where Python or NumPy raises.
    ins = {"a": a, "f": f}
    for prog, why in (("zz = power(True, -1)", "power of weak ints, negative exponent"),
                      ("zz = a + 2**31", "folded int beyond int32"),
                      ("zz = a + 1500000000*2", "folded product beyond int32"),
                      ("zz = pow(i, 32 - 63)", "folded negative exponent of an int array"),
                      ("zz = 2**63 + i", "weak int beyond int64"),
                      ("zz = 9223372036854775807 + 1 + i", "weak sum beyond int64"),
                      ("zz = a + 1 // 0", "weak integer division by zero"),
                      ("zz = f + 1 / 0", "weak division by zero"),
                      ("zz = a << (1 << 64)", "weak shift beyond int64"),
                      ("zz = i32(3000000000) + a", "a cast of a weak int it does not fit"),
                      ("zz = a ** i64(-1)", "an int array to a strong negative constant")):
        run_error("refused: %s (%s)" % (prog, why), prog, ins, 65)
    run_error("int32 array stored 3000000000: the message names the array",
              "zz = a; zz = 3000000000", ins, 65, must_mention="array 'zz'")
    for w, prog in (("w=3000000000", "zz = a + w*1"), ("w=3000000000", "zz = a + (w + 0)"),
                    ("w=4611686018427387904", "zz = w * 2 + i"),
                    ("w=-1", "zz = 2 ** w + a"), ("w=0", "zz = a + 7 // w"),
                    ("w=3000000000", "let t = w * 1; zz = a + t")):
        run_error("refused at run time: %s with %s" % (prog, w), prog, ins, 64, defines=[w])


def probe_targets():
    """Drops (with a skip line) the targets this machine cannot run; interp
    always runs first, as the reference for the others."""
    global TARGETS
    wanted = ["interp"] + [t for t in TARGETS if t != "interp"]
    TARGETS = []
    for t in wanted:
        p = subprocess.run([JITC, "-t", t, "-q", "-n", "1", "o = 1"], capture_output=True,
                           text=True)
        if p.returncode == 69:
            skip("t_diff target %s" % t, "not available here: %s" % p.stderr.strip())
        else:
            TARGETS.append(t)


def main():
    if not os.access(JITC, os.X_OK):
        report_fail("t_diff", "jitc binary not found or not executable: %s" % JITC)
        return 1
    probe_targets()
    try:
        binary_cases()
        unary_cases()
        ternary_cases()
        literal_cases()
        scalar_cases()
        inplace_cases()
        precedence_cases()
        size_cases()
        shape_cases()
        exp_f32_cases()
        error_cases()
        weak_value_cases()
        nan_sign_cases()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
