#!/usr/bin/env python3
"""tests/t_api_docs.py -- every example of docs/api.md compiles, runs and
prints what the page shows, and every function of src/jitc.h has one.

- Each ```c block of the page is a complete program.  It is compiled on its
  own with `cc -std=c11 -Wall -Wextra -Werror -O0 -Isrc` against the static
  library and the libraries it needs (the Libs.private line the Makefile
  writes into build/jitc.pc), then run in a scratch directory with the same
  environment as tests/t_docs.py gives the shell examples.
- It must exit with status 0.  Status 69 (jitc_exit_code of
  JITC_E_UNAVAILABLE) means it needs a target this machine lacks (the cpu
  target of a build without LLVM, a GPU): that is a skip, not a failure.
- The ```text block right after it (only prose between) is what it prints:
  standard output and standard error together, compared as tests/t_docs.py
  compares (`...` for what varies, timings ignored).  Every example has one.
- Every function that jitc.h marks JITC_API is called in some example.

`python3 tests/t_api_docs.py --show` prints what each example prints instead
of comparing, for writing the page.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t_docs  # noqa: E402  (the matcher and the environment of the shell examples)

ROOT = t_docs.ROOT
BUILD = t_docs.BUILD
PAGE = os.path.join(ROOT, "docs", "api.md")
UNAVAILABLE = 69
fails = 0


def fail(name, why, detail=""):
    global fails
    fails += 1
    print("FAIL api_docs.%s: %s" % (name, why))
    if detail:
        print(detail)


def blocks(text):
    """[(info string, line, body lines)]: the page's fenced blocks in order."""
    out, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^(```+)\s*(\S*)", line)
        if fence is None and m:
            fence = m.group(1)
            out.append((m.group(2), n, []))
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None:
            out[-1][2].append(line)
    return out


def examples(text):
    """[(name, line, code, expected lines or None)]: each ```c block, named
    by its first comment, with the ```text block right after it."""
    bs, out = blocks(text), []
    for k, (info, line, body) in enumerate(bs):
        if info != "c":
            continue
        code = "\n".join(body) + "\n"
        m = re.match(r"/\*\s*([\w.]+)", code)
        expect = bs[k + 1][2] if k + 1 < len(bs) and bs[k + 1][0] == "text" else None
        out.append((m.group(1) if m else "line%d.c" % line, line, code, expect))
    return out


def api_names():
    text = open(os.path.join(ROOT, "src", "jitc.h")).read()
    return re.findall(r"^JITC_API\b[^;(]*?\b(jitc_\w+)\s*\(", text, re.M)


def link_flags():
    pc = open(os.path.join(BUILD, "jitc.pc")).read()
    m = re.search(r"^Libs\.private:(.*)$", pc, re.M)
    return m.group(1).split() if m else []


def build(ex, scratch, flags):
    name, _, code, _ = ex
    src = os.path.join(scratch, name)
    exe = src[:-2] if src.endswith(".c") else src + ".bin"
    with open(src, "w") as f:
        f.write(code)
    cc = os.environ.get("CC", "cc").split()
    cmd = cc + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O0", "-I" + os.path.join(ROOT, "src"),
                "-o", exe, src, os.path.join(BUILD, "libjitc.a")] + flags
    cmd += os.environ.get("LDFLAGS", "").split()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return exe, p.returncode, p.stdout + p.stderr


def main():
    show = "--show" in sys.argv
    exs = examples(open(PAGE, encoding="utf-8").read())
    if not exs:
        fail("examples", "docs/api.md has no ```c example")
        return 1
    names = [e[0] for e in exs]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        fail("names", "two examples are called %s" % dup)

    code = "".join(e[2] for e in exs)
    missing = [f for f in api_names() if not re.search(r"\b%s\b" % f, code)]
    if missing:
        fail("every_function", "no example of docs/api.md calls %s" % ", ".join(missing))
    else:
        print("ok api_docs.every_function")

    scratch = tempfile.mkdtemp(prefix="jitc-api-")
    try:
        flags = link_flags()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            built = list(pool.map(lambda e: build(e, scratch, flags), exs))
        env = t_docs.environment(scratch)
        for ex, (exe, rc, log) in zip(exs, built):
            name, line, _, expect = ex
            where = "%s (docs/api.md:%d)" % (name, line)
            if rc != 0:
                fail(name, "%s does not compile" % where, log[:3000])
                continue
            rundir = os.path.join(scratch, "run-" + name)
            os.mkdir(rundir)
            try:
                p = subprocess.run([exe], cwd=rundir, env=env, text=True, timeout=120,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                got, status = p.stdout, p.returncode
            except subprocess.TimeoutExpired:
                got, status = "", "timeout"
            if show:
                print("== %s: exit status %s\n%s" % (where, status, got))
                continue
            if status == UNAVAILABLE:
                print("skip api_docs.%s: needs a target this machine lacks: %s" %
                      (name, "; ".join(got.strip().split("\n"))))
            elif status != 0:
                fail(name, "%s exited with status %s" % (where, status), got)
            elif expect is None:
                fail(name, "%s has no ```text block showing its output" % where)
            elif not t_docs.matches(t_docs.normalise(expect), t_docs.normalise(got.split("\n"))):
                fail(name, "%s prints something else than the page shows" % where,
                     "--- the page shows\n%s\n--- it prints\n%s" % ("\n".join(expect), got))
            else:
                print("ok api_docs.%s" % name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
