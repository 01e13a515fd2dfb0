#!/usr/bin/env python3
"""t_cuda_nd.py -- the cuda kernels for device arrays of any strides
(jitc_run_device_arrays), without a GPU.

A run over device arrays that are not all one contiguous run compiles the
kernel of their pattern (src/cuda/access.c): the axes of the coalesced
shape, the index's width, and per array contiguous (c), broadcast along the
inner axis (b) or strided (s).  $JITC_CUDA_PATTERN asks --emit for the
kernel of a pattern, so that here:

- NVRTC compiles, without a warning, the kernels of many patterns of
  element-wise programs, programs updating in place, programs with
  reductions, a program large enough to be split into several kernels, and
  complex, float16 and int8 programs;
- a pattern of contiguous arrays alone gives exactly the kernel of a run
  over contiguous arrays, and no pattern at all does too;
- the text of a pattern's kernel reaches a strided array through its offset,
  drops the inner term of a broadcast one, keeps vector accesses for a
  contiguous one, and takes the shape and strides as its last parameter;
- a pattern that is not one, or does not fit the program, is a usage error
  (exit 64) naming the variable.

tests/golden/strided_cuda.* and strided_reduce.* keep the text of one
pattern; tests/gpu/nd_gpu.c runs the kernels on a GPU.
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

JITC = os.environ.get("JITC", "build/jitc")
CACHE = tempfile.mkdtemp(prefix="jitc-cache-")
fails = 0


def jitc(args, pattern=None):
    env = dict(os.environ, JITC_CACHE_DIR=CACHE)
    env.pop("JITC_CUDA_PATTERN", None)
    if pattern is not None:
        env["JITC_CUDA_PATTERN"] = pattern
    p = subprocess.run([JITC, "-t", "cuda", *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def ok(name):
    print("ok cuda_nd." + name, flush=True)


def fail(name, why):
    global fails
    fails += 1
    print("FAIL cuda_nd.%s: %s" % (name, why), flush=True)


def roles(args):
    """The roles of the program's arrays in order, from the comments of its CUDA C."""
    rc, text, err = jitc(args + ["--emit", "cuda"])
    if rc:
        raise RuntimeError(err)
    return re.findall(r"^// a\d+: array .*, (\w+)$", text, re.M)


def narrays(args):
    return len(roles(args))


def letters(args, cycle):
    """A letter per array: the cycle's over the arrays that are not results
    (whose letter is not read: c)."""
    out, k = "", 0
    for role in roles(args):
        if role == "result":
            out += "c"
        else:
            out += cycle[k % len(cycle)]
            k += 1
    return out


def many_statements():
    src = ["let t0 = a * 1.5 + b"]
    src += ["let t%d = t%d * 0.75 + a - b * %d" % (k, k - 1, k) for k in range(1, 150)]
    return "\n".join(src) + "\nc = t149 + t3; d = t75 - b; s = sum(t10)"


PROGRAMS = [  # name, jitc arguments, patterns (letter cycles; "ND:" and ":64" added)
    ("add", ["--dtype", "f64", "c = a + b"],
     ["2:sbc", "2:bsc", "2:ccs", "2:sss", "1:sbs", "1:bbc", "3:scb", "5:sss", "2:sbc:64",
      "4:bbs:64"]),
    ("inplace", ["--dtype", "f32", "a[i] = a * b + i"], ["2:sb", "3:bs", "1:sc", "2:ss:64"]),
    ("reduce", ["--dtype", "f32", "s = sum(a * b); m = argmax(a); c = a - b"],
     ["2:sb", "1:bs", "3:cs", "2:ssss:64"]),
    ("reduce_only", ["--dtype", "f64", "s = mean(a); t = prod(b)"], ["2:sb", "1:cs"]),
    ("split", ["--dtype", "f64", many_statements()], ["2:sb", "3:bssc", "1:cs:64"]),
    ("complex", ["--dtype", "c64", "c = a * b + 1j"], ["2:sbc", "1:bss"]),
    ("float16", ["--dtype", "f16", "c = a * b; d = sqrt(a)"], ["2:sbcs", "1:ssss"]),
    ("int8", ["--dtype", "i8", "c = a + b * 3"], ["3:sbs", "1:bsc"]),
]


def compile_one(name, args, spec):
    nd, cycle = spec.split(":")[0], spec.split(":")[1]
    pattern = "%s:%s%s" % (nd, letters(args, cycle), ":64" if spec.endswith(":64") else "")
    rc, ptx, err = jitc(args + ["--emit", "ptx", "--arch", "sm_90"], pattern)
    warns = [line for line in ptx.splitlines() if line.startswith("// nvrtc:")]
    if rc:
        return "%s %s: exit %d: %s" % (name, pattern, rc, err.strip()[:1500])
    if warns:
        return "%s %s: NVRTC warned: %s" % (name, pattern, "; ".join(warns[:5]))
    if not re.search(r"\.entry jitc_(k32|g0)", ptx) or ".param .align 8 .b8" not in ptx:
        return "%s %s: no kernel taking the strides in the PTX" % (name, pattern)
    return None


def main():
    if not os.path.exists(JITC):
        fail("setup", "%s not built" % JITC)
        return 1
    rc, _, err = jitc(["--emit", "ptx", "--arch", "sm_90", "a[i] += 1"])
    if rc == 69:
        print("skip cuda_nd: NVRTC not found here: " + err.strip())
        return 0

    jobs = [(name, args, spec) for name, args, specs in PROGRAMS for spec in specs]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        results = list(ex.map(lambda j: compile_one(*j), jobs))
    for name, args, specs in PROGRAMS:
        bad = [r for (n, _, _), r in zip(jobs, results) if n == name and r]
        if bad:
            fail("nvrtc_" + name, "; ".join(bad))
        else:
            ok("nvrtc_%s (%d patterns compile without a warning)" % (name, len(specs)))

    # Contiguous arrays alone: the kernel of contiguous arrays, exactly.
    same = []
    for name, args, _ in PROGRAMS:
        n = narrays(args)
        plain = jitc(args + ["--emit", "cuda"])
        for pat in ("1:" + "c" * n, "3:" + "c" * n + ":64"):
            if jitc(args + ["--emit", "cuda"], pat) != plain:
                same.append("%s %s" % (name, pat))
    if same:
        fail("contiguous_unchanged", "differs: " + ", ".join(same))
    else:
        ok("contiguous_unchanged (a pattern of contiguous arrays is the kernel of jitc_run)")

    # What a pattern's kernel does with each kind of array.
    rc, text, err = jitc(["--dtype", "f64", "--emit", "cuda", "c = a + b"], "2:sbc")
    checks = {
        "the shape and strides as the last parameter": "f64 *__restrict__ a2, const jitc_nd nd)",
        "a strided array through its offset": "a0[o0]",
        "both axes for the strided array": "o0 = (i64)ix0 * nd.s[0][0] + (i64)ix1 * nd.s[0][1];",
        "no inner term for the broadcast one": "o1 = (i64)ix0 * nd.s[1][0];",
        "32-bit divisions": "const u32 ix1 = q_ % (u32)nd.n[1];",
        "vector stores for the contiguous output": "((jitc_vec<f64, 2> *)a2)[w] = r2;",
    }
    missing = [what for what, s in checks.items() if s not in text]
    if rc or missing:
        fail("kernel_text", "exit %d %s; lacks: %s" % (rc, err.strip(), ", ".join(missing)))
    else:
        ok("kernel_text (offsets, broadcast, vectors, parameters)")
    rc, text, err = jitc(["--dtype", "f64", "--emit", "cuda", "c = a + b"], "2:sbc:64")
    if rc == 0 and "i64 q_ = (i64)(" in text and "u32 q_" not in text:
        ok("kernel_text_64 (64-bit index past 2^32 elements)")
    else:
        fail("kernel_text_64", "exit %d %s" % (rc, err.strip()))

    rc, text, err = jitc(["--dtype", "f64", "--emit", "cuda", "c = a + b"], "2:sbc:t")
    if rc == 0 and "Tiles of 32 elements" in text and "jitc_elem(g," in text and \
            "if (vec)" not in text:
        ok("kernel_text_tile (a block per tile of 32 by 32, no vector step)")
    else:
        fail("kernel_text_tile", "exit %d %s" % (rc, err.strip()))

    # Patterns that are not one, or do not fit the program.
    for pat, words in [("2:sx", ["JITC_CUDA_PATTERN='2:sx'", "c, b or s"]),
                       ("0:sbc", ["JITC_CUDA_PATTERN"]), ("65:sbc", ["JITC_CUDA_PATTERN"]),
                       ("2:sbc:32", ["JITC_CUDA_PATTERN"]), (":sbc", ["JITC_CUDA_PATTERN"]),
                       ("2:sb", ["JITC_CUDA_PATTERN='2:sb'", "3 arrays"]),
                       ("2:sbcs", ["3 arrays"]), ("1:sbc:t", ["JITC_CUDA_PATTERN"]),
                       ("2:sbc:tt", ["JITC_CUDA_PATTERN"])]:
        rc, _, err = jitc(["--dtype", "f64", "--emit", "cuda", "c = a + b"], pat)
        if rc == 64 and all(w in err for w in words):
            ok("refused %s" % pat)
        else:
            fail("refused %s" % pat, "exit %d: %r" % (rc, err))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
