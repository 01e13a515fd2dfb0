#!/usr/bin/env python3
"""axis_cpu.py -- reductions over an axis on the cpu target against their
peers and the copy of the same bytes, in one run (`make bench-axis`; results
in bench/results/axis_cpu.{json,md}, shown in docs/PERFORMANCE.md,
"Reductions over an axis on the CPU"):

  `sum(x, axis=1)` (each row) and `sum(x, axis=0)` (each column) of a
  (4096, 4096) float32 matrix in C order: jitc (through libjitc, compiled
  once, each call one jitc_run_arrays, all cores), NumPy's np.sum(x, axis=...)
  (one thread), numexpr's evaluate('sum(x, axis=...)'), jitc on one thread
  (as NumPy runs), jitc's whole
  `sum(x)` (one pass over the same 64 MB, the reduction's own pace), `sum(w,
  axis=0)` of the same bytes as a (2, 8388608) matrix (many columns of two
  rows) by jitc, NumPy and numexpr, and the
  copy of 64 MB (the C memcpy of bench/c_loops.c on all cores where the
  drivers are built, and NumPy's copyto).

Rounds run every implementation in turn, call by call, so that background
load falls on all of them alike; figures are medians of the pooled calls.
Every result is checked against NumPy's float64 sum first.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import common  # noqa: E402
import nd_lib  # noqa: E402  (jitc_run_arrays through ctypes, shared with the tests)

SIDE = 4096
WIDE = "%%s sum(w, axis=0), w (2, %d)" % (SIDE * SIDE // 2)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=15, help="timed calls per round")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "axis_cpu"))
    return ap.parse_args()


class Jitc:
    """A compiled kernel over x and its result, one jitc_run_arrays a call."""

    def __init__(self, R, prog, x):
        self.R, self.L = R, nd_lib.L
        self.k = R.kernel(prog, {"x": x}, "cpu")
        self.out = np.ones(R.shape(self.k, {"x": x}, 1), np.float32)  # written before timing
        self.keep = []
        self.arrs = R.arrays(self.k, {"x": x}, {"s": self.out}, self.keep)

    def __call__(self):
        st = self.L.jitc_run_arrays(self.R.r.ctx, self.k, self.arrs, None, None)
        if st:
            raise RuntimeError(self.L.jitc_errmsg(self.R.r.ctx).decode())
        return self.out


def memcpy_driver(build, reps):
    exe = os.path.join(build, "bench", "c_loops")
    if not os.path.exists(exe):
        return None
    argv = [exe, "copy", "--bytes", str(SIDE * SIDE * 4), "--warmup", "2", "--min-reps",
            str(reps), "--max-reps", str(reps), "--budget-ms", "1"]

    def run():
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        obj = json.loads(p.stdout.strip().splitlines()[-1])
        if p.returncode or "error" in obj:
            raise RuntimeError(f"c_loops copy: {obj.get('error') or p.stderr[-300:]}")
        return obj["times_ms"]
    return run


def main():
    a_ = parse_args()
    x = np.random.default_rng(1).standard_normal((SIDE, SIDE)).astype(np.float32)
    dst = np.empty_like(x)
    machine = common.machine_info()
    peers = {}
    try:
        import numexpr
        numexpr.set_num_threads(os.cpu_count())
        peers["numexpr"] = numexpr.__version__
    except ImportError as e:
        numexpr = None
        peers["numexpr"] = f"absent: {e}"
    R, R1 = nd_lib.Run(), nd_lib.Run(threads=1)
    calls = {"jitc sum(x, axis=1)": Jitc(R, "s = sum(x, axis=1)", x),
             "jitc sum(x, axis=0)": Jitc(R, "s = sum(x, axis=0)", x),
             "jitc sum(x, axis=1), one thread": Jitc(R1, "s = sum(x, axis=1)", x),
             "jitc sum(x, axis=0), one thread": Jitc(R1, "s = sum(x, axis=0)", x),
             "numpy sum(x, axis=1)": lambda: np.sum(x, axis=1),
             "numpy sum(x, axis=0)": lambda: np.sum(x, axis=0)}
    if numexpr:
        for ax in (1, 0):
            calls[f"numexpr sum(x, axis={ax})"] = (
                lambda ax=ax: numexpr.evaluate(f"sum(x, axis={ax})", local_dict={"x": x}))
    whole = Jitc(R, "s = sum(x)", x)
    calls["jitc sum(x), every element"] = whole
    # The same 64 MB as a wide and short matrix: two rows, each column's
    # result a step of its own (NumPy adds the two rows).
    w = x.reshape(2, -1)
    calls[WIDE % "jitc"] = Jitc(R, "s = sum(x, axis=0)", w)
    calls[WIDE % "numpy"] = lambda: np.sum(w, axis=0)
    if numexpr:
        calls[WIDE % "numexpr"] = lambda: numexpr.evaluate("sum(x, axis=0)", local_dict={"x": w})
    calls["copy 64 MB, numpy copyto"] = lambda: np.copyto(dst, x)

    # The checks, before any time counts.
    for name, fn in calls.items():
        if "copy" in name:
            continue
        ax = None if "every" in name else int(name.split("axis=")[1][0])
        want = np.sum(w if "(2," in name else x, axis=ax, dtype=np.float64)
        got = np.asarray(fn(), np.float64)
        tol = 1e-5 * np.sum(np.abs(w if "(2," in name else x), axis=ax, dtype=np.float64)
        if got.shape != np.shape(want) or np.any(np.abs(got - want) > tol):
            sys.exit(f"axis_cpu: {name} differs from NumPy's float64 sum")

    drivers = {}
    memcpy = memcpy_driver(a_.build, a_.reps)
    if memcpy:
        drivers["copy 64 MB, C memcpy (all cores)"] = memcpy
    times = {k: [] for k in list(drivers) + list(calls)}
    for _ in range(a_.rounds):
        for name, fn in drivers.items():
            times[name] += fn()
        for fn in calls.values():
            fn()
        for _ in range(a_.reps):
            for name, fn in calls.items():
                t0 = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - t0) * 1e3)
    machine["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    st = {k: common.stats(v) for k, v in times.items()}
    med = {k: v["median_ms"] for k, v in st.items()}
    # The ratios: against the copy that takes turns with the others call by
    # call (the C memcpy runs in its own process, its OpenMP threads the most
    # exposed to the machine's other work).
    copy = med["copy 64 MB, numpy copyto"]
    cmd = "nice make bench-axis" if os.nice(0) else "make bench-axis"
    res = {"machine": machine, "shape": [SIDE, SIDE], "peers": peers, "command": cmd,
           "stats": st, "times_ms": times}
    L = ["# Reductions over an axis on the cpu target", "",
         f"{machine['date']}, {machine['cpu']}, {machine['cores']} cores; x: ({SIDE}, {SIDE}) "
         f"float32, C order, 64 MB; load average before/after "
         f"{' '.join(machine['loadavg_start'])} / {' '.join(machine['loadavg_end'])}, nice "
         f"{machine['nice']}; numpy {machine['numpy']}, numexpr {peers['numexpr']}; "
         f"{a_.rounds} rounds of {a_.reps} calls each, pooled; command `{cmd}`.", "",
         "| implementation | median ms | ± IQR/2 % | fastest ms | / numpy copyto |",
         "|---|---|---|---|---|"]
    for k in times:
        L.append(f"| {k} | {med[k]:.3f} | {st[k]['iqr_pct'] / 2:.1f} | {st[k]['min_ms']:.3f} | "
                 f"{med[k] / copy:.2f}x |")
    os.makedirs(os.path.dirname(a_.out), exist_ok=True)
    common.write_json(a_.out + ".json", res)
    common.write_md(a_.out + ".md", L)
    print("\n".join(L))


if __name__ == "__main__":
    main()
