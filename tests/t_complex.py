#!/usr/bin/env python3
"""tests/t_complex.py -- complex64 and complex128 run through libjitc (ctypes)
on every target of JITC_TARGETS, against NumPy.

- Every operator and function NumPy defines on complex numbers (the rows of
  src/ops.h without F_REAL, and real, imag, conjugate, angle, complex), on
  both complex types: every pair of special parts (0, -0.0, 1, -1, 0.5, 2,
  +-inf, NaN, -NaN, the least subnormal, tiny and huge normals, values that
  overflow a product), and random values of many magnitudes.
- The fast paths of ** (a Python int 2 or -1, a Python float 0.5), and
  np.power's integer exponents.
- Casts from every type of the table to both complex types, between them,
  and to bool.
- Mixed operands: complex with each real type and with Python scalars.
- Scalars: a weak Python complex and a strong complex64 parameter.
- The reductions.

interp is bit for bit NumPy's (docs/language.md, "Accuracy"): a NaN result
matches any NaN, except where the operation only moves values (unary -,
conjugate, real, imag, where, the casts), whose NaN keeps its sign.  The
compiling targets must give the same bits for the arithmetic, and the
functions of the C library within 4 ulp of the larger part of NumPy's
result, with NumPy's infinities and NaNs.  A target that refuses complex
programs (JITC_E_UNAVAILABLE) is skipped, with a line saying so.
"""
import math
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduce_lib as RL  # noqa: E402

RL.under_sanitizers("complex")
warnings.simplefilter("ignore")

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
CTYPES = [C64, C128]
PART = {C64: np.dtype(np.float32), C128: np.dtype(np.float64)}
UNAVAILABLE = 4
fails = 0


def report(name, problem):
    global fails
    if problem:
        fails += 1
        print("FAIL complex.%s: %s" % (name, problem))
    else:
        print("ok complex.%s" % name)


# ---- data ----

def part_specials(pt):
    big = 1e300 if pt.itemsize == 8 else 3e38
    tiny = 5e-324 if pt.itemsize == 8 else 1e-45
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, -np.nan,
                     tiny, -tiny, 1e-30, big, -big, 3.0], pt)


def grid(dt):
    """Every pair of special parts."""
    p = part_specials(PART[dt])
    z = np.empty(len(p) * len(p), dt)
    z.real = np.repeat(p, len(p))
    z.imag = np.tile(p, len(p))
    return z


def randoms(dt, n, seed):
    rng = np.random.default_rng(seed)
    z = np.empty(n, dt)
    big = 300 if dt == C128 else 38
    z.real = rng.standard_normal(n) * 10.0 ** rng.uniform(-big / 4, big / 4, n)
    z.imag = rng.standard_normal(n) * 10.0 ** rng.uniform(-big / 4, big / 4, n)
    m = n // 4  # values near 1, where the functions are most used
    z[:m] = (rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(dt)
    return z


def unary_data(dt):
    return np.concatenate([grid(dt), randoms(dt, 4000, 1)])


def binary_data(dt):
    g = grid(dt)
    a = np.concatenate([np.repeat(g, len(g)), randoms(dt, 4000, 2)])
    b = np.concatenate([np.tile(g, len(g)), randoms(dt, 4000, 3)])
    return a, b


# ---- comparison ----

def ulp(x):
    return np.spacing(np.abs(x).astype(x.dtype))


def first_bad(got, want, moves=False, ulps=0):
    """Index of the first element where got is not want (None: all agree).
    Complex and float elements compare by their parts' bits; NaN matches
    NaN (its sign too where `moves`); ulps > 0 lets finite parts differ by
    that many ulp of the larger finite part of want (a number, or one per
    element)."""
    if got.dtype != want.dtype:
        return "dtype %s, NumPy %s" % (got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        bad = got != want
        return int(np.argmax(bad)) if bad.any() else None
    g = got.reshape(-1).view(got.dtype if want.dtype.kind == "f" else PART[want.dtype])
    w = want.reshape(-1).view(g.dtype)
    u = np.dtype("u%d" % g.dtype.itemsize)
    ok = g.view(u) == w.view(u)
    nan = np.isnan(g) & np.isnan(w)
    ok |= nan & (np.signbit(g) == np.signbit(w)) if moves else nan
    if np.any(ulps):
        fw = np.where(np.isfinite(w), np.abs(w), 0)  # beside an infinite part, the other
        if want.dtype.kind == "c":
            scale = np.maximum(fw[0::2], fw[1::2]).repeat(2)
            ulps = np.broadcast_to(ulps, (len(scale) // 2,)).repeat(2)
        else:
            scale = fw
        fin = np.isfinite(g) & np.isfinite(w)
        with np.errstate(all="ignore"):
            ok |= fin & (np.abs(g.astype(np.float64) - w) <= ulps * ulp(scale.astype(g.dtype)))
        ok |= np.isinf(ulps)  # no bound: any value
    if want.dtype.kind == "c":
        ok = ok[0::2] & ok[1::2]
    return int(np.argmax(~ok)) if not ok.all() else None


def describe(k, ins, got, want):
    if isinstance(k, str):
        return k
    args = ", ".join("%r" % x[k] for x in ins)
    return "at (%s): jitc %r, NumPy %r" % (args, got[k], want[k])


class Target:
    """A target and a Runner; run() gives {name: array} of a program."""

    def __init__(self, name):
        self.name, self.R = name, RL.Runner()

    def run(self, prog, scalars=None, **arrays):
        return self.R.run(prog, arrays, self.name, scalars=scalars)

    def refuses(self):
        try:
            self.run("c = a * 2j", a=np.ones(2, np.float32))
        except RL.JitcError as e:
            if e.status == UNAVAILABLE:
                return str(e).splitlines()[0]
            raise
        return None


# ---- the operations ----

MOVE, EXACT, LIBM = "move", "exact", "libm"
# name: (program, NumPy, kind).  The program reads a (and b).
UNARY = {
    "neg": ("c = -a", np.negative, MOVE),
    "conjugate": ("c = conjugate(a)", np.conjugate, MOVE),
    "conj": ("c = conj(a)", np.conj, MOVE),
    "real": ("c = real(a)", np.real, MOVE),
    "imag": ("c = imag(a)", np.imag, MOVE),
    "abs": ("c = abs(a)", np.absolute, EXACT),
    "angle": ("c = angle(a)", np.angle, LIBM),  # NumPy's SIMD arctan2: ulps
    "square": ("c = square(a)", np.square, EXACT),
    "reciprocal": ("c = reciprocal(a)", np.reciprocal, EXACT),
    "sign": ("c = sign(a)", np.sign, EXACT),
    "rint": ("c = rint(a)", np.rint, EXACT),
    "round": ("c = round(a)", np.round, EXACT),
    "isnan": ("c = isnan(a)", np.isnan, EXACT),
    "isinf": ("c = isinf(a)", np.isinf, EXACT),
    "isfinite": ("c = isfinite(a)", np.isfinite, EXACT),
    "bool": ("c = bool(a)", lambda a: a.astype(bool), EXACT),
    "where": ("c = where(a, a, -a)", lambda a: np.where(a, a, -a), MOVE),
    "copy": ("c = copy(a)", np.copy, MOVE),  # numexpr's functions
    "ones_like": ("c = ones_like(a)", np.ones_like, EXACT),
    "pow2": ("c = a ** 2", lambda a: a ** 2, EXACT),
    "pow-1": ("c = a ** -1", lambda a: a ** -1, EXACT),
    "pow0.5": ("c = a ** 0.5", lambda a: a ** 0.5, LIBM),
}
for f in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
          "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"):
    UNARY[f] = ("c = %s(a)" % f, getattr(np, f), LIBM)
# np.power's integer exponents (products, no fast path) and others (cpow).
for e in (-3, -2, 0, 1, 2, 3, 5, 17, 99, 100, 2.5):
    UNARY["power%s" % e] = ("c = power(a, %r)" % e, lambda a, e=e: np.power(a, e),
                            EXACT if isinstance(e, int) and abs(e) < 100 else LIBM)
UNARY["pow2.0"] = ("c = a ** 2.0", lambda a: a ** 2.0, EXACT)

BINARY = {
    "add": ("c = a + b", np.add, EXACT),
    "sub": ("c = a - b", np.subtract, EXACT),
    "mul": ("c = a * b", np.multiply, EXACT),
    "div": ("c = a / b", np.divide, EXACT),
    "power": ("c = a ** b", np.power, LIBM),
    "eq": ("c = a == b", np.equal, EXACT),
    "ne": ("c = a != b", np.not_equal, EXACT),
    "lt": ("c = a < b", np.less, EXACT),
    "le": ("c = a <= b", np.less_equal, EXACT),
    "gt": ("c = a > b", np.greater, EXACT),
    "ge": ("c = a >= b", np.greater_equal, EXACT),
    "minimum": ("c = minimum(a, b)", np.minimum, MOVE),
    "maximum": ("c = maximum(a, b)", np.maximum, MOVE),
    "fmin": ("c = fmin(a, b)", np.fmin, MOVE),
    "fmax": ("c = fmax(a, b)", np.fmax, MOVE),
    # EXACT: the bound a + b is arithmetic, whose NaN's sign is the hardware's
    "clip": ("c = clip(a, b, a + b)", lambda a, b: np.clip(a, b, a + b), EXACT),
    "complex": ("c = complex(real(a), imag(b))", lambda a, b: _cx(a.real, b.imag), MOVE),
}


def _cx(re, im):
    """complex(re, im) of float32 or float64 parts: the complex type of their width."""
    z = np.empty(len(re), np.result_type(re.dtype, np.complex64))
    z.real, z.imag = re, im
    return z


def cuda_ulps(name, ins):
    """What cuda's functions may differ by (docs/language.md, Accuracy):
    8 ulp of the larger finite part (CUDA's functions, 1 to 2 ulp from
    glibc's, through the formulas; sign through jitc's hypot); a power by
    cpow, exp(b log a), (1 + |b log a|) times that, the rounding of
    log a carried by the size of b log a."""
    if name == "log1p":  # the real part carries hypot's rounding: 8 ulp of 1 at least
        with np.errstate(all="ignore"):
            z = np.log1p(ins[0].astype(np.complex128))
            m = np.maximum(np.abs(z.real), np.abs(z.imag))
            return 8 * np.maximum(1, 1 / np.where(np.isfinite(m) & (m > 0), m, 1))
    if not name.startswith("pow"):
        return 8
    a = ins[0].astype(np.complex128)
    b = ins[1].astype(np.complex128) if len(ins) > 1 else complex(name.lstrip("power"))
    with np.errstate(all="ignore"):
        z = b * np.log(a)
        w = np.abs(z)
        u = 8 * (1 + w)
        # The phase's error bound in radians: where it reaches the distance of
        # the phase, b log a's imaginary part, to an axis, the sign of a part
        # (an infinite one, a zero) is not known: any result is as right as
        # NumPy's.
        e = u * np.finfo(PART[ins[0].dtype]).eps
        known = np.isfinite(w) & (e < np.minimum(np.abs(np.cos(z.imag)), np.abs(np.sin(z.imag))))
    return np.where(known, u, np.inf)


def check_ops(T, dt):
    """Every row of UNARY and BINARY on dt."""
    ua = unary_data(dt)
    ba, bb = binary_data(dt)
    for name, (prog, ref, kind) in list(UNARY.items()) + list(BINARY.items()):
        ins = [ua] if name in UNARY else [ba, bb]
        with np.errstate(all="ignore"):
            want = np.asarray(ref(*ins))
        try:
            got = T.run(prog, **dict(zip("ab", ins)))["c"]
        except RL.JitcError as e:
            report("%s.%s.%s" % (T.name, dt.name, name), str(e).splitlines()[0])
            continue
        # angle is the C library's atan2, as jitc's arctan2: within ulps
        # of NumPy's own arctan2 on every target
        ulps = 4 if kind == LIBM and (T.name != "interp" or name == "angle") else 0
        if T.name == "cuda" and (kind == LIBM or name == "sign") and name != "angle":
            ulps = cuda_ulps(name, ins)
        k = first_bad(got, want, moves=kind == MOVE, ulps=ulps)
        report("%s.%s.%s" % (T.name, dt.name, name),
               None if k is None else describe(k, ins, got, want))


def check_casts(T):
    """Every type to both complex types (as astype), complex to complex and
    to bool; a NaN keeps its sign."""
    rows = [r for r in RL.type_rows() if r["name"] != "bfloat16" or RL.BFLOAT16 is not None]
    for r in rows:
        src, kind = np.dtype(RL.numpy_type(r["name"])), r["kind"]
        if kind == "c":
            x = unary_data(src)
        elif kind == "f":
            x = np.concatenate([part_specials(np.dtype(np.float64)), randoms(C128, 300, 4).real,
                                [2.0 ** 60 + 2.0 ** 36, 16777217.0]]).astype(src)
        elif kind == "b":
            x = np.array([True, False, True])
        else:
            info = np.iinfo(src)
            x = np.array([info.min, info.max, 0, 1, -1 if info.min else 2, info.max // 3,
                          2 ** 24 + 1 if info.max > 2 ** 25 else 3,
                          2 ** 53 + 1 if info.max > 2 ** 54 else 5], dtype=object)
            x = np.array([int(v) for v in x if info.min <= int(v) <= info.max], src)
        targets = CTYPES + ([np.dtype(bool)] if kind == "c" else [])
        for t in targets:
            prog = "c = %s(a)" % {C64: "c64", C128: "c128"}.get(t, "bool")
            with np.errstate(all="ignore"):
                want = x.astype(t)
            name = "%s.cast.%s.%s" % (T.name, r["name"], t.name)
            try:
                got = T.run(prog, a=x)["c"]
            except RL.JitcError as e:
                report(name, str(e).splitlines()[0])
                continue
            k = first_bad(got, want, moves=True)
            report(name, None if k is None else describe(k, [x], got, want))


def check_mixed(T):
    """Complex with each real type and with Python scalars: NumPy's result
    type and values (products and quotients in the promoted type)."""
    rows = [r for r in RL.type_rows() if r["kind"] != "c" and
            (r["name"] != "bfloat16" or RL.BFLOAT16 is not None)]
    z = {dt: np.concatenate([grid(dt)[::7], randoms(dt, 200, 5)]) for dt in CTYPES}
    for dt in CTYPES:
        for r in rows:
            src = np.dtype(RL.numpy_type(r["name"]))
            x = (np.arange(len(z[dt])) % 7 - 3).astype(src)
            for op in ("+", "*", "/", "<"):
                with np.errstate(all="ignore"):
                    want = np.asarray(eval("z[dt] %s x" % op))
                name = "%s.mixed.%s%s%s" % (T.name, dt.name, op, r["name"])
                try:
                    got = T.run("c = a %s b" % op, a=z[dt], b=x)["c"]
                except RL.JitcError as e:
                    report(name, str(e).splitlines()[0])
                    continue
                k = first_bad(got, want)
                report(name, None if k is None else describe(k, [z[dt], x], got, want))
        # Python scalars, and expressions of them that Python computes
        # (products without fma, its own quotient and power)
        for w in ("2", "2.5", "1.5j", "(1-2j)", "True", "-0.0j", "((0.1+0.2j)*(0.3+0.7j))",
                  "((1+2j)/(3+4.1j))", "((1.1+2j)**-3)", "((1+1j)**0.5)", "(2j**(1+1j))"):
            for op in ("+", "*", "/", "-"):
                prog = "c = a %s %s" % (op, w)
                with np.errstate(all="ignore"):
                    want = np.asarray(eval("z[dt] %s %s" % (op, w)))
                got = T.run(prog, a=z[dt])["c"]
                k = first_bad(got, want)
                report("%s.weak.%s.%s" % (T.name, dt.name, prog.replace(" ", "")),
                       None if k is None else describe(k, [z[dt]], got, want))
    # real arrays with Python complex scalars: complex64 from float32 and
    # the 16-bit floats, complex128 from integers
    for r in rows:
        src = np.dtype(RL.numpy_type(r["name"]))
        x = (np.arange(20) % 5 - 2).astype(src)
        with np.errstate(all="ignore"):
            want = np.asarray(x * (0.5 - 1.5j) + 1j)
        got = T.run("c = a * (0.5 - 1.5j) + 1j", a=x)["c"]
        k = first_bad(got, want)
        report("%s.weak.%s" % (T.name, r["name"]), None if k is None else
               describe(k, [x], got, want))


def check_scalars(T):
    """A weak complex scalar (complex128 in the kernel, complex64 next to a
    complex64 array) and a strong complex64 one."""
    a = randoms(C64, 50, 6)
    for s in (0.5 + 2j, complex(np.inf, -0.0), complex(1e300, 1e-300)):
        want = np.asarray(a * s)
        got = T.run("c = a * s", scalars={"s": s}, a=a)["c"]
        k = first_bad(got, want)
        report("%s.scalar.weak.%r" % (T.name, s), None if k is None else describe(k, [a], got, want))
    # ** of a Python scalar known at run time: NumPy's fast paths by value
    for dt in CTYPES:
        z = unary_data(dt)
        for e in (2, -1, 0.5, 2.0, 3, -1.0):
            with np.errstate(all="ignore"):
                want = np.asarray(z ** e)
            got = T.run("c = a ** e", scalars={"e": e}, a=z)["c"]
            k = first_bad(got, want, ulps=4 if e == 0.5 and T.name != "interp" else 0)
            report("%s.scalar.%s.pow%r" % (T.name, dt.name, e), None if k is None else
                   describe(k, [z], got, want))
    want = np.asarray(a.astype(C128) + np.complex64(0.1 + 0.2j))
    got = T.run("c = a + s", scalars={"s": (0.1 + 0.2j, RL.DTYPES.index(np.complex64))},
                a=a.astype(C128))["c"]
    k = first_bad(got, want)
    report("%s.scalar.strong_complex64" % T.name, None if k is None else
           describe(k, [a], got, want))


def check_reductions(T):
    """sum, prod, mean (complex64 accumulated in complex128: within one
    rounding of the exact sum; complex128 within n ulp), min, max, argmin,
    argmax, any, all (exact, NaN first as NumPy)."""
    for dt in CTYPES:
        pt = PART[dt]
        sets = {"random": randoms(dt, 3000, 7), "near1": (np.arange(1000) % 13 * (0.3 - 0.1j)).astype(dt),
                "specials": grid(dt), "ties": np.array([1 + 1j, 2 - 1j, 2 - 1j, -0.0j, 0j, 2 - 1j], dt),
                "nan": np.array([1, complex(1, np.nan), 5, complex(np.nan, 0), 7], dt),
                "zeros": np.zeros(9, dt)}
        for sname, x in sets.items():
            got = T.run("s = sum(a)\np = prod(a)\nm = mean(a)\nlo = min(a)\nhi = max(a)\n"
                        "ai = argmin(a)\nax = argmax(a)\nan = any(a)\nal = all(a)", a=x)
            for nm, ref in (("lo", np.min), ("hi", np.max), ("ai", np.argmin), ("ax", np.argmax),
                            ("an", np.any), ("al", np.all)):
                want = np.asarray(ref(x))
                g = np.asarray(got[nm])
                ok = (g.dtype == want.dtype and first_bad(g.reshape(1), want.reshape(1),
                                                          moves=True) is None)
                report("%s.reduce.%s.%s.%s" % (T.name, dt.name, sname, nm), None if ok else
                       "jitc %r, NumPy %r" % (g, want))
            for nm in ("s", "m", "p"):
                g = np.asarray(got[nm])
                want = np.asarray({"s": np.sum, "m": np.mean, "p": np.prod}[nm](x))
                problem = None if g.dtype == want.dtype else "dtype %s" % g.dtype
                if problem is None and nm != "p" and np.isfinite(x).all():
                    # the exact sum of the parts; jitc's within a float64
                    # summation's error of it, or 2 ulp of the type
                    exact = complex(math.fsum(x.real.astype(float)), math.fsum(x.imag.astype(float)))
                    if nm == "m":
                        exact = complex(exact.real / len(x), exact.imag / len(x))
                    size = float(np.abs(x).astype(np.float64).sum()) / (len(x) if nm == "m" else 1)
                    for part, e in ((g.real, exact.real), (g.imag, exact.imag)):
                        tol = max(2 * float(np.spacing(pt.type(abs(e)))),
                                  (len(x) + 8) * float(np.finfo(np.float64).eps) * size)
                        if not abs(float(part) - e) <= tol:
                            problem = "jitc %r, exact %r" % (g, exact)
                elif problem is None and (nm == "p" and sname in ("ties", "zeros", "nan")):
                    # cuda multiplies in a tree: the sign of a zero part
                    # follows that order (docs/language.md, Accuracy)
                    zero = 0 if T.name == "cuda" else -0.0
                    problem = first_bad(g.reshape(1) + zero, want.reshape(1) + zero)
                    problem = None if problem is None else "jitc %r, NumPy %r" % (g, want)
                elif problem is None and not np.isfinite(x).all():
                    # NaN and inf where NumPy has them, part by part
                    cls = [(np.isnan(v.real), np.isnan(v.imag), np.isinf(v.real), np.isinf(v.imag))
                           for v in (g, want)]
                    problem = None if nm == "p" or cls[0] == cls[1] else "jitc %r, NumPy %r" % (g, want)
                report("%s.reduce.%s.%s.%s" % (T.name, dt.name, sname, nm), problem)


def main():
    for target in os.environ.get("JITC_TARGETS", "interp").split():
        T = Target(target)
        why = T.refuses()
        if why:
            print("skip complex.%s: the %s target does not compute complex values yet (%s)"
                  % (target, target, why))
            continue
        for dt in CTYPES:
            check_ops(T, dt)
        check_casts(T)
        check_mixed(T)
        check_scalars(T)
        check_reductions(T)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
