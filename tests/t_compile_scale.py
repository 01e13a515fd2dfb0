#!/usr/bin/env python3
"""t_compile_scale.py -- compile time grows linearly with the program.

Compiles programs of N and 4N statements (independent outputs, N = 500,
and a chain of lets, N = 1,000) with the disk cache off, and checks that the
larger takes less than 6 times the CPU time of the smaller (linear is 4
times; the quadratic compile this guards against took 16 times and more)
and less than 15 s (it takes about 2).  CPU time of the child process,
not wall time, so that a loaded machine does not make it flaky.  cpu: the
whole compile; cuda: NVRTC to PTX (--emit ptx, no GPU needed), when NVRTC
is there.
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


def main():
    with tempfile.TemporaryDirectory() as d:
        for target, extra in [("cpu", ["-n", "100", "-q"]),
                              ("cuda", ["--arch", "sm_90", "--emit", "ptx"])]:
            for shape, small in (("indep", 500), ("lets", 1000)):
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


if __name__ == "__main__":
    main()
