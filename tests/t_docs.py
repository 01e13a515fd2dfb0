#!/usr/bin/env python3
"""tests/t_docs.py -- every command the documentation shows runs as shown.

The checked examples are the fenced blocks of the Markdown files (README.md,
docs/, samples/, bench/README.md, python/) whose info string is `console`:

    ```console
    $ jitc -t interp -n 3 'b = a * 2'
    target   interp (...)
    ...
    ```

- A line that starts with `$ ` is a command; a command line ending in `\\`
  goes on at the next line.  The lines after it, up to the next command or
  the end of the block, are what it prints: standard output and standard
  error together, as a terminal shows them.
- A command must exit with status 0.  To show a failing one, write
  `$ jitc 'c = a +'; echo "exit status $?"`.
- Comparing ignores trailing blanks and timings (a number followed by ms,
  us, ns, s, GB/s or MB/s).  A line holding only `...` stands for any number
  of lines (none included); `...` inside a line stands for any text.
- Words after `console` in the info string name what the block needs:
  `cpu` (the cpu target: built with LLVM) or `cuda` (a GPU).  A block whose
  need is not met here is skipped, and says so.
- The commands of one file run in order, in one fresh directory of their
  own, so a command may use the files an earlier one made.  The directory
  holds links to the repository's build, src, samples, docs, tests, cli,
  runtime, grammar and python directories; PATH starts with the build
  directory, so `jitc` is the one just built; HOME and the compile cache are
  in the directory; no JITC_* variable of the caller's is passed on.

A prompt (`$ `) anywhere else in those files -- another fenced block, an
indented block -- is an error: every command with output must be checked.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
LINKS = ["src", "samples", "docs", "tests", "cli", "runtime", "grammar", "python", "bench"]
TIMING = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)? ?(?:ms|us|ns|s|GB/s|MB/s)(?![\w/])")
fails = 0


def doc_files(root=ROOT):
    names = ["README.md", "bench/README.md"]
    names += sorted(os.path.relpath(p, root) for pat in ("docs/**/*.md", "samples/**/*.md", "python/**/*.md")
                    for p in glob.glob(os.path.join(root, pat), recursive=True))
    return [n for n in names if os.path.exists(os.path.join(root, n))]


class Command:
    def __init__(self, line, text, needs):
        self.line, self.text, self.needs, self.expect = line, text, needs, []


def parse(path):
    return parse_lines(open(path, encoding="utf-8").read().split("\n"))


def parse_lines(lines):
    """(commands, stray prompts): the commands of the console blocks, each
    with its expected output, and the line numbers of prompts elsewhere."""
    cmds, stray = [], []
    fence, needs, cur, cont = None, None, None, False
    for n, line in enumerate(lines, 1):
        m = re.match(r"^(```+|~~~+)\s*(\S*)\s*(.*)$", line)
        if fence is None and m:
            fence = m.group(1)
            needs = m.group(3).split() if m.group(2) == "console" else None
            cur, cont = None, False
            continue
        if fence is not None and line.strip() == fence:
            fence, needs = None, None
            continue
        if needs is None:
            if re.match(r"^\s*\$ ", line):
                stray.append(n)
            continue
        if cont:
            cur.text += "\n" + line
            cont = line.endswith("\\")
        elif line.startswith("$ "):
            cur = Command(n, line[2:], needs)
            cmds.append(cur)
            cont = line.endswith("\\")
        elif cur is not None:
            cur.expect.append(line)
        elif line.strip():
            stray.append(n)  # output before any command
    return cmds, stray


def normalise(lines):
    out = [TIMING.sub("<time>", l.rstrip()) for l in lines]
    while out and not out[-1]:
        out.pop()
    return out


def line_pattern(expect):
    return re.compile(".*".join(re.escape(part) for part in expect.split("...")))


def matches(expect, got):
    """Whether the lines got match the expected lines with their `...`."""
    memo = {}

    def at(i, j):
        if (i, j) in memo:
            return memo[i, j]
        if i == len(expect):
            r = j == len(got)
        elif expect[i].strip() == "...":
            r = any(at(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and line_pattern(expect[i]).fullmatch(got[j]) is not None and at(i + 1, j + 1)
        memo[i, j] = r
        return r

    return at(0, 0)


def have(target):
    jitc = os.path.join(BUILD, "jitc")
    return subprocess.run([jitc, "-t", target, "-q", "-n", "1", "b = a + 1"],
                          capture_output=True).returncode == 0


def environment(scratch):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JITC")}
    env.update(PATH=BUILD + os.pathsep + env.get("PATH", "/usr/bin:/bin"), HOME=scratch,
               JITC_CACHE_DIR=os.path.join(scratch, ".cache"), LC_ALL="C", COLUMNS="80")
    env.pop("XDG_CACHE_HOME", None)
    return env


def check_file(rel, available):
    global fails
    cmds, stray = parse(os.path.join(ROOT, rel))
    for n in stray:
        fails += 1
        print("FAIL docs.%s:%d: a prompt or output outside a console block is never checked" % (rel, n))
    run_commands("docs." + rel, cmds, available)


def run_commands(label, cmds, available):
    """Runs the commands in order in one scratch directory; prints a result
    line for each, named LABEL:LINE."""
    global fails
    if not cmds:
        return
    scratch = tempfile.mkdtemp(prefix="jitc-docs-")
    try:
        for d in LINKS:
            if os.path.exists(os.path.join(ROOT, d)):
                os.symlink(os.path.join(ROOT, d), os.path.join(scratch, d))
        os.symlink(BUILD, os.path.join(scratch, "build"))
        env = environment(scratch)
        for c in cmds:
            name = "%s:%d" % (label, c.line)
            missing = [t for t in c.needs if not available.get(t, False)]
            if missing:
                print("skip %s: needs %s" % (name, " and ".join(missing)))
                continue
            try:
                p = subprocess.run(["sh", "-c", c.text], cwd=scratch, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
                got, status = p.stdout, p.returncode
            except subprocess.TimeoutExpired:
                got, status = "", "timeout"
            expect, lines = normalise(c.expect), normalise(got.split("\n"))
            if status != 0:
                fails += 1
                print("FAIL %s: `%s` exited with status %s" % (name, c.text, status))
                print(got)
            elif not matches(expect, lines):
                fails += 1
                print("FAIL %s: `%s` prints something else than the docs show" % (name, c.text))
                print("--- the docs show\n" + "\n".join(expect) + "\n--- it prints\n" + "\n".join(lines))
            else:
                print("ok " + name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# ---------------------------------------------------------------------------
# Links from the docs into the source: relative links lead to files and
# headings that exist, and `[name()](../src/file.c)` to a file defining name.
# tests/t_tutorial.py and tests/t_arch_docs.py check the pages with them.

def slug(heading):
    """GitHub's anchor of a heading."""
    h = re.sub(r"[`*_]", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def headings(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


def defines(path, fn):
    """Whether the file defines the function fn."""
    text = open(path, encoding="utf-8", errors="replace").read()
    if path.endswith(".py"):
        return re.search(r"^\s*def %s\(" % re.escape(fn), text, re.M) is not None
    if path.endswith(".sh"):
        return re.search(r"^%s\(\)" % re.escape(fn), text, re.M) is not None
    # C: a definition starts at the line's start and is not a declaration
    # (its line has a '{' or does not end with ';'); a header may define a
    # macro.
    for m in re.finditer(r"^[A-Za-z_][^;{}()=]*?\b%s\s*\(.*$" % re.escape(fn), text, re.M):
        if "{" in m.group(0) or not m.group(0).rstrip().endswith(";"):
            return True
    return re.search(r"^#\s*define\s+%s\(" % re.escape(fn), text, re.M) is not None


def markdown_links(path):
    """(line, text, target) of the inline links outside fenced blocks."""
    out, fence = [], False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if re.match(r"^\s*(```|~~~)", line):
            fence = not fence
            continue
        if fence:
            continue
        for m in re.finditer(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)", line):
            out.append((n, m.group(1), m.group(2)))
    return out


def link_problems(md):
    """What is wrong with the relative links of the Markdown file md."""
    bad, total = [], 0
    for n, text, target in markdown_links(md):
        if re.match(r"^[a-z]+:", target):
            continue  # a URL
        total += 1
        path, _, frag = target.partition("#")
        dest = md if not path else os.path.normpath(os.path.join(os.path.dirname(md), path))
        if not os.path.exists(dest):
            bad.append("%d: %s: no such file" % (n, target))
            continue
        if frag and dest.endswith(".md") and frag not in headings(dest):
            bad.append("%d: %s: no heading #%s" % (n, target, frag))
        m = re.fullmatch(r"`?([A-Za-z_]\w*)\(\)`?", text)
        if m and not (os.path.isfile(dest) and defines(dest, m.group(1))):
            bad.append("%d: %s() is not defined in %s" % (n, m.group(1), path))
    return bad


def self_test():
    """The matcher itself: each case must come out as stated."""
    cases = [(["a", "...", "d"], ["a", "b", "c", "d"], True), (["a", "...", "d"], ["a", "d"], True),
             (["a", "..."], ["a"], True), (["a"], ["a", "b"], False), (["x ... z"], ["x yy z"], True),
             (["x ... z"], ["x yy"], False), (["run <time>"], normalise(["run 0.5 ms"]), True),
             (["[1. 2.]"], ["[1. 3.]"], False), (["a.b"], ["axb"], False)]
    bad = [c for c in cases if matches(c[0], c[1]) != c[2]]
    if bad:
        global fails
        fails += 1
        print("FAIL docs.matcher: %r" % bad)
    else:
        print("ok docs.matcher")


def main():
    self_test()
    available = {"cpu": have("cpu"), "cuda": have("cuda")}
    files = sys.argv[1:] or doc_files()
    for rel in files:
        check_file(rel, available)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
