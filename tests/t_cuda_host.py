#!/usr/bin/env python3
"""t_cuda_host.py -- the cuda target's integer code, run on the host.

The element function jitc_elem that `jitc --emit cuda` writes for a program
of integers is plain C++ apart from CUDA's __device__: compiled by the
host's C++ compiler (clang++ where installed) with UndefinedBehaviorSanitizer (so that an 8- or 16-bit
operand promoted to int whose product overflows int is an error, as it
would be undefined on the GPU too) and run over every pair of edge values
(0, 1, -1, 2, the ends of the type and their neighbours, the width and its
neighbours as shift counts, ...), each operator and function of src/ops.h
that integers take, and every cast to an integer, bool, float32 or
float64, it must give NumPy's bits where NumPy defines them and the
language's where jitc defines them (docs/language.md: x // 0 == 0, shifts
by counts outside [0, bits), a negative power, reciprocal).  Every integer
type of src/types.h.  No GPU is needed.
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_cuda import jitc  # noqa: E402
from t_cuda_convert import SHIMS, exact_half, host_code  # noqa: E402
from t_cuda_types import TYPES  # noqa: E402

FAILS = 0
BIN = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and,
       "|": np.bitwise_or, "^": np.bitwise_xor, "<": np.less, "<=": np.less_equal,
       ">": np.greater, ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal}


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print("FAIL cuda_host.%s: %s" % (name, why))
    else:
        print("ok cuda_host.%s" % name)


def edge_pairs(dt):
    """Every pair of the type's edge values, as arrays a and b, and c."""
    info = np.iinfo(dt)
    bits = 8 * np.dtype(dt).itemsize
    v = {0, 1, 2, 3, 7, bits - 1, bits, bits + 1, 2 * bits, info.max, info.max - 1, info.min,
         info.min + 1, info.max // 2, 100}
    if info.min < 0:
        v |= {-1, -2, -3, -7, -bits, -(bits - 1), info.min // 2}
    v = sorted(x for x in v if info.min <= x <= info.max)
    pairs = list(itertools.product(v, v))
    a = np.array([p[0] for p in pairs], dtype=object).astype(dt)
    b = np.array([p[1] for p in pairs], dtype=object).astype(dt)
    c = np.roll(a, 7)
    return a, b, c


def shift_ref(a, b, left):
    bits = 8 * a.dtype.itemsize
    n = b.astype(np.uint64) if b.dtype.kind == "u" else b.astype(np.int64).astype(np.uint64)
    inside = n < bits
    s = np.where(inside, n, 0).astype(a.dtype)
    out = np.left_shift(a, s) if left else np.right_shift(a, s)
    far = np.zeros_like(a) if left or a.dtype.kind == "u" else np.where(a < 0, -1, 0).astype(a.dtype)
    return np.where(inside, out, far).astype(a.dtype)


def pow_ref(a, b):
    """Repeated squaring, wrapping; a negative exponent gives trunc(1/a^-b)."""
    mod, signed = 1 << 8 * a.dtype.itemsize, a.dtype.kind == "i"
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        r = (1 if x == 1 else (-1 if y % 2 else 1) if x == -1 else 0) if y < 0 else pow(x, y, mod)
        r %= mod
        out.append(r - mod if signed and r >= mod // 2 else r)
    return np.array(out, dtype=object).astype(a.dtype)


def sat_ref(x, dt):
    """float -> integer: NaN 0, truncated, clamped at the type's ends."""
    info = np.iinfo(dt)
    out = [0 if v != v else int(info.max) if v >= info.max + 1 else int(info.min)
           if v <= info.min - 1 else int(v) for v in x.tolist()]
    return np.array(out, dtype=object).astype(dt)


def statements(dt):
    """(source, reference) of each op on a, b, c of type dt."""
    a, b, c = edge_pairs(dt)
    S = []
    for op, f in BIN.items():
        S.append(("a %s b" % op, f(a, b)))
    with np.errstate(all="ignore"):
        S += [("a // b", np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b))).astype(dt)),
              ("a % b", np.where(b == 0, 0, np.remainder(a, np.where(b == 0, 1, b))).astype(dt)),
              ("fmod(a, b)", np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b))).astype(dt)),
              ("a ** b", pow_ref(a, b)),
              ("a << b", shift_ref(a, b, True)), ("a >> b", shift_ref(a, b, False)),
              ("-a", np.negative(a)), ("~a", np.invert(a)), ("abs(a)", np.abs(a)),
              ("square(a)", np.multiply(a, a)), ("sign(a)", np.sign(a)),
              ("reciprocal(a)", np.where(a == 1, 1, np.where((a == np.array(-1).astype(dt))
                                                             & (np.dtype(dt).kind == "i"), a, 0)).astype(dt)),
              ("minimum(a, b)", np.minimum(a, b)), ("maximum(a, b)", np.maximum(a, b)),
              ("fmin(a, b)", np.fmin(a, b)), ("fmax(a, b)", np.fmax(a, b)),
              ("clip(a, b, c)", np.minimum(np.maximum(a, b), c)),
              ("where(a, b, c)", np.where(a != 0, b, c)),
              ("floor(a)", a), ("ceil(a)", a), ("trunc(a)", a),
              ("isnan(a)", np.zeros(len(a), bool)), ("isfinite(a)", np.ones(len(a), bool))]
    for t in TYPES:
        if t["kind"] in ("T_SINT", "T_UINT"):
            S.append(("%s(a)" % t["name"], a.astype(t["name"])))
    S += [("bool(a)", a != 0), ("float32(a)", a.astype(np.float32)), ("float64(a)", a.astype(np.float64))]
    return (a, b, c), S


def float_statements():
    """Saturating casts of float32 and float64 to every integer type."""
    out = []
    for ft in (np.float32, np.float64):
        fi = np.finfo(ft)
        v = [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1, -1, np.nan, -np.nan, np.inf, -np.inf, fi.max, -fi.max]
        for k in (7, 8, 15, 16, 31, 32, 63, 64):
            v += [2.0 ** k, -(2.0 ** k), 2.0 ** k + 1, -(2.0 ** k) - 1, 2.0 ** k - 1, -(2.0 ** k) + 1]
        a = np.array(v, dtype=ft)
        with np.errstate(all="ignore"):
            a = np.concatenate([a, np.nextafter(a, ft(np.inf)), np.nextafter(a, ft(-np.inf))])
        for t in TYPES:
            if t["kind"] in ("T_SINT", "T_UINT"):
                out.append((np.dtype(ft).name, a, "%s(a)" % t["name"], sat_ref(a, t["name"])))
    return out


def build_and_run(cxx, tmp, args, prog, inputs):
    """Compiles jitc_elem of prog for the host and runs it on inputs (by
    array name); returns {output name: array} or an error string."""
    rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args, prog)
    if rc != 0:
        return "--emit cuda: exit %d: %s" % (rc, err.strip()[:500])
    arrays = re.findall(r"^// a(\d+): array '(\w+)', (\w+), (\w+)$", src, re.M)
    start, end = src.find("typedef "), src.find("template <typename T, int N>")
    code, why = host_code(src[start:end])
    if why:
        return why
    cname = {t["name"]: t["cname"] for t in TYPES}
    n = len(next(iter(inputs.values())))
    main = ["int main() {"]
    for k, name, dt, role in arrays:
        main.append("  static %s x%s[%d];" % (cname[dt], k, n))
        if role == "input":
            main.append('  { FILE *f = fopen("%s.in", "rb"); if (!f || fread(x%s, sizeof *x%s, %d, f) != %d) '
                        'return 2; fclose(f); }' % (name, k, k, n, n))
    main.append("  for (long j = 0; j < %d; j++) jitc_elem(j, %s);" % (
        n, ", ".join("x%s[j]" % k for k, _, _, _ in arrays)))
    for k, name, dt, role in arrays:
        if role == "output":
            main.append('  { FILE *f = fopen("%s.out", "wb"); fwrite(x%s, sizeof *x%s, %d, f); fclose(f); }'
                        % (name, k, k, n))
    main.append("  return 0;\n}\n")
    head = SHIMS + "#include <cmath>\nusing namespace std;\n"
    cpp = os.path.join(tmp, "elem.cpp")
    with open(cpp, "w") as f:
        f.write(head + code + "\n".join(main))
    for name, x in inputs.items():
        np.ascontiguousarray(x).tofile(os.path.join(tmp, name + ".in"))
    exe = os.path.join(tmp, "elem")
    p = subprocess.run([cxx, "-std=c++17", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-frounding-math",
                        "-o", exe, cpp], capture_output=True, text=True)
    if p.returncode != 0:
        return "%s failed: %s" % (cxx, p.stderr[:2000])
    p = subprocess.run([exe], capture_output=True, text=True, cwd=tmp)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr[:2000])
    dtypes = {name: dt for _, name, dt, _ in arrays}
    return {name: np.fromfile(os.path.join(tmp, name + ".out"), dtype=np.dtype(dtypes[name]))
            for _, name, _, role in arrays if role == "output"}


def compare(name, got, want, src):
    """'' when got has want's type and bits."""
    want = np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return "%s: %s[%d], want %s[%d]" % (src, got.dtype, len(got), want.dtype, len(want))
    gb = np.frombuffer(got.tobytes(), np.uint8).reshape(len(got), -1)
    wb = np.frombuffer(want.tobytes(), np.uint8).reshape(len(want), -1)
    bad = np.nonzero((gb != wb).any(axis=1))[0]
    if len(bad):
        k = int(bad[0])
        return "%s: %d elements differ, first at %d: got %r want %r" % (src, len(bad), k, got[k], want[k])
    return ""


# ---- float16 and bfloat16: each op is float32's on the widened operands, rounded ----

# The float32 functions whose last bit the C library and NumPy may disagree
# on: their 16-bit results may differ by one unit in the last place.
# Two operands' NaNs: which one a sum keeps depends on the order the
# compiler puts them in; any NaN will do there.
ANYNAN = {"+", "-", "*", "/", "//", "%", "**", "fmod", "hypot", "arctan2", "fma"}
INEXACT = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
           "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt",
           "**", "hypot", "arctan2", "fma"}
NPFN = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "//": np.floor_divide,
        "%": np.remainder, "**": np.power, "neg": np.negative, "abs": np.abs,
        "fma": lambda a, b, c: (a.astype(np.float64) * b + c).astype(np.float32),
        "clip": lambda a, b, c: np.minimum(np.maximum(a, b), c),
        }


def half_type(name):
    if name == "float16":
        return np.float16
    import ml_dtypes
    return ml_dtypes.bfloat16


def half_values(name, signalling=True):
    """Edge values of a 16-bit float type, every pair of them as a and b;
    quiet NaNs with payloads, and signalling ones (which C's functions may
    quiet or not) unless told not to."""
    ht = half_type(name)
    fi = {"float16": (65504.0, 2.0 ** -14, 2.0 ** -24), "bfloat16": (3.3895e38, 2.0 ** -126, 2.0 ** -133)}[name]
    v = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.0, 3.0, -2.5, 0.1, 100.0, 1000.0, 2049.0, 1 / 3, np.inf, -np.inf,
         fi[0], -fi[0], fi[1], fi[2], -fi[2], 7.0, 0.75, 1e-3]
    x = np.array(v, dtype=np.float32).astype(ht)
    nans = [0x7e00, 0xfe00, 0x7e55] if name == "float16" else [0x7fc0, 0xffc0, 0x7fc5]
    if signalling:
        nans += [0x7c01, 0xfd55] if name == "float16" else [0x7f81, 0xff85]
    nans = np.array(nans, dtype=np.uint16).view(ht)
    x = np.concatenate([x, nans])
    pairs = list(itertools.product(range(len(x)), range(len(x))))
    a = x[[p[0] for p in pairs]]
    b = x[[p[1] for p in pairs]]
    return a, b, np.roll(a, 5)


HALF_BITS = {"NEG", "ABS", "COPYSIGN", "MINIMUM", "MAXIMUM", "FMIN", "FMAX", "CLIP", "COPY"}


def half_bits_ref(opid, a, b, c):
    """What src/semantics.h's HALF_OPS give: the sign bit moved, or the
    bits of the operand that comparing the float32 values picks (a NaN
    first, then the second of two equal ones), a NaN kept whole, sign and
    payload, as NumPy's float16 and ml_dtypes' bfloat16 negative, absolute,
    copysign and minimum keep it (float32's, rounded back, would not keep a
    bfloat16 payload); copy, the operand's bits (np.copy's)."""
    u = [x.view(np.uint16) for x in (a, b, c)]
    w = [x.astype(np.float32) for x in (a, b, c)]

    def pick(wi, wj, ui, uj, first_nan, op):  # (bits, float32 value) of the pick
        take = np.isnan(wi if first_nan else wj) | op(wi, wj)
        return np.where(take, ui, uj), np.where(take, wi, wj)

    lt, gt = np.less, np.greater
    if opid == "COPY":  # np.copy: the bits as they are
        r = u[0]
    elif opid == "NEG":
        r = u[0] ^ 0x8000
    elif opid == "ABS":
        r = u[0] & 0x7fff
    elif opid == "COPYSIGN":
        r = (u[0] & 0x7fff) | (u[1] & 0x8000)
    elif opid == "CLIP":  # minimum(maximum(x, lo), hi)
        m, wm = pick(w[0], w[1], u[0], u[1], True, gt)
        r, _ = pick(wm, w[2], m, u[2], True, lt)
    else:
        r, _ = pick(w[0], w[1], u[0], u[1], opid in ("MINIMUM", "MAXIMUM"),
                    lt if opid in ("MINIMUM", "FMIN") else gt)
    return np.asarray(r, dtype=np.uint16).view(a.dtype)


def half_statements(name, ops):
    """(source, reference, inexact) of each op on a, b, c of the 16-bit type."""
    ht = half_type(name)
    a, b, c = half_values(name, signalling=False)
    wide = [x.astype(np.float32) for x in (a, b, c)]
    S = []
    with np.errstate(all="ignore"):
        for opid, sym, arity, src in ops:
            if sym == "where":  # chooses the bits, computes nothing
                S.append((src, np.where(a.astype(np.float32) != 0, b, c), ""))
                continue
            if opid in HALF_BITS:  # moves bits, computes nothing
                S.append((src, half_bits_ref(opid, a, b, c), ""))
                continue
            if sym == "nextafter":  # steps in the 16 bits, not float32's; equal: y (C99)
                step = np.nextafter(a, b)
                S.append((src, np.where(a == b, b, step).astype(step.dtype), ""))
                continue
            f = NPFN.get(sym) or BIN.get(sym) or getattr(np, sym, None)
            if f is None:
                S.append((src, None, ""))
                continue
            r = np.asarray(f(*wide[:int(arity)]))
            S.append((src, r.astype(ht) if r.dtype.kind == "f" else r,
                      "ulp" if sym in INEXACT else "nan" if sym in ANYNAN else ""))
        for t in TYPES:
            to = t["name"]
            if t["kind"] in ("T_SINT", "T_UINT"):
                want = sat_ref(wide[0], to)
            elif to == "bool":
                want = wide[0] != 0
            elif to == name:  # no conversion: the same bits
                want = a
            else:
                want = wide[0].astype(half_type(to) if to in ("float16", "bfloat16") else to)
            S.append(("%s(a)" % to, want, ""))
        # Each operation rounds: a * b is a 16-bit float before c is added.
        ab = (wide[0] * wide[1]).astype(ht).astype(np.float32)
        S.append(("a * b + c", (ab + wide[2]).astype(ht), "nan"))
    return (a, b, c), S


def to_half_cases(name):
    """Casts of every type to the 16-bit type: (source type, inputs, reference)."""
    bf = name == "bfloat16"
    out = []
    for t in TYPES:
        src = t["name"]
        if src == name:
            continue
        if t["kind"] in ("T_SINT", "T_UINT"):
            x = np.unique(np.concatenate(edge_pairs(src)[:1]))
            if bf:  # ml_dtypes: through the nearest float32
                want = np.array([exact_half(float(np.float32(v)), bf) for v in x], dtype=np.uint16)
            else:
                want = np.array([exact_half(int(v), bf) for v in x.tolist()], dtype=np.uint16)
        elif src == "bool":
            x = np.array([0, 1], dtype=np.bool_)
            want = np.array([0, 0x3c00 if not bf else 0x3f80], dtype=np.uint16)
        elif src in ("float16", "bfloat16"):
            x = half_values(src)[0][:64]
            with np.errstate(all="ignore"):
                want = x.astype(np.float32).astype(half_type(name)).view(np.uint16)
        else:
            with np.errstate(all="ignore"):
                x = np.concatenate([edges_of(src), (np.arange(-3000, 3000) / 7).astype(src)])
                if src == "float64" and bf:  # through the nearest float32, as ml_dtypes
                    from t_cuda_convert import ref_from_f64
                    want = ref_from_f64(x.astype(np.float32).astype(np.float64), name)
                else:
                    want = x.astype(half_type(name)).view(np.uint16)
        out.append((src, x, want.view(half_type(name))))
    return out


def edges_of(dt):
    from t_cuda_convert import edges
    return edges(np.dtype(dt).type)


def same_or_near(got, want, how):
    """Indices where got is not want's bits; how "nan": any NaN for a NaN;
    "ulp": that, or one unit in the last place away."""
    gb = np.frombuffer(got.tobytes(), np.uint8).reshape(len(got), -1)
    wb = np.frombuffer(want.tobytes(), np.uint8).reshape(len(want), -1)
    bad = (gb != wb).any(axis=1)
    if how and got.dtype.kind not in "biu":
        g = got.astype(np.float32)
        w = want.astype(np.float32)
        ok = np.isnan(g) & np.isnan(w)
        if how == "ulp":
            gi = got.view(np.uint16).astype(np.int32)
            wi = want.view(np.uint16).astype(np.int32)
            ok |= (np.abs(gi - wi) <= 1) & (np.sign(g) == np.sign(w))
        bad &= ~ok
    return np.nonzero(bad)[0]


def check_halves(cxx, tmp):
    from t_cuda import op_exprs, plain_ops_table as ops_table
    for name in ("float16", "bfloat16"):
        try:
            half_type(name)
        except ImportError:
            print("skip cuda_host.%s: ml_dtypes is not installed" % name)
            continue
        args = ["--dtype", name]
        ops = []
        for opid, sym, arity in ops_table():
            if opid == "CAST":
                continue
            for e in op_exprs(opid, sym, arity):
                if jitc("-t", "cuda", "--emit", "types", *args, "o = " + e)[0] == 0:
                    ops.append((opid, sym, arity, e))
        (a, b, c), stmts = half_statements(name, ops)
        missing = [s for s, w, _ in stmts if w is None]
        stmts = [st for st in stmts if st[1] is not None]
        prog = "\n".join("o%d = %s" % (k, s) for k, (s, _, _) in enumerate(stmts))
        got = build_and_run(cxx, tmp, args, prog, {"a": a, "b": b, "c": c})
        if isinstance(got, str):
            report("ops.%s" % name, got)
            continue
        why = []
        for k, (src, want, inexact) in enumerate(stmts):
            g = got["o%d" % k]
            want = np.asarray(want)
            if g.dtype != want.dtype:
                why.append("%s: type %s, want %s" % (src, g.dtype, want.dtype))
                continue
            bad = same_or_near(g, want, inexact)
            if len(bad):
                k0 = int(bad[0])
                why.append("%s: %d differ, e.g. a=%r b=%r: got %r want %r" % (
                    src, len(bad), a[k0], b[k0], g[k0], want[k0]))
        report("ops.%s (%d statements, %d pairs%s)" % (name, len(stmts), len(a), ", no reference: "
                                                       + " ".join(missing) if missing else ""),
               "; ".join(why[:8]))
        why = []
        for src, x, want in to_half_cases(name):
            got = build_and_run(cxx, tmp, ["--dtype", src], "o = %s(a)" % name, {"a": x})
            if isinstance(got, str):
                why.append("from %s: %s" % (src, got))
                continue
            bad = same_or_near(got["o"], want, "")
            if len(bad):
                k0 = int(bad[0])
                why.append("from %s: %d differ, e.g. %r: got %r want %r" % (
                    src, len(bad), x[k0], got["o"][k0], want[k0]))
        report("casts_to.%s" % name, "; ".join(why[:8]))


def main():
    # clang: GCC narrows a product of promoted 16-bit operands that is cut to
    # 16 bits into 16-bit arithmetic before its sanitizer looks, hiding the
    # overflow of int that the GPU's compiler may exploit.
    cxx = shutil.which("clang++") or os.environ.get("CXX") or shutil.which("c++")
    rc, _, err = jitc("-t", "cuda", "--emit", "cuda", "a[i] += 1")
    if rc != 0:
        print("skip cuda_host: no cuda target: " + err.strip()[:200])
        return 0
    if not cxx:
        print("skip cuda_host: no C++ compiler")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for t in TYPES:
            if t["kind"] not in ("T_SINT", "T_UINT"):
                continue
            dt = t["name"]
            (a, b, c), stmts = statements(dt)
            args = ["--dtype", dt]
            ok = [(s, w) for s, w in stmts
                  if jitc("-t", "cuda", "--emit", "types", *args, "o = " + s)[0] == 0]
            refused = [s for s, _ in stmts if s not in dict(ok)]
            prog = "\n".join("o%d = %s" % (k, s) for k, (s, _) in enumerate(ok))
            got = build_and_run(cxx, tmp, args, prog, {"a": a, "b": b, "c": c})
            if isinstance(got, str):
                report("ops.%s" % dt, got)
                continue
            why = [compare(dt, got["o%d" % k], w, s) for k, (s, w) in enumerate(ok)]
            why = [w for w in why if w]
            report("ops.%s (%d ops, %d pairs%s)" % (dt, len(ok), len(a), ", refused: " +
                                                     " ".join(refused) if refused else ""),
                   "; ".join(why[:6]))
        cases = float_statements()
        for ft in ("float32", "float64"):
            sel = [(s, x, w) for f, x, s, w in cases if f == ft]
            prog = "\n".join("o%d = %s" % (k, s) for k, (s, _, _) in enumerate(sel))
            got = build_and_run(cxx, tmp, ["--dtype", ft], prog, {"a": sel[0][1]})
            if isinstance(got, str):
                report("saturate.%s" % ft, got)
                continue
            why = [compare(ft, got["o%d" % k], w, s) for k, (s, _, w) in enumerate(sel)]
            report("saturate.%s" % ft, "; ".join(w for w in why if w))
        # _Float16 stands in for the PTX cvt of float16: GCC has it, clang from 15.
        half_cxx = os.environ.get("CXX") or shutil.which("g++") or cxx
        check_halves(half_cxx, tmp)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
