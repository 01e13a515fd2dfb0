"""jitc.dask.evaluate with reductions against NumPy: per-block partials
combined by dask.array.reduction's fixed tree; every op and dtype, odd
chunks, empty blocks, argmin's index over blocks and dimensions, several
reductions and element-wise outputs in one pass, the same bits on every
compute; the threaded scheduler, and processes for pickling.  Skipped
without dask, and on a target that does not run reductions."""
import warnings

import numpy as np
import pytest

import jitc

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
import jitc.dask  # noqa: E402 - after the skip
from test_reduce import OPS, NOID, data, float_tol, numpy_of, same_scalar  # noqa: E402

THREADS = {"scheduler": "threads"}


@pytest.mark.parametrize("n", [0, 1, 1001])
@pytest.mark.parametrize("dt", [np.bool_, np.int32, np.int64, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_op_dtype_chunks(rtarget, rng, op, dt, n):
    x = data(rng, dt, n, op)
    X = da.from_array(x, chunks=97)
    if n == 0 and op in NOID:
        with pytest.raises(jitc.EmptyReductionError, match="zero elements") as e:
            jitc.dask.evaluate(f"s = {op}(x)", target=rtarget, x=X)
        assert isinstance(e.value, ValueError) and (e.value.line, e.value.col) == (1, 1)
        return
    S = jitc.dask.evaluate(f"s = {op}(x)", target=rtarget, x=X)
    want = numpy_of(op, x)
    assert isinstance(S, da.Array) and S.shape == () and S.dtype == want.dtype
    got = S.compute(**THREADS)
    inexact = isinstance(want, np.floating) and op in ("sum", "mean", "prod") and n > 1
    same_scalar(got, want, exact=not inexact, tol=float_tol(op, x, want) if inexact else 0)


@pytest.mark.parametrize("op", OPS)
def test_edge_values_across_blocks(rtarget, op):
    """NaN, inf and -0.0 in different blocks: NaN wins min and max wherever
    it is, argmin and argmax give the first NaN, ties the first index."""
    x = np.array([1.5, -0.0, 2.0, np.inf, -2.0, np.nan, 7.0, -np.inf, np.nan, 1.5, -2.0, 0.0])
    for vals in (x, np.where(np.isnan(x), -2.0, x), np.where(np.isnan(x), 1.0, x),
                 np.full(12, -0.0), np.full(12, 3.0)):
        for dt in (np.float32, np.float64):
            v = vals.astype(dt)
            got = jitc.dask.evaluate(f"s = {op}(x)", target=rtarget,
                                     x=da.from_array(v, chunks=5)).compute(**THREADS)
            zeros = op in ("min", "max") and len(set(np.signbit(v[v == 0]))) > 1
            same_scalar(got, numpy_of(op, v), zero_sign=not zeros)


def test_argmin_argmax_index_in_the_whole_array(rtarget, rng):
    # 2-D, chunks of every size, and a transpose whose chunks are Fortran-ordered views.
    x = rng.standard_normal((37, 50))
    for X, ref in ((da.from_array(x, chunks=(7, 11)), x),
                   (da.from_array(x, chunks=(13, 50)).T, x.T)):
        r = jitc.dask.evaluate("lo = argmin(x); hi = argmax(x); m = min(x)", target=rtarget, x=X)
        lo, hi, m = dask.compute(r["lo"], r["hi"], r["m"], **THREADS)
        same_scalar(lo, np.argmin(ref))
        same_scalar(hi, np.argmax(ref))
        same_scalar(m, np.min(ref))
    # Ties in several blocks: the first.
    t = np.array([5, 1, 3, 1, 1, 9, 9, 0, 0, 9], dtype=np.int32)
    T = da.from_array(t, chunks=3)
    same_scalar(jitc.dask.evaluate("s = argmin(t)", target=rtarget, t=T).compute(**THREADS),
                np.argmin(t))
    same_scalar(jitc.dask.evaluate("s = argmax(t)", target=rtarget, t=T).compute(**THREADS),
                np.argmax(t))


def test_several_reductions_and_outputs_in_one_pass(rtarget, rng, block_runs):
    a, b = rng.standard_normal(5003), rng.standard_normal(5003)
    A, B = da.from_array(a, chunks=600), da.from_array(b, chunks=(1000, 1000, 3003))
    r = jitc.dask.evaluate("let d = a - b  # a temporary\n"
                           "s = sum(a*b); m = max(abs(d)); c = d * 2\n"
                           "mu = mean(where(d > 0, d, 0)); k = argmax(d); n = sum(int32(d > 0))",
                           target=rtarget, a=A, b=B)
    assert list(r) == ["s", "m", "c", "mu", "k", "n"]
    assert [r[k].dtype for k in r] == [np.float64, np.float64, np.float64, np.float64,
                                       np.int64, np.int64]
    got = dict(zip(r, dask.compute(*r.values(), **THREADS)))
    blocks = da.core.unify_chunks(A, "i", B, "i")[1][0].numblocks[0]
    assert len(block_runs) == blocks  # the data read once
    d = a - b
    same_scalar(got["s"], np.sum(a * b), exact=False, tol=float_tol("sum", a * b, np.sum(a * b)))
    same_scalar(got["m"], np.max(np.abs(d)))
    assert np.array_equal(got["c"], d * 2)
    w = np.where(d > 0, d, 0)
    same_scalar(got["mu"], np.mean(w), exact=False, tol=float_tol("mean", w, np.mean(w)))
    same_scalar(got["k"], np.argmax(d))
    same_scalar(got["n"], np.sum((d > 0).astype(np.int32)))


def test_float32_sum_and_mean_no_worse_than_numpy(rtarget, rng):
    x = (rng.random(100_003) * 1000).astype(np.float32)
    exact = np.sum(x.astype(np.float64))
    r = jitc.dask.evaluate("s = sum(x); m = mean(x)", target=rtarget,
                           x=da.from_array(x, chunks=9_999))
    s, m = dask.compute(r["s"], r["m"], **THREADS)
    assert type(s) is np.float32 and type(m) is np.float32
    assert abs(float(s) - exact) <= max(abs(float(np.sum(x)) - exact),
                                        float(np.spacing(np.float32(exact))))
    assert abs(float(m) - exact / x.size) <= max(abs(float(np.mean(x)) - exact / x.size),
                                                 float(np.spacing(np.float32(exact / x.size))))


def test_same_bits_every_compute(rtarget, rng):
    x = rng.standard_normal(50_001).astype(np.float32)
    r = jitc.dask.evaluate("s = sum(x * x); m = mean(x); p = prod(1 + x / 1000)", target=rtarget,
                           x=da.from_array(x, chunks=1_234))
    first = [v.tobytes() for v in dask.compute(*r.values(), **THREADS)]
    for _ in range(9):
        assert [v.tobytes() for v in dask.compute(*r.values(), **THREADS)] == first


def test_in_place_and_given_output_with_reductions(rtarget, rng):
    a = rng.standard_normal(1000)
    A = da.from_array(a, chunks=333)
    r = jitc.dask.evaluate("a[i] += 1; s = sum(a); c = a * 2", target=rtarget, a=A,
                           c=da.zeros(1000, chunks=333, dtype=np.float32))
    a1, s, c = dask.compute(r["a"], r["s"], r["c"], **THREADS)
    assert np.array_equal(a1, a + 1) and np.isclose(s, np.sum(a + 1), rtol=1e-12)
    assert c.dtype == np.float32 and np.array_equal(c, ((a + 1) * 2).astype(np.float32))


def test_empty_blocks_and_unknown_chunks(rtarget, rng):
    a = rng.standard_normal(200)
    A = da.from_array(a, chunks=50)
    pos = A[A > 0]  # chunks of unknown size, some may be empty
    r = jitc.dask.evaluate("s = sum(p); n = sum(p > -1); hi = max(p); q = p * 2", target=rtarget,
                           p=pos)
    s, n, hi, q = dask.compute(r["s"], r["n"], r["hi"], r["q"], **THREADS)
    p = a[a > 0]
    assert np.isclose(s, np.sum(p), rtol=1e-12) and n == p.size and hi == np.max(p)
    assert np.array_equal(q, p * 2)
    none = A[A > 100]  # every block empty: the identities, min raises when computed
    r = jitc.dask.evaluate("s = sum(p); t = prod(p); y = all(p); m = max(p)", target=rtarget,
                           p=none)
    same_scalar(r["s"].compute(**THREADS), np.float64(0))
    same_scalar(r["t"].compute(**THREADS), np.float64(1))
    same_scalar(r["y"].compute(**THREADS), np.bool_(True))
    with pytest.raises(jitc.EmptyReductionError, match="max") as e:
        r["m"].compute(**THREADS)
    assert (e.value.line, e.value.col) == (1, 38)  # at "m = max(p)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(jitc.dask.evaluate("m = mean(p)", target=rtarget, p=none)
                        .compute(**THREADS))
    with pytest.raises(jitc.InputError, match="chunk sizes"):
        jitc.dask.evaluate("k = argmin(p)", target=rtarget, p=pos)


def test_refusals(rtarget):
    A = da.arange(10.0, chunks=3)
    with pytest.raises(jitc.UsageError, match="element index i"):
        jitc.dask.evaluate("s = sum(a * i)", target=rtarget, a=A)
    with pytest.raises(jitc.UsageError, match="'s' is the result of sum"):
        jitc.dask.evaluate("s = sum(a)", target=rtarget, a=A, s=A)
    with pytest.raises(jitc.ProgramError, match="whole value of an assignment"):
        jitc.dask.evaluate("c = sum(a) + 1", target=rtarget, a=A)


def test_processes_scheduler_reductions(rtarget, rng):
    a = rng.standard_normal(2000)
    r = jitc.dask.evaluate("k = argmin(a); s = sum(a); b = a + 1", target=rtarget,
                           a=da.from_array(a, chunks=300))
    k, s, b = dask.compute(r["k"], r["s"], r["b"], scheduler="processes", num_workers=2)
    same_scalar(k, np.argmin(a))
    assert np.isclose(s, np.sum(a), rtol=1e-12) and np.array_equal(b, a + 1)


def test_cupy_chunks_reductions(cp):
    a = np.random.default_rng(1).standard_normal(100_001).astype(np.float32)
    A = da.from_array(cp.asarray(a), chunks=10_000)
    r = jitc.dask.evaluate("s = sum(a); k = argmax(a); c = a * 2", a=A)
    assert isinstance(r["s"]._meta, cp.ndarray)
    s, k, c = dask.compute(r["s"], r["k"], r["c"], **THREADS)
    assert isinstance(s, cp.ndarray) and s.shape == () and s.dtype == np.float32
    np.testing.assert_allclose(cp.asnumpy(s), np.sum(a), rtol=1e-5)
    assert int(k) == np.argmax(a)
    np.testing.assert_array_equal(cp.asnumpy(c), a * 2)



def test_program_forms(rtarget, rng):
    """Reductions written every way the language allows: parenthesised,
    bare (assigning out), as s[i] =, over several lines, with a comment
    that names another reduction."""
    a = rng.standard_normal(100)
    A = da.from_array(a, chunks=30)
    r = jitc.dask.evaluate("s = (sum(a))  # c = mean(a)\nk[i] = argmax(\n  a * 2)\n(argmin(a))",
                           target=rtarget, a=A)
    assert list(r) == ["s", "k", "out"]
    s, k, out = dask.compute(r["s"], r["k"], r["out"], **THREADS)
    assert np.isclose(s, np.sum(a), rtol=1e-12)
    same_scalar(k, np.argmax(a))
    same_scalar(out, np.argmin(a))
    m = jitc.dask.evaluate("c = a\nmean(a)", target=rtarget, a=A)
    assert np.isclose(m["out"].compute(**THREADS), np.mean(a), rtol=1e-12)
