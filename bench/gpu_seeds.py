#!/usr/bin/env python3
"""The seed programs as the seeds ran them, host arrays in and out, from
Python, in one run on one GPU: `a[i] += 1` over 10M float64 (numba's
CUDA kernel called on NumPy arrays, which copies them up and back) and
`exp` over 10M float32 (PyCUDA's cumath.exp on arrays copied up, the result
copied back).  jitc: jitc.evaluate(program, target="cuda") on the NumPy
arrays (its host pipeline; the output of exp from its pool of pinned
blocks), and again with out= a new NumPy array each call.  numba-cuda: a @cuda.jit kernel launched on the
NumPy array.  CuPy: cupy.asarray, the operation, .get().  PyCUDA is
reported absent where it is not installed.  Wall clock per call, median,
after warm-up calls (compiles excluded); every result checked against
NumPy.

    python3 bench/gpu_seeds.py [--out-dir bench/results]   (needs `pip install .`)

Writes gpu_seeds.json and gpu_seeds.md; bench/docs.py puts the table in
docs/PERFORMANCE.md.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # numba 0.68 with NumPy 2.5


def wall(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(t)), t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e7)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    n = int(a.n)
    rng = np.random.default_rng(3)
    inc0 = rng.standard_normal(n)
    x32 = rng.standard_normal(n).astype(np.float32)
    want_exp = np.exp(x32)
    rows, versions = {}, {"numpy": np.__version__}

    def record(name, seed, fn, check):
        try:
            ms, t = wall(fn, a.reps)
            ok = check()
            rows.setdefault(seed, {})[name] = {"ms": ms, "times_ms": t, "ok": bool(ok)}
            print(f"{seed:5s} {name:12s} {ms:8.3f} ms {'ok' if ok else 'WRONG'}", flush=True)
        except Exception as e:  # a peer that fails is reported, not fatal
            rows.setdefault(seed, {})[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            print(f"{seed:5s} {name:12s} error {e}", flush=True)

    # jitc
    import jitc
    versions["jitc"] = "this tree"
    # What a[i] += 1 gives after the warm-up and timed calls, one addition at a time.
    want_inc = inc0.copy()
    for _ in range(a.reps + 3):
        want_inc += 1
    a_j = inc0.copy()
    record("jitc", "inc", lambda: jitc.evaluate("a[i] += 1", target="cuda", a=a_j),
           lambda: np.array_equal(a_j, want_inc))
    box = {}
    record("jitc", "exp", lambda: box.__setitem__("r", jitc.evaluate("exp(a)", target="cuda",
                                                                       a=x32)),
           lambda: np.allclose(box["r"], want_exp, rtol=4e-7, atol=0))
    # The same with a new pageable NumPy array as the output each call (out=):
    # what the output costs without the package's pinned pool (pinned.c).
    record("jitc, out=np.empty", "exp", lambda: box.__setitem__(
        "q", jitc.evaluate("exp(a)", target="cuda", a=x32, out=np.empty_like(x32))),
        lambda: np.allclose(box["q"], want_exp, rtol=4e-7, atol=0))
    # numba-cuda, as the seed: a kernel called on the NumPy array
    try:
        import numba
        from numba import cuda
        versions["numba-cuda"] = numba.__version__

        @cuda.jit
        def inc(v):
            i = cuda.grid(1)
            if i < v.size:
                v[i] += 1

        @cuda.jit
        def exp_(v, out):
            i = cuda.grid(1)
            if i < v.size:
                out[i] = math.exp(v[i])

        a_n = inc0.copy()
        grid = ((n + 255) // 256, 256)
        record("numba-cuda", "inc", lambda: inc[grid](a_n),
               lambda: np.array_equal(a_n, want_inc))
        out_n = np.empty_like(x32)
        record("numba-cuda", "exp", lambda: exp_[grid](x32, out_n),
               lambda: np.allclose(out_n, want_exp, rtol=4e-7, atol=0))
    except Exception as e:
        for s in ("inc", "exp"):
            rows.setdefault(s, {})["numba-cuda"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    # CuPy: up, the operation, down
    try:
        import cupy as cp
        versions["cupy"] = cp.__version__
        a_c = inc0.copy()

        def inc_cupy():
            d = cp.asarray(a_c)
            d += 1
            a_c[...] = d.get()

        record("cupy", "inc", inc_cupy, lambda: np.array_equal(a_c, want_inc))
        record("cupy", "exp", lambda: box.__setitem__("c", cp.exp(cp.asarray(x32)).get()),
               lambda: np.allclose(box["c"], want_exp, rtol=4e-7, atol=0))
    except Exception as e:
        for s in ("inc", "exp"):
            rows.setdefault(s, {})["cupy"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    # PyCUDA, as the exp seed ran
    try:
        import pycuda.autoinit  # noqa: F401
        import pycuda.cumath
        import pycuda.gpuarray
        versions["pycuda"] = pycuda.VERSION_TEXT
        record("pycuda", "exp", lambda: box.__setitem__(
            "p", pycuda.cumath.exp(pycuda.gpuarray.to_gpu(x32)).get()),
            lambda: np.allclose(box["p"], want_exp, rtol=4e-7, atol=0))
    except Exception as e:
        rows.setdefault("exp", {})["pycuda"] = {"error": f"absent ({type(e).__name__})"}
    dev = common._cmd(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]).strip()
    out = {"device": dev, "n": n, "versions": versions, "rows": rows,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    os.makedirs(a.out_dir, exist_ok=True)
    common.write_json(os.path.join(a.out_dir, "gpu_seeds.json"), out)
    names = ["jitc", "jitc, out=np.empty", "numba-cuda", "cupy", "pycuda"]
    cell = lambda r: ("-" if r is None else r.get("error", "")[:40] if "error" in r else
                      ("%.2f" % r["ms"]) + ("" if r["ok"] else " WRONG"))
    md = [f"{dev}, {n:,} elements, host arrays (NumPy) in and out, wall clock per call "
          f"(ms, median of {a.reps}); {', '.join(f'{k} {v}' for k, v in versions.items())}; "
          f"{out['date']}.", "",
          "| seed | " + " | ".join(names) + " |", "|---|" + "---|" * len(names),
          "| `a[i] += 1` float64 | " + " | ".join(cell(rows.get("inc", {}).get(k)) for k in names)
          + " |",
          "| `exp(a)` float32 | " + " | ".join(cell(rows.get("exp", {}).get(k)) for k in names)
          + " |", ""]
    common.write_md(os.path.join(a.out_dir, "gpu_seeds.md"), md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
