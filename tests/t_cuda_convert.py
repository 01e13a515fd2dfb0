#!/usr/bin/env python3
"""t_cuda_convert.py -- the cuda target's conversions, run on the host.

The device functions that convert to and from float16 and bfloat16 and
saturate floats into integers (src/cuda/convert.c) are taken from the CUDA C
that `jitc --emit cuda` writes, compiled by the host's C++ compiler (the few
CUDA intrinsics they call given host definitions; the PTX cvt instructions
of float16, which round to nearest even as IEEE 754 says, done with the
compiler's _Float16; cvt.rz with the rounding mode set toward zero) and run
on inputs chosen to trap them: every 16-bit pattern, the midpoints between
16-bit floats and their neighbours, NaNs with every kind of payload,
overflow and subnormal boundaries, doubles and 64-bit integers one unit
away from a tie, the integer types' ends.  The answers must be the bits
that NumPy (float16), ml_dtypes (bfloat16, from float64 and the integers
through the nearest float32) and exact rounding give, and the saturating casts' NaN -> 0, truncation and
clamping.  A NaN converts as interp converts it (src/half.h): made quiet, its sign
kept, float16 keeping the top of the payload both ways (NumPy's own casts
leave a signalling NaN signalling: quiet_nans() sets the bit in its answers).  The host's rounding of 16-bit constants (cuda_half_bits) must
give the same bits.  No GPU is needed.
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_cuda import jitc  # noqa: E402

FAILS = 0
INTS = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
        "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
SHORT = {"float16": "f16", "bfloat16": "bf16"}

SHIMS = r"""
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __device__
#define __forceinline__ inline
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
template <typename T> static double toward_zero(T x) {
  int m = fegetround(); fesetround(FE_TOWARDZERO);
  volatile T v = x; volatile double d = (double)v; fesetround(m); return d;
}
static inline double __ll2double_rz(long long x) { return toward_zero(x); }
static inline double __ull2double_rz(unsigned long long x) { return toward_zero(x); }
#ifdef __FLT16_MAX__ /* _Float16: GCC 12, clang 15 */
static inline float cvt_f32_f16(unsigned short h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }
static inline unsigned short cvt_rn_f16_f32(float x) { _Float16 v = (_Float16)x; unsigned short h; memcpy(&h, &v, 2); return h; }
static inline unsigned short cvt_rn_f16_f64(double x) { _Float16 v = (_Float16)x; unsigned short h; memcpy(&h, &v, 2); return h; }
#endif
static inline float cvt_rz_f32_f64(double x) {
  int m = fegetround(); fesetround(FE_TOWARDZERO);
  volatile double v = x; volatile float f = (float)v; fesetround(m); return f;
}
static inline double cvt_f64_f32(float x) { return (double)x; }
"""

DRIVER = r"""
template <typename I, typename O, typename F> static int run(const char *in, const char *out, F f) {
  FILE *fi = fopen(in, "rb"), *fo = fopen(out, "wb");
  if (!fi || !fo) return 2;
  I x;
  while (fread(&x, sizeof x, 1, fi) == 1) { O y = f(x); fwrite(&y, sizeof y, 1, fo); }
  fclose(fi); fclose(fo);
  return 0;
}
#define CASE(NAME, I, O, EXPR) if (!strcmp(argv[1], NAME)) return run<I, O>(argv[2], argv[3], [](I x) { return EXPR; });
int main(int argc, char **argv) {
  if (argc != 4) return 2;
%s
  return 3;
}
"""


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print("FAIL cuda_convert.%s: %s" % (name, why))
    else:
        print("ok cuda_convert.%s" % name)


def helpers():
    """The device functions of a program that makes every conversion."""
    args = ["--dtype", "h=float16", "--dtype", "g=bfloat16", "--dtype", "f=float32",
            "--dtype", "d=float64", "--dtype", "l=int64", "--dtype", "q=uint64"]
    stmts = ["o1 = f32(h)", "o2 = f32(g)", "o3 = f16(f)", "o4 = bf16(f)", "o5 = f16(d)",
             "o6 = bf16(d)", "o7 = f16(l)", "o8 = bf16(l)", "o9 = f16(q)", "o10 = bf16(q)"]
    stmts += ["s%s = %s(f)" % (t, t) for t in INTS] + ["t%s = %s(d)" % (t, t) for t in INTS]
    rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args, "\n".join(stmts))
    if rc != 0:
        return None, "--emit cuda: exit %d: %s" % (rc, err.strip()[:500])
    start, end = src.find("typedef "), src.find("// One element.")
    return host_code(src[start:end])


def host_code(text):
    """CUDA C's device functions as host C++ (after SHIMS): the inline PTX
    replaced by the host's equivalents; ('', why) if some cannot be."""
    text = re.sub(r'"\s*\n\s*"', "", text)  # adjacent string literals joined, as C does
    # cvt as calls of SHIMS' definitions.
    text = re.sub(r'asm\("(cvt[.\w]+) %0, %1;" : "=\w"\(([^)]*)\) : "\w"\(([^)]*(?:\([^)]*\))?)\)\);',
                  lambda m: "%s = %s(%s);" % (m.group(2), m.group(1).replace(".", "_"), m.group(3)), text)
    # The sign bit moved by integer instructions (helpers.c, H_SIGNBIT).
    text = re.sub(r'asm\("(xor|and)\.b(32|64) %0, %1, (0x[0-9a-f]+);" : "=\w"\((\w+)\) : "\w"\((.*)\)\);',
                  lambda m: "%s = (%s) %s %sull;" % (m.group(4), m.group(5), "^" if m.group(1) == "xor"
                                                      else "&", m.group(3)), text)
    text = re.sub(r'asm\("\{ \.reg \.b(32|64) m, s; and\.b\d+ m, %1, (0x[0-9a-f]+); '
                  r'and\.b\d+ s, %2, (0x[0-9a-f]+); or\.b\d+ %0, m, s; \}"\s*'
                  r': "=\w"\((\w+)\) : "\w"\((.*?)\), "\w"\((.*?)\)\);',
                  lambda m: "%s = ((%s) & %sull) | ((%s) & %sull);" % (
                      m.group(4), m.group(5), m.group(2), m.group(6), m.group(3)), text, flags=re.S)
    if "asm" in text:
        return None, "an asm statement the host cannot stand in for:\n" + text[text.find("asm"):][:300]
    return text, ""


def bits(a, dt):
    return np.ascontiguousarray(a).view(dt)


# ---- inputs ----

def f32_inputs(rng):
    h = np.arange(65536, dtype=np.uint16)
    f16 = h.view(np.float16).astype(np.float32)
    f16 = f16[np.isfinite(f16)]
    bf = (h.astype(np.uint32) << 16).view(np.float32)
    bf = bf[np.isfinite(bf)]
    out = [f16, bf]
    for vals in (np.unique(f16), np.unique(bf)):
        mid = (vals[:-1].astype(np.float64) + vals[1:]) / 2  # exact in float32 for float16
        m32 = mid.astype(np.float32)
        out += [m32, np.nextafter(m32, np.float32(np.inf)), np.nextafter(m32, np.float32(-np.inf))]
    out.append(rng.integers(0, 2**32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32))
    nans = np.array([0x7f800001, 0x7fc00000, 0x7f802000, 0x7fffffff, 0x7f801fff, 0x7fbfe000,
                     0x7fc01fff, 0x7f804000, 0x7faaaaaa], dtype=np.uint32)
    out.append(np.concatenate([nans, nans | 0x80000000]).view(np.float32))
    out.append(edges(np.float32))
    return np.concatenate(out).astype(np.float32)


def edges(dt):
    """Zeros, infs, extremes, and the integer types' ends with neighbours."""
    fi = np.finfo(dt)
    v = [0.0, -0.0, np.inf, -np.inf, fi.max, -fi.max, fi.tiny, fi.smallest_subnormal,
         0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0]
    for b in (7, 8, 15, 16, 31, 32, 63, 64):
        v += [2.0 ** b, -(2.0 ** b), 2.0 ** b - 1, -(2.0 ** b) - 1]
    a = np.array(v, dtype=dt)
    with np.errstate(all="ignore"):
        return np.concatenate([a, np.nextafter(a, dt(np.inf)), np.nextafter(a, dt(-np.inf))])


def f64_inputs(rng):
    out = []
    h = np.arange(65536, dtype=np.uint16)
    for vals in (h.view(np.float16).astype(np.float64), (h.astype(np.uint32) << 16).view(np.float32).astype(np.float64)):
        vals = np.unique(vals[np.isfinite(vals)])
        mid = (vals[:-1] + vals[1:]) / 2
        # A tie, and a double just off it, which going through float32 rounds to the tie.
        out += [mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf),
                mid * (1 + 2.0 ** -30), mid * (1 - 2.0 ** -30)]
    out.append(rng.integers(0, 2**64, 1 << 17, dtype=np.uint64).view(np.float64))
    out.append(np.ldexp(rng.random(1 << 15) + 1, rng.integers(-160, 140, 1 << 15)))
    nans = np.array([0x7ff0000000000001, 0x7ff8000000000000, 0x7ff4000000000001, 0x7fffffffffffffff,
                     0x7ff003ffffffffff, 0x7ff0040000000000], dtype=np.uint64)
    out.append(np.concatenate([nans, nans | np.uint64(1 << 63)]).view(np.float64))
    out.append(np.array([1 + 2.0 ** -11 + 2.0 ** -30, 1 + 2.0 ** -8 + 2.0 ** -30, 1e39, -1e39,
                         1e-50, 2.0 ** -149, 2.0 ** -150, 2.0 ** -150 * 3, 3.4028235677973366e38]))
    out.append(edges(np.float64))
    return np.concatenate(out)


def i64_inputs(rng, unsigned):
    v = [0, 1, 2**24 + 2**16 + 1, 2**24 + 2**16, 2**53 + 1, 2**63 - 1, 2**62 + 2**54 + 1,
         65519, 65520, 65504, 65505, 2**17 + 2**6 + 1]
    v += [-x for x in v] + [-2**63]
    if unsigned:
        v = [x % 2**64 for x in v] + [2**64 - 1, 2**63 + 2**55 + 1]
    r = [int(x) for x in rng.integers(-2**63, 2**63 - 1, 1 << 14, dtype=np.int64)]
    for k in range(11, 64):  # a tie (float16's, bfloat16's) plus one unit: the trap of rounding twice
        r += [2**k + 2**(k - 8) + 1, 2**k + 2**(k - 8), 2**k + 2**(k - 8) - 1, 2**k + 2**(k - 11) + 1]
    v += r + [-x for x in r]
    if unsigned:
        return np.fromiter(sorted({x % 2**64 for x in v}), dtype=np.uint64)
    return np.fromiter(sorted({x for x in v if -2**63 <= x < 2**63}), dtype=np.int64)


# ---- references ----

def exact_half(x, bf):
    """The bits of rational or integer x rounded once to nearest even (bf: bfloat16)."""
    mant, emax = (7, 127) if bf else (10, 15)
    sign = 0x8000 if x < 0 else 0
    a = abs(Fraction(x))
    if a == 0:
        return sign
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, 1 - emax)
    q = Fraction(2) ** (e - mant)
    m, r = divmod(a, q)
    m = int(m)
    if r > q / 2 or (r == q / 2 and m % 2):
        m += 1
    if m >= 2 ** (mant + 1):
        m //= 2
        e += 1
    if e > emax:
        return sign | (0x7f80 if bf else 0x7c00)
    if m >> mant:
        return sign | (e + emax) << mant | (m & ((1 << mant) - 1))
    return sign | m


def quiet_nans(src, want, how):
    """want (NumPy's or ml_dtypes' bits of the conversion of src) with each
    NaN as interp converts it: how "widen" (a 16-bit float to float32: the
    quiet bit set), "f32" or "f64" (a float32 or float64 to float16: quiet,
    the sign and the top 10 bits of the payload)."""
    want = want.copy()
    if how == "widen":
        nan = (want & 0x7fffffff) > 0x7f800000
        want[nan] |= 0x400000
        return want
    u = src.view(np.uint32 if how == "f32" else np.uint64)
    wide = u.astype(np.uint64) << np.uint64(29) if how == "f32" else u
    nan = (wide & np.uint64(0x7fffffffffffffff)) > np.uint64(0x7ff0000000000000)
    if how == "f32":
        nan = (u & 0x7fffffff) > 0x7f800000
    sign = ((wide >> np.uint64(48)) & np.uint64(0x8000)) if how == "f64" else \
        ((u >> 16) & 0x8000).astype(np.uint64)
    m = (wide >> np.uint64(42)) & np.uint64(0x3ff)
    want[nan] = (sign | np.uint64(0x7e00) | m)[nan].astype(np.uint16)
    return want


def ref_from_f64(x, t):
    bf = t == "bfloat16"
    u = x.view(np.uint64)
    out = np.empty(len(x), dtype=np.uint16)
    for k, (v, b) in enumerate(zip(x.tolist(), u.tolist())):
        sign = 0x8000 if b >> 63 else 0
        if v != v:  # quiet, with its sign (float16: the payload's top bits)
            out[k] = sign | (0x7fc0 if bf else 0x7e00 | (b >> 42) & 0x3ff)
        elif v in (float("inf"), float("-inf")):
            out[k] = sign | (0x7f80 if bf else 0x7c00)
        else:
            out[k] = exact_half(v, bf) | sign
    return out


def ref_sat(x, t):
    info = np.iinfo(INTS[t])
    out = []
    for v in x.tolist():
        if v != v:
            out.append(0)
        elif v >= info.max + 1:
            out.append(int(info.max))
        elif v <= info.min - 1:
            out.append(int(info.min))
        else:
            out.append(int(v))  # truncates toward zero
    return np.array(out, dtype=INTS[t])


CONST_MAIN = r"""
#include "cuda/gen.h"
#include <stdio.h>
#include <string.h>
/* cuda_half_bits and cuda_half_value of each double on stdin (as bits). */
int main(int argc, char **argv) {
  jitc_dtype t = strcmp(argv[1], "float16") ? JITC_BFLOAT16 : JITC_FLOAT16;
  unsigned long long u;
  while (scanf("%llx", &u) == 1) {
    double d, v;
    memcpy(&d, &u, 8);
    v = cuda_half_value(d, t);
    memcpy(&u, &v, 8);
    printf("%04x %016llx\n", (unsigned)cuda_half_bits(d, t), u);
  }
  return argc < 2;
}
"""


def check_routes():
    """A cast from a 16-bit float to any float widens it exactly
    (jitc_widen_*), never by the hardware's conversion (jitc_up_*), which
    makes every NaN the GPU's canonical positive one: float16 -> float64
    lost a NaN's sign so on an H100.  The host cannot see that difference."""
    why = []
    for h in SHORT:
        for r in ("float32", "float64", "float16", "bfloat16"):
            if r == h:
                continue
            rc, src, err = jitc("-t", "cuda", "--emit", "cuda", "--dtype", "a=" + h,
                                "o = %s(a)" % r)
            body = src[src.find("jitc_elem("):]
            if rc != 0 or "jitc_widen_%s(" % SHORT[h] not in body or "jitc_up_" in body:
                why.append("%s -> %s: %s" % (h, r, err.strip()[:200] or body[:300]))
    report("routes (casts from 16-bit floats to floats are exact)", "; ".join(why))


def check_constants(d):
    """Constants of the 16-bit types, rounded on the host (cuda_half_bits),
    as the device rounds from float64; cuda_half_value their exact value."""
    build = os.environ.get("BUILD", "build")
    lib = os.path.join(build, "libjitc_int.a")
    if not os.path.exists(lib):
        print("skip cuda_convert.constants: no %s (make test builds it)" % lib)
        return
    pc = open(os.path.join(build, "jitc.pc")).read() if os.path.exists(os.path.join(build, "jitc.pc")) else ""
    m = re.search(r"^Libs\.private:(.*)$", pc, re.M)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "c.c"), os.path.join(tmp, "c")
        with open(src, "w") as f:
            f.write(CONST_MAIN)
        cc = os.environ.get("CC", "cc").split()
        p = subprocess.run(cc + ["-std=c11", "-D_GNU_SOURCE", "-I" + os.path.join(root, "src"), "-o", exe,
                                 src, lib] + (m.group(1).split() if m else ["-lm"])
                           + os.environ.get("LDFLAGS", "").split(),  # a SAN=1 library needs its runtime
                           capture_output=True, text=True)
        if p.returncode != 0:
            report("constants", "build failed: " + p.stderr[:1500])
            return
        for t in SHORT:
            p = subprocess.run([exe, t], input="\n".join("%x" % u for u in d.view(np.uint64).tolist()),
                               capture_output=True, text=True)
            rows = [line.split() for line in p.stdout.splitlines()]
            got = np.array([int(r[0], 16) for r in rows], dtype=np.uint16)
            val = np.array([int(r[1], 16) for r in rows], dtype=np.uint64).view(np.float64)
            want = ref_from_f64(d, t)
            wval = want.view(np.float16 if t == "float16" else np.uint16)
            if t == "float16":
                wval = wval.astype(np.float64)
            else:
                wval = (want.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
            bad = np.nonzero((got != want) | ~((val == wval) | (np.isnan(val) & np.isnan(wval))))[0]
            report("constants.%s (%d values)" % (t, len(d)), "" if not len(bad) else
                   "%d differ, e.g. %r: bits %04x (want %04x), value %r (want %r)" % (
                       len(bad), d[bad[0]], got[bad[0]], want[bad[0]], val[bad[0]], wval[bad[0]]))


def main():
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    rc, _, err = jitc("-t", "cuda", "--emit", "cuda", "a[i] += 1")
    if rc != 0:
        print("skip cuda_convert: no cuda target: " + err.strip()[:200])
        return 0
    if not cxx:
        print("skip cuda_convert: no C++ compiler")
        return 0
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    text, why = helpers()
    if why:
        report("helpers", why)
        return 1
    cases = []  # (name, input array, expected array, C++ expression, in type, out type)
    rng = np.random.default_rng(23)
    h = np.arange(65536, dtype=np.uint16)
    cases.append(("widen.float16", h, quiet_nans(h, bits(h.view(np.float16).astype(np.float32),
                                                      np.uint32), "widen"),
                  "__float_as_uint(jitc_widen_f16(f16{x}))", "uint16_t", "uint32_t"))
    if ml_dtypes:
        cases.append(("widen.bfloat16", h, quiet_nans(h, bits(h.view(ml_dtypes.bfloat16).astype(
            np.float32), np.uint32), "widen"),
                      "__float_as_uint(jitc_widen_bf16(bf16{x}))", "uint16_t", "uint32_t"))
    f = f32_inputs(rng)
    with np.errstate(all="ignore"):
        cases.append(("narrow.float16", bits(f, np.uint32),
                      quiet_nans(f, bits(f.astype(np.float16), np.uint16), "f32"),
                      "jitc_narrow_f16(__uint_as_float(x)).h", "uint32_t", "uint16_t"))
        if ml_dtypes:
            cases.append(("narrow.bfloat16", bits(f, np.uint32),
                          bits(f.astype(ml_dtypes.bfloat16), np.uint16),
                          "jitc_narrow_bf16(__uint_as_float(x)).h", "uint32_t", "uint16_t"))
        d = f64_inputs(rng)
        # NumPy rounds float64 to float16 directly; the exact reference agrees with it.
        cases.append(("narrow64.float16", bits(d, np.uint64),
                      quiet_nans(d, bits(d.astype(np.float16), np.uint16), "f64"),
                      "jitc_narrow64_f16(__longlong_as_double((long long)x)).h", "uint64_t", "uint16_t"))
    check_constants(d[::4])
    check_routes()
    with np.errstate(all="ignore"):  # through the nearest float32, as ml_dtypes
        d32 = d.astype(np.float32).astype(np.float64)
    cases.append(("narrow64.bfloat16", bits(d, np.uint64), ref_from_f64(d32, "bfloat16"),
                  "jitc_narrow_bf16((f32)__longlong_as_double((long long)x)).h", "uint64_t",
                  "uint16_t"))
    for un in (False, True):
        ii = i64_inputs(rng, un)
        s = "u64" if un else "i64"
        for t in SHORT:
            if t == "bfloat16":  # through the nearest float32, as ml_dtypes
                want = np.array([exact_half(float(np.float32(v)), True) for v in ii], dtype=np.uint16)
                expr = "jitc_narrow_bf16((f32)x).h"
            else:
                want = np.array([exact_half(int(v), False) for v in ii.tolist()], dtype=np.uint16)
                expr = "jitc_narrow64_%s(jitc_odd_%s(x)).h" % (SHORT[t], s)
            cases.append(("%s.%s" % (s, t), ii, want, expr,
                          "uint64_t" if un else "int64_t", "uint16_t"))
    fs = np.concatenate([edges(np.float32), f[::64]])
    ds = np.concatenate([edges(np.float64), d[::64]])
    for t in INTS:
        c = np.dtype(INTS[t]).name + "_t"
        cname = ("u" if t[0] == "u" else "i") + re.sub(r"\D", "", t)
        cases.append(("saturate.float32_%s" % t, bits(fs, np.uint32), ref_sat(fs, t),
                      "jitc_to_%s_f32(__uint_as_float(x))" % cname, "uint32_t", c))
        cases.append(("saturate.float64_%s" % t, bits(ds, np.uint64), ref_sat(ds, t),
                      "jitc_to_%s_f64(__longlong_as_double((long long)x))" % cname, "uint64_t", c))
    # The exact reference against NumPy where both define the answer: float64 -> float16
    # (not a NaN's bits: quiet_nans).
    sample = d[::7]
    sample = sample[~np.isnan(sample)]
    mine = ref_from_f64(sample, "float16")
    with np.errstate(all="ignore"):
        npy = bits(sample.astype(np.float16), np.uint16)
    bad = np.nonzero(mine != npy)[0]
    report("reference_is_numpy", "" if not len(bad) else "exact rounding differs from NumPy at %r"
           % [(float(sample[k]), hex(mine[k]), hex(npy[k])) for k in bad[:5]])

    with tempfile.TemporaryDirectory() as tmp:
        cpp = os.path.join(tmp, "conv.cpp")
        exe = os.path.join(tmp, "conv")
        lines = "\n".join('  CASE("%s", %s, %s, %s)' % (n, it, ot, e) for n, _, _, e, it, ot in cases)
        with open(cpp, "w") as fh:
            fh.write(SHIMS + text + DRIVER % lines)
        p = subprocess.run([cxx, "-std=c++17", "-O1", "-frounding-math", "-o", exe, cpp],
                           capture_output=True, text=True)
        if p.returncode != 0:
            report("build", "%s failed:\n%s" % (cxx, p.stderr[:3000]))
            return 1
        for name, x, want, _, _, _ in cases:
            fin, fout = os.path.join(tmp, "in"), os.path.join(tmp, "out")
            np.ascontiguousarray(x).tofile(fin)
            p = subprocess.run([exe, name, fin, fout], capture_output=True, text=True)
            got = np.fromfile(fout, dtype=want.dtype) if p.returncode == 0 else None
            if got is None or len(got) != len(want):
                report(name, "exit %d" % p.returncode)
                continue
            bad = np.nonzero(got != want)[0]
            report("%s (%d inputs)" % (name, len(x)), "" if not len(bad) else "%d differ, e.g. %s" % (
                len(bad), ", ".join("in %s: got %s want %s" % (hex(int(np.asarray(x).view(
                    np.uint64 if x.itemsize == 8 else np.uint32 if x.itemsize == 4 else np.uint16)[k])),
                    hex(int(got[k]) & ((1 << 8 * got.itemsize) - 1)),
                    hex(int(want[k]) & ((1 << 8 * want.itemsize) - 1))) for k in bad[:4])))
    if not ml_dtypes:
        print("skip cuda_convert.bfloat16_float32: ml_dtypes is not installed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
