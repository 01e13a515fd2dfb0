#!/usr/bin/env python3
"""t_cuda_complex.py -- the cuda target's complex64 and complex128, without a GPU.

NVRTC compiles (to PTX for sm_75, the oldest architecture it knows, and
sm_90, and with --fast-math) the CUDA C that jitc emits for:
  - every operator and function of src/ops.h the checker takes on complex
    operands, each complex type alone and with the other;
  - every cast to complex64 and complex128 from every type, and from them
    to bool and each other;
  - every reduction of a complex type, fused with an output;
  - complex values with every real type (promotion's casts), complex
    scalars of both types, imaginary literals;
  - a program large enough to be split into several kernels, its complex
    temporaries through scratch, with reductions;
and each compile must be clean (no error, no NVRTC warning, no header) and
each element loaded whole (16 bytes per vector step).  Then the element
function of a program of every operation runs on the host (its CUDA C
compiled by the host's C++ compiler, as t_cuda_host.py does, CUDA's math
functions becoming the C library's) over every pair of special parts (0,
-0, +-inf, NaN, 1, subnormals, the largest value, the ends of exp's range,
...) and random values of every magnitude and near the unit circle, it
must give interp's bits (a NaN for a NaN, a zero's sign included) where a
part is special and for the arithmetic, comparisons and picks, the
functions within 3 ulp elsewhere (see ULPS).  On a GPU, CUDA's functions
differ by their own ulps: make test-gpu measures them.  The step and
combine functions of min, max, argmin, argmax, any and all run the same
way over threads' interleaved elements, combined as a tree of shuffles and
in order: NumPy's element (the first of equal ones, the first with a NaN
part) and index.
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_cuda import JITC, ROOT, jitc, op_exprs, plain_ops_table  # noqa: E402
from t_cuda_convert import SHIMS, host_code  # noqa: E402
from t_cuda_types import ARCHS, TYPES, compile_clean, types, valid  # noqa: E402

FAILS = 0
COMPLEX = ["complex64", "complex128"]
REDUCTIONS = re.findall(r'^OP\((\w+),\s*"(\w+)",\s*REDUCE,', open(
    os.path.join(ROOT, "src", "ops.h")).read(), re.M)
ALL = [t["name"] for t in TYPES] + COMPLEX  # t_cuda_types' TYPES are the real ones
CNAME = {t["name"]: t["cname"] for t in types()}


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print("FAIL cuda_complex.%s: %s" % (name, why))
    else:
        print("ok cuda_complex.%s" % name)


def check_ops():
    """Every op the checker takes on each complex type (b of the other type
    too), in one program per type."""
    for dt in COMPLEX:
        for other in (dt, COMPLEX[1 - COMPLEX.index(dt)]):
            # b and c of the other type: the ops of two and three operands
            args = ["--dtype", dt] + (["--dtype", "b=" + other, "--dtype", "c=" + other]
                                      if other != dt else [])
            uses = "" if other == dt else "u = b + c\n"
            stmts = []
            for opid, name, arity in plain_ops_table():
                forms = ["%s(a)" % n for n in ALL] if opid == "CAST" else op_exprs(opid, name, arity)
                for e in forms:
                    if valid(uses + "o = " + e, args):
                        stmts.append("o%d = %s" % (len(stmts), e))
            if len(stmts) < 45:
                report("ops.%s_%s" % (dt, other), "only %d ops taken: %s" % (len(stmts), stmts))
                continue
            stmts.insert(0, uses.strip() or "u = a")
            why = compile_clean(args, "\n".join(stmts), archs=ARCHS if other == dt else ["sm_90"])
            if not why and other == dt:
                why = compile_clean(args, "\n".join(stmts), archs=["sm_90"], extra=["--fast-math"])
            report("ops.%s_%s (%d statements)" % (dt, other, len(stmts)), why)


def check_casts():
    """Every type to each complex type, and complex to what it converts to."""
    for dt in COMPLEX:
        prog = "\n".join("o%d = %s(a%d)" % (k, dt, k) for k in range(len(ALL)))
        args = []
        for k, t in enumerate(ALL):
            args += ["--dtype", "a%d=%s" % (k, t)]
        report("casts.to_%s" % dt, compile_clean(args, prog))
        prog = "o0 = bool(a); o1 = complex64(a); o2 = complex128(a); o3 = where(a, 1, 2)"
        report("casts.from_%s" % dt, compile_clean(["--dtype", dt], prog))


def check_reductions():
    """Every reduction of a complex type, in one pass with an output."""
    for dt in COMPLEX:
        args = ["--dtype", dt]
        stmts = ["r%d = %s(a)" % (k, name) for k, (_, name) in enumerate(REDUCTIONS)
                 if valid("r = %s(a)" % name, args)]
        if len(stmts) != len(REDUCTIONS):
            report("reductions.%s" % dt, "the checker took %d of %d" % (len(stmts), len(REDUCTIONS)))
            continue
        stmts.append("c = a * 2")
        report("reductions.%s (%d)" % (dt, len(stmts) - 1), compile_clean(args, "; ".join(stmts)))


def check_mixed():
    """Complex with every real type, complex scalars, imaginary literals."""
    args, stmts = [], []
    for k, t in enumerate(ALL):
        args += ["--dtype", "a%d=%s" % (k, t)]
        stmts.append("y%d = z * a%d + s * 1.5j - w" % (k, k))
    args += ["--dtype", "z=complex64", "-D", "s=2:complex64", "-D", "w=0.5:complex128"]
    # each statement with one that uses every name
    every = "x = z * s + w + " + " + ".join("complex128(a%d)" % k for k in range(len(ALL)))
    prog = [every] + [s for s in stmts if valid(every + "\n" + s, args)]
    prog.append("m = abs(z) + angle(z) + real(s) * imag(w)")
    prog.append("v = complex(a%d, a%d)" % (ALL.index("float32"), ALL.index("float16")))
    if len(prog) < len(ALL):
        report("mixed", "the checker took %d of %d statements" % (len(prog) - 3, len(ALL)))
        return
    report("mixed (%d statements)" % len(prog), compile_clean(args, "\n".join(prog)))


def check_split():
    """A program split into several kernels, complex temporaries in scratch."""
    for dt in COMPLEX:
        lines = ["let t0 = a * 2 + b"]
        lines += ["let t%d = t%d * (0.75 + 0.5j) + a - b * %d" % (k, k - 1, k % 5 + 1)
                  for k in range(1, 150)]
        lines += ["c = exp(t149) + t3; d = t75 - b; s = sum(t140); m = max(t99); k = argmin(t7)"]
        prog = "\n".join(lines)
        args = ["--dtype", dt]
        rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args, prog)
        if rc == 0 and "jitc_g1" not in src:
            report("split.%s" % dt, "not split into several kernels")
            continue
        report("split.%s" % dt, compile_clean(args, prog, archs=["sm_90"]))


def check_vectors():
    """A complex element is loaded whole: two complex64 or one complex128 per
    16-byte vector step."""
    for dt, per, load in (("complex64", 2, "ld.global.nc.v4.f32"),
                          ("complex128", 1, "ld.global.nc.v2.f64")):
        _, src, _ = jitc("-t", "cuda", "--emit", "cuda", "--dtype", dt, "b = a")
        _, ptx, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--dtype", dt, "b = a")
        want = "jitc_vec<%s, %d>" % ("c64" if per == 2 else "c128", per)
        report("vector_width.%s" % dt, "" if want in src and load in ptx else
               "want %s and %s: %s" % (want, load, sorted(set(re.findall(r"ld\.global\S*", ptx)))))


# ---- the device functions on the host ----

# Statements over a and b, run on the host and by interp; where the device
# text rounds otherwise than interp, the ulps of a part allowed for values
# that are not special: complex128's x^2 + y^2 - 1 near |z| = 1 in
# double-double where glibc's is exact (log and what calls it); glibc's
# log1p inside clog and the one a program calls; jitc's float64 hypot.
STMTS = ["a + b", "a - b", "a * b", "a / b", "-a", "square(a)", "reciprocal(a)", "conjugate(a)",
         "a < b", "a <= b", "a > b", "a >= b", "a == b", "a != b", "minimum(a, b)",
         "maximum(a, b)", "fmin(a, b)", "fmax(a, b)", "clip(a, b, a)", "isnan(a)", "isinf(a)",
         "isfinite(a)", "real(a)", "imag(a)", "bool(a)", "where(a, a, b)", "abs(a)", "angle(a)",
         "rint(a)", "exp(a)", "log(a)", "sqrt(a)", "sin(a)", "cos(a)", "tan(a)", "sinh(a)",
         "cosh(a)", "tanh(a)", "arcsin(a)", "arccos(a)", "arctan(a)", "arcsinh(a)", "arccosh(a)",
         "arctanh(a)", "expm1(a)", "log1p(a)", "exp2(a)", "log2(a)", "log10(a)", "sign(a)",
         "a ** b"]
ULPS = {"log(a)": 3, "log2(a)": 3, "log10(a)": 3, "arcsin(a)": 3, "arccos(a)": 3,
        "arcsinh(a)": 3, "arccosh(a)": 3, "arctan(a)": 3, "arctanh(a)": 3, "a ** b": 3,
        "sign(a)": 2, "log1p(a)": 2}


def host_inputs(dt):
    """a: every pair of special parts (0, -0, +-inf, NaN, 1, subnormals,
    the ends of exp's range, ...), then random values of every magnitude
    and near the unit circle; b: a rolled, every fifth a small integer (the
    repeated products of **); the count of special pairs."""
    part = np.float32 if dt == "complex64" else np.float64
    fi = np.finfo(part)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 1.5, fi.tiny / 4,
                   -fi.tiny, fi.max, -1e30, 100.0, -800.0, 89.0, 710.0, 1e-5, fi.eps, 0.9999999,
                   3.14159265], dtype=part)
    rng = np.random.default_rng(5)
    n = 3000
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
    return a, b, sp.size ** 2


def host_run(cxx, tmp, dt, prog, inputs):
    """jitc_elem of prog (arrays a and b of type dt) compiled for the host
    and run over inputs: {output: array}, or why not."""
    rc, src, err = jitc("-t", "cuda", "--emit", "cuda", "--dtype", dt, prog)
    if rc != 0:
        return "--emit cuda: exit %d: %s" % (rc, err.strip()[:500])
    arrays = re.findall(r"^// a(\d+): array '(\w+)', (\w+), (\w+)$", src, re.M)
    start, end = src.find("typedef "), src.find("template <typename T, int N>")
    code, why = host_code(src[start:end])
    if why:
        return why
    n = len(inputs["a"])
    main = ["int main() {"]
    for k, name, t, role in arrays:
        main.append("  static %s x%s[%d];" % (CNAME[t], k, n))
        if role == "input":
            main.append('  { FILE *f = fopen("%s.in", "rb"); if (!f || fread(x%s, sizeof *x%s, %d, f) != %d) '
                        'return 2; fclose(f); }' % (name, k, k, n, n))
    main.append("  for (long j = 0; j < %d; j++) jitc_elem(j, %s);" % (
        n, ", ".join("x%s[j]" % k for k, _, _, _ in arrays)))
    for k, name, t, role in arrays:
        if role == "output":
            main.append('  { FILE *f = fopen("%s.out", "wb"); fwrite(x%s, sizeof *x%s, %d, f); fclose(f); }'
                        % (name, k, k, n))
    main.append("  return 0;\n}\n")
    head = SHIMS + ("static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }\n"
                    "#include <cmath>\nusing namespace std;\n")
    cpp = os.path.join(tmp, "elem.cpp")
    with open(cpp, "w") as f:
        f.write(head + code + "\n".join(main))
    for name, x in inputs.items():
        np.ascontiguousarray(x).tofile(os.path.join(tmp, name + ".in"))
    exe = os.path.join(tmp, "elem")
    p = subprocess.run([cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-o", exe, cpp],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return "%s failed: %s" % (cxx, p.stderr[:2000])
    p = subprocess.run([exe], capture_output=True, text=True, cwd=tmp)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr[:2000])
    kinds = {name: t for _, name, t, _ in arrays}
    return {name: np.fromfile(os.path.join(tmp, name + ".out"), dtype=np.dtype(kinds[name]))
            for _, name, _, role in arrays if role == "output"}


def interp_run(tmp, dt, prog, inputs):
    """prog over inputs by interp, through .npy files: {output: array}, or why not."""
    args = ["-t", "interp", "-q"]
    for name, x in inputs.items():
        np.save(os.path.join(tmp, name + ".npy"), x)
        args += ["--in", "%s=%s" % (name, os.path.join(tmp, name + ".npy"))]
    outs = re.findall(r"^(\w+) =", prog, re.M)
    for o in outs:
        args += ["--out", "%s=%s" % (o, os.path.join(tmp, o + ".npy"))]
    rc, _, err = jitc(*args, prog)
    if rc != 0:
        return "interp: exit %d: %s" % (rc, err.strip()[:500])
    return {o: np.load(os.path.join(tmp, o + ".npy")) for o in outs}


def parts(x):
    """An array's parts as floats (one column for a real array)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return np.stack([x.real, x.imag], axis=1)
    return x.reshape(-1, 1)


def ulps(x, y):
    """Per element, the largest distance of x's parts from y's in units in
    the last place (0 for two NaNs, inf for one; 1 from -0.0 to 0.0)."""
    x, y = parts(x), parts(y)
    if x.dtype.kind != "f":
        return np.where((x != y).any(axis=1), np.inf, 0)
    i = np.int32 if x.dtype == np.float32 else np.int64
    def ordered(v):  # -0.0 one unit below 0.0
        bits = v.view(i)
        return np.where(bits < 0, -1.0 - (bits & np.iinfo(i).max), bits.astype(np.float64))
    d = np.abs(ordered(x) - ordered(y))
    d = np.where(np.isnan(x) & np.isnan(y), 0, np.where(np.isnan(x) | np.isnan(y), np.inf, d))
    return d.max(axis=1)


def check_host():
    """The emitted device code, compiled for the host over the C library,
    against interp (see the head)."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        print("skip cuda_complex.host: no C++ compiler")
        return
    prog = "\n".join("o%d = %s" % (k, e) for k, e in enumerate(STMTS))
    for dt in COMPLEX:
        a, b, nsp = host_inputs(dt)
        with tempfile.TemporaryDirectory() as tmp:
            got = host_run(cxx, tmp, dt, prog, {"a": a, "b": b})
            ref = interp_run(tmp, dt, prog, {"a": a, "b": b})
        if isinstance(got, str) or isinstance(ref, str):
            report("host.%s" % dt, got if isinstance(got, str) else ref)
            continue
        special = ~(np.isfinite(a) & (a != 0) & np.isfinite(b) & (b != 0))
        special[:nsp] = True
        bad = []
        for k, e in enumerate(STMTS):
            o = "o%d" % k
            if got[o].dtype != ref[o].dtype:
                bad.append("%s: %s, interp %s" % (e, got[o].dtype, ref[o].dtype))
                continue
            u = ulps(got[o], ref[o])
            wrong = np.nonzero(u > np.where(special, 0, ULPS.get(e, 0)))[0]
            if wrong.size:
                j = wrong[0]
                bad.append("%s: %d of %d differ, e.g. a = %r, b = %r: %r, interp %r" % (
                    e, wrong.size, a.size, a[j], b[j], got[o][j], ref[o][j]))
        report("host.%s (%d statements, %d values, %d of them special)" % (
            dt, len(STMTS), a.size, nsp), "; ".join(bad[:6]))

RED_STMTS = ["lo = min(a)", "hi = max(a)", "ai = argmin(a)", "ax = argmax(a)", "an = any(a)",
             "al = all(a)"]


def red_inputs(dt):
    """Arrays where the order of the combining shows: equal elements of
    other bits (-0j and 0j), several elements with a NaN part, NaNs after
    the extreme; and the special pairs of host_inputs, in a few orders."""
    a, _, nsp = host_inputs(dt)
    sp = a[:nsp]
    nan = complex(np.nan, 0)
    sets = [[1 + 1j, 2 - 1j, 2 - 1j, complex(-0.0, -0.0), 0j, 2 - 1j, 0j, complex(-0.0, -0.0)],
            [1, complex(1, np.nan), 5, nan, 7, complex(np.nan, 2), 9],
            [3, -1j, complex(-0.0, 0), 0j, 8, complex(np.inf, np.nan), nan, -5, -5, 2],
            [0j, complex(-0.0, -0.0)] * 5, [complex(-0.0, 0), 0j] * 7]
    out = [np.array(x, dt) for x in sets] + [sp, sp[::-1], np.roll(sp, 37), sp[sp == sp]]
    return out


def host_reduce(cxx, tmp, dt):
    """RED_STMTS's step and combine functions as emitted, compiled for the
    host into a program `red THREADS N` that reads N elements from a.in:
    THREADS threads each fold elements t, t + THREADS, ..., their partials
    combined as a warp's shuffles are (lane l takes lane l + o, o halving),
    and again in thread order as jitc_finish combines partials; each result
    (tree, in order) to NAME.out.  The path of the program and the results'
    names and types, or why not."""
    rc, src, err = jitc("-t", "cuda", "--emit", "cuda", "--dtype", dt, "\n".join(RED_STMTS))
    if rc != 0:
        return "--emit cuda: exit %d: %s" % (rc, err.strip()[:500])
    res = re.findall(r"^// a(\d+): array '(\w+)', (\w+), result$", src, re.M)
    start, end = src.find("typedef "), src.find("template <typename T, int N>")
    fin = src.find("// The results from the np partials")
    code, why = host_code(src[start:fin] + src[src.find("// One element.", fin):end])
    if why:
        return why
    ks = [k for k, _, _ in res]
    main = ["int main(int argc, char **argv) {", "  const int T = atoi(argv[1]); const long n = atol(argv[2]);",
            "  std::vector<%s> a(n);" % CNAME[dt],
            '  { FILE *f = fopen("a.in", "rb"); if (!f || fread(a.data(), sizeof a[0], n, f) != (size_t)n) return 2; fclose(f); }']
    for k in ks:
        main.append("  std::vector<jitc_p%s> x%s(T, jitc_id%s()); jitc_p%s s%s = jitc_id%s();" % ((k,) * 6))
    main.append("  for (int t = 0; t < T; t++) for (long j = t; j < n; j += T) jitc_elem(j, a[j], %s);"
                % ", ".join("x%s[t]" % k for k in ks))
    for k, name, t in res:
        main.append("  for (int t = 0; t < T; t++) s%s = jitc_c%s()(s%s, x%s[t]);" % (k, k, k, k))
        main.append("  for (int o = T / 2; o > 0; o >>= 1) for (int l = 0; l < o; l++) x%s[l] = jitc_c%s()(x%s[l], x%s[l + o]);"
                    % (k, k, k, k))
        main.append('  { %s r[2] = {jitc_fin%s(x%s[0], n), jitc_fin%s(s%s, n)}; FILE *f = fopen("%s.out", "wb"); '
                    'fwrite(r, sizeof *r, 2, f); fclose(f); }' % (CNAME[t], k, k, k, k, name))
    main.append("  return 0;\n}\n")
    head = SHIMS + ("static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }\n"
                    "#define __shfl_down_sync(m, v, o) (v)\n#define __align__(n) alignas(n)\n"
                    "#include <cmath>\n#include <vector>\n"
                    "using namespace std;\n")
    cpp = os.path.join(tmp, "red.cpp")
    with open(cpp, "w") as f:
        f.write(head + code + "\n".join(main))
    exe = os.path.join(tmp, "red")
    p = subprocess.run([cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-o", exe, cpp],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return "%s failed: %s" % (cxx, p.stderr[:2000])
    return exe, [(name, t) for _, name, t in res]


def check_host_reduce():
    """min, max, argmin, argmax, any and all of complex values by the
    emitted functions over a tree of threads (see host_reduce): NumPy's
    element, bit for bit (the first of equal elements, the first with a
    NaN part), and its index."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        print("skip cuda_complex.host_reduce: no C++ compiler")
        return
    for dt in COMPLEX:
        bad = []
        with tempfile.TemporaryDirectory() as tmp:
            built = host_reduce(cxx, tmp, dt)
            if isinstance(built, str):
                report("host_reduce.%s" % dt, built)
                continue
            exe, res = built
            for x in red_inputs(dt):
                want = {"lo": np.min(x), "hi": np.max(x), "ai": np.argmin(x), "ax": np.argmax(x),
                        "an": np.any(x), "al": np.all(x)}
                x.tofile(os.path.join(tmp, "a.in"))
                for threads in (4, 8, 32):
                    p = subprocess.run([exe, str(threads), str(len(x))], capture_output=True, text=True, cwd=tmp)
                    if p.returncode != 0:
                        bad.append("exit %d: %s" % (p.returncode, p.stderr[:500]))
                        break
                    for name, t in res:
                        got = np.fromfile(os.path.join(tmp, name + ".out"), dtype=np.dtype(t))
                        w = np.asarray(want[name], dtype=got.dtype).reshape(1)
                        for how, g in zip(("tree", "in order"), got):
                            if g.tobytes() != w.tobytes():
                                bad.append("%s of %d elements, %d threads, %s: %r, NumPy %r (%r)" % (
                                    name, len(x), threads, how, g, w[0], list(x[:10])))
        report("host_reduce.%s" % dt, "; ".join(bad[:3]))


def main():
    if not os.path.exists(JITC):
        report("setup", "%s not built" % JITC)
        return 1
    check_host()
    check_host_reduce()
    rc, _, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "a[i] += 1")
    if rc == 69:
        print("skip cuda_complex: NVRTC not found here: " + err.strip())
        return 1 if FAILS else 0
    check_vectors()
    check_casts()
    check_reductions()
    check_mixed()
    check_split()
    check_ops()
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
