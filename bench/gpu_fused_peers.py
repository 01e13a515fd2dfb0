"""The GPU benchmark's fusing peers: what a user picks for a program of
several operations when each should be one kernel, as jitc makes it.

- torch.compile (Inductor, which writes Triton kernels): the PyTorch
  expression of bench/gpu.py, compiled;
- jax.jit (XLA): the same expression in jax.numpy, compiled; JAX updates
  nothing in place, so an in-place program returns a new array (its input
  donated);
- CuPy's ElementwiseKernel: the expression as one CUDA C kernel, written by
  hand as a CuPy user does (and ReductionKernel for `sum(a*b)`,
  bench/gpu_reduce.py).

Each maker returns {workload name: f(device inputs, device outputs) ->
{name: device array}}, as bench/gpu.py's torch_ops and cupy_ops do.
"""

from workloads import ALPHA


def torch_compiled(torch):
    """torch.compile over the eager expressions (bench/gpu.py's torch_ops)."""
    def c(f):
        return torch.compile(f, dynamic=False, fullgraph=True)

    inc = c(lambda a: a.add_(1))
    exp = c(lambda a: torch.exp(a))
    poly = c(lambda a: 2 * a * a + 3 * a + 1)
    sincos = c(lambda a: torch.sin(a) ** 2 + torch.cos(a) ** 2)
    axpy = c(lambda x, y: y.add_(x, alpha=ALPHA))
    leaky = c(lambda a: torch.where(a > 0, a, 0.01 * a))

    @c
    def polar(x, y):
        h = torch.sqrt(x * x + y * y)
        return h, x / h, y / h

    def polar_(v, o):
        r, cc, s = polar(v["x"], v["y"])
        return {"r": r, "c": cc, "s": s}

    return {
        "inc_f64": lambda v, o: {"a": inc(v["a"])},
        "exp_f32": lambda v, o: {"out": exp(v["a"])},
        "exp_f64": lambda v, o: {"out": exp(v["a"])},
        "poly_f64": lambda v, o: {"out": poly(v["a"])},
        "sincos_f64": lambda v, o: {"out": sincos(v["a"])},
        "axpy_f32": lambda v, o: {"y": axpy(v["x"], v["y"])},
        "leaky_f32": lambda v, o: {"out": leaky(v["a"])},
        "polar_f32": polar_,
    }


def jax_jitted(jax):
    """jax.jit over the jax.numpy expressions."""
    jnp = jax.numpy
    inc = jax.jit(lambda a: a + 1, donate_argnums=0)
    exp = jax.jit(jnp.exp)
    poly = jax.jit(lambda a: 2 * a * a + 3 * a + 1)
    sincos = jax.jit(lambda a: jnp.sin(a) ** 2 + jnp.cos(a) ** 2)
    axpy = jax.jit(lambda x, y: ALPHA * x + y, donate_argnums=1)
    leaky = jax.jit(lambda a: jnp.where(a > 0, a, 0.01 * a))

    @jax.jit
    def polar(x, y):
        h = jnp.sqrt(x * x + y * y)
        return h, x / h, y / h

    def inplace(f, name, *args):
        def g(v, o):
            v[name] = f(*[v[k] for k in args])  # the new array replaces the donated one
            return {name: v[name]}
        return g

    def polar_(v, o):
        r, c, s = polar(v["x"], v["y"])
        return {"r": r, "c": c, "s": s}

    return {
        "inc_f64": inplace(inc, "a", "a"),
        "exp_f32": lambda v, o: {"out": exp(v["a"])},
        "exp_f64": lambda v, o: {"out": exp(v["a"])},
        "poly_f64": lambda v, o: {"out": poly(v["a"])},
        "sincos_f64": lambda v, o: {"out": sincos(v["a"])},
        "axpy_f32": inplace(axpy, "y", "x", "y"),
        "leaky_f32": lambda v, o: {"out": leaky(v["a"])},
        "polar_f32": polar_,
    }


def cupy_kernels(cp):
    """One ElementwiseKernel per workload, as a CuPy user writes it."""
    EK = cp.ElementwiseKernel
    inc = EK("", "float64 a", "a += 1", "bench_inc")
    exp32 = EK("float32 a", "float32 o", "o = expf(a)", "bench_exp32")
    exp64 = EK("float64 a", "float64 o", "o = exp(a)", "bench_exp64")
    poly = EK("float64 a", "float64 o", "o = 2 * a * a + 3 * a + 1", "bench_poly")
    sincos = EK("float64 a", "float64 o", "double s = sin(a), c = cos(a); o = s * s + c * c",
                "bench_sincos")
    axpy = EK("float32 x, float32 alpha", "float32 y", "y = alpha * x + y", "bench_axpy")
    leaky = EK("float32 a", "float32 o", "o = a > 0 ? a : 0.01f * a", "bench_leaky")
    polar = EK("float32 x, float32 y", "float32 r, float32 c, float32 s",
               "float h = sqrtf(x * x + y * y); r = h; c = x / h; s = y / h", "bench_polar")
    import numpy as np
    alpha = np.float32(ALPHA)

    def polar_(v, o):
        polar(v["x"], v["y"], o["r"], o["c"], o["s"])
        return {"r": o["r"], "c": o["c"], "s": o["s"]}

    def out(k):
        return lambda v, o: (k(v["a"], o["out"]), {"out": o["out"]})[1]

    return {
        "inc_f64": lambda v, o: (inc(v["a"]), {"a": v["a"]})[1],
        "exp_f32": out(exp32),
        "exp_f64": out(exp64),
        "poly_f64": out(poly),
        "sincos_f64": out(sincos),
        "axpy_f32": lambda v, o: (axpy(v["x"], alpha, v["y"]), {"y": v["y"]})[1],
        "leaky_f32": out(leaky),
        "polar_f32": polar_,
    }
