#!/usr/bin/env python3
"""t_compile_scale.py -- compile time grows linearly with the program.

Compiles programs of N and 4N statements (independent outputs, N = 500; a
chain of lets, N = 1,000; reductions, N = 200 on cpu and 100 on cuda) with
the disk cache off, and checks that the larger takes less than 6 times the
CPU time of the smaller (linear is 4 times; the quadratic compiles this
guards against took 10 times and more: 16 for outputs, 10 to 12 for 200
and 800 sums on cpu, 15 for 100 and 400 on cuda) and less than 15 s (it
takes about 4.5 for 400 sums on cuda, 2 for the others).  CPU time of the
child process, not wall time, so that a loaded machine does not make it
flaky.  cpu: the whole compile; cuda: NVRTC to PTX (--emit ptx, no GPU
needed), when NVRTC is there.

For the reductions, a count that no load can disturb as well: the largest
function of the generated code (--emit llvm, --emit cuda), in lines, must
not grow with N (at most 1.5 times from N to 4N; it grew 4 times when one
function held every reduction).
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import os
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compile_time import program  # noqa: E402

TARGETS = [("cpu", ["-n", "100", "-q"], "llvm", {"indep": 500, "lets": 1000, "sums": 200}),
           ("cuda", ["--arch", "sm_90", "--emit", "ptx"], "cuda",
            {"indep": 500, "lets": 1000, "sums": 100})]


UNAVAILABLE = 69  # the exit status of a target this machine lacks


def cpu_seconds(cmd):
    """CPU seconds (user + system) of running cmd and 0, or None, the error
    and the exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        return None, r.stderr.strip()[:300], r.returncode
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), "", 0


def largest_function(text):
    """Lines of the longest top-level braced definition in text (a
    function of LLVM IR or of CUDA C)."""
    most = depth = start = 0
    for k, line in enumerate(text.splitlines()):
        if depth == 0:
            start = k
        depth += line.count("{") - line.count("}")
        if depth == 0:
            most = max(most, k - start + 1)
    return most


def skipped(name, err, rc):
    """Prints skip or FAIL for a compile that failed with err: only a target
    this machine lacks (exit 69) is a skip."""
    if rc == UNAVAILABLE:
        print(f"skip {name}: {err.splitlines()[0] if err else ''}")
    else:
        print(f"FAIL {name}: {err}")


def check_size(d, target, stage, small):
    """The largest function at N and 4N reductions."""
    name = f"compile_scale_{target}_sums_size"
    lines = {}
    for n in (small, 4 * small):
        path = os.path.join(d, f"sums{n}.jitc")
        arch = ["--arch", "sm_90"] if target == "cuda" else []
        r = subprocess.run([JITC, "-t", target, "--emit", stage, "-f", path] + arch,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            skipped(name, r.stderr.strip()[:300], r.returncode)
            return
        lines[n] = largest_function(r.stdout)
    msg = f"largest function {lines[small]} lines at {small}, {lines[4 * small]} at {4 * small}"
    if lines[4 * small] > 1.5 * lines[small]:
        print(f"FAIL {name}: {msg}")
    else:
        print(f"ok {name} ({msg})")


def main():
    with tempfile.TemporaryDirectory() as d:
        for target, extra, stage, shapes in TARGETS:
            for shape, small in shapes.items():
                t = {}
                err, rc = "", 0
                large = 4 * small
                for n in (small, large):
                    path = os.path.join(d, f"{shape}{n}.jitc")
                    with open(path, "w") as f:
                        f.write(program(shape, n))
                    t[n], err, rc = cpu_seconds([JITC, "-t", target, "--no-cache", "-f", path] + extra)
                    if t[n] is None:
                        break
                name = f"compile_scale_{target}_{shape}"
                if t.get(small) is None or t.get(large) is None:
                    # Only a target this machine lacks is a skip: NVRTC
                    # refusing the generated code is a failure.
                    if rc == UNAVAILABLE:
                        print(f"skip {name}: {err.splitlines()[0] if err else ''}")
                    else:
                        print(f"FAIL {name}: {err}")
                    continue
                ratio = t[large] / max(t[small], 0.05)
                msg = (f"{small}: {t[small]:.2f} s, {large}: {t[large]:.2f} s CPU, "
                       f"ratio {ratio:.1f}")
                if ratio > 6 or t[large] > 15:
                    print(f"FAIL {name}: {msg}")
                else:
                    print(f"ok {name} ({msg})")
                if shape == "sums":
                    check_size(d, target, stage, small)


if __name__ == "__main__":
    main()
