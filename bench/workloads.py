"""The benchmark's workloads, written once for every implementation.

Each workload is one jitc program and the same computation as a NumPy user,
a numexpr user, a numba user (CPU and CUDA), a PyTorch user, a CuPy user and
a C programmer (bench/c_loops.c, by the same name) would write it.  NumPy is
also the oracle: `ref` gives the expected outputs, computed with NumPy from
the original inputs, and `scale` the size of the terms that were summed, so
that a check allows rounding relative to them where an expression cancels
(2a^2 + 3a + 1 near a root).

A peer function takes `v` (the inputs, fresh copies it may update in place)
and `o` (preallocated outputs of the right dtype) and returns the arrays to
check, by name.  NumPy peers use the expression as a NumPy user writes it,
with out= where a single ufunc does the whole job; numexpr peers use out=;
the numba peers are prange loops with parallel=True.
"""

import numpy as np

F32, F64 = np.float32, np.float64
ALPHA = 2.5  # the scalar of y = alpha*x + y, bound with -D alpha=2.5


class Workload:
    def __init__(self, name, title, program, dtype, inputs, outputs, inout,
                 ref, scale, numpy, numexpr, scalars=None):
        self.name = name          # also the C loop's name in c_loops.c
        self.title = title
        self.program = program    # the jitc program
        self.dtype = dtype
        self.inputs = inputs      # names of the arrays read (inout ones too)
        self.outputs = outputs    # names of new arrays written
        self.inout = inout        # names of arrays updated in place
        self.ref = ref            # v -> {name: expected}
        self.scale = scale        # v -> {name: term size} (None: |expected|)
        self.numpy = numpy
        self.numexpr = numexpr
        self.scalars = scalars or {}

    @property
    def checked(self):
        """The arrays a run writes, in a fixed order."""
        return list(self.inout) + list(self.outputs)

    def bytes_per_element(self):
        """Bytes read plus bytes written, per element."""
        size = np.dtype(self.dtype).itemsize
        return size * (len(self.inputs) + len(self.outputs) + len(self.inout))


def _ne():
    import numexpr
    return numexpr


def _inc_numexpr(v, o):
    _ne().evaluate("a + 1", local_dict=v, out=v["a"])
    return {"a": v["a"]}


def _inc_numpy(v, o):
    v["a"] += 1
    return {"a": v["a"]}


def _exp_numpy(v, o):
    return {"out": np.exp(v["a"], out=o["out"])}


def _exp_numexpr(v, o):
    return {"out": _ne().evaluate("exp(a)", local_dict=v, out=o["out"])}


def _poly_numpy(v, o):
    a = v["a"]
    return {"out": 2 * a * a + 3 * a + 1}


def _poly_numexpr(v, o):
    return {"out": _ne().evaluate("2*a*a + 3*a + 1", local_dict=v, out=o["out"])}


def _sincos_numpy(v, o):
    a = v["a"]
    return {"out": np.sin(a) ** 2 + np.cos(a) ** 2}


def _sincos_numexpr(v, o):
    return {"out": _ne().evaluate("sin(a)**2 + cos(a)**2", local_dict=v, out=o["out"])}


def _axpy_numpy(v, o):
    v["y"] += ALPHA * v["x"]
    return {"y": v["y"]}


def _axpy_numexpr(v, o):
    # numexpr makes a Python float a float64 constant and the result float64;
    # a float32 scalar keeps it float32, as NumPy's weak scalar does.
    d = {"alpha": F32(ALPHA), "x": v["x"], "y": v["y"]}
    _ne().evaluate("alpha*x + y", local_dict=d, out=v["y"])
    return {"y": v["y"]}


def _leaky_numpy(v, o):
    a = v["a"]
    return {"out": np.where(a > 0, a, 0.01 * a)}


def _leaky_numexpr(v, o):
    d = {"a": v["a"], "k": F32(0.01)}  # float32, as above
    return {"out": _ne().evaluate("where(a > 0, a, k*a)", local_dict=d, out=o["out"])}


def _polar_numpy(v, o):
    x, y = v["x"], v["y"]
    h = np.sqrt(x * x + y * y)
    return {"r": h, "c": x / h, "s": y / h}


def _polar_numexpr(v, o):
    ne = _ne()
    d = {"x": v["x"], "y": v["y"]}
    ne.evaluate("sqrt(x*x + y*y)", local_dict=d, out=o["r"])
    d["h"] = o["r"]
    ne.evaluate("x / h", local_dict=d, out=o["c"])
    ne.evaluate("y / h", local_dict=d, out=o["s"])
    return {"r": o["r"], "c": o["c"], "s": o["s"]}


def _polar_ref(v):
    return _polar_numpy({"x": v["x"], "y": v["y"]}, None)


WORKLOADS = [
    Workload("inc_f64", "a[i] += 1, float64", "a[i] += 1", F64, ["a"], [], ["a"],
             ref=lambda v: {"a": v["a"] + 1},
             scale=lambda v: {"a": np.abs(v["a"]) + 1},
             numpy=_inc_numpy, numexpr=_inc_numexpr),
    Workload("exp_f32", "exp(a), float32", "exp(a)", F32, ["a"], ["out"], [],
             ref=lambda v: {"out": np.exp(v["a"])}, scale=None,
             numpy=_exp_numpy, numexpr=_exp_numexpr),
    Workload("exp_f64", "exp(a), float64", "exp(a)", F64, ["a"], ["out"], [],
             ref=lambda v: {"out": np.exp(v["a"])}, scale=None,
             numpy=_exp_numpy, numexpr=_exp_numexpr),
    Workload("poly_f64", "2*a*a + 3*a + 1, float64", "2*a*a + 3*a + 1", F64, ["a"], ["out"], [],
             ref=lambda v: _poly_numpy(v, None),
             scale=lambda v: {"out": 2 * v["a"] * v["a"] + 3 * np.abs(v["a"]) + 1},
             numpy=_poly_numpy, numexpr=_poly_numexpr),
    Workload("sincos_f64", "sin(a)**2 + cos(a)**2, float64", "sin(a)**2 + cos(a)**2", F64,
             ["a"], ["out"], [],
             ref=lambda v: _sincos_numpy(v, None),
             scale=lambda v: {"out": np.ones_like(v["a"])},
             numpy=_sincos_numpy, numexpr=_sincos_numexpr),
    Workload("axpy_f32", "y = alpha*x + y, float32", "y = alpha*x + y", F32, ["x", "y"], [], ["y"],
             ref=lambda v: {"y": ALPHA * v["x"] + v["y"]},
             scale=lambda v: {"y": np.abs(ALPHA * v["x"]) + np.abs(v["y"])},
             numpy=_axpy_numpy, numexpr=_axpy_numexpr, scalars={"alpha": ALPHA}),
    Workload("leaky_f32", "where(a > 0, a, 0.01*a), float32", "where(a > 0, a, 0.01*a)", F32,
             ["a"], ["out"], [],
             ref=lambda v: _leaky_numpy(v, None), scale=None,
             numpy=_leaky_numpy, numexpr=_leaky_numexpr),
    Workload("polar_f32", "three outputs: r, c, s = |(x,y)|, x/r, y/r, float32",
             "let h = sqrt(x*x + y*y); r = h; c = x / h; s = y / h", F32,
             ["x", "y"], ["r", "c", "s"], [],
             ref=_polar_ref, scale=None,
             numpy=_polar_numpy, numexpr=_polar_numexpr),
]

BY_NAME = {w.name: w for w in WORKLOADS}


def make_inputs(w, n, seed=1):
    """Inputs of workload w: standard normal data (never zeros), larger than
    the last-level cache at the sizes where n allows it."""
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(n, dtype=w.dtype) for name in w.inputs}


def make_outputs(w, n):
    """Preallocated outputs, touched so that their pages are in memory."""
    o = {}
    for name in w.outputs:
        o[name] = np.empty(n, dtype=w.dtype)
        o[name].fill(0.5)
    return o


def numba_cpu_kernels():
    """The numba peers: {workload name: f(v, o)}.  Raises ImportError when
    numba is absent."""
    import numba
    from numba import prange

    opts = dict(parallel=True, cache=False)

    @numba.njit(**opts)
    def inc(a):
        for i in prange(a.shape[0]):
            a[i] += 1

    @numba.njit(**opts)
    def exp_(a, out):
        for i in prange(a.shape[0]):
            out[i] = np.exp(a[i])

    @numba.njit(**opts)
    def poly(a, out):
        for i in prange(a.shape[0]):
            out[i] = 2 * a[i] * a[i] + 3 * a[i] + 1

    @numba.njit(**opts)
    def sincos(a, out):
        for i in prange(a.shape[0]):
            out[i] = np.sin(a[i]) ** 2 + np.cos(a[i]) ** 2

    @numba.njit(**opts)
    def axpy(alpha, x, y):
        for i in prange(x.shape[0]):
            y[i] = alpha * x[i] + y[i]

    @numba.njit(**opts)
    def leaky(a, k, out):
        for i in prange(a.shape[0]):
            out[i] = a[i] if a[i] > 0 else k * a[i]

    @numba.njit(**opts)
    def polar(x, y, r, c, s):
        for i in prange(x.shape[0]):
            h = np.sqrt(x[i] * x[i] + y[i] * y[i])
            r[i] = h
            c[i] = x[i] / h
            s[i] = y[i] / h

    def k_inc(v, o):
        inc(v["a"])
        return {"a": v["a"]}

    def k_exp(v, o):
        exp_(v["a"], o["out"])
        return {"out": o["out"]}

    def k_poly(v, o):
        poly(v["a"], o["out"])
        return {"out": o["out"]}

    def k_sincos(v, o):
        sincos(v["a"], o["out"])
        return {"out": o["out"]}

    def k_axpy(v, o):
        # A float32 alpha keeps the arithmetic in float32, as NumPy's is.
        axpy(F32(ALPHA), v["x"], v["y"])
        return {"y": v["y"]}

    def k_leaky(v, o):
        leaky(v["a"], F32(0.01), o["out"])
        return {"out": o["out"]}

    def k_polar(v, o):
        polar(v["x"], v["y"], o["r"], o["c"], o["s"])
        return {"r": o["r"], "c": o["c"], "s": o["s"]}

    return {"inc_f64": k_inc, "exp_f32": k_exp, "exp_f64": k_exp, "poly_f64": k_poly,
            "sincos_f64": k_sincos, "axpy_f32": k_axpy, "leaky_f32": k_leaky,
            "polar_f32": k_polar}
