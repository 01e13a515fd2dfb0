"""Device arrays of NumPy's array model on the cuda target: CuPy arrays and
PyTorch tensors of any shape and strides (slices, steps, reversed and
transposed views, broadcast views of stride 0, 0-d arrays), broadcast by
NumPy's rules, read and written in place, outputs laid out as NumPy's
ufuncs lay out theirs, reductions over axes; each result against NumPy on
host copies.  Skipped without CuPy or PyTorch and a GPU."""
import numpy as np
import pytest

import jitc


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU for PyTorch")
    return torch


def views(rng, shape, dtype):
    """A host array of `shape` and a recipe that makes the same view of a
    device copy: (host view, parent host array, function of the device parent)."""
    kind = rng.integers(0, 5)
    nd = len(shape)
    if kind == 0 or nd == 0:  # contiguous
        parent = rng.standard_normal(shape).astype(dtype)
        return parent, parent, lambda d: d
    if kind == 1:  # every other element along each axis, some reversed
        steps = tuple(int(rng.choice([-2, -1, 1, 2])) for _ in shape)
        parent = rng.standard_normal(tuple(2 * s + 1 for s in shape)).astype(dtype)
        sl = tuple(slice(None, None, st) for st in steps)
        cut = tuple(slice(0, s) for s in shape)
        return parent[sl][cut], parent, lambda d: d[sl][cut]
    if kind == 2:  # a permutation of the axes of a contiguous array
        perm = tuple(int(p) for p in rng.permutation(nd))
        inv = tuple(int(p) for p in np.argsort(perm))
        parent = rng.standard_normal(tuple(shape[p] for p in perm)).astype(dtype)
        return parent.transpose(inv), parent, lambda d: d.transpose(inv)
    if kind == 3:  # a broadcast view: stride 0 on the axes of extent > 1 it repeats
        base_shape = tuple(s if rng.integers(0, 2) else 1 for s in shape)
        parent = rng.standard_normal(base_shape).astype(dtype)
        return np.broadcast_to(parent, shape), parent, lambda d: broadcast_to(d, shape)
    # Fortran order
    parent = np.asfortranarray(rng.standard_normal(shape).astype(dtype))
    return parent, parent, lambda d: d


def broadcast_to(d, shape):
    if hasattr(d, "expand"):  # a torch tensor
        return d.expand(shape)
    import cupy
    return cupy.broadcast_to(d, shape)


def operand_shape(rng, shape):
    """A shape that broadcasts to `shape`: leading axes dropped, some axes 1."""
    drop = int(rng.integers(0, len(shape) + 1))
    return tuple(1 if rng.integers(0, 3) == 0 else s for s in shape[drop:])


def trials(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        nd = int(rng.integers(0, 5))
        shape = tuple(int(s) for s in rng.choice([0, 1, 2, 3, 5, 7], size=nd,
                                                 p=[0.05, 0.15, 0.2, 0.2, 0.2, 0.2]))
        yield rng, shape


def test_cupy_broadcast_and_views_against_numpy(cp):
    """c = a * b + x over random shapes up to 4-D, each operand a random
    view (steps, reversed, transposed, stride 0, Fortran order, 0-d) of
    device memory, read in place: the values are NumPy's, bit for bit, and
    the output is laid out as NumPy lays out np.add's (order 'K')."""
    for k, (rng, shape) in enumerate(trials(11, 300)):
        hosts, devs = [], []
        for _ in range(3):
            s = operand_shape(rng, shape)
            h, parent, make = views(rng, s, np.float64)
            hosts.append(h)
            devs.append(make(cp.asarray(parent)))
        a, b, x = devs
        c = jitc.evaluate("c = a * b + x", a=a, b=b, x=x)
        want = hosts[0] * hosts[1] + hosts[2]
        assert isinstance(c, cp.ndarray) and c.shape == want.shape, (k, shape)
        np.testing.assert_array_equal(cp.asnumpy(c), want, err_msg=str((k, shape)))
        if all(e > 1 for e in want.shape):
            # The layout NumPy's iterator gives an output allocated beside
            # the three operands (one ufunc over them all).
            made = np.nditer(hosts + [None], order="K",
                             op_flags=[["readonly"]] * 3 + [["writeonly", "allocate"]],
                             op_dtypes=[None] * 3 + [np.float64]).operands[3]
            assert c.strides == made.strides, (k, shape, c.strides, made.strides)


def test_cupy_row_and_column_broadcast(cp):
    rng = np.random.default_rng(5)
    m = rng.standard_normal((64, 96)).astype(np.float32)
    row = rng.standard_normal(96).astype(np.float32)
    col = rng.standard_normal((64, 1)).astype(np.float32)
    dm, drow, dcol = cp.asarray(m), cp.asarray(row), cp.asarray(col)
    np.testing.assert_array_equal(cp.asnumpy(jitc.evaluate("a + b", a=dm, b=drow)), m + row)
    np.testing.assert_array_equal(cp.asnumpy(jitc.evaluate("a + b", a=dm, b=dcol)), m + col)
    np.testing.assert_array_equal(cp.asnumpy(jitc.evaluate("a + 1", a=dm.T)), m.T + 1)
    # A 0-d device array is an array of shape (): it broadcasts.
    s = cp.asarray(np.float32(2.5))
    np.testing.assert_array_equal(cp.asnumpy(jitc.evaluate("a * s", a=dm, s=s)),
                                  m * np.float32(2.5))
    # Scalars of the language and the caller stay scalars beside them.
    np.testing.assert_array_equal(cp.asnumpy(jitc.evaluate("a * 2 + b", a=dm, b=drow)),
                                  m * 2 + row)


def test_cupy_index_and_argmax_count_in_c_order(cp):
    """`i` and argmin/argmax count in C order over the run's shape, as
    NumPy does, also for Fortran-ordered and transposed device arrays."""
    rng = np.random.default_rng(6)
    h = np.asfortranarray(rng.standard_normal((5, 7)))
    d = cp.asarray(h, order="F")
    assert d.flags.f_contiguous
    np.testing.assert_array_equal(cp.asnumpy(jitc.evaluate("c = a + i", a=d)),
                                  h + np.arange(35).reshape(5, 7))
    assert int(jitc.evaluate("argmax(a)", a=d)) == np.argmax(h)
    assert int(jitc.evaluate("argmin(a)", a=d.T)) == np.argmin(h.T)
    # Fortran order without `i`: one flat run in memory order, the output Fortran too.
    c = jitc.evaluate("c = a * 2", a=d)
    assert c.flags.f_contiguous
    np.testing.assert_array_equal(cp.asnumpy(c), h * 2)


def test_cupy_written_in_place_through_strides(cp):
    rng = np.random.default_rng(7)
    h = rng.standard_normal((6, 8))
    d = cp.asarray(h)
    v = d[::-1, ::2]
    assert jitc.evaluate("a[i] += 1", a=v) is v
    want = h.copy()
    want[::-1, ::2] += 1
    np.testing.assert_array_equal(cp.asnumpy(d), want)
    # out= a strided view: written where it points, nowhere else.
    out = cp.zeros((6, 8))
    r = jitc.evaluate("a * 2", a=d[:, 1::2], out=out[:, ::2])
    assert r.data.ptr == out.data.ptr
    want_out = np.zeros((6, 8))
    want_out[:, ::2] = want[:, 1::2] * 2
    np.testing.assert_array_equal(cp.asnumpy(out), want_out)
    # An output is never broadcast: a row is no out= for a matrix.
    with pytest.raises(jitc.InputError, match=r"output operand with shape \(8,\).*\(6,8\)"):
        jitc.evaluate("a + 1", a=d, out=cp.zeros(8))


def test_cupy_shapes_that_do_not_fit(cp):
    a, b = cp.ones((3, 4)), cp.ones(3)
    with pytest.raises(ValueError, match=r"\(3,4\).*\(3,\)|\(3,\).*\(3,4\)"):
        jitc.evaluate("c = a + b", a=a, b=b)
    x = cp.arange(8.0)
    with pytest.raises(jitc.InputError, match="'c' and 'a' share memory.*copies nothing"):
        jitc.evaluate("c = a + 1", a=x[:4], c=x[2:6])
    # The very same elements are fine: a = a * 2 through two names.
    r = jitc.evaluate("c = a * 2", a=x[:4], c=x[:4])
    np.testing.assert_array_equal(cp.asnumpy(x), [0, 2, 4, 6, 4, 5, 6, 7])
    assert r.data.ptr == x.data.ptr
    with pytest.raises(jitc.InputError, match="written.*stride 0"):
        jitc.evaluate("a[i] += 1", a=cp.broadcast_to(cp.ones(3), (2, 3)))


@pytest.mark.parametrize("program, axis", [
    ("s = sum(a, axis=0)", 0), ("s = sum(a, axis=1)", 1), ("s = sum(a, axis=-1)", -1),
    ("s = max(a, axis=(0, 2))", (0, 2)), ("s = min(a, axis=1, keepdims=True)", 1),
    ("s = argmax(a, axis=1)", 1), ("s = mean(a, axis=2)", 2), ("s = prod(a, axis=0)", 0),
])
def test_cupy_reductions_over_axes(cp, program, axis):
    """Reductions over axes of device arrays, also of views, give arrays of
    NumPy's shape and type on the device."""
    rng = np.random.default_rng(8)
    h = rng.standard_normal((9, 33, 65)).astype(np.float32)
    h[2, 3, 4] = np.nan
    for view in (lambda x: x, lambda x: x.transpose(2, 0, 1).transpose(1, 2, 0),
                 lambda x: x[::-1, :, ::2]):
        hv = view(h)
        d = view(cp.asarray(h))
        op = program.split("=")[1].split("(")[0].strip()
        keep = "keepdims=True" in program
        want = getattr(np, op)(hv, axis=axis, keepdims=keep)
        got = jitc.evaluate(program, a=d)
        assert isinstance(got, cp.ndarray) and got.shape == want.shape
        assert got.dtype == want.dtype
        if op in ("sum", "mean", "prod"):
            np.testing.assert_allclose(cp.asnumpy(got), want, rtol=2e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_torch_strides_broadcast_and_axes():
    torch = _torch()
    g = torch.Generator(device="cpu").manual_seed(9)
    m = torch.randn(48, 80, generator=g, dtype=torch.float64).cuda()
    row = torch.randn(48, generator=g, dtype=torch.float64).cuda()
    c = jitc.evaluate("c = a + b", a=m.T, b=row)
    assert isinstance(c, torch.Tensor) and c.shape == (80, 48)
    torch.testing.assert_close(c, m.T + row, rtol=0, atol=0)
    assert c.stride() == (m.T + row).stride()  # order 'K': the layout of m.T
    torch.testing.assert_close(jitc.evaluate("a * 3", a=m[:, 1::3]), m[:, 1::3] * 3,
                               rtol=0, atol=0)
    s = jitc.evaluate("s = sum(a, axis=0)", a=m.T)
    torch.testing.assert_close(s, m.T.sum(dim=0))
    k = jitc.evaluate("k = argmin(a, axis=1)", a=m)
    assert k.dtype == torch.int64 and torch.equal(k, m.argmin(dim=1))
