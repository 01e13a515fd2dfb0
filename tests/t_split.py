#!/usr/bin/env python3
"""t_split.py -- large programs, which the cpu target splits into groups of
statements (src/split.c cuts them, src/cpu/gen.c's gen_split() builds the
kernel), give exactly interp's results; the largest program of each shape
must be split on cpu (its --emit llvm defines two groups or more).

Each program is run by interp and by every other target of JITC_TARGETS
with the same inputs; every output must be identical bit for bit (the
programs use exactly rounded operations only).  The sizes sit below, at and
across the group threshold, and the programs exercise what splitting could
break: lets read by later groups (float, int and bool), in-place updates
repeated across groups, reads after writes, an output written by several
statements, the element index, scalars, more live temporaries than the
scratch budget, and element counts that leave a partial block and a partial
vector, on one thread and on several.
Prints "ok NAME" or "FAIL NAME: why" per case.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
TARGETS = [t for t in os.environ.get("JITC_TARGETS", "interp cpu").split() if t != "interp"]


# The outputs are o0, o1, ...: c64 and c128 would be casts of the language.
def indep(k):
    return [f"o{j} = a * {j} + b" for j in range(k)]


def let_chain(k):
    lines = ["let t1 = a * 1.5 + 1"]
    lines += [f"let t{j} = t{j - 1} * 0.5 - t{j - 1} + b" for j in range(2, k)]
    return lines + [f"c = t{k - 1}"]


def crossing(k):
    # Lets of every type computed early and read after many groups.
    lines = ["let f = a * 3 - b", "let m = a > b", "let n = i32(a * 100) - 50",
             "let q = i * 3"]
    lines += [f"o{j} = a * {j} - f" for j in range(k)]
    lines += ["d = where(m, f, -f) + n", "e = n ** 3 + n // 7 + q", "g = m & (n > 0)"]
    return lines


def early(k):
    # k lets live at once, each read by a statement after all of them: more
    # scratch than the per-call budget at any block size.
    lines = [f"let t{j} = a * {j} - b" for j in range(k)]
    return lines + [f"o{j} = t{j} + t{k - 1 - j}" for j in range(k)]


def inplace(k):
    # a is updated again and again; reads of a after each update see it.
    lines = []
    for j in range(k):
        lines.append(f"a += {j % 5} * b")
        lines.append(f"o{j} = a - {j}")
    lines.append("out = a * 2")
    return lines


def rewrite(k):
    # One output written by many statements, each reading the last value.
    lines = ["c = a"]
    lines += [f"c = c * 0.75 + {j} * b" for j in range(k)]
    lines += ["d = c + s"]
    return lines


def mixed(k):
    lines = []
    for j in range(k):
        if j % 3 == 0:
            lines.append(f"let t{j} = a * {j} + s")
        elif j % 3 == 1:
            lines.append(f"o{j} = t{j - 1} - b")
        else:
            lines.append(f"b += t{j - 2} * 0.5")
    lines.append("z = b + i")
    return lines


CASES = []
for name, fn, sizes in [("indep", indep, [30, 42, 43, 50, 130]),
                        ("let_chain", let_chain, [40, 60, 300]),
                        ("crossing", crossing, [10, 60, 200]),
                        ("early", early, [600]),
                        ("inplace", inplace, [20, 30, 120]),
                        ("rewrite", rewrite, [40, 60, 200]),
                        ("mixed", mixed, [60, 90, 300])]:
    for k in sizes:
        CASES.append((f"{name}_{k}", "\n".join(fn(k)) + "\n"))


def run(target, prog, n, d):
    path = os.path.join(d, "prog.jitc")
    with open(path, "w") as f:
        f.write(prog)
    # Every output: the names assigned, as the program writes them.
    names = []
    for line in prog.splitlines():
        tok = line.split()
        if len(tok) >= 2 and tok[0] != "let" and tok[1] in ("=", "+="):
            if tok[0] not in names:
                names.append(tok[0])
    outdir = os.path.join(d, target)
    os.makedirs(outdir, exist_ok=True)
    cmd = [JITC, "-t", target, "-q", "-n", str(n), "--no-cache", "-f", path]
    # Only the names the program uses: jitc refuses the others.
    words = set(re.findall(r"[A-Za-z_]\w*", prog))
    for name, arg in (("a", "--in=a=rand:1"), ("b", "--in=b=rand:2"), ("s", "-Ds=2.5")):
        if name in words:
            cmd.append(arg)
    for o in names:
        cmd += ["--out", f"{o}={os.path.join(outdir, o + '.npy')}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None, r.stderr.strip()[:300], r.returncode
    return {o: np.load(os.path.join(outdir, o + ".npy")) for o in names}, "", 0


def groups_cpu(prog, d):
    """How many groups the cpu target cuts prog into (its --emit llvm
    defines kernel.g0, kernel.g1, ... for a split kernel), or None."""
    path = os.path.join(d, "prog.jitc")
    with open(path, "w") as f:
        f.write(prog)
    r = subprocess.run([JITC, "-t", "cpu", "--emit", "llvm", "-n", "1", "-f", path],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None
    return len(re.findall(r"^define internal void @kernel\.g[0-9]+\(", r.stdout, re.M))


def check_split_happens(d):
    """The largest program of each shape is split on cpu: were none, every
    case below would compare unsplit kernels and prove nothing of splitting."""
    largest = {}
    for name, prog in CASES:
        shape, k = name.rsplit("_", 1)
        if int(k) > largest.get(shape, (0, ""))[0]:
            largest[shape] = (int(k), prog)
    for shape, (k, prog) in largest.items():
        ng = groups_cpu(prog, d)
        label = f"split_{shape}_{k}_cpu_is_split"
        if ng is None or ng < 2:
            print(f"FAIL {label}: the cpu target makes {ng} groups of it (want 2 or more)")
        else:
            print(f"ok {label} ({ng} groups)")


def main():
    if not TARGETS:
        print("skip split: no target but interp")
        return
    with tempfile.TemporaryDirectory() as d:
        if "cpu" in TARGETS:
            check_split_happens(d)
        for name, prog in CASES:
            # 300001: several threads, each with its own scratch, and a
            # partial block and vector at the end.
            sizes = [1, 17, 2085] if name.endswith(("_43", "_60")) else [2085]
            if name in ("crossing_60", "early_600"):
                sizes.append(300001)
            for n in sizes:
                ref, err, _ = run("interp", prog, n, d)
                if ref is None:
                    print(f"FAIL split_{name}_n{n}: interp: {err}")
                    continue
                for t in TARGETS:
                    got, err, rc = run(t, prog, n, d)
                    label = f"split_{name}_n{n}_{t}"
                    if got is None:
                        if rc == 69:  # the target is not on this machine
                            print(f"skip {label}: {err}")
                        else:
                            print(f"FAIL {label}: {err}")
                        continue
                    bad = [o for o in ref if ref[o].dtype != got[o].dtype
                           or ref[o].tobytes() != got[o].tobytes()]
                    if bad:
                        o = bad[0]
                        print(f"FAIL {label}: {len(bad)} outputs differ, first {o} "
                              f"({ref[o].dtype}/{got[o].dtype})")
                    else:
                        print(f"ok {label}")


if __name__ == "__main__":
    main()
