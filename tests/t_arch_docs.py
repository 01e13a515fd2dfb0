#!/usr/bin/env python3
"""tests/t_arch_docs.py -- docs/architecture.md names the source as it is.

- Its section "The files" names every .c and .h of src/, runtime/ and cli/
  (as `dir/name.c`), and every such name anywhere on the page is a file.
- Every relative link of docs/architecture.md and docs/api.md leads to a file
  that exists, and to a heading of it that exists (`file.md#anchor`).
- A link that names a function, [name()](../src/file.c), leads to the file
  that defines or declares it: a line that starts with a type and has
  `name(` in it, or a macro of that name.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
PAGES = ["architecture.md", "api.md"]
DIRS = ("src", "runtime", "cli")
fails = 0


def result(name, problems):
    global fails
    if problems:
        fails += 1
        print("FAIL arch_docs.%s: %s" % (name, "; ".join(problems)))
    else:
        print("ok arch_docs.%s" % name)


def source_files():
    return sorted(os.path.relpath(p, ROOT) for d in DIRS
                  for p in glob.glob(os.path.join(ROOT, d, "*.[ch]")))


def prose(text):
    """The text without its fenced blocks (links there are not links)."""
    return re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.M | re.S)


def section(text, title):
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), text, re.M | re.S)
    return m.group(1) if m else ""


def slug(heading):
    """GitHub's anchor of a heading."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def defines(path, name):
    src = open(path, encoding="utf-8").read()
    return re.search(r"^(?:[A-Za-z_][\w \t*]*[ \t*])?%s\s*\(|^#\s*define\s+%s\b" % (name, name),
                     src, re.M) is not None


def check_links(page):
    text = prose(open(os.path.join(DOCS, page), encoding="utf-8").read())
    bad, nfun = [], 0
    for label, target in re.findall(r"\[([^\]]*)\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute address
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(DOCS, path)) if path else os.path.join(DOCS, page)
        if not os.path.exists(full):
            bad.append("%s: no file %s" % (label, path))
            continue
        if anchor and full.endswith(".md"):
            heads = re.findall(r"^#+\s+(.*)$", prose(open(full, encoding="utf-8").read()), re.M)
            if anchor not in [slug(h) for h in heads]:
                bad.append("%s: no heading #%s in %s" % (label, anchor, path or page))
        m = re.fullmatch(r"`?(\w+)\(\)`?", label)
        if m and not full.endswith(".md"):
            nfun += 1
            if not defines(full, m.group(1)):
                bad.append("%s is not in %s" % (label, path))
    return bad, nfun


def main():
    page = open(os.path.join(DOCS, "architecture.md"), encoding="utf-8").read()
    files = source_files()
    listed = set(re.findall(r"`((?:%s)/[\w.]+\.[ch])`" % "|".join(DIRS), section(page, "The files")))
    result("files_all_named", ["%s is not in \"The files\"" % f for f in files if f not in listed])
    named = set(re.findall(r"\b((?:%s)/[\w.]+\.[ch])\b" % "|".join(DIRS), page))
    result("files_all_exist", ["%s is no file" % f for f in sorted(named) if f not in files])
    for p in PAGES:
        bad, nfun = check_links(p)
        if nfun == 0:
            bad.append("no link names a function: the check found nothing to check")
        result("links." + p, bad)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
