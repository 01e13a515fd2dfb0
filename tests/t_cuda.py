#!/usr/bin/env python3
"""t_cuda.py -- the cuda target, with or without a GPU.

Without a GPU (CI), NVRTC compiles the CUDA C that jitc emits for every
operator and function of src/ops.h in every dtype it accepts, for every cast,
and for programs with awkward names, scalars and mixed types; each compile
must be clean (no NVRTC warning).  It also checks what the options change in
the PTX (--fmad=false by default, --use_fast_math with --fast-math) and that
a missing driver is reported with exit 69.  With a GPU, a few programs run
and are compared with NumPy; without one those cases print "skip".
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

JITC = os.environ.get("JITC", "build/jitc")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
NP = {"bool": np.bool_, "int32": np.int32, "int64": np.int64,
      "float32": np.float32, "float64": np.float64}


def jitc(*args, env=None):
    e = dict(os.environ)
    e.setdefault("JITC_CACHE_DIR", tempfile.mkdtemp(prefix="jitc-cache-"))
    if env:
        e.update(env)
    p = subprocess.run([JITC, *args], capture_output=True, text=True, env=e)
    return p.returncode, p.stdout, p.stderr


def ok(name):
    print("ok " + name)


def fail(name, why):
    print("FAIL %s: %s" % (name, why))


def skip(name, why):
    print("skip %s: %s" % (name, why))


def ops_table():
    """(id, name, arity) of every OP row of src/ops.h but the reductions
    (t_reduce.py tests those) and the functions of complex numbers (real,
    imag, conjugate, angle, complex: the complex group's)."""
    text = open(os.path.join(ROOT, "src", "ops.h")).read()
    cplx = set(re.findall(r'^OP\((\w+),.*\bR_(?:PART|CONJ|ANGLE|COMPLEX)\b', text, re.M))
    return [(i, n, a) for i, n, k, a in
            re.findall(r'^OP\((\w+),\s*"([^"]*)",\s*(\w+),\s*(\d)', text, re.M)
            if k != "REDUCE" and i not in cplx]


def plain_ops_table():
    """ops_table() less ldexp and the functions of two results, whose mixed
    types tests/t_mixed_fns.py covers."""
    text = open(os.path.join(ROOT, "src", "ops.h")).read()
    mixed = set(re.findall(r'^OP\((\w+),.*(?:\bF_TWO\b|\bF_SECOND\b|\bR_LDEXP\b)', text, re.M))
    return [row for row in ops_table() if row[0] not in mixed]


def two_results():
    """The functions of two results (F_TWO rows of src/ops.h)."""
    text = open(os.path.join(ROOT, "src", "ops.h")).read()
    return set(re.findall(r'^OP\(\w+,\s*"(\w+)",.*\bF_TWO\b', text, re.M))


TWO = two_results()


def assign(out, expr):
    """The statement storing expr in `out` (and a function of two results'
    second result in `out`_2)."""
    if expr.split("(")[0] in TWO:
        return "%s, %s_2 = %s" % (out, out, expr)
    return "%s = %s" % (out, expr)


BINOP = {"ADD": "+", "SUB": "-", "MUL": "*", "DIV": "/", "FLOORDIV": "//", "MOD": "%",
         "POW": "**", "AND": "&", "OR": "|", "XOR": "^", "SHL": "<<", "SHR": ">>",
         "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "EQ": "==", "NE": "!="}


def op_exprs(opid, name, arity):
    """Source expressions over arrays a, b, c using the op."""
    if opid in BINOP:
        return ["a %s b" % BINOP[opid]]
    if opid == "NEG":
        return ["-a"]
    if opid == "INVERT":
        return ["~a"]
    if opid == "CAST":
        return ["%s(a)" % t for t in DTYPES]
    if opid == "WHERE":
        return ["where(a, b, c)"]
    if opid == "LDEXP":
        return ["ldexp(a, i32(b))"]
    if "." in name:  # the second result of a function of two results
        return ["%s(a)" % name.split(".")[0]]
    return ["%s(%s)" % (name, ", ".join("abc"[:int(arity)]))]


def valid(expr, dtype):
    rc, _, _ = jitc("-t", "cuda", "--emit", "types", "--dtype", dtype, assign("o", expr))
    return rc == 0


def main():
    if not os.path.exists(JITC):
        fail("cuda_setup", "%s not built" % JITC)
        return

    # A missing driver (or GPU) is exit 69 with a message naming it.
    rc, out, err = jitc("-t", "cuda", "-n", "3", "-q", "a[i] += 1")
    gpu = rc == 0
    if rc == 69:
        if re.search(r"no CUDA driver|no CUDA device|NVRTC not found|CUDA driver", err):
            ok("cuda_unavailable_message")
        else:
            fail("cuda_unavailable_message", "exit 69 without a clear reason: %r" % err)
    elif rc != 0:
        fail("cuda_unavailable_message", "exit %d: %s" % (rc, err.strip()))
    else:
        ok("cuda_available")

    # A driver that is not there, named explicitly: still 69, and says so.
    rc, _, err = jitc("-t", "cuda", "-n", "3", "a[i] += 1",
                      env={"JITC_LIBCUDA": "/nonexistent/libcuda.so.1"})
    if rc == 69 and "no CUDA driver" in err:
        ok("cuda_no_driver_exit69")
    else:
        fail("cuda_no_driver_exit69", "exit %d: %r" % (rc, err))

    rc, ptx, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "a[i] += 1")
    if rc == 69:
        skip("cuda_nvrtc", "NVRTC not found here: " + err.strip())
        return
    if rc != 0 or ".entry jitc_k32" not in ptx:
        fail("cuda_emit_ptx", "exit %d: %s" % (rc, err.strip()))
        return
    ok("cuda_emit_ptx")

    rc, _, err = jitc("-t", "cuda", "--emit", "ptx", "a[i] += 1",
                      env={"JITC_LIBNVRTC": "/nonexistent/libnvrtc.so"})
    if rc == 69 and "NVRTC not found" in err:
        ok("cuda_no_nvrtc_exit69")
    else:
        fail("cuda_no_nvrtc_exit69", "exit %d: %r" % (rc, err))

    # Every op in every dtype it accepts: one program per dtype, one
    # statement per (op, form), compiled by NVRTC.
    covered = set()
    table = ops_table()
    for dt in DTYPES:
        stmts, ids = [], []
        for opid, name, arity in table:
            for e in op_exprs(opid, name, arity):
                if valid(e, dt):
                    stmts.append(assign("o%d" % len(stmts), e))
                    ids.append(opid)
        prog = "\n".join(stmts)
        rc, src, err = jitc("-t", "cuda", "--emit", "cuda", "--dtype", dt, prog)
        if rc != 0:
            fail("cuda_emit_" + dt, "exit %d: %s" % (rc, err.strip()[:2000]))
            continue
        if "#include" in src:
            fail("cuda_emit_" + dt, "the CUDA C includes a header")
            continue
        rc, ptx, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--dtype", dt, prog)
        warns = [l for l in ptx.splitlines() if l.startswith("// nvrtc:")]
        if rc != 0:
            fail("cuda_nvrtc_" + dt, "exit %d: %s" % (rc, err.strip()[:3000]))
        elif warns:
            fail("cuda_nvrtc_" + dt, "NVRTC warned:\n" + "\n".join(warns[:20]))
        else:
            covered.update(ids)
            ok("cuda_nvrtc_%s (%d ops)" % (dt, len(stmts)))
    missing = [o for o, _, _ in table if o not in covered]
    if missing:
        fail("cuda_nvrtc_coverage", "ops never compiled: " + ", ".join(missing))
    else:
        ok("cuda_nvrtc_coverage (%d ops)" % len(table))

    # A program large enough to be split into several kernels (cuda/plan.c),
    # with `//` of floats in its first group alone: the other groups declare
    # no remainder variable of jitc_divmod (NVRTC warns of one set and never
    # read).  Not from the cache: a cached image carries no warnings.
    prog = "q = a // b\n" + "\n".join("o%d = a + %d" % (k, k) for k in range(300))
    rc, ptx, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--no-cache",
                        "--dtype", "float32", prog)
    warns = [l for l in ptx.splitlines() if l.startswith("// nvrtc:")]
    rc2, src, _ = jitc("-t", "cuda", "--emit", "cuda", "--dtype", "float32", prog)
    if rc == 0 and rc2 == 0 and src.count("// Group ") > 1 and not warns:
        ok("cuda_nvrtc_split_divmod")
    else:
        fail("cuda_nvrtc_split_divmod", "exit %d, %d groups: %s %s" % (
            rc, src.count("// Group "), err.strip()[:500], warns[:5]))

    # Mixed dtypes (promotion inserts casts), typed and weak scalars,
    # constants that need care (NaN, inf, -0.0, extremes), and `i`.
    with tempfile.TemporaryDirectory() as d:
        ins = []
        for k, dt in enumerate(DTYPES):
            path = os.path.join(d, "%s.npy" % dt)
            np.save(path, np.arange(7).astype(NP[dt]))
            ins += ["--in", "%s%d=%s" % (dt[0], k, path)]
        prog = ("x = b0 + i1 + i2 + f3 + f4\n"
                "y = f3 * alpha + beta\n"
                "z = where(b0, i1, f3) + i\n"
                "w = f3 + nan + inf - (-0.0) + 3.4028234663852886e38 + 1e-45\n"
                "v = i2 + 9223372036854775807 + (-9223372036854775807 - 1) + i1 // -2147483648\n"
                "u = f4 * 0.1 + f3 * 0.1 + f4 * 1e308 + f4 * 5e-324")
        args = ins + ["-D", "alpha=2.5", "-D", "beta=3:i64", prog]
        rc, ptx, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", *args)
        if rc == 0 and not any(l.startswith("// nvrtc:") for l in ptx.splitlines()):
            ok("cuda_nvrtc_mixed")
        else:
            fail("cuda_nvrtc_mixed", "exit %d: %s %s" % (rc, err.strip()[:2000],
                                                         [l for l in ptx.splitlines() if "nvrtc" in l][:5]))
        rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args)
        if rc == 0 and "0.1f" in src and re.search(r"\b0\.1[ ;]", src):
            ok("cuda_constants_readable")
        else:
            fail("cuda_constants_readable", "no 0.1f / 0.1 literal in:\n" + src[-1500:])

    # Names that are C or CUDA words, or look like the generated names.
    names = ["int", "float", "threadIdx", "__global__", "x0", "a1", "v0", "t0", "p0",
             "jitc_elem", "n", "vec", "blockDim", "double", "return", "main"]
    prog = "%s = %s" % (names[0], " + ".join(names[1:]))
    rc, ptx, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", prog)
    if rc == 0 and "// nvrtc:" not in ptx:
        ok("cuda_name_mangling")
    elif rc == 65:
        skip("cuda_name_mangling", "the front end refuses one of the names: " + err.strip()[:200])
    else:
        fail("cuda_name_mangling", "exit %d: %s" % (rc, err.strip()[:2000]))

    # --fmad=false by default: a*b+c stays two roundings; fast math fuses.
    prog = "d = a * b + c"
    _, p1, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", prog)
    _, p2, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--fast-math", prog)
    if "fma.rn.f64" not in p1 and "mul.rn.f64" in p1 and "fma.rn.f64" in p2:
        ok("cuda_fmad_off_by_default")
    else:
        fail("cuda_fmad_off_by_default", "default has fma: %s; fast math has fma: %s"
             % ("fma.rn.f64" in p1, "fma.rn.f64" in p2))
    _, p1, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--dtype", "f32", "b = exp(a) / a")
    _, p2, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--dtype", "f32",
                    "--fast-math", "b = exp(a) / a")
    # Precise: IEEE division.  Fast: approximate division, flushing denormals.
    if "div.rn.f32" in p1 and "div.rn.f32" not in p2 and re.search(r"div\.(approx|full)\.ftz", p2):
        ok("cuda_fast_math_option")
    else:
        fail("cuda_fast_math_option", "precise div.rn: %s; fast: %s"
             % ("div.rn.f32" in p1, re.findall(r"div\.\S+", p2)[:4]))

    # --arch picks the PTX target; a bad one is a usage error.
    rc, ptx, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_80", "a[i] += 1")
    if rc == 0 and re.search(r"^\.target sm_80", ptx, re.M):
        ok("cuda_arch_option")
    else:
        fail("cuda_arch_option", "exit %d, target line %r" % (rc, re.findall(r"\.target.*", ptx)))
    rc, _, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_9x", "a[i] += 1")
    if rc == 64:
        ok("cuda_bad_arch")
    else:
        fail("cuda_bad_arch", "exit %d: %s" % (rc, err.strip()))

    # The 16-byte vector path: V elements per step by the widest dtype.
    _, src, _ = jitc("-t", "cuda", "--emit", "cuda", "--dtype", "f32", "b = exp(a)")
    _, ptx, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "--dtype", "f32", "b = exp(a)")
    if "jitc_vec<f32, 4>" in src and "ld.global.nc.v4.f32" in ptx or "ld.global.nc.v4.u32" in ptx:
        ok("cuda_vector_loads")
    else:
        fail("cuda_vector_loads", "no 16-byte loads: %s" % re.findall(r"ld\.global\S*", ptx)[:8])

    # The environment reaches the target through the context: the vector
    # width (JITC_CUDA_VBYTES) and one more NVRTC option (JITC_NVRTC_EXTRA).
    _, src, _ = jitc("-t", "cuda", "--emit", "cuda", "--dtype", "f32", "b = exp(a)",
                     env={"JITC_CUDA_VBYTES": "8"})
    if "jitc_vec<f32, 2>" in src and "jitc_vec<f32, 4>" not in src:
        ok("cuda_env_vbytes")
    else:
        fail("cuda_env_vbytes", "vector types %s" % sorted(set(re.findall(r"jitc_vec<\w+, \d+>", src))))
    _, p1, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "a[i] += 1")
    _, p2, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "a[i] += 1",
                    env={"JITC_NVRTC_EXTRA": "-lineinfo"})
    if ".loc" not in p1 and ".loc" in p2:
        ok("cuda_env_nvrtc_extra")
    else:
        fail("cuda_env_nvrtc_extra", "line info without the option: %s, with: %s"
             % (".loc" in p1, ".loc" in p2))

    # Every function with a C library name in ops.h (the LIBM column) calls
    # that function on floats (float32: its f twin), unless the target has a
    # helper of its own for it (jitc_*), which must then be the only call.
    rows = re.findall(r'^OP\((\w+),\s*"([^"]*)",\s*FUNCTION,\s*(\d),[^,]*,[^,]*,[^,]*,\s*(\w+),',
                      open(os.path.join(ROOT, "src", "ops.h")).read(), re.M)
    bad = []
    for opid, name, arity, libm in rows:
        if libm == "NOLIB":
            continue
        for dt, sfx in (("float32", "f"), ("float64", "")):
            e = "o = %s(%s)" % (name, ", ".join("abc"[:int(arity)]))
            rc, src, err = jitc("-t", "cuda", "--emit", "cuda", "--dtype", dt, e)
            body = src[src.find("void jitc_elem("):]
            body = body[:body.find("\n}\n")]
            call = re.search(r"\b%s%s\(" % (libm, sfx), body)
            helper = re.search(r"\bjitc_(?!nanarg)\w+_f(32|64)\(", body)
            if rc != 0 or not (call or helper):
                bad.append("%s %s: %s" % (name, dt, (err.strip() or body)[-300:]))
    if bad:
        fail("cuda_libm_from_table", "; ".join(bad[:5]))
    else:
        ok("cuda_libm_from_table (%d functions)" % sum(r[3] != "NOLIB" for r in rows))

    # Execution, where a GPU is present.
    if not gpu:
        skip("cuda_run_exp", "no GPU here")
        skip("cuda_run_int_edges", "no GPU here")
        return
    rc, out, err = jitc("-t", "cuda", "-n", "5", "--dtype", "f32", "--in", "a=randn:1", "exp(a)")
    want = np.exp(np.random.RandomState(1).randn(5).astype(np.float32))
    m = re.search(r"\[([^\]]*)\]", out)
    got = np.array([float(x) for x in m.group(1).split()], dtype=np.float32) if m else None
    if rc == 0 and got is not None and got.shape == want.shape and \
            np.all(np.abs(got.view(np.int32) - want.view(np.int32)) <= 2):
        ok("cuda_run_exp")
    else:
        fail("cuda_run_exp", "exit %d: %s %s" % (rc, out.strip()[-300:], err.strip()))
    with tempfile.TemporaryDirectory() as d:
        a = np.array([7, -7, 0, -2**31, 2**31 - 1, 5, -1], dtype=np.int32)
        b = np.array([2, 2, 0, -1, 0, 40, -3], dtype=np.int32)
        np.save(os.path.join(d, "a.npy"), a)
        np.save(os.path.join(d, "b.npy"), b)
        o = os.path.join(d, "o.npy")
        rc, out, err = jitc("-t", "cuda", "-q", "--in", "a=" + os.path.join(d, "a.npy"),
                            "--in", "b=" + os.path.join(d, "b.npy"), "--out", "o=" + o,
                            "o = (a // b) + (a % b) * 3 + (a << b) - (a >> b)")
        with np.errstate(all="ignore"):
            fd = np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b)))
            md = np.where(b == 0, 0, np.remainder(a, np.where(b == 0, 1, b)))
            sh = np.where((b >= 0) & (b < 32), np.left_shift(a, np.clip(b, 0, 31)), 0)
            sr = np.where((b >= 0) & (b < 32), np.right_shift(a, np.clip(b, 0, 31)),
                          np.where(a < 0, -1, 0))
            want = (fd + md * 3 + sh - sr).astype(np.int32)
        if rc == 0 and np.array_equal(np.load(o), want):
            ok("cuda_run_int_edges")
        else:
            fail("cuda_run_int_edges", "exit %d: %s got %s want %s" % (
                rc, err.strip(), np.load(o) if os.path.exists(o) else None, want))


if __name__ == "__main__":
    main()
