#!/usr/bin/env python3
"""The narrow and complex types on the GPU: jitc's cuda target against
PyTorch, CuPy and a device-to-device copy of the same bytes, on data already on the GPU, in
one run (bench/types_cpu.py is the same on the CPU).

    sh bench/gpu.sh --types        (builds jitc without LLVM, then runs this)
    python3 bench/gpu_types.py --build build-gpu [--sizes 1e7,1e8]

Workloads, n elements of non-zero data:
  u8_norm   y = (f32(x) - 127.5) / 127.5   x uint8 (0 to 255), y float32: 5 bytes/element
  f16_fma   c = a * b + 1                  float16 (standard normal), each
                                           operation rounded, as NumPy's: 6 bytes/element
  bf16_fma  c = a * b + 1                  bfloat16 (standard normal, as
                                           ml_dtypes): 6 bytes/element
  c64_expmul c = exp(z) * w                complex64 (each part standard
                                           normal): 24 bytes/element
Implementations: jitc (jitc_run_device through ctypes on the arrays'
memory); the limit, a device-to-device copy of half the bytes (it reads and
writes them; torch's copy_ of float32 tensors, as bench/gpu.py); PyTorch and CuPy as their users write the expression (one
kernel per operation); CuPy's ElementwiseKernel (the expression as one
kernel, written by hand).  CuPy has no bfloat16: PyTorch alone there.
Timing as bench/gpu_reduce.py: the GPU time per call of `batch` calls queued
behind a spin kernel (CUDA events around the batch; the host's side of the
calls is done while the stream is busy), the median of `reps` batches; and
one call on an idle GPU, its host side included.  Everyone runs on one
stream.  Every result is checked against NumPy and ml_dtypes before its time
counts: jitc bit for bit; a peer within 2 units in the last place (the
elements that differ are counted in the notes), else it is not timed.
complex64 against the product computed in complex128: everyone within 8
epsilons of float32 of the larger part of each element (the bound
tests/gpu/types_gpu.c takes for cuda's complex functions; NumPy's own
complex64 exp is not correctly rounded either).
Writes gpu_types.json and gpu_types.md into --out-dir (bench/results).
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
from gpu_reduce import SPIN, Jitc, timed  # noqa: E402

import ml_dtypes  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
WORKLOADS = {  # name: (program, {input: dtype}, output, its dtype, bytes per element)
    "u8_norm": ("y = (f32(x) - 127.5) / 127.5", {"x": np.uint8}, "y", np.float32, 5),
    "f16_fma": ("c = a * b + 1", {"a": np.float16, "b": np.float16}, "c", np.float16, 6),
    "bf16_fma": ("c = a * b + 1", {"a": BF16, "b": BF16}, "c", BF16, 6),
    "c64_expmul": ("c = exp(z) * w", {"z": np.complex64, "w": np.complex64}, "c", np.complex64,
                   24),
}
C64_EPS = 8  # complex64's bound, in epsilons of float32 of the larger part
IMPLS = ["jitc", "d2d copy", "torch", "cupy", "cupy-ek"]


def inputs(w, n, rng):
    """The workload's host inputs: uint8 across its range, floats and each
    complex part normal."""
    _, ins, _, _, _ = WORKLOADS[w]
    return {k: (rng.integers(0, 256, n, dtype=np.uint8) if dt == np.uint8
                else (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
                if np.dtype(dt).kind == "c"
                else rng.standard_normal(n).astype(np.float32).astype(dt))
            for k, dt in ins.items()}


def reference(w, v):
    """NumPy's answer (ml_dtypes' for bfloat16): each operation rounded to the
    type; complex64's computed in complex128."""
    if w == "c64_expmul":
        return np.exp(v["z"].astype(np.complex128)) * v["w"]
    if w == "u8_norm":
        return (v["x"].astype(np.float32) - np.float32(127.5)) / np.float32(127.5)
    dt = WORKLOADS[w][3]
    p = (v["a"].astype(np.float32) * v["b"].astype(np.float32)).astype(dt)
    return (p.astype(np.float32) + np.float32(1)).astype(dt)


def c64_eps(got, want):
    """(elements not within one epsilon, the largest difference in epsilons
    of float32 of the element's larger part) of complex64 results against
    complex128 ones."""
    m = np.maximum(np.abs(want.real), np.abs(want.imag))
    err = np.maximum(np.abs(got.real - want.real), np.abs(got.imag - want.imag))
    e = err / np.where(m > 0, m, 1) / np.finfo(np.float32).eps
    return int(np.count_nonzero(~(e <= 1))), float(np.max(e)) if e.size else 0.0


def ulps(got, want):
    """(elements whose bits differ, the largest difference in units in the
    last place); NaNs would count as differing."""
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
    if np.array_equal(got.view(bits), want.view(bits)):
        return 0, 0
    g, r = got.view(bits).astype(np.int64), want.view(bits).astype(np.int64)
    sign = 1 << (8 * want.dtype.itemsize - 1)
    g = np.where(g & sign, -(g & (sign - 1)), g)  # ordered like the values
    r = np.where(r & sign, -(r & (sign - 1)), r)
    d = np.abs(g - r)
    return int(np.count_nonzero(d)), int(d.max()) if d.size else 0


def peers(cp, torch):
    """{workload: {impl: f(dev) -> output device array}}: dev holds the
    inputs as CuPy arrays and torch tensors ("t_" + name) and the output."""
    EK = cp.ElementwiseKernel
    norm_ek = EK("uint8 x", "float32 y", "y = ((float)x - 127.5f) / 127.5f", "bench_u8_norm")
    # float16 in CuPy's kernels: the product rounded to float16 before the sum, as NumPy
    fma_ek = EK("float16 a, float16 b", "float16 c",
                "c = (float16)((float)(float16)((float)a * (float)b) + 1.0f)", "bench_f16_fma")
    # thrust::complex<float>'s exp and product
    cexp_ek = EK("complex64 z, complex64 w", "complex64 c", "c = exp(z) * w", "bench_c64_expmul")
    return {
        "u8_norm": {
            "torch": lambda d: (d["t_x"].float() - 127.5) / 127.5,
            "cupy": lambda d: (d["x"].astype(cp.float32) - 127.5) / 127.5,
            "cupy-ek": lambda d: norm_ek(d["x"], d["y"]),
        },
        "f16_fma": {
            "torch": lambda d: d["t_a"] * d["t_b"] + 1,
            "cupy": lambda d: d["a"] * d["b"] + 1,
            "cupy-ek": lambda d: fma_ek(d["a"], d["b"], d["c"]),
        },
        "bf16_fma": {
            "torch": lambda d: d["t_a"] * d["t_b"] + 1,
        },
        "c64_expmul": {
            "torch": lambda d: torch.exp(d["t_z"]) * d["t_w"],
            "cupy": lambda d: cp.exp(d["z"]) * d["w"],
            "cupy-ek": lambda d: cexp_ek(d["z"], d["w"], d["c"]),
        },
    }


def to_device(cp, torch, v, out_name, out_dt, n):
    """The inputs and the output on the device: CuPy arrays and torch
    tensors over the same memory (bfloat16, which CuPy lacks, as int16 for
    CuPy and bfloat16 for torch)."""
    d = {}
    for k, x in list(v.items()) + [(out_name, np.zeros(n, out_dt))]:
        bf = x.dtype == BF16
        d[k] = cp.asarray(x.view(np.int16) if bf else x)
        t = torch.as_tensor(d[k], device="cuda")
        d["t_" + k] = t.view(torch.bfloat16) if bf else t
    return d


def to_host(cp, torch, r, out_dt):
    """A result on the device (CuPy array or torch tensor) as a NumPy array."""
    if isinstance(r, torch.Tensor):
        if r.dtype == torch.bfloat16:
            r = r.view(torch.int16)
        return r.cpu().numpy().view(out_dt)
    return cp.asnumpy(r).view(out_dt)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD", "build-gpu"))
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--sizes", default="1e7,1e8")
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--reps", type=int, default=25)
    a = p.parse_args()
    import cupy as cp
    import torch
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    J = Jitc(a.build)
    J.lib.jitc_dtype_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]

    def jitc_dtype(dt):
        c = ctypes.c_int()
        if J.lib.jitc_dtype_parse(np.dtype(dt).name.encode(), ctypes.byref(c)):
            raise RuntimeError("jitc knows no type %s" % np.dtype(dt).name)
        return c.value

    stream = cp.cuda.Stream(non_blocking=False)  # one stream for everyone
    stream.use()
    sp = ctypes.c_void_p(stream.ptr)
    spin = cp.RawKernel(SPIN, "spin")
    P = peers(cp, torch)
    rng = np.random.default_rng(1)
    rows = []
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)):
        for n in sizes:
            for w, (prog, ins, out, odt, bpe) in WORKLOADS.items():
                v = inputs(w, n, rng)
                want = reference(w, v)
                d = to_device(cp, torch, v, out, odt, n)
                decls = [(k, jitc_dtype(dt)) for k, dt in ins.items()]
                run = J.kernel(prog, {**{k: d[k] for k in ins}, out: d[out]}, decls)
                fns = {"jitc": lambda: run(n, sp)}
                # the limit as bench/gpu.py takes it: torch's copy of float32s
                src = torch.full((n * bpe // 8,), 1.5, device="cuda")
                dst = torch.empty_like(src)
                fns["d2d copy"] = lambda: dst.copy_(src)
                for impl, f in P[w].items():
                    fns[impl] = (lambda f: lambda: f(d))(f)
                for impl, fn in fns.items():
                    row = {"workload": w, "program": prog, "n": n, "impl": impl,
                           "bytes": n * bpe}
                    try:
                        if impl != "d2d copy":
                            d[out].fill(0)
                            r = fn()
                            got = to_host(cp, torch, d[out] if r is None or impl == "cupy-ek"
                                          else r, odt)
                            if w == "c64_expmul":
                                diff, worst = c64_eps(got, want)
                                row["differ"], row["max_eps"] = diff, worst
                                bad = not worst <= C64_EPS
                            else:
                                diff, worst = ulps(got, want)
                                row["differ"], row["max_ulp"] = diff, worst
                                bad = (impl == "jitc" and diff) or worst > 2
                            if bad:
                                raise RuntimeError("wrong: %d elements differ from NumPy's, by "
                                                   "up to %s" % (diff, "%.2f epsilons" % worst
                                                                 if "max_eps" in row
                                                                 else "%d ulp" % worst))
                        med, times, call = timed(cp, spin, fn, a.batch, a.reps)
                        row.update(median_ms=med, times_ms=times, call_ms=call,
                                   gbps=n * bpe / med / 1e6, iqr_pct=common.stats(times)["iqr_pct"])
                    except Exception as e:  # one implementation's failure is its own row
                        row["error"] = ("%s: %s" % (type(e).__name__, e))[:300]
                    rows.append(row)
                    print("%-10s n=%-9d %-8s %s" % (w, n, impl, "%.4f ms GPU, %.4f ms call" % (
                        row["median_ms"], row["call_ms"]) if "median_ms" in row
                        else row["error"]), flush=True)
                del d, src, dst, fns, run
                cp.get_default_memory_pool().free_all_blocks()
                torch.cuda.empty_cache()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out = {"device": dev, "torch": torch.__version__, "cupy": cp.__version__,
           "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
           "batch": a.batch, "reps": a.reps, "sizes": sizes,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "command": "python3 bench/gpu_types.py --build build-gpu --sizes " + a.sizes,
           "results": rows}
    os.makedirs(a.out_dir, exist_ok=True)
    common.write_json(os.path.join(a.out_dir, "gpu_types.json"), out)
    common.write_md(os.path.join(a.out_dir, "gpu_types.md"), markdown(out))
    print("\n".join(markdown(out)), flush=True)
    return 1 if any(r.get("error", "").startswith("RuntimeError: wrong") and r["impl"] == "jitc"
                    for r in rows) else 0


def markdown(out):
    """The tables: per size, GPU ms per call of each implementation, jitc
    against the copy and the best peer; then one call's time."""
    rows = out["results"]

    def get(w, n, impl):
        return next((r for r in rows if (r["workload"], r["n"], r["impl"]) == (w, n, impl)), None)

    def cell(r, key="median_ms"):
        if r is None:
            return "-"
        return ("WRONG" if r["error"].startswith("RuntimeError: wrong") else "error") \
            if "error" in r else "%.4f" % r[key]

    L = ["%s; torch %s, CuPy %s, NumPy %s, ml_dtypes %s; %s.  Command: `%s`." % (
        out["device"], out["torch"], out["cupy"], out["numpy"], out["ml_dtypes"], out["date"],
        out["command"]), "",
        "GPU time per call, ms: the median of %d batches of %d calls queued behind a spin "
        "kernel (CUDA events).  `d2d copy` reads and writes half the workload's bytes: the "
        "limit.  torch and cupy run the expression as their users write it (one kernel per "
        "operation); cupy-ek is one ElementwiseKernel.  jitc / copy: 1.00x is the limit; jitc "
        "/ best peer below 1 means jitc is faster." % (out["reps"], out["batch"]), ""]
    for n in out["sizes"]:
        L += ["n = %s:" % f"{n:,}", "",
              "| workload | " + " | ".join(IMPLS) + " | jitc GB/s | jitc / copy | jitc / best peer |",
              "|---|" + "---:|" * (len(IMPLS) + 3)]
        for w, (prog, ins, _, odt, _) in WORKLOADS.items():
            j, c = get(w, n, "jitc"), get(w, n, "d2d copy")
            best = min((r["median_ms"] for r in (get(w, n, i) for i in IMPLS[2:])
                        if r and "median_ms" in r), default=None)
            ok = j and "median_ms" in j
            L.append("| `%s` %s | " % (prog, np.dtype(odt).name) + " | ".join(
                cell(get(w, n, i)) for i in IMPLS) + " | %s | %s | %s |" % (
                "%.0f" % j["gbps"] if ok else "-",
                "%.2fx" % (j["median_ms"] / c["median_ms"]) if ok and c and "median_ms" in c
                else "-", "%.2fx" % (j["median_ms"] / best) if ok and best else "-"))
        L.append("")
    L += ["One call on an idle GPU, its host side included (ms):", "",
          "| workload | n | " + " | ".join(IMPLS) + " |", "|---|---:|" + "---:|" * len(IMPLS)]
    for n in out["sizes"]:
        for w, (prog, _, _, odt, _) in WORKLOADS.items():
            L.append("| `%s` %s | %s | " % (prog, np.dtype(odt).name, f"{n:,}") + " | ".join(
                cell(get(w, n, i), "call_ms") for i in IMPLS) + " |")
    notes = ["- %s n=%s %s: %s" % (r["workload"], f"{r['n']:,}", r["impl"], r["error"])
             for r in rows if "error" in r]
    notes += ["- %s n=%s %s: %d of the elements differ from NumPy's, by up to %d ulp" % (
        r["workload"], f"{r['n']:,}", r["impl"], r["differ"], r["max_ulp"])
        for r in rows if r.get("differ") and "error" not in r and "max_ulp" in r]
    notes += ["- %s n=%s %s: %d of the elements more than one epsilon of float32 from the "
              "complex128 product, by up to %.2f epsilons of the larger part" % (
                  r["workload"], f"{r['n']:,}", r["impl"], r["differ"], r["max_eps"])
              for r in rows if "max_eps" in r and "error" not in r]
    if notes:
        L += ["", "Notes:", ""] + notes
    return L + [""]


if __name__ == "__main__":
    sys.exit(main())
