#!/usr/bin/env python3
"""t_cuda_types.py -- the cuda target's code for every element type, without a GPU.

NVRTC compiles (to PTX for sm_75, the oldest architecture it knows, and
sm_90) the CUDA C that jitc emits for:
  - every operator and function of src/ops.h on every type of src/types.h
    that the checker accepts it for (the 8- and 16-bit integers, the
    unsigned ones, float16 and bfloat16 included), with --fast-math too;
  - every cast from every type to every type;
  - every reduction of every type, and several fused with outputs;
  - (source only) float64 to float16 in one rounding, to bfloat16
    through float32, with no helper of float64's for bfloat16;
  - programs mixing the types, with typed scalars of each type, and a
    program large enough to be split into several kernels;
and each compile must be clean: no error, no NVRTC warning, no header.
Where CUDA's ptxas is installed, the PTX is also assembled for the arch
(--emit ptx stops at PTX for compute_XY, which leaves the inline PTX of the
conversions unchecked).  It also checks that 1- and 2-byte elements load 16 bytes per vector step.
Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t_cuda import JITC, ROOT, jitc, op_exprs, plain_ops_table as ops_table  # noqa: E402

FAILS = 0
# Under the sanitizers (make test SAN=1) they watch jitc's C, which writes
# the same CUDA C for either: one architecture there, both in the plain suite.
ARCHS = ["sm_90"] if os.environ.get("SAN") == "1" else ["sm_75", "sm_90"]
PTXAS = shutil.which("ptxas") or next(
    (p for p in ("/usr/local/cuda/bin/ptxas",) if os.access(p, os.X_OK)), None)
REDUCTIONS = re.findall(r'^OP\((\w+),\s*"(\w+)",\s*REDUCE,', open(
    os.path.join(ROOT, "src", "ops.h")).read(), re.M)


def report(name, why):
    global FAILS
    if why:
        FAILS += 1
        print("FAIL cuda_types.%s: %s" % (name, why))
    else:
        print("ok cuda_types.%s" % name)


def types():
    """The rows of src/types.h: name, kind, size."""
    text = open(os.path.join(ROOT, "src", "types.h")).read()
    block = text[text.index("#ifdef TYPE"):]
    block = block[:block.index("#endif")]
    return [{"name": m.group(1), "cname": m.group(2), "kind": m.group(3), "size": int(m.group(4))}
            for m in re.finditer(r'^TYPE\(\w+,\s*"(\w+)",\s*"\w+",\s*(\w+),\s*(\w+),\s*(\d+)',
                                 block, re.M)]


TYPES = [t for t in types() if t["kind"] != "T_COMPLEX"]  # complex: t_cuda_complex.py
NAMES = [t["name"] for t in TYPES]


def valid(stmt, args):
    rc, _, _ = jitc("-t", "cuda", "--emit", "types", *args, stmt)
    return rc == 0


def compile_clean(args, prog, archs=ARCHS, extra=()):
    """'' when NVRTC compiles prog cleanly for every arch, else why not."""
    rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args, *extra, prog)
    if rc != 0:
        return "--emit cuda: exit %d: %s" % (rc, err.strip()[:1500])
    if "#include" in src:
        return "the CUDA C includes a header"
    for arch in archs:
        rc, ptx, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", arch, *args, *extra, prog)
        warns = [line for line in ptx.splitlines() if line.startswith("// nvrtc:")]
        if rc != 0:
            return "%s: exit %d: %s" % (arch, rc, err.strip()[:3000])
        if warns:
            return "%s: NVRTC warned:\n%s" % (arch, "\n".join(warns[:20]))
        if PTXAS:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "k.ptx")
                with open(path, "w") as f:
                    f.write(ptx)
                p = subprocess.run([PTXAS, "-arch=" + arch, path, "-o", os.path.join(d, "k.cubin")],
                                   capture_output=True, text=True)
                if p.returncode != 0 or p.stderr.strip():
                    return "%s: ptxas: exit %d: %s" % (arch, p.returncode, p.stderr.strip()[:2000])
    return ""


def check_ops():
    """Every op on every type the checker accepts it for."""
    covered = {}
    table = ops_table()
    for t in TYPES:
        dt = t["name"]
        args = ["--dtype", dt]
        stmts, ids = [], []
        for opid, name, arity in table:
            forms = ["%s(a)" % n for n in NAMES] if opid == "CAST" else op_exprs(opid, name, arity)
            for e in forms:
                if valid("o = " + e, args):
                    stmts.append("o%d = %s" % (len(stmts), e))
                    ids.append(opid)
        prog = "\n".join(stmts)
        why = compile_clean(args, prog)
        if not why:
            why = compile_clean(args, prog, archs=["sm_90"], extra=["--fast-math"])
        report("ops.%s (%d statements)" % (dt, len(stmts)), why)
        if not why:
            for i in ids:
                covered.setdefault(i, set()).add(dt)
    # Every op compiled on some type; the types each op was refused for.
    never = [o for o, _, _ in table if o not in covered]
    report("ops_coverage", "never compiled: " + ", ".join(never) if never else "")
    refused = ["%s: %s" % (o, ",".join(n for n in NAMES if n not in covered.get(o, ())))
               for o, _, _ in table if len(covered.get(o, ())) < len(NAMES)]
    print("# ops the checker refuses for some types: " + "; ".join(refused))


def check_casts():
    """Every cast between two types, each source type in one program."""
    for t in TYPES:
        prog = "\n".join("o%d = %s(a)" % (k, n) for k, n in enumerate(NAMES))
        report("casts.from_%s" % t["name"], compile_clean(["--dtype", t["name"]], prog))


def check_reductions():
    """Every reduction of every type, all in one pass with an output."""
    for t in TYPES:
        args = ["--dtype", t["name"]]
        stmts = ["r%d = %s(a)" % (k, name) for k, (_, name) in enumerate(REDUCTIONS)
                 if valid("r = %s(a)" % name, args)]
        stmts.append("c = a")
        report("reductions.%s (%d)" % (t["name"], len(stmts) - 1),
               compile_clean(args, "; ".join(stmts)))


def check_mixed():
    """The types together: promotion's casts, typed scalars, where()."""
    args, terms = [], []
    for k, t in enumerate(TYPES):
        args += ["--dtype", "a%d=%s" % (k, t["name"]), "-D", "s%d=1:%s" % (k, t["name"])]
        terms.append("f32(a%d) * f32(s%d)" % (k, k))
    prog = ["x = " + " + ".join(terms)]
    # Each type with itself and its scalar, and a where() choosing between two types.
    for k, t in enumerate(TYPES):
        if t["kind"] != "T_BOOL":
            prog.append("y%d = a%d * s%d + a%d" % (k, k, k, k))
        prog.append("w%d = where(a%d, a%d, a%d)" % (k, k, k, (k + 1) % len(TYPES)))
    # (every name given must be used: each statement is checked with x)
    prog = prog[:1] + [s for s in prog[1:] if valid(prog[0] + "\n" + s, args)]
    report("mixed (%d statements)" % len(prog), compile_clean(args, "\n".join(prog)))


def check_split():
    """A program split into several kernels: 16-bit floats and 8-bit integers
    through the scratch between them, with reductions in the groups."""
    for dt, op in (("float16", "* 0.75 + a - b *"), ("bfloat16", "* 0.75 + a - b *"),
                   ("uint8", "* 3 + a - b *"), ("int16", "* 3 + a - b *")):
        lines = ["let t0 = a * 2 + b"]
        lines += ["let t%d = t%d %s %d" % (k, k - 1, op, k % 5 + 1) for k in range(1, 150)]
        lines += ["c = t149 + t3; d = t75 - b; s = sum(t140); m = max(t99)"]
        prog = "\n".join(lines)
        args = ["--dtype", dt]
        rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args, prog)
        if rc == 0 and "jitc_g1" not in src:
            report("split.%s" % dt, "not split into several kernels")
            continue
        report("split.%s" % dt, compile_clean(args, prog, archs=["sm_90"]))


def check_vectors():
    """1- and 2-byte elements: 16 bytes per vector step (16 or 8 elements)."""
    for t in TYPES:
        if t["size"] > 2:
            continue
        args = ["--dtype", t["name"]]
        per = 16 // t["size"]
        prog = "b = a"
        _, src, _ = jitc("-t", "cuda", "--emit", "cuda", *args, prog)
        _, ptx, _ = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", *args, prog)
        want = "jitc_vec<%s, %d>" % (t["cname"], per)
        loads = set(re.findall(r"ld\.global\.nc\.v4\.\w+", ptx))
        report("vector_width.%s" % t["name"],
               "" if want in src and loads else
               "want %s and ld.global.nc.v4: %s, %s" % (want, sorted(set(re.findall(
                   r"jitc_vec<\w+, \d+>", src))), re.findall(r"ld\.global\S*", ptx)[:6]))


def check_half64():
    """float64 (and a mean) to a 16-bit float: float16 in one rounding
    (jitc_narrow64_f16), bfloat16 through float32 as ml_dtypes converts it
    (jitc_narrow_bf16), so that no kernel carries a float64 rounding of
    bfloat16's.  Source only: no NVRTC needed."""
    for t, want, never in (("float16", "jitc_narrow64_f16", "jitc_narrow64_bf16"),
                           ("bfloat16", "jitc_narrow_bf16", "narrow64")):
        progs = [("--dtype", "a=" + t, "r = %s(a)" % name) for _, name in REDUCTIONS
                 if valid("r = %s(a)" % name, ["--dtype", "a=" + t])]
        progs += [("--dtype", "a=" + u, "b = %s(a)" % t) for u in NAMES]
        seen, bad = 0, []
        for *args, prog in progs:
            rc, src, err = jitc("-t", "cuda", "--emit", "cuda", *args, prog)
            if rc:
                bad.append("%s: %s" % (prog, err.strip()[:200]))
            seen += want in src
            if never in src:
                bad.append("%s %s names %s" % (" ".join(args), prog, never))
        report("half64.%s (%d programs)" % (t, len(progs)),
               "; ".join(bad[:3]) if bad else "" if seen else "%s never emitted" % want)


def main():
    if not os.path.exists(JITC):
        report("setup", "%s not built" % JITC)
        return 1
    check_half64()
    rc, _, err = jitc("-t", "cuda", "--emit", "ptx", "--arch", "sm_90", "a[i] += 1")
    if rc == 69:
        print("skip cuda_types: NVRTC not found here: " + err.strip())
        return 0
    if not PTXAS:
        print("skip cuda_types.ptxas: no ptxas here; the PTX is not assembled")
    check_vectors()
    check_casts()
    check_reductions()
    check_mixed()
    check_split()
    check_ops()
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
