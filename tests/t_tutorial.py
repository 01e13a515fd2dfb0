#!/usr/bin/env python3
"""tests/t_tutorial.py -- docs/tutorial.md's steps are the steps the code
needs, and every link from the docs into the source names what is there.

steps: the section "Adding a math function" of docs/tutorial.md is applied,
  as written, to a copy of the source tree.  Each step is a fenced block
  (```c, ```python, ```markdown) after a paragraph that names the file with a
  link and the place with "after the line starting with `TEXT`" or "at its
  end" ("In the same file" keeps the previous step's file).  The copy is
  built from nothing, and then:
  - the new function (the NAME of the ops.h row the section adds) runs on
    interp and cpu over random data, edge cases and sizes 0, 1 and odd,
    compared with Python's math module (the C library's float64 function),
    dtype, NaN sign and -0.0 included; bool is refused; --emit cuda calls the
    C library's name and NVRTC compiles it (--emit ptx);
  - the copy's tests/t_diff.py has a case of it and passes;
    tests/fuzz_diff.py knows its arity and rule, and its oracle
    (tests/fuzz_oracle.py) the reference;
    docs/language.md's table of functions has its line;
  - `make golden` (t_golden.sh with UPDATE=1) rewrites no golden file and
    reports no failure (a golden command that fails leaves its file as it is).
  Before that, the function must be unknown to the tree as it is: the steps
  would prove nothing otherwise.  `--drop K` leaves step K out (to see this
  test fail when a step is missing); `--keep` keeps the copy.

links: every relative link of docs/*.md and README.md leads to a file that
  exists (and to a heading of it, for a #fragment of a .md file); a link
  whose text is a function, [`name()`](../src/file.c), leads to the file that
  defines it.

Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
Environment: BUILD, JITC (the built tree's binary, for the check that the
function is new), PYTHON.
"""
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_docs import defines, link_problems, slug  # noqa: E402  the docs' link checker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(ROOT, "docs", "tutorial.md")
SECTION = "## Adding a math function"
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
PYTHON = os.environ.get("PYTHON", sys.executable)
fails = 0


def ok(name):
    print("ok tutorial." + name)


def fail(name, why):
    global fails
    fails += 1
    print("FAIL tutorial.%s: %s" % (name, why))


def skip(name, why):
    print("skip tutorial.%s: %s" % (name, why))


# ---------------------------------------------------------------------------
# The steps, from the tutorial's text

class Step:
    def __init__(self, k, path, anchor, lang, lines):
        self.k, self.path, self.anchor, self.lang, self.lines = k, path, anchor, lang, lines


def section_text():
    text = open(TUTORIAL, encoding="utf-8").read()
    if SECTION not in text:
        return None
    rest = text.split(SECTION, 1)[1]
    m = re.search(r"^## ", rest, re.M)
    return rest[:m.start()] if m else rest


LINK = re.compile(r"\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)")
ANCHOR = re.compile(r"after the line starting with\s+(`+)\s?(.+?)\s?\1", re.S)
AT_END = re.compile(r"\bat (?:its|the) end\b")


def parse_steps(sec):
    """The steps of the section: (file, anchor or None for the end, block),
    each block with the paragraph just before it."""
    steps, para, last, path = [], [], [], None
    lines = sec.split("\n")
    n = 0
    while n < len(lines):
        m = re.match(r"^(\s*)```(\w+)\s*$", lines[n])
        if not m:
            if lines[n].strip():
                para.append(lines[n].strip())
            elif para:
                last, para = para, []
            n += 1
            continue
        indent, lang = m.group(1), m.group(2)
        body = []
        n += 1
        while n < len(lines) and lines[n].strip() != "```":
            body.append(lines[n][len(indent):] if lines[n].startswith(indent) else lines[n].lstrip())
            n += 1
        n += 1
        text = " ".join(para or last)
        para, last = [], []
        if lang not in ("c", "python", "markdown"):
            continue
        links = LINK.findall(text)
        if links:
            path = os.path.normpath(os.path.join("docs", links[0]))
        elif "same file" not in text:
            path = None
        a = ANCHOR.search(text)
        anchor = a.group(2) if a else None
        if anchor is None and not AT_END.search(text):
            path = None
        steps.append(Step(len(steps) + 1, path, anchor, lang, body))
    return steps


def apply_step(scratch, st):
    """None, or why the step cannot be applied."""
    if st.path is None:
        return "its text names no file, or no place (after the line starting with `...`, at its end)"
    p = os.path.join(scratch, st.path)
    if not os.path.isfile(p):
        return "%s does not exist" % st.path
    lines = open(p, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if st.anchor is None:
        lines += st.lines
    else:
        at = [k for k, l in enumerate(lines) if l.lstrip().startswith(st.anchor)]
        if len(at) != 1:
            return "%d lines of %s start with %r (want one)" % (len(at), st.path, st.anchor)
        lines[at[0] + 1:at[0] + 1] = st.lines
    open(p, "w", encoding="utf-8").write("\n".join(lines) + "\n")
    return None


# ---------------------------------------------------------------------------
# The copy and its checks

def copy_tree(scratch):
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                               check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d in ("src", "cli", "runtime", "grammar", "tests", "docs", "scripts"):
            for base, _, names in os.walk(os.path.join(ROOT, d)):
                files += [os.path.relpath(os.path.join(base, f), ROOT) for f in names]
        files.append("Makefile")
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)) or f.startswith("build"):
            continue
        dst = os.path.join(scratch, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), dst)


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JITC") and k not in ("BUILD", "SAN", "MAKEFLAGS", "MFLAGS")}
    return env


def run(cmd, cwd, env=None, timeout=300):
    return subprocess.run(cmd, cwd=cwd, env=env or clean_env(), capture_output=True, text=True,
                          timeout=timeout)


def edge_values(dt):
    fi = np.finfo(dt)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, float(fi.tiny), -float(fi.tiny),
         float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.max), -float(fi.max),
         1e-30, -1e-30, 0.5, -0.5, 0.84375, -0.84375, 1.25, 2.857, 3.5, 5.9, 6.0, -6.0, 10.0, 26.0,
         -26.0, 1.0, -1.0, float(fi.eps), 3e-8]
    return np.array(v, dtype=dt)


def ulp_diff(got, exp):
    """Ulps between finite floats of one type (sign-magnitude ordered)."""
    it = np.int32 if got.dtype == np.float32 else np.int64
    def ordered(x):
        b = x.view(it).astype(np.int64)
        return np.where(b < 0, np.int64(np.iinfo(it).min) - b, b)
    return np.abs(ordered(got) - ordered(exp))


def reference(fn, x):
    t = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return np.array([fn(float(v)) for v in x.astype(t)], dtype=np.float64).astype(t)


def compare(got, exp, x, ulps):
    """None, or what differs."""
    if got.dtype != exp.dtype:
        return "dtype %s, expected %s" % (got.dtype, exp.dtype)
    if got.shape != exp.shape:
        return "shape %s, expected %s" % (got.shape, exp.shape)
    for k in range(got.size):
        g, e = got[k], exp[k]
        if np.isnan(e):
            # the NaN argument itself, sign kept (F_NANARG)
            good = np.isnan(g) and (not np.isnan(x[k]) or np.signbit(g) == np.signbit(x[k]))
        elif e == 0 or np.isinf(e):
            good = g == e and np.signbit(g) == np.signbit(e)
        else:
            good = np.isfinite(g) and ulp_diff(got[k:k + 1], exp[k:k + 1])[0] <= ulps
        if not good:
            return "element %d: %s(%r) is %r, expected %r" % (k, "f", x[k].item(), g.item(), e.item())
    return None


def check_function(scratch, name, arity, jitc, targets):
    fn = getattr(math, name, None)
    if fn is None or arity != 1:
        skip("run", "no math.%s of one argument to compare %s with" % (name, name))
        return
    rng = np.random.default_rng(12)
    tmp = os.path.join(scratch, "run")
    os.makedirs(tmp, exist_ok=True)
    for dt in (np.float32, np.float64, np.int32):
        if dt == np.int32:
            data = {"random": rng.integers(-10, 11, 1001).astype(dt),
                    "edges": np.array([0, 1, -1, 2**31 - 1, -2**31], dtype=dt)}
        else:
            data = {"random": np.concatenate([rng.standard_normal(1000) * 2,
                                              rng.uniform(-7, 7, 1000)]).astype(dt),
                    "edges": edge_values(dt)}
        for n in (0, 1, 37):
            data["size %d" % n] = rng.standard_normal(n).astype(dt) if dt != np.int32 \
                else rng.integers(-3, 4, n).astype(dt)
        for what, x in data.items():
            inp, out = os.path.join(tmp, "a.npy"), os.path.join(tmp, "c.npy")
            np.save(inp, x)
            exp = reference(fn, x)
            for t in targets:
                label = "run.%s.%s.%s" % (t, np.dtype(dt).name, what.replace(" ", ""))
                if os.path.exists(out):
                    os.remove(out)
                p = run([jitc, "-t", t, "-q", "--in", "a=" + inp, "--out", "c=" + out,
                         "c = %s(a)" % name], tmp)
                if p.returncode != 0:
                    fail(label, "exit %d: %s" % (p.returncode, p.stderr.strip().split("\n")[0]))
                    continue
                why = compare(np.load(out), exp, x, 0 if (t == "interp" and dt != np.float32) else 4)
                if why:
                    fail(label, why)
                else:
                    ok(label)
    # bool computes in float16, as NumPy's loops for sqrt: erf(True) rounded
    p = run([jitc, "-t", "interp", "-q", "-n", "3", "--dtype", "bool", "--out",
             "c=" + os.path.join(tmp, "cb.npy"), "c = %s(a)" % name], tmp)
    if p.returncode == 0 and np.load(os.path.join(tmp, "cb.npy")).dtype == np.float16 and \
            float(np.load(os.path.join(tmp, "cb.npy"))[0]) == float(np.float16(math.erf(1.0))):
        ok("run.bool_float16")
    else:
        fail("run.bool_float16", "exit %d: %s" % (p.returncode, p.stderr.strip()[:200]))
    p = run([jitc, "--emit", "cuda", "--dtype", "float32", "c = %s(a)" % name], tmp)
    if p.returncode == 0 and re.search(r"\b%sf\(" % name, p.stdout):
        ok("emit_cuda")
    else:
        fail("emit_cuda", "exit %d, no call of %sf: %s" % (p.returncode, name, p.stderr[:200]))
    for dt in ("float32", "float64"):
        p = run([jitc, "--emit", "ptx", "--arch", "sm_90", "--dtype", dt, "c = %s(a)" % name], tmp)
        if p.returncode == 69:
            skip("emit_ptx." + dt, "no NVRTC here")
        elif p.returncode == 0 and ".entry" in p.stdout:
            ok("emit_ptx." + dt)
        else:
            fail("emit_ptx." + dt, "exit %d: %s" % (p.returncode, p.stderr.strip()[:300]))


def check_tests(scratch, name, arity, jitc, targets):
    """The copy's differential tests know the function, and pass."""
    probe = ("import sys; sys.path.insert(0, 'tests')\n"
             "import numpy as np\n"
             "def show(f):\n"
             "    try:\n"
             "        print(f())\n"
             "    except Exception as e:\n"
             "        print('%%s: %%s' %% (type(e).__name__, e))\n"
             "show(lambda: sum(c[0] == %r for c in __import__('t_diff').UNARY + __import__('t_diff').BINARY))\n"
             "show(lambda: __import__('fuzz_diff').FUNCS.get(%r))\n"
             "show(lambda: np.asarray(__import__('fuzz_oracle').UFUNC[%r](np.array([0.5], np.float32))).dtype)\n"
             ) % (name, name, name)
    p = run([PYTHON, "-c", probe], scratch)
    got = (p.stdout.split("\n") + ["", "", ""])[:3]
    arity_rule = "(%d, '" % arity
    for label, value, good, want, what in (
            ("t_diff_case", got[0], got[0] == "1", "1", "tests/t_diff.py's cases of %s" % name),
            ("fuzz_diff_funcs", got[1], got[1].startswith(arity_rule), arity_rule + "RULE')",
             "tests/fuzz_diff.py's FUNCS[%r]" % name),
            ("fuzz_diff_ufunc", got[2], got[2] == "float32", "float32",
             "tests/fuzz_oracle.py's UFUNC[%r] of float32" % name)):
        if good:
            ok(label)
        else:
            fail(label, "%s: %s (want %s)" % (what, value or p.stderr.strip()[-300:], want))
    env = clean_env()
    env.update(JITC=jitc, JITC_TARGETS=" ".join(targets))
    p = run(["nice", PYTHON, "tests/t_diff.py"], scratch, env, timeout=600)
    bad = [l for l in p.stdout.split("\n") if l.startswith("FAIL")]
    if p.returncode != 0 or bad:
        fail("t_diff", "the copy's t_diff.py fails: %s" % ("\n".join(bad[:5]) or p.stderr[-400:]))
    else:
        ok("t_diff")


def check_language(scratch, name):
    text = open(os.path.join(scratch, "docs", "language.md"), encoding="utf-8").read()
    m = re.search(r"^## Functions\n(.*?)^## ", text, re.M | re.S)
    if m and re.search(r"^\| `%s`" % name, m.group(1), re.M):
        ok("language_md")
    else:
        fail("language_md", "docs/language.md's table of functions has no line for %s" % name)


def check_golden(scratch, jitc):
    env = clean_env()
    env.update(JITC=jitc, UPDATE="1")
    p = run(["sh", "tests/t_golden.sh"], scratch, env)
    changed = []
    for d in ("tests/golden", "tests/errors"):
        for f in sorted(glob.glob(os.path.join(ROOT, d, "*"))):
            g = os.path.join(scratch, d, os.path.basename(f))
            if not os.path.exists(g) or open(f, "rb").read() != open(g, "rb").read():
                changed.append(os.path.relpath(f, ROOT))
    # A golden command that fails is reported, and its file left as it was.
    bad = [l for l in p.stdout.split("\n") if l.startswith("FAIL")]
    if p.returncode != 0 or changed or bad:
        fail("golden", "make golden changes %s" % (changed[:5] or bad[:5] or p.stdout[-300:]))
    else:
        ok("golden")


def function_known(jitc, name, cwd):
    p = run([jitc, "-t", "interp", "-q", "-n", "1", "c = %s(a)" % name], cwd)
    return "unknown function" not in p.stderr


def steps_test(drop, keep):
    sec = section_text()
    if sec is None:
        fail("steps", "docs/tutorial.md has no section %r" % SECTION)
        return
    steps = parse_steps(sec)
    rows = [re.match(r'\s*OP\((\w+),\s*"(\w+)",\s*FUNCTION,\s*(\d+)', l) for st in steps
            if st.path == os.path.join("src", "ops.h") for l in st.lines]
    rows = [r for r in rows if r]
    if len(rows) != 1:
        fail("steps", "the section adds %d rows to src/ops.h (want one OP row)" % len(rows))
        return
    name, arity = rows[0].group(2), int(rows[0].group(3))
    ok("steps (%d, function %s)" % (len(steps), name))
    scratch = tempfile.mkdtemp(prefix="jitc-tutorial-")
    try:
        if os.path.exists(JITC) and function_known(JITC, name, scratch):
            fail("new_function", "%s is already a function of this tree: the steps prove nothing" % name)
            return
        copy_tree(scratch)
        for st in steps:
            if st.k == drop:
                print("(step %d left out)" % st.k)
                continue
            why = apply_step(scratch, st)
            if why:
                fail("step%d" % st.k, why)
                return
        ok("applied")
        p = run(["nice", "make", "-j2", "build/jitc"], scratch, timeout=600)
        jitc = os.path.join(scratch, "build", "jitc")
        if p.returncode != 0:
            fail("build", (p.stdout + p.stderr)[-800:])
            return
        ok("build")
        targets = ["interp"]
        if run([jitc, "-t", "cpu", "-q", "-n", "1", "b = a + 1"], scratch).returncode == 0:
            targets.append("cpu")
        else:
            skip("run.cpu", "no cpu target in this build")
        check_function(scratch, name, arity, jitc, targets)
        check_tests(scratch, name, arity, jitc, targets)
        check_language(scratch, name)
        check_golden(scratch, jitc)
    finally:
        if keep:
            print("copy kept in " + scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def links_test():
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for md in files:
        if not os.path.exists(md):
            continue
        rel = os.path.relpath(md, ROOT)
        bad = link_problems(md)
        if bad:
            fail("links." + rel, "; ".join(bad[:8]) + (" (and %d more)" % (len(bad) - 8) if len(bad) > 8 else ""))
        else:
            ok("links." + rel)


def self_test():
    """The link checker and the step parser on known cases."""
    here = os.path.join(ROOT, "src", "parse.c")
    cases = [defines(here, "parse"), defines(here, "binary_level"), not defines(here, "no_such_fn"),
             not defines(os.path.join(ROOT, "src", "jitc_int.h"), "tokenize"),
             slug("## NumPy's promotion rules on a mixed program".lstrip("#"))
             == "numpys-promotion-rules-on-a-mixed-program"]
    sec = ("1. In [src/x.h](../src/x.h), after the line starting with `A(`, add:\n\n"
           "   ```c\n   row\n   ```\n\n2. In the same file, at its end:\n\n   ```python\n   z = 1\n   ```\n")
    tmp = tempfile.mkdtemp(prefix="jitc-links-")
    try:
        md = os.path.join(tmp, "t.md")
        to = os.path.relpath(here, tmp)
        lang = os.path.relpath(os.path.join(ROOT, "docs", "language.md"), tmp)
        open(md, "w").write("[`parse()`](%s) [`stmt()`](%s) [x](%s#functions) [y](#t)\n"
                            "[`nothere()`](%s) [z](%s.missing) [w](%s#no-such-heading)\n"
                            "```\n[`inside()`](nowhere.c)\n```\n# T\n" % (to, to, lang, to, to, lang))
        cases.append([b.split(":")[0] for b in link_problems(md)] == ["2", "2", "2"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    st = parse_steps(sec)
    cases.append(len(st) == 2 and st[0].path == "src/x.h" and st[0].anchor == "A(" and
                 st[0].lines == ["row"] and st[1].path == "src/x.h" and st[1].anchor is None)
    if all(cases):
        ok("self_test")
    else:
        fail("self_test", "cases %s" % [k for k, c in enumerate(cases) if not c])


def main():
    args = sys.argv[1:]
    drop = int(args[args.index("--drop") + 1]) if "--drop" in args else None
    self_test()
    links_test()
    if os.environ.get("SAN") == "1":
        # The scratch copy is built without sanitizers, so under SAN=1 this
        # would only repeat the plain run's check at the cost of a build.
        print("skip tutorial.steps: the scratch build is not sanitized; make test runs it")
    else:
        steps_test(drop, "--keep" in args)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
