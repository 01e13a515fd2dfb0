#!/usr/bin/env python3
"""gpu_complex.py -- complex64 on the GPU: c = exp(z) * w against CuPy.

    python3 bench/gpu_complex.py --build build-gpu [--n 1e7] [--reps 30]

Inputs already on the device: z with real parts in [-5, 5] and imaginary
parts in [-10, 10], w in the unit square, complex64.  Times, as the median
of --reps CUDA-event timings after warm-up runs, the kernel alone:
  jitc       jitc_bench -t cuda on device buffers (one kernel: exp, the
             product, the store), bench/jitc_bench.c's device_kernel_ms
  cupy       cp.exp(z) * w: two kernels and a temporary, as NumPy code runs
  cupy fused an ElementwiseKernel 'c = exp(z) * w' (thrust::complex<float>)
and the bandwidth each reaches counting the 24 bytes an element must move.
jitc's result is checked against NumPy's (complex128 reference, 8 epsilons
of float32 of the larger part).  Writes gpu_complex.json in --out-dir (the
results folder beside this script by default) and prints a table last.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs(n):
    rng = np.random.default_rng(7)
    z = (rng.uniform(-5, 5, n) + 1j * rng.uniform(-10, 10, n)).astype(np.complex64)
    w = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex64)
    return z, w


def events_ms(cp, fn, reps):
    """Median of reps CUDA-event timings of fn() on the current stream."""
    stream = cp.cuda.get_current_stream()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        stream.synchronize()
        e0.record(stream)
        fn()
        e1.record(stream)
        e1.synchronize()
        times.append(cp.cuda.get_elapsed_time(e0, e1))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build-gpu")
    ap.add_argument("--n", default="1e7")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    n = int(float(a.n))
    z, w = inputs(n)
    ref = np.exp(z.astype(np.complex128)) * w.astype(np.complex128)
    prog = "c = exp(z) * w"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, x in (("z", z), ("w", w)):
            np.save(os.path.join(tmp, name + ".npy"), x)
        bench = os.path.join(a.build, "bench", "jitc_bench")
        out = os.path.join(tmp, "c.npy")
        argv = [bench, "-t", "cuda", "--in", "z=" + os.path.join(tmp, "z.npy"), "--in",
                "w=" + os.path.join(tmp, "w.npy"), "--out", "c=" + out, "--warmup", "5",
                "--min-reps", str(a.reps), "--max-reps", str(a.reps), prog]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        r = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
        if "device_kernel_ms" not in r:
            raise SystemExit("jitc_bench: %s %s" % (p.stdout[-2000:], p.stderr[-2000:]))
        c = np.load(out)
        m = np.maximum(np.abs(ref.real), np.abs(ref.imag))
        err = np.maximum(np.abs(c.real - ref.real), np.abs(c.imag - ref.imag)) / np.where(m > 0, m, 1)
        worst = float(np.max(err) / 2.0 ** -23)
        if not worst <= 8:
            raise SystemExit("jitc's result is off by %.1f epsilons" % worst)
        rows.append(("jitc", statistics.median(r["device_kernel_ms"])))
    import cupy as cp
    dz, dw = cp.asarray(z), cp.asarray(w)
    rows.append(("cupy", events_ms(cp, lambda: cp.exp(dz) * dw, a.reps)))
    fused = cp.ElementwiseKernel("complex64 z, complex64 w", "complex64 c", "c = exp(z) * w",
                                 "jitc_bench_cexp")
    dc = cp.empty_like(dz)
    rows.append(("cupy fused", events_ms(cp, lambda: fused(dz, dw, dc), a.reps)))
    cerr = float(np.max(np.maximum(np.abs(cp.asnumpy(dc).real - ref.real),
                                   np.abs(cp.asnumpy(dc).imag - ref.imag)) / np.where(m > 0, m, 1)) / 2.0 ** -23)
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    result = {"device": dev, "n": n, "program": prog, "reps": a.reps, "cupy": cp.__version__,
              "jitc_max_eps": worst, "cupy_fused_max_eps": cerr,
              "results": [{"name": k, "kernel_ms": v, "gb_s": 24 * n / v / 1e6} for k, v in rows]}
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "gpu_complex.json"), "w") as f:
        json.dump(result, f, indent=1)
    print("%s, %d complex64 elements, %s; median of %d (CUDA events, kernel only)"
          % (dev, n, prog, a.reps))
    print("largest error against complex128: jitc %.2f, cupy fused %.2f epsilons of float32"
          % (worst, cerr))
    print("%-12s %10s %10s" % ("", "ms", "GB/s"))
    for k, v in rows:
        print("%-12s %10.4f %10.1f" % (k, v, 24 * n / v / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
