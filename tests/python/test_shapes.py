"""NumPy's array model through jitc.evaluate: arrays of any shape and
strides in place (slices, reversed and transposed views, views of views,
broadcast views with zero strides, Fortran order, record fields, unaligned
buffers), broadcasting, the outputs' shape and memory order, out= with its
shape, dtype, casting and aliasing, and scalars alone; each against NumPy."""
import numpy as np
import pytest

import jitc

# ---- random views ----


def random_view(rng, shape, dtype):
    """An array of `shape` that is a view of a larger one: each axis stepped
    by 1, 2 or -1 (reversed), -2, the axes in a random memory order (a
    transpose), sometimes a view of a view; values from rng."""
    nd = len(shape)
    steps = [int(rng.choice([1, 1, 2, -1, -2])) for _ in range(nd)]
    perm = rng.permutation(nd) if nd else np.arange(0)
    base_shape = [shape[d] * abs(steps[d]) + int(rng.integers(0, 2)) for d in range(nd)]
    base = (rng.standard_normal([base_shape[d] for d in perm]) * 10).astype(dtype)
    v = base.transpose(np.argsort(perm)) if nd else base
    v = v[tuple(slice(None, None, s) for s in steps)]
    v = v[tuple(slice(0, n) for n in shape)]
    if rng.random() < 0.3 and nd:  # a view of a view: step back through a reversal
        v = v[::-1][::-1]
    assert v.shape == tuple(shape), (v.shape, shape)
    return v


def random_operand(rng, shape, dtype):
    """A random view of `shape`, or (sometimes) a broadcast view: zero
    strides where the array has one element along an axis."""
    if rng.random() < 0.25 and len(shape):
        small = [1 if rng.random() < 0.5 else n for n in shape]
        return np.broadcast_to(random_view(rng, small, dtype), shape)
    return random_view(rng, shape, dtype)


def broadcast_shapes(rng, k):
    """A result shape of up to 6 axes (extents 0 to 4, 1-element axes
    included) and k input shapes that broadcast to it: leading axes dropped,
    some extents made 1."""
    nd = int(rng.integers(0, 7))
    out = [int(rng.choice([0, 1, 1, 2, 3, 4])) if rng.random() < 0.1 else
           int(rng.integers(1, 5)) for _ in range(nd)]
    shapes = []
    for _ in range(k):
        drop = int(rng.integers(0, nd + 1)) if rng.random() < 0.4 else 0
        s = [1 if rng.random() < 0.25 else n for n in out[drop:]]
        shapes.append(tuple(s))
    return tuple(out), shapes


def same(got, want):
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                  got.dtype, want.dtype)
    assert np.array_equal(got, want, equal_nan=True)


PROGRAMS = [
    # (program, its NumPy form); exact in every type
    ("a * b + c", lambda a, b, c: a * b + c),
    ("where(a > b, a - c, b)", lambda a, b, c: np.where(a > b, a - c, b)),
    ("maximum(a, b) * 2 - c", lambda a, b, c: np.maximum(a, b) * 2 - c),
]


@pytest.mark.parametrize("seed", range(40))
def test_random_shapes_strides_broadcasting(target, seed):
    """Random shapes up to 6-D broadcast together, each operand a random
    view (negative and zero strides, transposes, views of views, 0- and
    1-element axes), against NumPy: the values, and the result's memory
    layout (order='K' lays it out as NumPy's ufuncs do)."""
    rng = np.random.default_rng(seed)
    _, shapes = broadcast_shapes(rng, 3)
    dts = [rng.choice([np.float64, np.float32, np.int32, np.int64]) for _ in range(3)]
    a, b, c = (random_operand(rng, s, dt) for s, dt in zip(shapes, dts))
    for program, numpy_form in PROGRAMS:
        want = numpy_form(a, b, c)
        got = jitc.evaluate(program, target=target, a=a, b=b, c=c)
        same(got, np.asarray(want))
    got = jitc.evaluate("a * b", target=target, a=a, b=b)
    want = np.multiply(a, b)
    same(got, want)
    if want.size > 1:
        assert got.strides == want.strides, (got.strides, want.strides, a.strides, b.strides)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("seed", range(12))
def test_order_is_numpy_s(target, order, seed):
    """order= lays the result out as NumPy's order= of a ufunc."""
    rng = np.random.default_rng(100 + seed)
    _, shapes = broadcast_shapes(rng, 2)
    a = random_operand(rng, shapes[0], np.float64)
    b = random_operand(rng, shapes[1], np.float64)
    if rng.random() < 0.3:
        a = np.asfortranarray(a)
    got = jitc.evaluate("a + b", target=target, order=order, a=a, b=b)
    want = np.add(a, b, order=order)
    same(got, want)
    if want.size > 1:
        assert got.strides == want.strides, (order, got.strides, want.strides)
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.flags.f_contiguous == want.flags.f_contiguous


def test_views_in_place(target):
    """Slices, reversed arrays, columns, transposes and Fortran order run in
    place: an in-place update writes through the view."""
    m = np.arange(24.0).reshape(4, 6)
    for v in (m[::2], m[::-1], m[:, 3], m.T, m[1:3, ::-2], np.asfortranarray(m)):
        want = v + 1
        got = jitc.evaluate("x + 1", target=target, x=v)
        same(got, want)
    x = np.arange(10.0)
    v = x[::-3]
    r = jitc.evaluate("v[i] += 100", target=target, v=v)
    assert r is v
    assert np.array_equal(x, np.where(np.arange(10) % 3 == 0, np.arange(10.0) + 100,
                                      np.arange(10.0)))


def test_record_fields_and_unaligned(target):
    """A field of a record array (its stride the record's size) and a buffer
    at an odd offset (unaligned elements) run in place."""
    rec = np.zeros(7, dtype=[("x", "<f8"), ("y", "<i4"), ("z", "<u1")])
    rec["x"] = np.arange(7) * 1.5
    rec["y"] = np.arange(7) - 3
    x, y = rec["x"], rec["y"]
    assert not x.flags.aligned and x.strides == (13,)
    same(jitc.evaluate("x * y + 1", target=target), x * y + 1)
    raw = bytearray(8 * 9 + 1)
    u = np.frombuffer(raw, dtype="<f8", offset=1, count=9)
    assert not u.flags.aligned
    u[:] = np.arange(9) * 0.25
    same(jitc.evaluate("u * 2 - x[i]", target=target, u=u, x=np.ones(9)), u * 2 - 1)
    w = np.frombuffer(bytearray(8 * 5 + 3), dtype="<f8", offset=3, count=5)
    assert w.flags.writeable and not w.flags.aligned
    jitc.evaluate("w[i] = i * 0.5", target=target, w=w)
    assert np.array_equal(w, np.arange(5) * 0.5)
    rec2 = np.zeros(4, dtype=[("a", "<i2"), ("b", "<f4")])
    b = rec2["b"]
    jitc.evaluate("b[i] = i + 0.25", target=target, b=b)
    assert np.array_equal(rec2["b"], np.arange(4) + np.float32(0.25))


def test_size_zero_and_one(target):
    for shape in [(0,), (3, 0), (0, 4), (1,), (1, 1, 1), (2, 1, 3)]:
        a = np.ones(shape)
        same(jitc.evaluate("a * 2 + 1", target=target), a * 2 + 1)
        same(jitc.evaluate("a + r", target=target, r=np.arange(shape[-1] or 1.0)[:shape[-1]]),
             a + np.arange(shape[-1] or 1.0)[:shape[-1]])


def test_index_is_c_order_position(target):
    """i is the element's position in C order in the broadcast shape,
    whatever the memory order."""
    a = np.zeros((3, 4), order="F")
    same(jitc.evaluate("a + i", target=target, a=a), np.arange(12.0).reshape(3, 4))
    same(jitc.evaluate("a * 0 + i", target=target, a=a[::-1, ::-2]),
         np.arange(6.0).reshape(3, 2))
    # outputs alone: their shape is the run's, i their elements' C-order position
    for o in (np.zeros((3, 4)), np.zeros((3, 4), order="F"), np.zeros((6, 8))[::2, 1::2]):
        jitc.evaluate("o[i] = i", target=target, o=o)
        assert np.array_equal(o, np.arange(12.0).reshape(3, 4))


# ---- scalars alone ----


@pytest.mark.parametrize("x", [3, 2.5, np.float32(2), np.int16(7), np.array(4.0, np.float32),
                               True, 1 + 2j])
def test_scalars_alone(target, x):
    """A program of scalars alone gives a 0-d array, as numexpr's evaluate
    does, of NumPy's type (NEP 50: a Python number is weak)."""
    got = jitc.evaluate("2 * 3 + x", target=target)
    want = np.asarray(2 * 3 + x)
    assert isinstance(got, np.ndarray) and got.shape == ()
    assert got.dtype == want.dtype and got[()] == want[()]


def test_functions_of_constants(target):
    got = jitc.evaluate("arcsin(0.5)", target=target)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.float64
    assert got[()] == np.arcsin(0.5)
    got = jitc.evaluate("c = 2 * 3", target=target)
    assert got.shape == () and got.dtype == np.int64 and got[()] == 6
    out = np.zeros((), np.float64)
    assert jitc.evaluate("sqrt(2.0)", target=target, out=out) is out and out[()] == np.sqrt(2.0)


# ---- out= ----


def test_out_written_and_returned(target):
    a = np.arange(12.0).reshape(3, 4)
    out = np.empty((3, 4))
    assert jitc.evaluate("a * 2", target=target, out=out) is out
    assert np.array_equal(out, a * 2)
    # out may be larger than the inputs' broadcast shape: they broadcast to it
    big = np.empty((2, 3, 4))
    assert jitc.evaluate("a + 1", target=target, out=big) is big
    assert np.array_equal(big, np.broadcast_to(a + 1, (2, 3, 4)))
    # a strided out, in place
    m = np.zeros((6, 8))
    jitc.evaluate("a - 1", target=target, out=m[::2, 1::2])
    assert np.array_equal(m[::2, 1::2], a - 1) and m[1::2].sum() == 0 and m[:, ::2].sum() == 0
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape "
                       r"\(3,3\) doesn't match the broadcast shape \(3,4\)"):
        jitc.evaluate("a + 1", target=target, out=np.empty((3, 3)))
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(4,\)"):
        jitc.evaluate("a + 1", target=target, out=np.empty(4))


def test_outputs_give_the_shape(target, rng):
    """NumPy's rule for out=: the run's shape is the broadcast of the inputs
    and the outputs given, an output never broadcast.  Without an input
    array the outputs give it (np.add(1, 2, out=np.empty(5)) fills 5
    elements), views included; inputs broadcast to a larger output, the
    index counting in its shape, and a reduction reduces that shape."""
    for shape in [(5,), (2, 3), (3, 1, 4), (0, 2)]:
        n = int(np.prod(shape))
        o = random_view(rng, shape, np.float64)
        assert jitc.evaluate("o = 1.5", target=target, o=o) is o
        same(o, np.add(1, 0.5, out=np.empty(shape)))
        k = random_view(rng, shape, np.int64)
        r = jitc.evaluate("k = i; h = i * 0.5", target=target, k=k)
        same(k, np.arange(n).reshape(shape))
        same(r["h"], np.arange(n).reshape(shape) * 0.5)  # allocated with the run's shape
        out = random_view(rng, shape, np.float64)
        assert jitc.evaluate("2.5 + i", target=target, out=out) is out
        same(out, np.arange(n).reshape(shape) + 2.5)
    row = np.arange(3.0)
    o = random_view(rng, (4, 3), np.float64)
    jitc.evaluate("o = row * i", target=target, row=row, o=o)
    same(o, np.multiply(row, np.arange(12).reshape(4, 3), out=np.empty((4, 3))))
    # a reduction beside outputs that widen the run would count row's
    # elements four times, where np.sum(row) counts each once
    with pytest.raises(ValueError, match="more than once"):
        jitc.evaluate("o = row * i; s = sum(row)", target=target, row=row, o=o)
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(3,\)"):
        jitc.evaluate("o = i; p = i", target=target, o=np.empty((2, 3)), p=np.empty(3))


def test_out_casting(target):
    """NumPy's casting rules for an out= of another dtype; by default
    'same_kind', NumPy's ufuncs' default (np.add(a, 1, out=f32)) and
    numexpr's."""
    a = np.arange(6.0)
    with pytest.raises(TypeError, match="Cannot cast .* from dtype\\('float64'\\) to "
                       "dtype\\('float32'\\) with casting rule 'safe'"):
        jitc.evaluate("a + 1", target=target, out=np.empty(6, np.float32), casting="safe")
    f32 = np.empty(6, np.float32)
    assert jitc.evaluate("a + 1", target=target, out=f32) is f32
    assert np.array_equal(f32, np.add(a, 1, out=np.empty(6, np.float32)))
    f32[:] = 0
    assert jitc.evaluate("a + 1", target=target, out=f32, casting="same_kind") is f32
    assert np.array_equal(f32, (a + 1).astype(np.float32))
    i32 = np.empty(6, np.int32)
    with pytest.raises(TypeError):
        np.multiply(a, 1.5, out=i32)  # NumPy's default refuses it too
    with pytest.raises(TypeError, match="same_kind"):
        jitc.evaluate("a * 1.5", target=target, out=i32)
    with pytest.raises(TypeError, match="same_kind"):
        jitc.evaluate("a * 1.5", target=target, out=i32, casting="same_kind")
    jitc.evaluate("a * 1.5", target=target, out=i32, casting="unsafe")
    assert np.array_equal(i32, (a * 1.5).astype(np.int32))
    f64 = np.empty(6)
    jitc.evaluate("b + 1", target=target, out=f64, b=np.arange(6, dtype=np.int32))
    assert np.array_equal(f64, np.arange(6) + 1.0)
    with pytest.raises(ValueError, match="casting"):
        jitc.evaluate("a + 1", target=target, out=f64, casting="sometimes")


def test_out_of_a_reduction(target):
    a = np.arange(10.0)
    out = np.zeros(())
    assert jitc.evaluate("sum(a)", target=target, out=out) is out and out[()] == 45.0
    with pytest.raises(ValueError, match="shape"):
        jitc.evaluate("sum(a)", target=target, out=np.zeros(1))


def test_out_errors(target):
    a = np.ones(3)
    with pytest.raises(jitc.UsageError, match="one array"):
        jitc.evaluate("c = a + 1; d = a * 2", target=target, out=np.empty(3))
    with pytest.raises(jitc.UsageError, match="in place"):
        jitc.evaluate("a[i] += 1", target=target, out=np.empty(3))
    with pytest.raises(jitc.UsageError, match="given by name and as out="):
        jitc.evaluate("c = a + 1", target=target, c=np.empty(3), out=np.empty(3))
    with pytest.raises(jitc.UsageError, match="multiple values"):
        jitc.evaluate("a + 1", None, None, np.empty(3), target=target, out=np.empty(3))
    with pytest.raises(jitc.InputError, match="read-only"):
        ro = np.empty(3)
        ro.flags.writeable = False
        jitc.evaluate("a + 1", target=target, out=ro)


def test_out_aliasing_an_input(target):
    """out= that is an input's very elements runs in place; one that
    overlaps an input otherwise gets NumPy's result (the input is copied
    first, as NumPy's ufuncs copy it)."""
    x = np.arange(10.0)
    assert jitc.evaluate("x * 2", target=target, out=x) is x
    assert np.array_equal(x, np.arange(10.0) * 2)
    for view_in, view_out in [(slice(0, 9), slice(1, 10)), (slice(1, 10), slice(0, 9)),
                              (slice(None, None, -1), slice(None)),
                              (slice(0, 10, 2), slice(0, 5))]:
        x = np.arange(10.0)
        want = x.copy()
        np.add(want[view_in], 1, out=want[view_out])
        src = x[view_in]
        jitc.evaluate("src + 1", target=target, out=x[view_out])
        assert np.array_equal(x, want), (view_in, view_out, x, want)
    # the same memory through two names of the program
    x = np.arange(6.0)
    assert np.array_equal(jitc.evaluate("c = a + b", target=target, a=x, b=x), 2 * x)
    y = np.arange(6.0)
    jitc.evaluate("c = a * 3", target=target, a=y, c=y)
    assert np.array_equal(y, np.arange(6.0) * 3)


def test_in_place_update_with_an_overlapping_input(target):
    """a += b where b overlaps a: NumPy's np.add(a, b, out=a)."""
    for sa, sb in [(slice(0, 6), slice(2, 8)), (slice(2, 8), slice(0, 6)),
                   (slice(0, 8), slice(7, None, -1))]:
        x = np.arange(10.0)
        want = x.copy()
        np.add(want[sa], want[sb], out=want[sa])
        jitc.evaluate("a[i] += b", target=target, a=x[sa], b=x[sb])
        assert np.array_equal(x, want), (sa, sb)


def test_in_place_must_have_the_shape(target):
    with pytest.raises(ValueError, match=r"in place.*\(3,\).*\(2,3\)"):
        jitc.evaluate("a[i] += b", target=target, a=np.ones(3), b=np.ones((2, 3)))


# ---- the caller's names: local_dict and global_dict ----


def test_local_and_global_dict(target):
    a = np.full(3, 100.0)  # noqa: F841 - the frame's, which local_dict replaces
    got = jitc.evaluate("a + b", local_dict={"a": np.arange(3.0)},
                        global_dict={"b": 10.0}, target=target)
    same(got, np.arange(3.0) + 10)
    # local_dict replaces the locals only: the globals are the module's
    got = jitc.evaluate("a * G_SCALE", {"a": np.arange(3.0)}, target=target)
    same(got, np.arange(3.0) * G_SCALE)
    with pytest.raises(KeyError, match="looks in local_dict, then in global_dict"):
        jitc.evaluate("a + zz", local_dict={"a": 1.0}, global_dict={}, target=target)
    with pytest.raises(jitc.UnknownNameError):
        jitc.evaluate("a + G_SCALE", local_dict={"a": 1.0}, global_dict={}, target=target)
    # a keyword wins over both
    same(jitc.evaluate("a + 1", local_dict={"a": 5.0}, target=target, a=np.ones(2)),
         np.full(2, 2.0))


G_SCALE = 4.0


def test_positional_target_still_taken(target):
    same(jitc.evaluate("a + 1", target, a=np.ones(2)), np.full(2, 2.0))


@pytest.mark.parametrize("bad", ["X", "CF", 3, ""])
def test_bad_order(target, bad):
    with pytest.raises(ValueError, match="order must be one of 'C', 'F', 'A', or 'K'"):
        jitc.evaluate("a + 1", target=target, a=np.ones(2), order=bad)


# ---- threads ----


def test_threads_argument(target):
    a = np.random.default_rng(0).standard_normal(200_000)
    want = jitc.evaluate("s = sum(a * 2)", target=target, a=a)
    for n in (1, 2, 3):
        assert jitc.evaluate("s = sum(a * 2)", target=target, threads=n, a=a) == want
    for bad in (0, -1, 2.0, "2", True):
        with pytest.raises(ValueError, match="threads"):
            jitc.evaluate("c = a + 1", target=target, threads=bad, a=a)


def test_set_num_threads_returns_the_previous():
    first = jitc.set_num_threads(1)
    try:
        assert first >= 1
        assert jitc.get_num_threads() == 1
        assert jitc.set_num_threads(3) == 1
        assert jitc.get_num_threads() == 3
    finally:
        jitc.set_num_threads(first)
    for bad in (0, -2, 1.5, None):
        with pytest.raises(ValueError):
            jitc.set_num_threads(bad)


def test_threads_reach_the_cpu_target():
    """With one thread the cpu target starts no worker (the process keeps
    its threads); with the default it starts its pool on a large call."""
    if not jitc.available("cpu"):
        pytest.skip("no cpu target")
    import os
    import subprocess
    import sys
    code = (
        "import os, numpy as np, jitc\n"
        "tasks = lambda: len(os.listdir('/proc/self/task'))\n"
        "a = np.ones(1 << 20)\n"
        "jitc.set_num_threads(1)\n"
        "t0 = tasks(); jitc.evaluate('c = a + 1', target='cpu'); t1 = tasks()\n"
        "jitc.evaluate('c = a + 1', target='cpu', threads=2); t2 = tasks()\n"
        "print(t0, t1, t2)\n")
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("no /proc")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ), check=True).stdout.split()
    t0, t1, t2 = map(int, out)
    assert t1 == t0 and t2 > t1, (t0, t1, t2)


def test_kernel_call_takes_any_shape(target):
    """A compiled Kernel runs over views and broadcasts as evaluate does."""
    k = jitc.compile("c = a * b + s", target=target, a=np.float64, b=np.float64, s=float)
    m = np.arange(24.0).reshape(4, 6)
    row = np.arange(6.0)[::-1]
    same(k(m.T[::2], row[:4], 0.5), m.T[::2] * row[:4] + 0.5)
    same(k(m, row, 1.0), m * row + 1.0)
    same(k(np.full((), 2.0), np.asarray(3.0), 1.0), np.asarray(7.0))  # 0-d arrays: shape ()
    with pytest.raises(ValueError, match="could not be broadcast"):
        k(m, np.ones(4), 1.0)
