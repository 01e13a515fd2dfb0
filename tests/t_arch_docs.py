#!/usr/bin/env python3
"""tests/t_arch_docs.py -- docs/architecture.md names the source as it is.

- Its section "The files" names every .c and .h of src/, runtime/ and cli/
  (as `dir/name.c`), and every such name anywhere on the page is a file.
- Every relative link of docs/architecture.md and docs/api.md leads to a file
  that exists, and to a heading of it that exists (`file.md#anchor`).
- A link that names a function, [name()](../src/file.c), leads to the file
  that defines it.  The links are checked by tests/t_docs.py's link checker,
  which tests/t_tutorial.py uses for README.md and every page of docs/.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_docs import link_problems, markdown_links  # noqa: E402  the docs' link checker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
PAGES = ["architecture.md", "api.md"]
DIRS = ("src", "src/interp", "src/cpu", "src/cuda", "runtime", "cli")
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


def section(text, title):
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), text, re.M | re.S)
    return m.group(1) if m else ""


def check_links(page):
    """The page's link problems (the docs' link checker), and how many of its
    links name a function."""
    md = os.path.join(DOCS, page)
    nfun = sum(1 for _, text, target in markdown_links(md)
               if re.fullmatch(r"`?\w+\(\)`?", text) and not target.split("#")[0].endswith(".md"))
    return link_problems(md), nfun


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
