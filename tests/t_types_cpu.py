#!/usr/bin/env python3
"""t_types_cpu.py -- the element types int8, int16, uint8, uint16, uint32,
uint64, float16 and bfloat16 on the cpu target (src/cpu/convert.c, gen.c,
reduce.c), through the library, against NumPy and ml_dtypes with the
semantics of the types' contract (docs/language.md), and against interp
where interp runs the program:

  - every operator and function of ops.h on each type, on random data and
    the edges (integer ends, zero divisors, shift counts beyond the width,
    negative powers; for the 16-bit floats every one of the 65536 bit
    patterns: NaN, inf, -0.0, subnormals, the largest, values rounding to
    inf), bit for bit where float32 is exact, within one unit in the last
    place of the 16-bit type for the vector math functions; mixed pairs;
  - every cast between the 13 types, float to int saturating with NaN 0,
    one rounding into the 16-bit floats from float64 and the wide integers;
  - the reductions (unsigned order, 16-bit sums rounded once);
  - sizes 0, 1, 15, 16, 17, 33 (vector tails), threads 1 and 3: the same bits;
  - every x86-64 level the host runs (x86-64 to -v4, as the library says;
    the mixed pairs at x86-64, where float16 converts by integer arithmetic,
    and natively);
  - --emit asm: no call of a conversion helper at any level (__extendhfsf2,
    __truncsfhf2, __truncsfbf2, ...), F16C's instructions at v3 and v4.
Under SAN=1 it runs again with the sanitizer runtimes preloaded into python
(the library is the ASan+UBSan build).  Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reduce_lib import ROOT, BFLOAT16, JitcError, Runner, under_sanitizers  # noqa: E402
from types_ref import (BY, F32, F64, NEW, TYPES, bits_ref, cast_ref, const_array,  # noqa: E402
                       differ, edges, float_ref, fsum_ref, int_pow, pairs, pick_ref, rand,
                       values, widen)

under_sanitizers("types_cpu")

if "cpu" not in os.environ.get("JITC_TARGETS", "interp cpu").split():
    print("skip types_cpu: the cpu target is not available")
    sys.exit(0)
if BFLOAT16 is None:
    print("skip types_cpu: ml_dtypes is not installed (python3 -m pip install ml_dtypes)")
    sys.exit(0)

LEVELS = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
UNAVAILABLE = 4  # JITC_E_UNAVAILABLE
FAILS = 0
R = Runner()
np.seterr(all="ignore")


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print(f"FAIL types_cpu.{name}: {why}")
    else:
        print(f"ok types_cpu.{name}")


# ---- running ----

def run(prog, inputs, level, threads=0, n=None, scalars=None):
    """The program's outputs on the cpu target at `level` (None: native)."""
    if n is not None:
        inputs = {k: v[:n] for k, v in inputs.items()}
    return R.run(prog, inputs, "cpu", threads=threads, cpu=level, scalars=scalars)


def interp_runs_types():
    """Whether interp runs the new types (casts, integer and 16-bit float
    arithmetic give the right answers), so that cpu is compared with it."""
    try:
        got = R.run("o0 = u8(a)\no1 = f16(b)\no2 = bf16(b)\no3 = u8(a) + u8(a)",
                    {"a": np.array([300, -1], np.int32), "b": np.array([1.5, 65520], np.float32)},
                    "interp")
    except JitcError:
        return False
    return (list(got["o0"]) == [44, 255] and list(got["o1"].astype(float)) == [1.5, math.inf]
            and list(got["o2"].astype(float)) == [1.5, 65536.0] and list(got["o3"]) == [88, 254])


INTERP = interp_runs_types()


def against_interp(prog, stmts, inputs, got, refs):
    """interp's outputs o<k> must be cpu's bits, but where refs[k] allows
    ulps (the math functions of each target) or a NaN of any payload (an
    arithmetic result's)."""
    ref = R.run(prog, inputs, "interp")
    bad = []
    for k, (s, r) in enumerate(zip(stmts, refs)):
        v = ref[f"o{k}"]
        t = next(t for t in TYPES if t.np == v.dtype)
        ulps = r[2] if len(r) > 2 else 0
        nan = "any" if ulps or (len(r) > 3 and r[3] == "any") else "bits"
        why = differ(got[f"o{k}"], v, t, ulps, nan, r[4] if len(r) > 4 else None)
        if why:
            bad.append(f"{s}: {why}")
    return "; ".join(bad[:4]) or None


def program(stmts):
    return "\n".join(f"o{k} = {s}" for k, s in enumerate(stmts))


def check_outputs(name, stmts, refs, got, level_tag):
    """Compares output o<k> with refs[k] = (want, type, ulps[, nan_sign])."""
    bad = []
    for k, (s, r) in enumerate(zip(stmts, refs)):
        why = differ(got[f"o{k}"], *r)
        if why:
            bad.append(f"{s}: {why}")
    report(f"{level_tag}{name}", "; ".join(bad[:4]))


# ---- the operators and functions ----

CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
       "==": np.equal, "!=": np.not_equal}
# Exact in float32 (so exact in the 16-bit floats, computed in float32 and rounded).
FBIN = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "//": np.floor_divide,
        "%": np.remainder, "fmod": np.fmod, "minimum": np.minimum, "maximum": np.maximum,
        "fmin": np.fmin, "fmax": np.fmax, "copysign": np.copysign, "nextafter": np.nextafter}
FBIN_APPROX = {"**": np.power, "arctan2": np.arctan2, "hypot": np.hypot}
FUN = {"-": np.negative, "abs": np.abs, "sqrt": np.sqrt, "square": np.square,
       "reciprocal": lambda x: np.float32(1) / x if x.dtype == np.float32 else 1 / x,
       "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "sign": np.sign}
FUN_APPROX = ["cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
              "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"]
PRED = ["isnan", "isinf", "isfinite"]
OPERATORS = {"+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"} | set(CMP)


def call(op, *args):
    """The source of op on the named args."""
    if op in OPERATORS and len(args) == 2:
        return f"{args[0]} {op} {args[1]}"
    if op == "-" and len(args) == 1:
        return f"-{args[0]}"
    return f"{op}({', '.join(args)})"


ARITH = {"+", "-", "*", "/", "//", "%", "fmod", "nextafter", "sqrt", "square", "reciprocal"}


def int_cases(t, rng):
    """(inputs, statements, refs) for integer type t."""
    a, b = pairs(t, 4000, rng)
    n = len(a)
    c, m = rand(t, n, rng), rng.random(n) < 0.5
    # shift counts and exponents: every count near the width, then any
    s = np.concatenate([np.tile(np.arange(-3, t.bits + 4), n // (t.bits + 7) + 1)[:n // 2],
                        rand(t, n - n // 2, rng).view(t.uint).astype(np.int64)]).astype(t.np)
    e = rng.integers(-3 if t.kind == "i" else 0, t.bits + 2, n).astype(t.np)
    ins = {"a": a, "b": b, "c": c, "m": m, "s": s, "e": e}
    st, refs = [], []

    def add(src, ref):
        st.append(src)
        refs.append(ref)
    same = lambda r: (r.astype(t.np), t, 0)  # noqa: E731
    for op, fn in (("+", np.add), ("-", np.subtract), ("*", np.multiply), ("//", np.floor_divide),
                   ("%", np.remainder), ("fmod", np.fmod), ("&", np.bitwise_and),
                   ("|", np.bitwise_or), ("^", np.bitwise_xor), ("minimum", np.minimum),
                   ("maximum", np.maximum), ("fmin", np.fmin), ("fmax", np.fmax)):
        add(call(op, "a", "b"), same(fn(a, b)))
    for op, fn in CMP.items():
        add(call(op, "a", "b"), (fn(a, b), BY["bool"], 0))
    add("a << s", same(np.left_shift(a, s)))
    add("a >> s", same(np.right_shift(a, s)))
    add("a ** e", same(int_pow(a, e, t)))
    add("a / b", (a.astype(np.float64) / b.astype(np.float64), F64, 0))
    add("-a", same(np.negative(a)))
    add("~a", same(np.invert(a)))
    for op, fn in (("abs", np.abs), ("square", np.square), ("sign", np.sign),
                   ("floor", lambda x: x), ("ceil", lambda x: x), ("trunc", lambda x: x)):
        add(f"{op}(a)", same(fn(a)))
    one = np.array(1, t.np)
    recip = np.where(a == 1, one, np.where(a.astype(np.int64) == -1, a, 0)) if t.kind == "i" else (a == 1)
    add("reciprocal(a)", same(recip))
    for op in PRED:
        add(f"{op}(a)", (np.full(n, op == "isfinite"), BY["bool"], 0))
    add("clip(a, b, c)", same(np.minimum(np.maximum(a, b), c)))
    add("where(m, a, b)", same(np.where(m, a, b)))
    # functions of integers give a float type (the checker's choice): the
    # reference follows the type of the output
    for op in ("sqrt", "exp", "sin"):
        add(f"{op}(a)", ("float", op))
    return ins, st, refs


def half_cases(t, rng):
    """(inputs, statements, refs) for a 16-bit float type t."""
    a, b = pairs(t, 2000, rng)
    n = len(a)
    u = np.resize(edges(t), n)  # every bit pattern, for the functions of one argument
    c, m = rand(t, n, rng), rng.random(n) < 0.5
    ins = {"a": a, "b": b, "c": c, "m": m, "u": u}
    st, refs = [], []
    picks = {"minimum": (False, True), "maximum": (True, True), "fmin": (False, False),
             "fmax": (True, False)}
    for op, fn in FBIN.items():
        st.append(call(op, "a", "b"))
        if op in picks:  # the operand's bits, NaN payloads too
            refs.append((pick_ref(t, *picks[op], a, b), t, 0, "bits"))
        elif op == "copysign":
            refs.append((bits_ref(t, a, lambda x: (x & 0x7FFF) | (b.view(np.uint16) & 0x8000)), t, 0, "bits"))
        elif op == "nextafter":  # the 16-bit type's own step; equal operands: y (C99)
            step = np.nextafter(a, b)
            refs.append((np.where(a == b, b, step).astype(step.dtype), t, 0, "bits"))
        else:
            refs.append(float_ref(fn, t, a, b, arith=True))
    for op, fn in FBIN_APPROX.items():
        st.append(call(op, "a", "b"))
        refs.append(float_ref(fn, t, a, b, approx=True))
    for op, fn in CMP.items():
        st.append(call(op, "a", "b"))
        refs.append((fn(widen(a), widen(b)), BY["bool"], 0))
    for op, fn in FUN.items():
        st.append(call(op, "u"))
        if op in ("-", "abs"):
            refs.append((bits_ref(t, u, (lambda x: x ^ 0x8000) if op == "-" else (lambda x: x & 0x7FFF)),
                         t, 0, "bits"))
        else:
            refs.append(float_ref(fn, t, u, arith=op in ARITH))
    for op in FUN_APPROX:
        # a NaN argument is the result, its bits as they are (F_NANARG)
        st.append(call(op, "u"))
        want, _, ulps, _ = float_ref(getattr(np, op), t, u, approx=True)
        isnan = np.isnan(widen(u))
        refs.append((np.where(isnan, u, want), t, ulps, "any", isnan))
    for op in PRED:
        st.append(call(op, "u"))
        refs.append((getattr(np, op)(widen(u)), BY["bool"], 0))
    st.append("clip(a, b, c)")
    refs.append((pick_ref(t, False, True, pick_ref(t, True, True, a, b), c), t, 0, "bits"))
    # a * b is exact in float32 for 11-bit (and 8-bit) significands: fma is
    # a * b + c rounded once in float32
    st.append("fma(a, b, c)")
    refs.append(float_ref(lambda x, y, z: x * y + z, t, a, b, c, arith=True))
    st.append("where(m, a, b)")
    refs.append((np.where(m, a, b), t, 0, "bits"))
    return ins, st, refs


def resolve(refs, ins, got):
    """Fills the references that follow the output's type (int functions)."""
    out = []
    for k, r in enumerate(refs):
        if isinstance(r[0], str):
            ot = next(t for t in TYPES if t.np == got[f"o{k}"].dtype)
            src = next(t for t in TYPES if t.np == ins["a"].dtype)
            x = cast_ref(ins["a"], src, ot)
            r = float_ref(getattr(np, r[1]), ot, x, approx=r[1] != "sqrt", arith=True)
        out.append(r)
    return out


def test_ops(level, tag):
    for t in NEW:
        rng = np.random.default_rng(t.bits * 7 + t.size)
        ins, st, refs = half_cases(t, rng) if t.half else int_cases(t, rng)
        prog = program(st)
        try:
            got = run(prog, ins, level)
        except JitcError as e:
            report(f"{tag}ops.{t}", str(e)[:300])
            continue
        refs = resolve(refs, ins, got)
        check_outputs(f"ops.{t}", st, refs, got, tag)
        if level is None:
            if INTERP:
                report(f"interp.ops.{t}", against_interp(prog, st, ins, got, refs))
            # vector tails and threads: every prefix size, one thread or three
            bad = []
            for n in (0, 1, 15, 16, 17, 33):
                for th in (1, 3):
                    part = run(prog, ins, level, threads=th, n=n)
                    for k in part:
                        if part[k].tobytes() != got[k][:n].tobytes():
                            bad.append(f"n={n} threads={th} {k}")
            report(f"sizes.{t}", "; ".join(bad[:4]))


def test_mixed(level, tag):
    """Operands of two types: the checker's casts, then the op in the common type."""
    rng = np.random.default_rng(5)
    bad = []
    for s in TYPES:
        for u in TYPES:
            if s is u or (s not in NEW and u not in NEW):
                continue
            try:
                common = BY[np.result_type(s.np, u.np).name]
            except Exception:  # noqa: BLE001 -- NumPy refuses the pair (bfloat16's)
                continue
            a, b = values(s, 300, rng), values(u, 300, rng)
            k = min(len(a), len(b))
            a, b = a[rng.permutation(len(a))][:k], b[rng.permutation(len(b))][:k]
            x, y = cast_ref(a, s, common), cast_ref(b, u, common)
            ops = ["+", "*", "maximum", "where(m, a, b)"] + (["//"] if common.kind != "b" else [])
            signed_u64 = {s.kind, u.kind} == {"i", "u"} and 8 in (s.size, u.size) and common.kind == "f"
            if not signed_u64:  # exact compares of signed with uint64: the checker's rewrite
                ops += ["<", "=="]
            m = rng.random(k) < 0.5
            st = [o if "(" in o else call(o, "a", "b") for o in ops]
            try:
                got = run(program(st), {"a": a, "b": b, "m": m}, level)
            except JitcError as e:
                bad.append(f"{s}, {u}: {str(e)[:120]}")
                continue
            for j, o in enumerate(ops):
                fn = {"+": np.add, "*": np.multiply, "maximum": np.maximum, "//": np.floor_divide,
                      "<": np.less, "==": np.equal}.get(o, lambda p, q: np.where(m, p, q))
                if common.kind == "b" and o in ("+", "*", "maximum"):
                    fn = {"+": np.logical_or, "*": np.logical_and, "maximum": np.logical_or}[o]
                if common.half and o == "maximum":
                    want = (pick_ref(common, True, True, x, y), common, 0, "bits")
                elif o.startswith("where"):
                    want = (np.where(m, x, y), common, 0, "bits")
                elif o in CMP:
                    want = (fn(widen(x), widen(y)) if common.half else fn(x, y), BY["bool"], 0)
                elif common.kind == "f":
                    want = float_ref(fn, common, x, y, arith=o in ARITH)
                else:
                    want = (fn(x, y).astype(common.np), common, 0)
                why = differ(got[f"o{j}"], *want)
                if why:
                    bad.append(f"{s} {o} {u}: {why}")
    report(f"{tag}mixed_pairs", "; ".join(bad[:5]))


# ---- casts ----

def cast_data(s, rng):
    """Values of s for the casts: edges, random, and the rounding cases."""
    v = values(s, 3000 if not s.half else 0, rng)
    if s.kind in "iu" and s.size >= 4:
        # integers at the float types' rounding points: 2^k + halfway +- 1
        extra = []
        for k in range(8, s.bits - (s.kind == "i")):
            for h in (k - 24, k - 11, k - 8):
                if h >= 1:
                    for d in (-1, 0, 1):
                        extra += [(1 << k) + (1 << h) + d, (1 << k) + 3 * (1 << h) + d]
        extra = [x for x in extra if s.lo <= x <= s.hi]
        extra += [-x for x in extra if s.kind == "i" and -x >= s.lo]
        v = np.concatenate([v, np.array(extra, dtype=object).astype(s.np)])
    if s.kind == "f" and not s.half:
        # halfway between float16 and bfloat16 neighbours, and a hair off
        h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        f16 = widen(h.view(np.float16)).astype(np.float64)
        bf = widen(h.view(BFLOAT16)).astype(np.float64)
        mids = []
        for w in (f16, bf):
            w = w[np.isfinite(w)]
            w = np.unique(w)
            mid = (w[:-1] + w[1:]) / 2
            mids += [mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
        mids = np.concatenate(mids)
        mids = mids[rng.integers(0, len(mids), 6000)]
        if s.size == 4:
            mids = np.concatenate([mids.astype(np.float32),
                                   np.nextafter(mids.astype(np.float32), np.float32(np.inf))])
        v = np.concatenate([v, mids.astype(s.np)])
    return v


def test_casts(level, tag):
    for s in TYPES:
        rng = np.random.default_rng(11 + s.size)
        a = cast_data(s, rng)
        st = [f"{t.short}(a)" for t in TYPES]
        try:
            got = run(program(st), {"a": a}, level)
        except JitcError as e:
            report(f"{tag}casts.from_{s}", str(e)[:300])
            continue
        refs = [(cast_ref(a, s, t), t, 0, "bits") for t in TYPES]
        check_outputs(f"casts.from_{s}", st, refs, got, tag)
        if level is None and INTERP:
            report(f"interp.casts.from_{s}", against_interp(program(st), st, {"a": a}, got, refs))


# ---- constants and scalars ----

def folds_new_constants():
    """Whether the checker gives constants and scalars of the new types
    their values (uint8 + 1 is 2 where a is 1)."""
    try:
        got = run("b = a + 1\nc = a + s", {"a": np.ones(2, np.uint8)}, None,
                  scalars={"s": (3, TYPES.index(BY["uint8"]))})
    except JitcError:
        return False
    return list(got["b"]) == [2, 2] and list(got["c"]) == [4, 4]


def test_constants(level, tag):
    """Literals and typed scalars of each type, as the constant or slot the
    kernel reads (a 16-bit float's bits from its float64 value)."""
    rng = np.random.default_rng(3)
    for t in NEW:
        a = edges(t) if t.half else values(t, 2000, rng)  # every 16-bit pattern, NaNs too
        n = len(a)
        big = min(t.hi, 2 ** 63 - 1) if t.kind != "f" else 0  # a literal is at most int64's
        # 1, -1 and -0.0 are identities LLVM may fold (x * 1.0 is x): the
        # result must still be computed, a signalling NaN made quiet
        lit = [1, -1, 3, 2.5, -0.0, 0.1, 65504, 1e-7] if t.half else [1, 3, 7, big, t.lo]
        sv = 0.1 if t.half else big - 1
        st = [f"a * {v!r}" if t.half else f"a + {v}" for v in lit] + ["a + s", "maximum(a, s)"]
        try:
            got = run(program(st), {"a": a}, level, scalars={"s": (sv, TYPES.index(t))})
        except JitcError as e:
            report(f"{tag}constants.{t}", str(e)[:300])
            continue
        refs = []
        for k, v in enumerate(lit):
            # a Python float with bfloat16 is float32 (ml_dtypes' promotion)
            ot = next(u for u in TYPES if u.np == got[f"o{k}"].dtype)
            c = const_array(v, ot, n)
            x = a if ot is t else cast_ref(a, t, ot)
            refs.append(float_ref(np.multiply, ot, x, c, arith=True) if ot.kind == "f" else
                        (x + c, ot, 0))
        c = const_array(sv, t, n)
        refs.append(float_ref(np.add, t, a, c, arith=True) if t.half else (a + c, t, 0))
        refs.append((pick_ref(t, True, True, a, c), t, 0, "bits") if t.half else
                    (np.maximum(a, c), t, 0))
        check_outputs(f"constants.{t}", st, refs, got, tag)
    # the programs of the benchmarks (bench/types_cpu.py)
    x = rand(BY["uint8"], 1003, rng)
    h = [values(BY["float16"], 1003, rng)[rng.permutation(1 << 16)][:1003] for _ in range(2)]
    got = run("y = (f32(x) - 127.5) / 127.5", {"x": x}, level)
    want = (x.astype(np.float32) - np.float32(127.5)) / np.float32(127.5)
    why = differ(got["y"], want, F32)
    got = run("c = a * b + 1", {"a": h[0], "b": h[1]}, level)
    f16 = BY["float16"]
    want = float_ref(np.add, f16, float_ref(np.multiply, f16, h[0], h[1])[0], np.ones(1003, np.float16))
    why = why or differ(got["c"], *want)
    report(f"{tag}constants.bench_programs", why)


# ---- reductions ----

with open(os.path.join(ROOT, "src", "cpu", "cpu.h")) as f:
    RB = int(next(line.split()[2] for line in f if line.startswith("#define RB ")))
ROPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]
NOID = {"min", "max", "argmin", "argmax"}


def reduce_ref(op, a, t):
    """(value, type, ulps) of reduction op over a of type t."""
    n = len(a)
    x = widen(a) if t.half else a
    if op in ("any", "all"):
        return getattr(np, op)(x != 0), BY["bool"], 0
    if op in ("argmin", "argmax"):
        return np.int64(getattr(np, op)(x)), BY["int64"], 0
    if op in ("min", "max"):
        nan = np.isnan(x) if t.kind == "f" else np.zeros(n, bool)
        if nan.any():  # the first NaN
            return a[np.argmax(nan)], t, 0
        return getattr(np, op)(a if not t.half else x).astype(t.np), t, 0
    if t.half:
        if op == "prod":  # float32 products, rounded once: within an ulp
            return np.prod(x.astype(np.float64)).astype(t.np), t, 1, False
        if op == "mean" and n == 0:
            return np.array(np.nan, t.np), t, 0, False
        ok = n <= RB  # beyond, float64's lanes need not be exact
        return fsum_ref(x.astype(np.float64), t, op == "mean"), t, 0 if ok else 1, False
    wide = BY["uint64"] if t.kind == "u" else BY["int64"]
    if op == "mean":
        return np.float64(np.mean(a.astype(np.float64))) if n else np.float64(np.nan), F64, 16
    f = np.sum if op == "sum" else np.prod
    return f(a.astype(wide.np)), wide, 0


def test_reductions(level, tag):
    for t in NEW:
        rng = np.random.default_rng(t.size * 3 + t.bits)
        bad = []
        prog = "\n".join(f"r_{op} = {op}(a)" for op in ROPS)
        noid = "\n".join(f"r_{op} = {op}(a)" for op in ROPS if op not in NOID)
        for n in (0, 1, 15, 17, RB - 1, RB + 1, 3 * RB + 5):
            for kind in ("edges", "plain"):
                a = values(t, n, rng)[rng.permutation(max(n, len(edges(t))))][:n] \
                    if kind == "edges" else rand(t, n, rng)
                if t.half and kind == "plain":  # no inf or NaN: sums to check
                    a = (rng.standard_normal(n) * 4).astype(np.float32).astype(t.np)
                try:
                    got = run(prog if n else noid, {"a": a}, level)
                except JitcError as e:
                    bad.append(f"n={n}: {str(e)[:200]}")
                    continue
                for op in ROPS:
                    if f"r_{op}" not in got:
                        continue
                    if op == "prod" and t.half and kind == "edges":
                        continue  # float32's overflow depends on the order
                    want, rt, *tol = reduce_ref(op, a, t)
                    g = np.array([got[f"r_{op}"]])
                    why = differ(g, np.array([want], rt.np), rt, *tol)
                    if why and op == "mean" and rt is F64:
                        why = None if math.isclose(float(g[0]), float(want), rel_tol=1e-12) or \
                            (math.isnan(g[0]) and math.isnan(want)) else why
                    if why:
                        bad.append(f"n={n} {kind} {op}: got {g[0]!r} want {want!r}")
                if level is None and n == 3 * RB + 5:
                    # the same bits on one thread, two, three and all
                    for th in (1, 2, 3):
                        other = run(prog, {"a": a}, level, threads=th)
                        diff = [k for k in got if np.asarray(got[k]).tobytes() !=
                                np.asarray(other[k]).tobytes()]
                        if diff:
                            bad.append(f"threads={th}: {diff} differ")
        report(f"{tag}reduce.{t}", "; ".join(bad[:4]))
    # 16-bit sums round once: 2048 + 1 + 1 is 2050, not 2048 (float16, per
    # step), and the sum of many small values is not stuck
    a = np.array([2048, 1, 1], np.float16)
    got = run("s = sum(a)\nm = mean(a)", {"a": a}, level)
    bf = np.array([256, 1, 1], BFLOAT16)
    gotb = run("s = sum(a)", {"a": bf}, level)
    why = [f"{nm} {g!r} want {w!r}" for nm, g, w in (("f16 sum", got["s"], 2050.0),
                                                     ("f16 mean", got["m"], np.float16(2050 / 3)),
                                                     ("bf16 sum", gotb["s"], 258.0)) if g != w]
    report(f"{tag}reduce.rounded_once", "; ".join(why))


# ---- split programs ----

def test_split(level, tag):
    """A program long enough to be cut into groups (src/split.c): its
    temporaries of the narrow types cross groups in the scratch, and
    reductions carry their lanes through it."""
    rng = np.random.default_rng(9)
    steps = 150
    for t in (BY["uint8"], BY["int16"], BY["uint64"], BY["float16"], BY["bfloat16"]):
        n = 1003
        if t.half:  # bounded: x * h + a with h in [0, 0.5], a in [-1, 1]
            a = rng.uniform(-1, 1, n).astype(np.float32).astype(t.np)
            h = rng.uniform(0, 0.5, n).astype(np.float32).astype(t.np)
        else:
            a, h = rand(t, n, rng), rand(t, n, rng)
        lines, x = ["let x0 = a"], [a]
        for k in range(steps):
            lines.append(f"let x{k + 1} = x{k} * h + a")
            if t.half:
                p = float_ref(np.multiply, t, x[k], h)[0]
                x.append(float_ref(np.add, t, p, a)[0])
            else:
                x.append(x[k] * h + a)
        lines += [f"o = x{steps} - x{steps // 2}", f"s = max(x{steps // 3})", f"r = argmin(x{steps})"]
        prog = "\n".join(lines)
        dt = {"a": TYPES.index(t), "h": TYPES.index(t)}
        groups = R.emit(prog, dt, "cpu", "llvm", cpu=level).count("define internal")
        got = run(prog, {"a": a, "h": h}, level)
        want = float_ref(np.subtract, t, x[steps], x[steps // 2], arith=True) if t.half else \
            (x[steps] - x[steps // 2], t, 0)
        why = [] if groups >= 2 else [f"not split ({groups} groups)"]
        why += [w for w in [differ(got["o"], *want)] if w]
        xs = widen(x[steps // 3]) if t.half else x[steps // 3]
        if np.asarray(got["s"]).tobytes() != x[steps // 3][np.argmax(xs)].tobytes():
            why.append(f"max {got['s']!r}")
        if int(got["r"]) != int(np.argmin(widen(x[steps]) if t.half else x[steps])):
            why.append(f"argmin {got['r']!r}")
        report(f"{tag}split.{t}", "; ".join(why))


# ---- the code ----

def test_asm():
    """No scalar conversion helper at any level; F16C at v3 and v4."""
    prog = "\n".join(["x = f32(h) * f32(g)", "y = f16(d)", "z = bf16(d)", "w = bf16(x)",
                      "v = h * h + h", "u = g * g", "k = f16(q)", "j = bf16(q)", "s = sum(h)",
                      "t = max(g)", "r = u8(h) + u8(g)"])
    dt = {"h": 11, "g": 12, "d": 4, "q": 2}
    bad = []
    for lv in LEVELS:
        try:
            text = R.emit(prog, dt, "cpu", "asm", cpu=lv)
        except JitcError as e:
            bad.append(f"{lv}: {str(e)[:200]}")
            continue
        calls = sorted({ln.split()[-1] for ln in text.splitlines()
                        if "call" in ln and ("hf" in ln or "bf" in ln or "__" in ln)})
        if calls:
            bad.append(f"{lv} calls {calls}")
        if lv in ("x86-64-v3", "x86-64-v4") and ("vcvtph2ps" not in text or "vcvtps2ph" not in text):
            bad.append(f"{lv}: no vcvtph2ps/vcvtps2ph")
    report("asm_no_conversion_calls", "; ".join(bad))


def available(level):
    try:
        R.run("b = a + a", {"a": np.ones(3, np.uint8)}, "cpu", cpu=level)
        return True
    except JitcError as e:
        if e.status != UNAVAILABLE:
            raise
        return False


if __name__ == "__main__":
    if not INTERP:
        print("skip types_cpu.interp: interp does not run the new types yet (compared with NumPy only)")
    CONSTANTS = folds_new_constants()
    if not CONSTANTS:
        print("skip types_cpu.constants: the checker does not give constants and scalars of "
              "the new types their values yet")
    test_ops(None, "")
    test_casts(None, "")
    if CONSTANTS:
        test_constants(None, "")
    test_mixed(None, "")
    test_reductions(None, "")
    test_split(None, "")
    test_asm()
    for lv in LEVELS:
        if os.environ.get("SAN") == "1":  # the native run above is the sanitizers' subject
            print(f"skip types_cpu[{lv}]: the levels run without sanitizers")
            continue
        if not available(lv):
            print(f"skip types_cpu[{lv}]: this host cannot run code for it")
            continue
        tag = f"[{lv}]."
        test_ops(lv, tag)
        test_casts(lv, tag)
        if CONSTANTS:
            test_constants(lv, tag)
        if lv == "x86-64":  # the mixed pairs add casts to the ops: native and here
            test_mixed(lv, tag)
            # the lanes and the split's scratch do not depend on the level's
            # instructions beyond what ops and casts test: here and native
            test_reductions(lv, tag)
            test_split(lv, tag)
    R.close()
    sys.exit(1 if FAILS else 0)
