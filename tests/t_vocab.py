#!/usr/bin/env python3
"""tests/t_vocab.py -- `jitc --list`, the vocabulary the fuzzers and tools
read instead of keeping a copy of the tables (jitc_vocabulary(), src/listing.c).

- It exits 0 and prints one JSON object whose version is `jitc --version`'s.
- "types" is jitc.h's numbering of jitc_dtype (JITC_<NAME> = k, k from 0 to
  JITC_NDTYPES - 1) and the rows of src/types.h (name, short name, kind,
  size, character code, typestr, an integer's range).
- "ops" is every OP row of src/ops.h in order (name, kind, arity, rule,
  spelling, C library and LLVM names, flags), "aliases" its FN rows.
- "statuses" is jitc.h's jitc_status with the exit code each one's comment
  names.
- The functions it marks as allowed ulps (a float function of the C library
  that no LLVM instruction computes and that is no step: how
  tests/fuzz_diff.py tells them) with `**` are those docs/language.md's
  "Accuracy" lists as target-dependent.

Each comparison is also run on a copy of the listing with one thing
changed, which it must report.
"""
import copy
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC", os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc"))
fails = 0


def result(name, problems):
    global fails
    if problems:
        fails += 1
        print("FAIL vocab.%s: %s" % (name, "; ".join(problems[:8])))
    else:
        print("ok vocab.%s" % name)


def read(path):
    return open(os.path.join(ROOT, path), encoding="utf-8").read()


def enum(name):
    """(ENUMERATOR, value, comment) of a typedef enum of jitc.h, in order."""
    body = re.search(r"typedef enum %s \{(.*?)\} %s;" % (name, name), read("src/jitc.h"),
                     re.S).group(1)
    return [(m.group(1), int(m.group(2)), m.group(3) or "") for m in
            re.finditer(r"JITC_(\w+)\s*=\s*(\d+),?[ \t]*(?:/\*(.*?)\*/)?", body, re.S)]


def types_rows():
    block = read("src/types.h").split("#ifdef TYPE", 1)[1].split("#endif", 1)[0]
    cols = r"\s*([^,]+?)\s*"
    pat = re.compile(r"^TYPE\(" + ",".join([cols] * 12) + r",\s*(.+?)\)\s*$", re.M)
    return [m.groups() for m in pat.finditer(block)]


def ops_rows():
    text = read("src/ops.h")
    block = text.split("#ifdef OP", 1)[1].split("#endif", 1)[0]
    rows = []
    for line in block.splitlines():
        m = re.match(r"^OP\((.*)\)\s*$", line)
        if m:
            rows.append([c.strip() for c in re.findall(r'"[^"]*"|[^,]+', m.group(1))])
    fns = re.findall(r'FN\("(\w+)",\s*(\w+)\)', text.split("#ifdef FN", 1)[1])
    return rows, fns


def unquote(c):
    return None if c in ("NULL", "NOLIB") else c.strip('"')


C_LIMITS = {"0": 0, "1": 1}
for bits in (8, 16, 32, 64):
    C_LIMITS["INT%d_MIN" % bits] = -2**(bits - 1)
    C_LIMITS["INT%d_MAX" % bits] = 2**(bits - 1) - 1
    C_LIMITS["UINT%d_MAX" % bits] = 2**bits - 1


def check_types(v):
    problems = []
    dtypes = enum("jitc_dtype")
    numbered = [(n, k) for n, k, _ in dtypes if n != "NDTYPES"]
    count = dict((n, k) for n, k, _ in dtypes).get("NDTYPES", len(numbered))
    got = [(t["name"].upper(), t["dtype"]) for t in v["types"]]
    if got != numbered or [t["dtype"] for t in v["types"]] != list(range(count)):
        problems.append("types %s, jitc.h numbers %s (JITC_NDTYPES %d)" % (got, numbered, count))
    kinds = {"T_BOOL": "bool", "T_SINT": "signed", "T_UINT": "unsigned", "T_FLOAT": "float",
             "T_COMPLEX": "complex"}
    rows = types_rows()
    for t, r in zip(v["types"], rows):
        ident, name, short, _, kind, size, chr_, descr = r[:8]
        lo, hi = r[11], r[12]
        want = {"name": unquote(name), "short": unquote(short), "kind": kinds.get(kind),
                "size": int(size), "char": chr_.strip("'"), "typestr": unquote(descr)}
        if kind in ("T_BOOL", "T_SINT", "T_UINT"):
            want.update({"min": C_LIMITS.get(lo), "max": C_LIMITS.get(hi)})
        have = {k: t.get(k) for k in want}
        if have != want or set(t) - set(want) - {"dtype"}:
            problems.append("type %s: %s, types.h %s" % (t.get("name"), t, want))
    if len(rows) != len(v["types"]):
        problems.append("%d types listed, types.h has %d rows" % (len(v["types"]), len(rows)))
    return problems


FLAGS = {"augmented": "F_AUG", "integer_identity": "F_INT_ID", "no_identity": "F_NOID",
         "nan_argument": "F_NANARG", "step": "F_STEP", "real_only": "F_REAL"}


def check_ops(v):
    problems = []
    rows, fns = ops_rows()
    kinds = {"OPERATOR": "operator", "FUNCTION": "function", "CAST": "cast",
             "REDUCE": "reduction"}
    if len(rows) != len(v["ops"]):
        problems.append("%d ops listed, ops.h has %d rows" % (len(v["ops"]), len(rows)))
    for o, r in zip(v["ops"], rows):
        ident, name, kind, arity, spell, _, rule, libm, llvm, flags = r
        want = {"name": unquote(name), "kind": kinds[kind], "arity": int(arity),
                "rule": rule[2:].lower(), "spelling": unquote(spell), "libm": unquote(libm),
                "llvm": unquote(llvm)}
        want.update({k: f in flags for k, f in FLAGS.items()})
        have = {k: o.get(k) for k in want}
        if have != want:
            problems.append("op %s: %s, ops.h %s" % (o.get("name"), have, want))
        if ("F_TWO" in flags) != (o.get("results") == 2):
            problems.append("op %s: results %s, ops.h flags %s" % (name, o.get("results"), flags))
    by_id = {r[0]: unquote(r[1]) for r in rows}
    want = {alias: by_id[ident] for alias, ident in fns}
    if v["aliases"] != want:
        problems.append("aliases %s, ops.h's FN rows %s" % (v["aliases"], want))
    return problems


def check_statuses(v):
    problems = []
    want = []
    for ident, k, comment in enum("jitc_status"):
        code = re.search(r"\((?:exit )?(\d+)\)", comment)
        want.append({"status": k, "exit": int(code.group(1)) if code else 0})
    have = [{"status": s["status"], "exit": s["exit"]} for s in v["statuses"]]
    if have != want:
        problems.append("statuses %s, jitc.h %s" % (have, want))
    names = [s["name"] for s in v["statuses"]]
    if len(set(names)) != len(names) or not all(names):
        problems.append("status names %s" % names)
    return problems


def inexact(v):
    """The functions allowed ulps, as tests/fuzz_diff.py tells them."""
    return {o["name"] for o in v["ops"] if o["kind"] == "function" and o["rule"] == "float"
            and o.get("libm") and not o.get("llvm") and not o["step"]} | {"**"}


def check_accuracy(v):
    text = read("docs/language.md").split("\n## Accuracy", 1)[1]
    para = text.split("The other functions (", 1)[1].split(") depend on the target", 1)[0]
    names = set(re.findall(r"`([^`]+)`", para))
    names = {n for part in names for n in part.split(" / ")}
    named = {o["name"] for o in v["ops"]} | set(v["aliases"])
    listed = {v["aliases"].get(n, n) for n in names if n in named}
    # "the trigonometric and hyperbolic functions and their inverses"
    words = "sin cos tan sinh cosh tanh".split()
    listed |= {o["name"] for o in v["ops"] if o["name"].replace("arc", "") in words}
    have = inexact(v)
    problems = []
    if have != listed:
        problems.append("ulps allowed for %s; docs/language.md's Accuracy: %s" % (
            sorted(have), sorted(listed)))
    return problems


CHECKS = [("types_are_jitc_h", check_types), ("ops_are_ops_h", check_ops),
          ("statuses_are_jitc_h", check_statuses), ("accuracy_is_the_docs", check_accuracy)]


def self_test(v):
    """Each check reports a listing with one thing changed."""
    broken = []
    for name, check in CHECKS:
        w = copy.deepcopy(v)
        if name.startswith("types"):
            w["types"][1], w["types"][2] = w["types"][2], w["types"][1]
        elif name.startswith("ops"):
            w["ops"][3]["rule"] = "arith"
        elif name.startswith("statuses"):
            w["statuses"][2]["exit"] = 64
        else:
            next(o for o in w["ops"] if o["name"] == "cbrt")["llvm"] = "llvm.cbrt"
        if not check(w):
            broken.append("%s passes a changed listing" % name)
    result("self_test", broken)


def main():
    p = subprocess.run([JITC, "--list"], capture_output=True, text=True)
    if p.returncode != 0:
        result("list", ["jitc --list exits %d: %s" % (p.returncode, p.stderr.strip()[:300])])
        return 1
    try:
        v = json.loads(p.stdout)
    except ValueError as ex:
        result("list", ["not JSON: %s" % ex])
        return 1
    version = subprocess.run([JITC, "--version"], capture_output=True, text=True).stdout
    result("list", [] if version.split("\n")[0].split()[-1] == v.get("version") else
           ["version %r, jitc --version %r" % (v.get("version"), version.split("\n")[0])])
    for name, check in CHECKS:
        result(name, check(v))
    self_test(v)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
