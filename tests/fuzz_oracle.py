"""fuzz_oracle.py -- the NumPy oracle of tests/fuzz_diff.py: what NumPy 2
computes for a program of the fuzzer, or that it refuses.

The oracle (class Oracle) evaluates a program with NumPy 2 on the
same inputs: arrays are ndarrays of their dtype, weak values Python scalars
(so NEP 50 applies as NumPy applies it), typed scalars arrays of their
dtype, functions NumPy's ufuncs, `let` Python variables, statements whole
arrays in order (the same as per element for element-wise programs);
`a op= e` is NumPy's in-place ufunc with same-kind casting; assignment
converts like `o[...] = value`.  Expressions of weak values only are
Python's (ints unbounded, `2 ** -1 == 0.5`, floats in float64, complex
numbers Python's complex arithmetic; what Python raises for there, `1j / 0`,
`1j < 2j`, `1j // 2`, is an error).

Complex (docs/language.md, "Complex numbers"): NumPy's loops; real, imag,
conjugate and angle as np.real, np.imag, np.conjugate and np.angle
(arctan2(0, x) of a real x), complex(re, im) of its parts in the float
type sqrt computes their common type in (then float32 at least); what NumPy
has no complex loop for (the real_only rows of ops.h, and fabs, which
NumPy names apart from abs) and a conversion of complex to a real type
other than bool are expected refusals.  The sign of a NaN part that
arithmetic makes is unspecified as a float's is; a complex function of such
a value (C99's catanh(nan+infj) is copysign(0, nan)+pi/2j) is not compared.

Where docs/language.md ("Differences from NumPy") documents a deliberate
difference, the oracle applies jitc's rule: float->int saturates and NaN
gives 0 (casts and assignments); an integer ** a negative exponent that
arrives at run time gives 0 or +-1; reciprocal of an int is 0 except for
+-1; `x ** 2`, `x ** 0.5`, `x ** -1` take the fast paths for a weak
exponent of that value; floor/ceil/trunc of ints keep the type; fmod of ints by 0 or -1 is 0; clip is minimum(maximum());
minimum, maximum, fmin, fmax (and so clip) of equal operands (0.0 and
-0.0) give the second, computed by that rule and not taken from NumPy,
whose choice of zero depends on its SIMD path.
What NumPy refuses (bool - bool, sign of bool, bfloat16 with int16 or
float16, which np.result_type refuses although a ufunc would find a
float64 loop, a weak int the other type cannot hold, a same-kind violation)
is an expected refusal.  A bfloat16 result is computed in float32 on the
operands widened exactly and rounded once (ml_dtypes' loops, but for its
sign of -0.0); minimum, clip and where take a Python float next to bfloat16
as the ufuncs do (float32; np.where says float64).  fma is computed exactly
(rationals), as NumPy has none; of a 16-bit float, in float32 and rounded
again.  The inputs and their edge values are fuzz_data.py's: every type's
ends, subnormals, NaN of both signs, overflow thresholds.  The generator avoids (and the oracle skips,
counted as "skipped as undefined") what neither defines: a weak integer
expression beyond int64, weak division by zero and other cases where
Python raises.  Weak bools are Python's bools: arithmetic on them gives
Python ints (`True + True == 2`, `~True == -2`, `-True == -1`,
`True ** False == 1`), and `&`, `|`, `^` of two weak bools stay bool.

A statement `NAME == expr` (or `NAME[i] == expr`) where NAME is no name
the program knows, an assignment mistyped, is refused with exit 65 and "did
you mean '='" (the generator writes one now and then; `(NAME == expr)` and
`out = NAME == ...` compute the comparison).  A name of the language (a
constant, `i`, a function, a cast, a reduction) bound on the command line
with -D or --in is the caller's value wherever the program does not call
it (shadow() renames an input or scalar so now and then).

Where NumPy raises (OverflowError for a weak int out of range, also as the
operand of a cast to int32 as np.int32(2**40) raises, an integer to
a negative literal power, same-kind violations, bitwise operations on a
float), the expected result is a refusal: exit 65 (64 is accepted where a
weak -D scalar is involved, which the CLI checks at run time).  A comparison
of an int array with a Python int beyond its range is computed exactly by
NumPy 2, and jitc documents an error for such a literal: either is accepted.
np.power is given its operands as NumPy sees them: a weak operand as the
Python scalar, a strong value that NumPy holds as a scalar (a typed scalar,
a function or cast of weak values: f64(0.5), sqrt(0.25)) as a NumPy
scalar, arrays as arrays; NumPy 2 takes sqrt for a scalar exponent 0.5
(power(-inf, 0.5) is NaN, power(-0.0, 0.5) is -0.0) and pow for an array
of exponents, as docs/language.md documents; `**` of scalars only is
NumPy's scalar `**`, C's pow, except for the fast paths of a weak
exponent, which jitc takes for any expression; for a strong scalar exponent
0.5 and a scalar base -inf or -0.0 ((-inf) ** f64(0.5): NumPy's pow gives
inf, jitc's sqrt rule NaN) the reference does not say, and the program is
skipped as undefined.

"""
import ast
import math
import re

import numpy as np

import exact
import fuzz_vocab
from fuzz_data import nan_keep
from fuzz_vocab import apply, iscomplex, isfloat, isint, weak

np.seterr(all="ignore")

# The vocabulary (fuzz_vocab.py): the types and operators are `jitc --list`'s.
V = fuzz_vocab.load(fuzz_vocab.jitc_binary())
NP = V.np
strongify = V.strongify
CINEXACT = V.complex_inexact  # not exactly rounded on complex operands
FUNCS = V.funcs
CASTS = V.casts


def result_type(rule, ts, name=None):
    """The type of an operation, or None when the checker must refuse it
    (fuzz_vocab.Vocab.result_type: NumPy's)."""
    return V.result_type(rule, ts, name)


# ---------------------------------------------------------------------------
# The NumPy oracle
# ---------------------------------------------------------------------------

class Refusal(Exception):
    """NumPy raises (or jitc documents an error): jitc must refuse the program.
    need: text jitc's message must hold (then only exit 65 will do)."""

    def __init__(self, why, need=None):
        super().__init__(why)
        self.need = need


# A statement that only compares a bare name no one defined (an input of
# ones on the command line): `=` was meant (check.c, eq_typo).
EQ_STATEMENT = re.compile(r"^([A-Za-z_]\w*)(\[i\])?\s*==(?!=)")
# A statement's target: `NAME =`, `NAME[i] +=`, `let NAME =`.
ASSIGNED = re.compile(r"^(?:let\s+)?([A-Za-z_]\w*)(?:\[i\])?\s*(?:[-+*/%&|^<>]{0,3})=(?!=)")
class Undefined(Exception):
    """Python/NumPy and jitc's documentation do not define one result: the
    generator avoids the case (the program is skipped and counted)."""


DTYPES = set(NP.values())
INT_MIN, INT_MAX = V.lo, V.hi  # by NumPy dtype, for the integer types
UFUNC = {f: u for f, u in V.ufunc.items() if u is not None}
REAL_ONLY = V.real_only  # refused on complex (NumPy has no loop)
BIN_UFUNC = fuzz_vocab.BIN_UFUNC
CMP_UFUNC = fuzz_vocab.CMP_UFUNC


def promote(*args):
    """np.result_type of the operands, or Refusal where NumPy refuses to
    promote them (bfloat16 and int64: ml_dtypes defines few promotions; a
    ufunc would still find a float64 loop by casting, but jitc refuses what
    np.result_type refuses, as docs/language.md says)."""
    try:
        return np.result_type(*args)
    except (TypeError, OverflowError) as ex:
        raise Refusal(str(ex))


def promote_weak(*xs):
    """The type of minimum, clip and where: the strong operands promoted
    (np.result_type), then each weak one taken as NumPy's ufuncs take it.
    np.where differs from the ufuncs in one place, which jitc does not
    follow: next to bfloat16 a Python float is float64 there, float32 in
    every ufunc (ml_dtypes' loops)."""
    strong = [x for x in xs if not is_weak(x)]
    if not strong:  # where(c, 100, 2): the Python scalars' own types
        return promote(*[weak_default(x, 1) for x in xs])
    t = promote(*strong)
    for w in sorted((x for x in xs if is_weak(x)), key=lambda x: (type(x) is not bool,
                                                                 type(x) is not int,
                                                                 type(x) is complex)):
        try:
            t = loop_dtype(np.maximum, np.zeros(0, t), w)
        except (OverflowError, TypeError) as ex:
            raise Refusal(str(ex))
    return t


def loop_dtype(ufunc, *args):
    """The dtype NumPy's ufunc gives for these operands (weak ones as the
    Python scalars they are): its loop's, by a call on no elements; raises
    as NumPy raises (OverflowError for a weak int the type cannot hold)."""
    return ufunc(*[a if is_weak(a) else a[:0] for a in args]).dtype


def least_float(t):
    """The float type a float function computes an operand of type t in:
    NumPy's loop choice (int8: float16, int16: float32, int32: float64)."""
    return np.sqrt(np.zeros(0, t)).dtype


def float_rule_type(xs):
    """The type of a float function NumPy lacks (fma), as its loop would
    be chosen (type.c, R_FLOAT): the operands' common type, weak ones taken
    as NEP 50 takes them but unchecked (a Python float makes an integer
    type float64 and bfloat16 float32, as NumPy's add; a Python int makes
    bool int64); a float type stays, else the least float type of each
    operand (a weak one: of the common type)."""
    t = promote(*[a for a in xs if not is_weak(a)])
    for w in (a for a in xs if is_weak(a)):
        if isinstance(w, float):
            t = loop_dtype(np.add, np.zeros(0, t), 0.5)
        elif type(w) is int and t == np.bool_:
            t = np.dtype(np.int64)
    if isfloat(t):
        return t
    return promote(*[least_float(t if is_weak(a) else a.dtype) for a in xs])


def exact_reference(ref):
    """A float function NumPy lacks, by its reference in tests/exact.py
    (docs/tutorial.md's erf), typed by ops.h's float rule: the least float
    type holding each array operand (Python scalars alone: float64), a
    16-bit float computed in float32 and rounded once."""
    def f(*args):
        arrays = [np.asarray(a) for a in args if not isinstance(a, (bool, int, float))]
        t = np.result_type(*[least_float(a.dtype) for a in arrays]) if arrays else \
            np.dtype(np.float64)
        c = np.dtype(np.float32) if t.itemsize < 4 else t
        return np.asarray(ref(*[np.asarray(a).astype(c) for a in args])).astype(t)
    return f


# A float function of the vocabulary that NumPy lacks: its reference of the
# same name in tests/exact.py (fma has its own case in Oracle.call).
for _f, (_, _rule) in FUNCS.items():
    _ref = getattr(exact, V.listing["aliases"].get(_f, _f), None)
    if _f not in UFUNC and _rule == "float" and callable(_ref):
        UFUNC[_f] = exact_reference(_ref)


def is_weak(v):
    return isinstance(v, (bool, int, float, complex))


def weak_default(v, n):
    """A weak value made strong (a function's operand, a new output): its
    Python type as NumPy converts it (bool, int64, float64)."""
    if isinstance(v, bool):
        return np.full(n, v, np.bool_)
    if isinstance(v, int):
        if not -2**63 <= v < 2**63:
            raise Undefined("a weak integer beyond int64")
        return np.full(n, v, np.int64)
    return np.full(n, v, np.complex128 if isinstance(v, complex) else np.float64)


def jitc_cast(v, dt):
    """docs/language.md "Casts": NumPy's conversions, except that float to
    int saturates and NaN gives 0 (NumPy: undefined)."""
    dt = np.dtype(dt)
    if v.dtype == dt:
        return v.copy()
    if dt == np.bool_:
        return v != 0
    if iscomplex(v.dtype) and not iscomplex(dt):
        # NumPy discards the imaginary part with a ComplexWarning: refused
        raise Refusal("complex %s to %s discards the imaginary part" % (v.dtype, dt))
    if isfloat(v.dtype) and isint(dt):
        f = v.astype(np.float64)  # exact, from every float type
        lo, hi = INT_MIN[dt], INT_MAX[dt]
        below, above = float(lo - 1), float(hi + 1)  # -129.0, 128.0 for int8
        out = np.zeros(f.shape, dt)
        ok = np.isfinite(f) & (f > below) & (f < above)
        out[ok] = np.trunc(f[ok]).astype(dt)
        out[~np.isnan(f) & (f >= above)] = hi
        out[~np.isnan(f) & (f <= below)] = lo
        return out
    # NumPy's (ml_dtypes' for bfloat16: an integer or float64 through
    # float32, as jitc rounds it)
    return v.astype(dt)


def check_dtype(r):
    if r.dtype not in DTYPES:
        raise Refusal("NumPy's result would be %s" % r.dtype)
    return r


MINMAX = {"minimum", "maximum", "fmin", "fmax"}


def equal_gives_y(r, x, y):
    """minimum, maximum, fmin, fmax and clip's steps, where x == y (0.0 and
    -0.0): y, as docs/language.md defines it (NumPy's choice of zero depends
    on its SIMD path, so the oracle does not take NumPy's)."""
    if not isfloat(r.dtype):
        return r
    yv = np.full(r.shape, y, r.dtype) if is_weak(y) else y.astype(r.dtype)
    return np.where(np.asarray(x == y), yv, r)


def int_power(b, e):
    """Integer ** as jitc defines it: wraps; a negative exponent at run time
    gives the integer part of 1/b**|e| (NumPy raises there)."""
    neg = e < 0
    r = np.power(b, np.where(neg, 0, e).astype(e.dtype))
    one = np.ones_like(r)
    odd = (e % 2) != 0
    r = np.where(neg, np.where(b == 1, one, np.where(b == -1, np.where(odd, -one, one),
                                                     np.zeros_like(r))), r)
    return r


class Oracle:
    """Evaluates a program with NumPy 2: whole-array statements in order."""

    def __init__(self, n, arrays, scalars):
        self.n = n
        self.env = {"pi": math.pi, "inf": math.inf, "nan": math.nan, "True": True,
                    "False": False, "true": True, "false": False,
                    "i": np.arange(n, dtype=np.int64)}
        for name, a in arrays.items():
            self.env[name] = a.copy()
        self.env.update(scalars)
        self.arrays = set(arrays)
        self.written = []
        self.special = {}  # output -> elements whose operands are all special values
        self.may_refuse = False
        self.unspec = {}   # id(array) -> (array, value unspecified, NaN sign unspecified)
        self.kid_values = {}
        # id -> array of the strong values that are NumPy scalars in NumPy's
        # evaluation (typed scalars, functions and casts of weak values):
        # np.power takes sqrt for such an exponent 0.5, as for a weak one.
        self.scalars = {id(v): v for v in scalars.values() if not is_weak(v)}
        self.signfree = {}  # output -> (value unspecified, NaN sign unspecified)

    def run(self, prog):
        src = []
        self.lets = set()
        known = set(self.env)  # the inputs, scalars and constants, then each target
        for line in prog.splitlines():
            s = line.strip()
            m = EQ_STATEMENT.match(s)
            if m and m.group(1) not in known:
                raise Refusal("a statement that only compares a new name: %r" % s,
                              need="did you mean '='")
            t = ASSIGNED.match(s)
            if t:
                known.add(t.group(1))
            if s.startswith("let "):
                s = s[4:]
                self.lets.add(s.split("=")[0].strip())
            src.append(s)
        tree = ast.parse("\n".join(src))
        for st in tree.body:
            self.statement(st)
        return {k: self.env[k] for k in self.written}

    def strong(self, v):
        return weak_default(v, self.n) if is_weak(v) else v

    def statement(self, st):
        if isinstance(st, ast.Expr):
            st = ast.Assign(targets=[ast.Name(id="out")], value=st.value)
        if isinstance(st, ast.AugAssign):
            name = self.target(st.target)
            a = self.env[name]
            b = self.ev(st.value)
            r = self.binop(type(st.op), a, b)
            val = self.masks(a)[0] | self.masks(b)[0]
            self.mark(r, val, np.isnan(r) if isfloat(r.dtype) or iscomplex(r.dtype)
                      else np.zeros(self.n, bool))
            if not np.can_cast(r.dtype, a.dtype, "same_kind"):
                raise Refusal("same-kind: %s into %s" % (r.dtype, a.dtype))
            self.store(name, jitc_cast(r, a.dtype), r)
            self.special.pop(name, None)
            return
        name = self.target(st.targets[0])
        self.last_args = None
        v = self.ev(st.value)
        self.special[name] = None
        if isinstance(st.value, (ast.Call, ast.BinOp)) and self.last_args:
            self.special[name] = np.logical_and.reduce(
                [special_values(self.strong(a)) for a in self.last_args])
        if name in self.lets:
            self.env[name] = v  # a let: weak stays weak (and keeps its masks)
            return
        old = self.env.get(name)
        if isinstance(old, np.ndarray):
            if is_weak(v):
                if isinstance(v, int) and not isinstance(v, bool) and isint(old.dtype) \
                        and not INT_MIN[old.dtype] <= v <= INT_MAX[old.dtype]:
                    raise Refusal("Python integer %d out of bounds for %s" % (v, old.dtype))
                v = self.strong(v)
            self.store(name, jitc_cast(v, old.dtype), v)
        else:
            self.store(name, self.strong(v).copy(), v)

    def store(self, name, v, src=None):
        if src is not None and not is_weak(src):
            val, nan = self.masks(src)
            self.mark(v, val, nan if isfloat(v.dtype) or iscomplex(v.dtype)
                      else np.zeros(self.n, bool))
        self.signfree[name] = self.masks(v)
        self.env[name] = v
        if name not in self.written:
            self.written.append(name)

    def target(self, t):
        if isinstance(t, ast.Subscript):
            t = t.value
        return t.id

    def masks(self, v):
        """(value unspecified, NaN sign unspecified) element masks of v."""
        if is_weak(v) or id(v) not in self.unspec:
            z = np.zeros(self.n, bool)
            return z, z
        return self.unspec[id(v)][1:]

    def mark(self, r, val, nan):
        if not is_weak(r):
            self.unspec[id(r)] = (r, val, nan)
        return r

    def ev(self, e):
        """The value of e, with masks of the elements whose value or NaN sign
        the reference leaves unspecified: IEEE 754 and LLVM do not fix the
        sign of a NaN made by arithmetic, so that a NaN reaching copysign's
        sign argument makes the result's sign unspecified, and everything
        computed from it."""
        r = self.ev1(e)
        if is_weak(r):
            return r
        isnan = np.isnan(r) if isfloat(r.dtype) or iscomplex(r.dtype) else \
            np.zeros(self.n, bool)
        kids = [e.operand] if isinstance(e, ast.UnaryOp) else \
            [e.left, e.right] if isinstance(e, ast.BinOp) else \
            [e.left, e.comparators[0]] if isinstance(e, ast.Compare) else \
            e.args if isinstance(e, ast.Call) else []
        if not kids:
            return r
        if all(is_weak(v) or self.is_scalar(v) for v in
               (self.kid_values.get(id(k)) for k in kids)):
            self.scalars[id(r)] = r
        ms = [self.masks(self.kid_values[id(k)]) if id(k) in self.kid_values else
              self.masks(None) for k in kids]
        val = np.logical_or.reduce([m[0] for m in ms])
        name = e.func.id if isinstance(e, ast.Call) else None
        if name and any(iscomplex(np.asarray(self.kid_values.get(id(k), 0)).dtype)
                        for k in kids):
            if name in CINEXACT:
                # C99's complex functions give a zero or an infinity the
                # sign of a NaN part (catanh(nan+infj) is copysign(0,
                # nan)+pi/2j): a NaN whose sign is not promised makes the
                # whole value so
                val = val | np.logical_or.reduce([m[1] for m in ms])
            name = "of complex"  # abs, angle, real, imag: a NaN whose sign is not promised
        if isinstance(e, ast.UnaryOp) or name in CASTS and isfloat(r.dtype) or \
                name in NAN_KEEP.get(str(r.dtype), ()):
            nan = ms[0][1] | (isnan & ~self.was_nan(kids[0], r))
        elif name in ("abs", "absolute", "fabs") or isinstance(e, ast.Compare) or \
                name in CASTS or name in ("isnan", "isinf", "isfinite"):
            nan = np.zeros(self.n, bool)
        elif name == "copysign":
            val = val | ms[1][1]
            nan = isnan & ms[1][1]
        elif name == "where":
            c = self.kid_values[id(kids[0])]
            c = bool(c) if is_weak(c) else c.astype(bool)
            val = ms[0][0] | np.where(c, ms[1][0], ms[2][0])
            nan = np.where(c, ms[1][1], ms[2][1]) | (isnan & ~self.was_nan(kids[1], r) &
                                                    ~self.was_nan(kids[2], r))
        else:
            nan = isnan
        return self.mark(r, val, nan)

    def is_scalar(self, v):
        return v is not None and not is_weak(v) and self.scalars.get(id(v)) is v

    def np_scalar(self, v):
        """The operand as NumPy sees it: a weak value the Python scalar, a
        NumPy scalar its (equal) first element, an array itself."""
        return v if is_weak(v) else v[0] if self.is_scalar(v) and self.n else v

    def was_nan(self, k, r):
        v = self.kid_values.get(id(k))
        if v is None:
            return np.zeros(self.n, bool)
        if is_weak(v):
            return np.full(self.n, isinstance(v, float) and math.isnan(v))
        return np.isnan(v) if isfloat(v.dtype) else np.zeros(self.n, bool)

    def ev_kid(self, k):
        v = self.ev(k)
        self.kid_values[id(k)] = v
        return v

    def ev1(self, e):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            return self.env[e.id]
        if isinstance(e, ast.Subscript):
            return self.env[e.value.id]
        if isinstance(e, ast.UnaryOp):
            return self.unary(type(e.op), self.ev_kid(e.operand))
        if isinstance(e, ast.BinOp):
            a, b = self.ev_kid(e.left), self.ev_kid(e.right)
            r = self.power(a, b, True) if isinstance(e.op, ast.Pow) else \
                self.binop(type(e.op), a, b)
            self.last_args = [a, b]
            return r
        if isinstance(e, ast.Compare):
            a, b = self.ev_kid(e.left), self.ev_kid(e.comparators[0])
            op = type(e.ops[0])
            for w, o in ((a, b), (b, a)):
                if isinstance(w, int) and not isinstance(w, bool) and not is_weak(o) and \
                        isint(o.dtype) and not INT_MIN[o.dtype] <= w <= INT_MAX[o.dtype]:
                    # NumPy 2 compares an out-of-range Python int exactly;
                    # jitc documents an error for an int literal that does
                    # not fit the integer type it meets: either answer is
                    # accepted.
                    self.may_refuse = True
            if is_weak(a) and is_weak(b):
                if isinstance(a, complex) or isinstance(b, complex):
                    if op not in (ast.Eq, ast.NotEq):
                        raise Refusal("Python's complex numbers have no order")
                    return (a == b) == (op is ast.Eq)
                return bool(CMP_UFUNC[op](np.float64(a) if isinstance(a, float) else a,
                                          np.float64(b) if isinstance(b, float) else b))
            promote(a, b)  # no common type: bfloat16 and int16
            return CMP_UFUNC[op](a, b)
        if isinstance(e, ast.Call):
            args = [self.ev_kid(a) for a in e.args]
            r = self.call(e.func.id, args)
            self.last_args = args
            return r
        raise AssertionError(ast.dump(e))

    def unary(self, op, v):
        if isinstance(v, bool):
            v = int(v)  # a weak bool is Python's: ~True == -2, -True == -1, +True == 1
        if op is ast.Invert:
            if is_weak(v):
                if isinstance(v, (float, complex)):
                    raise Refusal("~ of a float")
                return ~v
            if isfloat(v.dtype) or iscomplex(v.dtype):
                raise Refusal("~ of a float")
            return np.invert(v)
        if not is_weak(v) and v.dtype == np.bool_:
            raise Refusal("unary minus or plus of bool")
        if op is ast.USub:
            if is_weak(v):
                r = -v
                if isinstance(r, int) and not -2**63 <= r < 2**63:
                    raise Undefined("weak integer beyond int64")
                return r
            return np.negative(v)
        return v

    def weak_binop(self, op, a, b):
        """Weak operands only: Python's arithmetic (docs/language.md), with
        floats computed in float64."""
        if isinstance(a, bool) and isinstance(b, bool) and \
                op in (ast.BitAnd, ast.BitOr, ast.BitXor):
            return bool(BIN_UFUNC[op](a, b))  # the one place Python's bools stay bool
        if isinstance(a, complex) or isinstance(b, complex):
            # Python's complex arithmetic (docs/language.md): what Python
            # raises for is an error in jitc too
            f = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
                 ast.Mult: lambda x, y: x * y, ast.Div: lambda x, y: x / y,
                 ast.Pow: lambda x, y: x ** y}.get(op)
            if f is None:
                raise Refusal("no %s for Python's complex numbers" % op.__name__)
            try:
                return complex(f(complex(a), complex(b)))
            except (ZeroDivisionError, OverflowError) as ex:
                raise Refusal("Python raises %s" % type(ex).__name__)
        if isinstance(a, float) or isinstance(b, float):
            if op in (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift):
                raise Refusal("bitwise operation on a float")
            x, y = np.float64(a), np.float64(b)
            if op in (ast.Div, ast.FloorDiv, ast.Mod) and y == 0:
                raise Undefined("Python raises ZeroDivisionError")
            if op is ast.Pow:
                if x < 0 and y != np.trunc(y):
                    raise Undefined("Python gives a complex number")
                try:
                    return float(a) ** float(b)
                except (OverflowError, ZeroDivisionError):
                    raise Undefined("Python raises in float **")
            return float(BIN_UFUNC[op](x, y))
        a, b = int(a), int(b)
        if op is ast.Div:
            if b == 0:
                raise Undefined("Python raises ZeroDivisionError")
            return float(np.float64(a) / np.float64(b)) if abs(a) < 2**53 and abs(b) < 2**53 \
                else a / b
        if op in (ast.FloorDiv, ast.Mod) and b == 0:
            raise Undefined("Python raises ZeroDivisionError")
        if op is ast.Pow:
            if b < 0:
                if a == 0:
                    raise Undefined("Python raises ZeroDivisionError")
                return a ** b  # Python: float(a) ** float(b), C's pow
            if abs(a) > 1 and b > 64:
                raise Undefined("weak integer beyond int64")
            r = a ** b
        elif op in (ast.LShift, ast.RShift):
            if b < 0 or b > 64:
                raise Undefined("Python shift count")
            r = a << b if op is ast.LShift else a >> b
        else:
            r = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b,
                 ast.FloorDiv: a // b if b else 0, ast.Mod: a % b if b else 0,
                 ast.BitAnd: a & b, ast.BitOr: a | b, ast.BitXor: a ^ b}[op]
        if not -2**63 <= r < 2**63:
            raise Undefined("weak integer beyond int64")
        return r

    def binop(self, op, a, b):
        if is_weak(a) and is_weak(b):
            if op is ast.Pow:
                return self.power(a, b, True)
            return self.weak_binop(op, a, b)
        if op is ast.Pow:
            return self.power(a, b, True)
        # NumPy decides what it refuses (bool - bool, bfloat16 with int16, a
        # weak int the other type cannot hold) and the type (bool // bool is
        # int8).  NumPy: x // 0 == 0, x % 0 == 0, INT_MIN // -1 == INT_MIN, as jitc.
        promote(a, b)
        try:
            r = apply(BIN_UFUNC[op], a, b)
        except (OverflowError, TypeError, ValueError) as ex:
            raise Refusal(str(ex))
        return check_dtype(np.asarray(r))

    def power(self, a, b, operator):
        """x ** y and power(x, y); the operator takes NumPy's ndarray fast
        paths for a weak exponent 2, 0.5 and -1, as jitc does."""
        if operator and is_weak(a) and is_weak(b):
            return self.weak_binop(ast.Pow, a, b)
        if is_weak(a) and is_weak(b):  # power() of weak operands: strong
            ta, tb = self.strong(a), self.strong(b)
        else:
            ta, tb = a, b
        promote(ta, tb)
        try:
            t = loop_dtype(np.power, ta, tb)  # bool ** bool is int8
        except (OverflowError, TypeError) as ex:
            raise Refusal(str(ex))
        if operator and not is_weak(a) and is_weak(b) and not isinstance(b, (bool, complex)):
            if b == 2:
                # NumPy's ndarray ** 2 is square of the array as it is
                # (bool ** 2 is int8, where power(bool, 2) is int64)
                return apply(np.square,
                             a if type(b) is int and a.dtype == np.bool_ else a.astype(t))
            if b == 0.5 and (isfloat(t) or iscomplex(t)):
                return apply(np.sqrt, a.astype(t))
            if b == -1 and (isfloat(t) or iscomplex(t)):
                return apply(np.reciprocal, a.astype(t))
        if isint(t):
            if is_weak(b) and b < 0:
                raise Refusal("Integers to negative integer powers are not allowed")
            try:
                x = np.asarray(ta, t) if is_weak(ta) else ta.astype(t)
                y = np.asarray(tb, t) if is_weak(tb) else tb.astype(t)
            except OverflowError as ex:
                raise Refusal(str(ex))
            return int_power(np.broadcast_to(x, (self.n,)), np.broadcast_to(y, (self.n,)))
        # NumPy 2 takes sqrt for a scalar exponent 0.5 (power(-inf, 0.5) is
        # NaN, power(-0.0, 0.5) is -0.0), pow for an array of exponents, as
        # jitc documents: a weak exponent goes in as the Python scalar it
        # is, and power() of weak operands only as NumPy scalars.
        x, y = self.np_scalar(a), self.np_scalar(b)
        if np.ndim(x) == 0 and np.ndim(y) == 0:
            # NumPy's scalar ** is C's pow ((-inf) ** f64(0.5) is inf), but
            # docs/language.md has jitc take sqrt for `x ** 0.5` of any
            # expression; for a strong exponent 0.5 it does not say which.
            if operator and not is_weak(b) and y == 0.5 and not iscomplex(np.asarray(x).dtype) \
                    and (x == -math.inf or (x == 0 and math.copysign(1, x) < 0)):
                raise Undefined("scalar ** strong scalar 0.5 at -inf or -0.0: sqrt or pow")
            r = apply(np.power, x, y) if not operator or V.name_of.get(
                np.result_type(x, y)) == "bfloat16" else x ** y
            return check_dtype(np.full(self.n, r, np.asarray(r).dtype))
        x = np.full(self.n, x, t) if np.ndim(x) == 0 else x.astype(t)
        y = y if np.ndim(y) == 0 else y.astype(t)
        return check_dtype(np.asarray(apply(np.power, x, y)))

    def call(self, name, args):
        if name in CASTS:
            v = args[0]
            dt = np.dtype(NP[CASTS[name]])
            if isinstance(v, int) and not isinstance(v, bool) and isint(dt) and \
                    -2**63 <= v < 2**63 and not INT_MIN[dt] <= v <= INT_MAX[dt]:
                raise Refusal("Python integer %d out of bounds for %s" % (v, dt))
            return jitc_cast(self.strong(v), dt)
        if name in REAL_ONLY and any(isinstance(a, complex) or (not is_weak(a) and
                                                                 iscomplex(a.dtype))
                                     for a in args):
            raise Refusal("%s has no loop for complex numbers" % name)
        if name in ("real", "imag", "complex", "conjugate", "conj", "angle"):
            return self.complex_call(name, args)
        if name in ("power", "pow"):
            return self.power(args[0], args[1], False)
        if all(is_weak(a) for a in args):
            args = [self.strong(a) for a in args]
        if name in ("copy", "ones_like"):  # numexpr's functions, NumPy's np.copy, np.ones_like
            return getattr(np, name)(args[0])
        if FUNCS.get(name, (0, ""))[1] == "float":
            # A float function takes a Python int as its float loop does
            # (copysign(-1, uint16) is float32): the strong operands alone
            # must promote (bfloat16 and int16 are refused).
            t = promote(*[a for a in args if not is_weak(a)])
        else:
            t = promote_weak(*(args[1:] if name == "where" else args))  # bfloat16, int16: refused

        def conv(v, dt):
            try:
                return np.full(self.n, v, dt) if is_weak(v) else v.astype(dt)
            except OverflowError as ex:
                raise Refusal(str(ex))
        if name in ("floor", "ceil", "trunc", "round"):
            v = args[0]
            if name == "round" and v.dtype == np.bool_:  # np.round: rint's float16
                return apply(np.rint, v.astype(np.float16))
            if name == "round" and iscomplex(v.dtype):
                return apply(np.round, v)
            fn = np.round if name == "round" else getattr(np, name)
            return v.copy() if not isfloat(v.dtype) else apply(fn, v)
        if name in ("isnan", "isinf", "isfinite"):
            v = args[0]
            if not isfloat(v.dtype) and not iscomplex(v.dtype):
                return np.full(self.n, name == "isfinite")
            return getattr(np, name)(v)
        if name == "reciprocal":
            v = args[0]
            if not isfloat(v.dtype) and not iscomplex(v.dtype):
                v = v.astype(loop_dtype(np.reciprocal, v))  # bool: int8
                return np.where(v == 1, v, np.where(v == -1, v, np.zeros_like(v)))
            return apply(np.reciprocal, v)
        if name in ("clip", "where", "fma"):
            if name == "where":
                c = args[0]
                c = bool(c) if is_weak(c) else c.astype(np.bool_)
                xs = args[1:]
            else:
                xs = args
            if all(is_weak(a) for a in xs):
                xs = [self.strong(a) for a in xs]
            if name == "fma":
                t = float_rule_type(xs)
            else:
                t = promote_weak(*xs)
            xs = [conv(a, t) for a in xs]
            if name == "clip" and iscomplex(t):
                return np.clip(*xs)  # NumPy's order for complex: jitc's, no equal rule
            if name == "clip":
                r = equal_gives_y(apply(np.maximum, xs[0], xs[1]), xs[0], xs[1])
                return equal_gives_y(apply(np.minimum, r, xs[2]), r, xs[2])
            if name == "where":
                return np.where(c, xs[0], xs[1])
            if t.itemsize < 4:
                # A 16-bit float computes in float32 and rounds once more.
                return exact.fma(*[x.astype(np.float32) for x in xs]).astype(t)
            return exact.fma(*xs)
        if name == "fmod" and not isfloat(t):
            t = loop_dtype(np.fmod, *args)  # bool: int8
            x, y = conv(args[0], t), conv(args[1], t)
            safe = np.where((y == 0) | (y == -1), 1, y).astype(t)
            return np.where((y == 0) | (y == -1), np.zeros_like(x), np.fmod(x, safe))
        try:
            r = check_dtype(np.asarray(apply(UFUNC[name], *args)))
        except (OverflowError, TypeError, ValueError) as ex:
            raise Refusal(str(ex))
        if name in MINMAX:
            r = equal_gives_y(r, args[0], args[1])
        return r

    def complex_call(self, name, args):
        """real, imag, conjugate, angle and complex(re, im), as
        docs/language.md defines them on every type (NumPy's np.real,
        np.imag, np.conjugate and np.angle; complex() of its parts)."""
        v = args[0]
        if name in ("real", "imag"):
            if is_weak(v):  # Python's: real(2j) is 0.0, real(True) the int 1
                v = int(v) if isinstance(v, bool) else v
                return v.real if name == "real" else v.imag
            if iscomplex(v.dtype):
                return (v.real if name == "real" else v.imag).copy()
            return v.copy() if name == "real" else np.zeros_like(v)
        if name in ("conjugate", "conj"):
            return np.conjugate(self.strong(v))  # bool: int8, NumPy's loop
        if name == "angle":
            # arctan2(imag, real), C's atan2, as np.angle; of a real x,
            # arctan2(0, x) in x's float type (bfloat16 through float32)
            v = self.strong(v)
            if iscomplex(v.dtype):
                return np.arctan2(v.imag, v.real)
            return np.asarray(apply(np.arctan2, 0, v))
        re, im = args
        if any(isinstance(a, complex) or (not is_weak(a) and iscomplex(a.dtype)) for a in args):
            raise Refusal("complex parts")
        if all(is_weak(a) for a in args):
            return complex(re, im)
        c = least_float(promote_weak(*args))  # int8: float16, then float32
        f = np.dtype(np.float32) if c.itemsize < 4 else c
        out = np.empty(self.n, np.complex64 if f.itemsize == 4 else np.complex128)
        out.real, out.imag = [(np.full(self.n, a, np.float64) if is_weak(a) else a)
                              .astype(c).astype(f) for a in args]
        return out



# The unary functions whose NaN result keeps the sign of a NaN argument in
# NumPy here, per float type (fuzz_data.nan_keep).
NAN_KEEP = nan_keep(V, FUNCS, UFUNC)


def special_values(v):
    v = np.asarray(v)
    if iscomplex(v.dtype):  # both parts
        return special_values(v.real) & special_values(v.imag)
    tiny = fuzz_vocab.finfo(v.dtype if isfloat(v.dtype) else np.float64).tiny
    v = v.astype(np.float64)  # exact, from every type but the widest integers
    return (v == 0) | (np.abs(v) < float(tiny)) | ~np.isfinite(v)
