#!/usr/bin/env python3
"""tests/t_axis.py -- reductions over axes (sum(x, axis=0), max(x, (0, 2),
keepdims=True), ...) through the library (jitc_run_arrays,
jitc_array_shape, jitc_kernel_reduction_axes; ctypes) on every host target
of JITC_TARGETS, against NumPy.

- Every reduction over random shapes of 0 to 5 axes: one axis, negative
  ones, tuples (argmin and argmax take one axis), axis=(), no axis with
  keepdims, keepdims; of broadcast inputs and of strided views; the
  results' shapes and types NumPy's, the values NumPy's (float sums and
  means within a bound, the rest exact).
- Each segment is reduced as a whole reduction is: the results are the
  bits of the whole reduction of each segment's elements on the same
  target, but for float sums, means and products where cpu takes the row
  form (the reduced axes outer in memory), which add each column's rows
  in order (rows_form).  On cpu the bits do not depend on the thread
  count: few long segments, many short ones, many columns over few rows,
  few columns over many rows, rows not a multiple of the row form's block.
- NaN placements for min, max, argmin, argmax (the first NaN wins).
- Axes of extent 0: NumPy's values (sum 0, prod 1, mean NaN, any false,
  all true) and its error for min, max, argmin, argmax; empty results.
- Element-wise outputs beside the reductions; a result written into a
  strided view; jitc_run() over (n,); the 0-d array's axis 0.
- The run's errors: NumPy's AxisError, a repeated axis, a result of the
  wrong shape, a result that overlaps an input.
- cuda (no GPU needed): every reduction of every kind of type, over one
  axis and a tuple, contiguous and over device patterns, compiled by NVRTC.
  With cuda in JITC_TARGETS (tests/gpu/run.sh) all of the above runs on it
  too; a float sum's segment there is reduced in pieces, so its bits are
  compared with NumPy's within rounding, not with its whole reduction's.
"""
import ctypes as C
import os
import subprocess
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduce_lib as RL  # noqa: E402

RL.under_sanitizers("axis")
import nd_lib as ND  # noqa: E402
from nd_lib import same  # noqa: E402

warnings.simplefilter("ignore")
TARGETS = os.environ.get("JITC_TARGETS", "interp cpu").split()
L = ND.L
passed = failed = 0
rng = np.random.default_rng(2121)


def ok(name):
    global passed
    passed += 1
    print(f"ok axis.{name}", flush=True)


def fail(name, why):
    global failed
    failed += 1
    print(f"FAIL axis.{name}: {why}", flush=True)


def report(name, bad, total):
    if bad:
        fail(name, f"{len(bad)} of {total}: " + "; ".join(" ".join(b.split())[:240]
                                                           for b in bad[:3]))
    else:
        ok(f"{name} ({total} cases)")


NUMPY = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean,
         "any": np.any, "all": np.all, "argmin": np.argmin, "argmax": np.argmax}
DTYPES = {  # the reductions, and the element types each is tried on
    "sum": [np.float64, np.float32, np.int32, np.uint8, np.bool_, np.complex128],
    "prod": [np.float64, np.int16, np.int64],
    "min": [np.float64, np.float32, np.int32, np.uint16],
    "max": [np.float64, np.float32, np.int8, np.uint64],
    "mean": [np.float64, np.float32, np.int32, np.complex128],
    "any": [np.float64, np.int32, np.bool_],
    "all": [np.float32, np.int16, np.bool_],
    "argmin": [np.float64, np.float32, np.int32],
    "argmax": [np.float64, np.float16, np.uint8],
}


def axes_text(axes):
    """How a program writes the axis argument (None: no axis)."""
    if axes is None:
        return ""
    if isinstance(axes, int):
        return f", axis={axes}" if rng.integers(2) else f", {axes}"
    return ", axis=(" + "".join(f"{a}, " for a in axes) + ")"


def random_axes(nd, op):
    """Axes for a shape of nd axes: one (maybe negative), a tuple, (), or None."""
    k = int(rng.integers(6))
    if nd == 0 or k == 0:
        return None
    if k <= 2 or op in ("argmin", "argmax"):
        a = int(rng.integers(nd))
        return a - nd if rng.integers(2) else a
    n = int(rng.integers(0, nd + 1))
    picked = [int(x) for x in rng.permutation(nd)[:n]]
    return tuple(a - nd if rng.integers(2) else a for a in picked)


def close(got, want, op, x, axes, keepdims):
    """NumPy's value: exact but for float sums, means and products, which
    add in another order (within n + 8 epsilons of the sum of magnitudes)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if op not in ("sum", "mean", "prod") or got.dtype.kind not in "fc":
        return same(got, want)
    n = x.size // max(1, want.size)
    with np.errstate(all="ignore"):
        mag = np.abs(want).astype(np.float64)
        if op != "prod":
            mag = mag + np.sum(np.abs(x).astype(np.float64), axis=axes, keepdims=keepdims) / (
                max(1, n) if op == "mean" else 1)
        tol = (n + 8) * np.finfo(got.dtype).eps * mag
        fin = np.isfinite(want)
        err = np.abs(got.astype(want.dtype) - want)
    return bool(np.all(np.where(fin, err <= tol, True))) and \
        same(np.where(fin, 0, got).astype(got.dtype), np.where(fin, 0, want).astype(want.dtype))


def numpy_of(op, x, axes, keepdims):
    with np.errstate(all="ignore"):
        kw = {"keepdims": True} if keepdims else {}
        if op in ("argmin", "argmax") and axes is None:
            r = NUMPY[op](x, **kw)
        else:
            r = NUMPY[op](x, axis=axes, **kw)
        return np.asarray(r)


def with_nans(x):
    """Some NaNs, at the ends and at random, in some segments only."""
    if x.dtype.kind != "f" or x.size == 0 or rng.integers(3) == 0:
        return x
    idx = [0, x.size - 1] + [int(i) for i in rng.integers(0, x.size, 2)]
    for i in idx[: int(rng.integers(1, 5))]:
        x[np.unravel_index(i, x.shape)] = np.nan
    return x


def random_case(op):
    dt = DTYPES[op][int(rng.integers(len(DTYPES[op])))]
    shape = ND.random_shape(rng, int(rng.integers(0, 6)), 600)
    x = ND.view_of(rng, shape, dt)
    if op in ("min", "max", "argmin", "argmax"):
        x = with_nans(x)
    axes = random_axes(len(shape), op)
    keepdims = bool(rng.integers(3) == 0)
    return x, axes, keepdims


def against_numpy():
    """One reduction of a view, and of a broadcast sum of two views."""
    for target in TARGETS:
        R = ND.Run()
        bad, total = [], 0
        for trial in range(360):
            op = list(NUMPY)[trial % len(NUMPY)]
            x, axes, keepdims = random_case(op)
            kd = ", keepdims=True" if keepdims else ""
            inputs = {"x": x}
            expr = "x"
            if trial % 3 == 2 and x.dtype.kind in "fiu" and op not in ("any", "all"):
                y = ND.view_of(rng, ND.broadcast_partner(rng, x.shape), x.dtype)
                inputs["y"] = y
                expr = "x + y"
                full = np.broadcast_arrays(x, y)
                with np.errstate(all="ignore"):
                    ref = full[0] + full[1]
            else:
                ref = x
            prog = f"s = {op}({expr}{axes_text(axes)}{kd})"
            want = numpy_of(op, ref, axes, keepdims)
            total += 1
            try:
                got = R.run(prog, inputs, target)["s"]
            except RL.JitcError as e:
                bad.append(f"{prog} {x.dtype} {x.shape}{x.strides}: {e}")
                continue
            if not close(got, want, op, ref, axes, keepdims):
                bad.append(f"{prog} {x.dtype} {x.shape}{x.strides}: {got!r} against {want!r}")
        R.close()
        report(f"{target}.against_numpy", bad, total)


def segment_bits(target, prog, op, x, axes, R):
    """The result of prog over x, element by element: the whole reduction
    of the same program over that segment's elements, contiguous."""
    nd = x.ndim
    ax = range(nd) if axes is None else [axes] if isinstance(axes, int) else axes
    ax = sorted(a % nd for a in ax)
    kept = [d for d in range(nd) if d not in ax]
    moved = np.ascontiguousarray(np.transpose(x, kept + ax))
    segs = moved.reshape(int(np.prod([x.shape[d] for d in kept], dtype=np.int64)), -1)
    whole = prog.split(",")[0] + ")"
    outs = ND.runs(R, whole, [{"x": np.ascontiguousarray(seg)} for seg in segs], target)
    return np.array([o["s"] for o in outs]).reshape([x.shape[d] for d in kept])


def segments_as_whole():
    """The bits of each segment's whole reduction, on the same target."""
    for target in TARGETS:
        R = ND.Run()
        bad, total = [], 0
        for trial in range(40):
            op = list(NUMPY)[trial % len(NUMPY)]
            dt = [np.float32, np.float64][trial % 2]
            shape = ND.random_shape(rng, int(rng.integers(2, 4)), 20000, (3, 5, 60, 700, 5000))
            x = with_nans(ND.view_of(rng, shape, dt))
            axes = random_axes(len(shape), op)
            if axes is None or axes == ():
                axes = -1
            if target == "cuda" and op in ("sum", "mean", "prod"):
                continue  # cuda's pieces associate a float sum otherwise than its whole one
            if op in ("sum", "mean", "prod"):
                # the innermost axis in memory: segment by segment; over outer
                # axes cpu's row form adds in another order (rows_form)
                x, axes = np.ascontiguousarray(x), -1
            prog = f"s = {op}(x{axes_text(axes)})"
            total += 1
            got = R.run(prog, {"x": x}, target)["s"]
            want = segment_bits(target, prog, op, x, axes, R)
            if not same(got, want):
                bad.append(f"{prog} {x.dtype} {x.shape}{x.strides}")
        R.close()
        report(f"{target}.segments_as_whole", bad, total)


def threads():
    """cpu: the same bits for 1, 2, 3 and 8 threads, over few long
    segments, many short ones, and columns (the row form): many columns
    over few rows, few columns over many rows, rows not a multiple of its
    block, columns that the threads' tiles cut otherwise, outer axes
    around them."""
    if "cpu" not in TARGETS:
        return
    bad, total = [], 0
    cases = [((3, 300000), 1), ((300000, 3), 1), ((2000, 300), 0), ((7, 50, 3000), (0, 2)),
             ((1, 600000), -1), ((40, 40, 40), (1,)), ((5, 100000), 0), ((300000, 5), 0),
             ((2 * ROW_BLOCK + 37, 700), 0), ((1000, 4096), 0), ((7, 1500, 300), 1),
             ((3000, 40, 9), (0, 1))]
    for shape, axes in cases:
        for op, dt in (("sum", np.float32), ("sum", np.float64), ("mean", np.float32),
                       ("argmax", np.float32), ("prod", np.float32), ("min", np.float32)):
            x = with_nans(rng.standard_normal(shape).astype(dt))
            if op == "prod":
                x = (1 + x / 1000).astype(dt)
            ax = axes if op != "argmax" or isinstance(axes, int) else -1
            prog = f"s = {op}(x{axes_text(ax)})"
            runs = []
            for t in (1, 2, 3, 8):
                R = ND.Run(threads=t)
                runs.append(R.run(prog, {"x": x}, "cpu")["s"])
                R.close()
            total += 1
            if not all(same(r, runs[0]) for r in runs):
                bad.append(f"{prog} {x.dtype} {shape}")
    report("cpu.threads", bad, total)


ROW_TYPES = [np.float64, np.float32, np.float16, np.int32, np.uint8, np.int64, np.bool_,
             np.complex64, np.complex128]
ROW_BLOCK = 1024  # the row form's block of rows (RR, src/cpu/rowrun.c)
EXACT = ("min", "max", "argmin", "argmax", "any", "all")


def rows_model(op, x, axes):
    """A float sum, mean or product over the outer axes as the row form
    computes it (docs/language.md): each column's rows added (multiplied)
    in order in the accumulator's type, from the identity, in blocks of
    ROW_BLOCK rows; the blocks combined in the pairwise tree of reduce_tree
    (src/reduce.c); the mean divided in float64.  None where it does not
    say (complex products and means)."""
    kind = x.dtype.kind
    if kind == "c" and op != "sum":
        return None
    axes = sorted(a % x.ndim for a in ([axes] if isinstance(axes, int) else axes))
    kept = [d for d in range(x.ndim) if d not in axes]
    n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    m = np.transpose(x, axes + kept).reshape(n, -1)
    acc = np.complex128 if kind == "c" else np.float64 if op != "prod" else \
        np.float32 if x.dtype.itemsize <= 4 else np.float64
    blocks = []
    for b0 in range(0, n, ROW_BLOCK):
        a = np.full(m.shape[1], 1 if op == "prod" else 0, acc)
        for r in range(b0, min(n, b0 + ROW_BLOCK)):
            a = a * m[r].astype(acc) if op == "prod" else a + m[r].astype(acc)
        blocks.append(a)

    def tree(lo, k):
        if k == 1:
            return blocks[lo]
        h = k // 2
        return tree(lo, h) * tree(lo + h, k - h) if op == "prod" else tree(lo, h) + tree(lo + h, k - h)
    with np.errstate(all="ignore"):
        t = tree(0, len(blocks))
        if op == "mean":
            t = t / np.float64(n)
        return t.astype(x.dtype).reshape([x.shape[d] for d in kept])


def rows_form():
    """cpu: reductions over the outer axes of C-order arrays (sum(x, axis=0)
    of a matrix: the row form, each row folded into every column's
    accumulator) give, for every reduction and type: min, max, argmin,
    argmax, any, all and integer sums the bits of each column reduced as a
    contiguous run (they are exact); float sums, means and products the
    bits of rows_model (not the contiguous run's, which adds in lanes), and
    NumPy's value within its bound; on 1 and 3 threads alike.  Columns not
    a multiple of the vector width, one row, several blocks of rows and a
    part of one, a transpose, a row step, NaN at the ends and within a
    column, a wide and short matrix (many tiles, each folded and finished at
    once; float results written by the kernel itself)."""
    if "cpu" not in TARGETS:
        return
    bad, total = [], 0
    Rs = {t: ND.Run(threads=t) for t in (1, 3)}
    views = [((64, 35), 0), ((1, 37), 0), ((9000, 21), 0), ((5, 6, 19), (0, 1)),
             ((3, 40, 17), 1), ((300, 70), "T"), ((300, 70), "step"), ((4200, 5), 0),
             ((2 * ROW_BLOCK + 37, 300), 0), ((3, 70001), 0)]
    for v, (shape, how) in enumerate(views):
        for op in NUMPY:
            dt = ROW_TYPES[(v + list(NUMPY).index(op)) % len(ROW_TYPES)]
            if op in ("argmin", "argmax", "min", "max") and np.dtype(dt).kind == "c":
                dt = np.float32
            if op == "prod" and np.dtype(dt).kind in "fc":
                x = fill_near_one(shape, dt)
            else:
                x = ND.fill(rng, np.empty(shape, dt))
            axes = how
            if how == "T":  # reduce axis 1 of a transpose: outer in memory
                x, axes = np.ascontiguousarray(x).T, 1
            elif how == "step":  # every other row
                x, axes = np.concatenate([x, x])[::2], 0
            if op in ("min", "max", "argmin", "argmax") and x.dtype.kind == "f":
                x[(0,) * x.ndim] = np.nan  # a column's first row
                x[(-1,) * x.ndim] = np.nan  # another's last
                x[tuple(n // 2 for n in x.shape)] = np.nan
            ax = axes if op not in ("argmin", "argmax") or isinstance(axes, int) else 0
            prog = f"s = {op}(x{axes_text(ax)})"
            total += 1
            got = {t: R.run(prog, {"x": x}, "cpu")["s"] for t, R in Rs.items()}
            what = f"{prog} {x.dtype} {x.shape}{x.strides}"
            if op in EXACT or x.dtype.kind not in "fc":
                if not same(got[1], segment_bits("cpu", prog, op, x, ax, Rs[1])):
                    bad.append(f"{what}: not the columns' bits")
            else:
                want = rows_model(op, x, ax)
                if want is not None and not same(got[1], want):
                    bad.append(f"{what}: not the row form's bits")
            if not same(got[3], got[1]):
                bad.append(f"{what}: 3 threads differ from 1")
            elif not close(got[1], numpy_of(op, x, ax, False), op, x, ax, False):
                bad.append(f"{what}: not NumPy's value")
    # The order of a float sum, mean and product: rows of several blocks
    # and a part of one, of values that round otherwise in another order.
    for dt in (np.float64, np.float32, np.float16, np.complex128):
        for op in ("sum", "mean", "prod"):
            shape = (2 * ROW_BLOCK + 37, 70)
            x = fill_near_one(shape, dt) if op == "prod" else \
                (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dt)
            want = rows_model(op, x, 0)
            if want is None:
                continue
            total += 1
            got = {t: R.run(f"s = {op}(x, axis=0)", {"x": x}, "cpu")["s"] for t, R in Rs.items()}
            if not same(got[1], want) or not same(got[3], want):
                bad.append(f"{op}(x, axis=0) {x.dtype} {shape}: not the row form's bits")
    for R in Rs.values():
        R.close()
    report("cpu.rows_form", bad, total)


def results_through_views():
    """Results of many segments written through views (every other element,
    reversed, a column of a matrix), as the segments are finished many at a
    time: over outer axes (cpu's row form) and the innermost one."""
    for target in TARGETS:
        R = ND.Run()
        bad, total = [], 0
        for shape, axes in [((300, 70), 0), ((4, 50, 40), 1), ((70, 300), 1), ((9, 3000), 0)]:
            x = ND.fill(rng, np.empty(shape, np.float64))
            kept = [n for d, n in enumerate(shape) if d != axes]
            for op in ("sum", "argmax", "max"):
                want = numpy_of(op, x, axes, False)
                big = np.zeros([2 * n for n in kept] + [3], want.dtype)
                view = big[(slice(None, None, -2),) * len(kept) + (1,)]
                total += 1
                R.run(f"s = {op}(x, axis={axes})", {"x": x}, target, outs={"s": view})
                rest = big.copy()
                rest[(slice(None, None, -2),) * len(kept) + (1,)] = 0
                if not close(view, want, op, x, axes, False) or rest.any():
                    bad.append(f"{op}(x, axis={axes}) {shape} into {view.strides}")
        R.close()
        report(f"{target}.results_through_views", bad, total)


def fill_near_one(shape, dt):
    """Products that neither overflow nor vanish over thousands of rows."""
    x = 1 + rng.standard_normal(shape) / 1000
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape) / 1000
    return x.astype(dt)


def zero_extents():
    for target in TARGETS:
        R = ND.Run()
        bad, total = [], 0
        for shape, axes in [((2, 0), 1), ((0, 3), 0), ((0, 3), 1), ((3, 0), 0), ((0, 0), 1),
                            ((2, 0, 3), (0, 1)), ((4, 0), ()), ((0,), None)]:
            x = np.zeros(shape, np.float64)
            for op in NUMPY:
                if isinstance(axes, tuple) and op in ("argmin", "argmax"):
                    continue
                kd = ", keepdims=True" if op == "sum" else ""
                prog = f"s = {op}(x{axes_text(axes)}{kd})"
                if axes is None and not kd:
                    continue
                total += 1
                try:
                    want = numpy_of(op, x, axes, bool(kd))
                except ValueError:
                    want = None
                try:
                    got = R.run(prog, {"x": x}, target)["s"]
                except RL.JitcError as e:
                    if want is not None or e.status != 2 or "zero elements" not in str(e):
                        bad.append(f"{prog} {shape}: {e}")
                    continue
                if want is None or not same(got, want):
                    bad.append(f"{prog} {shape}: {got!r} against {want!r}")
        R.close()
        report(f"{target}.zero_extents", bad, total)


def with_outputs():
    """Element-wise outputs beside reductions; several reductions of one
    set of axes; results written into strided views; jitc_run over (n,)."""
    for target in TARGETS:
        R = ND.Run()
        x = ND.view_of(rng, (6, 5, 4), np.float64)
        b = ND.view_of(rng, (5, 1), np.float64)
        out = R.run("let d = x - b\nc = d * 2\ns = sum(d, axis=(0, 2))\n"
                    "k = max(d, axis=(2, 0), keepdims=True)", {"x": x, "b": b}, target)
        out.update(R.run("let d = x - b\nm = argmax(d, -1, keepdims=True)\nc2 = d + 1\n"
                         "t = all(d > 0, axis=-1)", {"x": x, "b": b}, target))
        d = x - b
        checks = [same(out["c"], d * 2), close(out["s"], np.sum(d, axis=(0, 2)), "sum", d, (0, 2), False),
                  same(out["m"], np.argmax(d, axis=-1, keepdims=True)),
                  same(out["k"], np.max(d, axis=(0, 2), keepdims=True)),
                  same(out["c2"], d + 1), same(out["t"], np.all(d > 0, axis=2))]
        if all(checks):
            ok(f"{target}.with_outputs")
        else:
            fail(f"{target}.with_outputs", f"c, s, m, k: {checks}")
        big = np.zeros((9, 8))
        view = big[::-2, 1::3]  # (5, 3), negative and skipping strides
        y = ND.view_of(rng, (3, 5), np.float64)
        R.run("s = min(y, axis=1)", {"y": y.T}, target, outs={"s": view[:, 1]})
        rest = big.copy()
        rest[::-2, 1::3][:, 1] = 0
        if same(view[:, 1], np.min(y.T, axis=1)) and not rest.any():
            ok(f"{target}.result_view")
        else:
            fail(f"{target}.result_view", "the column or its neighbours are wrong")
        z = rng.standard_normal(1000)
        got = R.r.run("s = mean(z, axis=-1)", {"z": z}, target)["s"]
        whole = R.r.run("s = mean(z)", {"z": z}, target)["s"]
        # cuda's segments add in pieces of their own, not the whole
        # reduction's order: its bits are its own, within rounding
        if same(got, whole) if target != "cuda" else np.allclose(got, whole, rtol=1e-13, atol=0):
            ok(f"{target}.jitc_run_flat")
        else:
            fail(f"{target}.jitc_run_flat", f"{got}")
        zero_d = np.array(2.5)
        got = R.run("s = sum(x, axis=0)", {"x": zero_d}, target)["s"]
        if same(got, np.sum(zero_d, axis=0)):
            ok(f"{target}.zero_d_axis")
        else:
            fail(f"{target}.zero_d_axis", f"{got!r}")
        R.close()


def queries():
    R = ND.Run()
    k = R.kernel("s = sum(x, axis=(0, -2), keepdims=True); m = max(x, (-2, 0))",
                 {"x": np.zeros(1)}, "interp")
    got = []
    for j in (1, 2):
        n, kd, axes = C.c_int(), C.c_int(), (C.c_int * 64)()
        st = L.jitc_kernel_reduction_axes(k, j, C.byref(n), axes, C.byref(kd))
        got.append((st, list(axes[: max(0, n.value)]), kd.value))
    st0 = L.jitc_kernel_reduction_axes(k, 0, None, None, None)
    L.jitc_kernel_free(k)
    k = R.kernel("s = sum(x, keepdims=True)", {"x": np.zeros(1)}, "interp")
    n = C.c_int()
    L.jitc_kernel_reduction_axes(k, 1, C.byref(n), None, None)
    L.jitc_kernel_free(k)
    want = [(0, [0, -2], 1), (0, [-2, 0], 0)]
    if got == want and st0 == 1 and n.value == -1:
        ok("reduction_axes")
    else:
        fail("reduction_axes", f"{got} {st0} {n.value}")
    R.close()


def errors():
    R = ND.Run()
    x = np.zeros((2, 3))
    cases = [("s = sum(x, axis=2)", {"x": x}, None,
              ["sum()", "'s'", "axis 2 is out of bounds for array of dimension 2"]),
             ("s = argmax(x, axis=-3)", {"x": x}, None,
              ["argmax()", "axis -3 is out of bounds for array of dimension 2"]),
             ("s = sum(x, axis=(1, -1))", {"x": x}, None, ["duplicate value in 'axis'"]),
             ("s = sum(x, axis=(0,))", {"x": np.array(1.0)}, None,
              ["axis 0 is out of bounds for array of dimension 0"]),
             ("s = sum(x, axis=1)", {"x": x}, {"s": np.zeros(3)},
              ["result 's' has shape (3,)", "(2,3)", "gives shape (2,)"]),
             ("s = sum(x, axis=1)", {"x": x}, {"s": np.zeros((2, 1))},
              ["result 's' has shape (2,1)"]),
             ("s = sum(x, axis=0)", {"x": x}, {"s": np.broadcast_to(np.zeros(1), (3,))},
              ["'s' repeats one element"])]
    m = np.zeros(8)
    cases.append(("s = sum(x, axis=1)", {"x": m[:6].reshape(2, 3)}, {"s": m[5:7]}, ["overlap"]))
    ND.expect_input_errors(R, cases, ok, fail)
    R.close()


CUDA_TYPES = ["float64", "float32", "float16", "bfloat16", "int8", "uint64", "bool",
              "complex64", "complex128"]


def cuda_compiles():
    """Every reduction over axes, of every kind of element type, with an
    element-wise output beside it, emitted for cuda and compiled by NVRTC
    (no GPU needed): one axis, a tuple with keepdims, over contiguous
    arrays and over the patterns of device arrays of any strides (strided
    inputs, results through the kept axes, a 64-bit index); the column
    form's jitc_acol among the kernels, and a program of reductions alone
    over axis 0 of a strided input (the column form's case)."""
    jitc = os.environ.get("JITC", "build/jitc")
    one = "y = x * 2\n" + "".join(f"s{k} = {op}(x, axis=1{', keepdims=True' if k % 3 == 0 else ''})\n"
                                   for k, op in enumerate(NUMPY))
    ops = [op for op in NUMPY if not op.startswith("arg")]
    tup = "y = x + 1\n" + "".join(f"s{k} = {op}(x, axis=(0, -1), keepdims=True)\n"
                                   for k, op in enumerate(ops))
    col = "".join(f"s{k} = {op}(x, axis=0)\n" for k, op in enumerate(NUMPY))
    n1, n2 = 2 + len(NUMPY), 2 + len(ops)
    cases = []
    for t in CUDA_TYPES:
        cases += [(t, one, None), (t, tup, None), (t, one, "3:" + "s" * n1 + ":k2"),
                  (t, tup, "2:b" + "s" * (n2 - 1) + ":64:k1"),
                  (t, col, "2:s" + "c" * len(NUMPY)), (t, col, "3:s" + "s" * len(NUMPY) + ":k2")]
    bad = []
    for t, prog, pat in cases:
        env = dict(os.environ)
        env.pop("JITC_CUDA_PATTERN", None)
        if pat:
            env["JITC_CUDA_PATTERN"] = pat
        r = subprocess.run([jitc, "-t", "cuda", "--emit", "ptx", "--dtype", f"x={t}", "--", prog],
                           capture_output=True, text=True, env=env)
        if r.returncode == 69 and "NVRTC" in r.stderr and not bad:
            print(f"skip axis.cuda_compiles: no NVRTC here ({r.stderr.strip()[:200]})")
            return
        entries = [f".entry jitc_a{g}(" for g in (1, 32, 256)] + [".entry jitc_ac(",
                                                                 ".entry jitc_acol("]
        if r.returncode or not all(e in r.stdout for e in entries):
            bad.append(f"{t} {pat} {prog.splitlines()[-1]}: exit {r.returncode} "
                       f"{r.stderr.strip()[:300]}")
    report("cuda_compiles", bad, len(cases))


against_numpy()
segments_as_whole()
threads()
rows_form()
results_through_views()
zero_extents()
with_outputs()
queries()
errors()
cuda_compiles()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
