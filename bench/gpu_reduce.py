#!/usr/bin/env python3
"""The GPU benchmark of reductions: jitc's cuda target against torch.dot,
cupy.dot and a device-to-device copy, in one run on data already on the GPU.

    sh bench/gpu.sh --reductions      (builds jitc without LLVM, then runs this)
    python3 bench/gpu_reduce.py --build build-gpu [--n 10000000]

Workloads, float32, n elements of non-zero data (a, b normal + 3):
- dot: `s = sum(a * b)` (jitc_run_device on CuPy's arrays, on CuPy's
  stream), torch.dot, cupy.dot; the limit: a device-to-device copy of the
  same bytes (2 n floats read by dot; the copy reads and writes them).
- fused: `s = sum(a * b); m = max(abs(a - b)); k = argmin(a); c = a - b`
  against `c = a - b` alone on the same data: three reductions and one
  output read the inputs once.
Timing, as bench/python_gpu.py does: the GPU time of `batch` back-to-back
calls queued behind a spin kernel (the host's side of the calls is done
while the stream is busy), CUDA events around them, per call; the median of
`reps` batches.  Also the time of one call on an idle GPU, host side
included (events around it).  Every result is checked against NumPy first.  Writes gpu_reduce.json and gpu_reduce.md
into --out-dir (bench/results); bench/docs.py puts the table in
docs/PERFORMANCE.md, "Reductions".
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

JITC_CUDA, JITC_F32 = 2, 3


class Decl(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int)]


class Jitc:
    """The library through ctypes: compile, then jitc_run_device."""

    def __init__(self, build):
        self.lib = ctypes.CDLL(os.path.join(build, "libjitc.so"))
        L = self.lib
        L.jitc_context_new.restype = ctypes.c_void_p
        L.jitc_errmsg.restype = ctypes.c_char_p
        L.jitc_errmsg.argtypes = [ctypes.c_void_p]
        L.jitc_compile.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(Decl),
                                   ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                   ctypes.POINTER(ctypes.c_void_p)]
        L.jitc_kernel_find_array.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        L.jitc_kernel_array_count.argtypes = [ctypes.c_void_p]
        L.jitc_run_device.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                      ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p,
                                      ctypes.c_void_p]
        self.ctx = L.jitc_context_new()

    def kernel(self, src, arrays, decls=(("a", JITC_F32), ("b", JITC_F32))):
        """A function (n, stream) running src over the CuPy arrays `arrays`
        (by name), its inputs declared by (name, jitc_dtype) pairs."""
        opts = ctypes.create_string_buffer(512)
        self.lib.jitc_options_init(opts)
        ctypes.c_int.from_buffer(opts, 0).value = JITC_CUDA  # .target comes first
        decl = (Decl * len(decls))(*((name.encode(), t) for name, t in decls))
        k = ctypes.c_void_p()
        if self.lib.jitc_compile(self.ctx, src.encode(), decl, len(decls), None, 0, opts,
                                 ctypes.byref(k)):
            raise RuntimeError(self.lib.jitc_errmsg(self.ctx).decode())
        ptrs = (ctypes.c_uint64 * self.lib.jitc_kernel_array_count(k))()
        for name, arr in arrays.items():
            ptrs[self.lib.jitc_kernel_find_array(k, name.encode())] = arr.data.ptr
        return lambda n, stream: self.run(k, n, ptrs, stream)

    def run(self, k, n, ptrs, stream):
        if self.lib.jitc_run_device(self.ctx, k, n, ptrs, None, stream):
            raise RuntimeError(self.lib.jitc_errmsg(self.ctx).decode())


SPIN = r'''
extern "C" __global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
'''


def timed(cp, spin, fn, batch, reps, warmup=3):
    """(median per-call GPU ms of `reps` batches of `batch` calls queued
    behind a spin kernel, those times, median ms of one call on an idle
    GPU with its host side), on CuPy's current stream."""
    for _ in range(warmup):
        fn()
    cp.cuda.get_current_stream().synchronize()
    e0, e1, times, calls = cp.cuda.Event(), cp.cuda.Event(), [], []
    for _ in range(reps):
        spin((1,), (1,), (np.int64(8_000_000),))  # a few ms of a busy stream
        e0.record()
        for _ in range(batch):
            fn()
        e1.record()
        e1.synchronize()
        times.append(cp.cuda.get_elapsed_time(e0, e1) / batch)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        calls.append(cp.cuda.get_elapsed_time(e0, e1))
    return float(np.median(times)), times, float(np.median(calls))


def jax_dot(ha, hb, want, batch, reps):
    """jax.jit's sum(a*b) on its own arrays and stream: JAX has no events, so
    the wall clock of `batch` calls queued back to back, per call, and of one
    call on an idle GPU, the host side included; None without JAX."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
    except ImportError:
        return None
    f = jax.jit(lambda x, y: jax.numpy.sum(x * y))
    x, y = jax.device_put(ha), jax.device_put(hb)
    assert abs(float(f(x, y)) - want) <= 1e-4 * abs(want)
    times, calls = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(batch):
            r = f(x, y)
        r.block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3 / batch)
        time.sleep(0.002)
        t0 = time.perf_counter()
        f(x, y).block_until_ready()
        calls.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), times, float(np.median(calls))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD", "build-gpu"))
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--reps", type=int, default=25)
    a = p.parse_args()
    import cupy as cp
    import torch
    n = a.n
    rng = np.random.default_rng(1)
    ha = (rng.standard_normal(n) + 3).astype(np.float32)
    hb = (rng.standard_normal(n) + 3).astype(np.float32)
    da, db, dc = cp.asarray(ha), cp.asarray(hb), cp.empty(n, cp.float32)
    ta, tb = torch.as_tensor(da, device="cuda"), torch.as_tensor(db, device="cuda")
    res = {k: cp.zeros(1, t) for k, t in (("s", cp.float32), ("m", cp.float32),
                                           ("k", cp.int64))}
    J = Jitc(a.build)
    # One explicit stream for everyone: jitc's argument, CuPy's current, torch's.
    stream = cp.cuda.Stream(non_blocking=False)
    stream.use()
    sp = ctypes.c_void_p(stream.ptr)
    dot = J.kernel("s = sum(a * b)", {"a": da, "b": db, "s": res["s"]})
    fused = J.kernel("s = sum(a * b); m = max(abs(a - b)); k = argmin(a); c = a - b",
                     {"a": da, "b": db, "c": dc, **res})
    sub = J.kernel("c = a - b", {"a": da, "b": db, "c": dc})
    # Where the fused program's time goes: one reduction at a time with the output.
    PARTS = ("s = sum(a * b); c = a - b", "m = max(abs(a - b)); c = a - b",
             "k = argmin(a); c = a - b")
    parts = {p_: J.kernel(p_, {"a": da, "b": db, "c": dc, p_[0]: res[p_[0]]}) for p_ in PARTS}

    # Correctness first, against NumPy (float64 sums: jitc accumulates float32 in float64).
    want = float(np.dot(ha.astype(np.float64), hb.astype(np.float64)))
    dot(n, sp)
    got = float(res["s"].get()[0])
    assert abs(got - want) <= 1e-6 * abs(want), (got, want)
    fused(n, sp)
    assert abs(float(res["s"].get()[0]) - want) <= 1e-6 * abs(want)
    assert res["m"].get()[0] == np.max(np.abs(ha - hb))
    assert res["k"].get()[0] == np.argmin(ha)
    assert (dc.get() == ha - hb).all()
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)):
        assert abs(float(torch.dot(ta, tb)) - want) <= 1e-4 * abs(want)
    assert abs(float(cp.dot(da, db)) - want) <= 1e-4 * abs(want)

    # The fusing peers a user picks for sum(a*b): CuPy's ReductionKernel (as
    # CuPy's documentation writes a dot: the type of the inputs throughout),
    # torch.compile and jax.jit.
    rk = cp.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "bench_dot")
    tdot = torch.compile(lambda x, y: (x * y).sum(), dynamic=False)
    fused_peers = {"cupy ReductionKernel": lambda: rk(da, db),
                   "torch.compile (a*b).sum()": lambda: tdot(ta, tb)}
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)):
        for name, f in fused_peers.items():
            assert abs(float(f()) - want) <= 1e-4 * abs(want), name
    src, dst = cp.empty(2 * n, cp.float32), cp.empty(2 * n, cp.float32)
    src.fill(1.5)
    spin = cp.RawKernel(SPIN, "spin")
    T = {}
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)):
        for name, fn in (("jitc-cuda dot", lambda: dot(n, sp)),
                         ("torch.dot", lambda: torch.dot(ta, tb)),
                         ("cupy.dot", lambda: cp.dot(da, db)),
                         ("d2d copy", lambda: dst.__setitem__(Ellipsis, src)),
                         ("jitc-cuda fused", lambda: fused(n, sp)),
                         ("jitc-cuda c = a - b", lambda: sub(n, sp))) + tuple(
                             ("jitc-cuda " + p_, (lambda f: lambda: f(n, sp))(parts[p_]))
                             for p_ in PARTS) + tuple(fused_peers.items()):
            T[name] = timed(cp, spin, fn, a.batch, a.reps)
    jx = jax_dot(ha, hb, want, a.batch, a.reps)
    if jx:
        T["jax.jit sum(a*b)"] = jx
    read = 2 * n * 4
    copy_gbs = 2 * read / T["d2d copy"][0] / 1e6
    dot_gbs = read / T["jitc-cuda dot"][0] / 1e6
    out = {
        "n": n, "dtype": "float32", "batch": a.batch, "reps": a.reps,
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "torch": torch.__version__, "cupy": cp.__version__,
        "median_ms": {k: v[0] for k, v in T.items()},
        "times_ms": {k: v[1] for k, v in T.items()},
        "call_ms": {k: v[2] for k, v in T.items()},
        "copy_GBps": copy_gbs, "dot_GBps": dot_gbs, "dot_of_copy": dot_gbs / copy_gbs,
        "fused_over_sub": T["jitc-cuda fused"][0] / T["jitc-cuda c = a - b"][0],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    os.makedirs(a.out_dir, exist_ok=True)
    common.write_json(os.path.join(a.out_dir, "gpu_reduce.json"), out)
    ms = out["median_ms"]
    cm = out["call_ms"]
    lines = [
        "%s, %s float32 elements on the device, non-zero data; GPU time per call: the median "
        "of %d batches of %d calls queued behind a spin kernel (CUDA events around each "
        "batch); one call: events around a single call on an idle GPU, its host side "
        "included; torch %s, CuPy %s; %s." %
        (out["device"], f"{n:,}", a.reps, a.batch, out["torch"], out["cupy"], out["date"]), "",
        "| what | GPU ms per call | GB/s read | one call, ms | note |",
        "|---|---:|---:|---:|---|",
        "| jitc `s = sum(a * b)` | %.4f | %.0f | %.4f | %.0f%% of the copy's bandwidth |" %
        (ms["jitc-cuda dot"], dot_gbs, cm["jitc-cuda dot"], 100 * out["dot_of_copy"]),
        "| torch.dot | %.4f | %.0f | %.4f | |" % (ms["torch.dot"], read / ms["torch.dot"] / 1e6,
                                                 cm["torch.dot"]),
        "| cupy.dot | %.4f | %.0f | %.4f | |" % (ms["cupy.dot"], read / ms["cupy.dot"] / 1e6,
                                                cm["cupy.dot"])] + [
        "| %s | %.4f | %.0f | %.4f | %s |" % (k, ms[k], read / ms[k] / 1e6, cm[k],
                                            "wall clock (no events in JAX)" if "jax" in k else
                                            "")
        for k in ("cupy ReductionKernel", "torch.compile (a*b).sum()", "jax.jit sum(a*b)")
        if k in ms] + [
        "| device-to-device copy of the same %d MB | %.4f | %.0f | %.4f | reads and writes "
        "them: %.0f GB/s moved |" % (read // 10**6, ms["d2d copy"], read / ms["d2d copy"] / 1e6,
                                      cm["d2d copy"], copy_gbs),
        "| jitc `s = sum(a * b); m = max(abs(a - b)); k = argmin(a); c = a - b` | %.4f | "
        "%.0f | %.4f | %.2fx the time of `c = a - b` |" %
        (ms["jitc-cuda fused"], read / ms["jitc-cuda fused"] / 1e6, cm["jitc-cuda fused"],
         out["fused_over_sub"]),
        "| jitc `c = a - b` | %.4f | %.0f | %.4f | |" %
        (ms["jitc-cuda c = a - b"], read / ms["jitc-cuda c = a - b"] / 1e6,
         cm["jitc-cuda c = a - b"])] + [
        "| jitc `%s` | %.4f | %.0f | %.4f | %.2fx the time of `c = a - b` |" %
        (p_, ms["jitc-cuda " + p_], read / ms["jitc-cuda " + p_] / 1e6, cm["jitc-cuda " + p_],
         ms["jitc-cuda " + p_] / ms["jitc-cuda c = a - b"]) for p_ in PARTS] + [""]
    common.write_md(os.path.join(a.out_dir, "gpu_reduce.md"), lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
