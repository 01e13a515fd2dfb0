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

The oracle, tests/fuzz_oracle.py, evaluates the same program with NumPy 2
on the same inputs (its docstring says how, where it applies jitc's
documented differences from NumPy, and what it expects jitc to refuse).

Each program runs through the CLI on interp, cpu and, where a GPU is
present, cuda, over flat arrays of n elements; or (--shapes, a part of the
programs, drawn from the seed) through the Python
package's jitc.evaluate on interp and cpu, over random broadcast shapes of
up to 4 axes and strided views (tests/fuzz_shapes.py), the oracle then
computing on the views broadcast and laid out flat in C order.  Every target is compared with the oracle, and cpu and cuda
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
               [--no-regress | --regress-only] [--shapes FRACTION]
Environment: JITC (the binary; default $BUILD/jitc or build/jitc); the
programs over shapes import jitc (PYTHONPATH: tests/t_fuzz_diff.sh builds
it from the same build), and run flat, saying so, where there is none.
The regression cases (REGRESSIONS: programs this fuzzer found, reduced) run
first, every time.  Program k of seed S is reproducible alone: --seed S
--only k.  Prints "ok fuzz_diff.regress.NAME", "FAIL fuzz_diff.S.K: why"
(with the program, its inputs kept under --keep, default build-fuzz-diff/),
and a summary line.  Programs run in a pool of JOBS processes (default: one
per core).
"""
import argparse
import importlib.util
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
import fuzz_shapes
import fuzz_vocab
from fuzz_data import LN_MAX, SIZES, make_data
from fuzz_vocab import WB, WC, WF, WI, iscomplex, isfloat, isint, weak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = fuzz_vocab.jitc_binary()

np.seterr(all="ignore")

# The vocabulary (fuzz_vocab.py): the types and operators are `jitc --list`'s.
if not os.access(JITC, os.X_OK):
    sys.exit("fuzz_diff: %s is not built (set JITC)" % JITC)
V = fuzz_vocab.load(JITC)
from fuzz_oracle import (ASSIGNED, NAN_KEEP, Oracle, Refusal, Undefined,  # noqa: E402
                         result_type, special_values)
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



# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------



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
    sign of NaN where asked, an early overflow and a lost subnormal; the
    shapes (fuzz_shapes.self_test) cover what they are for."""
    fuzz_shapes.self_test()
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


def check_case(tag, prog, checks, arrays, scalars, targets, opt, d, shaped=None):
    """Runs one program on every target and the oracle: (outcome, text, counts),
    outcome "ok", "skip" (undefined in NumPy) or "fail".  shaped: None, or
    (S, views) for a program over shapes (fuzz_shapes.py: arrays are then
    the views broadcast to S, flat), run by jitc.evaluate on the host
    targets."""
    n = len(next(iter(arrays.values()))) if arrays else 1
    if shaped:
        n = math.prod(shaped[0])
        targets = [t for t in targets if t != "cuda"]
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prog))
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
    if shaped and not shaped[1] and ref is not None:  # no input: the outputs give the shape
        given = fuzz_shapes.outputs("outputs " + tag, shaped[0],
                                    {w: ref[w].dtype for w in written})
        shaped = (shaped[0], given)
    for t in targets:
        if shaped:
            rc, err, res = fuzz_shapes.run(t, prog, shaped[0], shaped[1], written, scalars,
                                           CASTS, NP, words)
        else:
            rc, err, res, args = run_jitc(t, prog, arrays, written, scalars, d, t, n)
        if refused is not None and need is not None:
            # The Python package words a mistake as an unknown name of its caller.
            if rc == 65 and (need in err or shaped):
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
        return "ok", "refused as NumPy raises", {"refused": 1, "shaped": 1 if shaped else 0}
    counts = {"outputs_" + h: 0 for h in ("exact", "sign", "ulp")}
    counts["shaped"] = 1 if shaped else 0
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


def resample(nrng, a, m):
    """m values of the kind of flat array a (its edge values, its constant):
    a's, permuted and repeated (a fresh array where a has none)."""
    if not len(a):
        return make_data(V, nrng, V.name_of[a.dtype], m)
    return np.resize(a[nrng.permutation(len(a))], m)


def random_case(opt, k):
    """Program k of seed opt.seed: (tag, program, checks, arrays, scalars,
    shaped), shaped None or (S, views) for a program over shapes
    (fuzz_shapes.py), whose arrays are then the views broadcast to S,
    flat."""
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
    shaped, used = None, fuzz_shapes.used(prog, arrays)
    if fuzz_shapes.chosen(opt.seed, k, opt.shapes):
        written = {m.group(1) for m in map(ASSIGNED.match, prog.splitlines()) if m}
        srng = np.random.default_rng([opt.seed, k, 1])
        full, views, flat = fuzz_shapes.make(
            opt.seed, k, {a: arrays[a].dtype for a in used}, written,
            lambda dt, m, name: resample(srng, arrays[name], m))
        n = math.prod(full)
        arrays = {a: flat[a] if a in flat else resample(srng, v, n) for a, v in arrays.items()}
        shaped = (full, views)
    return "fuzz_diff.%d.%d" % (opt.seed, k), prog, checks, arrays, scalars, shaped


def worker(job):
    opt, targets, item = job
    if isinstance(item, int):
        rerun = "--seed %d --only %d" % (opt.seed, item)
        try:
            tag, prog, checks, arrays, scalars, shaped = random_case(opt, item)
        except Exception as ex:  # the generator's fault: a failure, never a crash
            return ("fuzz_diff.%d.%d" % (opt.seed, item), "fail", "generator error: %r" % ex,
                    "  rerun: tests/fuzz_diff.py %s" % rerun, {}, set())
    else:
        tag, prog, checks, arrays, scalars = item
        shaped, rerun = None, "--regress-only"
    d = tempfile.mkdtemp(prefix="jitc-fuzzdiff-")
    try:
        try:
            outcome, why, counts = check_case(tag, prog, checks, arrays, scalars, targets, opt, d,
                                              shaped)
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
            if shaped:
                text += "\n  over shapes (jitc.evaluate): " + fuzz_shapes.describe(*shaped)
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
    ap.add_argument("--shapes", type=float, default=0.3,
                    help="the fraction of programs run over shapes through the Python package")
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
    if opt.shapes > 0 and importlib.util.find_spec("jitc") is None:
        print("skip fuzz_diff.shapes: no jitc package to import (tests/t_fuzz_diff.sh builds "
              "one): every program runs flat")
        opt.shapes = 0
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
    summary = ("%d programs (%d over shapes, %d refused as NumPy raises or as mistakes, "
               "%d skipped as undefined), outputs "
               "compared: %d exactly, %d with the sign of NaN, %d within %g ulp of interp and "
               "%g of NumPy; %d of %d functions used, targets %s, seed %d" % (
                   stats["programs"], stats.get("shaped", 0), stats["refused"], stats["skipped"],
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
