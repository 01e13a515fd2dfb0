"""The numba-cuda peers of the GPU benchmark: grid-stride kernels, one per
workload of bench/workloads.py, as a numba-cuda user writes them.  A module
of its own so that `cuda` and `math` are globals of the kernels (numba's CUDA
simulator, used to test bench/gpu.py without a GPU, only swaps globals).
Import it only where numba-cuda is wanted: importing numba needs
`np.row_stack` set first with NumPy 2.5 (bench/gpu.py does that)."""

import math

import numpy as np
from numba import cuda

from workloads import ALPHA


def ops():
    """{workload name: f(device inputs, device outputs) -> {name: device array}}"""
    @cuda.jit
    def inc(a):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            a[i] += 1

    @cuda.jit
    def exp_(a, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = math.exp(a[i])

    @cuda.jit
    def poly(a, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = 2 * a[i] * a[i] + 3 * a[i] + 1

    @cuda.jit
    def sincos(a, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = math.sin(a[i]) ** 2 + math.cos(a[i]) ** 2

    @cuda.jit
    def axpy(alpha, x, y):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            y[i] = alpha * x[i] + y[i]

    @cuda.jit
    def leaky(a, k, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = a[i] if a[i] > 0 else k * a[i]

    @cuda.jit
    def polar(x, y, r, c, s):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            h = math.sqrt(x[i] * x[i] + y[i] * y[i])
            r[i] = h
            c[i] = x[i] / h
            s[i] = y[i] / h

    try:
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    except AttributeError:  # numba's CUDA simulator
        sms = 4

    def grid(n):
        return (max(1, min((n + 255) // 256, sms * 32)), 256)

    def launch(kernel, n, *args):
        kernel[grid(n)](*args)

    def k_inc(v, o):
        launch(inc, v["a"].shape[0], v["a"])
        return {"a": v["a"]}

    def unary(kernel):
        def f(v, o):
            launch(kernel, v["a"].shape[0], v["a"], o["out"])
            return {"out": o["out"]}
        return f

    def k_axpy(v, o):
        # A float32 alpha keeps the arithmetic in float32, as NumPy's is.
        launch(axpy, v["y"].shape[0], np.float32(ALPHA), v["x"], v["y"])
        return {"y": v["y"]}

    def k_leaky(v, o):
        launch(leaky, v["a"].shape[0], v["a"], np.float32(0.01), o["out"])
        return {"out": o["out"]}

    def k_polar(v, o):
        launch(polar, v["x"].shape[0], v["x"], v["y"], o["r"], o["c"], o["s"])
        return {"r": o["r"], "c": o["c"], "s": o["s"]}

    return {"inc_f64": k_inc, "exp_f32": unary(exp_), "exp_f64": unary(exp_),
            "poly_f64": unary(poly), "sincos_f64": unary(sincos), "axpy_f32": k_axpy,
            "leaky_f32": k_leaky, "polar_f32": k_polar}
