"""Reductions over axes through jitc.evaluate against NumPy: every op, axes
one, several, negative, none and every one, keepdims, views, NaN, extents
0 and 1, element-wise outputs beside them, and NumPy's errors.  On each host
target that runs reductions (interp and cpu)."""
import warnings

import numpy as np
import pytest

import jitc
from test_reduce import OPS, NOID
from test_shapes import random_view

DTYPES = [np.bool_, np.int32, np.float32, np.float64]
AXES = [0, -1, 1, (0, 2), (2, 0), (), (0, 1, 2), None]


def numpy_axis(op, x, axis, keepdims):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, op)(x, axis=axis, keepdims=keepdims)


def program(op, axis, keepdims):
    args = "x"
    if axis is not None:
        args += ", axis=%r" % (axis,)
    if keepdims:
        args += ", keepdims=True"
    return "r = %s(%s)" % (op, args)


def values(rng, dt, shape, op):
    if dt == np.bool_:
        return rng.random(shape) < (0.9 if op in ("all", "prod") else 0.1)
    if np.dtype(dt).kind == "i":
        return rng.integers(-3 if op == "prod" else -1000, 4 if op == "prod" else 1000,
                            shape).astype(dt)
    if op == "prod":
        return (1 + rng.standard_normal(shape) / 50).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def close(got, want, op, x, axis):
    """got is NumPy's want: its type (a NumPy scalar where NumPy gives one,
    else an array of its shape and dtype), exactly, or a float sum, mean or
    product within a few epsilons of the magnitudes it adds."""
    assert type(got) is type(want), (type(got), type(want))
    assert np.shape(got) == np.shape(want) and got.dtype == want.dtype
    if want.dtype.kind == "f" and op in ("sum", "mean", "prod"):
        eps = float(np.finfo(want.dtype).eps)
        mag = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=np.ndim(want) == x.ndim)
        n = max(x.size, 1)
        tol = 4 * n * eps * (np.abs(np.asarray(want, np.float64)) if op == "prod" else
                             np.reshape(mag, np.shape(want)) + 1e-300) + np.zeros(np.shape(want))
        g = np.asarray(got, np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(want)), (got, want)
        assert np.all(np.abs(g - want)[~np.isnan(g)] <= tol[~np.isnan(g)]), (got, want)
    else:
        assert np.array_equal(got, want, equal_nan=True), (got, want)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_op_axes_keepdims(rtarget, rng, op, dt):
    x = values(rng, dt, (3, 4, 5), op)
    for axis in AXES:
        if op in ("argmin", "argmax") and isinstance(axis, tuple):
            continue
        for keepdims in (False, True):
            want = numpy_axis(op, x, axis, keepdims)
            got = jitc.evaluate(program(op, axis, keepdims), target=rtarget, x=x)
            close(got, want, op, x, axis)


@pytest.mark.parametrize("op", OPS)
def test_views_and_broadcast_operands(rtarget, rng, op):
    """The operand an expression of views, one broadcast along an axis: the
    axis counts in the broadcast shape."""
    x = random_view(rng, (4, 6, 3), np.float64)
    col = random_view(rng, (6, 1), np.float64)
    for axis in (0, 1, -1):
        want = numpy_axis(op, x * col + 1, axis, False)
        got = jitc.evaluate("r = %s(x * col + 1, axis=%d)" % (op, axis), target=rtarget, x=x,
                            col=col)
        close(got, want, op, x * col + 1, axis)


@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
def test_nan_and_ties_where_numpy_puts_them(rtarget, op):
    x = np.array([[1.0, np.nan, 0.0, np.nan], [2.0, 2.0, -1.0, -1.0], [np.inf, -np.inf, 3, 3]])
    for axis in (0, 1):
        want = numpy_axis(op, x, axis, False)
        got = jitc.evaluate("r = %s(x, axis=%d)" % (op, axis), target=rtarget, x=x)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (got, want)


@pytest.mark.parametrize("op", OPS)
def test_extents_zero_and_one(rtarget, op):
    for shape, axis in (((0, 3), 0), ((3, 0), 0), ((3, 0), 1), ((1, 4), 0), ((4, 1), 1),
                        ((0, 0), 1)):
        x = np.ones(shape)
        try:
            want = numpy_axis(op, x, axis, False)
        except ValueError:  # min, max, argmin or argmax over an axis of no elements
            with pytest.raises(jitc.EmptyReductionError, match="zero elements"):
                jitc.evaluate("r = %s(x, axis=%d)" % (op, axis), target=rtarget, x=x)
            continue
        got = jitc.evaluate("r = %s(x, axis=%d)" % (op, axis), target=rtarget, x=x)
        close(got, want, op, x, axis)


def test_with_element_wise_outputs_and_several_reductions(rtarget, rng):
    m = rng.standard_normal((5, 7))
    r = jitc.evaluate("s = sum(m * 2, axis=1); k = argmax(m, axis=1); c = m + 1", target=rtarget,
                      m=m)
    assert list(r) == ["s", "k", "c"]
    np.testing.assert_allclose(r["s"], np.sum(m * 2, axis=1), rtol=1e-13)
    assert np.array_equal(r["k"], np.argmax(m, axis=1)) and r["k"].dtype == np.intp
    assert np.array_equal(r["c"], m + 1)
    k = jitc.compile("s = mean(m, axis=0, keepdims=True)", rtarget, m=np.float64)
    assert k.reduction_axes == {"s": ((0,), True)}
    assert jitc.compile("s = sum(m)", rtarget, m=np.float64).reduction_axes == {"s": (None, False)}
    np.testing.assert_allclose(k(m), np.mean(m, axis=0, keepdims=True), rtol=1e-13)


def test_errors(rtarget):
    m = np.ones((2, 3))
    with pytest.raises(jitc.InputError, match="axis 2 is out of bounds for array of dimension 2"):
        jitc.evaluate("r = sum(m, axis=2)", target=rtarget, m=m)
    with pytest.raises(jitc.InputError, match="axis"):
        jitc.evaluate("r = sum(m, axis=(1, -1))", target=rtarget, m=m)


def test_out_of_axis_reduction(rtarget):
    """out= of a reduction over an axis, as numexpr and np.sum(out=) take it:
    the result's shape, written in place; another shape is an error."""
    m = np.arange(6.0).reshape(2, 3)
    o = np.empty(3)
    assert jitc.evaluate("sum(m, axis=0)", out=o, target=rtarget) is o
    np.testing.assert_array_equal(o, np.sum(m, axis=0))
    k = np.empty((2, 1))
    jitc.evaluate("max(m, axis=1, keepdims=True)", out=k, target=rtarget)
    np.testing.assert_array_equal(k, np.max(m, axis=1, keepdims=True))
    z = np.empty(())
    jitc.evaluate("sum(m)", out=z, target=rtarget)
    assert z[()] == 15.0
    keep = np.full(2, -1.0)
    with pytest.raises(jitc.InputError, match="shape"):
        jitc.evaluate("sum(m, axis=0)", out=keep, target=rtarget)
    assert (keep == -1).all()
