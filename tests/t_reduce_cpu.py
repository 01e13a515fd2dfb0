#!/usr/bin/env python3
"""t_reduce_cpu.py -- reductions on the cpu target (src/cpu/gen.c, "reductions";
src/cpu/run.c), through the library, against interp (the reference) and NumPy.

  - every op (sum, prod, min, max, mean, any, all, argmin, argmax) on every
    dtype, at sizes around the vector width W and the block RB (read from
    src/cpu/cpu.h), on data with NaN, inf, -0.0, the largest values and integer
    overflow: exact agreement with interp except the rounding of float sums
    and products (whose association differs), and NumPy's values;
  - float32 sums at least as accurate as NumPy's pairwise sum;
  - let, where, casts, scalars, several reductions and element-wise outputs
    from the same temporaries, and split programs (several groups) with
    reductions in any group, and of reductions alone (each group's the same
    bits as in a program of one group);
  - n == 0: the identities;
  - determinism: 20 runs bit-identical, and the same bits for threads 1, 2,
    3, 4, 7 and the default;
  - every x86-64 level the host runs (x86-64, -v2, -v3, -v4);
  - --emit llvm, llvm-opt and asm show the reduction.
Under SAN=1 it runs again with the sanitizer runtimes preloaded into python
(the library is the ASan+UBSan build).
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why" per case.
"""
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reduce_lib import ROOT, JitcError, Runner, under_sanitizers  # noqa: E402

under_sanitizers("reduce_cpu")
if "cpu" not in os.environ.get("JITC_TARGETS", "interp cpu").split():
    print("skip reduce_cpu: the cpu target is not available")
    sys.exit(0)

with open(os.path.join(ROOT, "src", "cpu", "cpu.h")) as f:
    RB = int(re.search(r"#define RB (\d+)", f.read()).group(1))
SIZES = [0, 1, 15, 16, 17, RB - 1, RB, RB + 1, 3 * RB + 5, 1_000_003]
OPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]
NOID = {"min", "max", "argmin", "argmax"}
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
LEVELS = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
FAILS = 0
R = Runner()
np.seterr(all="ignore")


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print(f"FAIL {name}: {why}")
    else:
        print(f"ok {name}")


def same(x, y):
    """Bit-identical scalars (NaN payloads included)."""
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.tobytes() == y.tobytes()


def data(dt, n, seed, special=True):
    """n elements of dtype dt with edge values sprinkled in."""
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return rng.random(n) < 0.5
    if dt in (np.int32, np.int64):
        info = np.iinfo(dt)
        a = rng.integers(-1000, 1000, n).astype(dt)
        if special and n > 3:
            # Overflow of the int64 sum and product; extremes for min/max.
            k = rng.integers(0, n, 3)
            a[k] = [info.max, info.min, info.max - 1]
        return a
    a = rng.standard_normal(n).astype(dt)
    if special and n > 8:
        k = rng.integers(0, n, 6)
        a[k] = [np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).max, -np.finfo(dt).max]
    return a


def with_nan(a, seed):
    a = a.copy()
    if a.dtype.kind == "f" and len(a) > 2:
        rng = np.random.default_rng(seed)
        a[rng.integers(0, len(a), 2)] = np.nan
    return a


def numpy_of(op, a):
    """NumPy's answer, in jitc's result type."""
    if op == "sum":
        return np.sum(a, dtype=np.int64 if a.dtype.kind in "bi" else a.dtype)
    if op == "prod":
        return np.prod(a, dtype=np.int64 if a.dtype.kind in "bi" else a.dtype)
    if op == "mean":
        return np.mean(a, dtype=np.float64 if a.dtype.kind in "bi" else a.dtype) if len(a) else np.nan
    if op == "any":
        return np.any(a)
    if op == "all":
        return np.all(a)
    return getattr(np, op)(a)


def close(op, dt, got, ref, a, rtol):
    """Whether got is within float rounding of ref for sums and products."""
    g, r = float(got), float(ref)
    if math.isnan(r) or math.isnan(g):
        return math.isnan(r) and math.isnan(g)
    if math.isinf(r) or math.isinf(g):
        return g == r
    if op == "prod":
        return abs(g - r) <= rtol * abs(r) + 1e-30
    scale = float(np.sum(np.abs(a.astype(np.float64)))) / (len(a) if op == "mean" else 1)
    return abs(g - r) <= rtol * scale + 1e-300


def rounded(op, dt):
    """Reductions whose float result may differ from interp's in rounding."""
    return op == "mean" or (op in ("sum", "prod") and np.dtype(dt).kind == "f")


def check_values(name, op, dt, a, got, ref, np_ref):
    if rounded(op, dt):
        rtol = 1e-3 if (op == "prod" and dt == np.float32) else 1e-5 if dt == np.float32 else 1e-12
        if op == "mean" and dt != np.float32:
            # The mean of integers (in float64) too is a float sum.
            rtol = 1e-12
        if not close(op, dt, got, ref, a, rtol):
            return f"cpu {got!r} interp {ref!r}"
        if not close(op, dt, got, np_ref, a, rtol * 10):
            return f"cpu {got!r} numpy {np_ref!r}"
        return None
    if not same(got, ref):
        return f"cpu {got!r} interp {ref!r} (bits differ)"
    if op in NOID and np.dtype(dt).kind == "f" and not op.startswith("arg"):
        ok = (got == np_ref) or (np.isnan(got) and np.isnan(np_ref))
    else:
        ok = got == np_ref or (isinstance(np_ref, float) and np.isnan(np_ref) and np.isnan(got))
    return None if ok else f"cpu {got!r} numpy {np_ref!r}"


def program_all_ops(dt):
    """Every op of dt in one program, with an element-wise output."""
    lines = []
    for op in OPS:
        lines.append(f"r_{op} = {op}(a)")
    lines.append("c = a" if dt == np.bool_ else "c = a - a")
    return "\n".join(lines)


def test_ops(cpu=None, sizes=SIZES, tag=""):
    """Every op and dtype, every size; interp and NumPy agree."""
    for dt in DTYPES:
        prog = program_all_ops(dt)
        noid = "\n".join(l for l in prog.split("\n") if not any(f"{o}(" in l for o in NOID))
        for special in (False, True):
            bad = []
            for n in sizes:
                a = data(dt, n, n + 7, special)
                if special:
                    a = with_nan(a, n)
                p = prog if n else noid
                try:
                    ref = R.run(p, {"a": a}, "interp")
                    got = R.run(p, {"a": a}, "cpu", cpu=cpu)
                except JitcError as e:
                    bad.append(f"n={n}: {e}")
                    continue
                if "c" in got and not same(got["c"], ref["c"]):
                    bad.append(f"n={n}: element-wise output c differs")
                for op in OPS:
                    if f"r_{op}" not in ref:
                        continue
                    why = check_values(op, op, dt, a, got[f"r_{op}"], ref[f"r_{op}"],
                                       numpy_of(op, a))
                    if why:
                        bad.append(f"n={n} {op}: {why}")
            name = f"reduce_cpu{tag}/ops/{np.dtype(dt).name}{'/special' if special else ''}"
            report(name, "; ".join(bad[:4]))


def test_ties():
    """Equal values: 0.0 and -0.0, NaNs of two payloads, integer ties: the
    first element wins (its bits, its index), across lanes and blocks."""
    bad = []
    rng = np.random.default_rng(9)
    qnan = np.frombuffer(np.uint64(0x7ff8000000000001).tobytes(), np.float64)[0]
    for n in (1, 17, RB + 1, 3 * RB + 5):
        for dt in (np.float32, np.float64, np.int32):
            if dt == np.int32:
                a = rng.integers(0, 3, n).astype(dt)
            else:
                a = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(dt)
            cases = [a]
            if dt != np.int32 and n > 2:
                b = a.copy()
                b[rng.integers(0, n, 5)] = np.nan
                b[rng.integers(0, n, 5)] = dt(qnan) if dt == np.float64 else -np.float32("nan")
                cases.append(b)
            # Every element the identity of the lanes (the last value in the
            # order): no lane ever takes one.
            if dt == np.int32:
                cases += [np.full(n, np.iinfo(dt).max, dt), np.full(n, np.iinfo(dt).min, dt)]
            else:
                cases += [np.full(n, np.inf, dt), np.full(n, -np.inf, dt)]
                if n > 2:
                    c = np.full(n, np.inf, dt)
                    c[n // 2] = -np.inf
                    cases.append(c)
            for x in cases:
                prog = "lo = min(x)\nhi = max(x)\nk = argmin(x)\nj = argmax(x)"
                ref = R.run(prog, {"x": x}, "interp")
                got = R.run(prog, {"x": x}, "cpu")
                for nm in ref:
                    if not same(got[nm], ref[nm]):
                        bad.append(f"n={n} {np.dtype(dt).name} {nm}: cpu {got[nm]!r} interp {ref[nm]!r}")
    for n in (1, 17, RB + 1):
        for v in (True, False):
            x = np.full(n, v)
            ref = R.run("k = argmin(x)\nj = argmax(x)", {"x": x}, "interp")
            got = R.run("k = argmin(x)\nj = argmax(x)", {"x": x}, "cpu")
            for nm in ref:
                if not same(got[nm], ref[nm]):
                    bad.append(f"n={n} bool {v} {nm}: cpu {got[nm]!r} interp {ref[nm]!r}")
    report("reduce_cpu/ties_signed_zeros_nan_payloads", "; ".join(bad[:4]))


def test_sum_accuracy():
    """float32 sums: error no worse than NumPy's pairwise float32 sum."""
    rng = np.random.default_rng(5)
    bad = []
    for n in (RB + 1, 1_000_003, 4_000_037):
        for kind in ("normal", "positive", "cancel"):
            a = rng.standard_normal(n).astype(np.float32)
            if kind == "positive":
                a = np.abs(a) + np.float32(1)
            if kind == "cancel":
                a = np.concatenate([a, -a[::-1]]) + np.float32(1e-3)
            exact = math.fsum(a.astype(np.float64))
            got = float(R.run("s = sum(a)", {"a": a}, "cpu")["s"])
            npe = abs(float(np.sum(a)) - exact)
            ulp = float(np.spacing(np.float32(abs(exact))))
            if abs(got - exact) > max(npe, ulp):
                bad.append(f"n={n} {kind}: error {abs(got - exact)} > numpy's {npe}")
    report("reduce_cpu/float32_sum_accuracy", "; ".join(bad))


def test_n0():
    """n == 0: the identities; min/max/argmin/argmax refused."""
    bad = []
    a = np.zeros(0, np.float32)
    want = {"sum": np.float32(0), "prod": np.float32(1), "any": np.bool_(False),
            "all": np.bool_(True)}
    got = R.run("\n".join(f"r_{o} = {o}(a)" for o in want) + "\nm = mean(a)", {"a": a}, "cpu")
    for o, w in want.items():
        if not same(got[f"r_{o}"], w):
            bad.append(f"{o}: {got[f'r_{o}']!r}, want {w!r}")
    if not np.isnan(got["m"]):
        bad.append(f"mean: {got['m']!r}, want nan")
    for o in sorted(NOID):
        try:
            R.run(f"s = {o}(a)", {"a": a}, "cpu")
            bad.append(f"{o} over no elements was not refused")
        except JitcError as e:
            if e.status != 2:
                bad.append(f"{o}: status {e.status}, want 2 (JITC_E_PROGRAM)")
    report("reduce_cpu/empty", "; ".join(bad))


# let, where, casts, scalars; several reductions and outputs from the same
# temporaries.
MIXED = """
let t = where(a > 0, a * x, b - 1)
let u = i32(t * 100)
s = sum(t)
m = max(abs(a - b))
k = argmin(t)
j = argmax(u)
lo = min(u)
p = prod(u > -50)
q = any(isnan(t))
w = all(u < 1000000)
me = mean(f32(u))
c = t + b
d = u * 2
"""


def test_mixed():
    bad = []
    for n in SIZES[1:]:
        a = data(np.float32, n, n, True)
        b = data(np.float32, n, n + 1, False)
        sc = {"x": 1.5}
        ref = R.run(MIXED, {"a": a, "b": b}, "interp", scalars=sc)
        got = R.run(MIXED, {"a": a, "b": b}, "cpu", scalars=sc)
        for nm in ref:
            r, g = ref[nm], got[nm]
            if nm in ("s", "me"):
                if not np.isclose(float(g), float(r), rtol=1e-5, equal_nan=True):
                    bad.append(f"n={n} {nm}: cpu {g!r} interp {r!r}")
            elif not same(g, r):
                bad.append(f"n={n} {nm}: cpu {g!r} interp {r!r}")
        # NumPy for the exact ones.
        t = np.where(a > 0, a * np.float32(1.5), b - np.float32(1))
        with np.errstate(invalid="ignore", over="ignore"):
            u = np.nan_to_num(t.astype(np.float64) * 100, nan=0).clip(-2**31, 2**31 - 1).astype(np.int32)
        if int(got["k"]) != int(np.argmin(t)):
            bad.append(f"n={n} argmin: cpu {got['k']} numpy {np.argmin(t)}")
        if int(got["lo"]) != int(np.min(u)) and not np.isnan(t).any():
            bad.append(f"n={n} min: cpu {got['lo']} numpy {np.min(u)}")
    report("reduce_cpu/let_where_casts_scalars", "; ".join(bad[:4]))


def split_program(k):
    """A program large enough for several groups, with reductions in the
    first, middle and last groups reading lets computed in other groups
    (outputs o0, o1, ...: c64 would be a cast of the language)."""
    lines = ["let f = a * 3 - b", "let m = a > b", "let n = i32(a * 100) - 50",
             "s0 = sum(f)", "k0 = argmax(a)"]
    lines += [f"o{j} = a * {j} - f" for j in range(k)]
    lines += ["s1 = sum(n)", "x1 = max(f)", "a1 = any(m)"]
    lines += [f"e{j} = b * {j} + f" for j in range(k)]
    lines += ["s2 = min(f * b)", "k2 = argmin(f)", "p2 = prod(m | (n > -40))", "me = mean(f)",
              "d = where(m, f, -f) + n"]
    return "\n".join(lines)


def test_split():
    bad = []
    prog = split_program(90)
    for n in (1, 17, RB - 1, RB + 1, 3 * RB + 5, 100_003):
        a = data(np.float64, n, n, True)
        b = data(np.float64, n, n + 3, False)
        for threads in (1, 3):
            ref = R.run(prog, {"a": a, "b": b}, "interp")
            got = R.run(prog, {"a": a, "b": b}, "cpu", threads=threads)
            single = R.run(split_program(1), {"a": a, "b": b}, "cpu", threads=threads)
            for nm in ref:
                r, g = ref[nm], got[nm]
                if nm in ("s0", "me"):
                    if not np.isclose(g, r, rtol=1e-12, equal_nan=True):
                        bad.append(f"n={n} {nm}: cpu {g!r} interp {r!r}")
                elif not same(g, r):
                    bad.append(f"n={n} threads={threads} {nm}: cpu {g!r} interp {r!r}")
                # A split kernel's lanes are a single loop's: the same bits.
                if nm in single and not same(g, single[nm]):
                    bad.append(f"n={n} {nm}: split {g!r}, one group {single[nm]!r}")
    emitted = R.emit(prog, {"a": 4, "b": 4}, "cpu", "llvm")
    if "kernel.g1" not in emitted:
        bad.append("the program was not split (no kernel.g1): make it larger")
    report("reduce_cpu/split_groups", "; ".join(bad[:4]))


def many_reductions(k):
    """k reductions and nothing else, every op in turn over float64, int32
    and bool values: several groups that hold reductions alone."""
    vals = ["a * {j} - b", "i32(a * 100) - {j}", "a > b * {j}"]
    return [f"r{j} = {OPS[j % len(OPS)]}({vals[(j // len(OPS)) % 3].format(j=j)})"
            for j in range(k)]


def test_many_reductions():
    """Each group keeps its own reductions' lanes and writes their partials:
    every result has the bits of the same reduction in a program of one
    group, for any thread count."""
    bad = []
    lines = many_reductions(60)
    prog = "\n".join(lines)
    emitted = R.emit(prog, {"a": 4, "b": 4}, "cpu", "llvm")
    if "kernel.e3" not in emitted:
        bad.append("not split into 4 groups with reductions (no kernel.e3): make it larger")
    parts = ["\n".join(lines[j:j + 6]) for j in range(0, len(lines), 6)]
    if "kernel.g1" in R.emit(parts[0], {"a": 4, "b": 4}, "cpu", "llvm"):
        bad.append("six reductions are split: make the parts smaller")
    for n in (1, 17, RB - 1, RB + 1, 3 * RB + 5, 100_003):
        a = data(np.float64, n, n + 7, True)
        b = data(np.float64, n, n + 8, False)
        single = {}
        for part in parts:
            single.update(R.run(part, {"a": a, "b": b}, "cpu"))
        for threads in (1, 3):
            got = R.run(prog, {"a": a, "b": b}, "cpu", threads=threads)
            for nm in single:
                if not same(got[nm], single[nm]):
                    bad.append(f"n={n} threads={threads} {nm}: split {got[nm]!r}, "
                               f"one group {single[nm]!r}")
    report("reduce_cpu/many_reductions", "; ".join(bad[:4]))


DET = "s = sum(a*b)\nm = max(abs(a - b))\nk = argmin(a)\np = prod(b)\nme = mean(a)\nc = a - b"


def test_determinism():
    bad = []
    for dt in (np.float32, np.float64):
        n = 1_000_003
        a = data(dt, n, 11, False)
        b = (1 + data(dt, n, 12, False) * dt(1e-6)).astype(dt)
        first = None
        for rep in range(20):
            got = R.run(DET, {"a": a, "b": b}, "cpu")
            key = {nm: np.asarray(v).tobytes() for nm, v in got.items()}
            if first is None:
                first = key
            elif key != first:
                bad.append(f"{np.dtype(dt).name}: run {rep} differs from run 0")
                break
        for threads in (1, 2, 3, 4, 7):
            got = R.run(DET, {"a": a, "b": b}, "cpu", threads=threads)
            key = {nm: np.asarray(v).tobytes() for nm, v in got.items()}
            if key != first:
                diff = [nm for nm in key if key[nm] != first[nm]]
                bad.append(f"{np.dtype(dt).name}: threads={threads} differs in {diff}")
    report("reduce_cpu/deterministic_20_runs_and_threads", "; ".join(bad))


def test_levels():
    for lv in LEVELS:
        try:
            R.run("s = sum(a)", {"a": np.ones(3, np.float32)}, "cpu", cpu=lv)
        except JitcError as e:
            # JITC_E_UNAVAILABLE (4): the host lacks the level; any other
            # error is the level's failure.
            if e.status == 4:
                print(f"skip reduce_cpu[{lv}]: this host cannot run it ({str(e)[:80]})")
            else:
                report(f"reduce_cpu[{lv}]", str(e)[:300])
            continue
        test_ops(cpu=lv, sizes=[0, 1, 17, RB + 1, 3 * RB + 5], tag=f"[{lv}]")


def test_emit():
    bad = []
    prog = "s = sum(a*b)\nk = argmin(a)\nc = a - b"
    for stage, marks in (("llvm", ["rblock", "partials", "nblocks"]),
                         ("llvm-opt", ["partials", "nblocks"]),
                         ("asm", ["kernel", "ret"])):
        text = R.emit(prog, {"a": 3, "b": 3}, "cpu", stage, cpu="x86-64-v3")
        for m in marks:
            if m not in text:
                bad.append(f"--emit {stage} lacks {m!r}")
    report("reduce_cpu/emit", "; ".join(bad))


if __name__ == "__main__":
    test_ops()
    test_ties()
    test_sum_accuracy()
    test_n0()
    test_mixed()
    test_split()
    test_many_reductions()
    test_determinism()
    test_levels()
    test_emit()
    R.close()
    sys.exit(1 if FAILS else 0)
