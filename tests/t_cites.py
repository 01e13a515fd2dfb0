#!/usr/bin/env python3
"""tests/t_cites.py -- what the source's comments cite is there, and the
language's documentation does not call its own functions future ones.

In every file of src/, runtime/, cli/, tests/, python/jitc/, bench/,
samples/ and scripts/:
- paths: a path of the repository (`src/split.c`, `tests/t_diff.py`,
  `docs/language.md`, ...) names a file that exists;
- functions: `NAME() in FILE`, `NAME() of FILE` and `FILE's NAME()` name a
  function (or macro) that FILE defines;
and in the comments of the C files of those directories:
- files: a bare file name (`split.c`, `ops.h`) is a file of the repository
  or a header of the libraries jitc uses.
docs/*.md and README.md:
- reserved: no name that the language has as a function or reduction (a
  FUNCTION or REDUCE row of src/ops.h, or an FN alias) is said to be
  "reserved for a later version" (or "for later", "not yet").
Prints "ok cites.NAME" or "FAIL cites.NAME: why" per check.
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_docs import defines  # noqa: E402  the docs' link checker's test for a definition

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ["src", "runtime", "cli", "tests", "python/jitc", "bench", "samples", "scripts"]
TOP = ("src", "runtime", "cli", "tests", "python", "samples", "bench", "scripts", "docs",
       "grammar")
# Paths that stand for any file in the text of a test of the docs' checker;
# a path with a word in capitals (tests/golden/NAME.jitc) stands for many.
PLACEHOLDERS = {"src/file.c", "src/x.h"}
# Headers of the C library and of the libraries jitc uses.
EXTERNAL = {"math.h", "sysexits.h", "nvrtc.h", "cuda.h", "llvm-config.h", "Python.h", "sleef.h"}
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*\w\.(?:c|h|py|sh|md|jitc|txt|json|toml|err))\b"
                  % "|".join(TOP))
FILE = r"(?:[\w-]+/)*[\w-]+\.[ch]"
CITE = [re.compile(r"\b(?P<fn>[A-Za-z_]\w*)\(\) (?:in|of) `?(?P<file>%s)\b" % FILE),
        re.compile(r"\b(?P<file>%s)`?'s `?(?P<fn>[A-Za-z_]\w*)\(\)" % FILE)]
fails = 0


def result(name, problems, note=""):
    global fails
    if problems:
        fails += 1
        print("FAIL cites.%s: %s" % (name, "; ".join(problems)))
    else:
        print("ok cites.%s%s" % (name, note))


def tracked():
    """The repository's files (git's list; the files on disk outside git)."""
    p = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if p.returncode == 0 and p.stdout.strip():
        return sorted(set(p.stdout.split()) | set(untracked()))
    return untracked()


def untracked():
    return [os.path.relpath(f, ROOT) for d in DIRS + ["docs"]
            for f in glob.glob(os.path.join(ROOT, d, "**", "*"), recursive=True)
            if os.path.isfile(f)]


def sources(files):
    return [f for f in files if any(f.startswith(d + "/") for d in DIRS)
            and f.endswith((".c", ".h", ".py", ".sh"))]


def c_comments(text):
    return re.findall(r"/\*.*?\*/|//[^\n]*", text, re.S)


def resolve(name, citing, files):
    """The file a citation in `citing` means by `name`, or None."""
    if "/" in name:
        return name if name in files else None
    here = os.path.join(os.path.dirname(citing), name)
    if here in files:
        return here
    same = [f for f in files if os.path.basename(f) == name and f.split("/")[0] in DIRS]
    return same[0] if len(same) == 1 else None


def check_sources(files):
    paths, funcs, bare = [], [], []
    names = {os.path.basename(f) for f in files}
    nfunc = 0
    for f in sources(files):
        text = open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read()
        for n, line in enumerate(text.split("\n"), 1):
            for p in PATH.findall(line):
                if p in PLACEHOLDERS or re.search(r"\b[A-Z]{2,}\b", p):
                    continue
                if not os.path.exists(os.path.join(ROOT, p)):
                    paths.append("%s:%d: %s is no file" % (f, n, p))
            for pat in CITE:
                for m in pat.finditer(line):
                    nfunc += 1
                    target = resolve(m.group("file"), f, files)
                    if target is None:
                        funcs.append("%s:%d: %s() in %s: no such file" % (f, n, m.group("fn"),
                                                                          m.group("file")))
                    elif not defines(os.path.join(ROOT, target), m.group("fn")):
                        funcs.append("%s:%d: %s does not define %s()" % (f, n, target,
                                                                         m.group("fn")))
        if f.endswith((".c", ".h")):
            for c in c_comments(text):
                for m in re.finditer(r"(?<![\w./-])([\w-]+\.[ch])\b", c):
                    if m.group(1) not in names and m.group(1) not in EXTERNAL:
                        bare.append("%s: %s is no file" % (f, m.group(1)))
    if nfunc == 0:
        funcs.append("no citation of a function found: the check found nothing to check")
    result("paths", paths)
    result("functions", funcs, " (%d citations)" % nfunc)
    result("files", bare)


def language_names():
    """The names of the functions and reductions of src/ops.h."""
    text = open(os.path.join(ROOT, "src", "ops.h"), encoding="utf-8").read()
    rows = re.findall(r'^OP\(\s*\w+,\s*"(\w+)",\s*(FUNCTION|REDUCE)\b', text, re.M)
    return {n for n, _ in rows} | set(re.findall(r'\bFN\("(\w+)"', text))


def check_reserved(files):
    names = language_names()
    bad = []
    if not {"sum", "exp", "minimum", "argmax"} <= names:
        bad.append("src/ops.h's rows were not read (%d names)" % len(names))
    pages = [f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]
    for page in pages:
        text = open(os.path.join(ROOT, page), encoding="utf-8").read()
        # A paragraph or a list item, each read as one.
        for block in re.split(r"\n\s*\n|\n(?=\s*[-*] )", text):
            if not re.search(r"reserved for (?:a )?later|for a later version|not yet", block):
                continue
            said = set(re.findall(r"`(\w+)`", block)) & names
            if said:
                line = text[:text.index(block)].count("\n") + 1
                bad.append("%s:%d: calls %s reserved for later, but the language has them"
                           % (page, line, ", ".join(sorted(said))))
    result("reserved", bad)


def main():
    files = tracked()
    check_sources(files)
    check_reserved(files)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
