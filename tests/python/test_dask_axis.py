"""jitc.dask.evaluate with reductions over axes against NumPy: every op
over one axis, several, negative ones and all of them, keepdims, in chunks
even, uneven and of size 1; NaN and ties where NumPy puts them, indices
along the axis across blocks, broadcast operands, element-wise outputs in
the same pass, extents 0, the same bits on every compute.  Skipped without
dask, and on a target that does not run reductions."""
import numpy as np
import pytest

import jitc

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
import jitc.dask  # noqa: E402 - after the skip
from test_reduce import OPS, NOID  # noqa: E402
from test_axis import close, numpy_axis, program, values  # noqa: E402

THREADS = {"scheduler": "threads"}
SHAPE = (5, 6, 4)
# Even, uneven, of size 1 along some axis, one block.
CHUNKS = [(2, 4, 4), ((1, 4), (1, 2, 3), (3, 1)), (1, 6, 1), SHAPE]
AXES = [0, 1, -1, (0, 2), (1, 2), (0, 1, 2), (), None]


@pytest.mark.parametrize("dt", [np.bool_, np.int32, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_every_op_axes_chunks(rtarget, rng, dt):
    """The nine reductions in one program (argmin and argmax where there is
    one axis), over each set of axes, kept or not, in each chunking."""
    x = values(rng, dt, SHAPE, "prod")  # near 1: a float product stays in range
    for c, chunks in enumerate(CHUNKS):
        X = da.from_array(x, chunks=chunks)
        for k, axis in enumerate(AXES):
            keepdims = axis is None or (k + c) % 2 == 1
            ops = [op for op in OPS if op not in ("argmin", "argmax") or
                   not isinstance(axis, tuple)]
            prog = "\n".join(program(op, axis, keepdims).replace("r =", op + "_ =")
                             for op in ops)
            R = jitc.dask.evaluate(prog, target=rtarget, x=X)
            got = dict(zip(R, dask.compute(*R.values(), **THREADS)))
            for op in ops:
                want = numpy_axis(op, x, axis, keepdims)
                assert R[op + "_"].shape == np.shape(want), (op, axis, R[op + "_"])
                assert R[op + "_"].dtype == want.dtype, (op, axis)
                close(got[op + "_"], want, op, x, axis)


def test_chunks_of_one_element(rtarget, rng):
    x = rng.standard_normal((3, 4, 2))
    X = da.from_array(x, chunks=1)
    for op, axis in (("sum", (0, 2)), ("argmin", 1), ("max", 0), ("mean", -1)):
        want = numpy_axis(op, x, axis, False)
        got = jitc.dask.evaluate(program(op, axis, False), target=rtarget, x=X)
        close(got.compute(**THREADS), want, op, x, axis)


@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
def test_nan_and_ties_across_blocks(rtarget, op):
    """NaN first wherever it is, the first of equal values, along an axis
    cut into blocks of 2."""
    col = np.array([3.0, 1.0, 1.0, np.nan, 0.0, np.nan, -1.0, -1.0])
    x = np.stack([col, np.roll(col, 3), np.full(8, 2.0), np.where(np.isnan(col), 5.0, col),
                  -np.inf * np.ones(8)], axis=1)
    for axis, chunks in ((0, (2, 5)), (1, (8, 2)), (0, (3, 1))):
        want = numpy_axis(op, x, axis, False)
        got = jitc.dask.evaluate("r = %s(x, axis=%d)" % (op, axis), target=rtarget,
                                 x=da.from_array(x, chunks=chunks)).compute(**THREADS)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (got, want)


def test_broadcast_operands_and_element_wise_outputs(rtarget, rng, block_runs):
    """`max(x * y, axis=(0, 2), keepdims=True)` of a (6, 8, 4) array by an
    (8, 1) one, beside an element-wise output and a sum, in one pass."""
    x, y = rng.standard_normal((6, 8, 4)), rng.standard_normal((8, 1))
    X, Y = da.from_array(x, chunks=(4, 3, 3)), da.from_array(y, chunks=(3, 1))
    r = jitc.dask.evaluate("m = max(x * y, axis=(0, 2), keepdims=True)\n"
                           "s = sum(x, axis=(0, 2), keepdims=True); c = x - y", target=rtarget,
                           x=X, y=Y)
    m, s, c = dask.compute(r["m"], r["s"], r["c"], **THREADS)
    assert len(block_runs) == 2 * 3 * 2  # the data read once
    assert np.array_equal(m, np.max(x * y, axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(s, np.sum(x, axis=(0, 2), keepdims=True), rtol=1e-13)
    assert np.array_equal(c, x - y)
    k = jitc.dask.evaluate("k = argmax(x * y, axis=1)", target=rtarget, x=X, y=Y)
    assert np.array_equal(k.compute(**THREADS), np.argmax(x * y, axis=1))
    # y given as NumPy: chunked as X is along its axes.
    s = jitc.dask.evaluate("s = sum(x * y, axis=1)", target=rtarget, x=X, y=y)
    np.testing.assert_allclose(s.compute(**THREADS), np.sum(x * y, axis=1), rtol=1e-13)


@pytest.mark.parametrize("op", OPS)
def test_extents_zero(rtarget, op):
    """An axis of extent 0: reduced, min and friends raise when the graph is
    built (NumPy's ValueError) and the others give their identity; kept, the
    result has no elements."""
    for shape, chunks, axis in (((0, 4), (0, 2), 0), ((4, 0), (2, 0), 0), ((3, 4), (3, 2), 1)):
        x = np.ones(shape)
        X = da.from_array(x, chunks=chunks)
        if shape == (3, 4):  # blocks empty only after a filter: sizes unknown
            X = X[X[:, 0] > 5]
            x = x[x[:, 0] > 5]
        try:
            want = numpy_axis(op, x, axis, False)
        except ValueError:
            with pytest.raises(jitc.EmptyReductionError, match="zero elements"):
                jitc.dask.evaluate("r = %s(x, axis=%d)" % (op, axis), target=rtarget,
                                   x=X).compute(**THREADS)
            continue
        if op in ("argmin", "argmax") and np.isnan(X.shape[0]):
            continue  # unknown sizes: refused, test_refusals
        got = jitc.dask.evaluate("r = %s(x, axis=%d)" % (op, axis), target=rtarget,
                                 x=X).compute(**THREADS)
        close(got, want, op, x, axis)


def test_unknown_chunk_sizes(rtarget, rng):
    x = rng.standard_normal((40, 3))
    X = da.from_array(x, chunks=(7, 2))
    keep = X[X[:, 0] > 0]
    got = jitc.dask.evaluate("s = sum(x, axis=0); m = min(x, axis=0)", target=rtarget, x=keep)
    s, m = dask.compute(got["s"], got["m"], **THREADS)
    k = x[x[:, 0] > 0]
    np.testing.assert_allclose(s, np.sum(k, axis=0), rtol=1e-13)
    assert np.array_equal(m, np.min(k, axis=0))
    # Along an axis of known chunks argmin needs nothing else.
    a = jitc.dask.evaluate("k = argmin(x, axis=1)", target=rtarget, x=keep)
    assert np.array_equal(a.compute(**THREADS), np.argmin(k, axis=1))
    with pytest.raises(jitc.InputError, match="chunk sizes"):
        jitc.dask.evaluate("k = argmin(x, axis=0)", target=rtarget, x=keep)


def test_same_bits_every_compute(rtarget, rng):
    x = rng.standard_normal((300, 40)).astype(np.float32)
    r = jitc.dask.evaluate("s = sum(x * x, axis=0); m = mean(x, axis=0)", target=rtarget,
                           x=da.from_array(x, chunks=(17, 9)))
    first = [v.tobytes() for v in dask.compute(*r.values(), **THREADS)]
    for _ in range(5):
        assert [v.tobytes() for v in dask.compute(*r.values(), **THREADS)] == first


def test_errors_when_the_graph_is_built(rtarget):
    X = da.ones((4, 6), chunks=2)
    with pytest.raises(jitc.InputError, match="axis 2 is out of bounds for array of dimension 2"):
        jitc.dask.evaluate("s = sum(x, axis=2)", target=rtarget, x=X)
    with pytest.raises(jitc.ProgramError):
        jitc.dask.evaluate("s = sum(x, axis=0); m = max(x)", target=rtarget, x=X)
    with pytest.raises(jitc.EmptyReductionError, match="max"):
        jitc.dask.evaluate("s = max(x, axis=1)", target=rtarget, x=da.ones((3, 0), chunks=2))


def test_processes_scheduler(rtarget, rng):
    x = rng.standard_normal((30, 20))
    r = jitc.dask.evaluate("k = argmax(x, axis=0); s = sum(x, axis=0)", target=rtarget,
                           x=da.from_array(x, chunks=(7, 6)))
    k, s = dask.compute(r["k"], r["s"], scheduler="processes", num_workers=2)
    assert np.array_equal(k, np.argmax(x, axis=0))
    np.testing.assert_allclose(s, np.sum(x, axis=0), rtol=1e-13)
