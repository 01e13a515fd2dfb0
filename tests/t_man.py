#!/usr/bin/env python3
"""tests/t_man.py -- the man page docs/jitc.1 renders cleanly and says what
jitc does.

- `groff -ww -man` renders it without a warning, and so does `man -l` with
  MANWIDTH=80 where man is installed; no line of that rendering is wider
  than 80 columns.
- Its OPTIONS are exactly the options of `jitc --help`, each spelt as the
  help spells it ("-t, --target T"); its EXIT STATUS lists the help's
  statuses; its ENVIRONMENT names every variable of docs/environment.md's
  tables but those "Only for the tests"; .TH carries the version that
  `jitc --version` prints.
- The commands of EXAMPLES run and print what the page shows, by the rules
  of tests/t_docs.py: each .EX/.EE block is a console block, a comment
  `.\\" needs cpu` before its .EX says what it needs, and every command line
  appears in the rendered page as it is run.
- README's "Using it" block names every option of the help (short or long)
  and README lists the same exit statuses.

The checks that compare lists are also run on a copy of the page with an
option and a variable removed, which they must report.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t_docs  # noqa: E402  (its runner checks the examples)

ROOT = t_docs.ROOT
PAGE = os.path.join(ROOT, "docs", "jitc.1")
JITC = os.path.join(t_docs.BUILD, "jitc")
fails = 0

# The escapes the page uses, as plain text.  Any other is reported, so
# that what is extracted is what groff shows.
ESCAPES = {r"\-": "-", r"\(aq": "'", r"\(dq": '"', r"\(lq": '"', r"\(rq": '"', r"\e": "\\",
           r"\&": "", r"\%": "", r"\c": "", r"\ ": " ", r"\(ti": "~", r"\(ha": "^",
           r"\(ga": "`", r"\fB": "", r"\fI": "", r"\fR": "", r"\fP": ""}
ESCAPE = re.compile("|".join(re.escape(e) for e in sorted(ESCAPES, key=len, reverse=True)))
BACKSLASH = re.compile(r"\\")


def result(name, why=None):
    global fails
    if why:
        fails += 1
        print("FAIL man.%s: %s" % (name, why))
    else:
        print("ok man.%s" % name)


def unescape(text):
    """The text of a roff line without its escapes; None if it has an
    escape this test does not know."""
    plain = ESCAPE.sub(lambda m: ESCAPES[m.group(0)], text)
    return None if BACKSLASH.search(ESCAPE.sub("", text)) else plain


def macro_text(line):
    """The text a line shows: a font macro's arguments (.B, .BR, ...) joined
    as the macro joins them, or the line itself."""
    m = re.match(r"^\.(B|I|BR|RB|BI|IB|IR|RI)(?:\s+(.*))?$", line)
    if not m:
        return line
    args = re.findall(r'"((?:[^"]|"")*)"|(\S+)', m.group(2) or "")
    args = [a.replace('""', '"') if a else b for a, b in args]
    return (" " if len(m.group(1)) == 1 else "").join(args)


def sections(lines):
    """{NAME: [(line number, line)]} of the page's .SH sections."""
    out, cur = {}, None
    for n, line in enumerate(lines, 1):
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None:
            cur.append((n, line))
    return out


def tags(section):
    """The text of the tag line after each .TP of a section."""
    out = []
    for k, (_, line) in enumerate(section):
        if line.startswith(".TP") and k + 1 < len(section):
            out.append(unescape(macro_text(section[k + 1][1])) or "")
    return out


def help_options(help_text):
    """The options of --help as it spells them: "-t, --target T",
    "--dtype NAME=T", "-D NAME=VALUE[:TYPE]", "--json", ..."""
    block = help_text.split("\noptions", 1)[1].split("\n\n", 1)[0]
    heads = []
    for line in block.split("\n"):
        m = re.match(r"^  (-\w, |    |)(--?[\w-]+)(?: (\S*[A-Z]\S*))?(?: |$)", line)
        if m:
            short = m.group(1) if m.group(1).strip() else ""
            heads.append(short + m.group(2) + (" " + m.group(3) if m.group(3) else ""))
    return heads


def help_statuses(help_text):
    return re.findall(r"^ +(\d+)  ", help_text.split("\nexit status:", 1)[1], re.M)


def doc_variables():
    """The variables of docs/environment.md's tables, but those for the
    tests: the backquoted names in each row's first cell."""
    text = open(os.path.join(ROOT, "docs", "environment.md"), encoding="utf-8").read()
    text = text.split("\n## Only for the tests", 1)[0]
    names = []
    for row in re.findall(r"^\|([^|\n]*)\|", text, re.M):
        names += re.findall(r"`([A-Z_][A-Z0-9_]*)`", row)
    return names


def compare(what, want, have, where="the page"):
    missing = [w for w in want if w not in have]
    extra = [h for h in have if h not in want]
    why = []
    if missing:
        why.append("%s missing from %s: %s" % (what, where, ", ".join(missing)))
    if extra:
        why.append("in %s but not in the source: %s" % (where, ", ".join(extra)))
    return "; ".join(why) or None


def check_lists(page_lines, help_text, version):
    """The page's lists against --help, --version and environment.md: a list
    of (name, problem or None)."""
    secs = sections(page_lines)
    out = [("options", compare("options of --help", help_options(help_text),
                               tags(secs.get("OPTIONS", []))))]
    statuses = [t.split()[0] for t in tags(secs.get("EXIT STATUS", [])) if t.strip()]
    out.append(("exit_status", compare("statuses of --help",
                                       help_statuses(help_text), statuses)))
    env = []
    for t in tags(secs.get("ENVIRONMENT", [])):
        env += re.findall(r"[A-Z_][A-Z0-9_]+", t)
    out.append(("environment", compare("variables of docs/environment.md",
                                       doc_variables(), env)))
    th = next((l for l in page_lines if l.startswith(".TH ")), "")
    th_args = re.findall(r'"([^"]*)"|(\S+)', th)
    th_version = [a or b for a, b in th_args][4:5]
    out.append(("version", None if th_version == [version] else
                ".TH says %s, jitc --version says %r" % (th_version, version)))
    return out


def examples(page_lines):
    """(commands, problems): the EXAMPLES' commands, each with its expected
    output, read by tests/t_docs.py from the page turned into Markdown line
    for line (each .EX/.EE block a console block); what could not be read."""
    section = dict(sections(page_lines).get("EXAMPLES", []))
    markdown, problems = [], []
    in_ex, needs = False, ""
    for n, line in enumerate(page_lines, 1):
        text = ""
        m = re.match(r'^\.\\"\s*needs\s+(.*)$', line)
        if n not in section:
            pass
        elif m:
            needs = m.group(1)
        elif line.startswith(".EX"):
            text, in_ex, needs = "```console " + needs, True, ""
        elif line.startswith(".EE"):
            text, in_ex = "```", False
        elif in_ex and (line.startswith(".") or line.startswith("'")):
            problems.append("line %d: a request inside .EX/.EE: %s" % (n, line))
        else:
            text = unescape(macro_text(line) if not in_ex else line)
            if text is None:
                problems.append("line %d: an escape this test does not read: %s" % (n, line))
        markdown.append(text or "")
    cmds, stray = t_docs.parse_lines(markdown)
    problems += ["line %d: a prompt or output outside .EX/.EE is never checked" % n for n in stray]
    if not cmds:
        problems.append("no commands in EXAMPLES")
    return cmds, problems


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_rendering():
    """groff -ww and man -l print no warnings; the page fits 80 columns.
    Returns groff's plain text of the page, or None."""
    if not shutil.which("groff"):
        print("skip man.groff: groff is not installed (apt-get install groff-base)")
        return None
    p = run(["groff", "-ww", "-man", "-Tutf8", "-z", PAGE])
    result("groff_warnings", None if p.returncode == 0 and not p.stderr else
           "groff -ww exits %d: %s" % (p.returncode, p.stderr.strip()))
    if shutil.which("man"):
        env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
        env.pop("MANPAGER", None)
        env.pop("PAGER", None)
        p = run(["man", "--warnings=all", "-l", PAGE], env=env)
        result("man_warnings", None if p.returncode == 0 and not p.stderr and p.stdout else
               "man -l exits %d: %s" % (p.returncode, p.stderr.strip()))
        wide = [l for l in p.stdout.split("\n") if len(l) > 80]
        result("width", "%d lines wider than 80 columns, such as %r" % (len(wide), wide[0])
               if wide else None)
    else:
        print("skip man.man_warnings: man is not installed (apt-get install man-db)")
    return run(["groff", "-man", "-Tascii", "-P-cbou", PAGE]).stdout


def check_readme(help_text):
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    using = (text.split("\n## Using it", 1) + [""])[1].split("\n## ", 1)[0]
    if using.count("```") < 2 or "Exit status:" not in using:
        result("readme", "README has no \"Using it\" section with a block and \"Exit status:\"")
        return
    block = using.split("```", 2)[1]
    missing = []
    for head in help_options(help_text):
        spellings = [w.rstrip(",") for w in head.split() if w.startswith("-")]
        if not any(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(s), block) for s in spellings):
            missing.append(head)
    result("readme_options", "README's \"Using it\" block lacks %s" % ", ".join(missing)
           if missing else None)
    para = using.split("Exit status:", 1)[1].split("\n\n", 1)[0]
    readme = re.findall(r"(?:^|[,:])\s*(\d+) ", para)
    result("readme_exit_status", compare("statuses of --help", help_statuses(help_text),
                                         readme, "README"))


def self_test(page_lines, help_text, version):
    """The list checks report an option and a variable taken off the page."""
    cut = [l for l in page_lines if l not in (r"\fB\-\-no\-cache\fR", ".B JITC_CUDA_WAVES")]
    found = dict(check_lists(cut, help_text, version))
    ok = "--no-cache" in (found["options"] or "") and "JITC_CUDA_WAVES" in (found["environment"] or "")
    result("self_test", None if ok else "a page without --no-cache and JITC_CUDA_WAVES passes: %r"
           % found)


def main():
    page_lines = open(PAGE, encoding="utf-8").read().split("\n")
    help_text = run([JITC, "--help"]).stdout
    version = run([JITC, "--version"]).stdout.split("\n", 1)[0]
    for name, why in check_lists(page_lines, help_text, version):
        result(name, why)
    self_test(page_lines, help_text, version)
    check_readme(help_text)
    rendered = check_rendering()
    cmds, problems = examples(page_lines)
    result("examples_read", "; ".join(problems) if problems else None)
    if rendered is not None:
        shown = {l.strip() for l in rendered.split("\n")}
        hidden = [l for c in cmds for l in ("$ " + c.text).split("\n") if l.strip() not in shown]
        result("examples_shown", "not on the rendered page as run: %r" % hidden if hidden else None)
    available = {"cpu": t_docs.have("cpu"), "cuda": t_docs.have("cuda")}
    t_docs.run_commands("man.docs/jitc.1", cmds, available)
    return 1 if fails or t_docs.fails else 0


if __name__ == "__main__":
    sys.exit(main())
