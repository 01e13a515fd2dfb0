#!/usr/bin/env python3
"""reduce_cpu.py -- reductions on the cpu target against the memory limit and
their peers, in one run (`make bench-reduce`; results in
bench/results/reduce_cpu.{json,md}, shown in docs/PERFORMANCE.md, "Reductions"):

  1. `s = sum(a*b)` over float32 arrays: jitc (through libjitc, compiled
     once, each call one jitc_run), the copy limit (c_loops stream dot_f32:
     the same two arrays read once, one trivial operation per element, as the
     cpu tables' `copy`), the C loop (c_loops dot_f32, OpenMP, float products
     summed in double), numpy.dot and numexpr's evaluate('sum(a*b)');
  2. `s = sum(a*b); m = max(abs(a-b)); k = argmin(a); c = a - b` against the
     single-output `c = a - b` on the same data: reading the inputs once, the
     three reductions should cost little.

Rounds run every implementation in turn (the in-process ones call by call),
so background load falls on all of them alike; figures are medians of the
pooled calls.  Data: standard normal
(non-zero).  Every result is checked against NumPy first.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import common  # noqa: E402
import reduce_lib  # noqa: E402  (libjitc through ctypes, shared with the tests)

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as bench/run.py

P1 = "s = sum(a*b)"
P3 = "s = sum(a*b)\nm = max(abs(a - b))\nk = argmin(a)\nc = a - b"
P0 = "c = a - b"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-n", type=float, default=1e7)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=30, help="timed calls per round")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "reduce_cpu"))
    return ap.parse_args()


class Jitc:
    """A compiled kernel and its arrays, called with one jitc_run each time."""

    def __init__(self, runner, prog, inputs, n):
        import ctypes as C
        self.L = reduce_lib.lib()
        self.ctx = runner.ctx
        self.k = runner.compile(prog, inputs, "cpu")
        na = self.L.jitc_kernel_array_count(self.k)
        self.ptrs = (C.c_void_p * na)()
        self.arrays = {}
        for j in range(na):
            nm, role, dt = C.c_char_p(), C.c_int(), C.c_int()
            self.L.jitc_kernel_array(self.k, j, C.byref(nm), C.byref(role), C.byref(dt))
            name = nm.value.decode()
            if name in inputs:
                arr = inputs[name]
            else:
                # Outputs made once and written before timing (no page faults).
                arr = np.ones(1 if role.value == reduce_lib.RESULT else n,
                              reduce_lib.DTYPES[dt.value])
            self.arrays[name] = arr
            self.ptrs[j] = arr.ctypes.data
        self.n = n

    def __call__(self):
        st = self.L.jitc_run(self.ctx, self.k, self.n, self.ptrs, None, None)
        if st:
            raise RuntimeError(self.L.jitc_errmsg(self.ctx).decode())
        return self.arrays


def driver(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    lines = p.stdout.strip().splitlines()
    obj = json.loads(lines[-1]) if lines else {}
    if p.returncode or "error" in obj:
        raise RuntimeError(f"{argv[:3]}: {obj.get('error') or p.stderr.strip()[-300:]}")
    return obj["times_ms"]


def main():
    a_ = parse_args()
    reduce_lib.use_build(a_.build)
    n = int(a_.n)
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    machine = common.machine_info()
    peers = {}
    try:
        import numexpr
        numexpr.set_num_threads(os.cpu_count())
        peers["numexpr"] = numexpr.__version__
    except ImportError as e:
        numexpr = None
        peers["numexpr"] = f"absent: {e}"
    R = reduce_lib.Runner()
    k1 = Jitc(R, P1, {"a": a, "b": b}, n)
    k3 = Jitc(R, P3, {"a": a, "b": b}, n)
    k0 = Jitc(R, P0, {"a": a, "b": b}, n)

    # The checks, before any time counts.
    exact = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    s = float(k1()["s"][0])
    if abs(s - exact) > 1e-6 * float(np.sum(np.abs(a * b))):
        sys.exit(f"reduce_cpu: jitc sum(a*b) = {s}, NumPy {exact}")
    r3 = k3()
    if (float(r3["m"][0]) != float(np.max(np.abs(a - b))) or int(r3["k"][0]) != int(np.argmin(a))
            or not np.array_equal(r3["c"], a - b) or abs(float(r3["s"][0]) - s) > 0):
        sys.exit("reduce_cpu: the three-reduction program differs from NumPy")
    if not np.array_equal(k0()["c"], a - b):
        sys.exit("reduce_cpu: c = a - b differs from NumPy")

    bindir = os.path.join(a_.build, "bench")
    tmp = tempfile.mkdtemp(prefix="jitc-reduce-")
    fa, fb = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    np.save(fa, a)
    np.save(fb, b)
    ins = ["--in", f"a={fa}", "--in", f"b={fb}"]
    timing = ["--warmup", "2", "--min-reps", str(a_.reps), "--max-reps", str(a_.reps),
              "--budget-ms", "1"]
    impls = {
        "jitc sum(a*b)": None,
        "copy limit (read a, b)": lambda: driver([os.path.join(bindir, "c_loops"), "stream",
                                                  "dot_f32"] + ins + timing),
        "C loop (OpenMP)": lambda: driver([os.path.join(bindir, "c_loops"), "dot_f32"] + ins
                                          + timing),
        "numpy.dot": None,
        "jitc 3 reductions + c = a - b": None,
        "jitc c = a - b": None,
    }
    if numexpr:
        got = float(numexpr.evaluate("sum(a*b)", local_dict={"a": a, "b": b}))
        if abs(got - exact) > 1e-3 * float(np.sum(np.abs(a * b))):
            sys.exit(f"reduce_cpu: numexpr gives {got}, NumPy {exact}")
        impls["numexpr sum(a*b)"] = None
    # In each round the in-process implementations take turns call by call,
    # so that a burst of background load falls on all of them alike; the C
    # drivers (a process each) run between them.
    calls = {"jitc sum(a*b)": k1, "numpy.dot": lambda: np.dot(a, b),
             "jitc 3 reductions + c = a - b": k3, "jitc c = a - b": k0}
    if numexpr:
        calls["numexpr sum(a*b)"] = lambda: numexpr.evaluate("sum(a*b)", local_dict={"a": a, "b": b})
    times = {k: [] for k in impls}
    for _ in range(a_.rounds):
        for name, fn in impls.items():
            if name not in calls:
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
    rbytes = 2 * n * 4
    bw = {k: rbytes / (med[k] * 1e6) for k in med}
    cmd = "nice make bench-reduce" if os.nice(0) else "make bench-reduce"
    res = {"machine": machine, "n": n, "peers": peers, "command": cmd,
           "stats": st, "times_ms": times,
           "goals": {
               "sum_vs_copy": med["copy limit (read a, b)"] / med["jitc sum(a*b)"],
               "sum_vs_numpy_dot": med["numpy.dot"] / med["jitc sum(a*b)"],
               "sum_vs_numexpr": (med["numexpr sum(a*b)"] / med["jitc sum(a*b)"]
                                  if "numexpr sum(a*b)" in med else None),
               "three_vs_one": med["jitc 3 reductions + c = a - b"] / med["jitc c = a - b"]}}
    g = res["goals"]
    L = ["# Reductions on the cpu target", "",
         f"{machine['date']}, {machine['cpu']}, {machine['cores']} cores; n = {n:,} float32 "
         f"elements; load average before/after {' '.join(machine['loadavg_start'])} / "
         f"{' '.join(machine['loadavg_end'])}, nice {machine['nice']}; numpy {machine['numpy']}, "
         f"numexpr {peers['numexpr']}; {a_.rounds} rounds of {a_.reps} calls each, pooled; "
         f"command `{cmd}`.", "",
         "| implementation | median ms | ± IQR/2 % | fastest ms | GB/s read (a, b) |",
         "|---|---|---|---|---|"]
    for k in impls:
        L.append(f"| {k} | {med[k]:.3f} | {st[k]['iqr_pct'] / 2:.1f} | {st[k]['min_ms']:.3f} | "
                 + (f"{bw[k]:.1f}" if "c = a - b" not in k else "-") + " |")
    L += ["",
          "| goal | figure | met |", "|---|---|---|",
          f"| sum(a*b) at >= 90% of the copy limit's bandwidth | {100 * g['sum_vs_copy']:.0f}% "
          f"| {'yes' if g['sum_vs_copy'] >= 0.9 else 'NO'} |",
          f"| sum(a*b) no slower than numpy.dot | numpy.dot / jitc = {g['sum_vs_numpy_dot']:.2f}x "
          f"| {'yes' if g['sum_vs_numpy_dot'] >= 1 else 'NO'} |"]
    if g["sum_vs_numexpr"] is not None:
        L.append(f"| sum(a*b) no slower than numexpr | numexpr / jitc = {g['sum_vs_numexpr']:.2f}x "
                 f"| {'yes' if g['sum_vs_numexpr'] >= 1 else 'NO'} |")
    L.append(f"| 3 reductions + 1 output within 1.2x of `c = a - b` | {g['three_vs_one']:.2f}x "
             f"| {'yes' if g['three_vs_one'] <= 1.2 else 'NO'} |")
    os.makedirs(os.path.dirname(a_.out), exist_ok=True)
    common.write_json(a_.out + ".json", res)
    with open(a_.out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))
    R.close()


if __name__ == "__main__":
    main()
