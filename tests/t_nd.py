#!/usr/bin/env python3
"""tests/t_nd.py -- NumPy's array model through the library (jitc_run_arrays,
jitc_broadcast_shape; ctypes) on every target of JITC_TARGETS (cuda where
there is a GPU: the host pipeline's gathers and scatters; make test-gpu runs
it so), against NumPy on the same views.

- Random shapes of 0 to 6 axes, broadcast against each other by NumPy's
  rules (axes of 1, missing leading axes), as views: slices with steps,
  reversed axes (negative strides), transposes, Fortran order, views of
  views, broadcast views (zero strides), size-0 and 1-element axes, fields
  of record arrays and unaligned arrays.
- Element-wise programs of one or two inputs, in place (`a += b`), with the
  element index `i` (its position in C order in the broadcast shape), mixed
  types; and whole reductions, which must give the bits of the same program
  over a contiguous copy on the same target (the same blocks).
- A program of scalars alone runs over the shape () of one element, or over
  the outputs' shape where they are given (NumPy's out=); inputs broadcast
  to a larger output, an output never broadcasts.
- The errors: shapes that do not broadcast (both shapes and the axis named),
  an output of the wrong shape, a written array with a repeated element, a
  written array overlapping an input; and an output that is an input's own
  elements (`a = a * 2` through two names) is fine.
"""
import ctypes as C
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduce_lib as RL  # noqa: E402

RL.under_sanitizers("nd")
import nd_lib as ND  # noqa: E402
from nd_lib import same  # noqa: E402

warnings.simplefilter("ignore")
L = RL.lib()
L.jitc_target_available.argtypes = [C.c_void_p, C.c_int]
passed = failed = 0


def available(target):
    """Whether this machine has the target (a cuda target needs a GPU)."""
    ctx = L.jitc_context_new()
    try:
        return L.jitc_target_available(ctx, RL.TARGETS[target]) == 0
    finally:
        L.jitc_context_free(ctx)


TARGETS = []
for t in os.environ.get("JITC_TARGETS", "interp cpu").split():
    if available(t):
        TARGETS.append(t)
    else:
        print(f"skip nd.{t}: not on this machine", flush=True)


def ok(name):
    global passed
    passed += 1
    print(f"ok nd.{name}", flush=True)


def fail(name, why):
    global failed
    failed += 1
    print(f"FAIL nd.{name}: {why}", flush=True)


rng = np.random.default_rng(21)


def random_shape(nd, size_max=400):
    return ND.random_shape(rng, nd, size_max)


def view_of(shape, dtype):
    return ND.view_of(rng, shape, dtype)


def broadcast_partner(shape):
    return ND.broadcast_partner(rng, shape)


Run = ND.Run


PROGRAMS = [  # program, NumPy's, dtypes of a and b
    ("c = a + b", lambda a, b, i: a + b),
    ("c = a * b - 1", lambda a, b, i: a * b - 1),
    ("c = where(a > b, a, b * 2)", lambda a, b, i: np.where(a > b, a, b * 2)),
    ("c = a + b - i", lambda a, b, i: a + b - i),
    ("c = f64(a) / b", lambda a, b, i: a.astype(np.float64) / b),
]


def elementwise():
    for target in TARGETS:
        R = Run()
        bad = []
        for trial in range(160):
            prog, ref = PROGRAMS[trial % len(PROGRAMS)]
            dt = [np.float64, np.float32, np.int32, np.int16, np.uint8][trial % 5]
            shape = random_shape(int(rng.integers(0, 7)))
            sb = broadcast_partner(shape)
            if rng.integers(2):
                shape, sb = sb, shape
            a, b = view_of(shape, dt), view_of(sb, dt)
            full = np.broadcast_shapes(a.shape, b.shape)
            i = np.arange(int(np.prod(full, dtype=np.int64)), dtype=np.int64).reshape(full)
            with np.errstate(all="ignore"):
                want = ref(a, b, i)
            try:
                got = R.run(prog, {"a": a, "b": b}, target)["c"]
            except RL.JitcError as e:
                bad.append(f"{prog} {a.shape}{a.strides} {b.shape}{b.strides}: {e}")
                continue
            if not same(got, want):
                bad.append(f"{prog} {dt.__name__} a{a.shape}{a.strides} b{b.shape}{b.strides}")
        R.r.close()
        if bad:
            fail(f"{target}.elementwise", f"{len(bad)} of 160: " + "; ".join(bad[:3]))
        else:
            ok(f"{target}.elementwise (160 random views and broadcasts)")


def large():
    """Many blocks and threads: rows that straddle blocks, a row and a
    column broadcast, a transpose, a reversed step."""
    for target in TARGETS:
        R = Run()
        bad = []
        # Columns and 0-d arrays repeating one element over whole blocks
        # (the cpu target's variant reading it once), and over runs that
        # blocks straddle.
        for sa, sb in [((64, 1000), (1000,)), ((64, 1000), (64, 1)), ((333, 77, 3), (77, 1)),
                       ((1, 50000), (50000,)), ((3, 5000), (3, 1)), ((2, 8192), (2, 1)),
                       ((3, 2, 4096), (3, 1, 1)), ((20000,), ())]:
            for trial, dt in enumerate([np.float32, np.float16, np.int8]):
                a, b = view_of(sa, dt), view_of(sb, dt)
                got = R.run("c = a * b + i", {"a": a, "b": b}, target)["c"]
                i = np.arange(a.size).reshape(a.shape)
                with np.errstate(all="ignore"):
                    want = a * b + i
                if not same(got, want):
                    bad.append(f"{dt.__name__} a{a.shape}{a.strides} b{b.shape}{b.strides}")
            a, b = view_of(sa, np.float32), view_of(sb, np.float32) > 0
            got = R.run("c = where(b, a, -a)", {"a": a, "b": b}, target)["c"]
            if not same(got, np.where(b, a, -a)):
                bad.append(f"where bool b{b.shape}{b.strides}")
        R.r.close()
        if bad:
            fail(f"{target}.large", "; ".join(bad[:3]))
        else:
            ok(f"{target}.large (many blocks, threads)")


def inplace_and_outputs():
    for target in TARGETS:
        R = Run()
        a = view_of((6, 5, 4), np.float64)
        b = view_of((5, 1), np.float64)
        want = a + b
        R.run("a += b", {"a": a, "b": b}, target)
        if same(a, want):
            ok(f"{target}.inplace_strided")
        else:
            fail(f"{target}.inplace_strided", f"a{a.strides}")
        # An output that is a view, written in place: a column, reversed.
        m = np.zeros((7, 9))
        x = view_of((7,), np.float64)
        R.run("c = x * 2", {"x": x}, target, outs={"c": m[::-1, 3]})
        if same(m[::-1, 3], x * 2) and not m[:, [0, 1, 2, 4, 5, 6, 7, 8]].any():
            ok(f"{target}.output_view")
        else:
            fail(f"{target}.output_view", "the column or its neighbours are wrong")
        # An output that is an input's own elements, through two names.
        y = view_of((4, 6), np.float32)
        want = y * 2
        R.run("c = y * 2", {"y": y}, target, outs={"c": y})
        if same(y, want):
            ok(f"{target}.output_aliases_input")
        else:
            fail(f"{target}.output_aliases_input", "wrong values")
        R.r.close()


def reductions():
    for target in TARGETS:
        R = Run()
        bad = []
        progs = [("s = sum(a * b)", "s"), ("s = max(a - b)", "s"), ("s = argmax(a + b)", "s"),
                 ("s = mean(a)", "s"), ("s = prod(b)", "s"), ("s = any(a > 3)", "s")]
        for trial, (prog, name) in enumerate(progs * 4 + [("s = sum(a * b)", "s")] * 12):
            dt = np.float64 if trial >= 24 else np.float32  # float64 sums show the order
            a = view_of(random_shape(3, 20000), dt)
            b = view_of(broadcast_partner(a.shape), dt)
            if trial % 6 == 5 and trial < 24:  # a column repeating over whole blocks
                a, b = view_of((3, 9000), dt), view_of((3, 1), dt)
            if prog == "s = argmax(a + b)" and trial % 2:
                a[(0,) * a.ndim] = np.nan  # NaN counts as the extreme, in C order
            full = np.broadcast_shapes(a.shape, b.shape) if "a" in prog[4:] else b.shape
            # The copies laid out in the order the run takes: memory's order,
            # C order where argmax counts positions.
            ca, cb = ND.copies_in_order([a if "a" in prog[4:] else b, b], full,
                                        keep_c_order="argmax" in prog)
            uses = {nm: x for nm, x in (("a", a), ("b", b)) if nm in prog[4:]}
            cuses = {nm: x for nm, x in (("a", ca), ("b", cb)) if nm in prog[4:]}
            got = R.run(prog, uses, target)[name]
            contig = R.run(prog, cuses, target)[name]
            if not same(got, contig):
                bad.append(f"{prog} a{a.shape}{a.strides} b{b.shape}{b.strides}: {got} against "
                           f"{contig} over contiguous copies")
        R.r.close()
        if bad:
            fail(f"{target}.reductions", "; ".join(bad[:3]))
        else:
            ok(f"{target}.reductions (bits of the run over copies laid out in the run's order)")


def scalars_alone():
    for target in TARGETS:
        R = Run()
        got = R.run("y = sin(0.5) * 3 + 1", {}, target)["y"]
        want = np.sin(0.5) * 3 + 1
        if got.shape == () and same(got, np.float64(want)):
            ok(f"{target}.scalars_alone")
        else:
            fail(f"{target}.scalars_alone", f"{got!r} against {want!r}")
        R.r.close()


def outputs_give_the_shape():
    """NumPy's rule for out=: the run's shape is the broadcast of the inputs
    and the outputs, an output never broadcast.  A program of no input
    array fills the outputs given (np.add(1, 2, out=np.empty(5))), inputs
    broadcast to a larger output (np.add(row, 1, out=matrix)), the element
    index counts in the output's shape, and a reduction reduces the run's
    shape; outputs are strided views."""
    for target in TARGETS:
        R = Run()
        bad = []
        try:
            outputs_shape_cases(R, target, bad)
        except RL.JitcError as e:
            bad.append(f"refused: {e}")
        R.r.close()
        if bad:
            fail(f"{target}.outputs_give_the_shape", "; ".join(bad[:3]))
        else:
            ok(f"{target}.outputs_give_the_shape (no input; inputs broadcast to a larger output)")


def outputs_shape_cases(R, target, bad):
    for shape in [(5,), (2, 3), (3, 1, 4), (0, 3), (1,)]:
        o = view_of(shape, np.float64)
        n = int(np.prod(shape))
        got = R.run("o = 1.5", {}, target, {"o": o})["o"]
        if not (got is o and same(o, np.add(1, 0.5, out=np.empty(shape)))):
            bad.append(f"o = 1.5 into {shape}{o.strides}: {o}")
        k = np.zeros(shape, np.int64)
        R.run("k = i", {}, target, {"k": k})
        if not same(k, np.arange(n).reshape(shape)):
            bad.append(f"k = i into {shape}: {k}")
        b = view_of(shape, np.float64)  # the kernel's output type: outputs are not declared
        R.run("b = i * 0.5 + 2", {}, target, {"b": b})
        if not same(b, np.arange(n).reshape(shape) * 0.5 + 2):
            bad.append(f"b = i * 0.5 + 2 into {shape}{b.strides}: {b}")
    for sa, so in [((3,), (2, 3)), ((3, 1), (2, 3, 4)), ((1,), (0,)), ((4,), (1, 1, 4)),
                   ((2, 1, 3), (2, 5, 3))]:
        a = view_of(sa, np.float64)
        o = view_of(so, np.float64)
        R.run("o = a * 2 + i", {"a": a}, target, {"o": o})
        i = np.arange(int(np.prod(so))).reshape(so)
        if not same(o, np.add(a * 2, i, out=np.empty(so))):
            bad.append(f"o = a * 2 + i: a{sa} into o{so}")
    # Outputs that add axes of extent 1 alone count no element twice: a
    # reduction beside them is every input element once, as np.sum.
    a, o = view_of((4,), np.float64), view_of((1, 1, 4), np.float64)
    r = R.run("o = a * 2; s = sum(a)", {"a": a}, target, {"o": o})
    if not (same(o, (a * 2).reshape(1, 1, 4)) and np.isclose(r["s"], np.sum(a), rtol=1e-12)):
        bad.append(f"o = a * 2; s = sum(a) into (1, 1, 4): {r['s']}")


def errors():
    R = Run()
    cases = [
        ("c = a + b", {"a": np.zeros((2, 3)), "b": np.zeros(4)}, None,
         ["'a' has shape (2,3)", "'b' has shape (4,)", "axis 1", "3 against 4"]),
        ("c = a + b", {"a": np.zeros((2, 1, 5)), "b": np.zeros((3, 4, 1))}, None,
         ["(2,1,5)", "(3,4,1)", "axis 0"]),
        ("c = a + 1", {"a": np.zeros((2, 3))}, {"c": np.zeros(6)},
         ["output 'c' has shape (6,)", "is (2,3)"]),
        # An output is never broadcast: smaller than the inputs, smaller than
        # another output, of extent 1 where an input has 0 (NumPy's out=).
        ("c = a + 1", {"a": np.zeros((2, 3))}, {"c": np.zeros(3)},
         ["output 'c' has shape (3,)", "inputs is (2,3)", "not broadcast"]),
        ("c = a + 1; d = a * 2", {"a": np.zeros(3)}, {"c": np.zeros((2, 3)), "d": np.zeros(3)},
         ["output 'd' has shape (3,)", "inputs and outputs is (2,3)"]),
        ("c = a + 1", {"a": np.zeros(0)}, {"c": np.zeros(1)},
         ["output 'c' has shape (1,)", "is (0,)"]),
        # A reduction beside outputs that widen the run would count an
        # input's elements more than once (np.sum(a) counts each once).
        ("o = a * 2; s = sum(a)", {"a": np.zeros(3)}, {"o": np.zeros((2, 3))},
         ["widen the run to shape (2,3)", "more than once"]),
        ("c = 1.5; d = 2", {}, {"c": np.zeros((2, 3)), "d": np.zeros((4, 3))},
         ["output 'd' has shape (4,3)", "outputs is (2,3)"]),
        ("a += b", {"a": np.zeros(3), "b": np.zeros((2, 3))}, None,
         ["'a' has shape (3,)", "(2,3)"]),
        ("c = a + 1", {"a": np.zeros((2, 3))}, {"c": np.broadcast_to(np.zeros(3), (2, 3))},
         ["'c' is written", "stride 0"]),
    ]
    m = np.zeros(10)
    cases.append(("c = a + 1", {"a": m[:8]}, {"c": m[2:]}, ["overlap"]))
    ND.expect_input_errors(R, cases, ok, fail)
    R.r.close()


def views(name, cases, more):
    """Runs cases (name, program, inputs, outs or None, NumPy's result c) on
    every target against NumPy, then more(R, target), which gives a list of
    what went wrong; one line for them all.  Given outputs are filled with
    78, which no case computes, before each run."""
    bad = []
    for target in TARGETS:
        R = Run()
        for case, prog, inputs, outs, want in cases:
            for o in (outs or {}).values():
                o.fill(78)  # no element left as the target before wrote it
            got = R.run(prog, inputs, target, outs=outs)["c"]
            if not same(got if outs is None else outs["c"], want):
                bad.append(f"{target} {case}")
        bad += [f"{target} {b}" for b in more(R, target)]
        R.r.close()
    if bad:
        fail(name, "; ".join(bad[:4]))
    else:
        ok(f"{name} ({len(cases)} views and more on {' '.join(TARGETS)})")


def transposes():
    """Transposed views, which the cpu target moves whole rows at a time in
    tiles (move.c): whole tiles and tiles cut by the edges, blocks that
    start and end inside a row, rows past the end of an outer axis, rows
    that step back or over elements, every element size, written through a
    transposed output, in place, and under a whole reduction."""
    rng_t = np.random.default_rng(5)

    def base(shape, dt):
        return ND.fill(rng_t, np.empty(shape, dt))

    cases = []
    for dt in (np.int8, np.float16, np.float32, np.float64, np.complex128):
        for shape in ((256, 256), (600, 700), (130, 77), (2, 5000), (5000, 3)):
            m = base(shape, dt)
            cases.append((f"{dt.__name__}{shape}", "c = a * 2", {"a": m.T}, None, m.T * 2))
    # Rows of 1 KB or more whose count of elements divides the blocks.
    for dt, shape in ((np.float32, (512, 300)), (np.float64, (256, 333)), (np.int16, (1024, 70)),
                      (np.complex128, (128, 90)), (np.float32, (4096, 3))):
        m = base(shape, dt)
        cases.append((f"long rows {dt.__name__}{shape}", "c = a * 2", {"a": m.T}, None, m.T * 2))
    out = np.zeros((512, 300), np.float32)
    x = base((300, 512), np.float32)
    cases.append(("long rows, output", "c = x * 3 + y", {"x": x, "y": x.copy()}, {"c": out.T},
                  x * 3 + x))
    # Every array transposed alike: run in their memory's order (one run),
    # except where `i` counts positions in C order.
    m, o1, o2 = base((300, 400), np.float64), np.zeros((300, 400)), np.zeros((300, 400))
    cases.append(("alike", "c = a * 2 + 1", {"a": m.T}, {"c": o1.T}, m.T * 2 + 1))
    idx = np.arange(m.size, dtype=np.float64).reshape(m.T.shape)
    cases.append(("alike, i", "c = a + f64(i)", {"a": m.T}, {"c": o2.T}, m.T + idx))
    f = np.asfortranarray(base((7, 6, 5), np.float32))
    cases.append(("Fortran, i", "c = a * 2 + f32(i)", {"a": f}, {"c": np.zeros_like(f)},
                  f * 2 + np.arange(f.size, dtype=np.float32).reshape(f.shape)))
    m = base((3, 40, 50), np.float32)
    a = m.transpose(0, 2, 1)  # a row band runs past each of the outer axis's ends
    cases.append(("3-d", "c = a - 1", {"a": a}, None, a - 1))
    m = base((300, 400), np.float64)
    for nm, v in (("reversed", m[::-1].T), ("steps", m[:, ::2].T), ("both", m[::-2, ::-1].T)):
        cases.append((nm, "c = a + 1", {"a": v}, None, v + 1))
    out = np.zeros((500, 300), np.float32)
    x = base((300, 500), np.float32)
    cases.append(("output", "c = x * 3", {"x": x}, {"c": out.T}, x * 3))
    m, b = base((400, 300), np.float64), base((400,), np.float64)
    cases.append(("row", "c = a + b", {"a": m.T, "b": b}, None, m.T + b))

    def more(R, target):
        bad = []
        a0 = base((350, 650), np.float64)
        a, b = a0.T, a0.T + 0
        R.run("a += 1.5", {"a": a}, target)
        if not same(a, b + 1.5):
            bad.append("in place")
        a0 = base((512, 700), np.float32)
        a, b = a0.T, a0.T + 0
        R.run("a += a * 2", {"a": a}, target)
        if not same(a, b + b * 2):
            bad.append("in place, long rows")
        ties = np.zeros((40, 30), np.float32)
        ties[[3, 5, 9], [7, 2, 20]] = 9  # argmax: the first of three in C order
        if not same(R.run("k = argmax(a)", {"a": ties.T}, target)["k"], np.argmax(ties.T)):
            bad.append("argmax of ties")
        for q in (base((700, 900), np.int64), base((1024, 512), np.float32),
                  base((512, 1024), np.float64)):
            # A whole sum runs in the memory's order: q's C order.
            got = R.run("s = sum(a * 3)", {"a": q.T}, target)["s"]
            if not same(got, R.run("s = sum(a * 3)", {"a": q}, target)["s"]) or \
                    (q.dtype == np.int64 and not same(got, np.sum(q.T * 3))):
                bad.append(f"sum {q.dtype}")
        return bad
    views("transposes", cases, more)


def streamed():
    """A transposed input beside a C-order output large enough (16 MB or
    more) for the cpu target to run along the input's memory and scatter the
    output in tiles of lines stored past the caches (move.c), and the
    same at sizes under that: outputs whose memory starts at every 8 bytes
    of a line (the blocks' grid shifted so that each band of rows starts a
    line; 8 bytes off: no stores past the caches), shapes whose rows and
    columns end inside a tile, float32, float64, and the sizes with no
    vector path (int16, complex128), in place, a transposed output beside a
    C-order input, and two inputs that disagree (C order wins)."""
    rng_s = np.random.default_rng(11)

    def out_at(shape, dt, off):
        raw = np.zeros(int(np.prod(shape)) * np.dtype(dt).itemsize + 128, np.uint8)
        at = (-raw.ctypes.data) % 64 + off
        return raw[at:at + int(np.prod(shape)) * np.dtype(dt).itemsize].view(dt).reshape(shape)

    cases = []
    for dt, shape, offs in ((np.float32, (2048, 2048), (0, 16, 48)),
                            (np.float64, (1501, 1403), (0, 8, 32)),
                            (np.float32, (2050, 2047), (0, 16)),
                            (np.float32, (300, 517), (0, 16, 4)),
                            (np.float64, (97, 1000), (24,)),
                            (np.int16, (2049, 2051), (2,)),
                            (np.complex128, (700, 800), (16,))):
        m = ND.fill(rng_s, np.empty(shape, dt))
        for off in offs:
            cases.append((f"{dt.__name__}{shape} +{off}", "c = a * 3 - 1", {"a": m.T},
                          {"c": out_at(shape[::-1], dt, off)}, m.T * dt(3) - dt(1)))
    x = ND.fill(rng_s, np.empty((2048, 2100), np.float32))
    cases.append(("output transposed", "c = x + 2", {"x": x}, {"c": out_at((2100, 2048),
                  np.float32, 16).T}, x + np.float32(2)))
    y = ND.fill(rng_s, np.empty((2048, 2048), np.float32))
    cases.append(("inputs disagree", "c = a - b", {"a": x[:, :2048].T, "b": y},
                  {"c": out_at((2048, 2048), np.float32, 0)}, x[:, :2048].T - y))

    def more(R, target):
        m = ND.fill(rng_s, np.empty((2048, 2080), np.float64))
        a, want = m.T, m.T * 2 + 1
        R.run("a = a * 2 + 1", {"a": a}, target)
        return [] if same(a, want) else ["in place"]
    views("streamed", cases, more)


def every_other():
    """Views stepping two elements (x[::2]), which the cpu target reads in
    place, every other element, in a variant of the kernel (cpu/memory.c):
    every vector width's tail, the last element the last of its memory,
    rows of a matrix long enough for the variant and too short for it, one
    beside a broadcast column (both kinds of variant at once), written
    (not read in place), and under a whole reduction, whose bits must be
    those over a contiguous copy."""
    rng_e = np.random.default_rng(7)
    cases = []
    for dt in (np.bool_, np.int8, np.uint16, np.float16, np.float32, np.float64, np.int64):
        for n in (1, 15, 16, 17, 4095, 4096, 4097, 70001):
            x = ND.fill(rng_e, np.empty(2 * n - 1, dt))[::2]  # its last element ends the memory
            if dt == np.bool_:
                cases.append((f"bool {n}", "c = a != b", {"a": x, "b": x[::-1]}, None,
                              x != x[::-1]))
            else:
                cases.append((f"{dt.__name__} {n}", "c = a * 3 - a", {"a": x}, None,
                              x * dt(3) - x))
    x = ND.fill(rng_e, np.empty(20001, np.float32))[1::2]
    cases.append(("odd start", "c = a + 1", {"a": x}, None, x + np.float32(1)))
    for shape in ((3, 10000), (40, 30)):
        m = ND.fill(rng_e, np.empty(shape, np.float64))[:, ::2]
        col = ND.fill(rng_e, np.empty((shape[0], 1), np.float64))
        cases.append((f"rows {shape}", "c = a * b", {"a": m, "b": col}, None, m * col))

    def more(R, target):
        bad = []
        x = ND.fill(rng_e, np.empty(20000, np.float32))
        a, want = x[::2], x[::2] * 2
        R.run("a *= 2", {"a": a}, target)
        if not same(a, want):
            bad.append("in place")
        x = ND.fill(rng_e, np.empty(50001, np.float64))[::2]
        s1 = R.run("s = sum(a * 0.5)", {"a": x}, target)["s"]
        s2 = R.run("s = sum(a * 0.5)", {"a": x.copy()}, target)["s"]
        if s1.tobytes() != s2.tobytes():
            bad.append(f"sum {s1!r} against {s2!r} over a copy")
        return bad
    views("every_other", cases, more)


elementwise()
large()
transposes()
streamed()
every_other()
inplace_and_outputs()
reductions()
scalars_alone()
outputs_give_the_shape()
errors()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
