#!/usr/bin/env python3
"""tests/t_types_interp.py -- the semantics of the element types int8, int16,
uint8, uint16, uint32, uint64, float16 and bfloat16, run through libjitc
(ctypes) and compared with NumPy (ml_dtypes for bfloat16).

- Every operator and function row of src/ops.h on every type of the table
  (types.h) that is not one of the first five, its operands all of that
  type: 8- and 16-bit operands exhaustively for one operand and the 8-bit
  integers for two, else every pair of edge values (the ends of the type, 0,
  -1, shift counts at and beyond the width; NaN, -NaN, +-inf, +-0,
  subnormals, the largest finite value, ties) plus random values.
- Mixed pairs: a few operators between each new type and every other type
  that NumPy promotes it with, NumPy's result type and values (the pairs
  NumPy refuses are tests/t_types.py's).
- Every cast between every pair of the 13 types, from edge and random
  values (exhaustive from the 16-bit ones).
- The reductions of the new types.
- Named cases of the contract's choices (docs/language.md, notes in
  src/half.h and src/sem_cast.h).

Exact everywhere except the functions that docs/language.md lets differ by
target (exp, sin, ..., hypot, power on floats): on float16 and bfloat16 the
result may be 1 unit in the last place of the 16-bit type from NumPy's
(ml_dtypes'), NaN and inf where NumPy has them.  A NaN result matches a NaN
(its sign checked where the operation moves a NaN: one operand, or a cast).

Where NumPy has no defined answer, or jitc's documented rule differs, the
expectation is the rule, each written out below (contract_fix): a float
that does not fit the integer it is cast to saturates (NaN gives 0);
integers to negative powers give the integer part of 1/a^-b; reciprocal of
integer 0 is 0; minimum, maximum, fmin, fmax and clip give the second of
two operands that compare equal (NumPy's float16 loop gives the first);
sign(-0.0) is 0.0 (ml_dtypes' bfloat16 gives -0.0).

Targets: JITC_TARGETS (default interp); a target this machine lacks (the
command line exits 69) is skipped, with a line saying so; one that is here
must run every type (tried with one program first), and a type it refuses
is a failure, its cases left out.
"""
import ctypes as C
import os
import re
import sys
import warnings

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduce_lib as RL  # noqa: E402

if os.environ.get("SAN") == "1" and "JITC_SAN_PRELOADED" not in os.environ:
    # The ASan+UBSan library loads into python only with the sanitizer
    # runtimes preloaded; python's own allocations are not ours to check.
    import subprocess
    cc = os.environ.get("CC", "cc")
    libs = [subprocess.run([cc, f"-print-file-name={x}"], capture_output=True,
                           text=True).stdout.strip() for x in ("libasan.so", "libubsan.so")]
    if not all(os.path.isabs(x) and os.path.exists(x) for x in libs):
        print(f"skip types_interp: ASan build, and {cc} names no libasan.so/libubsan.so")
        sys.exit(0)
    env = dict(os.environ, LD_PRELOAD=":".join(libs), JITC_SAN_PRELOADED="1",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

warnings.simplefilter("ignore")
ROOT = RL.ROOT
BF16 = np.dtype(ml_dtypes.bfloat16)
fails = 0
rng = np.random.default_rng(20240923)


def ok(name):
    print("ok types_interp." + name)


def fail(name, why):
    global fails
    fails += 1
    print("FAIL types_interp.%s: %s" % (name, why))


# ---- the tables: types.h and ops.h ----

def type_table():
    text = open(os.path.join(ROOT, "src", "types.h")).read()
    block = text[text.index("#ifdef TYPE"):]
    block = block[:block.index("#endif")]
    rows = []
    for m in re.finditer(r'^TYPE\((\w+),\s*"(\w+)",\s*"(\w+)",\s*(\w+),\s*(\w+),\s*(\d+)', block, re.M):
        name = m.group(2)
        dt = BF16 if name == "bfloat16" else np.dtype(name)
        rows.append({"id": m.group(1), "name": name, "short": m.group(3), "kind": m.group(5),
                     "size": int(m.group(6)), "dt": dt})
    return rows


def op_table():
    text = open(os.path.join(ROOT, "src", "ops.h")).read()
    block = text[text.index("#ifdef OP"):]
    block = block[:block.index("#endif")]
    rows = []
    pat = (r'^OP\((\w+),\s*"([^"]+)",\s*(\w+),\s*(\d),\s*(NULL|"[^"]*"),\s*\w+,\s*(\w+),\s*(\w+),'
           r'\s*(NULL|"[^"]*"),\s*([\w| ]+)\)')
    for m in re.finditer(pat, block, re.M):
        rows.append({"id": m.group(1), "name": m.group(2), "kind": m.group(3),
                     "arity": int(m.group(4)), "spell": m.group(5).strip('"'),
                     "rule": m.group(6), "libm": m.group(7), "flags": m.group(9)})
    return rows


# The real types: complex64 and complex128 are the complex group's.
TYPES = [t for t in type_table() if t["kind"] != "T_COMPLEX"]
NUM = {t["dt"]: k for k, t in enumerate(TYPES)}      # numpy dtype -> jitc_dtype
BY_NUM = [t["dt"] for t in TYPES]
NEW = TYPES[5:]                                       # the types after the first five
# The rows of two results and ldexp have their own group, t_mixed_fns.py;
# the functions of complex numbers (real, imag, ...) the complex group.
OPS = [o for o in op_table() if "F_TWO" not in o["flags"] and "F_SECOND" not in o["flags"]
       and o["rule"] not in ("R_LDEXP", "R_PART", "R_CONJ", "R_ANGLE", "R_COMPLEX")]
# Functions that may differ by target (docs/language.md): a libm function
# that is not one of the exactly rounded ones.
EXACT_LIBM = {"sqrt", "fma", "floor", "ceil", "trunc", "rint", "abs", "fmod", "copysign",
              "nextafter"}
ULP_OPS = {o["name"] for o in OPS if o["libm"] != "NOLIB" and o["name"] not in EXACT_LIBM}


def is_float(dt):
    return dt == BF16 or dt.kind == "f"


def is_int(dt):
    return dt.kind in "iu"


# ---- running a program through the library ----

class Runner(RL.Runner):
    def compile(self, prog, inputs, target):
        names = list(inputs)
        decls = (RL.ArrayDecl * max(1, len(names)))()
        for k, nm in enumerate(names):
            decls[k].name = nm.encode()
            decls[k].dtype = NUM[inputs[nm].dtype]
        o = self.options(target)
        k = C.c_void_p()
        st = RL.lib().jitc_compile(self.ctx, prog.encode(), decls, len(names), None, 0,
                                   C.byref(o), C.byref(k))
        if st:
            raise RL.JitcError(st, RL.lib().jitc_errmsg(self.ctx).decode())
        return k

    def run(self, prog, inputs, target):
        """{name: array, or one element for a reduction} of prog's outputs."""
        inputs = {nm: np.ascontiguousarray(a) for nm, a in inputs.items()}
        n = len(next(iter(inputs.values())))
        L = RL.lib()
        k = self.compile(prog, inputs, target)
        try:
            na = L.jitc_kernel_array_count(k)
            ptrs = (C.c_void_p * max(1, na))()
            out = {}
            for j in range(na):
                nm, role, dt = C.c_char_p(), C.c_int(), C.c_int()
                L.jitc_kernel_array(k, j, C.byref(nm), C.byref(role), C.byref(dt))
                name = nm.value.decode()
                if name in inputs:
                    arr = inputs[name]
                else:
                    arr = np.zeros(1 if role.value == RL.RESULT else max(n, 1), BY_NUM[dt.value])
                    out[name] = (arr, role.value)
                ptrs[j] = arr.ctypes.data
            st = L.jitc_run(self.ctx, k, n, ptrs, None, None)
            if st:
                raise RL.JitcError(st, L.jitc_errmsg(self.ctx).decode())
            return {nm: (a[0] if role == RL.RESULT else a[:n]) for nm, (a, role) in out.items()}
        finally:
            L.jitc_kernel_free(k)


# ---- values ----

def bits_view(x):
    x = np.asarray(x)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def int_edges(dt):
    ii = np.iinfo(dt)
    bits = ii.bits
    v = [ii.min, ii.min + 1, ii.max, ii.max - 1, 0, 1, 2, 3, 5, 7, bits - 1, bits, bits + 1,
         2 * bits, 100, ii.max // 2, ii.max // 2 + 1]
    if ii.min < 0:
        v += [-1, -2, -3, -7, -bits, ii.min // 2]
    return np.array(sorted(set(int(x) for x in v if ii.min <= x <= ii.max)), dtype=dt)


def float_edges(dt):
    """NaN, -NaN, +-inf, +-0, subnormals, normals' ends, ties, round-to-inf."""
    fi = ml_dtypes.finfo(dt) if dt == BF16 else np.finfo(dt)
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
            3.0, 7.0, 0.1, -0.3, 100.0, float(fi.max), -float(fi.max), float(fi.tiny),
            -float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.tiny) - float(fi.smallest_subnormal), float(fi.eps), 1 + float(fi.eps),
            np.pi, np.e, 1e4, -1e4, 65504.0, 127.0, 128.0, 255.0, 256.0, -129.0, 32767.0]
    a = np.array(vals, dtype=np.float64).astype(dt)
    return np.unique(bits_view(a)).view(dt)


def edges(dt):
    return float_edges(dt) if is_float(dt) else int_edges(dt)


def every_value(dt):
    return np.arange(1 << (8 * dt.itemsize), dtype=bits_view(np.zeros(1, dt)).dtype).view(dt)


def random_values(dt, n):
    """Random bit patterns, and moderate values (most patterns of a float
    type are huge or tiny)."""
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).view(dt)
    if not is_float(dt):
        return raw
    mid = (rng.standard_normal(n) * rng.choice([1, 10, 1000], n)).astype(dt)
    return np.where(rng.random(n) < 0.5, raw, mid)


def operands(dt, arity):
    """Arrays of dt covering the edge values and random ones."""
    if arity == 1:
        if dt.itemsize <= 2:
            return [every_value(dt)]
        return [np.concatenate([edges(dt), random_values(dt, 20000)])]
    e = edges(dt)
    if arity == 2:
        if dt.itemsize == 1:
            v = every_value(dt)
            x, y = np.meshgrid(v, v)
        else:
            x, y = np.meshgrid(e, e)
        x, y = x.ravel(), y.ravel()
        r = random_values(dt, 20000), random_values(dt, 20000)
        return [np.concatenate([x, r[0]]), np.concatenate([y, r[1]])]
    x, y, z = (g.ravel() for g in np.meshgrid(e[::2], e[::3], e[1::3]))
    r = [random_values(dt, 10000) for _ in range(3)]
    return [np.concatenate([x, r[0]]), np.concatenate([y, r[1]]), np.concatenate([z, r[2]])]


# ---- expectations ----

UFUNC = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
         "//": np.floor_divide, "%": np.remainder, "**": np.power, "&": np.bitwise_and,
         "|": np.bitwise_or, "^": np.bitwise_xor, "<<": np.left_shift, ">>": np.right_shift,
         "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
         "==": np.equal, "!=": np.not_equal, "neg": np.negative, "invert": np.invert,
         "abs": np.absolute}

_libm = C.CDLL("libm.so.6")
_libm.fmaf.restype = C.c_float
_libm.fmaf.argtypes = [C.c_float] * 3


def fma_model(x, y, z):
    """float32's fma (the C library's) on the widened values, rounded."""
    f = [np.asarray(v).astype(np.float32) for v in (x, y, z)]
    r = np.array([_libm.fmaf(a, b, c) for a, b, c in zip(*f)], dtype=np.float32)
    return r.astype(x.dtype)


def c99_nextafter(x, y):
    """nextafter with C99's rule for equal operands, y (docs/language.md:
    NumPy 2.5's for float16; NumPy 2.4 gives x there, nextafter(0.0, -0.0)
    is 0.0), which NumPy's float32 and float64 loops follow through C's."""
    r = np.nextafter(x, y)
    return np.where(np.asarray(x) == np.asarray(y), np.asarray(y).astype(r.dtype), r)


def numpy_op(name, args):
    if name == "nextafter":
        return c99_nextafter(*args)
    if name in UFUNC:
        return UFUNC[name](*args)
    if name == "clip":
        return np.minimum(np.maximum(args[0], args[1]), args[2])
    if name == "where":
        return np.where(args[0] != 0, args[1], args[2])
    if name == "fma":
        return fma_model(*args)
    return getattr(np, name)(*args)


def int_pow_model(a, b):
    """The integer part of 1/a^-b for b < 0 (NumPy raises)."""
    one = np.ones_like(a)
    return np.where(a == 1, one, np.where(a == -1, np.where(b % 2 == 0, one, -one), 0 * one))


def expect(name, dt, args):
    """NumPy's answer, replaced where jitc's documented rule differs."""
    call = args
    if name == "**" and dt.kind == "i":  # NumPy raises for negative exponents
        call = [args[0], np.where(args[1] < 0, 0, args[1]).astype(dt)]
    return contract_fix(name, dt, args, numpy_op(name, call))


def contract_fix(name, dt, args, want):
    want = np.array(want, copy=True)
    if is_int(dt):
        if name == "**" and dt.kind == "i":
            neg = args[1] < 0
            want[neg] = int_pow_model(args[0][neg], args[1][neg])
        if name == "reciprocal":
            want[args[0] == 0] = 0
    else:
        if name in ("minimum", "maximum", "fmin", "fmax") and dt != BF16:
            same = args[0] == args[1]
            want[same] = args[1][same]
        if name == "clip" and dt != BF16:
            x, lo, hi = args
            m = np.maximum(x, lo)
            m[x == lo] = lo[x == lo]
            r = np.minimum(m, hi)
            r[m == hi] = hi[m == hi]
            want = r
        if name == "sign":
            z = args[0] == 0
            want[z] = np.zeros(1, dt)[0]
    return want


def compare(got, want, ulps=0, nan_sign=None):
    """Indices where got is not want: bits equal, or both NaN (their signs
    equal where the mask nan_sign says), or within ulps units of the 16-bit
    float's last place; None if the dtypes differ."""
    if got.dtype != want.dtype:
        return None
    gb, wb = bits_view(got), bits_view(want)
    bad = gb != wb
    if is_float(got.dtype):
        gn, wn = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
        sign = np.uint64(1) << np.uint64(8 * got.dtype.itemsize - 1)
        same_sign = (gb.astype(np.uint64) & sign) == (wb.astype(np.uint64) & sign)
        check = nan_sign if nan_sign is not None else np.zeros(len(got), bool)
        bad = np.where(gn & wn, check & ~same_sign, bad)
        if ulps:
            mag = np.uint64(int(sign) - 1)

            def line(b):
                b = b.astype(np.uint64)
                v = (b & mag).astype(np.int64)
                return np.where(b & sign, -v, v)
            close = (np.abs(line(gb) - line(wb)) <= ulps) & ~gn & ~wn
            bad &= ~close
    return np.nonzero(bad)[0]


def isnan_any(x):
    return np.isnan(x.astype(np.float64)) if is_float(x.dtype) else np.zeros(len(x), bool)


def report(tag, prog, args, got, want, idx):
    if idx is None:
        fail(tag, "%s: result dtype %s, NumPy's %s" % (prog, got.dtype, want.dtype))
        return
    shown = []
    for j in idx[:4]:
        ins = ", ".join("%r" % (a[j],) for a in args)
        shown.append("(%s) -> %r, want %r" % (ins, got[j], want[j]))
    fail(tag, "%s: %d of %d differ: %s" % (prog, len(idx), len(got), "; ".join(shown)))


# ---- the groups ----

NAMES = ("a", "b", "d")


def program(o):
    if o["kind"] == "OPERATOR":
        if o["arity"] == 2:
            return "c = a %s b" % o["spell"]
        return "c = %sa" % o["spell"]
    return "c = %s(%s)" % (o["name"], ", ".join(NAMES[:o["arity"]]))


def applies(o, dt):
    """Whether the checker types o on operands of dt alone (R_FLOAT on
    integers is the checker's own choice of float type: not here)."""
    if o["kind"] not in ("OPERATOR", "FUNCTION"):
        return False
    if o["rule"] in ("R_BITWISE", "R_SHIFT"):
        return is_int(dt)
    if o["rule"] == "R_FLOAT":
        return is_float(dt)
    return True


def ops_of_type(R, target, t):
    dt = t["dt"]
    for arity, group in ((1, "unary"), (2, "binary"), (3, "ternary")):
        args = operands(dt, arity)
        problems = 0
        for o in OPS:
            if o["arity"] != arity or not applies(o, dt):
                continue
            prog = program(o)
            tag = "%s.%s.%s" % (target, group, t["name"])
            try:
                got = R.run(prog, dict(zip(NAMES, args)), target)["c"]
            except RL.JitcError as e:
                fail(tag, "%s: %s" % (prog, e))
                problems += 1
                continue
            want = expect(o["name"], dt, args)
            ulps = 1 if o["name"] in ULP_OPS and is_float(dt) else 0
            # A NaN operand's sign: moved by -, abs and where as any other
            # bit; F_NANARG functions return the NaN argument itself (jitc's
            # rule: NumPy's and ml_dtypes' loops may give a NaN of their own).
            moved = np.zeros(len(got), bool)
            if o["name"] in ("neg", "abs"):
                moved = isnan_any(args[0])
            if o["name"] == "where":
                moved = np.where(args[0] != 0, isnan_any(args[1]), isnan_any(args[2]))
            if "F_NANARG" in o["flags"] and is_float(dt):
                n = isnan_any(args[0])
                want = np.where(n, args[0], want)
                moved = n
            idx = compare(got, want, ulps, moved)
            if idx is None or len(idx):
                report(tag, prog, args, got, want, idx)
                problems += 1
        if not problems:
            ok("%s.%s.%s" % (target, group, t["name"]))


MIXED_OPS = ("+", "-", "*", "/", "//", "%", "<", "==")


def mixed_values(dt, n):
    if dt == np.bool_:
        return rng.random(n) < 0.5
    if is_int(dt):
        ii = np.iinfo(dt)
        lo, hi = max(ii.min, -(1 << 40)), min(ii.max, 1 << 40)
        return np.concatenate([int_edges(dt)[(int_edges(dt) >= lo) & (int_edges(dt) <= hi)],
                               rng.integers(lo, hi, n, endpoint=True).astype(dt)])
    return np.concatenate([float_edges(dt), random_values(dt, n)])


def mixed(R, target, t):
    """t with every other type, each side: NumPy's promotion and values."""
    problems = []
    for u in TYPES:
        for x, y in ((t, u), (u, t)):
            if x is y and x is not t:
                continue
            a, b = mixed_values(x["dt"], 300), mixed_values(y["dt"], 300)
            n = min(len(a), len(b))
            a, b = rng.permutation(a)[:n], rng.permutation(b)[:n]
            for op in MIXED_OPS:
                prog = "c = a %s b" % op
                try:
                    np.result_type(a.dtype, b.dtype)
                except Exception:
                    continue  # NumPy refuses: tests/t_types.py's
                want = UFUNC[op](a, b)
                try:
                    got = R.run(prog, {"a": a, "b": b}, target)["c"]
                except RL.JitcError as e:
                    problems.append("%s with a %s, b %s: %s" % (prog, x["name"], y["name"], e))
                    continue
                idx = compare(got, want)
                if idx is None:
                    problems.append("%s with a %s, b %s: dtype %s, NumPy's %s" % (
                        prog, x["name"], y["name"], got.dtype, want.dtype))
                elif len(idx):
                    j = idx[0]
                    problems.append("%s with a %s, b %s: %d differ, e.g. (%r, %r) -> %r, want %r" % (
                        prog, x["name"], y["name"], len(idx), a[j], b[j], got[j], want[j]))
    tag = "%s.mixed.%s" % (target, t["name"])
    if problems:
        fail(tag, "; ".join(problems[:6]) + (" (%d in all)" % len(problems)))
    else:
        ok(tag)


def cast_sources(dt):
    if dt == np.bool_:
        return np.array([False, True])
    if dt.itemsize <= 2:
        return every_value(dt)
    v = [edges(dt), random_values(dt, 20000)]
    if is_float(dt):
        # around every integer type's ends, and the 16-bit floats' ties
        ends = []
        for u in TYPES:
            if is_int(u["dt"]):
                ii = np.iinfo(u["dt"])
                for e in (float(ii.min), float(ii.max) + 1.0):
                    ends += [e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf), e - 0.5, e + 0.5]
        ends += [-0.99, 0.99, -1.0, 65519.99, 65520.0, 65504.0, 1 + 2.0**-11, 1 + 2.0**-11 + 2.0**-30,
                 1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 2.0**-8 + 2.0**-40, 1 + 3 * 2.0**-8 - 2.0**-40,
                 2.0**-25, 2.0**-25 + 2.0**-40, 2.0**-24 * 1.5, 2.0**-133, 2.0**-134, 1e-40, 1e39,
                 3.3961e38, 3.3895e38]
        v.append(np.array(ends, dtype=np.float64).astype(dt))
    if is_int(dt):
        big = [1 << 24, (1 << 24) + 1, (1 << 24) + (1 << 16) + 1, (1 << 53) + (1 << 45) + (1 << 29) + 1,
               65519, 65520, 65536, (1 << 31) + 1]
        ii = np.iinfo(dt)
        v.append(np.array([x for x in big if ii.min <= x <= ii.max] +
                          [-x for x in big if ii.min <= -x <= ii.max], dtype=dt))
    return np.concatenate(v)


def cast_expect(src, dst):
    """NumPy's (ml_dtypes') astype, with jitc's saturating float -> int."""
    want = src.astype(dst)
    if is_float(src.dtype) and is_int(dst):
        ii = np.iinfo(dst)
        f = src.astype(np.float64)
        t = np.trunc(np.where(np.isnan(f), 0.0, f))
        want[np.isnan(f)] = 0
        want[t >= float(ii.max) + 1] = ii.max  # 2^63 and 2^64 exactly
        want[t < ii.min] = ii.min
    return want


def casts(R, target, t):
    src = cast_sources(t["dt"])
    problems = []
    for u in TYPES:
        prog = "c = %s(a)" % u["short"]
        try:
            got = R.run(prog, {"a": src}, target)["c"]
        except RL.JitcError as e:
            problems.append("%s: %s" % (prog, e))
            continue
        want = cast_expect(src, u["dt"])
        idx = compare(got, want, 0, isnan_any(src))
        if idx is None or len(idx):
            if idx is None:
                problems.append("%s: dtype %s" % (prog, got.dtype))
                continue
            j = idx[0]
            problems.append("%s: %d differ, e.g. %r (bits %s) -> %r, want %r" % (
                prog, len(idx), src[j], hex(int(bits_view(src)[j])), got[j], want[j]))
        if is_float(u["dt"]) and u["dt"].itemsize == 2 and u is not t:
            nan = np.isnan(got.astype(np.float32))
            quiet = 0x0200 if u["dt"] == np.float16 else 0x0040
            if np.any(bits_view(got)[nan] & quiet == 0):
                problems.append("%s: a NaN result is not quiet" % prog)
    tag = "%s.cast.from_%s" % (target, t["name"])
    if problems:
        fail(tag, "; ".join(problems[:5]))
    else:
        ok(tag)


# ---- reductions ----

REDUCTIONS = [o["name"] for o in OPS if o["kind"] == "REDUCE"]


def reduce_data(dt, n, nan):
    if is_int(dt):
        return np.concatenate([int_edges(dt), random_values(dt, n)])
    if nan:
        return np.concatenate([random_values(dt, n), float_edges(dt)])
    # Values whose float64 sums are exact (a multiple of 2^-27, under 2^10):
    # the sum rounds once, to the value the model below computes.
    v = (rng.standard_normal(n) * rng.choice([0.01, 1, 100], n)).astype(dt)
    v = v[(np.abs(v.astype(np.float64)) >= 2.0**-14) & (np.abs(v.astype(np.float64)) < 1000)]
    return np.concatenate([v, np.array([0.0, -0.0], dt)])


def reduce_expect(op, a):
    dt = a.dtype
    if op in ("sum", "prod") and is_int(dt):
        acc = np.uint64 if dt.kind == "u" else np.int64
        return getattr(np, op)(a, dtype=acc)
    if op in ("sum", "mean") and is_float(dt):
        import math
        f = a.astype(np.float64)
        s = math.fsum(f) if not np.any(~np.isfinite(f)) else np.sum(f)
        s = np.float64(s) / len(a) if op == "mean" else np.float64(s)
        return np.array([s]).astype(dt)[0]
    if op == "prod" and is_float(dt):
        return np.array([np.prod(a.astype(np.float64))]).astype(dt)[0]
    if op == "mean":
        return np.mean(a.astype(np.float64))
    return {"min": np.min, "max": np.max, "any": np.any, "all": np.all, "argmin": np.argmin,
            "argmax": np.argmax}[op](a)


def same_value(got, want, op):
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype != w.dtype:
        return False
    if op == "mean" and g.dtype == np.float64 and np.isfinite(w):
        # float64 sums in a target's own order: n + 8 epsilons (language.md)
        return abs(float(g) - float(w)) <= (3000 + 8) * 2.0**-52 * max(1.0, abs(float(w)))
    if is_float(g.dtype):
        gf, wf = float(g), float(w)
        if np.isnan(gf) or np.isnan(wf):
            return np.isnan(gf) and np.isnan(wf)
        if op == "prod":  # products accumulate in float32: within one unit
            return bool(compare(g.reshape(1), w.reshape(1), 1).size == 0)
        if op in ("min", "max"):  # either zero of a tie between 0.0 and -0.0
            return gf == wf
        return bits_view(g.reshape(1))[0] == bits_view(w.reshape(1))[0]
    if op == "mean":  # float64 sums in a target's own order: n + 8 epsilons (language.md)
        return abs(float(g) - float(w)) <= (3000 + 8) * 2.0**-52 * max(1.0, abs(float(w)))
    return g == w


def reductions(R, target, t):
    dt = t["dt"]
    problems = []
    for nan in ((False, True) if is_float(dt) else (False,)):
        a = reduce_data(dt, 3000, nan)
        if not nan and is_float(dt):
            a = rng.permutation(a)
        for op in REDUCTIONS:
            if op == "prod" and is_float(dt) and not nan:
                x = (1 + rng.standard_normal(len(a)) / 64).astype(dt)[:300]
            elif op == "prod" and is_float(dt):
                continue
            else:
                x = a
            prog = "s = %s(a)" % op
            try:
                got = R.run(prog, {"a": x}, target)["s"]
            except RL.JitcError as e:
                problems.append("%s: %s" % (prog, e))
                continue
            want = reduce_expect(op, x)
            if not same_value(got, want, op):
                problems.append("%s%s: %r (%s), want %r (%s)" % (
                    prog, " with NaN" if nan else "", got, np.asarray(got).dtype, want,
                    np.asarray(want).dtype))
            if op not in ("mean",) and np.asarray(got).dtype != getattr(np, op)(x).dtype:
                problems.append("%s: dtype %s, NumPy's %s" % (prog, np.asarray(got).dtype,
                                                              getattr(np, op)(x).dtype))
    tag = "%s.reduce.%s" % (target, t["name"])
    if problems:
        fail(tag, "; ".join(problems[:5]))
    else:
        ok(tag)


# ---- the contract's choices, one by one ----

def named(R, target):
    f16, u16 = np.float16, np.uint16

    def one(tag, prog, ins, want_bits=None, want=None):
        try:
            got = R.run(prog, ins, target)
        except RL.JitcError as e:
            fail(tag, "%s: %s" % (prog, e))
            return
        g = got.get("c", got.get("s"))
        if want_bits is not None:
            gb = [int(x) for x in np.atleast_1d(bits_view(np.asarray(g)))]
            if gb != list(want_bits):
                fail(tag, "%s: bits %s, want %s" % (prog, [hex(x) for x in gb],
                                                   [hex(x) for x in want_bits]))
                return
        if want is not None and not np.array_equal(np.asarray(g), np.asarray(want)):
            fail(tag, "%s: %r, want %r" % (prog, g, want))
            return
        ok(tag)

    d = np.array
    one(target + ".named.f64_to_f16_direct", "c = f16(a)",
        {"a": d([1 + 2.0**-11 + 2.0**-30, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 65519.99, 65520.0])},
        [0x3c01, 0x3c00, 0x3c02, 0x7bff, 0x7c00])
    one(target + ".named.f64_to_bf16_through_f32", "c = bf16(a)",
        {"a": d([1 + 2.0**-8 + 2.0**-40, 1 + 3 * 2.0**-8 - 2.0**-40, 1 + 2.0**-8 + 2.0**-20])},
        [0x3f80, 0x3f82, 0x3f81])
    one(target + ".named.i64_to_bf16_through_f32", "c = bf16(a)",
        {"a": d([2**53 + 2**45 + 2**29 + 1, 2**24 + 2**16 + 1], dtype=np.int64)},
        [0x5a01, 0x4b80])
    one(target + ".named.i64_to_f32_one_rounding", "c = f32(a)",
        {"a": d([2**53 + 2**29 + 1], dtype=np.int64)}, None, d([2.0**53 + 2.0**30], np.float32))
    one(target + ".named.f32_to_f16_subnormal_ties", "c = f16(a)",
        {"a": d([2.0**-25, 2.0**-25 * 3, 2.0**-24 * 1.5, 2.0**-25 + 2.0**-40], dtype=np.float32)},
        [0x0000, 0x0002, 0x0002, 0x0001])
    one(target + ".named.f16_nan_quiet_signed", "c = f16(a)",
        {"a": d([0x7f800001, 0xff800001, 0x7fa02000], dtype=np.uint32).view(np.float32)},
        [0x7e00, 0xfe00, 0x7f01])
    one(target + ".named.f16_widen_quiet", "c = f32(a)",
        {"a": d([0x7c01, 0xfd55], dtype=u16).view(f16)}, [0x7fc02000, 0xffeaa000])
    one(target + ".named.float_to_int_saturates", "c = i8(a)",
        {"a": d([np.nan, 300.0, -300.0, 127.9, -128.9, -129.0], np.float64)}, None,
        d([0, 127, -128, 127, -128, -128], np.int8))
    one(target + ".named.negative_to_unsigned_saturates", "c = u64(a)",
        {"a": d([-0.9, -1.0, -1e30, 1.8446744073709552e19, np.inf], np.float64)}, None,
        d([0, 0, 0, 2**64 - 1, 2**64 - 1], np.uint64))
    one(target + ".named.u64_max_unsigned", "s = max(a)",
        {"a": d([1, 2**63, 5, 2**63 - 1], np.uint64)}, None, np.uint64(2**63))
    one(target + ".named.u64_argmin_unsigned", "s = argmin(a)",
        {"a": d([2**64 - 1, 2**63, 7, 2**63 - 1], np.uint64)}, None, np.int64(2))
    one(target + ".named.f16_sum_rounds_once", "s = sum(a)",
        {"a": np.ones(3000, f16)}, None, f16(3000))
    one(target + ".named.bf16_sum_rounds_once", "s = sum(a)",
        {"a": np.ones(3000, BF16)}, None, np.array([3000.0]).astype(BF16)[0])
    one(target + ".named.u8_sum_is_u64", "s = sum(a)",
        {"a": np.full(1000, 255, np.uint8)}, None, np.uint64(255000))
    one(target + ".named.u64_sum_wraps", "s = sum(a)",
        {"a": np.full(4, 2**63 + 1, np.uint64)}, None, np.uint64(4))
    # equal operands give y, C99's rule (NumPy 2.5's; NumPy 2.4 gives x)
    one(target + ".named.f16_step", "c = nextafter(a, b)",
        {"a": d([1, 0, 0, -0.0, 65504, np.inf, -0.0], f16),
         "b": d([2, -0.0, 1, 1, np.inf, 0, 0], f16)},
        [0x3c01, 0x8000, 0x0001, 0x0001, 0x7c00, 0x7bff, 0x0000])
    one(target + ".named.bf16_step", "c = nextafter(a, b)",
        {"a": d([1, 0, 0, -0.0], BF16), "b": d([2, -0.0, 1, 0], BF16)},
        [0x3f81, 0x8000, 0x0001, 0x0000])
    one(target + ".named.f16_constants", "c = a * f16(0.1) + f16(65519.99)",
        {"a": d([0, 1, 2], f16)}, None, d([0, 1, 2], f16) * f16(0.1) + f16(65519.99))
    one(target + ".named.u64_constant_bits", "c = a + (u64(1) << u64(63))",
        {"a": d([0, 1], np.uint64)}, None, d([2**63, 2**63 + 1], np.uint64))


def supported(R, target, t):
    """None if target runs t, else why not.  Tried in a child process first
    (the command line): a target that meets a type it lacks may stop the
    process that tries."""
    import subprocess
    jitc = os.environ.get("JITC", os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc"))
    r = subprocess.run([jitc, "-t", target, "-q", "--dtype", "a=" + t["name"], "-n", "4",
                        "--in", "a=arange", "c = a + a"], capture_output=True, text=True)
    if r.returncode:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        return "exit %d: %s" % (r.returncode, last)
    a = np.arange(4).astype(t["dt"])
    try:
        got = R.run("c = a + a", {"a": a}, target)["c"]
        return None if got.dtype == t["dt"] else "gives %s" % got.dtype
    except RL.JitcError as e:
        return str(e)


def main():
    """Each target on every type: a type it cannot run here is a failure, or
    a skip where the target is not on this machine, and the casts and mixed
    pairs involving it are left out."""
    global TYPES
    R = Runner()
    table = TYPES
    for target in os.environ.get("JITC_TARGETS", "interp").split():
        lacks = set()
        for t in NEW:
            why = supported(R, target, t)
            if why:
                lacks.add(t["name"])
                if why.startswith("exit 69:"):
                    print("skip types_interp.%s.%s: the %s target is not here (%s)" % (
                        target, t["name"], target, why))
                else:
                    fail("%s.%s.runs" % (target, t["name"]), why)
        TYPES = [t for t in table if t["name"] not in lacks]
        for t in TYPES[5:]:
            ops_of_type(R, target, t)
            mixed(R, target, t)
            reductions(R, target, t)
        for t in TYPES:
            if len(TYPES) > 5:
                casts(R, target, t)
        if not lacks:
            named(R, target)
        TYPES = table
    R.close()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
