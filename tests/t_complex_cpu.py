#!/usr/bin/env python3
"""t_complex_cpu.py -- complex64 and complex128 on the cpu target
(src/cpu/complex.c, host.c, reduce.c), through the library, against interp
(the reference: sem_complex.h) and NumPy:

  - every operation of complex operands, on random data and the special
    values (zeros of both signs, inf and NaN in either part, the largest and
    subnormal parts): interp's bits, a NaN that arithmetic produces
    compared as any NaN (its sign is not specified), the functions that call
    the semantics (log, sqrt, **, ...) bit for bit;
  - exp, computed from the vector math: within 4 ulp of the exact result
    (mpmath) in each part, complex64 within 1; interp's bits in every lane
    the C library computes (a part not finite, a large real part); a
    vector holding such a lane gives its other lanes the same bits as one
    without; angle (the vector math's arctan2) within 4 ulp;
  - the product's fma where the machine has no FMA (x86-64, -v2): exact,
    also where the float64 sum lands on a float32 midpoint;
  - casts between the complex types and from and to every other type;
  - complex scalars (strong parameters) and constants;
  - reductions: min, max, argmin, argmax interp's bits (a NaN part first
    of all); sum, prod and mean close to NumPy's and the same bits for
    threads 1, 2, 3, 7 and every level;
  - split programs (several groups, complex temporaries and reductions
    crossing them): the bits of the same statements in one group;
  - sizes 0, 1, 15, 16, 17, 33 and a few blocks of RB (vector tails and
    blocks), threads 1 and 3;
  - every x86-64 level the host runs (x86-64 to -v4, as the library says);
  - --emit asm: FMA instructions at v3 and v4, no call of fmaf at any
    level; --emit llvm: exp calls the vector math, and the semantics only
    in its rare block.
Under SAN=1 it runs again with the sanitizer runtimes preloaded into python
(the library is the ASan+UBSan build).  Prints "ok NAME", "FAIL NAME: why"
or "skip NAME: why".
"""
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reduce_lib import ROOT, JitcError, Runner, under_sanitizers  # noqa: E402

under_sanitizers("complex_cpu")
if "cpu" not in os.environ.get("JITC_TARGETS", "interp cpu").split():
    print("skip complex_cpu: the cpu target is not available")
    sys.exit(0)

with open(os.path.join(ROOT, "src", "cpu", "cpu.h")) as f:
    RB = int(re.search(r"#define RB (\d+)", f.read()).group(1))
LEVELS = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
C64, C128 = np.complex64, np.complex128
UNAVAILABLE = 4  # JITC_E_UNAVAILABLE
FAILS = 0
R = Runner()
np.seterr(all="ignore")
warnings.simplefilter("ignore")  # NumPy's mean of no elements


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print(f"FAIL complex_cpu.{name}: {why}")
    else:
        print(f"ok complex_cpu.{name}")


def interp_has(prog, dt, want=None):
    """Whether interp, the reference, computes prog on dt (and gives `want`
    on its tiny input, when given): the functions and complex reductions
    arrive there in steps."""
    a = np.array([1 + 2j, 3 - 1j], dt)
    try:
        got = R.run(prog, {"a": a, "b": a[::-1].copy()}, "interp")
    except JitcError:
        return False
    return want is None or np.allclose(np.asarray(got["c" if "c" in got else "s"]), want)


def skip(name, why):
    print(f"skip complex_cpu.{name}: {why}")


def part(dt):
    return np.float32 if np.dtype(dt) == np.complex64 else np.float64


def levels():
    """The levels this host runs (the library refuses the others)."""
    out = []
    for lv in LEVELS:
        try:
            R.run("c = a + 1", {"a": np.zeros(1, np.float32)}, "cpu", cpu=lv)
            out.append(lv)
        except JitcError as e:
            if e.status != UNAVAILABLE:
                raise
    return out


# Under the sanitizers (make test SAN=1) the library's C is their subject,
# and it is the same at every level: one level is enough there (the plain
# suite runs them all).
RUNS = levels()[-1:] if os.environ.get("SAN") == "1" else levels()
SPECIAL = [0, complex(0, -0.0), complex(-0.0, 0), complex(-0.0, -0.0), complex(np.inf, 0),
           complex(-np.inf, 0), complex(0, np.inf), complex(0, -np.inf), complex(np.inf, np.inf),
           complex(-np.inf, np.nan), complex(np.nan, 0), complex(0, np.nan),
           complex(np.nan, np.nan), complex(np.inf, np.nan), complex(1e30, 1e30),
           complex(3e38, -3e38), complex(1e-40, 3), complex(1e-310, -1e-320), complex(5, 0),
           complex(0, 5), complex(-1, 0), complex(1, 1), complex(89, 1), complex(720, 1e-300),
           complex(-104, 2), complex(-750, 0.5)]


def cdata(dt, n, rng, special=True):
    """n complex values: normal parts, with the special values sprinkled in."""
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    if special and n > 4:
        k = rng.integers(0, n, max(1, n // 8))
        a[k] = rng.choice(np.array(SPECIAL, dtype=dt), len(k))
    return a


def canon(x):
    """The bytes of x with every NaN made one NaN (a produced NaN's sign is
    not specified)."""
    x = np.atleast_1d(np.array(x))
    if np.iscomplexobj(x):
        x = x.view(part(x.dtype))
    if x.dtype.kind == "f":
        x = x.copy()
        x[np.isnan(x)] = np.nan
    return x.tobytes()


def first_diff(a, b, *ins):
    for j in range(len(a)):
        if canon(a[j:j + 1]) != canon(b[j:j + 1]):
            return f"element {j} of {len(a)}: {a[j]!r} != {b[j]!r} (inputs {[x[j] for x in ins]})"
    return "?"


def ulps(got, ref, dt):
    """Per element, the larger error of the two parts in units in the last
    place of the reference part (ref: mpmath values as Python complex of
    float64, exact enough for complex64; for complex128 an error of the
    reference below 0.01 ulp)."""
    p = part(dt)
    fi = np.finfo(p)
    out = np.zeros(len(got))
    for j, (g, r) in enumerate(zip(got, ref)):
        worst = 0.0
        for gv, rv in ((g.real, r.real), (g.imag, r.imag)):
            rv = float(rv)
            if np.isnan(rv) or np.isnan(gv):
                worst = max(worst, 0 if np.isnan(rv) and np.isnan(gv) else np.inf)
                continue
            rq = p(rv)
            if np.isinf(rq) or np.isinf(gv):
                worst = max(worst, 0 if gv == rq else 1 if abs(gv) == fi.max or abs(rq) == fi.max else np.inf)
                continue
            e = max(np.frexp(rv)[1] - 1, fi.minexp) - fi.nmant
            worst = max(worst, abs(float(gv) - rv) / 2.0 ** e)
        out[j] = worst
    return out


# ---- element-wise operations against interp ----

EXACT = ["a + b", "a - b", "a * b", "a / b", "-a", "+a", "square(a)", "reciprocal(a)",
         "conj(a)", "real(a)", "imag(a)", "abs(a)", "complex(real(a), imag(b))",
         "a < b", "a <= b", "a > b", "a >= b", "a == b", "a != b",
         "maximum(a, b)", "minimum(a, b)", "fmax(a, b)", "fmin(a, b)", "clip(a, b, a * 2)",
         "isnan(a)", "isinf(a)", "isfinite(a)", "where(real(a) > 0, a, b)", "where(a, 1, 2)",
         "a * 2 + 1j", "a ** 2", "a ** 3", "a ** b", "log(a)", "sqrt(a)", "sign(a)", "sin(a)",
         "tanh(a)", "arcsin(a)", "log1p(a)", "expm1(a)", "exp2(a)", "rint(a)"]


def check_exact(dt, rng):
    a, b = cdata(dt, 301, rng), cdata(dt, 301, rng)
    # ties of the order: equal values, equal real parts, -0.0 beside 0.0
    b[::7] = a[::7]
    b[1::7] = a[1::7].real + 1j * (a[1::7].imag + rng.choice([-1, 1], len(a[1::7])))
    b[2::7] = -0.0 * a[2::7].real + 1j * a[2::7].imag
    for prog in EXACT:
        if not interp_has("c = " + prog, dt):
            skip(f"{np.dtype(dt).name}.{prog}", "interp does not compute it yet")
            continue
        ref = R.run("c = " + prog, {"a": a, "b": b}, "interp")["c"]
        bad = []
        for lv in RUNS:
            for n in (1, 15, 16, 17, 33, 301):
                got = R.run("c = " + prog, {"a": a[:n], "b": b[:n]}, "cpu", cpu=lv,
                            threads=1 if n < 301 else 3)["c"]
                if canon(got) != canon(ref[:n]):
                    bad.append(f"{lv} n={n}: {first_diff(got, ref[:n], a, b)}")
                    break
        report(f"{np.dtype(dt).name}.{prog}", "; ".join(bad[:2]))


def check_fma(rng):
    """complex64's product on the levels without FMA (the float64 emulation
    of fmaf): random bit patterns, and sums that land on a midpoint of
    float32 in float64 (1 + 2^-11 + 2^-24 + 2^-80: rounded twice, 1 + 2^-11)."""
    n = 20000
    bits = rng.integers(0, 2**32, (4, n), dtype=np.uint64).astype(np.uint32).view(np.float32)
    a = (bits[0] + 1j * bits[1]).astype(C64)
    b = (bits[2] + 1j * bits[3]).astype(C64)
    a[:64] = complex(1 + 2**-12, 2**-40)
    b[:64] = complex(1 + 2**-12, -2**-40)
    a[1:64:2] *= -1
    ref = R.run("c = a * b", {"a": a, "b": b}, "interp")["c"]
    want = np.float32(1 + 2**-11 + 2**-23)
    bad = [] if ref[0].real == want else [f"interp: {ref[0]!r}, want {want!r}"]
    for lv in RUNS:
        got = R.run("c = a * b", {"a": a, "b": b}, "cpu", cpu=lv)["c"]
        if canon(got) != canon(ref):
            bad.append(f"{lv}: {first_diff(got, ref, a, b)}")
    report("complex64.fma_exact", "; ".join(bad))


def exact_exp(a):
    import mpmath
    mpmath.mp.prec = 120
    out = []
    for z in a:
        r = mpmath.exp(mpmath.mpc(float(z.real), float(z.imag)))
        out.append(complex(float(r.real), float(r.imag)))
    return np.array(out)


def check_exp(dt, rng):
    """exp from the vector math: its accuracy, its rare lanes, its vectors."""
    name = np.dtype(dt).name
    with_interp = interp_has("c = exp(a)", dt)
    limit = 1 if dt == C64 else 4
    n = 3000
    a = cdata(dt, n, rng, special=False)
    a[: n // 3] *= 30  # large imaginary parts, real parts toward the ends
    a[n // 3: n // 2] = (rng.uniform(-100, 88, n // 2 - n // 3) if dt == C64 else
                         rng.uniform(-740, 709, n // 2 - n // 3)) + 1j * a[n // 3: n // 2].imag
    a[n // 2: n // 2 + 100] = a[n // 2: n // 2 + 100].real + 1j * rng.uniform(-1e-38, 1e-38, 100)
    a[n // 2 + 100: n // 2 + 200] = 1e6 * a[n // 2 + 100: n // 2 + 200]
    if not with_interp:  # the lanes of the vector math alone: the others are interp's
        a = a[a.real <= (88 if dt == C64 else 709)]
    try:
        ref = exact_exp(a)
    except ImportError:
        skip(f"{name}.exp_accuracy", "mpmath is not installed (python3 -m pip install mpmath)")
        ref = None
    for lv in RUNS if ref is not None else []:
        got = R.run("c = exp(a)", {"a": a}, "cpu", cpu=lv)["c"]
        u = ulps(got, ref, dt)
        k = int(np.argmax(u))
        report(f"{name}.exp_accuracy.{lv}",
               f"{u[k]:.2f} ulp at {a[k]!r}: {got[k]!r}, exact {ref[k]!r}" if u[k] > limit else None)
    # The lanes the C library computes: interp's bits; the other lanes of
    # their vectors: the bits they have in vectors of ordinary lanes alone.
    if not with_interp:
        skip(f"{name}.exp_special", "interp does not compute exp yet")
        return
    s = np.array(SPECIAL, dtype=dt)
    plain = cdata(dt, 16 * len(s), rng, special=False)
    mixed = plain.copy()
    mixed[np.arange(len(s)) * 16 + 5] = s
    ref_i = R.run("c = exp(a)", {"a": mixed}, "interp")["c"]
    bad = []
    for lv in RUNS:
        g_plain = R.run("c = exp(a)", {"a": plain}, "cpu", cpu=lv)["c"]
        g_mixed = R.run("c = exp(a)", {"a": mixed}, "cpu", cpu=lv)["c"]
        # the C library's lanes: a part not finite, a real part above glibc's
        # threshold of scaling; the special values' other lanes: accurate
        spec = np.zeros(len(mixed), bool)
        spec[np.arange(len(s)) * 16 + 5] = True
        lib = ~np.isfinite(mixed.real) | ~np.isfinite(mixed.imag)
        lib |= mixed.real > (88 if dt == C64 else 709)
        if canon(g_mixed[lib]) != canon(ref_i[lib]):
            bad.append(f"{lv}: special lanes {first_diff(g_mixed[lib], ref_i[lib], mixed[lib])}")
        fast = spec & ~lib
        u = ulps(g_mixed[fast], exact_exp(mixed[fast]), dt)
        if (u > limit).any():
            k = int(np.argmax(u))
            bad.append(f"{lv}: {u[k]:.2f} ulp at {mixed[fast][k]!r}")
        if canon(g_mixed[~spec]) != canon(g_plain[~spec]):
            bad.append(f"{lv}: ordinary lanes beside a special one differ")
    report(f"{name}.exp_special", "; ".join(bad[:3]))


def check_angle(dt, rng):
    """angle: atan2 from the vector math, within 4 ulp of interp's."""
    b = cdata(dt, 1000, rng)
    ri = R.run("c = angle(a)", {"a": b}, "interp")["c"]
    bad = []
    for lv in RUNS:
        g = R.run("c = angle(a)", {"a": b}, "cpu", cpu=lv)["c"]
        d = np.abs(g.astype(np.float64) - ri) / np.spacing(np.abs(ri).astype(part(dt)))
        d[np.isnan(g) & np.isnan(ri)] = 0
        if not (d <= 4).all():
            k = int(np.nanargmax(np.where(np.isnan(d), np.inf, d)))
            bad.append(f"{lv}: angle({b[k]!r}) {g[k]!r}, interp {ri[k]!r}")
    report(f"{np.dtype(dt).name}.angle", "; ".join(bad[:2]))


# ---- casts, scalars, constants ----

OTHER = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
         np.uint64, np.float16, np.float32, np.float64]


def check_casts(rng):
    bad = []
    for src in OTHER:
        x = (rng.standard_normal(100) * 1e5).astype(src) if src != np.bool_ else rng.random(100) < .5
        if src in (np.int64, np.uint64):
            x[:4] = np.array([2**62 + 1, 2**53 + 1, 2**24 + 1, 7]).astype(src)
        for to in ("c64", "c128"):
            ref = R.run(f"c = {to}(x)", {"x": x}, "interp")["c"]
            for lv in RUNS:
                got = R.run(f"c = {to}(x)", {"x": x}, "cpu", cpu=lv)["c"]
                if canon(got) != canon(ref):
                    bad.append(f"{to}({np.dtype(src).name}) {lv}: {first_diff(got, ref, x)}")
    for dt in (C64, C128):
        z = cdata(dt, 200, rng)
        for prog in ("c = c64(z)", "c = c128(z)", "c = bool(z)"):
            ref = R.run(prog, {"z": z}, "interp")["c"]
            for lv in RUNS:
                got = R.run(prog, {"z": z}, "cpu", cpu=lv)["c"]
                if canon(got) != canon(ref):
                    bad.append(f"{prog} of {np.dtype(dt).name} {lv}: {first_diff(got, ref, z)}")
    report("casts", "; ".join(bad[:4]))


def check_scalars(rng):
    """Complex constants, a weak complex scalar, strong parameters of
    either complex type."""
    bad = []
    for dt, code in ((C64, 13), (C128, 14)):
        a = cdata(dt, 37, rng)
        sc = {"k": 0.1 - 1.25j, "q": (2.5 + 3e-8j, code), "x": (1e-3 - 7j, 27 - code)}
        for prog in ("c = a * (2 - 3j) + 1.5j", "c = a / (0.5 + 0.25j) - a ** 2",
                     "c = a * k + q", "c = where(real(a) > 0, q, a) / k", "c = a * x"):
            ref = R.run(prog, {"a": a}, "interp", scalars=sc)["c"]
            for lv in RUNS:
                got = R.run(prog, {"a": a}, "cpu", cpu=lv, scalars=sc)["c"]
                if canon(got) != canon(ref) or got.dtype != ref.dtype:
                    bad.append(f"{prog} {np.dtype(dt).name} {lv}: {first_diff(got, ref, a)}")
    report("scalars", "; ".join(bad[:3]))


# ---- reductions ----

def check_reductions(rng):
    bad = []
    for dt in (C64, C128):
        if not all(interp_has(f"s = {op}(a)", dt, want) for op, want in
                   (("sum", 4 + 1j), ("prod", 5 + 5j), ("min", 1 + 2j), ("argmax", 1))):
            skip(f"reductions.{np.dtype(dt).name}", "interp does not compute them yet")
            continue
        for n in (0, 1, 15, 17, RB - 1, RB + 1, 3 * RB + 5):
            for nan in (False, True):
                a = cdata(dt, n, rng, special=False)
                if n > 3:
                    a[rng.integers(0, n, 3)] = a[n // 2]  # ties
                if nan and n > 5:
                    a[n // 3] = complex(1, np.nan)
                    a[2 * n // 3] = complex(np.nan, 0)
                for op in ("sum", "prod", "mean", "min", "max", "argmin", "argmax"):
                    if n == 0 and op in ("min", "max", "argmin", "argmax"):
                        continue
                    prog = f"s = {op}(a)"
                    ri = R.run(prog, {"a": a}, "interp")["s"]
                    res = [R.run(prog, {"a": a}, "cpu", threads=th, cpu=lv)["s"]
                           for th in (1, 2, 3, 7) for lv in RUNS]
                    tag = f"{np.dtype(dt).name} n={n} {op}{' NaN' if nan else ''}"
                    if any(canon(r) != canon(res[0]) for r in res):
                        bad.append(f"{tag}: differs between threads or levels: {res}")
                    elif op in ("min", "max", "argmin", "argmax"):
                        if canon(res[0]) != canon(ri):
                            bad.append(f"{tag}: {res[0]!r}, interp {ri!r}")
                    elif op != "prod" or n < 1000:
                        ref = getattr(np, op)(a.astype(C128)) if n else getattr(np, op)(a)
                        tol = (1e-5 if dt == C64 else 1e-12) * max(1.0, float(np.abs(a).sum()))
                        if not (np.isnan(ref) and np.isnan(res[0])) and n and abs(res[0] - ref) > tol:
                            bad.append(f"{tag}: {res[0]!r}, NumPy {ref!r}")
    report("reductions", "; ".join(bad[:4]))


def check_split(rng):
    """Programs of many statements, cut into groups: complex temporaries
    cross groups, reductions sit in several: interp's values (reductions:
    NumPy's order, sums close), and the same bits for threads 1 and 3 and
    every level."""
    stmts = ["let t0 = a * b"]
    for k in range(1, 40):
        stmts.append(f"let t{k} = t{k - 1} * (1 + 0.5j) + a / (b + {k})")
    stmts += ["c = t39 + t0", "d = sqrt(abs(t10)) * conj(t1)"]
    reds = ["s = sum(t20)", "m = max(t30)", "k = argmin(t39)", "p = mean(t5)"]
    bad = []
    for dt in (C64, C128):
        name = np.dtype(dt).name
        progs = {"elementwise": "\n".join(stmts)}
        if all(interp_has(p, dt, w) for p, w in (("s = sum(a)", 4 + 1j), ("s = max(a)", 3 - 1j),
                                                ("s = argmin(a)", 0), ("s = mean(a)", 2 + .5j))):
            progs["reductions"] = "\n".join(stmts + reds)
        else:
            skip(f"split.{name}.reductions", "interp does not compute them yet")
        a, b = cdata(dt, 3 * RB + 7, rng, special=False), cdata(dt, 3 * RB + 7, rng, special=False)
        for what, prog in progs.items():
            ref = R.run(prog, {"a": a, "b": b}, "interp")
            one = None
            for lv in RUNS:
                for th in (1, 3):
                    got = R.run(prog, {"a": a, "b": b}, "cpu", cpu=lv, threads=th)
                    if one is None:
                        one = got
                        for nm in ("c", "d", "m", "k"):
                            if nm in got and canon(got[nm]) != canon(ref[nm]):
                                g, r = np.atleast_1d(got[nm]), np.atleast_1d(ref[nm])
                                bad.append(f"{name} {nm}: {first_diff(g, r)}")
                        for nm in ("s", "p"):
                            if nm in got and abs(got[nm] - ref[nm]) > 1e-4 * abs(ref[nm]):
                                bad.append(f"{name} {nm}: {got[nm]!r}, interp {ref[nm]!r}")
                    for nm in got:
                        if canon(got[nm]) != canon(one[nm]):
                            bad.append(f"{name} {what} {lv} threads {th}: {nm} differs")
    report("split", "; ".join(bad[:4]))


# ---- the code ----

def check_code():
    bad = []
    decl = {"a": 13, "b": 13}
    for lv in LEVELS:
        asm = R.emit("c = a * b", decl, "cpu", "asm", cpu=lv)
        if "fma" in re.sub(r"vfn?m(add|sub)", "", asm).lower():
            bad.append(f"{lv}: calls fmaf")
        if lv in ("x86-64-v3", "x86-64-v4") and not re.search(r"vfn?m(add|sub)", asm):
            bad.append(f"{lv}: no FMA instruction")
    llvm = R.emit("c = exp(a)", {"a": 13}, "cpu", "llvm", cpu="x86-64-v3")
    body = llvm[llvm.index("\nbody:"):llvm.find("\ncexp.slow")]
    if "\ncexp.slow" not in llvm:
        bad.append("exp has no rare block")
    elif "jitc_cpu_sem" in body:
        bad.append("exp calls the semantics outside its rare block")
    if not re.search(r"call .*(_ZGV|Sleef_)\w*exp", body):
        bad.append("exp does not call the vector math")
    report("code", "; ".join(bad))


def check_ir():
    """The LLVM IR of every complex operation and reduction, of both types,
    at every level, passes LLVM's verifier (a malformed module, say
    vectors of different widths in the reductions' tree, can crash the
    code generator instead of failing)."""
    opt = next((shutil.which(f"opt-{v}") for v in (21, 20, 19, 18, 17) if shutil.which(f"opt-{v}")),
               shutil.which("opt"))
    if not opt:
        skip("ir_verifies", "no LLVM opt to verify with")
        return
    ops = [e for e in EXACT if "j" not in e]
    stmts = [f"o{k} = {e}" for k, e in enumerate(ops)]
    stmts += ["e = exp(a)", "g = angle(a)"] + [f"r{k} = {op}(a * b)" for k, op in enumerate(
        ("sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all"))]
    bad = []
    for code in (13, 14):
        for lv in LEVELS:
            ir = R.emit("\n".join(stmts), {"a": code, "b": code}, "cpu", "llvm", cpu=lv)
            p = subprocess.run([opt, "-passes=verify", "-disable-output"], input=ir, text=True,
                               capture_output=True)
            if p.returncode:
                bad.append(f"{'complex64' if code == 13 else 'complex128'} {lv}: {p.stderr.strip()[:300]}")
    report("ir_verifies", "; ".join(bad[:2]))


def main():
    rng = np.random.default_rng(20240)
    try:
        R.run("c = a * 1j", {"a": np.ones(1, np.float32)}, "cpu")
    except JitcError as e:
        print(f"FAIL complex_cpu.available: {e}")
        return 1
    for dt in (C64, C128):
        check_exact(dt, rng)
        check_exp(dt, rng)
        check_angle(dt, rng)
    check_fma(rng)
    check_casts(rng)
    check_scalars(rng)
    check_reductions(rng)
    check_split(rng)
    check_code()
    check_ir()
    R.close()
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
