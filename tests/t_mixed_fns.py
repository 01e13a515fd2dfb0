#!/usr/bin/env python3
"""t_mixed_fns.py -- ldexp, frexp and modf (the functions whose operand and
result types differ) and the assignment of two names, against NumPy.

- Typing: ldexp(a, n) for every pair of dtypes, and with Python scalars
  for x or n, against np.ldexp's loop resolution (a refusal where NumPy
  raises); frexp and modf of Python scalars.
- Values, on every target of JITC_TARGETS and every float type the target
  runs: `m, e = frexp(a); f, w = modf(a); d = ldexp(a, n)` on random data
  and the edges (NaN of both signs, +-inf, +-0, subnormals, the largest
  finite value, n at the limits of every integer type), compared bit for
  bit with NumPy (a NaN matches a NaN of the same sign).  Programs that use
  the results further: ldexp(frexp(a)) and the sum of modf's parts give a
  back exactly; a name that x reads is read before the results are stored.
- The cuda target's C for these programs, compiled by NVRTC (skipped where
  NVRTC is not found).

A target this machine lacks (the command line exits 69) is skipped, with
the reason; one that is here must run every type.

Environment: JITC (the binary), JITC_TARGETS (default "interp").
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
TARGETS = os.environ.get("JITC_TARGETS", "interp").split() or ["interp"]
TMP = tempfile.mkdtemp(prefix="jitc_mixed_")
rng = np.random.default_rng(20261125)
np.seterr(all="ignore")

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 is then not tested
    BF16 = None

INTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64", "bfloat16"]
failed = 0


def dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def ok(name):
    print("ok " + name)


def fail(name, why):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why))


def skip(name, why):
    print("skip %s: %s" % (name, why))


def run(args, env=None):
    return subprocess.run([JITC] + args, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **(env or {})))


def save(name, arr):
    path = os.path.join(TMP, name + ".npy")
    np.save(path, arr)
    return path


def jitc(target, prog, ins, outs, extra=()):
    """Runs prog; (exit status, stderr, {output: array})."""
    d = tempfile.mkdtemp(dir=TMP)
    args = ["-t", target, "-q"] + list(extra)
    for k, arr in ins.items():
        args += ["--in", "%s=%s" % (k, save(os.path.basename(d) + k, arr))]
        if arr.dtype.name == "bfloat16":  # its '<V2' file says so only when named
            args += ["--dtype", "%s=bfloat16" % k]
    paths = {o: os.path.join(d, o + ".npy") for o in outs}
    for o, p in paths.items():
        args += ["--out", "%s=%s" % (o, p)]
    p = run(args + [prog])
    res = {o: np.load(path) for o, path in paths.items()} if p.returncode == 0 else {}
    shutil.rmtree(d, ignore_errors=True)
    return p.returncode, p.stderr, res


def types_of(prog, decls):
    """The dtypes of prog's arrays (--emit types), or None when refused;
    and the exit status."""
    args = ["--emit", "types"]
    for k, t in decls.items():
        args += ["--dtype", "%s=%s" % (k, t)]
    p = run(args + [prog])
    if p.returncode != 0:
        return None, p.returncode, p.stderr
    return dict(re.findall(r"^array (\w+): (\w+)", p.stdout, re.M)), 0, ""


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def mismatch(got, want, nan_sign=True):
    """Why got is not want bit for bit (a NaN matches a NaN of its sign, or
    any NaN without nan_sign), with the first differing elements, or None."""
    want = np.asarray(want)
    if got.dtype.kind == "V" and want.dtype == BF16:  # .npy has no bfloat16
        got = got.view(BF16)
    if got.dtype != want.dtype or got.shape != want.shape:
        return "dtype %s %s, want %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind == "f" or want.dtype == BF16:
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(g64) & np.isnan(w64) & ((np.signbit(g64) == np.signbit(w64)) | (not nan_sign))
        bad = ~both_nan & (bits(got) != bits(want))
    else:
        bad = got != want
    idx = np.flatnonzero(bad)
    if idx.size == 0:
        return None
    return "%d elements differ, e.g. %s" % (idx.size, ", ".join(
        "[%d] %r want %r" % (k, got[k], want[k]) for k in idx[:4]))


def check(name, got, want, any_nan=()):
    """Compares every output (those named in any_nan: any NaN for a NaN);
    True when all match."""
    why = [o + ": " + m for o in sorted(want) for m in [mismatch(got[o], want[o], o not in any_nan)]
           if m]
    if why:
        fail(name, "; ".join(why)[:1500])
    return not why


# ---------------------------------------------------------------------------
# Typing against NumPy
# ---------------------------------------------------------------------------

def numpy_type(fn, *args):
    """NumPy's result dtype names of fn(*args), or None when it raises."""
    try:
        r = fn(*args)
    except (TypeError, OverflowError):
        return None
    return " ".join(np.asarray(o).dtype.name for o in (r if isinstance(r, tuple) else [r]))


def typing_pairs():
    """ldexp(a, n) with a and n arrays of every pair of dtypes."""
    names = INTS + [f for f in FLOATS if f != "bfloat16" or BF16 is not None]
    bad = []
    for xt in names:
        for nt in names:
            want = numpy_type(np.ldexp, np.ones(2, dtype(xt)), np.ones(2, dtype(nt)))
            got, rc, err = types_of("c = ldexp(a, n)", {"a": xt, "n": nt})
            got = got and got["c"]
            if got != want or (got is None and (rc != 65 or "^" not in err)):
                bad.append("ldexp(%s, %s): jitc %s (exit %d), NumPy %s" % (xt, nt, got, rc, want))
    if bad:
        fail("typing.ldexp_pairs", "; ".join(bad[:8]))
    else:
        ok("typing.ldexp_pairs (%d pairs)" % len(names) ** 2)


def typing_weak():
    """Python scalars: NumPy's loop search gives a Python int x float16 next
    to an integer array n, float64 next to a bool one; n must fit int32."""
    bad = []
    arrays = INTS + [f for f in FLOATS if f != "bfloat16" or BF16 is not None]
    scalars = ["3", "True", "2.5", "100000", "-7"]
    cases = [(x, n) for x in scalars for n in scalars + ["2147483648", "-2147483649"]]
    cases += [(x, "n") for x in scalars]
    for x, nt in cases + [("a", "4"), ("a", "True"), ("a", "2147483648"), ("a", "-2**40")]:
        for at in arrays if "a" in (x, nt) or nt == "n" else [None]:
            decl = {"n": at} if nt == "n" else {"a": at} if x == "a" else {}
            val = {k: np.ones(2, dtype(t)) for k, t in decl.items()}
            xv = val["a"] if x == "a" else eval(x)
            want = numpy_type(np.ldexp, xv, val["n"] if nt == "n" else eval(nt))
            got, rc, err = types_of("c = ldexp(%s, %s)" % (x, nt), decl)
            got = got and got["c"]
            if got != want or (got is None and rc != 65):
                bad.append("ldexp(%s, %s) with %s: jitc %s (exit %d %s), NumPy %s"
                           % (x, nt, decl, got, rc, err.strip()[:80], want))
    for fn in ("frexp", "modf"):
        for x in scalars:
            want = numpy_type(getattr(np, fn), eval(x))
            got, rc, _ = types_of("c, d = %s(%s)" % (fn, x), {})
            got = got and "%s %s" % (got["c"], got["d"])
            if got != want:
                bad.append("%s(%s): jitc %s, NumPy %s" % (fn, x, got, want))
    if bad:
        fail("typing.weak", "; ".join(bad[:8]))
    else:
        ok("typing.weak")


# ---------------------------------------------------------------------------
# Values against NumPy
# ---------------------------------------------------------------------------

def float_data(t, n):
    """Edges of float type t, then values of every exponent and sign."""
    fi = np.finfo(np.float32 if t == BF16 else t)
    tiny = float(fi.smallest_subnormal) if t != BF16 else 2.0 ** -133
    big = float(fi.max) if t != BF16 else float(np.asarray(3.3895313892515355e38).astype(t))
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 0.75, 1.5,
             -2.5, 3.0, -7.0, 2.0, 1024.0, 0.1, -1e-3, big, -big, tiny, -tiny, 3 * tiny,
             float(fi.tiny), -float(fi.tiny), float(fi.tiny) * 0.75, 2.0 ** 40 + 0.5]
    mant = rng.uniform(0.5, 1.0, n) * rng.choice([-1.0, 1.0], n)
    lo, hi = np.log2(tiny) - 1, np.log2(big) + 1
    vals = np.ldexp(mant, rng.integers(int(lo), int(hi), n))
    return np.concatenate([np.array(edges), vals]).astype(t)


def exponents(nt, size):
    """n of integer type nt: its limits and values around the exponent range."""
    if nt == "bool":
        return (rng.random(size) < 0.5)
    info = np.iinfo(nt)
    lim = [info.min, info.max, 0, 1, info.max - 1]
    if info.min < 0:
        lim += [-1, info.min + 1]
    for k in (126, 127, 128, 149, 150, 1022, 1023, 1024, 1074, 1075, 2 ** 31, 2 ** 40):
        lim += [v for v in (k, -k) if info.min <= v <= info.max]
    r = rng.integers(max(info.min, -1200), min(info.max, 1200), size, endpoint=True)
    r[:len(lim)] = lim[:size]
    return r.astype(nt)


def runs(target, t):
    """Whether target runs a program on arrays of dtype t.  A target this
    machine lacks (exit 69) runs none, and the cases are skipped; a target
    that is here runs every type, and one it refuses is a failure."""
    key = (target, t)
    if key not in runs.cache:
        rc, err, _ = jitc(target, "b = a * 1", {"a": np.ones(3, dtype(t))}, ["b"])
        runs.cache[key] = rc == 0
        if rc not in (0, 69):
            fail("%s.runs_%s" % (target, t), "exit %d: %s" % (rc, err.strip()[:300]))
    return runs.cache[key]


runs.cache = {}


def values_floats(target):
    for t in FLOATS:
        name = "%s.values_%s" % (target, t)
        if t == "bfloat16" and BF16 is None:
            skip(name, "ml_dtypes is not installed")
            continue
        if not runs(target, t) or not runs(target, "int32"):
            skip(name, "%s cannot run %s arrays here" % (target, t))
            continue
        x = float_data(dtype(t), 3000)
        n = exponents("int32", x.size)
        prog = "m, e = frexp(a); f, w = modf(a); d = ldexp(a, n); c = ldexp(m, e); s = f + w"
        rc, err, got = jitc(target, prog, {"a": x, "n": n}, ["m", "e", "f", "w", "d", "c", "s"])
        if rc != 0:
            fail(name, "exit %d: %s" % (rc, err.strip()[:500]))
            continue
        m, e = np.frexp(x)
        f, w = np.modf(x)
        # s: arithmetic on two NaNs, whose sign docs/language.md leaves open
        # (the GPU's is positive, x86's the first operand's)
        if check(name, got, {"m": m, "e": e, "f": f, "w": w, "d": np.ldexp(x, n), "c": x,
                             "s": f + w}, any_nan=("s",)):
            ok(name + " (%d values)" % x.size)


def values_exponent_types(target):
    """ldexp(a, n) for n of every integer type, at its limits."""
    for t in ("float32", "float64", "float16", "bfloat16"):
        if t == "bfloat16" and BF16 is None:
            continue
        for nt in INTS[:-1]:  # NumPy has no loop for a uint64 exponent
            name = "%s.ldexp_%s_%s" % (target, t, nt)
            if not runs(target, t) or not runs(target, nt):
                skip(name, "%s cannot run %s and %s arrays here" % (target, t, nt))
                continue
            x = float_data(dtype(t), 500)
            n = exponents(nt, x.size)
            rc, err, got = jitc(target, "d = ldexp(a, n)", {"a": x, "n": n}, ["d"])
            if rc != 0:
                fail(name, "exit %d: %s" % (rc, err.strip()[:500]))
            elif check(name, got, {"d": np.ldexp(x, n)}):
                ok(name)


def values_int_x(target):
    """Integer and bool x: NumPy computes in the least float holding them."""
    for t in INTS:
        name = "%s.values_of_%s" % (target, t)
        want_t = np.frexp(np.ones(1, t))[0].dtype.name
        if not runs(target, t) or not runs(target, want_t):
            skip(name, "%s cannot run %s or %s arrays here" % (target, t, want_t))
            continue
        if t == "bool":
            x = rng.random(200) < 0.5
        else:
            info = np.iinfo(t)
            x = np.concatenate([[info.min, info.max, 0, 1, info.max - 1],
                                rng.integers(info.min, info.max, 200, endpoint=True,
                                             dtype=t)]).astype(t)
        n = exponents("int32", x.size)
        prog = "m, e = frexp(a); f, w = modf(a); d = ldexp(a, n)"
        rc, err, got = jitc(target, prog, {"a": x, "n": n}, ["m", "e", "f", "w", "d"])
        if rc != 0:
            fail(name, "exit %d: %s" % (rc, err.strip()[:500]))
            continue
        m, e = np.frexp(x)
        f, w = np.modf(x)
        if check(name, got, {"m": m, "e": e, "f": f, "w": w, "d": np.ldexp(x, n)}):
            ok(name)


def values_programs(target):
    """The results used further, reads after assignment, scalars."""
    x = float_data(np.dtype(np.float64), 200)
    n = exponents("int32", x.size)
    m, e = np.frexp(x)
    f, w = np.modf(x)
    cases = [
        # x is read before either result is stored: a becomes the mantissa
        ("a_is_x", "a, e = frexp(a); c = a", {"c": m, "e": e}),
        ("b_is_x", "f, a = modf(a); c = a + 0; d = f", {"c": w + 0, "d": f}),
        ("expression", "m, e = frexp(-a); c = -ldexp(m, e)", {"c": x}),
        ("indexed", "m[i], e[i] = frexp(a[i]); c = ldexp(m, e)", {"c": x}),
        ("let", "let y = a; f, w = modf(y); c = w + f", {"c": w + f}),
        ("weak_n", "d = ldexp(a, -3)", {"d": np.ldexp(x, -3)}),
        ("weak_x", "d = ldexp(2.5, n)", {"d": np.ldexp(2.5, n)}),
        ("int64_n", "d = ldexp(a, i64(n) * 4000000)", {"d": np.ldexp(x, n.astype(np.int64) * 4000000)}),
        ("scalar_n", "d = ldexp(a, s)", {"d": np.ldexp(x, 7)}),
        ("f32", "m, e = frexp(f32(a)); d = ldexp(m, e)", {"d": x.astype(np.float32)}),
    ]
    for label, prog, want in cases:
        name = "%s.program_%s" % (target, label)
        ins = {k: v for k, v in (("a", x), ("n", n)) if re.search(r"\b%s\b" % k, prog)}
        extra = ["-D", "s=7"] if re.search(r"\bs\b", prog) else []
        rc, err, got = jitc(target, prog, ins, list(want), extra)
        if rc != 0:
            fail(name, "exit %d: %s" % (rc, err.strip()[:500]))
        elif check(name, got, want):
            ok(name)
    # A weak exponent out of int32's range, known only at run time.
    rc, err, _ = jitc(target, "d = ldexp(a, s)", {"a": x}, ["d"], ["-D", "s=3000000000"])
    if rc == 64 and "does not fit in int32" in err:
        ok("%s.scalar_n_range" % target)
    else:
        fail("%s.scalar_n_range" % target, "exit %d: %s" % (rc, err.strip()[:300]))


# ---------------------------------------------------------------------------
# NVRTC
# ---------------------------------------------------------------------------

def cuda_compiles():
    prog = ("m, e = frexp(a); f, w = modf(a * 2); c = ldexp(m, e); d = ldexp(a, n)\n"
            "g = ldexp(a, i)")
    for t in FLOATS:
        name = "cuda.nvrtc_" + t
        args = ["-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--dtype", "a=" + t,
                "--dtype", "n=int32"]
        p = run(args + [prog])
        if p.returncode == 69:
            skip(name, "NVRTC is not found here: " + p.stderr.strip()[:200])
            return
        warn = [l for l in p.stdout.splitlines() if l.startswith("// nvrtc:")]
        src = run(["-t", "cuda", "--emit", "cuda", "--dtype", "a=" + t, "--dtype", "n=int32",
                   prog]).stdout
        calls = set(re.findall(r"\b(jitc_(?:ldexp|frexp_exp|frexp|modf_int|modf)_f(?:32|64))\(",
                               src[src.find("jitc_elem("):]))
        if p.returncode != 0 or warn:
            fail(name, "exit %d: %s %s" % (p.returncode, p.stderr.strip()[:1500], warn[:5]))
        elif len({c.rsplit("_", 1)[0] for c in calls}) != 5:
            fail(name, "the kernel calls %s, not the five helpers" % sorted(calls))
        else:
            ok(name)


def main():
    if not os.path.exists(JITC):
        fail("mixed.setup", "%s not built" % JITC)
        return 1
    typing_pairs()
    typing_weak()
    for target in TARGETS:
        values_floats(target)
        values_exponent_types(target)
        values_int_x(target)
        values_programs(target)
    cuda_compiles()
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
