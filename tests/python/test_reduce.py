"""Reductions from Python against NumPy: every op and dtype, sizes 0, 1 and
odd, NaN, inf and -0.0, NumPy scalars of NumPy's types, several reductions
with element-wise outputs, let, where, casts and scalars, compiled kernels.
On each host target that runs reductions (conftest's rtarget: the others
are skipped, saying so, and pick the tests up when they run them)."""
import warnings

import numpy as np
import pytest

import jitc
from conftest import HOST_TARGETS, reduces

OPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]
NOID = {"min", "max", "argmin", "argmax"}  # no identity: an error over no elements
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]


def numpy_of(op, x):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of nothing
        return getattr(np, op)(x)


def same_scalar(got, want, exact=True, tol=0.0, zero_sign=True):
    """got is a NumPy scalar of want's type and equal to it: NaN to NaN,
    -0.0 told from 0.0 (unless zero_sign is False), floats within tol when
    exact is False."""
    assert type(got) is type(want), (type(got), type(want), got, want)
    assert np.ndim(got) == 0
    if isinstance(want, np.floating):
        if np.isnan(want) or np.isinf(want) or exact:
            assert np.array_equal(got, want, equal_nan=True), (got, want)
            if zero_sign and want == 0:
                assert np.signbit(got) == np.signbit(want), (got, want)
        else:
            assert abs(float(got) - float(want)) <= tol, (got, want, tol)
    else:
        assert got == want, (got, want)


def data(rng, dt, n, op):
    """Random values of dtype dt; near 1 for a float product, small for an
    integer one (which wraps as NumPy's does)."""
    if dt == np.bool_:
        return rng.random(n) < (0.97 if op in ("all", "prod") else 0.03)
    if np.dtype(dt).kind == "i":
        hi = 4 if op == "prod" else 1000
        return rng.integers(-hi, hi, n).astype(dt)
    if op == "prod":
        return (1 + rng.standard_normal(n) / 50).astype(dt)
    return rng.standard_normal(n).astype(dt)


def float_tol(op, x, want):
    """A float sum, mean or product: exactly NumPy's value is not promised
    (another order of additions), an error no worse than NumPy's is, or
    within a few epsilons of the magnitudes."""
    eps = np.finfo(want.dtype).eps
    x64 = np.asarray(x, dtype=np.float64)
    if op == "prod":
        return 2 * len(x) * eps * abs(float(want))
    mag = np.sum(np.abs(x64)) / (len(x) if op == "mean" else 1)
    return 4 * eps * mag


@pytest.mark.parametrize("n", [0, 1, 7, 1001])
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_op_dtype_size(rtarget, rng, op, dt, n):
    x = data(rng, dt, n, op)
    if n == 0 and op in NOID:
        with pytest.raises(ValueError):
            numpy_of(op, x)
        with pytest.raises(jitc.EmptyReductionError) as e:
            jitc.evaluate(f"s = {op}(x)", target=rtarget, x=x)
        assert isinstance(e.value, jitc.ProgramError) and isinstance(e.value, ValueError)
        assert (e.value.line, e.value.col) == (1, 1) and "zero elements" in str(e.value)
        return
    got = jitc.evaluate(f"s = {op}(x)", target=rtarget, x=x)
    want = numpy_of(op, x)
    inexact = isinstance(want, np.floating) and op in ("sum", "mean", "prod") and n > 1
    same_scalar(got, want, exact=not inexact, tol=float_tol(op, x, want) if inexact else 0)


EDGE = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_nan_inf_signed_zero(rtarget, op, dt):
    """Every pair and triple of edge values, and each alone: NaN wins min and
    max and is the extreme of argmin and argmax, inf - inf is NaN, -0.0 sums
    to -0.0 and is false to any.  The sign of a zero min or max among zeros
    of both signs is NumPy's choice of operand order: only its value counts."""
    cases = [[v] for v in EDGE] + [[u, v] for u in EDGE for v in EDGE]
    cases += [[u, v, w] for u in EDGE[:4] for v in EDGE[2:] for w in EDGE[::2]]
    for vals in cases:
        x = np.array(vals, dtype=dt)
        got = jitc.evaluate(f"s = {op}(x)", target=rtarget, x=x)
        mixed_zeros = op in ("min", "max") and len(set(np.signbit(x[x == 0]))) > 1
        same_scalar(got, numpy_of(op, x), zero_sign=not mixed_zeros)


def test_negative_zeros_sum_to_negative_zero(rtarget):
    for dt in (np.float32, np.float64):
        x = np.full(37, -0.0, dtype=dt)
        same_scalar(jitc.evaluate("s = sum(x)", target=rtarget, x=x), np.sum(x))
        same_scalar(jitc.evaluate("s = mean(x)", target=rtarget, x=x), np.mean(x))


def test_types_as_numpy(rtarget):
    """The scalar types of NumPy's own reductions (np.intp for argmin)."""
    i32 = np.arange(-5, 6, dtype=np.int32)
    assert type(jitc.evaluate("s = sum(x)", target=rtarget, x=i32)) is np.int64
    assert type(jitc.evaluate("s = min(x)", target=rtarget, x=i32)) is np.int32
    assert type(jitc.evaluate("s = mean(x)", target=rtarget, x=i32)) is np.float64
    assert type(jitc.evaluate("s = argmax(x)", target=rtarget, x=i32)) is np.intp
    assert type(jitc.evaluate("s = any(x)", target=rtarget, x=i32)) is np.bool_
    f32 = i32.astype(np.float32)
    assert type(jitc.evaluate("s = sum(x)", target=rtarget, x=f32)) is np.float32
    assert type(jitc.evaluate("s = mean(x)", target=rtarget, x=f32)) is np.float32
    assert type(jitc.evaluate("s = prod(x)", target=rtarget, x=i32 > 0)) is np.int64


def test_bare_statement_returns_the_scalar(rtarget, rng):
    a = rng.standard_normal(1001).astype(np.float32)
    b = rng.standard_normal(1001).astype(np.float32)
    got = jitc.evaluate("sum(a*b)", target=rtarget)
    want = np.sum(a * b)
    same_scalar(got, want, exact=False, tol=float_tol("sum", a * b, want))


def test_int_sums_accumulate_in_int64_and_wrap(rtarget):
    x = np.full(5, 2**31 - 1, dtype=np.int32)
    same_scalar(jitc.evaluate("s = sum(x)", target=rtarget, x=x), np.sum(x))
    y = np.array([2**62, 2**62, 2**62, 5], dtype=np.int64)
    with np.errstate(over="ignore"):
        same_scalar(jitc.evaluate("s = sum(x)", target=rtarget, x=y), np.sum(y))
        same_scalar(jitc.evaluate("s = prod(x)", target=rtarget, x=y), np.prod(y))


def test_float32_sum_no_worse_than_numpy(rtarget, rng):
    x = (rng.random(300_001) * 1000).astype(np.float32)
    exact = np.sum(x.astype(np.float64))  # float32 values: float64 sums them near exactly
    got = jitc.evaluate("s = sum(x)", target=rtarget, x=x)
    assert type(got) is np.float32
    assert abs(float(got) - exact) <= max(abs(float(np.sum(x)) - exact),
                                          float(np.spacing(np.float32(exact))))


def test_argmin_argmax_first_index(rtarget):
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 9, 1], dtype=np.int64)
    same_scalar(jitc.evaluate("s = argmin(x)", target=rtarget, x=x), np.argmin(x))
    same_scalar(jitc.evaluate("s = argmax(x)", target=rtarget, x=x), np.argmax(x))
    f = np.array([2.0, np.nan, 0.0, np.nan])
    same_scalar(jitc.evaluate("s = argmax(x)", target=rtarget, x=f), np.argmax(f))
    same_scalar(jitc.evaluate("s = argmin(x)", target=rtarget, x=f), np.argmin(f))


def test_several_reductions_and_outputs(rtarget, rng):
    a = rng.standard_normal(4099)
    b = rng.standard_normal(4099)
    r = jitc.evaluate("s = sum(a*b); m = max(abs(a - b)); c = a - b\n"
                      "k = argmin(a); p = any(a > 3); q = all(b < 10)", target=rtarget)
    assert list(r) == ["s", "m", "c", "k", "p", "q"]
    same_scalar(r["s"], np.sum(a * b), exact=False, tol=float_tol("sum", a * b, np.sum(a * b)))
    same_scalar(r["m"], np.max(np.abs(a - b)))
    assert isinstance(r["c"], np.ndarray) and np.array_equal(r["c"], a - b)
    same_scalar(r["k"], np.argmin(a))
    same_scalar(r["p"], np.any(a > 3))
    same_scalar(r["q"], np.all(b < 10))


def test_let_where_casts_and_scalars(rtarget, rng):
    a = rng.standard_normal(777).astype(np.float32)
    r = jitc.evaluate("let d = where(a > 0, a, 0) * w\n"
                      "pos = sum(d); hi = max(d); n = sum(int32(a > lim)); d64 = mean(float64(d))\n"
                      "out = d + 1", target=rtarget, a=a, w=2.5, lim=np.float64(0.5))
    d = np.where(a > 0, a, 0) * np.float32(2.5)
    assert d.dtype == np.float32 and r["out"].dtype == np.float32
    same_scalar(r["pos"], np.sum(d), exact=False, tol=float_tol("sum", d, np.sum(d)))
    same_scalar(r["hi"], np.max(d))
    same_scalar(r["n"], np.sum((a > np.float64(0.5)).astype(np.int32)))
    m = np.mean(d.astype(np.float64))
    same_scalar(r["d64"], m, exact=False, tol=float_tol("mean", d, m))
    assert np.array_equal(r["out"], d + 1)
    # A strong float64 scalar makes the sum float64, as in NumPy 2.
    got = jitc.evaluate("s = sum(a * w)", target=rtarget, a=a, w=np.float64(2.5))
    assert type(got) is np.float64


def test_given_output_and_in_place_with_reductions(rtarget, rng):
    a = rng.standard_normal(100)
    b = rng.standard_normal(100)
    c = np.empty(100)
    r = jitc.evaluate("c = a - b; s = sum(c)", target=rtarget, a=a, b=b, c=c)
    assert r["c"] is c and np.array_equal(c, a - b)
    assert np.isclose(r["s"], np.sum(a - b), rtol=1e-12)
    x = np.arange(10, dtype=np.int64)
    r = jitc.evaluate("x[i] += 1; s = sum(x)", target=rtarget, x=x)
    assert r["x"] is x and np.array_equal(x, np.arange(1, 11))
    same_scalar(r["s"], np.int64(55))


def test_multidim_c_and_fortran(rtarget, rng):
    a = rng.standard_normal((5, 7, 3))
    for arr in (a, np.asfortranarray(a)):
        r = jitc.evaluate("s = max(x); m = min(x); t = any(x > 2)", target=rtarget, x=arr)
        same_scalar(r["s"], np.max(a))
        same_scalar(r["m"], np.min(a))
        same_scalar(r["t"], np.any(a > 2))
    same_scalar(jitc.evaluate("s = argmin(x)", target=rtarget, x=a), np.argmin(a))
    # argmin's index counts in C order, as NumPy's, whatever the memory order.
    for arr in (np.asfortranarray(a), a.transpose(2, 0, 1), a[::-1, ::2]):
        same_scalar(jitc.evaluate("s = argmax(x)", target=rtarget, x=arr), np.argmax(arr))
    # One dimension of length > 1: both orders are one order.
    col = np.asfortranarray(a[:, :1, 0].copy())
    same_scalar(jitc.evaluate("s = argmax(x)", target=rtarget, x=col), np.argmax(col))


def test_empty_inputs(rtarget):
    for dt in DTYPES:
        x = np.zeros((0, 3), dtype=dt)
        r = jitc.evaluate("s = sum(x); p = prod(x); m = mean(x); y = any(x); l = all(x)",
                          target=rtarget, x=x)
        for nm, op in (("s", "sum"), ("p", "prod"), ("m", "mean"), ("y", "any"), ("l", "all")):
            same_scalar(r[nm], numpy_of(op, x))
    with pytest.raises(jitc.EmptyReductionError, match="max"):
        jitc.evaluate("c = x + 1; s = sum(x); m = max(x)", target=rtarget, x=np.zeros(0))


def test_kernel(rtarget, rng):
    k = jitc.compile("c = a * w; s = sum(c); j = argmax(a)", rtarget, a=np.float64, w=float)
    assert k.params == ("a", "w")
    assert k.arrays == (("a", "input", "float64"), ("c", "output", "float64"),
                        ("s", "result", "float64"), ("j", "result", "int64"))
    assert k.reductions == {"s": "sum", "j": "argmax"}
    for n in (1, 9, 1000):
        a = rng.standard_normal(n)
        r = k(a, 2.0)
        assert np.array_equal(r["c"], a * 2.0)
        same_scalar(r["j"], np.argmax(a))
        assert type(r["s"]) is np.float64 and np.isclose(r["s"], np.sum(a * 2.0), rtol=1e-12)
    # A result in the signature states its dtype; it is no parameter.
    typed = jitc.compile("s = sum(a)", rtarget, s=np.float32, a=np.float32)
    assert typed.params == ("a",) and typed.arrays[1] == ("s", "result", "float32")
    same_scalar(typed(np.ones(3, np.float32)), np.float32(3))
    with pytest.raises(jitc.ProgramError, match="'s' is declared float64"):
        jitc.compile("s = sum(a)", rtarget, s=np.float64, a=np.float32)
    one = jitc.compile("s = amin(a)", rtarget, a=np.int32)
    assert one.reductions == {"s": "min"} and one.params == ("a",)
    same_scalar(one(a=np.array([4, -2, 7], np.int32)), np.int32(-2))
    with pytest.raises(jitc.UsageError, match="result of min"):
        one(np.array([1], np.int32), s=np.zeros(()))


def test_result_is_not_given(rtarget):
    with pytest.raises(jitc.UsageError, match="'s' is the result of sum"):
        jitc.evaluate("s = sum(a)", target=rtarget, a=np.ones(3), s=np.ones(3))


def test_same_bits_every_run(rtarget, rng):
    x = rng.standard_normal(200_003).astype(np.float32)
    k = jitc.compile("s = sum(x); m = mean(x * x)", rtarget, x=np.float32)
    first = k(x)
    for _ in range(19):
        r = k(x)
        assert r["s"].tobytes() == first["s"].tobytes()
        assert r["m"].tobytes() == first["m"].tobytes()


def test_target_without_reductions_says_so():
    """A target that does not run reductions yet refuses them at compile
    time, naming itself; nothing to see where every target runs them."""
    without = [t for t in HOST_TARGETS if reduces(t)]
    if not without:
        pytest.skip("every host target here runs reductions")
    for t in without:
        with pytest.raises(jitc.TargetUnavailable, match=t):
            jitc.evaluate("s = sum(a)", target=t, a=np.ones(3))
