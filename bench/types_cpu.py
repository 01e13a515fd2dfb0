#!/usr/bin/env python3
"""types_cpu.py -- three programs of the narrow and complex types on the cpu
target against the C loop a programmer would write (gcc -O3 -march=native
-fopenmp, built here into a small library), NumPy and numexpr, on the same
arrays in one process (results in bench/results/types_cpu.md):

  u8_norm    y = (f32(x) - 127.5) / 127.5   uint8 -> float32, 5 bytes/element
  f16_fma    c = a * b + 1                  float16, each operation rounded
                                            (as NumPy's), 6 bytes/element
  c64_expmul c = exp(z) * w                 complex64, 24 bytes/element;
                                            against NumPy and numexpr (which
                                            computes complex64 in complex128)

Each uses all cores (jitc's default, OpenMP's, numexpr's), then one thread.
Rounds run every implementation in turn, so background load falls on all
of them alike; figures are medians of the pooled calls.  Every result is
checked against NumPy first: bit for bit, complex exp within 4 units of
float32's epsilon relative to the element (the math functions' bound).
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
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
void set_threads(int n) { omp_set_num_threads(n); }
void u8_norm(int64_t n, const uint8_t *x, float *y) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) y[i] = ((float)x[i] - 127.5f) / 127.5f;
}
/* Each operation rounded to float16, as NumPy's float16 loops (and jitc). */
void f16_fma(int64_t n, const _Float16 *a, const _Float16 *b, _Float16 *c) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    _Float16 p = (_Float16)((float)a[i] * (float)b[i]);
    c[i] = (_Float16)((float)p + 1.0f);
  }
}
/* The same with F16C's conversions by hand (gcc 12 leaves the loop above
** scalar): 16 elements at a time with AVX-512, 8 with AVX2. */
#define RN (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
void f16_fma_f16c(int64_t n, const uint16_t *a, const uint16_t *b, uint16_t *c) {
#pragma omp parallel for schedule(static)
  for (int64_t i0 = 0; i0 < n; i0 += 4096) {
    int64_t end = i0 + 4096 < n ? i0 + 4096 : n, i = i0;
#ifdef __AVX512F__
    for (; i + 16 <= end; i += 16) {
      __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(a + i)));
      __m512 y = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + i)));
      __m512 p = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_mul_ps(x, y), RN));
      _mm256_storeu_si256((__m256i *)(c + i), _mm512_cvtps_ph(_mm512_add_ps(p, _mm512_set1_ps(1)), RN));
    }
#else
    for (; i + 8 <= end; i += 8) {
      __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
      __m256 y = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + i)));
      __m256 p = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_mul_ps(x, y), RN));
      _mm_storeu_si128((__m128i *)(c + i), _mm256_cvtps_ph(_mm256_add_ps(p, _mm256_set1_ps(1)), RN));
    }
#endif
    for (; i < end; i++)
      c[i] = _cvtss_sh(_cvtsh_ss(_cvtss_sh(_cvtsh_ss(a[i]) * _cvtsh_ss(b[i]), RN)) + 1, RN);
  }
}
"""


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-n", type=float, default=1e7)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10, help="timed calls per round")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "types_cpu.md"))
    return ap.parse_args()


def build_c():
    tmp = tempfile.mkdtemp(prefix="jitc-types-")
    src, lib = os.path.join(tmp, "c_types.c"), os.path.join(tmp, "c_types.so")
    with open(src, "w") as f:
        f.write(C_LOOPS)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-o", lib, src],
                   check=True)
    L = C.CDLL(lib)
    L.set_threads.argtypes = [C.c_int]
    for fn in (L.u8_norm, L.f16_fma, L.f16_fma_f16c):
        fn.argtypes = [C.c_int64] + [C.c_void_p] * (2 if fn is L.u8_norm else 3)
    return L


class Jitc:
    """A compiled kernel and its arrays, called with one jitc_run each time."""

    def __init__(self, runner, prog, inputs, out, threads):
        self.L = reduce_lib.lib()
        self.ctx = runner.ctx
        self.k = runner.compile(prog, inputs, "cpu", threads=threads)
        na = self.L.jitc_kernel_array_count(self.k)
        self.ptrs = (C.c_void_p * na)()
        for j in range(na):
            nm, role, dt = C.c_char_p(), C.c_int(), C.c_int()
            self.L.jitc_kernel_array(self.k, j, C.byref(nm), C.byref(role), C.byref(dt))
            name = nm.value.decode()
            self.ptrs[j] = (inputs[name] if name in inputs else out).ctypes.data
        self.n = len(out)

    def __call__(self):
        if self.L.jitc_run(self.ctx, self.k, self.n, self.ptrs, None, None):
            raise RuntimeError(self.L.jitc_errmsg(self.ctx).decode())


def numexpr_module():
    try:
        import numexpr
        return numexpr
    except ImportError:
        return None


def close_c64(got, ref):
    """Within 4 float32 epsilons of each element's magnitude (and the same
    NaN and inf): exp's bound on both sides."""
    err = np.abs(got.astype(np.complex128) - ref) / np.maximum(np.abs(ref), np.finfo(np.float32).tiny)
    return bool((err <= 4 * np.finfo(np.float32).eps).all())


def main():
    a_ = parse_args()
    n = int(a_.n)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, n, dtype=np.uint8)
    a = rng.standard_normal(n).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    za = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    zb = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    y, c = np.ones(n, np.float32), np.ones(n, np.float16)  # written before timing
    cz, cz128 = np.ones(n, np.complex64), np.ones(n, np.complex128)
    y_ref = (x.astype(np.float32) - np.float32(127.5)) / np.float32(127.5)
    c_ref = ((a.astype(np.float32) * b.astype(np.float32)).astype(np.float16).astype(np.float32)
             + np.float32(1)).astype(np.float16)
    cz_ref = np.exp(za.astype(np.complex128)) * zb  # the exact value, nearly
    ne = numexpr_module()
    Lc = build_c()
    R = reduce_lib.Runner()
    rows = []
    for threads in (0, 1):
        Lc.set_threads(threads or os.cpu_count())
        if ne:
            ne.set_num_threads(threads or os.cpu_count())
        tag = "all cores" if threads == 0 else "1 thread"
        impls = {
            ("u8_norm", "jitc"): Jitc(R, "y = (f32(x) - 127.5) / 127.5", {"x": x}, y, threads),
            ("u8_norm", "C loop"): lambda: Lc.u8_norm(n, x.ctypes.data, y.ctypes.data),
            ("f16_fma", "jitc"): Jitc(R, "c = a * b + 1", {"a": a, "b": b}, c, threads),
            ("f16_fma", "C loop"): lambda: Lc.f16_fma(n, a.ctypes.data, b.ctypes.data, c.ctypes.data),
            ("f16_fma", "C, F16C by hand"): lambda: Lc.f16_fma_f16c(n, a.ctypes.data, b.ctypes.data,
                                                                     c.ctypes.data),
        }
        impls[("c64_expmul", "jitc")] = Jitc(R, "c = exp(z) * w", {"z": za, "w": zb}, cz, threads)
        if ne:
            impls[("c64_expmul", "numexpr (complex128)")] = lambda: ne.evaluate(
                "exp(z) * w", local_dict={"z": za, "w": zb}, out=cz128, casting="unsafe")
        if threads == 0:
            impls[("u8_norm", "NumPy")] = lambda: np.divide(
                np.subtract(x, np.float32(127.5), out=y), np.float32(127.5), out=y)
            impls[("f16_fma", "NumPy")] = lambda: np.add(np.multiply(a, b, out=c), 1, out=c)
            impls[("c64_expmul", "NumPy")] = lambda: np.multiply(np.exp(za, out=cz), zb, out=cz)
        outs = {"u8_norm": (y, y_ref), "f16_fma": (c, c_ref), "c64_expmul": (cz, cz_ref)}
        for key, fn in impls.items():  # the checks, before any time counts
            got, ref = outs[key[0]]
            if key[1].startswith("numexpr"):
                got = cz128
            got[:] = 0
            fn()
            ok = (close_c64(got, ref) if key[0] == "c64_expmul" else
                  got.tobytes() == ref.tobytes())
            if not ok:
                sys.exit(f"types_cpu: {key} differs from NumPy")
        times = {k: [] for k in impls}
        for _ in range(a_.rounds):
            for key, fn in impls.items():
                fn()
                for _ in range(a_.reps):
                    t0 = time.perf_counter()
                    fn()
                    times[key].append((time.perf_counter() - t0) * 1e3)
        for (w, impl), t in times.items():
            s = common.stats(t)
            nbytes = n * {"u8_norm": 5, "f16_fma": 6, "c64_expmul": 24}[w]
            rows.append(f"| {w} | {impl} | {tag} | {s['median_ms']:.2f} | "
                        f"{nbytes / s['median_ms'] / 1e6:.1f} | {s['iqr_pct']:.0f}% |")
    m = common.machine_info()
    lines = [f"# Narrow and complex types on the cpu target, n = {n:.0e}", "",
             f"{m.get('cpu', '?')}, {m.get('cores')} cores, {m.get('gcc')}; load average "
             f"{' '.join(m.get('loadavg_start', []))} at the start; medians of {a_.rounds} rounds "
             f"of {a_.reps} calls; jitc compiled for the host (native).", "",
             "| program | implementation | threads | median ms | GB/s | IQR |",
             "|---|---|---|---|---|---|"] + rows
    common.write_md(a_.out, lines)
    R.close()


if __name__ == "__main__":
    main()
