#!/usr/bin/env python3
"""types_cpu.py -- four programs of the narrow and complex types on the cpu
target against the C loop a programmer would write (gcc -O3 -march=native
-fopenmp, built here into a small library), NumPy (ml_dtypes for bfloat16)
and numexpr where numexpr runs the program, on the same arrays in one
process (results in bench/results/types_cpu.md):

  u8_norm     y = (f32(x) - 127.5) / 127.5  uint8 -> float32, 5 bytes/element
  f16_fma     c = a * b + 1                 float16, each operation rounded
                                            (as NumPy's), 6 bytes/element
  bf16_fma    c = a * b + 1                 bfloat16, likewise (as ml_dtypes)
  c64_expmul  c = exp(z) * w                complex64, 24 bytes/element; no
                                            C loop (C's cexpf is one element
                                            at a time)

    python3 bench/types_cpu.py --build build     (after make; the first three)
    python3 bench/types_cpu.py --build build --programs c64_expmul \
        --out bench/results/types_cpu_complex64.md

numexpr has neither 16-bit float (it computes float16 in float32 and
returns float32, without rounding the product): of the four it runs u8_norm,
with out= a float32 array (it reads uint8 as int32 and computes in float64, then
rounds once: the same bits for each of the 256 inputs), and c64_expmul,
computed in complex128 and rounded at the store into a complex64 out=.
All use all cores (jitc's default, OpenMP's, numexpr's), then one thread
each; NumPy uses one.  Rounds run every implementation in turn, so
background load falls on all of them alike; figures are medians of the
pooled calls.  Every result is checked against NumPy first: bit for bit,
and complex exp(z) * w within 4 units of float32's epsilon of each element's
magnitude from the product computed in complex128 (exp's bound, on every
side: NumPy's own complex64 exp is not correctly rounded either).
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
/* bfloat16 by hand (gcc 12 has no arithmetic on __bf16): the upper half of
** a float32, rounded to nearest even; a NaN stays a quiet NaN. */
static inline float bf_wide(uint16_t h) {
  union { uint32_t u; float f; } v = {(uint32_t)h << 16};
  return v.f;
}
static inline uint16_t bf_round(float f) {
  union { float f; uint32_t u; } v = {f};
  if ((v.u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)(v.u >> 16 | 0x40);
  return (uint16_t)((v.u + 0x7fffu + (v.u >> 16 & 1)) >> 16);
}
void bf16_fma(int64_t n, const uint16_t *a, const uint16_t *b, uint16_t *c) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++)
    c[i] = bf_round(bf_wide(bf_round(bf_wide(a[i]) * bf_wide(b[i]))) + 1.0f);
}
"""


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-n", type=float, default=1e7)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10, help="timed calls per round")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "types_cpu.md"))
    ap.add_argument("--programs", default=DEFAULT_PROGRAMS,
                    help="the programs to time, separated by commas (c64_expmul is timed "
                    "alone, into results/types_cpu_complex64.md)")
    return ap.parse_args()


DEFAULT_PROGRAMS = "u8_norm,f16_fma,bf16_fma"


def build_c():
    tmp = tempfile.mkdtemp(prefix="jitc-types-")
    src, lib = os.path.join(tmp, "c_types.c"), os.path.join(tmp, "c_types.so")
    with open(src, "w") as f:
        f.write(C_LOOPS)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-o", lib, src],
                   check=True)
    L = C.CDLL(lib)
    L.set_threads.argtypes = [C.c_int]
    for fn in (L.u8_norm, L.f16_fma, L.f16_fma_f16c, L.bf16_fma):
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


PROGRAMS = {"u8_norm": "y = (f32(x) - 127.5) / 127.5", "f16_fma": "c = a * b + 1",
            "bf16_fma": "c = a * b + 1", "c64_expmul": "c = exp(z) * w"}
BYTES = {"u8_norm": 5, "f16_fma": 6, "bf16_fma": 6, "c64_expmul": 24}
TYPE = {"u8_norm": "uint8 -> float32", "f16_fma": "float16", "bf16_fma": "bfloat16",
        "c64_expmul": "complex64"}
COLUMNS = ["jitc", "C loop", "C, F16C by hand", "NumPy", "numexpr"]


def data(n):
    """The inputs (uint8 across its range, the floats and each complex part
    standard normal), the outputs (written before timing) and NumPy's
    answers (complex: computed in complex128)."""
    import ml_dtypes
    bf = ml_dtypes.bfloat16
    rng = np.random.default_rng(1)
    v = {"x": rng.integers(0, 256, n, dtype=np.uint8)}
    for t, dt in (("16", np.float16), ("bf", bf)):
        for k in "ab":
            v[k + t] = rng.standard_normal(n).astype(np.float32).astype(dt)
    for k in "zw":
        v[k] = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    out = {"u8_norm": np.ones(n, np.float32), "f16_fma": np.ones(n, np.float16),
           "bf16_fma": np.ones(n, bf), "c64_expmul": np.ones(n, np.complex64)}
    ref = {"u8_norm": (v["x"].astype(np.float32) - np.float32(127.5)) / np.float32(127.5)}
    for w, t in (("f16_fma", "16"), ("bf16_fma", "bf")):
        dt = out[w].dtype
        p = (v["a" + t].astype(np.float32) * v["b" + t].astype(np.float32)).astype(dt)
        ref[w] = (p.astype(np.float32) + np.float32(1)).astype(dt)
    ref["c64_expmul"] = np.exp(v["z"].astype(np.complex128)) * v["w"]
    return v, out, ref


def agrees(w, got, ref):
    """Bit for bit; complex64 within 4 float32 epsilons of each element's
    magnitude."""
    if w != "c64_expmul":
        return got.tobytes() == ref.tobytes()
    err = np.abs(got.astype(np.complex128) - ref) / np.maximum(np.abs(ref),
                                                               np.finfo(np.float32).tiny)
    return bool((err <= 4 * np.finfo(np.float32).eps).all())


def implementations(v, out, Lc, R, threads, n):
    """{(program, implementation): a call}, for `threads` (0: all cores)."""
    import numexpr as ne
    ne.set_num_threads(threads or os.cpu_count())
    Lc.set_threads(threads or os.cpu_count())
    y, c16, cbf, cz = out["u8_norm"], out["f16_fma"], out["bf16_fma"], out["c64_expmul"]
    ptr = {k: a.ctypes.data for k, a in {**v, **{"y": y, "c16": c16, "cbf": cbf}}.items()}
    x, a16, b16, abf, bbf, z, w = (v[k] for k in ("x", "a16", "b16", "abf", "bbf", "z", "w"))
    impls = {
        ("u8_norm", "jitc"): Jitc(R, PROGRAMS["u8_norm"], {"x": x}, y, threads),
        ("u8_norm", "C loop"): lambda: Lc.u8_norm(n, ptr["x"], ptr["y"]),
        ("u8_norm", "numexpr"): lambda: ne.evaluate("(x - 127.5) / 127.5", local_dict={"x": x},
                                                    out=y),
        ("f16_fma", "jitc"): Jitc(R, PROGRAMS["f16_fma"], {"a": a16, "b": b16}, c16, threads),
        ("f16_fma", "C loop"): lambda: Lc.f16_fma(n, ptr["a16"], ptr["b16"], ptr["c16"]),
        ("f16_fma", "C, F16C by hand"): lambda: Lc.f16_fma_f16c(n, ptr["a16"], ptr["b16"],
                                                                 ptr["c16"]),
        ("bf16_fma", "jitc"): Jitc(R, PROGRAMS["bf16_fma"], {"a": abf, "b": bbf}, cbf, threads),
        ("bf16_fma", "C loop"): lambda: Lc.bf16_fma(n, ptr["abf"], ptr["bbf"], ptr["cbf"]),
        ("c64_expmul", "jitc"): Jitc(R, PROGRAMS["c64_expmul"], {"z": z, "w": w}, cz, threads),
        ("c64_expmul", "numexpr"): lambda: ne.evaluate("exp(z) * w", local_dict={"z": z, "w": w},
                                                       out=cz, casting="unsafe"),
    }
    if threads == 0:  # NumPy has one thread whatever the others have
        impls[("u8_norm", "NumPy")] = lambda: np.divide(
            np.subtract(x, np.float32(127.5), out=y), np.float32(127.5), out=y)
        impls[("f16_fma", "NumPy")] = lambda: np.add(np.multiply(a16, b16, out=c16), 1, out=c16)
        impls[("bf16_fma", "NumPy")] = lambda: np.add(np.multiply(abf, bbf, out=cbf), 1, out=cbf)
        impls[("c64_expmul", "NumPy")] = lambda: np.multiply(np.exp(z, out=cz), w, out=cz)
    return impls


def main():
    reduce_lib.under_sanitizers("types_cpu")  # SAN=1: the ASan library, preloaded
    a_ = parse_args()
    reduce_lib.use_build(a_.build)
    n = int(a_.n)
    v, out, ref = data(n)
    Lc = build_c()
    R = reduce_lib.Runner()
    load0 = common.machine_info().get("loadavg_start", [])
    rows = []
    progs = a_.programs.split(",")
    for p in progs:
        if p not in PROGRAMS:
            sys.exit(f"types_cpu: no program {p} (there are {', '.join(PROGRAMS)})")
    for threads in (0, 1):
        impls = {k: fn for k, fn in implementations(v, out, Lc, R, threads, n).items()
                 if k[0] in progs}
        reps = {}
        for key, fn in impls.items():  # the checks, before any time counts
            out[key[0]][:] = 0
            t0 = time.perf_counter()
            fn()
            # a call of more than 50 ms (NumPy's 16-bit loops) is timed 3 times a round
            reps[key] = a_.reps if time.perf_counter() - t0 < 0.05 else 3
            if not agrees(key[0], out[key[0]], ref[key[0]]):
                sys.exit(f"types_cpu: {key} differs from NumPy")
        times = {k: [] for k in impls}
        for _ in range(a_.rounds):
            for key, fn in impls.items():
                fn()
                for _ in range(reps[key]):
                    t0 = time.perf_counter()
                    fn()
                    times[key].append((time.perf_counter() - t0) * 1e3)
        for (w, impl), t in times.items():
            s = common.stats(t)
            rows.append({"program": w, "impl": impl, "threads": threads or os.cpu_count(),
                         "median_ms": s["median_ms"], "min_ms": s["min_ms"],
                         "iqr_pct": s["iqr_pct"], "calls": len(t),
                         "gbps": n * BYTES[w] / s["median_ms"] / 1e6})
            print(f"{w:10s} {impl:16s} threads {threads or os.cpu_count()}: "
                  f"{s['median_ms']:.2f} ms (IQR {s['iqr_pct']:.0f}%)", flush=True)
    m = common.machine_info()
    import numexpr
    res = {"n": n, "rounds": a_.rounds, "reps": a_.reps, "machine": m, "loadavg_start": load0,
           "loadavg_end": open("/proc/loadavg").read().split()[:3],
           "numpy": np.__version__, "numexpr": numexpr.__version__,
           "command": "python3 bench/types_cpu.py --build %s -n %g%s" % (
               a_.build, n, "" if a_.programs == DEFAULT_PROGRAMS else " --programs " + a_.programs),
           "results": rows}
    common.write_json(os.path.splitext(a_.out)[0] + ".json", res)
    common.write_md(a_.out, markdown(res))
    R.close()


def markdown(res):
    """A table per thread count: each implementation's median (ms), jitc
    against the C loop and against the fastest peer."""
    m, rows = res["machine"], res["results"]
    L = [f"# Narrow and complex types on the cpu target, n = {res['n']:.0e}", "",
         f"{m.get('cpu', '?')}, {m.get('cores')} cores, {m.get('gcc')}; NumPy "
         f"{res['numpy']}, numexpr {res['numexpr']}; load average "
         f"{' '.join(res['loadavg_start'])} at the start, {' '.join(res['loadavg_end'])} at the "
         f"end; medians of {res['rounds']} rounds of {res['reps']} calls (3 for a call over 50 "
         f"ms), ± half the interquartile range; jitc compiled for the host (native).  Command: "
         f"`{res['command']}`.", ""]
    for threads in sorted({r["threads"] for r in rows}, reverse=True):
        L += [f"{threads} thread{'s' if threads > 1 else ''}"
              + (" (NumPy: one)" if threads > 1 else "") + ", median ms:", "",
              "| program | " + " | ".join(COLUMNS) + " | jitc / C | best peer / jitc |",
              "|---|" + "---:|" * (len(COLUMNS) + 2)]
        for w, prog in PROGRAMS.items():
            if not any(r["program"] == w for r in rows):
                continue
            got = {r["impl"]: r for r in rows if r["program"] == w and r["threads"] == threads}
            j, c = got.get("jitc"), got.get("C loop")
            peers = [got[i]["median_ms"] for i in ("NumPy", "numexpr") if i in got]
            L.append(f"| `{prog}` {TYPE[w]} | " + " | ".join(
                "%.2f ±%.0f%%" % (got[i]["median_ms"], got[i]["iqr_pct"] / 2) if i in got else "-"
                for i in COLUMNS) + " | %s | %s |" % (
                "%.2fx" % (j["median_ms"] / c["median_ms"]) if j and c else "-",
                "%.1fx" % (min(peers) / j["median_ms"]) if j and peers else "-"))
        L.append("")
    return L


if __name__ == "__main__":
    main()
