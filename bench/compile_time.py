#!/usr/bin/env python3
"""compile_time.py -- jitc's compile time against the size of the program.

For 10, 100, 1,000 and 10,000 statements of three shapes,
  indep  independent outputs:  c0 = a + 0; c1 = a + 1; ...
  lets   a chain of lets:      let t1 = a*1.5+1; let t2 = t1*0.5-t1; ...; c = tN
  sums   reductions:           s0 = sum(a + 0); s1 = sum(a + 1); ...
compiles each cold (--no-cache) and prints a table of seconds, wall and CPU:
  cpu    the whole compile of `jitc -t cpu` (front end, LLVM, loading)
  ptx    `jitc -t cuda --emit ptx --arch ARCH`: front end and NVRTC to PTX
  cubin  NVRTC from the generated CUDA C to a CUBIN for ARCH (PTX and
         ptxas: what a compile on a GPU machine does), called directly
On a machine with a GPU, `cuda` adds `jitc -t cuda` itself (compile and
module load, from its --json report).

    python3 bench/compile_time.py [--sizes 10,100,1000,10000] [--arch sm_90]
                                  [--targets cpu,ptx,cubin,cuda] [--shapes indep,lets,sums]
                                  [--jitc build/jitc]
                                  [--out bench/results/compile_time.md]

With --out the table also goes to that file (make bench-compile writes
bench/results/compile_time.md, which bench/docs.py puts in
docs/PERFORMANCE.md).

A column is left out (with a note) when its target is not available.
"""
import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def program(shape, n):
    """The program of `shape` with n statements."""
    if shape == "indep":
        # o, not c: c64 and c128 are casts of the language
        return "\n".join(f"o{k} = a + {k}" for k in range(n)) + "\n"
    if shape == "sums":
        return "\n".join(f"s{k} = sum(a + {k})" for k in range(n)) + "\n"
    lines = ["let t1 = a * 1.5 + 1"]
    lines += [f"let t{k} = t{k - 1} * 0.5 - t{k - 1}" for k in range(2, n)]
    return "\n".join(lines + [f"c = t{max(n - 1, 1)}"]) + "\n"


def run_timed(cmd):
    """(wall s, CPU s, stdout) of cmd, or raises with its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.stdout


class Nvrtc:
    """NVRTC called directly: the CUDA C that jitc generates, to a CUBIN."""

    def __init__(self):
        self.lib = None
        for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
            try:
                self.lib = ctypes.CDLL(name)
                break
            except OSError:
                pass
        if self.lib:
            major, minor = ctypes.c_int(), ctypes.c_int()
            self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
            self.version = major.value * 100 + minor.value

    def compile(self, src, arch):
        """(wall s, CPU s) of compiling src, with jitc's options."""
        L = self.lib
        opts = [f"-arch={arch}", "--fmad=false"] + (["-minimal"] if self.version >= 1204 else [])
        prog = ctypes.c_void_p()
        if L.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"jitc.cu", 0, None, None):
            raise RuntimeError("nvrtcCreateProgram failed")
        o = (ctypes.c_char_p * len(opts))(*[x.encode() for x in opts])
        c0, t0 = time.process_time(), time.perf_counter()
        r = L.nvrtcCompileProgram(prog, len(opts), o)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        log = ""
        if r:
            n = ctypes.c_size_t()
            L.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            b = ctypes.create_string_buffer(n.value)
            L.nvrtcGetProgramLog(prog, b)
            log = b.value.decode(errors="replace")
        L.nvrtcDestroyProgram(ctypes.byref(prog))
        if r:
            raise RuntimeError("NVRTC: " + log.strip().splitlines()[-1] if log.strip() else "NVRTC failed")
        return wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--targets", default="cpu,ptx,cubin,cuda")
    ap.add_argument("--shapes", default="indep,lets,sums")
    ap.add_argument("--jitc", default=os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc"))
    ap.add_argument("--out")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    targets = a.targets.split(",")
    nv = Nvrtc()
    lines = []

    def emit(line):
        print(line, flush=True)
        lines.append(line)

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(x.split(":", 1)[1].strip() for x in f if x.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load0 = os.getloadavg()[0]
    emit(f"Latest run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu}, "
         f"{os.cpu_count()} CPUs; command `python3 bench/compile_time.py "
         f"--sizes {a.sizes} --arch {a.arch} --targets {a.targets} --shapes {a.shapes}` "
         "(`make bench-compile`); "
         f"load average at the start {load0:.1f}.")
    emit("")
    emit("Each program compiled cold (`--no-cache`) in a new process.  Seconds, wall / CPU "
         "(user + system) of the process: the compile is single-threaded, so on an idle "
         "machine the two agree, and on a loaded one CPU time is the figure to read.  "
         "Shapes: `indep` is `c0 = a + 0; c1 = a + 1; ...` (one array per statement), "
         "`lets` is `let t1 = a*1.5+1; let t2 = t1*0.5-t1; ...; c = tN`, `sums` is "
         "`s0 = sum(a + 0); s1 = sum(a + 1); ...` (one reduction per statement).  `cpu`: "
         "`jitc -t cpu` (front end, LLVM, load); `ptx`: `jitc -t cuda --emit ptx` (front "
         f"end, NVRTC to PTX); `cubin`: NVRTC from jitc's CUDA C to a CUBIN for {a.arch}, "
         "PTX and ptxas, as a compile on a GPU machine does; `cuda`: `jitc -t cuda` on a "
         "GPU machine (compile_ms of --json, wall only).")
    emit("")
    emit("| shape | statements | " + " | ".join(targets) + " |")
    emit("|---|---:|" + "---:|" * len(targets))
    notes = []
    with tempfile.TemporaryDirectory() as d:
        for shape in a.shapes.split(","):
            for n in sizes:
                path = os.path.join(d, f"{shape}{n}.jitc")
                with open(path, "w") as f:
                    f.write(program(shape, n))
                cells = []
                for t in targets:
                    try:
                        if t == "cpu":
                            w, c, _ = run_timed([a.jitc, "-t", "cpu", "--no-cache", "-q", "-n", "100",
                                                 "-f", path])
                        elif t == "ptx":
                            w, c, _ = run_timed([a.jitc, "-t", "cuda", "--arch", a.arch, "--emit",
                                                 "ptx", "-f", path])
                        elif t == "cubin":
                            if not nv.lib:
                                raise RuntimeError("no NVRTC")
                            _, _, src = run_timed([a.jitc, "-t", "cuda", "--emit", "cuda", "-f", path])
                            w, c = nv.compile(src, a.arch)
                        else:
                            _, _, out = run_timed([a.jitc, "-t", "cuda", "--no-cache", "--json",
                                                   "-n", "100", "-f", path])
                            w = json.loads(out.splitlines()[0])["compile_ms"] / 1000
                            c = float("nan")
                        cells.append(f"{w:.2f} / {c:.2f}")
                    except RuntimeError as e:
                        cells.append("n/a")
                        print(f"# {t} {shape} {n}: {e}", file=sys.stderr)
                        notes.append((t, f"{shape} {n}", str(e)))
                emit(f"| {shape} | {n} | " + " | ".join(cells) + " |")
    emit("")
    # One line per target and reason.
    seen = {}
    for t, what, why in notes:
        seen.setdefault((t, why), []).append(what)
    for (t, why), whats in seen.items():
        emit(f"- {t} n/a ({', '.join(whats)}): {why}")
    emit("")
    emit(f"Load average at the end {os.getloadavg()[0]:.1f}.")
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
