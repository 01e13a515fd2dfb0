#!/usr/bin/env python3
"""tests/t_layout.py -- the shape of the source, as docs/architecture and
README's "Reading the source" describe it, checked on the built objects.

- No two files of the library, of the command line, or of the Python
  package's extension (python/jitc/*.c) call each other in a loop (through
  any chain); the extension's state is one struct in state.c that the
  others reach by a call, so no file of it defines a global variable
  (NumPy's C-API table aside):
  the stages sit on the shared vocabulary, the targets on the stages, jitc.c
  on everything, and runtime/ below all of src/.
- Each target is a folder (src/interp/, src/cpu/, src/cuda/) whose files
  neither call nor include another target's; of the shared files of src/,
  only jitc.c (which drives the Target tables) calls into a target.
- runtime/ includes nothing from src/ or cli/; src/ nothing from cli/.
- Only src/env.c reads the environment (getenv) in the library.
- No source file of src/, runtime/ or cli/ is longer than MAX_LINES.
- A plain libm function is one row of ops.h: nextafter, added that way, is
  named nowhere else in src/.
- The code generators are pure: cuda/gen.c and cpu/gen.c call nothing of
  the building or running files (no NVRTC, JIT, cache, threads, getenv).
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
MAX_LINES = 850
fails = 0


def ok(name):
    print("ok layout." + name)


def fail(name, why):
    global fails
    fails += 1
    print("FAIL layout.%s: %s" % (name, why))


def library_sources():
    return sorted(glob.glob(os.path.join(ROOT, "src", "*.c")) +
                  glob.glob(os.path.join(ROOT, "src", "*", "*.c")) +
                  glob.glob(os.path.join(ROOT, "runtime", "*.c")))


TARGETS = ("interp", "cpu", "cuda")
DIRS = ("src",) + tuple("src/" + t for t in TARGETS) + ("runtime", "cli")


def target_of(f):
    """The target folder a file (relative, without .c) belongs to, or None."""
    parts = f.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "src" and parts[1] in TARGETS else None


def symbols(obj):
    """(defined, undefined) global symbol names of an object file."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRV":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
    return defined, undefined


ext_data = {}
# What NumPy's headers define in the file that imports its C API (_jitc.c)
# for the others: NumPy's, not the extension's state.
NUMPY_SYMBOLS = {"jitc_ARRAY_API", "jitc_ARRAY_APIPyArray_RUNTIME_VERSION"}


def extension_objects():
    """{python/jitc/NAME: (defined, undefined)} of the extension's files,
    compiled into a scratch directory, and the global variables each
    defines into ext_data; (None, why) when they cannot be compiled here."""
    try:
        import sysconfig
        import tempfile
        import numpy
        inc = ["-I" + sysconfig.get_paths()["include"], "-I" + numpy.get_include(),
               "-I" + os.path.join(ROOT, "src")]
    except ImportError as e:
        return None, str(e)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for src in sorted(glob.glob(os.path.join(ROOT, "python", "jitc", "*.c"))):
            rel = os.path.relpath(src, ROOT)[:-2]
            obj = os.path.join(tmp, os.path.basename(rel) + ".o")
            p = subprocess.run([os.environ.get("CC") or "cc", "-std=c11", "-c", "-o", obj, src] + inc,
                               capture_output=True, text=True)
            if p.returncode:
                return None, "cannot compile %s: %s" % (rel, p.stderr.strip()[-300:])
            out[rel] = symbols(obj)
            nm = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
            ext_data[rel] = [line.split()[-1] for line in nm.splitlines()
                             if len(line.split()) >= 2 and line.split()[-2] in ("D", "B", "C")]
    return out, None


def main():
    objs = {}
    for src in library_sources():
        rel = os.path.relpath(src, ROOT)[:-2]
        if rel == "src/main":
            continue
        obj = os.path.join(BUILD, rel + ".o")
        if not os.path.exists(obj):
            fail("objects", "%s.o is not built (run make)" % rel)
            return 1
        objs[rel] = symbols(obj)
    owner = {}
    for f, (defined, _) in objs.items():
        for s in defined:
            owner[s] = f
    edges = {f: sorted({owner[s] for s in und if s in owner and owner[s] != f})
             for f, (_, und) in objs.items()}

    # The command line's own files, for its loops (it calls the library's
    # through jitc.h only).
    cli = {}
    for src in sorted(glob.glob(os.path.join(ROOT, "cli", "*.c"))):
        rel = os.path.relpath(src, ROOT)[:-2]
        obj = os.path.join(BUILD, rel + ".o")
        if os.path.exists(obj):
            cli[rel] = symbols(obj)
    for f, (defined, _) in cli.items():
        for s in defined:
            owner[s] = f
    for f, (_, und) in cli.items():
        edges[f] = sorted({owner[s] for s in und if s in owner and owner[s] != f})

    # The extension's files, compiled here (with Python's and NumPy's
    # headers, when this python has them).
    ext, why = extension_objects()
    if ext is None:
        print("skip layout.extension: %s" % why)
    else:
        for f, (defined, _) in ext.items():
            for sym in defined - NUMPY_SYMBOLS:
                owner[sym] = f
        for f, (_, und) in ext.items():
            edges[f] = sorted({owner[sym] for sym in und if sym in owner and owner[sym] != f})
        shared = sorted("%s: %s" % (f, sym) for f in ext for sym in ext_data[f]
                        if sym not in NUMPY_SYMBOLS)
        if shared:
            fail("extension_state_one_struct", "global variables: " + ", ".join(shared))
        else:
            ok("extension_state_one_struct")

    # Loops: a depth-first search for a back edge.
    color, stack, loops = {}, [], []

    def visit(u):
        color[u] = 1
        stack.append(u)
        for v in edges[u]:
            if color.get(v) == 1:
                loops.append(stack[stack.index(v):] + [v])
            elif not color.get(v):
                visit(v)
        stack.pop()
        color[u] = 2

    for f in sorted(edges):
        if not color.get(f):
            visit(f)
    if loops:
        fail("no_call_loops", "; ".join(" -> ".join(c) for c in loops[:5]))
    else:
        ok("no_call_loops")

    up = [(f, g) for f in edges for g in edges[f]
          if f.startswith("runtime/") and not g.startswith("runtime/")]
    if up:
        fail("runtime_below_src", ", ".join("%s calls %s" % p for p in up))
    else:
        ok("runtime_below_src")

    readers = sorted(f for f, (_, und) in objs.items() if "getenv" in und or
                     "secure_getenv" in und)
    if readers != ["src/env"]:
        fail("getenv_once", "getenv is called from %s (only src/env.c may)" % readers)
    else:
        ok("getenv_once")

    crossing = [(f, g) for f in edges for g in edges[f]
                if target_of(g) and target_of(f) != target_of(g) and f != "src/jitc"]
    if crossing:
        fail("targets_apart", ", ".join("%s calls %s" % p for p in crossing))
    else:
        ok("targets_apart")

    for gen, forbidden in (("src/cuda/gen", ("src/cuda/build", "src/cuda/run", "src/cuda/host",
                                             "src/codecache", "runtime/cuda_loader",
                                             "runtime/pool", "src/env")),
                           ("src/cuda/axis", ("src/cuda/build", "src/cuda/run", "src/cuda/host",
                                              "src/codecache", "runtime/cuda_loader",
                                              "runtime/pool", "src/env")),
                           ("src/cpu/gen", ("src/cpu/build", "src/cpu/run", "src/codecache",
                                            "runtime/pool", "src/env"))):
        if gen not in edges:
            fail("pure_" + gen[4:].replace("/", "_"), "%s.c does not exist" % gen)
            continue
        bad = [g for g in edges[gen] if g in forbidden]
        if bad:
            fail("pure_" + gen[4:].replace("/", "_"), "%s.c calls %s" % (gen, ", ".join(bad)))
        else:
            ok("pure_" + gen[4:].replace("/", "_"))

    named = [os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "src", "**", "*.[ch]"),
                                                          recursive=True)
             if "nextafter" in open(p).read().lower() and not p.endswith("/ops.h")]
    if named:
        fail("function_is_one_row", "nextafter is named outside src/ops.h in %s" % named)
    else:
        ok("function_is_one_row")

    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    bad = []
    rules = [("runtime", ("src/", "cli/")), ("src", ("cli/",))]
    rules += [("src/" + t, ("cli/",) + tuple("src/%s/" % u for u in TARGETS if u != t))
              for t in TARGETS]
    for d, banned in rules:
        for path in glob.glob(os.path.join(ROOT, d, "*.[ch]")):
            for name in inc.findall(open(path).read()):
                target = os.path.normpath(os.path.join(d, name))
                if target.startswith(banned):
                    bad.append("%s includes %s" % (os.path.relpath(path, ROOT), name))
    if bad:
        fail("includes_downward", "; ".join(bad))
    else:
        ok("includes_downward")

    long_files = []
    for d in DIRS:
        for path in sorted(glob.glob(os.path.join(ROOT, d, "*.[ch]"))):
            n = sum(1 for _ in open(path))
            if n > MAX_LINES:
                long_files.append("%s (%d)" % (os.path.relpath(path, ROOT), n))
    if long_files:
        fail("file_length", "longer than %d lines: %s" % (MAX_LINES, ", ".join(long_files)))
    else:
        ok("file_length")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
