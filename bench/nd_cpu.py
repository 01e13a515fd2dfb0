#!/usr/bin/env python3
"""nd_cpu.py -- arrays of several axes and views on the cpu target
(jitc_run_arrays), against the C loop a programmer would write (gcc -O3
-march=native -fopenmp), NumPy and numexpr on the same arrays, in one
process (results in bench/results/nd_cpu.md):

  row        c = a + b   a (N, N) float32, b (N,): a row broadcast
  column     c = a + b   a (N, N) float32, b (N, 1): a column broadcast
  step2      c = a + 1   a = x[::2] of 2 N^2 float32: a strided view
  transpose  c = a + 1   a = m.T of an (N, N) float32 matrix
  transpose_k  the same, c laid out as a (Fortran order): the result of
             NumPy's a + 1 and of jitc.evaluate('a + 1') (order 'K'), given
             to each as out=
  contiguous c = a + 1   a contiguous (N^2,): what step2 and transpose are
                         measured against

    python3 bench/nd_cpu.py --build build     (after make; then bench/docs.py
                                              regenerates docs/PERFORMANCE.md)

The C loops are the obvious loops over the view's indices (OpenMP over the
rows; a transpose read column-wise in tiles of 32 as a programmer tuning it
would).  All use all cores (jitc's default, OpenMP's, numexpr's); NumPy
uses one.  Rounds run every implementation in turn, in a new order each
round, so background load falls on all of them alike, and each call is
preceded by a read of 512 MB, so that it finds none of its arrays in the
caches; figures are medians of the pooled calls.
Every result is checked against NumPy first (bit for bit).
"""
import argparse
import ctypes as C
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

C_LOOPS = r"""
#include <stdint.h>
void row(int64_t n, const float *a, const float *b, float *c) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
#pragma omp simd
    for (int64_t j = 0; j < n; j++) c[i * n + j] = a[i * n + j] + b[j];
}
void column(int64_t n, const float *a, const float *b, float *c) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
#pragma omp simd
    for (int64_t j = 0; j < n; j++) c[i * n + j] = a[i * n + j] + b[i];
}
void step2(int64_t n, const float *x, float *c) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) c[i] = x[2 * i] + 1;
}
void transpose(int64_t n, const float *m, float *c) { /* c[i][j] = m[j][i] + 1 */
#pragma omp parallel for schedule(static)
  for (int64_t i0 = 0; i0 < n; i0 += 32)
    for (int64_t j0 = 0; j0 < n; j0 += 32)
      for (int64_t i = i0; i < i0 + 32 && i < n; i++)
        for (int64_t j = j0; j < j0 + 32 && j < n; j++) c[i * n + j] = m[j * n + i] + 1;
}
void transpose_k(int64_t n, const float *m, float *c) { /* c and m.T alike: along the memory */
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) c[i] = m[i] + 1;
}
void contiguous(int64_t n, const float *a, float *c) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) c[i] = a[i] + 1;
}
"""

WORKLOADS = ["row", "column", "step2", "transpose", "transpose_k", "contiguous"]
COLUMNS = ["jitc", "C loop", "NumPy", "numexpr"]
# The transpose's scatter (src/tiles.c) runs in the vectors of the level its
# kernel is compiled for: the transpose and the contiguous program again at
# each level the host runs.
LEVELS = ["x86-64-v2", "x86-64-v3", "x86-64-v4"]
EVICT = 1 << 29  # bytes read before each timed call: twice the largest cache seen


def build_c():
    tmp = tempfile.mkdtemp(prefix="jitc-nd-")
    src, lib = os.path.join(tmp, "c_nd.c"), os.path.join(tmp, "c_nd.so")
    with open(src, "w") as f:
        f.write(C_LOOPS)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-o", lib, src],
                   check=True)
    L = C.CDLL(lib)
    for w in WORKLOADS:
        getattr(L, w).argtypes = [C.c_int64] + [C.c_void_p] * (3 if w in ("row", "column") else 2)
    return L


def data(N):
    rng = np.random.default_rng(1)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    a, x, m = f(N, N), f(2 * N * N), f(N, N)
    inputs = {"row": {"a": a, "b": f(N)}, "column": {"a": a, "b": f(N, 1)},
              "step2": {"a": x[::2]}, "transpose": {"a": m.T}, "transpose_k": {"a": m.T},
              "contiguous": {"a": np.ascontiguousarray(x[::2])}}
    outs = {w: np.ones(N * N if w in ("step2", "contiguous") else (N, N), np.float32)
            for w in WORKLOADS}
    outs["transpose_k"] = outs["transpose_k"].T  # the transposed input's order
    ref = {w: (v["a"] + v["b"] if "b" in v else v["a"] + np.float32(1)) for w, v in inputs.items()}
    return inputs, outs, ref


def implementations(inputs, outs, Lc, R, N):
    import numexpr as ne
    ne.set_num_threads(os.cpu_count())
    impls = {}
    for w in WORKLOADS:
        v, c = inputs[w], outs[w]
        prog = "c = a + b" if "b" in v else "c = a + 1"
        decl = {nm: np.empty(1, x.dtype) for nm, x in v.items()}
        k = R.compile(prog, decl, "cpu")
        arrs, keep, _ = R.prepare_arrays(k, v, {"c": c})
        impls[(w, "jitc")] = (lambda k=k, arrs=arrs, keep=keep: R.run_prepared(k, arrs))
        ptrs = [x.__array_interface__["data"][0] for x in v.values()]
        if w == "step2":
            ptrs = [v["a"].base.ctypes.data if v["a"].base is not None else ptrs[0]]
        if w in ("transpose", "transpose_k"):
            ptrs = [v["a"].T.ctypes.data]
        flat = w in ("step2", "contiguous", "transpose_k")  # transpose_k: along the memory
        impls[(w, "C loop")] = (lambda w=w, ptrs=ptrs, c=c, flat=flat:
                                getattr(Lc, w)(N * N if flat else N, *ptrs,
                                               c.__array_interface__["data"][0]))
        expr = "a + b" if "b" in v else "a + 1"
        impls[(w, "numexpr")] = (lambda expr=expr, v=v, c=c:
                                 ne.evaluate(expr, local_dict=v, out=c))
        if "b" in v:
            impls[(w, "NumPy")] = lambda v=v, c=c: np.add(v["a"], v["b"], out=c)
        else:
            impls[(w, "NumPy")] = lambda v=v, c=c: np.add(v["a"], np.float32(1), out=c)
    return impls


def level_implementations(inputs, outs, R):
    """(workload, level): jitc's transpose and contiguous program compiled
    for each x86-64 level this host runs (the others fail to compile)."""
    impls = {}
    for lv in LEVELS:
        try:
            ks = {w: R.compile("c = a + 1", {"a": np.empty(1, np.float32)}, "cpu", cpu=lv)
                  for w in ("transpose", "contiguous")}
        except reduce_lib.JitcError:
            continue
        for w, k in ks.items():
            arrs, keep, _ = R.prepare_arrays(k, inputs[w], {"c": outs[w]})
            impls[(w, lv)] = (lambda k=k, arrs=arrs, keep=keep: R.run_prepared(k, arrs))
    return impls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-N", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=5, help="timed calls per round")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "nd_cpu.md"))
    a_ = ap.parse_args()
    reduce_lib.use_build(a_.build)
    N = a_.N
    inputs, outs, ref = data(N)
    Lc = build_c()
    R = reduce_lib.Runner()
    load0 = common.machine_info().get("loadavg_start", [])
    impls = implementations(inputs, outs, Lc, R, N)
    impls.update(level_implementations(inputs, outs, R))
    for (w, impl), fn in impls.items():  # the checks, before any time counts
        outs[w][...] = 0
        fn()
        if not np.array_equal(outs[w].reshape(ref[w].shape), ref[w]):
            sys.exit(f"nd_cpu: {w} by {impl} differs from NumPy")
    times = {key: [] for key in impls}
    # Every call starts from caches that hold none of its arrays: each is
    # preceded by a read of EVICT bytes.  A third-level cache as large as
    # this machine's (260 MB) holds a (4096, 4096) float32 program's 128 MB,
    # and an implementation that ran right after another on the same arrays
    # found them there (the C loop right after jitc: 3.0-4.2 ms against
    # jitc's 4.5-5.8 on `contiguous`, where each alone took 3.0-3.4 and
    # 2.7-2.8).  The order of the implementations changes every round too.
    evict = np.ones(EVICT // 8, np.int64)
    order = np.random.default_rng(0)
    for _ in range(a_.rounds):
        keys = list(impls)
        order.shuffle(keys)
        for key in keys:
            fn = impls[key]
            for _ in range(a_.reps):
                evict.max()
                t0 = time.perf_counter()
                fn()
                times[key].append((time.perf_counter() - t0) * 1e3)
    med = {key: float(np.median(t)) for key, t in times.items()}
    info = common.machine_info()
    lines = [f"# Arrays of several axes and views on the cpu target, N = {N} (float32)", "",
             f"{info.get('cpu', '?')}, {os.cpu_count()} cores; load average before "
             f"{load0}, after {info.get('loadavg_start', [])}. Medians of "
             f"{a_.rounds} x {a_.reps} calls, ms.", "",
             "| workload | " + " | ".join(COLUMNS) + " | jitc / C | jitc / contiguous |",
             "|---|" + "---|" * (len(COLUMNS) + 2)]
    for w in WORKLOADS:
        row = [common.fmt_ms(med[(w, c)]) for c in COLUMNS]
        rc = med[(w, "jitc")] / med[(w, "C loop")]
        rk = med[(w, "jitc")] / med[("contiguous", "jitc")]
        lines.append(f"| {w} | " + " | ".join(row) + f" | {rc:.2f}x | {rk:.2f}x |")
    levels = [lv for lv in LEVELS if ("transpose", lv) in med]
    if levels:
        lines += ["", "jitc compiled for each x86-64 level this host runs (the row above: "
                  "its own CPU), the same rounds:", "",
                  "| level | transpose | contiguous | transpose / contiguous |", "|---|---|---|---|"]
        for lv in levels:
            t, c = med[("transpose", lv)], med[("contiguous", lv)]
            lines.append(f"| {lv} | {common.fmt_ms(t)} | {common.fmt_ms(c)} | {t / c:.2f}x |")
    common.write_md(a_.out, lines)
    print("\n".join(lines))
    if a_.out == ap.get_default("out"):  # docs/PERFORMANCE.md shows the table
        subprocess.run([sys.executable, os.path.join(HERE, "docs.py")], check=False)


if __name__ == "__main__":
    main()
