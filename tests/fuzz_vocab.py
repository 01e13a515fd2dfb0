"""fuzz_vocab.py -- the language's vocabulary as tests/fuzz_diff.py uses it,
read from `jitc --list` (jitc_vocabulary(), src/listing.c), so that no test
keeps a copy of the table of types or of operators.

Types.  Every type of a kind the generator knows how to make values of and
compare (bool, signed and unsigned integers, floats, complex) is generated,
its NumPy dtype made from its typestr (a bare void, '<V2', by its name from
ml_dtypes: bfloat16).  A type of any other kind is left out and named in
Vocab.skipped, so that a new row of types.h never breaks the fuzzer; it is
generated once this file and the data of fuzz_data.py know its kind.

Operators and functions.  Every operator and function is generated whose
typing rule the generator knows (the RULE column of ops.h: arith, arith_nb,
truediv, bitwise, shift, compare, same, same_nb, float, promote, pred,
where, and part, conj, angle and complex: real, imag, conjugate, angle and
complex(re, im); like: copy and ones_like); others (ldexp's, and the functions of two results, frexp and modf:
tests/t_mixed_fns.py's) are named in Vocab.not_generated.  Aliases are
called as well as the canonical names; `**` and its aliases power and pow
are the rule "pow", for the integer powers' own rules.  The functions not
exactly rounded (docs/language.md, "Accuracy") are the float functions of
the C library that no LLVM instruction computes and that are no step
(nextafter): tests/t_vocab.py checks that this is the documented list; and
angle, C's atan2 (NumPy's own vectorised arctan2 differs in the last bits).
On complex operands (docs/language.md, "Complex numbers") the functions of
the C library's complex functions or of NumPy's formulas over them are not
exactly rounded either (Vocab.complex_inexact): every float function but
rint (which rounds each part), sign and the powers.  A function of ops.h
that NumPy has no complex loop for (real_only) is refused on complex.

Typing.  result_type() gives the type of an operation as NumPy 2 gives it
(NEP 50 weak scalars; ml_dtypes' promotions for bfloat16), by asking NumPy's
ufunc of the operation on operands of those types, and the vocabulary's
rule where jitc's is its own (the rule "same": floor, ceil and trunc of
an integer keep its type).  The generator uses it to steer (it avoids
what it expects to be refused); the oracle decides.
"""
import ast
import functools
import json
import math
import os
import subprocess

import numpy as np

WB, WI, WF, WC = "wbool", "wint", "wfloat", "wcomplex"  # weak (Python-scalar) kinds
# The kinds of types.h the generator knows: 0 bool, 1 integer, 2 float, 3 complex.
KNOWN_KINDS = {"bool": 0, "signed": 1, "unsigned": 1, "float": 2, "complex": 3}
# The rules of ops.h the generator types (see result_type); "pow" is `**`'s.
GEN_RULES = {"arith", "arith_nb", "truediv", "bitwise", "shift", "compare", "same", "same_nb",
             "float", "promote", "pred", "where", "pow", "part", "conj", "angle", "complex",
             "like"}

# Python's syntax (which the oracle reads the programs with) to NumPy's ufuncs.
BIN_UFUNC = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
             ast.Div: np.true_divide, ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder,
             ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor,
             ast.LShift: np.left_shift, ast.RShift: np.right_shift, ast.Pow: np.power}
CMP_UFUNC = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
             ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}
UN_UFUNC = {ast.USub: np.negative, ast.Invert: np.invert, ast.UAdd: np.positive}


def weak(t):
    return t in (WB, WI, WF, WC)


def operator_ufunc(spelling, arity):
    """NumPy's ufunc of an operator of the language, read as Python reads it
    (None for a spelling Python's syntax does not have)."""
    try:
        e = ast.parse("a %s b" % spelling if arity == 2 else "%s a" % spelling,
                      mode="eval").body
    except SyntaxError:
        return None
    if isinstance(e, ast.BinOp):
        return BIN_UFUNC.get(type(e.op))
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        return CMP_UFUNC.get(type(e.ops[0]))
    if isinstance(e, ast.UnaryOp):
        return UN_UFUNC.get(type(e.op))
    return None


def numpy_dtype(t):
    """NumPy's dtype of a type of the listing, or None (ml_dtypes missing)."""
    if t["typestr"][1] != "V":
        return np.dtype(t["typestr"])
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(getattr(ml_dtypes, t["name"]))


def isfloat(dt):
    """A float dtype, NumPy's or ml_dtypes' (whose kind is 'V')."""
    dt = np.dtype(dt)
    return dt.kind == "f" or (dt.kind == "V" and dt.names is None and dt.name in FLOAT_NAMES)


def isint(dt):
    return np.dtype(dt).kind in "iu"


def iscomplex(dt):
    return np.dtype(dt).kind == "c"


FLOAT_NAMES = set()  # the float types' names, filled by Vocab()
STEPS = set()  # the ufuncs of the ops that step a float's own bits (nextafter)


def finfo(dt):
    dt = np.dtype(dt)
    if dt.kind == "f":
        return np.finfo(dt)
    import ml_dtypes
    return ml_dtypes.finfo(dt)


def apply(ufunc, *args):
    """ufunc of the operands (arrays, NumPy scalars, Python scalars) as jitc
    defines it: NumPy's, but where the result is a float type NumPy has no
    loops of its own for (ml_dtypes' bfloat16), the ufunc computes in
    float32 on the operands widened exactly and rounds once to the type
    (docs/language.md; ml_dtypes' loops mostly do the same, but its sign of
    -0.0 is -0.0, float32's +0.0).  A step (nextafter) steps the type's own
    bits, as ml_dtypes' loop does, and gives y for equal operands (C99)."""
    py = (bool, int, float, complex)
    rt = ufunc(*[a if isinstance(a, py) else np.asarray(a).reshape(-1)[:0]
                 for a in args]).dtype
    if ufunc in STEPS:
        # equal operands give y: C99's rule, NumPy 2.5's for float16 (2.4
        # gives x), which jitc follows for every float type
        r = np.asarray(ufunc(*args))
        y = np.asarray(args[1])
        return np.where(np.asarray(args[0]) == y, y.astype(r.dtype), r)
    if not (isfloat(rt) and rt.kind == "V"):
        return ufunc(*args)
    wide = [a if isinstance(a, py) or np.asarray(a).dtype != rt else
            np.asarray(a).astype(np.float32) for a in args]
    r = np.asarray(ufunc(*wide))
    return r.astype(rt) if r.dtype == np.float32 else r


class Vocab:
    def __init__(self, listing):
        self.listing = listing
        self.strong, self.skipped = [], []
        self.np, self.kind, self.lo, self.hi = {}, {WB: 0, WI: 1, WF: 2, WC: 3}, {}, {}
        self.by_typestr = {}
        for t in listing["types"]:
            dt = numpy_dtype(t) if t["kind"] in KNOWN_KINDS else None
            if dt is None:
                self.skipped.append(t["name"])
                continue
            name = t["name"]
            self.strong.append(name)
            self.np[name] = dt
            self.kind[name] = KNOWN_KINDS[t["kind"]]
            self.by_typestr.setdefault(t["typestr"], name)
            if t["kind"] == "float":
                FLOAT_NAMES.add(dt.name)
            if "min" in t:
                self.lo[dt], self.hi[dt] = t["min"], t["max"]
        self.name_of = {dt: n for n, dt in self.np.items()}
        # a complex type's part: its float type of the same width (complex64: float32)
        self.part = {n: self.name_of.get(np.dtype(dt.char.lower())) for n, dt in self.np.items()
                     if iscomplex(dt)}
        self.casts = {}
        for t in listing["types"]:
            if t["name"] in self.np:
                self.casts[t["name"]] = self.casts[t["short"]] = t["name"]
        self._ops()

    def _ops(self):
        ops = {o["name"]: o for o in self.listing["ops"]}
        self.binops, self.unops, self.funcs = {}, {}, {}
        self.aug_ops, self.inexact, self.ufunc = [], set(), {}
        self.not_generated = []
        self.real_only, self.complex_inexact = set(), set()

        def rule(o):
            return "pow" if o["name"] == "**" else o["rule"]

        for o in self.listing["ops"]:
            if o["kind"] == "operator":
                if rule(o) not in GEN_RULES or not operator_ufunc(o["spelling"], o["arity"]):
                    self.not_generated.append(o["name"])
                    continue
                (self.binops if o["arity"] == 2 else self.unops)[o["spelling"]] = rule(o)
                if o["real_only"]:
                    self.real_only.add(o["spelling"])
                if o["augmented"]:
                    self.aug_ops.append(o["spelling"])
            elif o["kind"] == "function":
                if rule(o) not in GEN_RULES or "results" in o or "second_result_of" in o:
                    if "second_result_of" not in o:
                        self.not_generated.append(o["name"])
                    continue
                self.funcs[o["name"]] = (o["arity"], rule(o))
                if o["rule"] == "float" and o.get("libm") and not o.get("llvm") and \
                        not o["step"]:
                    self.inexact.add(o["name"])
                if o["rule"] == "angle":
                    self.inexact.add(o["name"])
                if o["real_only"]:
                    self.real_only.add(o["name"])
                elif (o["rule"] == "float" and o.get("llvm") != "llvm.roundeven") or \
                        o["name"] == "sign":
                    self.complex_inexact.add(o["name"])
        if "-" in self.unops:
            # Unary "+" is the parser's (NumPy's positive), no row of ops.h;
            # it refuses what unary "-" refuses.
            self.unops["+"] = self.unops["-"]
        for alias, target in sorted(self.listing["aliases"].items()):
            o = ops[target]
            if target in self.funcs:
                self.funcs[alias] = self.funcs[target]
                for names in (self.inexact, self.real_only, self.complex_inexact):
                    if target in names:
                        names.add(alias)
                # An alias that is NumPy's name of a ufunc with no complex
                # loop (fabs, where abs is the magnitude) is refused on
                # complex, as NumPy refuses it.
                uf = getattr(np, alias, None)
                if isinstance(uf, np.ufunc):
                    try:
                        with np.errstate(all="ignore"):
                            uf(np.ones(1, np.complex128))
                    except TypeError:
                        self.real_only.add(alias)
            elif o["kind"] == "operator" and o["arity"] == 2 and o["spelling"] in self.binops:
                self.funcs[alias] = (2, self.binops[o["spelling"]])  # power(x, y) is x ** y
                self.complex_inexact.add(alias)
        # fabs is abs over np.fabs's loops, which are float alone: its
        # own typing and its own ufunc, not abs's.
        if "fabs" in self.funcs:
            self.funcs["fabs"] = (1, "float")
        for name in self.funcs:
            row = self.listing["aliases"].get(name, name)
            target = "fabs" if name == "fabs" else row
            uf = getattr(np, target, None) if target in self.funcs else \
                operator_ufunc(ops[row]["spelling"], 2)
            self.ufunc[name] = uf if isinstance(uf, np.ufunc) else None
            if ops[row]["step"] and self.ufunc[name]:
                STEPS.add(uf)
        self.reductions = sorted({o["name"] for o in self.listing["ops"]
                                  if o["kind"] == "reduction"} |
                                 {a for a, t in self.listing["aliases"].items()
                                  if ops[t]["kind"] == "reduction"})
        self.functions = sorted({o["name"] for o in self.listing["ops"]
                                 if o["kind"] == "function" and "second_result_of" not in o} |
                                {a for a, t in self.listing["aliases"].items()
                                 if ops[t]["kind"] != "reduction"})

    # -- typing ------------------------------------------------------------

    def strongify(self, t):
        return {WB: "bool", WI: "int64", WF: "float64", WC: "complex128"}.get(t, t)

    def is_complex(self, t):
        return t == WC or (not weak(t) and iscomplex(self.np[t]))

    def combine(self, ts):
        """NumPy 2 (NEP 50) result type of operands: strong ones promote as
        np.result_type does (None where NumPy refuses), weak ones then take
        the strong type as NumPy's ufuncs take them (docs/language.md; a
        Python float next to bfloat16 is float32); weak ones only: the widest."""
        strong = [t for t in ts if not weak(t)]
        weaks = [t for t in ts if weak(t)]
        if not strong:
            return max(weaks, key=lambda t: self.kind[t])
        try:
            r = self.name_of.get(np.result_type(*[self.np[t] for t in strong]))
        except TypeError:
            return None
        for w in sorted(weaks, key=lambda t: self.kind[t]):
            if r is None:
                break
            r = self.name_of.get(np.add(np.zeros(0, self.np[r]), self.sample(w)).dtype)
        return r

    def sample(self, t):
        return {WB: True, WI: 1, WF: 0.5, WC: 1j}[t] if weak(t) else np.ones(2, self.np[t])

    def numpy_type(self, fn, ts):
        """The type of fn's result on operands of types ts, as NumPy gives
        it; None where NumPy raises or gives a type jitc lacks."""
        try:
            with np.errstate(all="ignore"):
                r = np.asarray(fn(*[self.sample(t) for t in ts]))
        except (TypeError, ValueError, OverflowError):
            return None
        return self.name_of.get(r.dtype)

    def result_type(self, rule, ts, name=None):
        """The type of an operation (name: the function called, or the
        operator's spelling) on operands of types ts, or None when jitc
        must refuse it (conservatively: a few legal but borderline forms
        are never generated).  Operators of weak operands only are weak."""
        cplx = any(self.is_complex(t) for t in ts)
        if cplx and (name in self.real_only or rule in ("bitwise", "shift")):
            return None  # NumPy has no complex loop: refused
        if rule == "part" and all(weak(t) for t in ts):  # real(2j), imag(True): Python's
            return {WC: WF, WF: WF, WI: WI, WB: WI}[ts[0]]
        if rule == "complex":
            if cplx:
                return None  # complex parts are an error
            if all(weak(t) for t in ts):
                return WC  # Python's complex(re, im)
            t = self.combine(ts)
            if t is None:
                return None
            f = np.sqrt(np.zeros(0, self.np[t])).dtype  # the float type sqrt computes t in
            return "complex64" if f.itemsize <= 4 else "complex128"
        if cplx and rule == "compare" and all(weak(t) for t in ts) and name not in ("==", "!="):
            return None  # Python's complex numbers have no order
        if all(weak(t) for t in ts) and rule in ("arith", "arith_nb", "truediv", "bitwise",
                                                 "shift", "pow") and name not in self.funcs:
            r = self.combine(ts)
            return WF if rule == "truediv" and not cplx else r
        if all(weak(t) for t in ts):
            ts = [self.strongify(t) for t in ts]  # a function's weak operands: strong
        if rule == "where":  # where(cond, x, y): cond of any type
            r = self.combine(ts[1:])
            return r and self.strongify(r)
        if self.combine(ts) is None and rule != "pred":
            return None
        if rule == "like":  # copy, ones_like: the operand's type (np.copy, np.ones_like)
            return self.strongify(self.combine(ts))
        if rule == "same" and not cplx:  # abs of complex is its part's type: NumPy's
            r = self.strongify(self.combine(ts))
            return "float16" if name == "round" and r == "bool" else r
        if rule == "pred":
            return "bool"
        if rule == "part":
            return self.part.get(ts[0], ts[0])
        if rule in ("conj", "angle"):
            name = None
            fn = np.conjugate if rule == "conj" else np.angle
        else:
            fn = self.ufunc.get(name) if name in self.funcs else \
                operator_ufunc(name, len(ts)) if name else None
        if fn is None:
            if rule == "promote":
                fn = lambda *a: np.minimum(np.maximum(*a[:2]), *a[2:]) if len(a) > 2 \
                    else np.minimum(*a)  # noqa: E731
            elif rule == "float":
                # fma: NumPy has none; its operands promoted, then the
                # least float type holding them (sqrt's loop choice).
                fn = lambda *a: np.sqrt(a[0] + a[1] + a[2] if len(a) == 3 else a[0])  # noqa
            else:
                return None
        return self.numpy_type(fn, ts)


def jitc_binary():
    """The jitc binary the fuzzers test: $JITC, else $BUILD/jitc (build/jitc)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("JITC") or os.path.join(root, os.environ.get("BUILD", "build"), "jitc")


@functools.lru_cache(maxsize=None)
def load(jitc):
    """The vocabulary of binary `jitc` (read once per process)."""
    p = subprocess.run([jitc, "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("fuzz: %s --list exits %d: %s" % (jitc, p.returncode,
                                                          p.stderr.decode()[:300]))
    return Vocab(json.loads(p.stdout))


def float_thresholds(dt):
    """Where a float type's functions overflow or underflow: the logarithms
    of its largest value and smallest subnormal (exp, exp2, power of 10,
    sinh and cosh one ln 2 later), as float64 values."""
    fi = finfo(dt)
    top, sub = float(fi.max), float(fi.smallest_subnormal)
    out = []
    for lg in (math.log, math.log2, math.log10):
        out += [lg(top), -lg(1 / sub)]
    out += [math.log(top) + math.log(2), math.log(2 * top)]
    return out
