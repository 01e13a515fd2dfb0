#!/usr/bin/env python3
"""Broadcasts, strided views and reductions over an axis on the GPU: jitc's
cuda target over device arrays of any strides (jitc_run_device_arrays,
and jitc.evaluate on the same CuPy views where the package is importable)
against PyTorch, CuPy and a device-to-device copy of the bytes moved, in
one run (bench/nd_cpu.py and bench/axis_cpu.py are the CPU's side).

    sh bench/gpu.sh --nd          (builds jitc without LLVM, then runs this)
    python3 bench/gpu_nd.py --build build-gpu [--side 4096]

Workloads, float32, standard normal data, a (side, side) matrix:
  bcast_row   c = a + b    b a (side,) row, broadcast down the rows
  bcast_col   c = a + b    b a (side, 1) column, broadcast along each row
  contig      c = a + 1    the same bytes contiguous: the reference
  every2      c = a + 1    a = x[::2], x of 2 side^2 elements
  transpose   c = a + 1    a = x.T, a C-order c
  sum_axis1   s = sum(a, axis=1)
  sum_axis0   s = sum(a, axis=0)
The limit: a device-to-device copy of the bytes the program must move (it
reads and writes half of them; torch's copy_ of float32 tensors, as
bench/gpu.py).  every2 must fetch all of x's sectors, so its limit is
taken over the bytes it reads, x whole.  Timing as bench/gpu_types.py: the
GPU time per call of `batch` calls queued behind a spin kernel (CUDA
events), the median of `reps` batches.  Each result is checked against
NumPy before its time counts: element-wise results bit for bit, sums
within 1e-4 of the largest sum (float32 sums of side elements).
Writes gpu_nd.json and gpu_nd.md into --out-dir (bench/results).
"""
import argparse
import ctypes
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_reduce import JITC_CUDA, SPIN, Decl, Jitc, timed  # noqa: E402

IMPLS = ["jitc", "jitc.py", "limit", "torch", "cupy"]


class Arr(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("ndim", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class Lib(Jitc):
    """bench/gpu_reduce.py's library through ctypes, with
    jitc_run_device_arrays."""

    def __init__(self, build):
        super().__init__(build)
        L = self.L = self.lib
        L.jitc_run_device_arrays.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                             ctypes.POINTER(Arr), ctypes.c_void_p,
                                             ctypes.c_void_p]
        L.jitc_dtype_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]

    def err(self):
        return RuntimeError(self.L.jitc_errmsg(self.ctx).decode())

    def kernel(self, src, arrays, inputs, stream):
        """A function running src over the CuPy arrays `arrays` (by name,
        any strides), `inputs` naming those it reads."""
        L = self.L
        opts = ctypes.create_string_buffer(512)
        L.jitc_options_init(opts)
        ctypes.c_int.from_buffer(opts, 0).value = JITC_CUDA  # .target comes first
        c = ctypes.c_int()
        if L.jitc_dtype_parse(b"float32", ctypes.byref(c)):
            raise self.err()
        decl = (Decl * len(inputs))(*((n.encode(), c.value) for n in inputs))
        k = ctypes.c_void_p()
        if L.jitc_compile(self.ctx, src.encode(), decl, len(inputs), None, 0, opts,
                          ctypes.byref(k)):
            raise self.err()
        arrs = (Arr * L.jitc_kernel_array_count(k))()
        keep = []
        for name, x in arrays.items():
            sh = (ctypes.c_int64 * max(x.ndim, 1))(*x.shape)
            st = (ctypes.c_int64 * max(x.ndim, 1))(*x.strides)
            keep += [sh, st]
            arrs[L.jitc_kernel_find_array(k, name.encode())] = Arr(x.data.ptr, x.ndim, sh, st)
        sp = ctypes.c_void_p(stream.ptr)

        def run():
            keep  # the shapes and strides live as long as the function
            if L.jitc_run_device_arrays(self.ctx, k, arrs, None, sp):
                raise self.err()
        return run


def workloads(side):
    """{name: (program, host inputs builder, NumPy's answer, torch, CuPy,
    bytes the program moves)}; the builders take an rng and give the host
    arrays, the views are made on the device by `view`."""
    m = side * side * 4
    add = lambda d: d["a"] + d["b"]  # noqa: E731
    inc = lambda d: d["a"] + 1  # noqa: E731
    return {
        "bcast_row": ("c = a + b", {"a": (side, side), "b": (side,)}, None, add, add, 2 * m),
        "bcast_col": ("c = a + b", {"a": (side, side), "b": (side, 1)}, None, add, add, 2 * m),
        "contig": ("c = a + 1", {"a": (side, side)}, None, inc, inc, 2 * m),
        "every2": ("c = a + 1", {"a": (2 * side * side,)}, "every2", inc, inc, 3 * m),
        "transpose": ("c = a + 1", {"a": (side, side)}, "T", inc, inc, 2 * m),
        "sum_axis1": ("s = sum(a, axis=1)", {"a": (side, side)}, None,
                      lambda d: d["a"].sum(1), lambda d: d["a"].sum(1), m),
        "sum_axis0": ("s = sum(a, axis=0)", {"a": (side, side)}, None,
                      lambda d: d["a"].sum(0), lambda d: d["a"].sum(0), m),
    }


def view(x, how):
    return x if how is None else x[::2] if how == "every2" else x.T


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD", "build-gpu"))
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--side", type=int, default=4096)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--reps", type=int, default=25)
    p.add_argument("--only", help="comma-separated workloads (default: all); the results "
                   "are written only when all run")
    a = p.parse_args()
    import cupy as cp
    import torch
    J = Lib(a.build)
    try:
        import jitc as jitc_py  # the Python package, where it is installed
    except ImportError:
        jitc_py = None
    stream = cp.cuda.Stream(non_blocking=False)  # one stream for everyone
    stream.use()
    spin = cp.RawKernel(SPIN, "spin")
    rng = np.random.default_rng(1)
    rows = []
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)):
        for w, (prog, shapes, how, tfn, cfn, nbytes) in workloads(a.side).items():
            if a.only and w not in a.only.split(","):
                continue
            host = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
            hv = {k: view(x, how) for k, x in host.items()}
            dev = {k: view(cp.asarray(x), how) for k, x in host.items()}
            tdev = {k: view(torch.as_tensor(cp.asarray(x), device="cuda"), how)
                    for k, x in host.items()}
            out = prog.split("=")[0].strip()
            red = "sum(" in prog
            want = (hv["a"].sum(1 if "axis=1" in prog else 0, dtype=np.float64) if red
                    else hv["a"] + (hv["b"] if "b" in hv else np.float32(1)))
            o = cp.zeros(want.shape, np.float32)
            row = {"workload": w, "program": prog, "side": a.side, "bytes": nbytes}
            fns = {}
            try:
                fns["jitc"] = J.kernel(prog, {**dev, out: o}, list(shapes), stream)
                fns["jitc"]()
                got = cp.asnumpy(o)
                ok = (np.allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max()) if red
                      else np.array_equal(got, want))
                if not ok:
                    row["jitc_error"] = "differs from NumPy"
                    del fns["jitc"]
            except RuntimeError as e:
                row["jitc_error"] = str(e)[:200]
                fns.pop("jitc", None)
            if jitc_py is not None:
                # The same program from Python on the same device views, as
                # a CuPy user calls it: outputs and results made by the call.
                py = lambda: jitc_py.evaluate(prog, **dev)  # noqa: E731
                got = cp.asnumpy(py())
                ok = (np.allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max()) if red
                      else np.array_equal(got, want))
                if ok:
                    fns["jitc.py"] = py
                else:
                    row["jitc.py_error"] = "differs from NumPy"
            src = torch.full((nbytes // 8,), 1.5, device="cuda")
            dst = torch.empty_like(src)
            fns["limit"] = lambda: dst.copy_(src)
            fns["torch"] = lambda: tfn(tdev)
            fns["cupy"] = lambda: cfn(dev)
            for impl, fn in fns.items():
                ms, _, call = timed(cp, spin, fn, a.batch, a.reps)
                row[impl] = ms
                row[impl + "_call"] = call
            rows.append(row)
            print("%-10s %s" % (w, "  ".join("%s %.4f" % (i, row[i]) for i in IMPLS if i in row)),
                  row.get("jitc_error", ""), flush=True)
    if a.only:
        return
    name = torch.cuda.get_device_name()
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "gpu_nd.json"), "w") as f:
        json.dump({"device": name, "rows": rows}, f, indent=1)
    md = ["GPU time per call in ms (%s), (%d, %d) float32, median of %d batches of %d:" %
          (name, a.side, a.side, a.reps, a.batch), "",
          "| workload | program | jitc | jitc from Python | limit | torch | cupy | "
          "jitc / limit |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        cell = lambda i: "%.4f" % r[i] if i in r else "-"  # noqa: E731
        ratio = "%.2f" % (r["jitc"] / r["limit"]) if "jitc" in r else "-"
        md.append("| %s | `%s` | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["program"], cell("jitc"), cell("jitc.py"), cell("limit"),
            cell("torch"), cell("cupy"), ratio))
    md += ["", "`jitc` runs the kernel from C (jitc_run_device_arrays) into an output "
           "made once; `jitc from Python` is `jitc.evaluate(program, a=a, b=b)` on the same "
           "CuPy views, the call making its output (\"-\": the package not installed)."]
    with open(os.path.join(a.out_dir, "gpu_nd.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
