#!/usr/bin/env python3
"""tests/gpu/reduce_numpy.py -- the cuda target's reductions against NumPy,
through the command line (jitc -t cuda --in ... --out ...), on a GPU.

Every op and dtype in one program per dtype and size (all nine reductions
of `a` and one fused with `b`), with NaN, inf, -0.0, the largest values and
integer overflow mixed in; sizes 0, 1, odd tails, block, vector and chunk
boundaries.  Integers, bools, min, max, argmin and argmax must equal
NumPy's; float sums and means be within (n + 8) epsilons of the float64
sum of magnitudes; float products agree in NaN, inf and sign.
Prints "ok NAME" / "FAIL NAME: why".
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

JITC = os.environ.get("JITC", "build/jitc")
TARGET = os.environ.get("REDUCE_TARGET", "cuda")  # interp: to check this test itself
OPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
fails = 0


def data(dt, n, rng, specials):
    if dt == "bool":
        return rng.integers(0, 7, n) != 0
    if dt in ("int32", "int64"):
        info = np.iinfo(dt)
        x = rng.integers(-40, 41, n).astype(dt)
        if specials and n:
            m = rng.integers(0, 29, n) == 0
            x[m] = np.where(rng.integers(0, 2, m.sum()) == 1, info.max, info.min + 1)
        return x
    x = (rng.random(n) * 20 - 10).astype(dt)
    if specials and n:
        sp = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).max,
                       -np.finfo(dt).max, 1e-310 if dt == "float64" else 1e-40], dtype=dt)
        m = rng.integers(0, 29, n) == 0
        x[m] = sp[rng.integers(0, len(sp), m.sum())]
    return x


def numpy_of(op, x):
    with np.errstate(all="ignore"):
        if op == "mean" and x.dtype.kind in "biu":
            return np.mean(x.astype(np.float64))
        if op in ("sum", "mean") and x.dtype == np.float32:
            # the float64 sum, rounded: jitc's float32 sum is at least this good
            s = np.sum(x.astype(np.float64))
            return np.float32(s / len(x) if op == "mean" else s)
        if op in ("sum", "prod") and x.dtype == np.int32:
            return getattr(np, op)(x.astype(np.int64))
        if op in ("sum", "prod") and x.dtype == np.bool_:
            return getattr(np, op)(x.astype(np.int64))
        return getattr(np, op)(x)


def agree(op, got, want, x):
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype and not (op in ("argmin", "argmax") and got.dtype == np.int64):
        return "dtype %s, NumPy's %s" % (got.dtype, want.dtype)
    g, w = got.item(), want.item()
    if got.dtype.kind != "f":
        return None if g == w else "%r, NumPy %r" % (g, w)
    if np.isnan(g) or np.isnan(w):
        return None if np.isnan(g) and np.isnan(w) else "%r, NumPy %r" % (g, w)
    if np.isinf(g) or np.isinf(w) or op in ("min", "max"):
        return None if g == w else "%r, NumPy %r" % (g, w)
    if op == "prod":
        return None if np.sign(g) == np.sign(w) else "%r, NumPy %r (sign)" % (g, w)
    eps = np.finfo(got.dtype).eps
    with np.errstate(all="ignore"):
        mag = np.sum(np.abs(x[np.isfinite(x)].astype(np.float64)))
    if op == "mean" and len(x):
        mag /= len(x)
    tol = (len(x) + 8) * eps * mag + abs(w) * eps
    return None if abs(g - w) <= tol else "%r, NumPy %r (tolerance %g)" % (g, w, tol)


def run(prog, inputs, outs, tmp):
    cmd = [JITC, "-t", TARGET, "-q"]
    for name, x in inputs.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, x)
        cmd += ["--in", "%s=%s" % (name, path)]
    for name in outs:
        cmd += ["--out", "%s=%s" % (name, os.path.join(tmp, "out_" + name + ".npy"))]
    r = subprocess.run(cmd + ["--", prog], capture_output=True, text=True)
    if r.returncode:
        return r.returncode, r.stderr
    return 0, {name: np.load(os.path.join(tmp, "out_" + name + ".npy")) for name in outs}


def check(name, ok_why):
    global fails
    if ok_why is None:
        print("ok reduce_numpy." + name)
    else:
        fails += 1
        print("FAIL reduce_numpy.%s: %s" % (name, ok_why))


def main():
    rng = np.random.default_rng(14)
    sizes = [1, 7, 256, 257, 4097, 65537, 1048577, 2097153, 3000017]
    if len(sys.argv) > 1 and sys.argv[1] == "quick":
        sizes = sizes[:6]
    prog = "; ".join("r%d = %s(a)" % (k, op) for k, op in enumerate(OPS))
    with tempfile.TemporaryDirectory() as tmp:
        for dt in DTYPES:
            bad = []
            for n in sizes:
                for specials in (False, True):
                    a = data(dt, n, rng, specials)
                    rc, out = run(prog, {"a": a}, ["r%d" % k for k in range(len(OPS))], tmp)
                    if rc:
                        bad.append("n=%d: exit %d: %s" % (n, rc, out.strip()[:300]))
                        continue
                    for k, op in enumerate(OPS):
                        why = agree(op, out["r%d" % k], numpy_of(op, a), a)
                        if why:
                            bad.append("%s n=%d%s: %s" % (op, n, " specials" if specials else "", why))
            check("%s.all_ops" % dt, "; ".join(bad[:6]) if bad else None)
            # The fused program: a dot product, a max of differences, an
            # argmin and an element-wise output from one pass.
            if dt not in ("bool",):
                n = 1000003
                a, b = data(dt, n, rng, True), data(dt, n, rng, True)
                rc, out = run("s = sum(a * b); m = max(abs(a - b)); k = argmin(a); c = a - b",
                              {"a": a, "b": b}, ["s", "m", "k", "c"], tmp)
                if rc:
                    check("%s.fused" % dt, "exit %d: %s" % (rc, out.strip()[:300]))
                else:
                    with np.errstate(all="ignore"):
                        prod, diff = a * b, a - b
                        w = {"s": numpy_of("sum", prod), "m": np.max(np.abs(diff)),
                             "k": np.argmin(a)}
                    why = [k + ": " + agree(op, out[k], w[k], prod if k == "s" else a)
                           for k, op in (("s", "sum"), ("m", "max"), ("k", "argmin"))
                           if agree(op, out[k], w[k], prod if k == "s" else a)]
                    # NaN's bits are the GPU arithmetic's own
                    if not np.array_equal(out["c"], diff, equal_nan=True) or \
                            (np.signbit(out["c"]) != np.signbit(diff))[~np.isnan(diff)].any():
                        why.append("c differs from a - b")
                    check("%s.fused" % dt, "; ".join(why) if why else None)
            # Over no elements: the identities; min has none (exit 65).
            a = data(dt, 0, rng, False)
            rc, out = run("s = sum(a); p = prod(a); y = any(a); l = all(a); e = mean(a)",
                          {"a": a}, ["s", "p", "y", "l", "e"], tmp)
            if rc:
                check("%s.empty" % dt, "exit %d: %s" % (rc, out.strip()[:300]))
            else:
                got = [out[k].item() for k in "spyl"]
                want = [0, 1, False, True]
                check("%s.empty" % dt, None if got == want and np.isnan(out["e"].item())
                      else "%r and mean %r, want %r and nan" % (got, out["e"].item(), want))
            rc, _ = run("m = min(a)", {"a": a}, ["m"], tmp)
            check("%s.empty_min" % dt, None if rc == 65 else "exit %d, want 65" % rc)
    print("reduce_numpy: %d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
