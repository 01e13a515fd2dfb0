#!/usr/bin/env python3
"""fuzz_diff.py -- differential fuzzing of the targets against each other.

A seeded generator writes random well-typed programs over every operator,
function, cast and dtype of src/ops.h: several statements per program, with
`let` temporaries, in-place updates (`a op= ...`, NumPy's same-kind rule
respected), reads after writes, weak literals (ints, floats, True, nan, inf,
pi), weak and typed scalars (-D) and the index `i`.  Each program runs
through the CLI on interp (the reference semantics), cpu and, where a GPU is
present, cuda, on the same .npy inputs: random values mixed with edge cases
(0, -0.0, +-1, NaN, +-inf, subnormals, the largest and smallest values of
each type, integer extremes), over sizes that exercise empty arrays, single
elements, odd vector tails and thread splits.

Tolerances (docs/language.md, "Accuracy"): every output computed only with
exactly rounded operations (all integer and bool operations, + - * /, sqrt,
fma, //, %, fmod, floor, ceil, trunc, rint, abs, sign, square, reciprocal,
copysign, the min/max family, clip, where, comparisons, predicates, casts)
must agree bit for bit (any NaN equals any NaN; -0.0 differs from 0.0).  An
output whose value is one function that is not exactly rounded (cbrt, exp,
exp2, expm1, log*, the trigonometric and hyperbolic functions and their
inverses, arctan2, hypot, float **) applied to exactly computed operands must
agree within ULP units in the last place (default 4, the stated accuracy of
cpu and cuda; NaN where NaN; infinities equal).  Such a function is only
generated at the root of an output: below a rounding or a comparison, a
difference of one ulp may legitimately become any difference.

Usage:
  fuzz_diff.py [--seed S] [-n N] [--targets "interp cpu cuda"] [--ulp U]
               [--keep DIR] [--self-test]
Environment: JITC (the binary; default $BUILD/jitc or build/jitc).
Program k of seed S is reproducible alone: --seed S --only k.
Prints "ok fuzz_diff..." or "FAIL fuzz_diff.S.K: why" (with the program,
its inputs kept under --keep, default build-fuzz-diff/), and a summary line.
"""
import argparse
import os
import re
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")

np.seterr(all="ignore")

B, I32, I64, F32, F64 = "bool", "int32", "int64", "float32", "float64"
WB, WI, WF = "wbool", "wint", "wfloat"  # weak (Python-scalar) kinds
STRONG = [B, I32, I64, F32, F64]
NP = {B: np.bool_, I32: np.int32, I64: np.int64, F32: np.float32, F64: np.float64}
KIND = {B: 0, WB: 0, I32: 1, I64: 1, WI: 1, F32: 2, F64: 2, WF: 2}


def weak(t):
    return t in (WB, WI, WF)


def strongify(t):
    return {WB: B, WI: I64, WF: F64}.get(t, t)


def combine(ts):
    """NumPy 2 (NEP 50) result type of operands: strong ones promote by the
    table, weak ones then take the strong type (docs/language.md)."""
    strong = [t for t in ts if not weak(t)]
    weaks = [t for t in ts if weak(t)]
    if not strong:
        return max(weaks, key=lambda t: KIND[t])
    r = np.result_type(*[NP[t] for t in strong]).name
    for w in weaks:
        if w == WI and r == B:
            r = I64
        elif w == WF and KIND[r] < 2:
            r = F64
    return r


# The operator table: (spelling, arity, rule, exactly rounded).  Spellings
# that are functions are called, the others are operators.  Every row of
# src/ops.h is here, with its aliases (FN rows) and casts (CAST rows).
INEXACT = {"cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
           "tan", "arcsin", "asin", "arccos", "acos", "arctan", "atan", "sinh", "cosh", "tanh",
           "arcsinh", "asinh", "arccosh", "acosh", "arctanh", "atanh", "arctan2", "atan2",
           "hypot"}
BINOPS = {"+": "arith", "-": "nb", "*": "arith", "/": "truediv", "//": "nb", "%": "nb",
          "**": "pow", "&": "bitwise", "|": "bitwise", "^": "bitwise", "<<": "shift",
          ">>": "shift", "<": "compare", "<=": "compare", ">": "compare", ">=": "compare",
          "==": "compare", "!=": "compare"}
UNOPS = {"-": "same_nb", "~": "bitwise", "+": "same_nb"}
FUNCS = {
    "abs": (1, "same"), "absolute": (1, "same"), "fabs": (1, "same"),
    "sqrt": (1, "float"), "cbrt": (1, "float"), "square": (1, "same_nb"),
    "reciprocal": (1, "same_nb"), "exp": (1, "float"), "exp2": (1, "float"),
    "expm1": (1, "float"), "log": (1, "float"), "log2": (1, "float"), "log10": (1, "float"),
    "log1p": (1, "float"), "sin": (1, "float"), "cos": (1, "float"), "tan": (1, "float"),
    "arcsin": (1, "float"), "asin": (1, "float"), "arccos": (1, "float"), "acos": (1, "float"),
    "arctan": (1, "float"), "atan": (1, "float"), "sinh": (1, "float"), "cosh": (1, "float"),
    "tanh": (1, "float"), "arcsinh": (1, "float"), "asinh": (1, "float"),
    "arccosh": (1, "float"), "acosh": (1, "float"), "arctanh": (1, "float"),
    "atanh": (1, "float"), "floor": (1, "same"), "ceil": (1, "same"), "trunc": (1, "same"),
    "rint": (1, "float"), "round": (1, "float"), "sign": (1, "same_nb"),
    "arctan2": (2, "float"), "atan2": (2, "float"), "hypot": (2, "float"),
    "power": (2, "pow"), "pow": (2, "pow"), "fmod": (2, "nb"), "copysign": (2, "float"),
    "minimum": (2, "promote"), "maximum": (2, "promote"), "fmin": (2, "promote"),
    "fmax": (2, "promote"), "clip": (3, "promote"), "fma": (3, "float"),
    "where": (3, "where"), "isnan": (1, "pred"), "isinf": (1, "pred"), "isfinite": (1, "pred"),
}
CASTS = {"float32": F32, "f32": F32, "float64": F64, "f64": F64, "int32": I32, "i32": I32,
         "int64": I64, "i64": I64, "bool": B}
AUG_OPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"]


def result_type(rule, ts):
    """The type of an operation, or None when the checker must refuse it
    (conservatively: a few legal but borderline forms are never generated)."""
    boolish = any(KIND[t] == 0 for t in ts)
    has_float = any(KIND[t] == 2 for t in ts)
    r = combine(ts)
    if rule == "arith":
        return r
    if rule in ("nb", "pow"):
        return None if boolish else r
    if rule == "truediv":
        return F64 if KIND[r] < 2 else r
    if rule == "bitwise":
        return None if has_float else r
    if rule == "shift":
        return None if has_float or boolish else r
    if rule == "compare" or rule == "pred":
        return B
    if rule == "same":
        return strongify(r)
    if rule == "same_nb":
        return None if boolish else strongify(r)
    if rule == "float":
        if all(KIND[t] == 0 for t in ts):
            return None
        r = strongify(r)
        return F64 if KIND[r] < 2 else r
    if rule == "promote":
        return strongify(r)
    raise AssertionError(rule)


class Gen:
    """One random program, its arrays and its scalars."""

    def __init__(self, rng):
        self.rng = rng
        self.inputs = {}   # name -> dtype (read from .npy files)
        self.outputs = {}  # name -> None (type decided by jitc)
        self.scalars = {}  # name -> (-D text, type)
        self.temps = {}    # let name -> (type, exact)
        self.written = set()
        self.exact = {}    # output name -> computed only with exactly rounded operations
        self.uses = set()
        n_in = rng.randint(1, 4)
        for k in range(n_in):
            self.inputs["x%d" % k] = rng.choice(STRONG)
        if rng.random() < 0.5:
            self.scalars["s"] = (rng.choice(["2.5", "-0.5", "3", "0", "True", "1e300", "nan"]), None)
        if rng.random() < 0.4:
            t = rng.choice(STRONG)
            v = {B: "True", I32: "-3", I64: "5", F32: "0.1", F64: "-2.75"}[t]
            self.scalars["t"] = (v + ":" + t, t)

    def scalar_type(self, name):
        text, t = self.scalars[name]
        if t:
            return t
        v = text
        if v in ("True", "False"):
            return WB
        return WF if ("." in v or "e" in v or v in ("nan", "inf")) else WI

    def literal(self):
        r = self.rng
        c = r.random()
        if c < 0.45:
            v = r.choice([0, 1, 2, 3, 5, 7, 10, 31, 32, 100, 2147483647])
            return (str(v), WI)
        if c < 0.55:
            return ("(-%d)" % r.choice([1, 2, 3, 7, 2147483648]), WI)
        if c < 0.85:
            return (r.choice(["0.5", "2.5", "-0.0", "1e-3", "3.0", "1e300", "1e-310", "(-1.5)",
                              "nan", "inf", "(-inf)", "pi"]), WF)
        return (r.choice(["True", "False", "true", "false"]), WB)

    def leaf(self, allow_weak=True):
        r = self.rng
        c = r.random()
        if allow_weak and c < 0.22:
            return self.literal() + (True,)
        if allow_weak and c < 0.3 and self.scalars:
            name = r.choice(sorted(self.scalars))
            self.uses.add(name)
            return (name, self.scalar_type(name), True)
        if c < 0.36:
            return ("i", I64, True)
        if self.temps and c < 0.5:
            name = r.choice(sorted(self.temps))
            t, exact = self.temps[name]
            return (name, t, exact)
        # An output holding an inexact function's result is never read again:
        # below another operation its tolerance would be unknown.
        arrays = sorted(self.inputs) + sorted(n for n in self.written & set(self.outputs)
                                              if self.exact[n])
        name = r.choice(arrays)
        t = self.inputs.get(name) or self.outputs[name]
        return ((name + "[i]") if r.random() < 0.3 else name, t, True)

    def expr(self, depth, exact_only=True):
        """(text, type, exact): an expression of exactly rounded operations
        (or, with exact_only False, possibly one inexact function at the
        root)."""
        r = self.rng
        if depth <= 0 or r.random() < 0.2:
            return self.leaf()
        for _ in range(30):
            c = r.random()
            if c < 0.4:
                op = r.choice(sorted(BINOPS))
                a = self.expr(depth - 1)
                b = self.expr(depth - 1)
                if weak(a[1]) and weak(b[1]):
                    b = self.leaf(allow_weak=False)
                rule = BINOPS[op]
                t = result_type("nb" if rule == "pow" else rule, [a[1], b[1]])
                if t is None:
                    continue
                if rule == "pow" and KIND[t] == 1:
                    # An integer power: the exponent is an array or a
                    # non-negative literal (a negative one is refused).
                    if weak(b[1]) and (b[0].startswith("(-") or b[1] != WI):
                        continue
                    if "(" in b[0] and not b[0].startswith("("):
                        continue
                inexact = rule == "pow" and KIND[t] == 2
                if inexact and exact_only:
                    continue
                return ("(%s %s %s)" % (a[0], op, b[0]), t, a[2] and b[2] and not inexact)
            if c < 0.5:
                op = r.choice(sorted(UNOPS))
                a = self.expr(depth - 1)
                if weak(a[1]):
                    continue
                t = result_type(UNOPS[op], [a[1]])
                if t is None:
                    continue
                return ("(%s%s)" % (op, a[0]), t, a[2])
            if c < 0.6:
                name = r.choice(sorted(CASTS))
                a = self.expr(depth - 1)
                return ("%s(%s)" % (name, a[0]), CASTS[name], a[2])
            name = r.choice(sorted(FUNCS))
            arity, rule = FUNCS[name]
            if (name in INEXACT) and exact_only:
                continue
            args = [self.expr(depth - 1) for _ in range(arity)]
            if rule == "where":
                if weak(args[1][1]) and weak(args[2][1]):
                    args[2] = self.leaf(allow_weak=False)
                t = strongify(combine([args[1][1], args[2][1]]))
            else:
                if arity > 1 and all(weak(a[1]) for a in args):
                    args[-1] = self.leaf(allow_weak=False)
                t = result_type("nb" if rule == "pow" else rule, [a[1] for a in args])
                if t is None:
                    continue
                if rule == "pow" and KIND[t] == 1:
                    b = args[1]
                    if weak(b[1]) and (b[0].startswith("(-") or b[1] != WI):
                        continue
                    if "(" in b[0] and not b[0].startswith("("):
                        continue
                if rule == "pow" and KIND[t] == 2:
                    if exact_only:
                        continue
                    name_inexact = True
                else:
                    name_inexact = name in INEXACT
            exact = all(a[2] for a in args) and not (rule != "where" and name_inexact)
            return ("%s(%s)" % (name, ", ".join(a[0] for a in args)), t, exact)
        return self.leaf()

    def inexact_root(self):
        """A function that is not exactly rounded, of exactly computed operands."""
        r = self.rng
        for _ in range(30):
            name = r.choice(sorted(INEXACT) + ["**", "power"])
            arity = 2 if name == "**" else FUNCS[name][0]
            args = [self.expr(r.randint(0, 3)) for _ in range(arity)]
            if not all(a[2] for a in args):
                continue
            if all(weak(a[1]) for a in args):
                args[-1] = self.leaf(allow_weak=False)
                if not args[-1][2]:
                    continue
            t = result_type("float", [a[1] for a in args])
            if t is None:
                continue
            if name in ("**", "power") and KIND[combine([a[1] for a in args])] != 2:
                continue  # an integer power is exact, and has rules of its own
            if name == "**":
                return ("(%s ** %s)" % (args[0][0], args[1][0]), t, False)
            return ("%s(%s)" % (name, ", ".join(a[0] for a in args)), t, False)
        return self.expr(2)

    def program(self):
        r = self.rng
        lines = []
        checks = []  # (output name, "exact" | "ulp")
        nstmts = r.randint(1, 6)
        nout = 0
        for s in range(nstmts):
            c = r.random()
            if c < 0.2:
                name = "t%d" % len(self.temps)
                e = self.expr(r.randint(1, 3))
                if not e[2]:
                    continue
                self.temps[name] = (strongify(e[1]), True)
                lines.append("let %s = %s" % (name, e[0]))
            elif c < 0.4:
                # In place: a op= e, kept only when NumPy's same-kind rule allows it.
                name = r.choice(sorted(self.inputs))
                dt = self.inputs[name]
                for _ in range(20):
                    op = r.choice(AUG_OPS)
                    e = self.expr(r.randint(0, 2))
                    rule = BINOPS[op]
                    t = result_type("nb" if rule == "pow" else rule, [dt, e[1]])
                    if t is None or KIND[t] > KIND[dt]:
                        continue
                    if op == "**" and KIND[t] == 1 and (weak(e[1]) and
                                                        (e[0].startswith("(-") or e[1] != WI)
                                                        or "(" in e[0]):
                        continue
                    if op == "**" and KIND[t] == 2:
                        continue
                    lines.append("%s %s= %s" % (name, op, e[0]))
                    checks.append((name, "exact"))
                    break
            else:
                name = "o%d" % nout
                nout += 1
                if r.random() < 0.35:
                    e = self.inexact_root()
                else:
                    e = self.expr(r.randint(1, 4))
                if weak(e[1]):
                    # A new output takes a strong type: add a strong leaf.
                    f = self.leaf(allow_weak=False)
                    t = result_type("arith", [e[1], f[1]])
                    e = ("%s + %s" % (e[0], f[0]), t, e[2] and f[2])
                self.outputs[name] = strongify(e[1])
                self.exact[name] = e[2]
                self.written.add(name)
                lines.append("%s = %s" % (name, e[0]))
                checks.append((name, "exact" if e[2] else "ulp"))
        if not lines:
            lines.append("o0 = x0")
            self.outputs["o0"] = self.inputs["x0"]
            checks.append(("o0", "exact"))
        # The last check of each array decides (an inout checked once).
        final = {}
        for name, how in checks:
            final[name] = how
        return "\n".join(lines) + "\n", final


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

F_EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -7.0, 0.1, 1e-310, -1e-310,
          2.2250738585072014e-308, 1e300, -1e300, 1.7976931348623157e308, float("nan"),
          float("inf"), float("-inf"), 709.78, -745.1, 88.72, -103.9, 2147483648.0,
          9.3e18, -9.3e18, 3.4028235e38, 1e-45, 1.5707963267948966, 1e22]
I_EDGE = {I32: [0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 33, -32, 63, 64, 46341, 2147483647,
                -2147483648, -2147483647],
          I64: [0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 63, 64, 65, -64, 3037000500,
                9223372036854775807, -9223372036854775808, 2147483648, -2147483649]}
SIZES = [0, 1, 2, 7, 15, 16, 17, 31, 33, 64, 100, 257, 1000, 4099, 20011]


def make_data(rng, dt, n):
    """n values of dtype dt: random values with edge cases sprinkled in."""
    if dt == B:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dt in (I32, I64):
        info = np.iinfo(NP[dt])
        c = rng.random()
        if c < 0.4:
            a = rng.integers(-100, 100, n)
        elif c < 0.7:
            a = rng.integers(-70000, 70000, n)
        else:
            a = rng.integers(info.min, info.max, n, dtype=np.int64 if dt == I64 else np.int32,
                             endpoint=True)
        a = a.astype(NP[dt])
        edge = np.array(I_EDGE[dt], dtype=NP[dt])
    else:
        c = rng.random()
        if c < 0.4:
            a = rng.standard_normal(n) * 3
        elif c < 0.7:
            a = rng.uniform(-1, 1, n)
        else:
            a = rng.standard_normal(n) * np.exp(rng.uniform(-40, 40, n))
        a = a.astype(NP[dt])
        edge = np.array(F_EDGE, dtype=np.float64).astype(NP[dt])
    k = min(n, int(rng.integers(0, len(edge) + 1)))
    if k:
        where = rng.choice(n, k, replace=False)
        a[where] = rng.choice(edge, k)
    return a


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def compare(ref, got, how, ulp):
    """None when got agrees with ref, else the first disagreement as text."""
    if ref.dtype != got.dtype:
        return "dtype %s, reference %s" % (got.dtype, ref.dtype)
    if ref.shape != got.shape:
        return "shape %s, reference %s" % (got.shape, ref.shape)
    r, g = ref.ravel(), got.ravel()
    if r.dtype.kind != "f":
        bad = np.nonzero(r != g)[0]
        if bad.size:
            k = bad[0]
            return "element %d: %r, reference %r" % (k, g[k], r[k])
        return None
    rn, gn = np.isnan(r), np.isnan(g)
    same_bits = (r.view(np.uint8).reshape(r.size, -1) ==
                 g.view(np.uint8).reshape(g.size, -1)).all(axis=1) if r.size else np.ones(0, bool)
    ok = same_bits | (rn & gn)
    if how == "ulp":
        with np.errstate(all="ignore"):
            fin = np.isfinite(r) & np.isfinite(g)
            big = np.maximum(np.abs(r), np.abs(g))
            big = np.where(fin, big, 0).astype(r.dtype)
            d = np.abs(r.astype(np.float64) - g.astype(np.float64))
            units = d / np.spacing(big).astype(np.float64)
        ok |= fin & (units <= ulp)
        # The largest finite value against infinity: an overflow one ulp away.
        top = np.finfo(r.dtype).max
        ok |= (np.isinf(r) & (np.abs(g) == top) & (np.sign(r) == np.sign(g))) | \
              (np.isinf(g) & (np.abs(r) == top) & (np.sign(r) == np.sign(g)))
    bad = np.nonzero(~ok)[0]
    if bad.size:
        k = bad[0]
        return "element %d: %r, reference %r (%d elements differ%s)" % (
            k, g[k], r[k], bad.size, ", tolerance %g ulp" % ulp if how == "ulp" else ", exact")
    return None


def self_test():
    """The comparison must see a one-bit difference, and the sign of zero."""
    a = np.array([1.0, -0.0, np.nan, 3.0])
    b = a.copy()
    assert compare(a, b, "exact", 4) is None
    b[3] = np.nextafter(3.0, 4.0)
    assert compare(a, b, "exact", 4) is not None
    assert compare(a, b, "ulp", 4) is None
    b[3] = 3.0 + 16 * np.spacing(3.0)
    assert compare(a, b, "ulp", 4) is not None
    b = a.copy()
    b[1] = 0.0
    assert compare(a, b, "exact", 4) is not None
    assert compare(np.array([1, 2], np.int32), np.array([1, 3], np.int32), "exact", 4)
    assert compare(np.array([1.0], np.float32), np.array([1.0]), "exact", 4)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

def run_jitc(target, prog, gen, d, tag):
    """Runs the program; returns (exit status, stderr, {array: ndarray})."""
    args = [JITC, "-t", target, "-q", "--no-cache"]
    # jitc refuses a name the program does not use; the generator's records
    # also hold names of expressions it made and then dropped.
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prog))
    for name in sorted(gen.inputs):
        if name in words:
            args += ["--in", "%s=%s/%s.npy" % (name, d, name)]
    outs = {}
    for name in sorted(gen.outputs) + sorted(gen.inputs):
        outs[name] = "%s/%s.%s.npy" % (d, name, tag)
    for name in sorted(gen.scalars):
        if name in gen.uses and name in words:
            args.append("-D%s=%s" % (name, gen.scalars[name][0]))
    with open(os.path.join(d, "prog.jitc"), "w") as f:
        f.write(prog)
    # Only arrays the program writes can be --out; ask for those it names.
    written = [n for n in outs if n in gen.outputs and n in gen.written or
               n in gen.inputs and any(l.startswith(n + " ") for l in prog.splitlines())]
    for name in written:
        args += ["--out", "%s=%s" % (name, outs[name])]
    args += ["-f", os.path.join(d, "prog.jitc")]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    res = {}
    if p.returncode == 0:
        for name in written:
            res[name] = np.load(outs[name])
    return p.returncode, p.stderr.decode(errors="replace"), res, args


def available(target):
    if not os.access(JITC, os.X_OK):
        sys.exit("fuzz_diff: %s is not built (set JITC)" % JITC)
    p = subprocess.run([JITC, "-t", target, "-q", "-n", "1", "--no-cache", "a = 1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--targets", default="interp cpu cuda")
    ap.add_argument("--ulp", type=float, default=4)
    ap.add_argument("--keep", default=os.path.join(ROOT, "build-fuzz-diff"))
    ap.add_argument("--self-test", action="store_true")
    opt = ap.parse_args()
    self_test()
    if opt.self_test:
        print("ok fuzz_diff.self_test")
    targets = []
    for t in opt.targets.split():
        if available(t):
            targets.append(t)
        else:
            print("skip fuzz_diff.%s: target not available here" % t)
    if "interp" not in targets or len(targets) < 2:
        print("skip fuzz_diff: needs interp and another target (have %s)" % (targets or "none"))
        return 0
    stats = {"programs": 0, "elements": 0, "outputs_exact": 0, "outputs_ulp": 0,
             "failures": 0, "rejected": 0}
    used_fns = set()
    work = tempfile.mkdtemp(prefix="jitc-fuzzdiff-")
    try:
        ks = [opt.only] if opt.only is not None else range(opt.n)
        for k in ks:
            rng = random.Random(opt.seed * 1000003 + k)
            nrng = np.random.default_rng([opt.seed, k])
            gen = Gen(rng)
            prog, checks = gen.program()
            for name in FUNCS:
                if name + "(" in prog:
                    used_fns.add(name)
            n = rng.choice(SIZES)
            d = os.path.join(work, "p%d" % k)
            os.makedirs(d)
            for name, dt in gen.inputs.items():
                np.save(os.path.join(d, name + ".npy"), make_data(nrng, dt, n))
            tag = "fuzz_diff.%d.%d" % (opt.seed, k)
            results = {}
            failed = None
            for t in targets:
                rc, err, res, args = run_jitc(t, prog, gen, d, t)
                if rc != 0:
                    if rc == 65 and t == "interp":
                        stats["rejected"] += 1
                    failed = "%s exits %d: %s" % (t, rc, err.strip()[:600])
                    break
                results[t] = res
            stats["programs"] += 1
            stats["elements"] += n
            if not failed:
                ref = results["interp"]
                for t in targets[1:]:
                    for name, how in sorted(checks.items()):
                        if name not in ref:
                            continue
                        why = compare(ref[name], results[t][name], how, opt.ulp)
                        if why:
                            failed = "%s: %s vs interp: %s" % (name, t, why)
                            break
                    if failed:
                        break
                for how in checks.values():
                    stats["outputs_" + how] += 1
            if failed:
                stats["failures"] += 1
                keep = os.path.join(opt.keep, "%d.%d" % (opt.seed, k))
                shutil.rmtree(keep, ignore_errors=True)
                shutil.copytree(d, keep)
                print("FAIL %s: %s" % (tag, failed))
                print("  n = %d, inputs %s, scalars %s; program:" % (
                    n, gen.inputs, {s: v[0] for s, v in gen.scalars.items() if s in gen.uses}))
                print("    " + prog.strip().replace("\n", "\n    "))
                print("  kept in %s; rerun: %s --seed %d --only %d" % (keep, sys.argv[0],
                                                                      opt.seed, k))
            shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = ("%d programs, %d elements each target, %d outputs compared exactly, %d within "
               "%g ulp, %d of %d functions used, targets %s, seed %d" % (
                   stats["programs"], stats["elements"], stats["outputs_exact"],
                   stats["outputs_ulp"], opt.ulp, len(used_fns), len(FUNCS),
                   " ".join(targets), opt.seed))
    if stats["failures"]:
        print("fuzz_diff: %d failures (%d programs refused by interp); %s" % (
            stats["failures"], stats["rejected"], summary))
        return 1
    print("ok fuzz_diff (%s)" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
