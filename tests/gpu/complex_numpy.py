#!/usr/bin/env python3
"""tests/gpu/complex_numpy.py -- the cuda target's complex functions against
NumPy, through the command line (jitc -t cuda --in ... --out ...), on a GPU.

Every complex function (exp ... arctanh, power, expm1, log1p, exp2, log2,
log10, sign, sqrt, rint) of complex64 and complex128 in one program per
type, over every pair of special parts (0, -0, +-inf, NaN, 1, subnormals,
the largest value, the ends of exp's range, ...) and random values of
every magnitude and near the unit circle.  NumPy computes them with the C
library's complex functions (glibc's) and its own formulas, as interp does;
the GPU computes the same cases and formulas with CUDA's functions of the
part's type.  A part agrees with NumPy's when its bits are equal (a NaN
for a NaN), or when both are finite and within 4 ulp of each other or 8
epsilons of NumPy's larger finite part (a part much smaller than the other
carries the other's rounding); a zero has NumPy's sign; a power and log1p
have more (tolerance()).  Prints, per function and type, the largest
difference seen ("ulps NAME: ..."), then "ok NAME" / "FAIL NAME: why".
COMPLEX_TARGET=interp checks this test itself.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

JITC = os.environ.get("JITC", "build/jitc")
TARGET = os.environ.get("COMPLEX_TARGET", "cuda")
FUNCS = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos",
         "arctan", "arcsinh", "arccosh", "arctanh", "expm1", "log1p", "exp2", "log2", "log10",
         "sign", "rint", "power"]
fails = 0


def inputs(dt):
    """a: every pair of special parts, then random values; b (of a ** b): a
    rolled, every fifth a small integer."""
    part = np.float32 if dt == "complex64" else np.float64
    fi = np.finfo(part)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 1.5, fi.tiny / 4,
                   -fi.tiny, fi.max, -1e30, 100.0, -800.0, 89.0, 710.0, 1e-5, fi.eps, 0.9999999,
                   3.14159265], dtype=part)
    rng = np.random.default_rng(11)
    n = 100000
    mag = 10.0 ** rng.uniform(-8, 8, n) * rng.choice([-1, 1], n)
    ang = rng.uniform(0, 2 * np.pi, n)
    z = np.concatenate([rng.uniform(-10, 10, n) + 1j * rng.uniform(-10, 10, n),
                        mag * np.exp(1j * ang), (1 + rng.normal(0, 1e-6, n)) * np.exp(1j * ang),
                        rng.uniform(-3, 3, n) + 0j])
    a = np.empty(sp.size ** 2 + z.size, dtype=dt)
    re, im = np.meshgrid(sp, sp)
    a.real[:sp.size ** 2], a.imag[:sp.size ** 2] = re.ravel(), im.ravel()
    a.real[sp.size ** 2:], a.imag[sp.size ** 2:] = z.real, z.imag
    b = np.roll(a, 7)
    b[::5] = rng.integers(-4, 5, b[::5].size)
    return a, b


def ordered(x):
    """Floats as integers in the order of their values, -0.0 just below 0.0."""
    i = np.int32 if x.dtype == np.float32 else np.int64
    v = x.view(i).astype(np.float64)
    mag = (x.view(i) & np.iinfo(i).max).astype(np.float64)
    return np.where(v < 0, -1 - mag, v)


def compare(got, want, eps=8, floor=0, zerosign=True, free=False):
    """Per element: whether each part agrees (see the head), eps (a number
    or one per element) epsilons of the larger finite part, or of `floor`
    where that is larger; a zero's sign where zerosign (a number or one per
    element); the largest ulps and epsilons of the larger part among finite
    results."""
    g = np.stack([got.real, got.imag], axis=1)
    w = np.stack([want.real, want.imag], axis=1)
    eps_t = np.finfo(g.dtype).eps
    same = (g.view(np.uint8).reshape(len(g), 2, -1) == w.view(np.uint8).reshape(len(w), 2, -1)).all(axis=2)
    nan = np.isnan(g) & np.isnan(w)
    fin = np.isfinite(g) & np.isfinite(w)
    with np.errstate(all="ignore"):
        ulp = np.where(fin, np.abs(ordered(g) - ordered(w)), 0)
        m = np.maximum(np.where(np.isfinite(w), np.abs(w), 0).max(axis=1, keepdims=True), floor)
        norm = np.where(fin, np.abs(g.astype(np.float64) - w) / np.where(m > 0, m, 1) / eps_t, 0)
    ok = same | nan | (fin & ((ulp <= 4) | (norm <= np.reshape(eps, (-1, 1)))))
    flip = (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
    ok &= ~(flip & np.reshape(zerosign, (-1, 1)))  # a zero keeps its sign
    ok |= np.reshape(free, (-1, 1))  # no bound: any value
    both = fin.all(axis=1)
    return ok.all(axis=1), float(ulp[both].max(initial=0)), float(norm[both].max(initial=0))


def tolerance(f, a, b):
    """compare()'s allowances for f beyond the common ones (docs/language.md,
    Accuracy): a power by cpow, exp(b log a), 8 (1 + |b log a|) epsilons (log
    a's rounding times the size of b log a), and either sign of a zero where
    a has an infinite part (b log a meets inf * 0 there, a NaN whose sign,
    the hardware's, becomes the zero's); log1p's real part, the log of
    hypot(1 + re, im), carries hypot's rounding: 8 epsilons of 1 at least."""
    if f == "power":
        with np.errstate(all="ignore"):
            z = b.astype(np.complex128) * np.log(a.astype(np.complex128))
            w = np.abs(z)
            u = 8 * (1 + w)
            e = u * np.finfo(a.real.dtype).eps  # the phase's error bound, in radians
            # Where that reaches the distance of the phase, b log a's imaginary
            # part, to an axis, the sign of a part (an infinite one, a zero)
            # is not known: any result is as right as NumPy's.
            lost = ~np.isfinite(w) | (e >= 1) | (e >= np.minimum(np.abs(np.cos(z.imag)),
                                                                np.abs(np.sin(z.imag))))
        return {"eps": np.where(lost, 0, u), "free": lost,
                "zerosign": ~(np.isinf(a.real) | np.isinf(a.imag))}
    if f == "log1p":
        return {"floor": 1}
    return {}


def main():
    global fails
    for dt in ("complex64", "complex128"):
        a, b = inputs(dt)
        prog = "\n".join("o%d = %s" % (k, "a ** b" if f == "power" else "%s(a)" % f)
                         for k, f in enumerate(FUNCS))
        with tempfile.TemporaryDirectory() as tmp:
            args = [JITC, "-t", TARGET, "-q"]
            for name, x in (("a", a), ("b", b)):
                np.save(os.path.join(tmp, name + ".npy"), x)
                args += ["--in", "%s=%s" % (name, os.path.join(tmp, name + ".npy"))]
            for k in range(len(FUNCS)):
                args += ["--out", "o%d=%s" % (k, os.path.join(tmp, "o%d.npy" % k))]
            p = subprocess.run(args + [prog], capture_output=True, text=True)
            if p.returncode != 0:
                fails += 1
                print("FAIL complex_numpy.%s: exit %d: %s" % (dt, p.returncode, p.stderr[-1500:]))
                continue
            outs = [np.load(os.path.join(tmp, "o%d.npy" % k)) for k in range(len(FUNCS))]
        bad = []
        with np.errstate(all="ignore"):
            for k, f in enumerate(FUNCS):
                want = np.power(a, b) if f == "power" else getattr(np, f)(a)
                got = outs[k]
                if got.dtype != want.dtype:
                    bad.append("%s: %s, want %s" % (f, got.dtype, want.dtype))
                    continue
                ok, ulp, norm = compare(got, want, **tolerance(f, a, b))
                print("ulps complex_numpy.%s.%s: %g ulp, %.2f eps of the larger part" % (dt, f, ulp, norm))
                wrong = np.nonzero(~ok)[0]
                if wrong.size:
                    j = wrong[0]
                    bad.append("%s: %d of %d differ, e.g. a = %r%s: %r, NumPy %r" % (
                        f, wrong.size, a.size, a[j], ", b = %r" % b[j] if f == "power" else "",
                        got[j], want[j]))
        if bad:
            fails += 1
            print("FAIL complex_numpy.%s: %s" % (dt, "; ".join(bad[:8])))
        else:
            print("ok complex_numpy.%s (%d functions, %d values)" % (dt, len(FUNCS), a.size))
    for dt in ("complex64", "complex128"):
        check_reductions(dt)
    return 1 if fails else 0


def run(args, prog, ins, outs):
    """prog on the target over the arrays ins: {name: array} of outs, or why not."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [JITC, "-t", TARGET, "-q"] + args
        for name, x in ins.items():
            np.save(os.path.join(tmp, name + ".npy"), x)
            argv += ["--in", "%s=%s" % (name, os.path.join(tmp, name + ".npy"))]
        for name in outs:
            argv += ["--out", "%s=%s" % (name, os.path.join(tmp, name + ".npy"))]
        p = subprocess.run(argv + [prog], capture_output=True, text=True)
        if p.returncode != 0:
            return "exit %d: %s" % (p.returncode, p.stderr[-1500:])
        return {name: np.load(os.path.join(tmp, name + ".npy")) for name in outs}


def check_reductions(dt):
    """Every reduction of dt at sizes from 1 to past a block's and a chunk's
    elements: sums and means within (n + 8) epsilons of the sum of
    magnitudes (complex64 sums in complex128), products of a few values
    within 8 epsilons, the extremes and their indices (NumPy's order; the
    first NaN) exact."""
    global fails
    part = np.float32 if dt == "complex64" else np.float64
    eps = float(np.finfo(part).eps)
    rng = np.random.default_rng(3)
    bad = []
    red = ["sum", "mean", "min", "max", "argmin", "argmax", "any", "all"]
    for n in (1, 7, 1000, 65539, 1000003):
        a = (rng.uniform(-10, 10, n) + 1j * rng.uniform(-10, 10, n)).astype(dt)
        a.real[::3] = np.round(a.real[::3])  # ties in the real part: the imaginary part decides
        if n > 7:
            a[n // 2] = complex(a[n // 2].real, np.nan) if n % 2 else a[n // 2]
        prog = "\n".join("r%d = %s(a)" % (k, r) for k, r in enumerate(red)) + "\nc = a * 2"
        got = run([], prog, {"a": a}, ["r%d" % k for k in range(len(red))] + ["c"])
        if isinstance(got, str):
            bad.append("n %d: %s" % (n, got))
            continue
        tol = (n + 8) * eps * float(np.sum(np.abs(a.real[np.isfinite(a.real)])) + np.sum(np.abs(a.imag[np.isfinite(a.imag)])))
        with np.errstate(all="ignore"):
            for k, r in enumerate(red):
                g = got["r%d" % k].reshape(-1)[0]
                wide = a.astype(np.complex128)
                w = getattr(np, r)(wide if r in ("sum", "mean") else a)
                if r in ("sum", "mean"):
                    scale = tol / (n if r == "mean" else 1)
                    nan = np.isnan(w.real) or np.isnan(w.imag)
                    fine = (np.isnan(g.real) or np.isnan(g.imag)) if nan else \
                        abs(g.real - w.real) <= scale and abs(g.imag - w.imag) <= scale
                elif r in ("min", "max"):
                    fine = (np.isnan(g.real) or np.isnan(g.imag)) if (np.isnan(w.real) or np.isnan(w.imag)) \
                        else g == w
                else:
                    fine = g == w
                if not fine:
                    bad.append("%s of %d: %r, NumPy %r" % (r, n, g, w))
        if not np.array_equal(got["c"], a * 2, equal_nan=True):
            bad.append("c = a * 2 beside them (n %d) differs" % n)
    x = (rng.uniform(0.5, 1.5, 7) * np.exp(1j * rng.uniform(0, 6.3, 7))).astype(dt)
    got = run([], "p = prod(a)", {"a": x}, ["p"])
    if isinstance(got, str):
        bad.append("prod: " + got)
    else:
        g, w = got["p"].reshape(-1)[0], np.prod(x.astype(np.complex128))
        if abs(g - w) > 8 * 7 * eps * abs(w):
            bad.append("prod of 7: %r, NumPy %r" % (g, w))
    if bad:
        fails += 1
        print("FAIL complex_numpy.reductions.%s: %s" % (dt, "; ".join(bad[:8])))
    else:
        print("ok complex_numpy.reductions.%s (%d reductions, 5 sizes, and prod)" % (dt, len(red)))


if __name__ == "__main__":
    sys.exit(main())
