#!/usr/bin/env python3
"""fuzz_diff.py -- differential fuzzing of the targets against NumPy.

A seeded generator writes random programs over every operator, function,
cast and type of the vocabulary, `jitc --list` (fuzz_vocab.py reads it: no
table is copied here; a type of a kind it does not know and a function
whose typing rule it does not know are left out and named in the summary):
several statements per program, with `let`
temporaries, in-place updates, reads after writes, weak literals (ints,
floats, imaginary numbers, True, nan, -nan, inf, pi), weak and typed scalars (-D), the index
`i`, inputs and scalars named as the language's names (`i`, `pi`, `nan`,
`exp`, ...: the names given win, docs/language.md), and shapes aimed at
constant folding and at the edges of each type:

- bare literals and named constants (2.5, -pi, nan, -nan, inf, 1e300, 3e9,
  int extremes, subnormals, True) stored into arrays of every dtype;
- functions (power above all) and `**` of weak operands only;
- twins: one expression of integer literals (folded by jitc, e.g.
  `2 ** (3 - 31)`, `5 ^ 2147483648`) and the same expression over int64
  arrays filled with those values (not folded), each next to an array;
- exp, exp2, expm1, sinh, cosh, power at their overflow thresholds, and
  functions of the smallest subnormals of both signs (inputs made only of
  edge values: largest finite values, thresholds, subnormals, NaN of both
  signs, int extremes);
- copysign of values whose NaNs carry a sign the reference promises;
- complex functions of complex inputs, edge pairs among them (inf and NaN
  in either part, -0.0 parts), and complex arithmetic, picks and
  comparisons of two complex inputs.

The oracle (class Oracle) evaluates the same program with NumPy 2 on the
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
exponent of that value; floor/ceil/trunc of ints keep the type; fabs of an
int stays int; fmod of ints by 0 or -1 is 0; clip is minimum(maximum());
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

Each program runs through the CLI on interp, cpu and, where a GPU is
present, cuda.  Every target is compared with the oracle, and cpu and cuda
also with interp.  Tolerances (docs/language.md, "Accuracy"): an output
computed only with exactly rounded operations must agree bit for bit (-0.0
differs from 0.0; any NaN equals any NaN, except in the copysign shape,
where the sign of NaN is compared: NaNs from leaves, `-`, abs, copysign and
the unary functions that return their NaN argument in NumPy here).  IEEE 754
and LLVM leave the sign of a NaN made by arithmetic unspecified: the oracle
tracks such NaNs, and the elements whose value depends on their sign
(through copysign) are not compared.  An output that is one function that
is not exactly rounded applied to exactly computed operands must agree
within ULP (default 4) of interp, and within ULP + NUMPY_ULP (default 4 + 4:
the documented error of the target plus that of NumPy's own functions,
whose float32 versions are not the C library's) of NumPy.  A complex output
is compared part by part under the same rules; one that is a complex
function (the C library's, or NumPy's formulas over them: cuda computes
them with its own functions, cpu its own exp) may also be off by twice the
tolerance in epsilons of its larger part, where a part much smaller than
the other carries the other's rounding (docs/language.md's accuracy
contract for complex: 4 ulp in each part or 8 epsilons of the larger part
on cuda).  In a float result infinity counts
as one ulp beyond the largest finite value (so an exp that overflows early
fails); where every operand is a special value (0, subnormal, inf, NaN) and
the result is 0, subnormal, inf or NaN, the result must be bit-exact (the C
library's special values, which cpu and cuda promise: a lost subnormal
fails).

Usage:
  fuzz_diff.py [--seed S] [-n N] [-j JOBS] [--targets "interp cpu cuda"]
               [--ulp U] [--numpy-ulp U] [--keep DIR] [--self-test]
               [--no-regress | --regress-only]
Environment: JITC (the binary; default $BUILD/jitc or build/jitc).
The regression cases (REGRESSIONS: programs this fuzzer found, reduced) run
first, every time.  Program k of seed S is reproducible alone: --seed S
--only k.  Prints "ok fuzz_diff.regress.NAME", "FAIL fuzz_diff.S.K: why"
(with the program, its inputs kept under --keep, default build-fuzz-diff/),
and a summary line.  Programs run in a pool of JOBS processes (default: one
per core).
"""
import argparse
import ast
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import exact
import fuzz_vocab
from fuzz_data import LN_MAX, SIZES, make_data, nan_keep
from fuzz_vocab import WB, WC, WF, WI, apply, iscomplex, isfloat, isint, weak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")

np.seterr(all="ignore")

# The vocabulary (fuzz_vocab.py): the types and operators are `jitc --list`'s.
if not os.access(JITC, os.X_OK):
    sys.exit("fuzz_diff: %s is not built (set JITC)" % JITC)
V = fuzz_vocab.load(JITC)
B, I32, I64, F32, F64 = "bool", "int32", "int64", "float32", "float64"  # Python's, -D's
STRONG = V.strong
NP = V.np
KIND = V.kind
combine = V.combine
strongify = V.strongify
INEXACT = V.inexact
CINEXACT = V.complex_inexact  # not exactly rounded on complex operands
BINOPS = V.binops
UNOPS = V.unops
FUNCS = V.funcs
CASTS = V.casts
AUG_OPS = V.aug_ops


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
        if name in ("floor", "ceil", "trunc"):
            v = args[0]
            return v.copy() if not isfloat(v.dtype) else apply(getattr(np, name), v)
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

# Weak values the new shapes use: literals, named constants and signs of them.
CONST_VALUES = ["2.5", "-2.5", "0.5", "1e300", "(-1e300)", "3e9", "(-3e9)", "pi", "(-pi)", "inf",
                "(-inf)", "nan", "(-nan)", "True", "False", "true", "0", "(-1)", "7",
                "2147483647", "(-2147483648)", "2147483648", "4294967296",
                "9223372036854775807", "(-9223372036854775807)", "1e-310", "(-0.0)",
                "1.7976931348623157e308", "5e-324", "(-5e-324)", "1e20", "(-1e20)"]
WEAK_ARGS = ["0", "1", "2", "3", "(-1)", "(-3)", "31", "40", "63", "64", "710", "1000",
             "0.5", "2.5", "(-0.5)", "(-0.0)", "710.0", "1e-310", "1e300", "88.7", "89.5",
             "inf", "(-inf)", "nan", "(-nan)", "pi", "True", "False", "2147483647",
             "(-2147483648)", "1j", "(1 + 2j)", "(-0.0j)"]
WEAK_INTS = ["0", "1", "2", "3", "(-1)", "(-2)", "31", "40", "62", "True", "False",
             "(-2147483648)", "2147483647"]
CONST_INTS = [0, 1, 2, 3, 5, 7, 31, 32, 33, 40, 62, 63, 64, 100, 2147483647, 2147483648,
              4294967296]
CONST_FLOATS = [0.5, 2.5, 3.0, 1e300, 1e-310, 1e20, 4294967296.5]
POW_BASES = [1, 2, 4]  # integer bases whose negative powers are exact
# Imaginary literals and weak complex expressions of them (Python's).
COMPLEX_LITERALS = ["1j", "2.5j", "(-1j)", "0j", "(-0.0j)", "(1 + 2j)", "(0.5 - 1.5j)",
                    "1e300j", "1e999j", "(-1e999j)", "(nan + 1j)", "(1 - inf * 1j)"]


class Gen:
    """One random program, its arrays and its scalars."""

    def __init__(self, rng):
        self.rng = rng
        self.inputs = {}   # name -> dtype (read from .npy files)
        self.fill = {}     # input name -> ("full", value) | ("edges",)
        self.outputs = {}  # name -> None (type decided by jitc)
        self.scalars = {}  # name -> (-D text, type)
        self.temps = {}    # let name -> (type, exact)
        self.written = set()
        self.exact = {}    # output name -> computed only with exactly rounded operations
        self.uses = set()
        n_in = rng.randint(1, 4)
        for k in range(n_in):
            self.inputs["x%d" % k] = rng.choice(STRONG)
            if rng.random() < 0.3:
                self.fill["x%d" % k] = ("edges",)
        if rng.random() < 0.5:
            self.scalars["s"] = (rng.choice(["2.5", "-0.5", "3", "0", "True", "1e300", "nan",
                                             "1+2j"]), None)
        if rng.random() < 0.4:
            t = rng.choice(STRONG)
            # a value of its kind: bool, signed, unsigned, float
            v = "True" if t == B else "-3" if V.lo.get(NP[t], 0) < 0 else "5" if isint(NP[t]) \
                else "1.5-0.25j" if iscomplex(NP[t]) else "0.1" if NP[t].itemsize < 8 \
                else "-2.75"
            self.scalars["t"] = (v + ":" + t, t)

    def scalar_type(self, name):
        text, t = self.scalars[name]
        if t:
            return t
        v = text
        if v in ("True", "False"):
            return WB
        if "j" in v:
            return WC
        return WF if ("." in v or "e" in v or v in ("nan", "inf")) else WI

    def literal(self):
        r = self.rng
        c = r.random()
        if c < 0.45:
            v = r.choice([0, 1, 2, 3, 5, 7, 10, 31, 32, 100, 2147483647])
            return (str(v), WI)
        if c < 0.55:
            return ("(-%d)" % r.choice([1, 2, 3, 7, 2147483648]), WI)
        if c < 0.8:
            return (r.choice(["0.5", "2.5", "-0.0", "1e-3", "3.0", "1e300", "1e-310", "(-1.5)",
                              "nan", "inf", "(-inf)", "pi", "(-nan)", "5e-324",
                              "1.7976931348623157e308"]), WF)
        if c < 0.87:
            return (r.choice(COMPLEX_LITERALS), WC)
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
                t = result_type(rule, [a[1], b[1]], op)
                if t is None:
                    continue
                if rule == "pow" and KIND[t] == 1:
                    # An integer power: the exponent is an array or a
                    # non-negative literal (a negative one is refused).
                    if weak(b[1]) and (b[0].startswith("(-") or b[1] != WI):
                        continue
                    if "(" in b[0] and not b[0].startswith("("):
                        continue
                inexact = rule == "pow" and KIND[t] >= 2
                if inexact and exact_only:
                    continue
                return ("(%s %s %s)" % (a[0], op, b[0]), t, a[2] and b[2] and not inexact)
            if c < 0.5:
                op = r.choice(sorted(UNOPS))
                a = self.expr(depth - 1)
                if weak(a[1]):
                    continue
                t = result_type(UNOPS[op], [a[1]], op)
                if t is None:
                    continue
                return ("(%s%s)" % (op, a[0]), t, a[2])
            if c < 0.6:
                name = r.choice(sorted(CASTS))
                a = self.expr(depth - 1)
                if V.is_complex(a[1]) and KIND[CASTS[name]] not in (0, 3):
                    continue  # complex to a real type: refused (tested apart)
                return ("%s(%s)" % (name, a[0]), CASTS[name], a[2])
            name = r.choice(sorted(FUNCS))
            arity, rule = FUNCS[name]
            if (name in INEXACT) and exact_only:
                continue
            args = [self.expr(depth - 1) for _ in range(arity)]
            if exact_only and name in CINEXACT and any(V.is_complex(a[1]) for a in args):
                continue  # a complex function: not exactly rounded
            if rule == "where":
                if weak(args[1][1]) and weak(args[2][1]):
                    args[2] = self.leaf(allow_weak=False)
                t = result_type(rule, [a[1] for a in args], name)
                if t is None:
                    continue
            else:
                if arity > 1 and all(weak(a[1]) for a in args):
                    args[-1] = self.leaf(allow_weak=False)
                t = result_type(rule, [a[1] for a in args], name)
                if t is None:
                    continue
                if rule == "pow" and KIND[t] == 1:
                    b = args[1]
                    if weak(b[1]) and (b[0].startswith("(-") or b[1] != WI):
                        continue
                    if "(" in b[0] and not b[0].startswith("("):
                        continue
                if rule == "pow" and KIND[t] >= 2:
                    if exact_only:
                        continue
                    name_inexact = True
                else:
                    name_inexact = name in INEXACT or (name in CINEXACT and any(
                        V.is_complex(a[1]) for a in args))
            exact = all(a[2] for a in args) and not (rule != "where" and name_inexact)
            return ("%s(%s)" % (name, ", ".join(a[0] for a in args)), t, exact)
        return self.leaf()

    def inexact_root(self):
        """A function that is not exactly rounded, of exactly computed operands."""
        r = self.rng
        for _ in range(30):
            name = r.choice(sorted(INEXACT | CINEXACT) + ["**", "power"])
            arity = 2 if name == "**" else FUNCS[name][0]
            args = [self.expr(r.randint(0, 3)) for _ in range(arity)]
            if not all(a[2] for a in args):
                continue
            if name not in INEXACT and name not in ("**", "power") and \
                    not any(V.is_complex(a[1]) for a in args):
                continue  # exactly rounded but on complex
            if all(weak(a[1]) for a in args):
                args[-1] = self.leaf(allow_weak=False)
                if not args[-1][2]:
                    continue
            rule = BINOPS[name] if name == "**" else FUNCS[name][1]
            t = result_type(rule, [a[1] for a in args], name)
            if t is None:
                continue
            if name in ("**", "power") and KIND[t] < 2:
                continue  # an integer power is exact, and has rules of its own
            if name == "**":
                return ("(%s ** %s)" % (args[0][0], args[1][0]), t, False)
            return ("%s(%s)" % (name, ", ".join(a[0] for a in args)), t, False)
        return self.expr(2)

    # -- the shapes that meet constant folding and the edges of each type --

    def float_input(self, kind=2):
        """An input of a float type (kind 3: complex), made of edge values
        when the program has none."""
        fl = [n for n in sorted(self.inputs) if KIND[self.inputs[n]] == kind]
        if fl:
            return self.rng.choice(fl)
        name = "x%d" % len(self.inputs)
        self.inputs[name] = self.rng.choice([t for t in STRONG if KIND[t] == kind])
        self.fill[name] = ("edges",)
        return name

    def complex_arith(self):
        """Arithmetic of complex inputs, or of one with a real input or a
        weak value: the products' fma, Smith's division, the square and
        reciprocal loops, the picks and comparisons, exact on every target."""
        r = self.rng
        x = self.float_input(3)
        y = "x%d" % len(self.inputs)
        self.inputs[y] = r.choice([t for t in STRONG if KIND[t] == 3])
        if r.random() < 0.3:
            self.fill[y] = ("edges",)
        z = r.choice(sorted(self.inputs) + COMPLEX_LITERALS + ["2.5", "(-1)"])
        form = r.choice(["{x} * {y}", "{x} / {y}", "{x} * {y} + {z}", "square({x}) - {z}",
                         "reciprocal({y})", "{x} ** 2", "{y} / ({x} * {z})", "({x} - {z}) * {y}",
                         "{z} / {x}", "maximum({x}, {y})", "fmin({x}, {z})", "clip({x}, {y}, {z})",
                         "{x} < {y}", "where({x} == {z}, {y}, {x})", "abs({x} * {y})",
                         "conj({x}) * {z}", "complex(real({x}), imag({y}))", "sign({x}) == {z}"])
        return form.format(x=x, y=y, z=z)

    def complex_root(self):
        """A complex function (not exactly rounded) of a complex input, half
        the time one of edge pairs (inf and NaN in either part, -0.0)."""
        r = self.rng
        x = self.float_input(3)
        if r.random() < 0.5:
            self.fill[x] = ("edges",)
        f = r.choice(sorted(CINEXACT | {"angle"}))
        if f in ("power", "pow"):
            return "%s(%s, %s)" % (f, x, r.choice(["2", "3", "(-2)", "0.5", "2.5", "1j", x,
                                                   "(0.5 - 0.5j)", "0", "(-0.0)"]))
        return "%s(%s)" % (f, x)

    def const_assign(self):
        """A bare literal or named constant stored into an array of any dtype."""
        name = self.rng.choice(sorted(self.inputs))
        values = CONST_VALUES + (COMPLEX_LITERALS if KIND[self.inputs[name]] in (0, 3) else [])
        return name, "%s = %s" % (name, self.rng.choice(values)), "exact"

    def weak_call(self):
        """A function (power above all) of weak operands: a strong result."""
        r = self.rng
        if r.random() < 0.5:
            name = r.choice(["power", "pow", "**"])
        else:
            name = r.choice(sorted(FUNCS) + sorted(CASTS))
        arity = 2 if name == "**" else FUNCS[name][0] if name in FUNCS else 1
        pool = WEAK_INTS if name in ("power", "pow", "**") and r.random() < 0.6 else WEAK_ARGS
        args = [r.choice(pool) for _ in range(arity)]
        if name == "**":
            text = "(%s ** %s)" % tuple(args)
        else:
            text = "%s(%s)" % (name, ", ".join(args))
        ints = all(a.strip("()").lstrip("-").isdigit() or a in ("True", "False") for a in args)
        inexact = name in INEXACT or (name in ("power", "pow", "**") and not ints) or \
            (name in CINEXACT and any("j" in a for a in args))
        if not inexact and r.random() < 0.6:
            leaf = r.choice(sorted(self.inputs)) if r.random() < 0.7 else \
                self.leaf(allow_weak=False)[0]
            text = "%s %s %s" % (text, r.choice(["+", "*", "-", "==", "<", "//"]), leaf)
        return text, "ulp" if inexact else "exact"

    def const_expr(self, depth, ints_only=False):
        """A weak expression of literals (folded by jitc), and its twin that
        reads arrays filled with the same values (not folded).  Powers take
        integer operands only: a float power is not exactly rounded."""
        r = self.rng

        def leaf(v, dt):
            name = "c%d" % len([n for n in self.inputs if n.startswith("c")])
            self.inputs[name] = dt
            self.fill[name] = ("full", v)
            return repr(v) if dt == F64 else str(v), name

        if depth <= 0 or r.random() < 0.25:
            if r.random() < 0.15 and not ints_only:
                return leaf(r.choice(CONST_FLOATS), F64)
            return leaf(r.choice(CONST_INTS), I64)
        op = r.choice(["+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^", "/", "-u",
                       "f1", "f2"])
        if ints_only and op in ("**", "/"):
            op = "+"
        if op == "-u":
            a = self.const_expr(depth - 1, ints_only)
            return "(-%s)" % a[0], "(-%s)" % a[1]
        if op == "**":
            b = leaf(r.choice(POW_BASES), I64)
            e1, e2 = self.const_expr(0, True), self.const_expr(0, True)
            return ("(%s ** (%s - %s))" % (b[0], e1[0], e2[0]),
                    "(%s ** (%s - %s))" % (b[1], e1[1], e2[1]))
        if op == "f1":
            f = r.choice(["abs", "square", "sign", "floor", "sqrt", "int32", "float32", "bool"])
            if ints_only and f in ("sqrt", "float32"):
                f = "abs"
            a = self.const_expr(depth - 1, ints_only)
            return "%s(%s)" % (f, a[0]), "%s(%s)" % (f, a[1])
        if op == "f2":
            f = r.choice(["power", "pow", "minimum", "maximum", "fmod", "copysign", "fmax"])
            ints = ints_only or f in ("power", "pow")
            a, b = self.const_expr(depth - 1, ints), self.const_expr(depth - 1, ints)
            return "%s(%s, %s)" % (f, a[0], b[0]), "%s(%s, %s)" % (f, a[1], b[1])
        a, b = self.const_expr(depth - 1, ints_only), self.const_expr(depth - 1, ints_only)
        return "(%s %s %s)" % (a[0], op, b[0]), "(%s %s %s)" % (a[1], op, b[1])

    def const_pair(self):
        """The same expression once with literals (folded), once with int64
        and float64 arrays filled with those values (not folded)."""
        r = self.rng
        ce, twin = self.const_expr(r.randint(1, 3))
        leaf = self.leaf(allow_weak=False)[0]
        op = r.choice(["+", "*", ">=", "<", "==", "-", "&", "//", "%"])
        if r.random() < 0.3:
            return [ce, twin]
        return ["%s %s %s" % (leaf, op, ce), "%s %s %s" % (leaf, op, twin)]

    def overflow_root(self):
        """exp, exp2, expm1, sinh, cosh, power next to overflow and in the
        subnormals: an input of edge values."""
        r = self.rng
        x = self.float_input()
        self.fill[x] = ("edges",)
        f = r.choice(["exp", "exp2", "expm1", "sinh", "cosh", "power", "**", "log1p",
                      "arcsinh", "tan", "sin", "arctan", "tanh", "arcsin", "arctanh", "sinh"])
        if f in ("power", "**"):
            b = r.choice(["2", "10", "2.0", "0.5", "2.718281828459045", "(-2.0)"])
            if r.random() < 0.5:
                return ("power(%s, %s)" % (b, x) if f == "power" else "(%s ** %s)" % (b, x))
            return "power(%s, %s)" % (x, r.choice(["1.0000001", "0.9999999", "3.5", "(-2.5)"]))
        return "%s(%s)" % (f, x)

    def nan_sign(self):
        """copysign of a value whose NaNs carry a sign the reference promises."""
        r = self.rng
        x = self.float_input()
        if r.random() < 0.5:
            self.fill[x] = ("edges",)
        keep = NAN_KEEP[self.inputs[x]]
        s = r.choice(["%s" % x, "(-%s)" % x, "abs(%s)" % x, "(-nan)", "nan", "(-(-nan))",
                      "%s(%s)" % (r.choice(keep), x) if keep else x])
        m = r.choice(["1.0", "2.5", x, "1", "nan"])
        return "copysign(%s, %s)" % (m, s)

    def program(self):
        r = self.rng
        lines = []
        checks = []  # (output name, "exact" | "sign" | "ulp")
        nstmts = r.randint(1, 6)
        nout = [0]

        def out(text, how, t=None):
            name = "o%d" % nout[0]
            nout[0] += 1
            self.outputs[name] = t
            self.exact[name] = how != "ulp" and t is not None
            self.written.add(name)
            lines.append("%s = %s" % (name, text))
            checks.append((name, how))

        for s in range(nstmts):
            c = r.random()
            if c < 0.015:
                # `=` mistyped `==` with a new name: refused, "did you mean
                # '='" (a known name is compared, into `out`: not generated).
                name = "y%d" % r.randint(0, 9)
                e = self.expr(r.randint(0, 2))
                lines.append("%s%s == %s" % (name, "[i]" if r.random() < 0.3 else "", e[0]))
                continue
            if c < 0.06:
                name, line, how = self.const_assign()
                lines.append(line)
                checks.append((name, how))
            elif c < 0.12:
                out(*self.weak_call())
            elif c < 0.18:
                for t in self.const_pair():
                    out(t, "exact")
            elif c < 0.21:
                out(self.overflow_root(), "ulp")
            elif c < 0.24:
                out(self.complex_root(), "ulp")
            elif c < 0.30:
                out(self.nan_sign(), "sign")
            elif c < 0.34:
                out(self.complex_arith(), "exact")
            elif c < 0.42:
                name = "t%d" % len(self.temps)
                e = self.expr(r.randint(1, 3))
                if not e[2]:
                    continue
                self.temps[name] = (strongify(e[1]), True)
                lines.append("let %s = %s" % (name, e[0]))
            elif c < 0.58:
                # In place: a op= e, kept only when NumPy's same-kind rule allows it.
                name = r.choice(sorted(n for n in self.inputs if n.startswith("x")))
                dt = self.inputs[name]
                for _ in range(20):
                    op = r.choice(AUG_OPS)
                    e = self.expr(r.randint(0, 2))
                    rule = BINOPS[op]
                    t = result_type(rule, [dt, e[1]], op)
                    if t is None or not np.can_cast(NP[t], NP[dt], "same_kind"):
                        continue
                    if op == "**" and KIND[t] == 1 and (weak(e[1]) and
                                                        (e[0].startswith("(-") or e[1] != WI)
                                                        or "(" in e[0]):
                        continue
                    if op == "**" and KIND[t] >= 2:
                        continue
                    lines.append("%s %s= %s" % (name, op, e[0]))
                    checks.append((name, "exact"))
                    break
            else:
                if r.random() < 0.35:
                    e = self.inexact_root()
                else:
                    e = self.expr(r.randint(1, 4))
                if weak(e[1]):
                    # A new output takes a strong type: add a strong leaf.
                    for _ in range(10):
                        f = self.leaf(allow_weak=False)
                        t = result_type("arith", [e[1], f[1]], "+")
                        if t is not None:
                            e = ("%s + %s" % (e[0], f[0]), t, e[2] and f[2])
                            break
                    else:  # no leaf goes with it (bfloat16): its Python type
                        t = strongify(e[1])
                        e = ("%s(%s)" % (t, e[0]), t, e[2])
                out(e[0], "exact" if e[2] else "ulp", strongify(e[1]))
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
# Regression cases: programs this fuzzer generated that exposed a fault,
# reduced; run before the random programs every time.
# (name, program, {output: check}, {array: (dtype, values)}, {scalar: -D text})
# ---------------------------------------------------------------------------

NAN = float("nan")
REGRESSIONS = [
    # 1. A float constant stored into an int array keeps its bit pattern
    #    (fuzz_diff.2.166 `x0 = 1e300` into int32, fuzz_diff.2.144 `x0 = (-nan)`).
    ("const_into_int32", "x0 = 1e300\n", {"x0": "exact"}, {"x0": (I32, [7, 7])}, {}),
    ("const_into_int64", "x0 = (-pi)\n", {"x0": "exact"}, {"x0": (I64, [7, 7])}, {}),
    ("nan_into_int64", "o0 = x0 + 1\nx0 = (-nan)\n", {"x0": "exact", "o0": "exact"},
     {"x0": (I64, [7, 7])}, {}),
    # 2. power of weak operands stays weak (fuzz_diff.2.53, 5.384, 8.68).
    ("weak_pow_negative", "o0 = pow(710, (-2147483648))\n", {"o0": "exact"},
     {"x0": (F64, [1.0])}, {}),
    ("weak_pow_int32", "o0 = power((-2), 2) - x0\n", {"o0": "exact"},
     {"x0": (I32, [1, -1])}, {}),
    ("weak_pow_float32", "o0 = pow(40, 3) - x0\n", {"o0": "exact"},
     {"x0": (F32, [0.1, -2.5])}, {}),
    # 3. Constant integer expressions skip the int32 range check (fuzz_diff.8.266).
    ("const_range", "o0 = x0 ^ (40 + 2147483647)\n", {"o0": "exact"},
     {"x0": (I32, [1, -1])}, {}),
    ("const_range_compare", "o0 = x0 >= 2147483647 + 32\n", {"o0": "exact"},
     {"x0": (I32, [2147483647, 0])}, {}),
    # 4. A negative exponent made by a constant expression (fuzz_diff.2.293).
    ("const_negative_exponent", "o0 = x0 % (2 ** (31 - 2147483648))\n", {"o0": "exact"},
     {"x0": (I64, [1, 7])}, {}),
    ("const_negative_exponent_alone", "o0 = (2 ** (3 - 31))\n", {"o0": "exact"},
     {"x0": (F64, [1.0])}, {}),
    # 5. cpu float64 exp and pow overflow early (fuzz_diff.2.189, fuzz_diff.3.238).
    ("exp_overflow", "o1 = exp(x2)\n", {"o1": "ulp"},
     {"x2": (F64, [LN_MAX - 2**-21, LN_MAX - 2**-24, LN_MAX - 2**-30, LN_MAX])}, {}),
    ("pow_overflow", "o0 = power(10, x0)\n", {"o0": "ulp"},
     {"x0": (F64, [308.25471555991675 - 2**-30, 308.2547155599167 - 2**-22])}, {}),
    ("pow_overflow_2", "o3 = (2 ** x4)\n", {"o3": "ulp"},
     {"x4": (F64, [1024 - 2**-22, 1024 - 2**-30, 1023.5])}, {}),
    # 6. cpu loses the smallest subnormals (fuzz_diff.2.4, 2.214, 2.50, 2.299).
    ("log1p_subnormal", "o2 = log1p(x2)\n", {"o2": "ulp"}, {"x2": (F64, [5e-324, -5e-324])},
     {}),
    ("arcsinh_subnormal", "o1 = arcsinh(x0)\n", {"o1": "ulp"},
     {"x0": (F32, [1.401298464324817e-45, -1.401298464324817e-45])}, {}),
    ("arcsinh_largest_subnormal", "o1 = arcsinh(x1)\n", {"o1": "ulp"},
     {"x1": (F32, [1.1754942106924411e-38, -1.1754942106924411e-38])}, {}),
    ("tan_subnormal", "o2 = tan(x1)\n", {"o2": "ulp"}, {"x1": (F64, [1e-310, -5e-324])}, {}),
    # 7. cpu does not keep the sign of NaN (fuzz_diff.2.104, fuzz_diff.2.69).
    ("nan_sign_cbrt", "o3 = copysign(1.0, cbrt(x2))\n", {"o3": "sign"},
     {"x2": (F32, [-NAN, NAN])}, {}),
    ("nan_sign_cos", "o2 = copysign(nan, cos(x0))\n", {"o2": "sign"},
     {"x0": (F64, [-NAN, NAN, -NAN])}, {}),
    ("nan_sign_arctanh", "o1 = copysign(x3, arctanh(x3))\n", {"o1": "sign"},
     {"x3": (F64, [-NAN, NAN, -NAN])}, {}),
    # 8. `==` for `=`: a statement that only compares a new name read it as
    #    an input of ones and wrote the bools to `out`; refused, "did you mean
    #    '='".  A known name is compared.
    ("eq_statement", "o0 = x0 + 1\ny0 == x0 * 2\n", {"o0": "exact"},
     {"x0": (F64, [1.0, 2.0])}, {}),
    ("eq_statement_indexed", "y1[i] == x0 + 1\n", {}, {"x0": (I32, [1, 2])}, {}),
    ("eq_parenthesised", "(x0 == 2)\no1 = x0 == 1\n", {"out": "exact", "o1": "exact"},
     {"x0": (I32, [1, 2])}, {}),
    # 9. Names of the language bound on the command line: the caller's value.
    ("shadow_scalar_pi", "o0 = pi + x0\n", {"o0": "exact"}, {"x0": (F64, [1.0])},
     {"pi": "2"}),
    ("shadow_scalar_i", "o0 = i + x0\n", {"o0": "exact"}, {"x0": (F64, [1.0])}, {"i": "5"}),
    ("shadow_array_sum", "o0 = sum + x0\n", {"o0": "exact"},
     {"x0": (F64, [1.0]), "sum": (F64, [2.0])}, {}),
    ("shadow_array_f32", "o0 = f32 + x0\n", {"o0": "exact"},
     {"x0": (F64, [1.0]), "f32": (F64, [2.0])}, {}),
    # 10. The types of the table's rows (fuzz_diff.5 and 6 with them, by hand).
    #     A float function of integers of both signs is NumPy's loop, the
    #     least float holding each (int8 with uint8: float16, not float32).
    #     A Python int is of the common type: nextafter(-1, bool) is float64
    #     (fuzz_diff.7.554 found the first fix giving float16).
    ("float_fn_mixed_sign", "o0 = copysign(x0, x1)\no1 = nextafter(x1, x0)\n"
     "o2 = nextafter((-1), x2) // x3\n",
     {"o0": "exact", "o1": "exact", "o2": "exact"},
     {"x0": ("int8", [3, -3, 0]), "x1": ("uint8", [0, 1, 255]), "x2": (B, [False, True, False]),
      "x3": (F64, [1.401298464324817e-45, 1.0, 3.0])}, {}),
    #     `bool_array ** 2` is NumPy's square of the array: int8 (power(), int64).
    ("bool_square_operator", "o0 = x0 ** 2\no1 = power(x0, 2)\no2 = x0 ** 2.0\n",
     {"o0": "exact", "o1": "exact", "o2": "exact"}, {"x0": (B, [True, False])}, {}),
    #     A Python int in a float function is taken as its float loop takes
    #     it: copysign(-1, uint16) is float32, as NumPy computes it, and so
    #     is fma's (fuzz_diff.1.179 after the complex types came).
    #     fma of int8 and a Python float is float64, of int8 and a Python
    #     int float16, of bool and a Python int float64 (int64's).
    #     fma of bfloat16 and a Python float is float32 (fuzz_diff.12.857).
    ("float_fn_weak_negative_unsigned", "o0 = copysign((-1), x0)\no1 = fma((-1), x0, 1)\n"
     "o2 = fma(x1, x1, 2.5)\no3 = fma(x1, x1, 1)\no4 = fma(x2, x2, 1)\n"
     "o5 = int8(int32(sqrt(fma(5e-324, 2, x3))))\no6 = fma(2.5, 2, x3)\n",
     {"o0": "exact", "o1": "exact", "o2": "exact", "o3": "exact", "o4": "exact", "o5": "exact",
      "o6": "exact"},
     {"x0": ("uint16", [5, 0, 65535]), "x1": ("int8", [3, -7, 127]),
      "x2": (B, [True, False, True]), "x3": ("bfloat16", [255.0, 63.0, 48.0])}, {}),
    #     where() of two Python scalars, one through a let, is their type:
    #     np.where(c, 100, 2) is int64 (fuzz_diff.12.125).
    ("where_weak_let", "let t0 = 2\no0 = where(x0, 100, t0)\no1 = where(x0, 2.5, t0)\n",
     {"o0": "exact", "o1": "exact"}, {"x0": (F32, [0.0, 1.5, -0.0])}, {}),
    # 11. Complex (fuzz_diff.13.324): a weak complex power at an infinite
    #     angle, where Python raises ZeroDivisionError (cos(inf) is a domain
    #     error), was folded to nan+nanj; one at an angle of NaN is nan+nanj.
    ("weak_cpow_infinite_angle", "o0 = (1j ** inf) + x0\n", {"o0": "exact"},
     {"x0": ("complex64", [1 + 2j, -0.0])}, {}),
    ("weak_cpow_nan_angle", "o0 = (2 ** (inf * 1j)) + x0\no1 = 1j ** 1e999j + x0\n",
     {"o0": "exact", "o1": "exact"}, {"x0": ("complex64", [1 + 2j, -0.0])}, {}),
]

# The unary functions whose NaN result keeps the sign of a NaN argument in
# NumPy here, per float type (fuzz_data.nan_keep).
NAN_KEEP = nan_keep(V, FUNCS, UFUNC)


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def special_values(v):
    v = np.asarray(v)
    if iscomplex(v.dtype):  # both parts
        return special_values(v.real) & special_values(v.imag)
    tiny = fuzz_vocab.finfo(v.dtype if isfloat(v.dtype) else np.float64).tiny
    v = v.astype(np.float64)  # exact, from every type but the widest integers
    return (v == 0) | (np.abs(v) < float(tiny)) | ~np.isfinite(v)


def same_bits(r, g):
    """Per element of two flat arrays of one dtype: the same bits."""
    if not r.size:
        return np.ones(0, bool)
    return (r.view(np.uint8).reshape(r.size, -1) == g.view(np.uint8).reshape(g.size, -1)).all(1)


def compare(ref, got, how, ulp, special=None, signfree=None):
    """None when got agrees with ref, else the first disagreement as text.
    how: "exact" (bit for bit, any NaN equals any NaN), "sign" (bit for bit,
    the sign of NaN too) or "ulp" (within ulp units in the last place;
    bit for bit where special marks operands that are all special values
    and the reference is 0, subnormal, inf or NaN).  Complex values part by
    part, an "ulp" part also within 2 * ulp epsilons of the larger part of
    the reference (the accuracy contract of complex functions)."""
    if ref.dtype != got.dtype:
        return "dtype %s, reference %s" % (got.dtype, ref.dtype)
    if ref.shape != got.shape:
        return "shape %s, reference %s" % (got.shape, ref.shape)
    r, g = ref.ravel(), got.ravel()
    if iscomplex(r.dtype):
        rp = [np.ascontiguousarray(r.real), np.ascontiguousarray(r.imag)]
        gp = [np.ascontiguousarray(g.real), np.ascontiguousarray(g.imag)]
        big = np.maximum(np.abs(rp[0]), np.abs(rp[1])).astype(np.float64)
        near = [None, None]
        if how == "ulp":  # within 2 * ulp epsilons of the larger part
            eps = float(np.finfo(rp[0].dtype).eps)
            with np.errstate(all="ignore"):
                near = [np.isfinite(gp[k]) & (np.abs(rp[k].astype(np.float64) - gp[k]) <=
                                              2 * ulp * eps * big) for k in (0, 1)]
        ok = parts_ok(rp[0], gp[0], how, ulp, special, signfree, near[0]) & \
            parts_ok(rp[1], gp[1], how, ulp, special, signfree, near[1])
    elif not isfloat(r.dtype):
        ok = r == g
        if not ok.all():
            k = np.nonzero(~ok)[0][0]
            return "element %d: %r, reference %r" % (k, g[k], r[k])
    else:
        ok = parts_ok(r, g, how, ulp, special, signfree)
    bad = np.nonzero(~ok)[0]
    if bad.size:
        k = bad[0]
        return "element %d: %r, reference %r (%d elements differ%s)" % (
            k, g[k], r[k], bad.size, {"ulp": ", tolerance %g ulp" % ulp, "exact": ", exact",
                                      "sign": ", exact with the sign of NaN"}[how])
    return None


def parts_ok(r, g, how, ulp, special=None, signfree=None, near=None):
    """compare()'s verdict per element of two float arrays (a complex
    array's parts); near: elements taken as within the tolerance too."""
    rn, gn = np.isnan(r), np.isnan(g)
    same = same_bits(r, g)
    ok = same.copy()
    if how != "sign":
        ok |= rn & gn
    else:
        # The sign of a NaN is promised, never its payload (a GPU's NaN from
        # arithmetic is its canonical one, x86's carries an operand's).
        ok |= rn & gn & (np.signbit(r) == np.signbit(g))
        if signfree is not None:
            ok |= signfree[1] & rn & gn
    if how == "ulp":
        with np.errstate(all="ignore"):
            fin = np.isfinite(r) & np.isfinite(g)
            big = np.maximum(np.abs(r), np.abs(g))
            big = np.where(fin, big, 0).astype(r.dtype)
            d = np.abs(r.astype(np.float64) - g.astype(np.float64))
            units = d / np.spacing(big).astype(np.float64)
            # Infinity counts as one ulp beyond the largest finite value.
            top = float(fuzz_vocab.finfo(r.dtype).max)
            sp = float(np.spacing(np.asarray(top / 2, r.dtype))) * 2
            one_inf = (np.isinf(r) ^ np.isinf(g)) & (np.sign(r) == np.sign(g)) & ~rn & ~gn
            fin_side = np.where(np.isinf(r), np.abs(g), np.abs(r)).astype(np.float64)
            inf_units = (float(top) - fin_side) / sp + 1
        ok |= fin & (units <= ulp)
        ok |= one_inf & (inf_units <= ulp)
        if near is not None:
            ok |= near
        if special is not None and special.shape == r.shape:
            strict = special & (special_values(r) | special_values(g))
            ok = np.where(strict, same | (rn & gn), ok)
    if signfree is not None:
        ok |= signfree[0]  # a value the reference leaves unspecified
    return ok


def self_test():
    """The comparison must see a one-bit difference, the sign of zero, the
    sign of NaN where asked, an early overflow and a lost subnormal."""
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
    b = a.copy()
    b[2] = -np.nan
    assert compare(a, b, "exact", 4) is None
    assert compare(a, b, "sign", 4) is not None
    assert compare(np.array([1, 2], np.int32), np.array([1, 3], np.int32), "exact", 4)
    assert compare(np.array([1.0], np.float32), np.array([1.0]), "exact", 4)
    top = np.finfo(np.float64).max
    assert compare(np.array([np.inf]), np.array([top]), "ulp", 4) is None
    assert compare(np.array([top * (1 - 2**-21)]), np.array([np.inf]), "ulp", 4) is not None
    sub = np.array([5e-324])
    assert compare(sub, np.zeros(1), "ulp", 4) is None
    assert compare(sub, np.zeros(1), "ulp", 4, np.array([True])) is not None
    o = Oracle(3, {}, {})
    assert o.run("o = 2 ** (0 - 1) + i\n")["o"].dtype == np.float64
    try:
        Oracle(3, {"a": np.zeros(3, np.int32)}, {}).run("b = a + 2**31\n")
        raise AssertionError("no OverflowError")
    except Refusal:
        pass
    assert exact.fma(np.array([0.1]), np.array([10.0]), np.array([-1.0]))[0] == \
        5.551115123125783e-17
    assert exact.fma(np.array([1e300]), np.array([-1e300]), np.array([np.inf]))[0] == np.inf
    # complex: part by part, -0.0 apart, a NaN part any NaN; a function's part
    # within 2 * ulp epsilons of the larger part too, but not the larger part.
    eps = float(np.finfo(np.float32).eps)
    z = np.array([1 + 2j, complex(0, -0.0), complex(np.nan, 1), complex(1e-10, 1)], np.complex64)
    assert compare(z, z.copy(), "exact", 4) is None
    for k, v, exact_ok, ulp_ok in [(1, complex(0, 0.0), False, True),
                                   (2, complex(-np.nan, 1), True, True),
                                   (0, complex(1, 2 * (1 + 2 * eps)), False, True),
                                   (3, complex(1e-10 * (1 + 1000 * eps), 1), False, True),
                                   (0, complex(1, 2 * (1 + 20 * eps)), False, False),
                                   (2, complex(np.inf, 1), False, False)]:
        y = z.copy()
        y[k] = v
        assert (compare(z, y, "exact", 4) is None) == exact_ok, (k, v)
        assert (compare(z, y, "ulp", 4) is None) == ulp_ok, (k, v)
    o = Oracle(2, {"z": z[:2]}, {})
    r = o.run("a = (1 + 2j) * 3j + i\nb = real(2j) + i\nc = complex(1, 2) + z\n")
    assert r["a"].dtype == np.complex128 and r["a"][1] == -5 + 3j and r["b"].dtype == np.float64
    assert r["c"].dtype == np.complex64 and r["c"][0] == 2 + 4j
    for bad in ("a = 1j < 2j\n", "a = f32(z)\n", "a = floor(z)\n", "a = fabs(z)\n",
                "a = complex(z, 1)\n", "a = 1j // 2\n"):
        try:
            Oracle(2, {"z": z[:2]}, {}).run(bad)
            raise AssertionError("no refusal: " + bad)
        except Refusal:
            pass
    # A type of a kind the generator does not know (here a made-up kind) and
    # a function whose rule it does not know are left out, not a failure.
    listing = json.loads(json.dumps(V.listing))
    listing["types"].append({"dtype": len(listing["types"]), "name": "quaternion128",
                             "short": "q128", "kind": "quaternion", "size": 16, "char": "Q",
                             "typestr": "<V16"})
    listing["ops"].append(dict(listing["ops"][-1], name="newfn", kind="function",
                               rule="newrule"))
    w = fuzz_vocab.Vocab(listing)
    assert w.strong == V.strong and w.skipped == V.skipped + ["quaternion128"]
    assert "newfn" in w.not_generated and "q128" not in w.casts and "newfn" not in w.funcs


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

def run_jitc(target, prog, inputs, written, scalars, d, tag, n):
    """Runs the program over n elements; returns (exit status, stderr,
    {array: ndarray}, args)."""
    args = [JITC, "-t", target, "-q", "--no-cache", "-n", str(n)]
    # jitc refuses a name the program does not use; the generator's records
    # may hold names of expressions it made and then dropped.
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prog))
    for name in sorted(inputs):
        if name in words:
            args += ["--in", "%s=%s/%s.npy" % (name, d, name)]
            if inputs[name].dtype.kind == "V":
                # a bare void file ('<V2', ml_dtypes' bfloat16) is named
                args += ["--dtype", "%s=%s" % (name, V.name_of[inputs[name].dtype])]
    for name, text in sorted(scalars.items()):
        if name in words:
            args.append("-D%s=%s" % (name, text))
    with open(os.path.join(d, "prog.jitc"), "w") as f:
        f.write(prog)
    outs = {name: "%s/%s.%s.npy" % (d, name, tag) for name in written}
    for name in written:
        args += ["--out", "%s=%s" % (name, outs[name])]
    args += ["-f", os.path.join(d, "prog.jitc")]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    res = {}
    if p.returncode == 0:
        for name in written:
            res[name] = np.load(outs[name])
            if res[name].dtype.kind == "V":  # bfloat16 is written as '<V2'
                t = V.by_typestr.get("<" + res[name].dtype.str[1:])
                res[name] = res[name].view(NP[t]) if t else res[name]
    return p.returncode, p.stderr.decode(errors="replace"), res, args


def scalar_values(scalars, n):
    """-D texts as the oracle sees them: weak ones as Python scalars, typed
    ones as arrays of their dtype."""
    out = {}
    for name, text in scalars.items():
        v, _, t = text.partition(":")
        py = True if v in ("True", "true") else False if v in ("False", "false") else \
            complex(v) if "j" in v else float(v) if any(c in v for c in ".en") else int(v)
        out[name] = np.full(n, py, NP[CASTS[t]]) if t else py
    return out


def check_case(tag, prog, checks, arrays, scalars, targets, opt, d):
    """Runs one program on every target and the oracle: (outcome, text, counts),
    outcome "ok", "skip" (undefined in NumPy) or "fail"."""
    n = len(next(iter(arrays.values()))) if arrays else 1
    oracle = Oracle(n, arrays, scalar_values(scalars, n))
    need = None
    try:
        ref = oracle.run(prog)
        refused = None
    except Refusal as ex:
        ref, refused, need = None, str(ex), ex.need
    except Undefined as ex:
        return "skip", "undefined in NumPy: %s" % ex, {}
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), a)
    written = oracle.written if ref is not None else []
    weak_scalar = any(":" not in v for v in scalars.values())
    results = {}
    for t in targets:
        rc, err, res, args = run_jitc(t, prog, arrays, written, scalars, d, t, n)
        if refused is not None and need is not None:
            if rc == 65 and need in err:
                continue
            return "fail", "%s exits %d where jitc must refuse (65, \"%s\"): %s%s" % (
                t, rc, need, refused, (": " + err.strip()[:300]) if rc else ""), {}
        if refused is not None:
            if rc == 65 or (rc == 64 and weak_scalar):
                continue
            return "fail", "%s exits %d where NumPy raises (%s); jitc must refuse (65)%s" % (
                t, rc, refused, (": " + err.strip()[:300]) if rc else ""), {}
        if rc == 65 and oracle.may_refuse:
            refused = "an int literal out of range in a comparison"
            continue
        if rc != 0:
            return "fail", "%s exits %d where NumPy computes: %s" % (t, rc, err.strip()[:600]), {}
        results[t] = res
    if refused is not None:
        return "ok", "refused as NumPy raises", {"refused": 1}
    counts = {"outputs_" + h: 0 for h in ("exact", "sign", "ulp")}
    for name in written:
        how = checks.get(name, "ulp")
        counts["outputs_" + how] += 1
        counts["type " + V.name_of.get(ref[name].dtype, str(ref[name].dtype))] = \
            counts.get("type " + V.name_of.get(ref[name].dtype, ""), 0) + 1
        special = oracle.special.get(name)
        r, g = ref[name], results.get("interp", {}).get(name)
        if special is not None and g is not None and r.dtype == g.dtype and \
                (isfloat(r.dtype) or iscomplex(r.dtype)) and r.shape == g.shape:
            # NumPy's own functions (SVML with AVX-512, ...) may differ from
            # the C library at special values: there interp decides alone.
            special = special & (same_bits(r, g) | (np.isnan(r) & np.isnan(g)))
        for t in targets:
            why = compare(ref[name], results[t][name], how, opt.ulp + opt.numpy_ulp,
                          special, oracle.signfree.get(name))
            if why:
                return "fail", "%s: %s vs NumPy: %s" % (name, t, why), counts
            if t != "interp" and "interp" in results:
                why = compare(results["interp"][name], results[t][name], how, opt.ulp,
                              oracle.special.get(name), oracle.signfree.get(name))
                if why:
                    return "fail", "%s: %s vs interp: %s" % (name, t, why), counts
    return "ok", "", counts


# Names the language gives a meaning, that an input or a scalar of a program
# may have instead (docs/language.md, "Names the caller binds"): every bare
# use then reads the value given, and a call of the name stays the function.
SHADOWS = ["i", "pi", "inf", "nan", "true", "false", "exp", "sqrt", "where", "abs", "f32",
           "sum", "minimum"]


def shadow(rng, prog, checks, arrays, scalars):
    """Renames an input or a scalar of the program to a name of SHADOWS
    that the program does not use bare (its `[i]` are syntax and its calls
    calls: they keep their meaning); the program computes the same.
    Returns (prog, checks, arrays, scalars), renamed or not."""
    names = [n for n in sorted(arrays) + sorted(scalars) if re.search(r"\b%s\b" % n, prog)]
    if not names:
        return prog, checks, arrays, scalars
    old = rng.choice(names)
    for new in rng.sample(SHADOWS, len(SHADOWS)):
        text = prog.replace("[i]", "") if new == "i" else prog
        if re.search(r"\b%s\b(?!\s*\()" % new, text):
            continue
        rename = (lambda d: {new if k == old else k: v for k, v in d.items()})
        return (re.sub(r"\b%s\b" % old, new, prog), rename(checks), rename(arrays),
                rename(scalars))
    return prog, checks, arrays, scalars


def random_case(opt, k):
    """Program k of seed opt.seed: (tag, program, checks, arrays, scalars)."""
    rng = random.Random(opt.seed * 1000003 + k)
    nrng = np.random.default_rng([opt.seed, k])
    gen = Gen(rng)
    prog, checks = gen.program()
    n = rng.choice(SIZES)
    if any(f[0] == "edges" for f in gen.fill.values()):
        n = max(n, rng.choice([160, 257, 1000]))
    arrays = {name: make_data(V, nrng, dt, n, gen.fill.get(name))
              for name, dt in gen.inputs.items()}
    scalars = {s: gen.scalars[s][0] for s in gen.uses}
    # A random of its own: the other draws, and so the programs, stay.
    srng = random.Random("shadow %d %d" % (opt.seed, k))
    if srng.random() < 0.3:
        prog, checks, arrays, scalars = shadow(srng, prog, checks, arrays, scalars)
    return "fuzz_diff.%d.%d" % (opt.seed, k), prog, checks, arrays, scalars


def worker(job):
    opt, targets, item = job
    if isinstance(item, int):
        rerun = "--seed %d --only %d" % (opt.seed, item)
        try:
            tag, prog, checks, arrays, scalars = random_case(opt, item)
        except Exception as ex:  # the generator's fault: a failure, never a crash
            return ("fuzz_diff.%d.%d" % (opt.seed, item), "fail", "generator error: %r" % ex,
                    "  rerun: tests/fuzz_diff.py %s" % rerun, {}, set())
    else:
        tag, prog, checks, arrays, scalars = item
        rerun = "--regress-only"
    d = tempfile.mkdtemp(prefix="jitc-fuzzdiff-")
    try:
        try:
            outcome, why, counts = check_case(tag, prog, checks, arrays, scalars, targets, opt, d)
        except Exception as ex:  # a fault of the fuzzer is a failure too, never a crash
            outcome, why, counts = "fail", "fuzzer error: %r" % ex, {}
        text = ""
        if outcome == "fail":
            keep = os.path.join(opt.keep, tag)
            shutil.rmtree(keep, ignore_errors=True)
            for name, a in arrays.items():
                np.save(os.path.join(d, name + ".npy"), a)
            shutil.copytree(d, keep)
            text = ("  n = %d, inputs %s, scalars %s; program:\n    %s\n"
                    "  kept in %s; rerun: tests/fuzz_diff.py %s" % (
                        len(next(iter(arrays.values()))) if arrays else 0,
                        {a: str(v.dtype) for a, v in arrays.items()}, scalars,
                        prog.strip().replace("\n", "\n    "), keep, rerun))
        used = {f for f in FUNCS if f + "(" in prog}
        return tag, outcome, why, text, counts, used
    finally:
        shutil.rmtree(d, ignore_errors=True)


def availability(target):
    """The exit status of a one-line program on target: 0 when it runs, 69
    when this machine lacks the target (anything else is a failure)."""
    if not os.access(JITC, os.X_OK):
        sys.exit("fuzz_diff: %s is not built (set JITC)" % JITC)
    p = subprocess.run([JITC, "-t", target, "-q", "-n", "1", "--no-cache", "a = 1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode


def regression_cases():
    cases = []
    for name, prog, checks, arrays, scalars in REGRESSIONS:
        arrays = {a: np.array(v, dtype=NP[t]) for a, (t, v) in arrays.items()}
        cases.append(("fuzz_diff.regress." + name, prog, checks, arrays, scalars))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--targets", default="interp cpu cuda")
    ap.add_argument("--ulp", type=float, default=4)
    ap.add_argument("--numpy-ulp", type=float, default=4)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", default=os.path.join(ROOT, "build-fuzz-diff"))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--no-regress", action="store_true")
    ap.add_argument("--regress-only", action="store_true")
    opt = ap.parse_args()
    self_test()
    if opt.self_test:
        print("ok fuzz_diff.self_test")
    targets, broken = [], 0
    for t in opt.targets.split():
        rc = availability(t)
        if rc == 0:
            targets.append(t)
        elif rc == 69:
            print("skip fuzz_diff.%s: target not available here" % t)
        else:
            broken += 1
            print("FAIL fuzz_diff.%s: 'a = 1' exits with status %d" % (t, rc))
    if not targets:
        print("skip fuzz_diff: no target available")
        return 1 if broken else 0
    items = [] if opt.no_regress or opt.only is not None else regression_cases()
    if not opt.regress_only:
        items += [opt.only] if opt.only is not None else list(range(opt.n))
    stats = {"programs": 0, "failures": 0, "regress_failures": 0, "skipped": 0, "refused": 0,
             "outputs_exact": 0, "outputs_sign": 0, "outputs_ulp": 0}
    used_fns = set()
    jobs = [(opt, targets, it) for it in items]
    with multiprocessing.Pool(max(1, opt.jobs)) as pool:
        for tag, outcome, why, text, counts, used in pool.imap(worker, jobs, chunksize=2):
            used_fns |= used
            for key, v in counts.items():
                stats[key] = stats.get(key, 0) + v
            if outcome == "skip":
                stats["skipped"] += 1
                continue
            stats["programs"] += 1
            if outcome == "fail":
                stats["regress_failures" if ".regress." in tag else "failures"] += 1
                print("FAIL %s: %s" % (tag, why))
                print(text)
            elif ".regress." in tag:
                print("ok %s" % tag)
    summary = ("%d programs (%d refused as NumPy raises or as mistakes, %d skipped as "
               "undefined), outputs "
               "compared: %d exactly, %d with the sign of NaN, %d within %g ulp of interp and "
               "%g of NumPy; %d of %d functions used, targets %s, seed %d" % (
                   stats["programs"], stats["refused"], stats["skipped"],
                   stats["outputs_exact"], stats["outputs_sign"], stats["outputs_ulp"],
                   opt.ulp, opt.ulp + opt.numpy_ulp, len(used_fns), len(FUNCS),
                   " ".join(targets), opt.seed))
    summary += "; outputs by type: " + ", ".join(
        "%s %d" % (t, stats.get("type " + t, 0)) for t in STRONG)
    if V.skipped or V.not_generated:
        summary += "; not generated: %s" % ", ".join(V.skipped + V.not_generated)
    nfail = stats["failures"] + stats["regress_failures"] + broken
    if nfail:
        print("fuzz_diff: %d failures (%d regression cases, %d random programs); %s" % (
            nfail, stats["regress_failures"], stats["failures"], summary))
        return 1
    print("ok fuzz_diff (%s)" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
