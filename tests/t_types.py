#!/usr/bin/env python3
"""tests/t_types.py -- the one table of types, src/types.h.

- jitc.h numbers the types as the table's rows, in order (JITC_<ID> = k).
- No other file of the library, the command line or the Python package
  spells a list of types: a line naming two or more types as string
  literals fails here (the table is the only list; per-type code that is
  truly the type's own is fine).
- What the table says is what the stages do: every type's name and short
  name is a cast of the language, parses as a --dtype, and promotion of
  every pair of types is NumPy's (np.result_type), and so is the type of
  every function of two operands on every pair (the loop NumPy's ufunc
  chooses), through the checker's --emit types.
"""
import glob
import itertools
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC", os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc"))
fails = 0


def result(name, problems):
    global fails
    if problems:
        fails += 1
        print("FAIL types.%s: %s" % (name, "; ".join(problems[:8])))
    else:
        print("ok types.%s" % name)


def table():
    text = open(os.path.join(ROOT, "src", "types.h")).read()
    block = text[text.index("#ifdef TYPE"):]
    block = block[:block.index("#endif")]
    rows = []
    for m in re.finditer(r"^TYPE\((\w+),\s*\"(\w+)\",\s*\"(\w+)\",\s*(\w+),\s*(\w+),\s*(\d+)",
                         block, re.M):
        rows.append({"id": m.group(1), "name": m.group(2), "short": m.group(3),
                     "cname": m.group(4), "kind": m.group(5), "size": int(m.group(6))})
    return rows


def enum_numbers():
    text = open(os.path.join(ROOT, "src", "jitc.h")).read()
    body = re.search(r"typedef enum jitc_dtype \{(.*?)\} jitc_dtype;", text, re.S).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"JITC_(\w+)\s*=\s*(\d+)", body)}


def check_enum(rows):
    nums = enum_numbers()
    problems = []
    for k, r in enumerate(rows):
        if nums.get(r["id"]) != k:
            problems.append("JITC_%s is %s in jitc.h, row %d of types.h" % (r["id"], nums.get(r["id"]), k))
    extra = set(nums) - {r["id"] for r in rows} - {"NDTYPES"}
    problems += ["jitc.h has JITC_%s, types.h has no row for it" % e for e in sorted(extra)]
    result("enum_is_the_table", problems)


def sources():
    pats = ["src/*.[ch]", "src/*/*.[ch]", "cli/*.[ch]", "runtime/*.[ch]",
            "python/jitc/*.c", "python/jitc/*.h", "python/jitc/*.py", "python/jitc/*.pyi"]
    for p in pats:
        for f in sorted(glob.glob(os.path.join(ROOT, p))):
            if not f.endswith(os.path.join("src", "types.h")):
                yield f


def check_no_lists(rows):
    """A line with string literals naming two or more types is a list."""
    type_of = {}
    for r in rows:
        type_of[r["name"]] = type_of[r["short"]] = r["id"]
    quoted = re.compile(r"[\"']([a-z]+\d*)[\"']")
    problems = []
    for f in sources():
        rel = os.path.relpath(f, ROOT)
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            found = {type_of[w] for w in quoted.findall(line) if w in type_of}
            if len(found) >= 2:
                problems.append("%s:%d names %s" % (rel, n, ", ".join(sorted(found))))
    result("no_other_list", problems)


def run(args):
    return subprocess.run([JITC] + args, capture_output=True, text=True)


def check_names(rows):
    problems = []
    for r in rows:
        for spelling in {r["name"], r["short"]}:
            src = "int32" if r["name"] == "bool" else "bool"
            p = run(["--emit", "types", "--dtype", "a=" + src, "c = %s(a)" % spelling])
            if p.returncode != 0 or ("(%s a)" % r["short"]) not in p.stdout:
                problems.append("cast %s(a): exit %d, %r" % (spelling, p.returncode,
                                                              (p.stdout + p.stderr)[-200:]))
            # A --dtype is NumPy's reading where NumPy has one ("i8" is
            # int64 there, the cast i8() is int8).
            names = {x["name"] for x in rows}
            try:
                want = numpy_dtype(spelling).name if spelling != "bf16" else r["name"]
            except TypeError:
                want = r["name"]
            if want not in names:  # f16 is float128 to NumPy, which jitc lacks
                want = r["name"]
            p = run(["--emit", "types", "--dtype", "a=" + spelling, "c = a"])
            got = re.search(r"array a: (\w+)", p.stdout)
            if p.returncode != 0 or not got or got.group(1) != want:
                problems.append("--dtype a=%s: %r" % (spelling, (p.stdout + p.stderr)[-200:]))
    result("names_are_casts_and_dtypes", problems)


def numpy_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def check_promotion(rows):
    """Every pair through the checker: `c = a + b` with --dtype, against
    np.result_type; a pair NumPy cannot promote must be an error."""
    problems = []
    for x, y in itertools.product(rows, repeat=2):
        try:
            want = np.result_type(numpy_dtype(x["name"]), numpy_dtype(y["name"])).name
        except (TypeError, ImportError):
            want = None
        p = run(["--emit", "types", "--dtype", "a=" + x["name"], "--dtype", "b=" + y["name"],
                 "c = where(a == a, a, b)"])
        got = re.search(r"array c: (\w+)", p.stdout)
        got = got.group(1) if got and p.returncode == 0 else None
        if got != want or (want is None and p.returncode != 65):
            problems.append("%s with %s: jitc %s (exit %d), NumPy %s" % (
                x["name"], y["name"], got, p.returncode, want))
    result("promotion_is_numpy", problems)


UFUNC = {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide", "//": "floor_divide",
         "%": "remainder", "**": "power", "&": "bitwise_and", "|": "bitwise_or",
         "^": "bitwise_xor", "<<": "left_shift", ">>": "right_shift", "<": "less",
         "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
         "!=": "not_equal", "neg": "negative", "invert": "invert", "abs": "absolute",
         "arcsin": "arcsin"}
# Functions of the table that NumPy has as array functions, not ufuncs:
# np.round keeps an integer's type where np.rint makes it a float; copy and
# ones_like (numexpr's) keep any type.
NOT_UFUNC = {"round": np.round, "copy": np.copy, "ones_like": np.ones_like}


def ops_rows():
    """(name, kind, arity, spelling) of every OP row of ops.h."""
    text = open(os.path.join(ROOT, "src", "ops.h")).read()
    rows = []
    for m in re.finditer(r'^OP\(\s*(\w+),\s*"([^"]+)",\s*(\w+),\s*(\d),\s*(NULL|"[^"]*")', text, re.M):
        spell = None if m.group(5) == "NULL" else m.group(5).strip('"')
        rows.append((m.group(2), m.group(3), int(m.group(4)), spell))
    return rows


def alias_rows():
    """(alias, kind, arity, None) of every FN alias of ops.h whose name is
    NumPy's too (fabs, absolute, asin, ...): its row's kind and arity."""
    text = open(os.path.join(ROOT, "src", "ops.h")).read()
    ids = {m.group(1): (m.group(2), int(m.group(3))) for m in re.finditer(
        r'^OP\(\s*(\w+),\s*"[^"]+",\s*(\w+),\s*(\d),\s*NULL', text, re.M)}
    names = {m.group(1): m.group(2) for m in re.finditer(
        r'^OP\(\s*(\w+),\s*"([^"]+)"', text, re.M)}
    # An alias that is NumPy's other name of its row's ufunc (asin,
    # absolute) types as the row does: only one NumPy names otherwise (fabs).
    return [(m.group(1), ids[m.group(2)][0], ids[m.group(2)][1], None)
            for m in re.finditer(r'FN\("(\w+)",\s*(\w+)\)', text) if m.group(2) in ids
            and getattr(np, m.group(1), None) is not getattr(np, names[m.group(2)], None)]


def check_rules(rows):
    """Each operator and function of one type (both operands of it): the
    checker's result type against NumPy's ufunc on arrays of that type, or
    an error where NumPy has no loop for it."""
    problems = []
    for name, kind, arity, spell in ops_rows() + alias_rows():
        if kind not in ("OPERATOR", "FUNCTION"):
            continue
        uf = NOT_UFUNC.get(name) or getattr(np, UFUNC.get(name, name), None)
        if name not in NOT_UFUNC and (not isinstance(uf, np.ufunc) or uf.nin != arity):
            continue
        nout = uf.nout if isinstance(uf, np.ufunc) else 1
        for r in rows:
            try:
                x = np.ones(2, numpy_dtype(r["name"]))
                with np.errstate(all="ignore"):
                    out = uf(*([x] * arity))
                # a function of two results (frexp, modf): both types
                want = " ".join(o.dtype.name for o in (out if nout == 2 else [out]))
            except (TypeError, ImportError):
                want = None
            args = ", ".join("a" for _ in range(arity))
            if spell and arity == 2:
                prog = "c = a %s a" % spell
            elif spell:
                prog = "c = %sa" % spell
            else:
                prog = "%s = %s(%s)" % ("c, d" if nout == 2 else "c", name, args)
            p = run(["--emit", "types", "--dtype", "a=" + r["name"], prog])
            got = [re.search(r"array %s: (\w+)" % o, p.stdout) for o in "cd"[:nout]]
            got = " ".join(g.group(1) for g in got) if all(got) and p.returncode == 0 else None
            if got != want:
                problems.append("%s on %s: jitc %s, NumPy %s" % (prog, r["name"], got, want))
    result("rules_are_numpy", problems)


def check_mixed_rules(rows):
    """Each function of two operands of the table (NumPy's ufuncs) on every
    pair of types that promote: the checker's result type against the loop
    NumPy's ufunc chooses (copysign of int8 and uint8 is float16, though
    the pair promotes to int16); one program per first type."""
    problems = []
    fns = [name for name, kind, arity, spell in ops_rows()
           if kind == "FUNCTION" and arity == 2 and not spell
           and isinstance(getattr(np, UFUNC.get(name, name), None), np.ufunc)]
    for x in rows:
        args, lines, want = ["--dtype", "a=" + x["name"]], [], {}
        for j, y in enumerate(rows):
            try:
                a, b = np.ones(2, numpy_dtype(x["name"])), np.ones(2, numpy_dtype(y["name"]))
                np.result_type(a.dtype, b.dtype)
            except (TypeError, ImportError):
                continue  # jitc refuses the pair (check_promotion)
            args += ["--dtype", "b%d=%s" % (j, y["name"])]
            for f in fns:
                try:
                    with np.errstate(all="ignore"):
                        t = getattr(np, UFUNC.get(f, f))(a, b).dtype.name
                except TypeError:
                    continue
                out = "o%d" % len(lines)  # not c64: the cast
                lines.append("%s = %s(a, b%d)" % (out, f, j))
                want[out] = (t, "%s(%s, %s)" % (f, x["name"], y["name"]))
        p = run(["--emit", "types"] + args + ["\n".join(lines)])
        for out, (t, what) in want.items():
            got = re.search(r"^array %s: (\w+)" % out, p.stdout, re.M)
            got = got.group(1) if got and p.returncode == 0 else None
            if got != t:
                problems.append("%s: jitc %s, NumPy %s" % (what, got, t))
    result("mixed_rules_are_numpy", problems)


def check_weak(rows):
    """Python scalars (NEP 50): `a + W` and `a < W` for W an int that fits
    or not, a negative int, a float and a bool, against NumPy's arrays."""
    problems = []
    for r in rows:
        for w in ("1", "300", "-1", "1.5", "True", "70000", "1j", "2.5e-1J"):
            for op in ("+", "<", "*"):
                try:
                    x = np.ones(2, numpy_dtype(r["name"]))
                    with np.errstate(all="ignore"):
                        want = eval("x %s %s" % (op, w)).dtype.name
                except (OverflowError, TypeError, ImportError):
                    want = None
                p = run(["--emit", "types", "--dtype", "a=" + r["name"], "c = a %s %s" % (op, w)])
                got = re.search(r"array c: (\w+)", p.stdout)
                got = got.group(1) if got and p.returncode == 0 else None
                if got != want:
                    problems.append("a %s %s on %s: jitc %s, NumPy %s" % (op, w, r["name"], got, want))
    result("weak_scalars_are_numpy", problems)


COMPLEX_FNS = {"real": np.real, "imag": np.imag, "angle": np.angle, "conj": np.conj,
               "conjugate": np.conjugate, "abs": np.absolute}


def check_complex_functions(rows):
    """real, imag, angle, conj(ugate) and abs of an array of every type, and
    of Python scalars next to a float32 and an int8 array (real(2j) is a
    Python float, weak; conj(2j) and angle(3) are NumPy scalars, strong),
    against NumPy's functions."""
    problems = []
    for r in rows:
        for name, fn in COMPLEX_FNS.items():
            try:
                with np.errstate(all="ignore"):
                    want = np.asarray(fn(np.ones(2, numpy_dtype(r["name"])))).dtype.name
            except (TypeError, ImportError):
                want = None
            p = run(["--emit", "types", "--dtype", "a=" + r["name"], "c = %s(a)" % name])
            got = re.search(r"array c: (\w+)", p.stdout)
            got = got.group(1) if got and p.returncode == 0 else None
            if got != want:
                problems.append("%s(a) on %s: jitc %s, NumPy %s" % (name, r["name"], got, want))
    for arr in ("float32", "int8"):
        for name, fn in COMPLEX_FNS.items():
            for w in ("True", "3", "2.5", "2j"):
                x = np.ones(2, arr)
                want = (x + fn(eval(w))).dtype.name
                typed_plus(problems, arr, name, w, want)
    result("complex_functions_are_numpy", problems)


def typed_plus(problems, arr, name, w, want):
    """The type jitc gives c = a + name(w), a of dtype arr, against want."""
    p = run(["--emit", "types", "--dtype", "a=" + arr, "c = a + %s(%s)" % (name, w)])
    got = re.search(r"array c: (\w+)", p.stdout)
    got = got.group(1) if got and p.returncode == 0 else None
    if got != want:
        problems.append("%s a + %s(%s): jitc %s, NumPy %s" % (arr, name, w, got, want))


def check_like_of_scalars():
    """copy and ones_like of Python scalars next to arrays: their results are
    NumPy's 0-d arrays, strong (int8 plus copy(3) is int64, float32 plus
    ones_like(2.5) float64), against NumPy's."""
    problems = []
    for arr in ("bool", "int8", "uint16", "float16", "float32", "complex64"):
        for name in ("copy", "ones_like"):
            for w in ("True", "3", "-1", "2.5", "2j"):
                want = (np.ones(2, arr) + getattr(np, name)(eval(w))).dtype.name
                typed_plus(problems, arr, name, w, want)
    result("like_of_scalars_is_numpy", problems)


def check_complex_of_parts(rows):
    """complex(re, im), numexpr's function and Python's: the parts in the
    float type NumPy computes sqrt of their common type in, the complex type of that
    width (complex64 for float32 and narrower); of Python scalars a Python
    complex, weak next to an array."""
    problems = []
    for x, y in itertools.product(rows, repeat=2):
        try:
            both = np.result_type(numpy_dtype(x["name"]), numpy_dtype(y["name"]))
            part = np.sqrt(np.ones(2, both)).dtype
            want = None if part.kind == "c" else "complex64" if part.itemsize <= 4 else "complex128"
        except (TypeError, ImportError):
            want = None
        p = run(["--emit", "types", "--dtype", "a=" + x["name"], "--dtype", "b=" + y["name"],
                 "c = complex(a, b)"])
        got = re.search(r"array c: (\w+)", p.stdout)
        got = got.group(1) if got and p.returncode == 0 else None
        if got != want:
            problems.append("complex(%s, %s): jitc %s, want %s" % (x["name"], y["name"], got, want))
    for arr, prog, want in (("float32", "c = a + complex(1, 2)", "complex64"),
                            ("int8", "c = a + complex(1, 2.5)", "complex128"),
                            ("float32", "c = complex(a, 2)", "complex64"),
                            ("float16", "c = complex(a, 2)", "complex64"),
                            ("int32", "c = complex(a, 2)", "complex128")):
        p = run(["--emit", "types", "--dtype", "a=" + arr, prog])
        got = re.search(r"array c: (\w+)", p.stdout)
        got = got.group(1) if got and p.returncode == 0 else None
        if got != want:
            problems.append("%s on %s: jitc %s, want %s" % (prog, arr, got, want))
    result("complex_of_parts", problems)


def main():
    rows = table()
    if len(rows) < 5:
        result("table", ["types.h has %d rows" % len(rows)])
        return 1
    check_enum(rows)
    check_no_lists(rows)
    check_names(rows)
    check_promotion(rows)
    check_rules(rows)
    check_mixed_rules(rows)
    check_weak(rows)
    check_complex_functions(rows)
    check_complex_of_parts(rows)
    check_like_of_scalars()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
