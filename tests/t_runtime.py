#!/usr/bin/env python3
"""t_runtime.py -- the command line's .npy I/O, generators and printing, against NumPy.

Builds tests/runtime_driver.c with their sources (cli/) (and again with
AddressSanitizer + UndefinedBehaviorSanitizer when the compiler can), then
checks: rand/randn bit for bit with np.random.seed(S); rand(n)/randn(n); every
generator in every dtype; .npy files of every dtype, shape, order and version
NumPy writes, read and written back byte for byte as np.save writes them;
atomic writes; format_array/format_value against NumPy's own digits; and a
set of hostile files, each of which must fail with its own message, in
bounded time and memory, with no sanitizer report (the sanitized driver runs
the file tests next to the plain one, and everything under make test SAN=1).  Prints "ok NAME",
"FAIL NAME: why" or "skip NAME: why" lines.
"""
import os
import resource
import shlex
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRCS = [os.path.join(ROOT, p) for p in (
    "tests/runtime_driver.c", "cli/host.c", "cli/fileio.c", "cli/npyhdr.c", "cli/npy.c",
    "cli/gen.c", "cli/elem.c",
    "cli/format.c", "runtime/text.c", "runtime/hostinfo.c")]
# The dtype names and sizes come from the library (jitc.h).  A `make SAN=1`
# library needs the sanitizer runtime (LDFLAGS brings it), and then every
# driver is a sanitized one: no address-space limit, which ASan cannot run in.
LIBDIR = os.path.join(ROOT, os.environ.get("BUILD", "build") or "build")
LIBS = (["-L" + LIBDIR, "-Wl,-rpath," + LIBDIR, "-ljitc", "-lm"] +
        shlex.split(os.environ.get("LDFLAGS", "")))
SANITIZED_LIB = "-fsanitize" in os.environ.get("LDFLAGS", "")
CC = os.environ.get("CC", "cc") or "cc"
WARN = ["-std=c11", "-D_GNU_SOURCE", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter"]
SAN = ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
       "-fno-omit-frame-pointer"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t_types  # noqa: E402  (the table of types, src/types.h)

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
# Every type of the table (bfloat16 where ml_dtypes is here to check it),
# with its NumPy dtype.
ROWS = t_types.table()
DTYPES = [r["name"] for r in ROWS if r["name"] != "bfloat16" or ml_dtypes]
NPDT = {name: np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name) for name in DTYPES}
INTS = [t for t in DTYPES if NPDT[t].kind in "iu"]
COMPLEX = [t for t in DTYPES if NPDT[t].kind == "c"]
FLOATS = [t for t in DTYPES if t not in INTS and t not in COMPLEX and t != "bool"]
KIND_ORDER = {"T_BOOL": 0, "T_SINT": 1, "T_UINT": 2, "T_FLOAT": 3, "T_COMPLEX": 4}
# The messages list the types by kind, then size (bfloat16 after float16).
SUPPORTED = "jitc reads " + ", ".join(
    r["name"] for r in sorted(ROWS, key=lambda r: (KIND_ORDER[r["kind"]], r["size"],
                                                  r["name"] == "bfloat16")))
# A bfloat16 file says only '<V2': the driver is told what it holds.
NAMED = {"bfloat16": {"RT_NAMED": "bfloat16"}}

failures = 0


def ok(name):
    print("ok " + name, flush=True)


def fail(name, why):
    global failures
    failures += 1
    print("FAIL %s: %s" % (name, why), flush=True)


def check(name, problems):
    """Reports one test from a list of problems (empty: passed)."""
    if problems:
        fail(name, problems[0] + ("" if len(problems) == 1 else
                                  " (and %d more)" % (len(problems) - 1)))
        for p in problems[1:6]:
            print("   " + p)
    else:
        ok(name)


class Driver:
    def __init__(self, exe, sanitized, tmp):
        self.exe, self.sanitized, self.tmp = exe, sanitized, tmp

    def run(self, *args, env=None, timeout=60, mem_mb=None, cwd=None):
        """Runs the driver; returns (rc, stdout, stderr).  A signal or a
        sanitizer report becomes rc 'crash'."""
        e = dict(os.environ)
        # A failed huge allocation must come back as NULL, as without ASan.
        e["ASAN_OPTIONS"] = "detect_leaks=1:allocator_may_return_null=1:exitcode=99"
        e["UBSAN_OPTIONS"] = "print_stacktrace=1:exitcode=99"
        if env:
            e.update(env)
        pre = None
        if mem_mb and not self.sanitized:
            lim = mem_mb << 20

            def pre():
                resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        try:
            p = subprocess.run([self.exe] + [str(a) for a in args], capture_output=True,
                               text=True, env=e, timeout=timeout, preexec_fn=pre,
                               cwd=cwd or self.tmp, errors="replace")
        except subprocess.TimeoutExpired:
            return ("timeout", "", "timed out after %ss" % timeout)
        if (p.returncode < 0 or p.returncode == 99 or "ERROR: " in p.stderr
                or "runtime error:" in p.stderr):
            return ("crash", p.stdout, "rc %d: %s" % (p.returncode, p.stderr[-1500:]))
        return (p.returncode, p.stdout, p.stderr)


def build(tmp, name, extra):
    exe = os.path.join(tmp, name)
    cmd = [CC] + WARN + extra + ["-o", exe] + SRCS + LIBS
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr[-2000:]
    # Warnings in the runtime are defects too.
    if "warning:" in p.stderr:
        return exe, "compiler warnings:\n" + p.stderr[-2000:]
    return exe, ""


# ---------------------------------------------------------------- generators

def expected_gen(spec, dtype, n):
    """What NumPy gives for the spec, or None when NumPy's answer is undefined."""
    name, _, arg = spec.partition(":")
    dt = NPDT[dtype]
    with np.errstate(all="ignore"):
        if dt.kind == "c" and name in ("rand", "randn"):
            # The real parts are a real array's draws, the imaginary parts
            # the next n: np.random.rand(n) + 1j*np.random.rand(n).
            z = np.empty(n, np.complex128)
            np.random.seed(int(arg) if arg else 1)
            z.real = getattr(np.random, name)(n)
            z.imag = getattr(np.random, name)(n)
            return z.astype(dt)
        v = float_values(name, arg, n)
        if v is not None:
            if dt.kind == "u":  # -1.5 -> uint8 is machine-dependent: jitc's 0
                v = np.where(v <= -1, 0.0, v)
            return v.astype(dt)
        if name == "ones":
            return np.ones(n, dt)
        if name == "zeros":
            return np.zeros(n, dt)
        if name == "arange":
            return np.arange(n).astype(dt)
        if name == "full":
            if arg in ("True", "true", "False", "false"):
                return np.full(n, arg in ("True", "true"), dt)
            try:
                v = int(arg)
            except ValueError:
                v = complex(arg) if arg.endswith(("j", "J", ")")) else float(arg)
            if dt.kind == "V":  # ml_dtypes' np.full takes no Python int
                return np.full(n, np.array(v).astype(dt), dt)
            return np.full(n, v, dt)
    raise ValueError(spec)


def float_values(name, arg, n):
    """The float64 values a generator makes before the cast, or None."""
    if name == "linspace":
        lo, hi = arg.split(":")
        return np.linspace(float(lo), float(hi), n)
    if name in ("rand", "randn"):
        np.random.seed(int(arg) if arg else 1)
        return np.random.rand(n) if name == "rand" else np.random.randn(n)
    return None


def same(a, b):
    """Bit-exact equality of two arrays (NaN equal to NaN, -0.0 apart from 0.0)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tobytes(order="A") == b.tobytes(order="A") and (
        a.flags.f_contiguous == b.flags.f_contiguous or a.ndim < 2)


def test_generators(d, pre):
    t = d.tmp
    out = os.path.join(t, "g.npy")

    def gen_case(spec, dtype, n, expect=None):
        rc, _, err = d.run("gen", spec, dtype, n, out)
        if rc != 0:
            return ["%s %s n=%d: rc %s: %s" % (spec, dtype, n, rc, err.strip())]
        got = np.load(out)
        if got.dtype != NPDT[dtype] and got.dtype.kind == NPDT[dtype].kind == "V":
            got = got.view(NPDT[dtype])  # bfloat16: saved as '<V2'
        want = expect if expect is not None else expected_gen(spec, dtype, n)
        if not same(got, want):
            bad = np.flatnonzero(got != want)[:3] if got.shape == want.shape else []
            return ["%s %s n=%d: got %s, NumPy %s at %s" % (
                spec, dtype, n, got[:5], want[:5], list(bad))]
        return []

    # rand / randn bit for bit, several seeds and sizes (float64 first: the
    # raw stream, then every cast).
    for g in ("rand", "randn"):
        probs = []
        for seed in (0, 1, 42, 123456789, 4294967295):
            for n in (0, 1, 7, 1000):
                probs += gen_case("%s:%d" % (g, seed), "float64", n)
        probs += gen_case(g, "float64", 7, expected_gen(g + ":1", "float64", 7))
        probs += gen_case(g + ":5", "float64", 10001)  # past the fill chunks
        check(pre + "gen/%s-float64-bitexact" % g, probs)
        probs = []
        for dtype in DTYPES:
            for seed in (0, 1, 7):
                for n in (0, 1, 7, 1000):
                    probs += gen_case("%s:%d" % (g, seed), dtype, n)
        check(pre + "gen/%s-casts" % g, probs)

    # The raw 32-bit stream against NumPy's MT19937 with legacy seeding.
    probs = []
    for seed in (0, 1, 5489, 4294967295):
        rc, outp, err = d.run("mt", seed, 1300)
        try:
            bg = np.random.RandomState(seed)._bit_generator  # legacy seeding
            want = [int(x) for x in bg.random_raw(1300)]
        except AttributeError:
            print("skip %sgen/mt19937-raw: this NumPy hides the raw stream" % pre)
            break
        got = [int(x) for x in outp.split()] if rc == 0 else None
        if got != want:
            probs.append("seed %d: %s" % (seed, err.strip() or "stream differs"))
    else:
        check(pre + "gen/mt19937-raw", probs)

    for spec in ("ones", "zeros", "arange", "linspace:0:1", "linspace:-3.5:7.25",
                 "linspace:10:-10", "linspace:5:5", "full:2.5", "full:-3", "full:0",
                 "full:True", "full:false", "full:1e300", "full:-0.0"):
        probs = []
        for dtype in DTYPES:
            if spec in ("full:1e300",) and dtype in INTS:
                continue  # out of range: NumPy's answer is undefined (tested below)
            if spec == "full:-3" and NPDT[dtype].kind == "u":
                continue  # NumPy's OverflowError (tested below)
            for n in (0, 1, 2, 7, 1000, 5000):
                probs += gen_case(spec, dtype, n)
        check(pre + "gen/" + spec.replace(":", "="), probs)

    # Floats only: NaN results and denormal steps.
    probs = []
    for spec in ("linspace:0:inf", "linspace:-inf:inf", "linspace:0:5e-324",
                 "linspace:1e-310:3e-310", "linspace:nan:1", "full:nan", "full:inf",
                 "full:-inf", "full:1e-45", "linspace:-1e308:1e308"):
        for dtype in FLOATS:
            for n in (1, 2, 7, 1001):
                probs += gen_case(spec, dtype, n)
    check(pre + "gen/float-edges", probs)

    # The 16-bit floats' rounding: float16 from float64 directly (1 + 2^-11
    # + 2^-30 rounds up, through float32 it would not), bfloat16 through
    # float32 as ml_dtypes does (1 + 2^-8 + 2^-30 rounds down to 1), ties to
    # even, subnormals, overflow to inf, NaN kept.
    probs = []
    for dtype in [t for t in FLOATS if NPDT[t].itemsize == 2]:
        for v in ("1.00048828125000093", "1.0039062500000009", "1.00048828125", "1.00146484375",
                  "1.0078125", "65504", "65519.99", "65520", "1e-7", "2.98e-8", "2.9802322387695312e-08",
                  "5.96e-8", "-6.1e-5", "3.3895e38", "3.3961e38", "1e39", "nan", "-nan", "-inf"):
            probs += gen_case("full:" + v, dtype, 3)
        for spec in ("rand:3", "randn:3", "linspace:-70000:70000", "linspace:0:1e-6"):
            probs += gen_case(spec, dtype, 5000)
    check(pre + "gen/half-rounding", probs)

    # Complex values: full:VALUE reads what Python's complex() reads; a
    # complex value for a real type is refused (np.full would drop the
    # imaginary part with a ComplexWarning).
    probs = []
    for dtype in COMPLEX:
        for v in ("1+2j", "-2.5j", "j", "-j", "1-j", "(1+2j)", "1e300+1e-300j", "-0-0j",
                  "nan+infj", "-inf-nanj", "3.4e38-3.5e38j", "1e-46+1e-45J", "0.1+0.2j"):
            for n in (0, 1, 7, 1000):
                probs += gen_case("full:" + v, dtype, n)
    for dtype in DTYPES:
        if dtype in COMPLEX:
            continue
        rc, _, err = d.run("gen", "full:1+2j", dtype, 3, out)
        want = "full value 1+2j is complex and does not fit " + dtype
        if rc != 1 or want not in err:
            probs.append("full:1+2j %s: rc %s, %r (want %r)" % (dtype, rc, err.strip(), want))
    for spec in ("full:1+", "full:1+2", "full:1 +2j", "full:1+2jj", "full:(1+2j", "full:0x1j",
                 "full:1+2i"):
        rc, _, err = d.run("gen", spec, COMPLEX[0] if COMPLEX else "float64", 3, out)
        if rc != 1 or "bad number" not in err:
            probs.append("%s: rc %s, %r (want a bad number)" % (spec, rc, err.strip()))
    check(pre + "gen/complex-values", probs)

    # Exact integers and casts that C leaves undefined (saturate; NaN gives 0).
    probs = []
    I32, I64 = np.iinfo(np.int32), np.iinfo(np.int64)
    for spec, dtype, val in (
            ("full:9007199254740993", "int64", 9007199254740993),
            ("full:-9223372036854775808", "int64", I64.min),
            ("full:2147483647", "int32", I32.max),
            ("full:1e300", "int32", I32.max), ("full:-1e300", "int32", I32.min),
            ("full:1e300", "int64", I64.max), ("full:-1e300", "int64", I64.min),
            ("full:nan", "int32", 0), ("full:nan", "int64", 0),
            ("full:inf", "int64", I64.max), ("full:2147483647.9", "int32", I32.max),
            ("full:-2147483648.9", "int32", I32.min), ("full:nan", "bool", True),
            ("full:2.5", "int32", 2), ("full:-2.5", "int64", -2),
            ("full:9.3e18", "int64", I64.max), ("full:-9.2233720368547758e18", "int64", I64.min),
            ("full:1e300", "uint8", 255), ("full:300.0", "uint8", 255), ("full:-1.5", "uint8", 0),
            ("full:-1e300", "uint16", 0), ("full:nan", "uint64", 0), ("full:-0.5", "uint32", 0),
            ("full:1e20", "uint64", 2**64 - 1), ("full:18446744073709551615", "uint64", 2**64 - 1),
            ("full:255", "uint8", 255), ("full:-128", "int8", -128), ("full:127.9", "int8", 127),
            ("full:-200.0", "int8", -128), ("full:4294967295.5", "uint32", 2**32 - 1),
            ("full:40000.0", "int16", 2**15 - 1), ("full:inf", "uint16", 2**16 - 1)):
        if dtype in DTYPES:
            probs += gen_case(spec, dtype, 3, np.full(3, val, NPDT[dtype]))
    check(pre + "gen/int-casts-saturate", probs)

    # Bad specs: a clear error naming the problem.
    probs = []
    usage = ("use FILE.npy, FILE.npz[:NAME], ones, zeros, arange, linspace:LO:HI, full:VALUE, "
             "rand[:SEED] or randn[:SEED]")
    for spec, dtype, words in (
            ("foo", "float64", "unknown input 'foo': " + usage),
            ("", "float64", "unknown input ''"),
            ("Ones", "float64", "unknown input 'Ones'"),
            ("ones:3", "float64", "takes no argument"),
            ("rand:abc", "float64", "bad seed 'abc' in 'rand:abc'"),
            ("rand:-1", "float64", "bad seed '-1'"),
            ("randn:4294967296", "float64", "from 0 to 4294967295"),
            ("rand:", "float64", "bad seed ''"),
            ("rand:1.5", "float64", "bad seed"),
            ("linspace", "float64", "linspace needs two bounds"),
            ("linspace:1", "float64", "linspace needs two bounds"),
            ("linspace:a:1", "float64", "bad number 'a'"),
            ("linspace:0:1:2", "float64", "bad number '1:2'"),
            ("linspace:0x10:1", "float64", "bad number '0x10'"),
            ("linspace: 1:2", "float64", "bad number"),
            ("full", "float64", "full needs a value"),
            ("full:", "float64", "full needs a value"),
            ("full:abc", "float64", "bad number 'abc'"),
            ("full:1,5", "float64", "bad number '1,5'"),
            ("full:3000000000", "int32", "does not fit int32"),
            ("full:99999999999999999999", "int64", "does not fit int64"),
            ("full:300", "uint8", "full value 300 does not fit uint8"),
            ("full:-1", "uint64", "does not fit uint64"),
            ("full:128", "int8", "does not fit int8"),
            ("full:-32769", "int16", "does not fit int16"),
            ("full:65536", "uint16", "does not fit uint16"),
            ("full:-4294967296", "uint32", "does not fit uint32"),
            ("full:18446744073709551616", "uint64", "does not fit uint64"),
            ("full:9223372036854775808", "int64", "does not fit int64")):
        rc, _, err = d.run("gen", spec, dtype, 3, out)
        if rc != 1 or words not in err:
            probs.append("%r: rc %s, %r (want %r)" % (spec, rc, err.strip(), words))
    check(pre + "gen/bad-specs", probs)

    # gen_is_spec: generator names, files, and typos (no such file: a spec,
    # so that the caller reports the list of generators).
    probs = []
    open(os.path.join(t, "data"), "w").close()
    for spec, want in (("ones", "1"), ("rand:3", "1"), ("linspace:0:1", "1"),
                       ("full:2", "1"), ("foo", "1"), ("x.npy", "0"), ("d/x", "0"),
                       ("data", "0"), ("randn", "1")):
        rc, outp, err = d.run("isspec", spec, cwd=t)
        if rc != 0 or outp.strip() != want:
            probs.append("%r: got %r, want %r" % (spec, outp.strip(), want))
    check(pre + "gen/is-spec", probs)

    # Allocation: sizes that overflow fail cleanly; buffers are aligned.
    probs = []
    for dtype, n, words in (("float64", -1, "negative"),
                            ("float64", 2**61, "too large"),
                            ("int32", 2**62, "too large"),
                            ("bool", 2**63 - 1, "too large"),
                            ("float64", 2**40, "out of memory")):
        rc, _, err = d.run("alloc", dtype, n, mem_mb=512)
        if rc != 1 or words not in err:
            probs.append("alloc %s %d: rc %s %r" % (dtype, n, rc, err.strip()))
    for dtype in DTYPES:
        for n in (0, 1, 3, 1000):
            rc, outp, err = d.run("alloc", dtype, n)
            if rc != 0 or outp.strip() != "aligned":
                probs.append("alloc %s %d: %s %s" % (dtype, n, outp.strip(), err.strip()))
    rc, outp, err = d.run("time")
    if rc != 0 or outp.strip() != "monotonic":
        probs.append("rt_now_ms: %s %s" % (outp, err))
    check(pre + "host/alloc", probs)


# ---------------------------------------------------------------- .npy files

def sample(dtype, shape, rng):
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        v = rng.random(n) < 0.5
    elif dtype in INTS:
        info = np.iinfo(NPDT[dtype])
        v = rng.integers(info.min, info.max, n, dtype=NPDT[dtype], endpoint=True)
    elif dtype in COMPLEX:
        part = NPDT[dtype].type(0).real.dtype.name
        v = np.empty(n, NPDT[dtype])
        v.real, v.imag = sample(part, (n,), rng), sample(part, (n,), rng)[::-1]
    else:
        with np.errstate(over="ignore"):  # float16 overflows to inf: a value too
            v = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(NPDT[dtype])
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]).astype(NPDT[dtype])
        v[: min(n, 5)] = special[: min(n, 5)]
    return v.reshape(shape)


SHAPES = [(), (0,), (1,), (5,), (3, 4), (2, 3, 4), (0, 3), (3, 0, 2), (2, 1, 3, 1, 2),
          (1,) * 32, (4, 5, 6)]


def write_versions(path_base, a):
    """np.save and write_array with each version; yields (label, path)."""
    p = path_base + "-save.npy"
    np.save(p, a)
    yield "save", p
    for ver in ((1, 0), (2, 0), (3, 0)):
        p = "%s-v%d.npy" % (path_base, ver[0])
        with open(p, "wb") as f:
            np.lib.format.write_array(f, a, version=ver)
        yield "v%d" % ver[0], p


def header_of(path):
    with open(path, "rb") as f:
        ver = np.lib.format.read_magic(f)
        try:
            from numpy.lib import _format_impl as npf
        except ImportError:
            npf = np.lib.format
        shape, fortran, dt = npf._read_array_header(f, ver)
    return ver, shape, fortran, dt


def test_npy_roundtrip(d, pre):
    t = d.tmp
    rng = np.random.default_rng(7)
    out = os.path.join(t, "rt-out.npy")
    # Under the sanitizers (30 ms a run) a subset covers the same code.
    shapes = SHAPES if not d.sanitized else [(), (0,), (5,), (2, 3, 4), (1,) * 32]
    for dtype in DTYPES:
        probs = []
        for shape in shapes:
            base = sample(dtype, shape, rng)
            for order in ("C", "F"):
                a = np.array(base, order=order)  # (ascontiguousarray makes 0-d 1-d)
                for label, path in write_versions(os.path.join(t, "rt"), a):
                    if d.sanitized and label in ("v1", "v3"):
                        continue
                    what = "%s %s %s %s" % (dtype, shape, order, label)
                    ver, hshape, fortran, _ = header_of(path)
                    rc, outp, err = d.run("info", path, env=NAMED.get(dtype))
                    want = "%s %d %d %d%s" % (dtype, len(shape), int(fortran), a.size,
                                              "".join(" %d" % s for s in shape))
                    if rc != 0 or outp.strip() != want:
                        probs.append("%s: info %r, want %r (%s)" % (what, outp.strip(), want,
                                                                     err.strip()))
                        continue
                    rc, _, err = d.run("copy", path, out, env=NAMED.get(dtype))
                    if rc != 0:
                        probs.append("%s: copy failed: %s" % (what, err.strip()))
                        continue
                    back = np.load(out)
                    if dtype in NAMED:  # '<V2', as ml_dtypes saves bfloat16
                        back = back.view(NPDT[dtype])
                    if not same(back, a) or back.flags.f_contiguous != a.flags.f_contiguous:
                        probs.append("%s: data differs after a round trip" % what)
                    # The bytes np.save writes for the same array.
                    np.save(os.path.join(t, "ref.npy"), np.load(path).view(a.dtype))
                    if open(out, "rb").read() != open(os.path.join(t, "ref.npy"), "rb").read():
                        probs.append("%s: bytes differ from np.save's" % what)
        check(pre + "npy/roundtrip-" + dtype, probs)

    # A bare '<V2' is bfloat16 only when the reader is told so.
    if "bfloat16" in DTYPES:
        p = os.path.join(t, "bf.npy")
        np.save(p, np.arange(3).astype(NPDT["bfloat16"]))
        rc, outp, err = d.run("info", p)
        want = ("dtype '<V2' is raw bytes, which is how ml_dtypes saves bfloat16: name the type "
                "to read it as one (--dtype NAME=bfloat16)")
        probs = [] if rc == 1 and want in err else ["unnamed: rc %s %r" % (rc, err.strip())]
        rc, outp, err = d.run("info", p, env={"RT_NAMED": "float16"})
        if rc != 1 or want not in err:
            probs.append("named float16: rc %s %r" % (rc, err.strip()))
        check(pre + "npy/bfloat16-only-when-named", probs)

    # Generated files load in NumPy with the right header (and np.load
    # accepts them without allow_pickle).
    probs = []
    for dtype in DTYPES:
        for n in (0, 1, 100):
            p = os.path.join(t, "w.npy")
            rc, _, err = d.run("gen", "arange", dtype, n, p)
            if rc != 0:
                probs.append(err.strip())
                continue
            ver, shape, fortran, dt = header_of(p)
            if ver != (1, 0) or shape != (n,) or fortran or (
                    dt != NPDT[dtype] and dt.str[1:] != NPDT[dtype].str[1:]):
                probs.append("%s %d: header %s %s %s %s" % (dtype, n, ver, shape, fortran, dt))
            if os.path.getsize(p) % 64 != (n * np.dtype(NPDT[dtype]).itemsize) % 64:
                probs.append("%s %d: data not 64-byte aligned in the file" % (dtype, n))
    check(pre + "npy/write-header", probs)

    # Headers NumPy would accept, written by hand.
    probs = []
    data = np.arange(6, dtype="<f8").tobytes()
    for hdr in ("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}",
                '{"descr": "<f8", "fortran_order": False, "shape": (2,3)}',
                "{ 'descr' : '<f8' ,\t'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }",
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }",
                "{'descr':'<f8','fortran_order':False,'shape':(2,3)}"):
        for ver in ((1, 0), (2, 0), (3, 0)):
            p = os.path.join(t, "hand.npy")
            with open(p, "wb") as f:
                f.write(make_npy(hdr, data, ver))
            rc, outp, err = d.run("info", p)
            if rc != 0 or outp.strip() != "float64 2 0 6 2 3":
                probs.append("%r v%d: %s %s" % (hdr, ver[0], outp.strip(), err.strip()))
    for hdr, payload, want in (
            ("{'descr': '?', 'fortran_order': False, 'shape': (3,)}", b"\x00\x01\x00",
             "bool 1 0 3 3"),
            ("{'descr': '<b1', 'fortran_order': True, 'shape': (3,)}", b"\x00\x01\x00",
             "bool 1 1 3 3"),
            ("{'descr': '<i4', 'fortran_order': False, 'shape': ()}", b"\x07\x00\x00\x00",
             "int32 0 0 1"),
            ("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 1000000000000)}", b"",
             "int64 2 0 0 0 1000000000000"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", b"\x00\x00\x80\x3f",
             "float32 1 0 1 1"),
            # '=': this machine's order, little-endian
            ("{'descr': '=f8', 'fortran_order': False, 'shape': (1,)}", b"\x00" * 8,
             "float64 1 0 1 1"),
            ("{'descr': '<u1', 'fortran_order': False, 'shape': (2,)}", b"\x01\x02",
             "uint8 1 0 2 2"),
            ("{'descr': '|i2', 'fortran_order': False, 'shape': (1,)}", b"\x01\x02",
             "int16 1 0 1 1")):
        p = os.path.join(t, "hand.npy")
        with open(p, "wb") as f:
            f.write(make_npy(hdr, payload, (1, 0), pad=False))
        rc, outp, err = d.run("info", p)
        if rc != 0 or outp.strip() != want:
            probs.append("%r: %r %s (want %r)" % (hdr, outp.strip(), err.strip(), want))
    # Bool bytes other than 0 and 1 read as True (and are stored as 1).
    p = os.path.join(t, "b.npy")
    with open(p, "wb") as f:
        f.write(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
                         b"\x00\x02\xff\x01", (1, 0)))
    rc, outp, err = d.run("copy", p, out)
    if rc != 0 or open(out, "rb").read()[-4:] != b"\x00\x01\x01\x01":
        probs.append("bool bytes not normalised: %s" % err.strip())
    check(pre + "npy/lenient-headers", probs)


def make_npy(header, data, ver=(1, 0), pad=True, hlen=None):
    h = header.encode("latin1")
    lenfmt = "<H" if ver[0] == 1 else "<I"
    pre = 6 + 2 + struct.calcsize(lenfmt)
    if pad:
        h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    return b"\x93NUMPY" + bytes(ver) + struct.pack(lenfmt, n) + h + data


def hostile_cases(t):
    """(name, path, words): files that must be refused with those words."""
    ok_hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"
    d8 = b"\x00" * 24
    cases = []

    def f(name, content, words):
        p = os.path.join(t, "h-" + name + ".npy")
        with open(p, "wb") as fh:
            fh.write(content)
        cases.append((name, p, words))

    def hdr(name, header, words, data=d8, ver=(1, 0)):
        f(name, make_npy(header, data, ver), words)

    cases.append(("missing", os.path.join(t, "nope.npy"), "no such file"))
    os.makedirs(os.path.join(t, "adir.npy"), exist_ok=True)
    cases.append(("directory", os.path.join(t, "adir.npy"), "is a directory"))
    fifo = os.path.join(t, "fifo.npy")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    cases.append(("fifo", fifo, "not a regular file"))
    cases.append(("dev-zero", "/dev/zero", "not a regular file"))
    os.symlink("/dev/zero", os.path.join(t, "zero-link.npy")) \
        if not os.path.lexists(os.path.join(t, "zero-link.npy")) else None
    cases.append(("symlink-dev-zero", os.path.join(t, "zero-link.npy"), "not a regular file"))
    f("empty", b"", "too short")
    f("short", b"\x93NUMPY\x01", "too short")
    f("bad-magic", b"\x93NUMPX\x01\x00" + make_npy(ok_hdr, d8)[8:], "bad magic")
    f("text-file", b"hello, this is not an array at all\n", "bad magic")
    f("version-4", b"\x93NUMPY\x04\x00" + make_npy(ok_hdr, d8)[8:],
      "unsupported .npy format version 4.0")
    f("version-1.1", b"\x93NUMPY\x01\x01" + make_npy(ok_hdr, d8)[8:], "version 1.1")
    f("header-past-end", make_npy(ok_hdr, d8, hlen=65535), "runs past the end")
    f("header-past-end-v2", make_npy(ok_hdr, d8, (2, 0), hlen=0xFFFFFFFF), "runs past the end")
    f("header-past-end-v3", make_npy(ok_hdr, d8, (3, 0), hlen=0x7FFFFFFF), "runs past the end")
    big = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }" + " " * (2 << 20)
    hdr("huge-header", big, "is too large", ver=(2, 0))
    hdr("not-a-dict", "['descr', '<f8']", "not a dict")
    hdr("missing-shape", "{'descr': '<f8', 'fortran_order': False}", "'shape' is missing")
    hdr("missing-descr", "{'fortran_order': False, 'shape': (3,)}", "'descr' is missing")
    hdr("missing-order", "{'descr': '<f8', 'shape': (3,)}", "'fortran_order' is missing")
    hdr("bad-order", "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,)}",
        "True or False")
    hdr("extra-key", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}",
        "unexpected key")
    hdr("duplicate-key", "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
        "'shape': (3,)}", "appears twice")
    hdr("unterminated-string", "{'descr': '<f8, 'fortran_order': False, 'shape': (3,)}",
        "malformed header")
    hdr("unterminated-dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)",
        "malformed header")
    hdr("shape-list", "{'descr': '<f8', 'fortran_order': False, 'shape': [3]}",
        "shape must be a tuple")
    hdr("shape-float", "{'descr': '<f8', 'fortran_order': False, 'shape': (3.5,)}",
        "malformed header")
    hdr("shape-unclosed", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,}",
        "malformed header")
    hdr("trailing-junk", ok_hdr + " garbage", "unexpected text after the dict")
    hdr("escape", "{'descr': '<f\\x38', 'fortran_order': False, 'shape': (3,)}",
        "escape sequences")
    f("nul-in-header", make_npy(ok_hdr[:10] + "\0" + ok_hdr[11:], d8), "NUL byte")
    hdr("big-endian", "{'descr': '>f8', 'fortran_order': False, 'shape': (3,)}",
        "big-endian dtype '>f8' is not supported; " + SUPPORTED)
    hdr("big-endian-i4", "{'descr': '>i4', 'fortran_order': False, 'shape': (6,)}",
        "big-endian dtype '>i4'")
    hdr("object", "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}",
        "dtype '|O' (object) is not supported; " + SUPPORTED)
    hdr("unicode", "{'descr': '<U2', 'fortran_order': False, 'shape': (3,)}",
        "(unicode string) is not supported")
    hdr("bytes", "{'descr': '|S8', 'fortran_order': False, 'shape': (3,)}",
        "(byte string) is not supported")
    hdr("structured", "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,)}",
        "structured dtype (a list of fields) is not supported; " + SUPPORTED)
    hdr("void", "{'descr': '|V8', 'fortran_order': False, 'shape': (3,)}",
        "(void/structured) is not supported")
    hdr("complex256", "{'descr': '<c32', 'fortran_order': False, 'shape': (3,)}",
        "(complex256) is not supported")
    hdr("float128", "{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}", "(float128)")
    hdr("complex32", "{'descr': '<c4', 'fortran_order': False, 'shape': (3,)}", "(complex32)")
    hdr("big-endian-c8", "{'descr': '>c8', 'fortran_order': False, 'shape': (3,)}",
        "big-endian dtype '>c8' is not supported; " + SUPPORTED)
    hdr("big-endian-c16", "{'descr': '>c16', 'fortran_order': False, 'shape': (3,)}",
        "big-endian dtype '>c16'", data=b"\x00" * 48)
    hdr("uint128", "{'descr': '<u16', 'fortran_order': False, 'shape': (3,)}", "(uint128)")
    hdr("void2", "{'descr': '|V2', 'fortran_order': False, 'shape': (12,)}",
        "dtype '|V2' is raw bytes, which is how ml_dtypes saves bfloat16")
    hdr("datetime", "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,)}",
        "(datetime64)")
    hdr("empty-descr", "{'descr': '', 'fortran_order': False, 'shape': (3,)}",
        "dtype '' is not supported")
    hdr("negative-dim", "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}",
        "negative dimension (-3)")
    hdr("negative-dim-2", "{'descr': '<f8', 'fortran_order': False, 'shape': (3, -1)}",
        "negative dimension")
    hdr("overflow-dim", "{'descr': '<f8', 'fortran_order': False, "
        "'shape': (99999999999999999999999,)}", "dimension too large")
    hdr("overflow-product", "{'descr': '<f8', 'fortran_order': False, "
        "'shape': (1099511627776, 1099511627776)}", "element count overflows")
    hdr("overflow-bytes", "{'descr': '<f8', 'fortran_order': False, "
        "'shape': (4611686018427387904,)}", "byte size overflows")
    hdr("too-many-dims", "{'descr': '<f8', 'fortran_order': False, 'shape': (%s)}"
        % ("1, " * 65), "too many dimensions")
    hdr("truncated", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,)}",
        "truncated data: shape (4,) of <f8 needs 32 bytes of data but the file has 24")
    hdr("truncated-2d", "{'descr': '<i4', 'fortran_order': True, 'shape': (3, 5)}",
        "truncated data")
    hdr("extra-bytes", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}",
        "8 extra bytes after the array")
    hdr("lying-size", "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000,)}",
        "truncated data")
    hdr("lying-size-0d", "{'descr': '<f8', 'fortran_order': False, 'shape': ()}",
        "16 extra bytes")
    hdr("zero-size-with-data", "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5)}",
        "24 extra bytes")
    return cases


def test_hostile(d, pre):
    t = os.path.join(d.tmp, "hostile")
    os.makedirs(t, exist_ok=True)
    cases = hostile_cases(t)
    for name, path, words in cases:
        probs = []
        if os.path.exists(os.path.join(t, "copy-out.npy")):
            os.unlink(os.path.join(t, "copy-out.npy"))
        for cmd in ("info", "copy"):
            args = [cmd, path] + ([os.path.join(t, "copy-out.npy")] if cmd == "copy" else [])
            # Memory is capped well below what the lying shapes declare.
            rc, _, err = d.run(*args, timeout=10, mem_mb=256)
            err = err.strip()
            if rc != 1:
                probs.append("%s: rc %s: %s" % (cmd, rc, err))
            elif words not in err:
                probs.append("%s: message %r lacks %r" % (cmd, err, words))
            elif not err.startswith(path + ":"):
                probs.append("%s: message %r does not start with the file name" % (cmd, err))
        if os.path.exists(os.path.join(t, "copy-out.npy")):
            probs.append("an output file was written")
        check(pre + "npy/hostile/" + name, probs)
    # Nothing but the test's own files was left beside them.
    left = [x for x in os.listdir(t) if x.startswith(".")]
    check(pre + "npy/hostile-no-temp-files", ["left: %s" % left] if left else [])

    # Every prefix of a valid file is refused, never read past.
    probs = []
    good = os.path.join(t, "good.npy")
    np.save(good, np.arange(12, dtype=np.int32).reshape(3, 4))
    blob = open(good, "rb").read()
    cut = os.path.join(t, "cut.npy")
    for k in list(range(0, 140, 1 if not d.sanitized else 3)) + [len(blob) - 1]:
        with open(cut, "wb") as f:
            f.write(blob[:k])
        rc, _, err = d.run("info", cut, timeout=10)
        if rc != 1:
            probs.append("prefix %d: rc %s %s" % (k, rc, err.strip()))
    check(pre + "npy/hostile-every-prefix", probs)

    # Random byte flips in the header: refused or read, never a crash.
    probs = []
    rng = np.random.default_rng(3)
    for i in range(300 if not d.sanitized else 120):
        b = bytearray(blob)
        for _ in range(rng.integers(1, 4)):
            b[rng.integers(0, 128)] = rng.integers(0, 256)
        with open(cut, "wb") as f:
            f.write(bytes(b))
        rc, _, err = d.run("info", cut, timeout=10, mem_mb=256)
        if rc not in (0, 1) or (rc == 1 and not err.startswith(cut + ":")):
            probs.append("flip %d: rc %s %s" % (i, rc, err.strip()[:300]))
    check(pre + "npy/hostile-byte-flips", probs)


# ---------------------------------------------------------------- writing

def test_npy_write(d, pre):
    t = os.path.join(d.tmp, "write")
    os.makedirs(t, exist_ok=True)
    old_umask = os.umask(0o022)
    try:
        # New files get the mode a plain create gives; existing files keep theirs.
        probs = []
        p = os.path.join(t, "new.npy")
        rc, _, err = d.run("gen", "ones", "float64", 10, p)
        mode = stat.S_IMODE(os.stat(p).st_mode) if rc == 0 else None
        if mode != 0o644:
            probs.append("new file mode %s (want 0o644): %s" % (oct(mode or 0), err))
        os.chmod(p, 0o600)
        d.run("gen", "zeros", "float64", 10, p)
        if stat.S_IMODE(os.stat(p).st_mode) != 0o600:
            probs.append("existing mode not kept: %s" % oct(os.stat(p).st_mode))
        if not same(np.load(p), np.zeros(10)):
            probs.append("overwrite did not write the new data")
        check(pre + "npy/write-mode", probs)
    finally:
        os.umask(old_umask)

    def listing():
        return sorted(os.listdir(t))

    old = os.path.join(t, "old.npy")
    np.save(old, np.arange(5.0))
    before = open(old, "rb").read()

    # In place: read a file and write it back under the same name.
    probs = []
    rc, _, err = d.run("copy", old, old)
    if rc != 0 or open(old, "rb").read() != before:
        probs.append("copy onto itself: %s" % err.strip())
    check(pre + "npy/write-in-place", probs)

    cases = [
        ("no-such-dir", ["gen", "ones", "float64", 5, os.path.join(t, "nodir", "x.npy")], {},
         "cannot create a temporary file", None),
        ("shape-lies", ["badwrite", old], {}, "does not match", old),
        ("file-too-large", ["gen", "ones", "float64", 100000, old],
         {"RT_FSIZE_LIMIT": "4096"}, "write error", old),
    ]
    os.makedirs(os.path.join(t, "full.npy"), exist_ok=True)
    open(os.path.join(t, "full.npy", "keep"), "w").close()
    cases.append(("onto-directory", ["gen", "ones", "float64", 5, os.path.join(t, "full.npy")],
                  {}, "cannot replace", None))
    for name, args, env, words, target in cases:
        probs = []
        lst = listing()
        rc, _, err = d.run(*args, env=env)
        if rc != 1 or words not in err:
            probs.append("rc %s: %r (want %r)" % (rc, err.strip(), words))
        if listing() != lst:
            probs.append("directory changed: %s -> %s" % (lst, listing()))
        if target and open(target, "rb").read() != before:
            probs.append("the existing file was modified")
        if not os.path.exists(os.path.join(t, "full.npy", "keep")):
            probs.append("the directory was replaced")
        check(pre + "npy/write-fails-cleanly/" + name, probs)


# ---------------------------------------------------------------- printing

def np_scalar_text(x):
    """NumPy's scalar str ("2.0", "1e+20")."""
    return str(x)


def np_elem_text(x, sci):
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    if sci:
        return np.format_float_scientific(x, unique=True, trim=".")
    return np.format_float_positional(x, unique=True, trim=".")


def np_array_text(a):
    """The runtime's spelling of a 1-D array, built from NumPy's pieces:
    NumPy decides exponent or not (array2string), NumPy gives the digits."""
    n = a.size
    shown = list(range(n)) if n <= 1000 else [0, 1, 2, n - 3, n - 2, n - 1]
    if a.dtype.kind == "b":
        parts = ["True" if v else "False" for v in a[shown]]
    elif a.dtype.kind in "iu":
        parts = [str(int(v)) for v in a[shown]]
    elif a.dtype.kind == "V":  # bfloat16: each as ml_dtypes prints it
        parts = [str(v) for v in a[shown]]
    elif a.dtype.kind == "c":
        # NumPy's ComplexFloatingFormat: the real parts choose their form
        # together, the imaginary parts theirs; "+nan" for any NaN.
        sr, si = (("e" in np.array2string(p, threshold=1000).replace("inf", ""))
                  for p in (a.real, a.imag))
        parts = []
        for v in a[shown]:
            im = "+nan" if np.isnan(v.imag) else np_elem_text(v.imag, si)
            parts.append(np_elem_text(v.real, sr) + ("" if im[0] in "+-" else "+") + im + "j")
    else:
        sci = "e" in np.array2string(a, threshold=1000).replace("inf", "")
        parts = [np_elem_text(v, sci) for v in a[shown]]
    if n > 1000:
        parts = parts[:3] + ["..."] + parts[3:]
    return "[" + " ".join(parts) + "]"


def test_format(d, pre):
    t = os.path.join(d.tmp, "fmt")
    os.makedirs(t, exist_ok=True)
    p = os.path.join(t, "a.npy")

    def fmt(a):
        np.save(p, a)
        rc, outp, err = d.run("format", p, env=NAMED.get(a.dtype.name))
        return outp.rstrip("\n") if rc == 0 else "error rc %s: %s" % (rc, err.strip())

    f32, f64 = np.float32, np.float64
    rs = np.random.RandomState(1)
    fixed = [
        (np.exp(rs.randn(5).astype(f32)), "[5.0750957 0.5423974 0.58968204 0.34199178 2.3759744]"),
        (np.arange(10, dtype=np.int32), "[0 1 2 3 4 5 6 7 8 9]"),
        (np.arange(2000, dtype=np.int64), "[0 1 2 ... 1997 1998 1999]"),
        (np.array([True, False, True]), "[True False True]"),
        (np.array([np.nan, np.inf, -np.inf, -0.0, 2.0]), "[nan inf -inf -0. 2.]"),
        (np.array([1e-5, 1.0]), "[1.e-05 1.e+00]"),
        (np.array([0.0, 1e-5]), "[0.e+00 1.e-05]"),
        (np.array([1e20]), "[1.e+20]"),
        (np.array([0.1, 0.3]), "[0.1 0.3]"),
        (np.array([0.1 + 0.2]), "[0.30000000000000004]"),
        (np.array([1e-4], f32), "[0.0001]"),
        (np.array([1e-4], f64), "[0.0001]"),
        (np.array([1, 1000.0001], f32), "[1.e+00 1.0000001e+03]"),
        (np.array([], f64), "[]"),
        (np.array([], np.int32), "[]"),
        (np.arange(1001, dtype=f64), "[0. 1. 2. ... 998. 999. 1000.]"),
        (np.array([-1.5, 2.25]), "[-1.5 2.25]"),
        (np.array([0.1], f32), "[0.1]"),
        (np.array([1 / 3]), "[0.3333333333333333]"),
        (np.array([1 / 3], f32), "[0.33333334]"),
        (np.array([5e-324]), "[5.e-324]"),
        (np.array([1e-45], f32), "[1.e-45]"),
        (np.array([np.finfo(f64).max]), "[1.7976931348623157e+308]"),
        (np.array([np.finfo(f32).max], f32), "[3.4028235e+38]"),
        (np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]),
         "[-9223372036854775808 9223372036854775807]"),
        (np.array([np.iinfo(np.int32).min], np.int32), "[-2147483648]"),
        (np.array([99999999.0, 1.0]), "[9.9999999e+07 1.e+00]"),
        (np.array([99999999.0]), "[99999999.]"),
        (np.array([np.nan, 1e-5]), "[nan 1.e-05]"),
        (np.array([-0.0, 5.0]), "[-0. 5.]"),
        (np.array([-0.0, 1e-9]), "[-0.e+00 1.e-09]"),
        (np.array([np.nan]), "[nan]"),
        (np.array([123456.5, 1000.0]), "[123456.5 1000.]"),
        (np.array([2.0**53 + 2]), "[9.007199254740994e+15]"),
        (np.array([1e7], f32), "[1.e+07]"),  # float32 switches at 1e6 (NumPy 2.3)
        (np.array([999999.0], f32), "[999999.]"),
        (np.array([1e7, 1e5]), "[10000000. 100000.]"),
        (np.array([1, 2, 3], np.uint8), "[1 2 3]"),
        (np.array([2**64 - 1, 0], np.uint64), "[18446744073709551615 0]"),
        (np.array([2**32 - 1], np.uint32), "[4294967295]"),
        (np.array([-128, 127], np.int8), "[-128 127]"),
        (np.array([-32768, 65535 // 2], np.int16), "[-32768 32767]"),
        (np.array([65535], np.uint16), "[65535]"),
        (np.array([0.1, 1 / 3, 2], np.float16), "[0.1 0.3333 2.]"),
        (np.array([1000], np.float16), "[1.e+03]"),
        (np.array([999], np.float16), "[999.]"),
        (np.array([65504, 6e-8], np.float16), "[6.55e+04 6.e-08]"),
        (np.array([1e-4, 1e-3], np.float16), "[0.0001 0.001]"),
        (np.array([np.nan, -np.inf, -0.0], np.float16), "[nan -inf -0.]"),
    ]
    if "bfloat16" in DTYPES:
        fixed.append((np.array([0.1, 1 / 3, 2, -0.0, np.nan, 3e38, 1e-5, 123456],
                               NPDT["bfloat16"]),
                      "[0.100098 0.333984 2 -0 nan 3.00406e+38 1.00136e-05 123392]"))
    c64, c128 = np.complex64, np.complex128
    nan, inf = np.nan, np.inf
    fixed += [
        (np.array([1 + 2j, 3 - 4j], c128), "[1.+2.j 3.-4.j]"),
        (np.array([complex(nan, nan), complex(-0.0, -0.0), complex(inf, -inf)], c128),
         "[nan+nanj -0.-0.j inf-infj]"),
        (np.array([complex(1, nan), complex(-nan, 1), complex(-inf, inf)], c64),
         "[1.+nanj nan+1.j -inf+infj]"),
        (np.array([1 / 3 + 0.1j], c128), "[0.3333333333333333+0.1j]"),
        (np.array([1 / 3 + 0.1j], c64), "[0.33333334+0.1j]"),
        (np.array([1.5e20 + 1j, 1 + 1j], c128), "[1.5e+20+1.j 1.e+00+1.j]"),
        (np.array([1 + 1e-5j, 2 + 3j], c128), "[1.+1.e-05j 2.+3.e+00j]"),
        (np.array([1e7 + 1j], c64), "[1.e+07+1.j]"),  # float32's parts switch at 1e6
        (np.array([1e7 + 1j], c128), "[10000000.+1.j]"),
        (np.array([0j, complex(0, -0.5)], c64), "[0.+0.j 0.-0.5j]"),
        (np.array([], c128), "[]"),
        (np.arange(1001).astype(c128) * (1 + 1j), "[0.+0.j 1.+1.j 2.+2.j ... 998.+998.j "
         "999.+999.j 1000.+1000.j]"),
    ]
    probs = []
    for a, want in fixed:
        if a.dtype.kind == "c" and "e" not in want.replace("inf", ""):
            # Positional, NumPy's own text is ours but for its padding.
            np_text = np.array2string(a, floatmode="unique", threshold=1000,
                                      max_line_width=1 << 30).replace(" ", "")
            if np_text != want.replace(" ", ""):
                probs.append("self-check: NumPy prints %r for %r" % (np_text, want))
        got = fmt(a)
        if got != want:
            probs.append("%s %s: got %r, want %r" % (a.dtype, a[:4], got, want))
        # The expected text also agrees with NumPy's own pieces.
        if np_array_text(a) != want:
            probs.append("self-check: NumPy pieces give %r for %r" % (np_array_text(a), want))
    check(pre + "format/fixed", probs)

    # ones + 1 over 10M elements, made by the generator.
    rc, _, err = d.run("gen", "full:2", "float64", 10000000, p)
    rc2, outp, err2 = d.run("format", p) if rc == 0 else (rc, "", err)
    check(pre + "format/ten-million-twos",
          [] if outp.strip() == "[2. 2. 2. ... 2. 2. 2.]" else ["got %r %s" % (outp, err2)])

    # Random arrays: layout and exponent choice as NumPy, digits as NumPy's.
    probs = []
    rng = np.random.default_rng(11)
    for i in range(120 if not d.sanitized else 40):
        dt = [f32, f64][i % 2]
        n = int(rng.choice([1, 2, 3, 5, 8, 1000, 1001, 1500]))
        scale = 10.0 ** rng.integers(-12, 12, n) if i % 3 else 10.0 ** rng.integers(-2, 4)
        a = (rng.standard_normal(n) * scale).astype(dt)
        if i % 5 == 0:
            a[rng.integers(0, n)] = [np.nan, np.inf, -np.inf, 0.0, -0.0][i % 5]
        got, want = fmt(a), np_array_text(a)
        if got != want:
            probs.append("%s n=%d: got %r, want %r" % (dt.__name__, n, got[:200], want[:200]))
    for dt in FLOATS:
        if NPDT[dt].itemsize != 2:
            continue
        for i in range(60 if not d.sanitized else 20):
            n = int(rng.choice([1, 2, 3, 5, 8, 1000, 1001]))
            scale = 10.0 ** rng.integers(-8, 5, n) if i % 3 else 10.0 ** rng.integers(-2, 3)
            a = (rng.standard_normal(n) * scale).astype(NPDT[dt])
            if i % 5 == 0:
                a[rng.integers(0, n)] = [np.nan, np.inf, -np.inf, 0.0, -0.0][i % 5]
            got, want = fmt(a), np_array_text(a)
            if got != want:
                probs.append("%s n=%d: got %r, want %r" % (dt, n, got[:200], want[:200]))
    for dtype in ["bool"] + INTS:
        for n in (0, 1, 4, 1000, 1001):
            a = sample(dtype, (n,), rng)
            got, want = fmt(a), np_array_text(a)
            if got != want:
                probs.append("%s n=%d: got %r, want %r" % (dtype, n, got[:200], want[:200]))
    for dt in COMPLEX:
        for i in range(80 if not d.sanitized else 20):
            n = int(rng.choice([1, 2, 3, 5, 8, 1000, 1001, 1500]))
            a = np.empty(n, NPDT[dt])
            for part in ("real", "imag"):  # each part its own scale
                k = rng.integers(0, 4)
                scale = (10.0 ** rng.integers(-12, 12, n) if k == 0 else
                         10.0 ** rng.integers(-2, 4) if k == 1 else 10.0 ** rng.integers(-4, 9))
                setattr(a, part, rng.standard_normal(n) * scale * (k != 3))
            if i % 4 == 0:
                a[rng.integers(0, n)] = complex(*rng.choice([nan, inf, -inf, 0.0, -0.0], 2))
            got, want = fmt(a), np_array_text(a)
            if got != want:
                probs.append("%s n=%d: got %r, want %r" % (dt, n, got[:200], want[:200]))
    check(pre + "format/random-arrays", probs)

    # format_value, one element at a time, against NumPy's scalar str: random
    # bit patterns, every power of two (where shortest digits are hardest),
    # and the thresholds of exponent notation.
    for dt, ut, pows in ((f64, np.uint64, range(-1074, 1024)),
                         (f32, np.uint32, range(-149, 128))):
        rng = np.random.default_rng(5)
        bits = rng.integers(0, np.iinfo(ut).max, 3000 if not d.sanitized else 500,
                            dtype=ut, endpoint=True)
        vals = bits.view(dt)
        vals = vals[np.isfinite(vals)]
        twos = np.array([2.0 ** k for k in pows], dtype=np.float64).astype(dt)
        edges = np.array([1e-4, 9.9999e-5, 1e6, 999999.94, 1e16, 9999999999999998.0, 1e15, 1e8,
                          0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -2.5, 123.0,
                          np.finfo(dt).tiny, np.finfo(dt).max, np.finfo(dt).smallest_subnormal],
                         dtype=np.float64).astype(dt)
        small = (rng.standard_normal(1000) * 10.0 ** rng.integers(-6, 8, 1000)).astype(dt)
        every = np.concatenate([vals, twos, -twos, edges, small])
        np.save(p, every)
        rc, outp, err = d.run("values", p)
        got = outp.split("\n")[:-1] if rc == 0 else []
        probs = [] if rc == 0 else ["rc %s: %s" % (rc, err.strip())]
        if rc == 0 and len(got) != every.size:
            probs.append("%d lines for %d values" % (len(got), every.size))
        for x, g in zip(every, got):
            w = np_scalar_text(x)
            if g != w:
                probs.append("%r: got %r, want %r" % (x, g, w))
        check(pre + "format/values-" + dt.__name__, probs)

    # Complex values, one at a time, against NumPy's str of the complex
    # scalar: "(1+2j)", "2j", "(nan+nanj)", each part with the exponent rule
    # of a scalar of its part type.
    for dt in COMPLEX:
        part, ut = (f32, np.uint32) if NPDT[dt].itemsize == 8 else (f64, np.uint64)
        rng = np.random.default_rng(6)
        bits = rng.integers(0, np.iinfo(ut).max, (1000 if not d.sanitized else 200, 2),
                            dtype=ut, endpoint=True)
        vals = bits.view(part)
        edges = np.array([0.0, -0.0, nan, -nan, inf, -inf, 1.0, -2.5, 1e-4, 9.9999e-5, 1e6,
                          999999.94, 1e16, 1e15, 1e20, 1 / 3, np.finfo(part).max,
                          np.finfo(part).smallest_subnormal], dtype=np.float64).astype(part)
        grid = np.array(np.meshgrid(edges, edges)).reshape(2, -1).T
        small = (rng.standard_normal((1000, 2)) * 10.0 ** rng.integers(-6, 18, (1000, 2)))
        every = np.concatenate([vals, grid, small.astype(part)])
        z = np.ascontiguousarray(every).view(NPDT[dt]).reshape(-1)
        np.save(p, z)
        rc, outp, err = d.run("values", p)
        got = outp.split("\n")[:-1] if rc == 0 else []
        probs = [] if rc == 0 else ["rc %s: %s" % (rc, err.strip())]
        if rc == 0 and len(got) != z.size:
            probs.append("%d lines for %d values" % (len(got), z.size))
        for x, g in zip(z, got):
            if g != str(x):
                probs.append("%r: got %r, want %r" % (x, g, str(x)))
        check(pre + "format/values-" + dt, probs)

    # Every value of the 16-bit types, each as NumPy's (float16) or
    # ml_dtypes' (bfloat16) scalar str.
    for dt in FLOATS:
        if NPDT[dt].itemsize != 2:
            continue
        every = np.arange(0, 65536, 1 if not d.sanitized else 7).astype(np.uint16).view(NPDT[dt])
        np.save(p, every)
        rc, outp, err = d.run("values", p, env=NAMED.get(dt))
        got = outp.split("\n")[:-1] if rc == 0 else []
        probs = [] if rc == 0 else ["rc %s: %s" % (rc, err.strip())]
        if rc == 0 and len(got) != every.size:
            probs.append("%d lines for %d values" % (len(got), every.size))
        for x, g in zip(every, got):
            w = np_scalar_text(x)
            if g != w:
                probs.append("%s: got %r, want %r" % (hex(int(np.array(x).view(np.uint16))), g, w))
        check(pre + "format/values-" + dt, probs)

    probs = []
    for a, want in ((np.array([True, False]), ["True", "False"]),
                    (np.array([-7, 0, 2147483647], np.int32), ["-7", "0", "2147483647"]),
                    (np.array([-2**63], np.int64), ["-9223372036854775808"]),
                    (np.array([1e20, 1.5e-7, 2.0, -0.0, 1e16, 1e15]),
                     ["1e+20", "1.5e-07", "2.0", "-0.0", "1e+16", "1000000000000000.0"]),
                    (np.array([1e6, 999999.0, 1e-4, 0.00011], f32),
                     ["1e+06", "999999.0", "1e-04", "0.00011"]),
                    (np.array([2**64 - 1], np.uint64), ["18446744073709551615"]),
                    (np.array([-1], np.int8), ["-1"]),
                    (np.array([1000, 999, 1e-4, 9e-5, 1 / 3], np.float16),
                     ["1e+03", "999.0", "0.0001", "9e-05", "0.3333"])):
        np.save(p, a)
        rc, outp, err = d.run("values", p)
        if rc != 0 or outp.split("\n")[:-1] != want:
            probs.append("%s: got %r, want %r %s" % (a, outp.split("\n")[:-1], want, err))
    check(pre + "format/values-fixed", probs)


# ---------------------------------------------------------------- main

def main():
    tmp = tempfile.mkdtemp(prefix="jitc-t-runtime-")
    try:
        exe, msg = build(tmp, "runtime_driver", ["-O2"])
        if not exe:
            fail("runtime/build", msg.strip().splitlines()[-1] if msg else "build failed")
            print(msg)
            return 1
        check("runtime/build-no-warnings", [msg] if msg else [])
        sexe, smsg = build(tmp, "runtime_driver_san", SAN)
        # Over a sanitized library (make test SAN=1) the plain driver's own
        # code is still uninstrumented: its runs would repeat the plain
        # suite's, so only the sanitized driver runs.
        drivers = [] if SANITIZED_LIB and sexe else [
            (Driver(exe, SANITIZED_LIB, os.path.join(tmp, "plain")), "")]
        if sexe:
            # A sanitizer build that cannot run here (no ASan runtime) is a skip.
            probe = Driver(sexe, True, tmp).run("time")
            if probe[0] == 0:
                drivers.append((Driver(sexe, True, os.path.join(tmp, "san")), "asan/"))
            else:
                print("skip asan: the sanitized driver does not run: %s" % probe[2][:300])
        else:
            print("skip asan: cannot build with -fsanitize=address,undefined: %s"
                  % smsg.strip()[-300:])
        for d, pre in drivers:
            os.makedirs(d.tmp, exist_ok=True)
            # Next to the plain driver, the sanitized one runs what reads
            # files (where memory errors would be); make test SAN=1 runs it
            # on everything.
            whole = not pre or SANITIZED_LIB
            if whole:
                test_generators(d, pre)
            test_npy_roundtrip(d, pre)
            test_npy_write(d, pre)
            test_hostile(d, pre)
            if whole:
                test_format(d, pre)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
