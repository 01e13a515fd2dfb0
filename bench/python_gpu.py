#!/usr/bin/env python3
"""jitc from Python on CuPy arrays against the same kernel run from C, on
every workload of bench/workloads.py, in one run on one GPU.

    sh bench/gpu.sh's build (build-gpu/bench/jitc_bench), then
    python3 bench/python_gpu.py --build build-gpu [--n 1e7] [--out-dir bench/results]

C: build-gpu/bench/jitc_bench -t cuda, the figure bench/gpu.sh reports as
jitc's kernel time (device_kernel_ms: CUDA events around its kernel on
device buffers the data was uploaded to once), median.
Python: jitc.evaluate(program, **cupy_arrays) on arrays already on the GPU,
CUDA events on CuPy's current stream around the call, median, two ways:
- kernel: the events are queued behind a spin kernel, so that the call's
  host side (argument parsing, the cache lookup, allocating the output)
  is over before the first event is reached: the GPU time of what the
  call queued, as C's events time its kernel;
- call: the events around the call on an idle GPU: the host side included,
  as bench/gpu.py times the peers.
Every result is checked against NumPy before its time counts.  Then the
cost of one call on small device arrays (small_calls), against CuPy and
PyTorch.  Writes python_gpu.json and python_gpu.md into --out-dir.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
from workloads import WORKLOADS, make_inputs  # noqa: E402

import jitc  # noqa: E402

SPIN = r'''
extern "C" __global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
'''


def c_kernel_ms(bench, w, n, v, tmp, reps):
    """jitc_bench's device_kernel_ms (median) for workload w on inputs v."""
    argv = [bench, "-t", "cuda"]
    for k, val in w.scalars.items():
        argv += ["-D", f"{k}={val!r}"]
    for name, a in v.items():
        path = os.path.join(tmp, f"{name}.npy")
        np.save(path, a)
        argv += ["--in", f"{name}={path}"]
    argv += ["--warmup", "3", "--min-reps", str(reps), "--max-reps", str(reps), w.program]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    if "device_kernel_ms" not in r:
        raise RuntimeError(f"jitc_bench: {r}")
    return statistics.median(r["device_kernel_ms"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build-gpu")
    ap.add_argument("--n", default="1e7")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    n = int(float(a.n))
    import cupy as cp
    spin = cp.RawKernel(SPIN, "spin")
    stream = cp.cuda.get_current_stream()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    bench = os.path.join(a.build, "bench", "jitc_bench")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in WORKLOADS:
            v = make_inputs(w, n)
            ref = w.ref({k: x.copy() for k, x in v.items()})
            scale = w.scale(v) if w.scale else None
            c_ms = c_kernel_ms(bench, w, n, v, tmp, a.reps)
            dev = {k: cp.asarray(x) for k, x in v.items()}
            scalars = dict(w.scalars)
            r = jitc.evaluate(w.program, **dev, **scalars)
            got = r if isinstance(r, dict) else {w.checked[0]: r}
            chk = common.check_outputs(w, {k: cp.asnumpy(x) for k, x in got.items()}, ref, scale)
            if not chk["ok"]:
                raise SystemExit(f"{w.name}: wrong result: {chk['why']}")

            def call():
                jitc.evaluate(w.program, **dev, **scalars)

            kernel, oncall = [], []
            for _ in range(3):
                call()
            for _ in range(a.reps):
                spin((1,), (1,), (np.int64(2_000_000),))  # about 1 ms of a busy stream
                e0.record(stream)
                call()
                e1.record(stream)
                e1.synchronize()
                kernel.append(cp.cuda.get_elapsed_time(e0, e1))
                stream.synchronize()
                e0.record(stream)
                call()
                e1.record(stream)
                e1.synchronize()
                oncall.append(cp.cuda.get_elapsed_time(e0, e1))
            row = {"workload": w.name, "title": w.title, "program": w.program, "n": n,
                   "c_kernel_ms": c_ms, "py_kernel_ms": statistics.median(kernel),
                   "py_call_ms": statistics.median(oncall), "check": chk}
            row["ratio"] = row["py_kernel_ms"] / c_ms
            rows.append(row)
            print(f"{w.name:11s} C {c_ms:.4f} ms  Python kernel {row['py_kernel_ms']:.4f} ms "
                  f"({row['ratio']:.2f}x)  call {row['py_call_ms']:.4f} ms", flush=True)
            del dev, r, got
            cp.get_default_memory_pool().free_all_blocks()
    small = small_calls(cp)
    dev_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out = {"device": dev_name, "cupy": cp.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
           "command": "python3 bench/python_gpu.py --build build-gpu --n %s" % a.n,
           "results": rows, "small_calls": small}
    os.makedirs(a.out_dir, exist_ok=True)
    common.write_json(os.path.join(a.out_dir, "python_gpu.json"), out)
    md = [f"# jitc from Python on CuPy arrays against C, {common.fmt_n(n)} elements",
          "", f"GPU: {dev_name}; CuPy {cp.__version__}, NumPy {np.__version__}, "
          f"Python {out['python']}.  Command: `{out['command']}`", "",
          "Medians of CUDA events, ms.  C: jitc_bench's kernel on device buffers (the figure "
          "bench/gpu.sh reports).  Python kernel: the GPU time of what `jitc.evaluate` queued "
          "on CuPy's stream.  Python call: events around the call on an idle GPU (its host "
          "side included).", "",
          "| workload | C kernel | Python kernel | Python / C | Python call |",
          "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| `{r['program']}` {np.dtype(BYNAME[r['workload']].dtype).name} | "
                  f"{r['c_kernel_ms']:.4f} | {r['py_kernel_ms']:.4f} | {r['ratio']:.2f}x | "
                  f"{r['py_call_ms']:.4f} |")
    md += ["", "One call where the host's work is all of it: 1000-element float64 arrays on "
           "the device (`m` (100, 10), `row` (10,)), calls back to back, the stream "
           "synchronized at the end; microseconds per call, the fastest of 5 rounds of 20,000. "
           "The peers run the same expression on their own arrays.", "",
           "| program | jitc.evaluate | CuPy | PyTorch |", "|---|---|---|---|"]
    for r in small:
        torch_us = "%.1f" % r["torch_us"] if "torch_us" in r else "-"
        md.append(f"| `{r['program']}` (peers: `{r['expr']}`) | {r['jitc_us']:.1f} | "
                  f"{r['cupy_us']:.1f} | {torch_us} |")
    common.write_md(os.path.join(a.out_dir, "python_gpu.md"), md)


SMALL = [("c = 2*a + b", ("a", "b"), "2*a + b", lambda d: 2 * d["a"] + d["b"]),
         ("a[i] += 1", ("a",), "a += 1", lambda d: d["a"].__iadd__(1)),
         ("s = sum(a)", ("a",), "a.sum()", lambda d: d["a"].sum()),
         ("c = m + row", ("m", "row"), "m + row", lambda d: d["m"] + d["row"])]


def small_calls(cp, count=20000, rounds=5):
    """The cost of one call where the host's work is all of it: programs on
    1000-element float64 device arrays, called back to back, the stream
    synchronized at the end; per call, the fastest of `rounds` rounds.
    jitc.evaluate against the same expression in CuPy and in PyTorch (its
    own tensors, on the same device)."""
    try:
        import torch
        torch = torch if torch.cuda.is_available() else None
    except ImportError:
        torch = None
    host = {"a": np.arange(1000.0), "b": np.ones(1000), "m": np.ones((100, 10)),
            "row": np.arange(10.0)}
    libs = {"jitc": {k: cp.asarray(v) for k, v in host.items()},
            "cupy": {k: cp.asarray(v) for k, v in host.items()}}
    if torch is not None:
        libs["torch"] = {k: torch.as_tensor(v, device="cuda") for k, v in host.items()}

    def per_call(fn, sync):
        for _ in range(200):
            fn()
        sync()
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(count):
                fn()
            sync()
            best = min(best, (time.perf_counter() - t0) / count * 1e6)
        return best
    rows = []
    for prog, used, expr, peer in SMALL:
        names = {k: libs["jitc"][k] for k in used}
        row = {"program": prog, "expr": expr,
               "jitc_us": per_call(lambda: jitc.evaluate(prog, **names),
                                   cp.cuda.get_current_stream().synchronize),
               "cupy_us": per_call(lambda: peer(libs["cupy"]),
                                   cp.cuda.get_current_stream().synchronize)}
        if torch is not None:
            row["torch_us"] = per_call(lambda: peer(libs["torch"]), torch.cuda.synchronize)
        rows.append(row)
        print("%-12s jitc %.1f us  cupy %.1f us  torch %s us" % (
            prog, row["jitc_us"], row["cupy_us"], "%.1f" % row["torch_us"] if "torch_us" in row
            else "-"), flush=True)
    return rows


BYNAME = {w.name: w for w in WORKLOADS}

if __name__ == "__main__":
    main()
