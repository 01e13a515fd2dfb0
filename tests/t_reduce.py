#!/usr/bin/env python3
"""t_reduce.py -- reductions against NumPy on every target, and their
determinism.

Each case runs a program through the CLI (`jitc -t TARGET -q --in ... --out
...`) and compares every output with NumPy's value, dtype included:

- exactly for what has one right answer: integer and bool sums and
  products (wrapping), min, max, any, all, argmin, argmax (a NaN is the
  extreme; min/max of zeros of both signs may give either zero);
- float sums and means against the exact sum (math.fsum): a float32 result
  within one float32 ulp of it or no further from it than NumPy's own
  result; a float64 result within the bound of a pairwise sum,
  log2(n) * eps * sum(|x|), or 4 times NumPy's own error;
- float products within n float32 (float64) epsilons, relative.

Then the empty rules (sum 0, prod 1, any False, all True, mean NaN; min,
max, argmin, argmax exit 65 with a message), reductions mixed with let,
where, casts, scalars and element-wise outputs, sixty reductions that the
cpu and cuda targets split into groups, and determinism: 20 runs
of each target bit-identical, and on cpu every --threads value the same.
The cpu target runs again at every x86-64 level the host executes.

Environment: JITC (the binary), JITC_TARGETS (default "interp").
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
TARGETS = os.environ.get("JITC_TARGETS", "interp").split() or ["interp"]
TMP = tempfile.mkdtemp(prefix="jitc_reduce_")
rng = np.random.default_rng(20261123)
np.seterr(all="ignore")

B, I32, I64, F32, F64 = (np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64),
                         np.dtype(np.float32), np.dtype(np.float64))
DTYPES = [B, I32, I64, F32, F64]
OPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]
NOID = {"min", "max", "argmin", "argmax"}
failed = 0


def ok(name):
    print("ok " + name)


def fail(name, why):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why))


def save(name, arr):
    path = os.path.join(TMP, name + ".npy")
    np.save(path, arr)
    return path


def jitc(target, prog, ins, outs, extra=(), env=None):
    """Runs prog; (exit status, stderr, {output: array})."""
    d = tempfile.mkdtemp(dir=TMP)
    args = [JITC, "-t", target, "-q"] + list(extra)
    for k, path in ins.items():
        args += ["--in", "%s=%s" % (k, path)]
    paths = {o: os.path.join(d, o + ".npy") for o in outs}
    for o, p in paths.items():
        args += ["--out", "%s=%s" % (o, p)]
    p = subprocess.run(args + [prog], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, **(env or {})))
    res = {}
    if p.returncode == 0:
        for o, path in paths.items():
            res[o] = np.load(path)
    shutil.rmtree(d, ignore_errors=True)
    return p.returncode, p.stderr, res


def numpy_result(op, x):
    """NumPy's value of op over x (x non-empty for the NOID ops)."""
    fn = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean,
          "any": np.any, "all": np.all, "argmin": np.argmin, "argmax": np.argmax}[op]
    r = fn(x)
    return np.asarray(r)[()] if not isinstance(r, np.generic) else r


def fsum_of(x):
    return math.fsum(np.asarray(x, dtype=np.float64).tolist())


def check_value(op, x, got, want):
    """Why got (a 0-d array) is not NumPy's answer want for op over x, or None."""
    got = np.asarray(got)
    want_dt = np.asarray(want).dtype
    if got.shape != ():
        return "shape %s, want ()" % (got.shape,)
    if got.dtype != want_dt:
        return "dtype %s, want %s" % (got.dtype, want_dt)
    g, w = got[()], np.asarray(want)[()]
    if want_dt.kind in "biu":
        return None if g == w else "got %r, want %r" % (g, w)
    if math.isnan(w):
        return None if math.isnan(g) else "got %r, want nan" % g
    if op in ("min", "max") or g == w:
        return None if g == w else "got %r, want %r" % (g, w)
    n = max(x.size, 1)
    eps = 2.0 ** -24 if want_dt == F32 else 2.0 ** -53
    if op == "prod":
        return None if abs(g - w) <= 2 * n * eps * abs(w) else "got %r, want %r" % (g, w)
    # sum, mean: against the exact value
    xs = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(xs)):
        return "got %r, want %r" % (g, w)
    exact = fsum_of(xs) / (n if op == "mean" else 1)
    err, np_err = abs(float(g) - exact), abs(float(w) - exact)
    if want_dt == F32:
        ulp = float(np.spacing(np.float32(abs(exact)))) if math.isfinite(exact) else 0
        bound = max(ulp, np_err)
    else:
        scale = float(np.sum(np.abs(xs))) / (n if op == "mean" else 1)
        bound = max(4 * np_err, math.ceil(math.log2(n + 1)) * eps * 2 * scale)
    return None if err <= bound else "got %r, exact %r, NumPy %r (error %.3g > %.3g)" % (
        g, exact, w, err, bound)


def data(dt, n, kind="rand"):
    if dt == B:
        return rng.random(n) < (0.5 if kind == "rand" else 0.999)
    if dt in (I32, I64):
        info = np.iinfo(dt)
        if kind == "big":
            return rng.integers(info.max // 2, info.max, n, dtype=dt, endpoint=True)
        return rng.integers(-1000, 1000, n, dtype=dt)
    if kind == "near1":
        return (1 + rng.uniform(-1e-3, 1e-3, n)).astype(dt)
    return rng.standard_normal(n).astype(dt)


def batch(target, name, arrays, ops, extra=(), env=None):
    """One program reducing each array with each op; compares every result."""
    stmts, want, ins = [], {}, {}
    for an, x in arrays.items():
        ins[an] = save("%s_%s" % (name, an), x)
        for op in ops:
            if x.size == 0 and op in NOID:
                continue
            o = "%s_%s" % (op, an)
            stmts.append("%s = %s(%s)" % (o, op, an))
            want[o] = (op, x)
    rc, err, res = jitc(target, "\n".join(stmts), ins, list(want), extra, env)
    if rc != 0:
        return fail(name, "exit %d: %s" % (rc, err.strip()[:300]))
    bad = []
    for o, (op, x) in want.items():
        why = check_value(op, x, res[o], numpy_result(op, x))
        if why:
            bad.append("%s: %s" % (o, why))
    if bad:
        return fail(name, "; ".join(bad[:4]))
    ok(name)


def random_cases(target, tag, extra=(), env=None):
    """Every op and dtype on random data of sizes around every boundary."""
    for n in [0, 1, 2, 15, 16, 17, 1000, 4095, 4096, 4097, 65537, 1000003]:
        arrays = {"a_" + str(dt): data(dt, n) for dt in DTYPES}
        ops = [op for op in OPS if op != "prod"]
        batch(target, "%s.random.n%d" % (tag, n), arrays, ops, extra, env)
    for n in [1, 17, 4097, 100003]:  # products: near 1, so that they neither over- nor underflow
        arrays = {"a_" + str(dt): data(dt, n, "near1" if dt.kind == "f" else "rand")
                  for dt in DTYPES}
        batch(target, "%s.prod.n%d" % (tag, n), arrays, ["prod"], extra, env)


def edge_cases(target, tag):
    """NaN, infinities, zeros of both signs, ties, the largest values."""
    nan, inf = float("nan"), float("inf")
    cases = {
        "nan_first": [nan, 1.0, -2.0, 3.0],
        "nan_last": [1.0, -2.0, 3.0] * 11 + [nan],
        "nan_two": [1.0, nan, 5.0, nan, -1.0],
        "inf": [1.0, inf, -inf, 2.0],
        "posinf": [1.0, inf, 2.0, inf],
        "zeros": [0.0, -0.0, 0.0, -0.0],
        "negzero": [-0.0] * 5,
        "ties": [3.0, 1.0, 1.0, 3.0, 1.0, 3.0] * 700,
        "huge": [3e38, 3e38, -1.0],
        "tiny": [1e-45, 1e-40, -1e-45, 5e-324],
    }
    for cname, vals in cases.items():
        for dt in (F32, F64):
            x = np.array(vals, dtype=dt)
            ops = [op for op in OPS if op != "prod"]
            batch(target, "%s.edge.%s.%s" % (tag, cname, dt), {"x": x}, ops)
    # Integer overflow: int32 sums in int64 do not wrap; int64 sums wrap as NumPy's.
    for dt in (I32, I64):
        x = data(dt, 4099, "big")
        batch(target, "%s.edge.big.%s" % (tag, dt), {"x": x}, ["sum", "prod", "min", "max",
                                                              "mean", "argmax"])
    ties = np.array([5, 2, 7, 2, 7, 2], dtype=I32)
    batch(target, "%s.edge.int_ties" % tag, {"x": ties}, ["argmin", "argmax"])
    b = np.zeros(5000, dtype=B)
    batch(target, "%s.edge.all_false" % tag, {"x": b}, ["any", "all", "argmax", "sum"])
    b[4321] = True
    batch(target, "%s.edge.one_true" % tag, {"x": b}, ["any", "all", "argmax", "argmin", "sum"])


def empty_cases(target, tag):
    """Zero elements: the identities, and an error for those without one."""
    for dt in DTYPES:
        x = np.zeros(0, dtype=dt)
        batch(target, "%s.empty.%s" % (tag, dt), {"a": x}, OPS)
        for op in sorted(NOID):
            rc, err, _ = jitc(target, "r = %s(a)" % op, {"a": save("empty", x)}, ["r"])
            name = "%s.empty.%s.%s" % (tag, op, dt)
            if rc != 65 or "zero elements" not in err or "^" not in err:
                fail(name, "exit %d, want 65 with a message and a caret: %r" % (rc, err))
            else:
                ok(name)


def mixed_case(target, tag):
    """Reductions sharing temporaries with element-wise outputs, where, casts, scalars."""
    n = 10007
    a = rng.standard_normal(n).astype(F32)
    b = rng.standard_normal(n).astype(F32)
    k = rng.integers(-50, 50, n, dtype=I32)
    prog = """let d = a - b
s = sum(d * d)
m = max(abs(d))
j = argmax(d)
c = where(d > 0, d, 0)
w = mean(float64(k) * x)
t = sum(k)
u = any(k == 49)
v = all(k < y)
p = prod(where(abs(d) < 0.5, 1.0 + d * 0.001, 1.0))
"""
    ins = {"a": save("mx_a", a), "b": save("mx_b", b), "k": save("mx_k", k)}
    rc, err, res = jitc(target, prog, ins, list("smjcwtuvp"), ["-D", "x=2.5", "-D", "y=50"])
    name = "%s.mixed" % tag
    if rc != 0:
        return fail(name, "exit %d: %s" % (rc, err.strip()[:300]))
    d = a - b
    want = {"s": ("sum", d * d), "m": ("max", np.abs(d)), "j": ("argmax", d),
            "w": ("mean", k.astype(F64) * 2.5), "t": ("sum", k), "u": ("any", k == 49),
            "v": ("all", k < 50),
            "p": ("prod", np.where(np.abs(d) < 0.5, 1 + d * np.float32(0.001), np.float32(1)))}
    bad = []
    for o, (op, x) in want.items():
        why = check_value(op, x, res[o], numpy_result(op, x))
        if why:
            bad.append("%s: %s" % (o, why))
    c = res["c"]
    if c.dtype != F32 or not np.array_equal(c, np.where(d > 0, d, np.float32(0))):
        bad.append("c differs from NumPy's")
    if bad:
        return fail(name, "; ".join(bad))
    ok(name)


def split_case(target, tag):
    """Sixty reductions of computed values, every op in turn: several groups
    on cpu and cuda, each keeping and finishing its own reductions (cuda:
    combine kernels jitc_r0 to jitc_r3); every result NumPy's, and three
    runs (on cpu, --threads 1 and 3) bit-identical."""
    name = "%s.split" % tag
    n = 100003
    a = rng.standard_normal(n)
    b = rng.standard_normal(n)
    vals = [("a * %d - b", lambda j: a * j - b),
            ("int32(a * 100) - %d", lambda j: (a * 100).astype(I32) - np.int32(j)),
            ("a > b * %d", lambda j: a > b * j)]
    prog, want = [], {}
    for j in range(60):
        op = OPS[j % len(OPS)]
        text, fn = vals[(j // len(OPS)) % 3]
        prog.append("r%d = %s(%s)" % (j, op, text % j))
        want["r%d" % j] = (op, fn(j))
    prog = "\n".join(prog)
    marks = {"cpu": ("llvm", "kernel.g1"), "cuda": ("cuda", "jitc_r3")}
    if target in marks:
        stage, mark = marks[target]
        p = subprocess.run([JITC, "-t", target, "--arch", "sm_90", "--emit", stage, prog]
                           if target == "cuda" else [JITC, "-t", target, "--emit", stage, prog],
                           capture_output=True, text=True)
        if p.returncode == 0 and mark not in p.stdout:
            return fail(name, "not split (no %s in --emit %s): make it larger" % (mark, stage))
    ins = {"a": save("sp_a", a), "b": save("sp_b", b)}
    variants = [[], [], []] if target != "cpu" else [["--threads", "1"], ["--threads", "3"], []]
    seen = None
    for extra in variants:
        rc, err, res = jitc(target, prog, ins, list(want), extra)
        if rc != 0:
            return fail(name, "exit %d: %s" % (rc, err.strip()[:300]))
        bad = []
        for o, (op, x) in want.items():
            why = check_value(op, x, res[o], numpy_result(op, x))
            if why:
                bad.append("%s: %s" % (o, why))
        if bad:
            return fail(name, "; ".join(bad[:4]))
        bits = [res[o].tobytes() for o in want]
        if seen is not None and bits != seen:
            return fail(name, "%s differs from the first run" % (" ".join(extra) or "a run"))
        seen = bits
    ok(name)


def determinism(target, tag):
    """20 runs bit-identical; on cpu, every --threads value too."""
    n = 1000003
    a = rng.standard_normal(n).astype(F32)
    b = rng.standard_normal(n).astype(F32)
    c = rng.standard_normal(n)
    ins = {"a": save("det_a", a), "b": save("det_b", b), "c": save("det_c", c)}
    prog = "s = sum(a*b); t = sum(c); u = mean(a); m = max(a*b); k = argmin(c); p = prod(1 + a*1e-4)"
    outs = ["s", "t", "u", "m", "k", "p"]
    runs = [[]] * 0
    variants = [[]] * 20
    if target == "cpu":
        variants = variants + [["--threads", str(t)] for t in (1, 2, 3, 4, 7)]
    seen = None
    for v, extra in enumerate(variants):
        rc, err, res = jitc(target, prog, ins, outs, extra)
        if rc != 0:
            return fail("%s.determinism" % tag, "exit %d: %s" % (rc, err.strip()[:300]))
        bits = tuple(res[o].tobytes() for o in outs)
        if seen is None:
            seen = bits
        elif bits != seen:
            return fail("%s.determinism" % tag, "run %d (%s) differs: %s" % (
                v, " ".join(extra) or "default", [res[o] for o in outs]))
        runs.append(bits)
    ok("%s.determinism (%d runs)" % (tag, len(variants)))


def all_targets():
    """-t all: every target's results agree within the tolerance of compare.c."""
    prog = "s = sum(a * b); m = max(a); k = argmin(b); u = mean(a); t = sum(int32(b * 100))"
    p = subprocess.run([JITC, "-t", "all", "-n", "1000003", "--dtype", "f32", "--in", "a=randn:3",
                        "--in", "b=randn:4", prog], capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if " vs " in ln]
    if p.returncode != 0 or len(lines) != 5 * (len(TARGETS) - 1):
        return fail("all_targets", "exit %d, %d comparisons: %s %s" % (
            p.returncode, len(lines), p.stdout[-500:], p.stderr[-300:]))
    ok("all_targets (%s)" % "; ".join(lines))


def cpu_levels():
    """The x86-64 levels this host executes code for, as the cpu target sees them."""
    out = []
    for lv in ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"):
        p = subprocess.run([JITC, "-t", "cpu", "-q", "-n", "1", "b = a + 1"],
                           capture_output=True, env=dict(os.environ, JITC_CPU=lv))
        if p.returncode == 0:
            out.append(lv)
    return out


def main():
    for t in TARGETS:
        random_cases(t, t)
        edge_cases(t, t)
        empty_cases(t, t)
        mixed_case(t, t)
        split_case(t, t)
        determinism(t, t)
    if len(TARGETS) > 1:
        all_targets()
    if "cpu" in TARGETS:
        for lv in cpu_levels():
            random_cases("cpu", "cpu@" + lv, env={"JITC_CPU": lv})
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
