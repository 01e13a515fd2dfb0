"""jitc.dask.evaluate against NumPy: odd chunkings, several outputs in one
pass, in place, scalars, the caller's variables, errors at graph-build
time; on the threaded scheduler and on a LocalCluster of two worker
processes.  Skipped without dask; the cluster tests without distributed."""
import functools

import numpy as np
import pytest

import jitc

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
import jitc.dask  # noqa: E402 - after the skip

THREADS = {"scheduler": "threads"}


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


@pytest.mark.parametrize("n", [0, 1, 1001])
def test_axpy_odd_chunks(target, rng, n):
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    A = da.from_array(a, chunks=130)
    B = da.from_array(b, chunks=(max(n - 1, 1) // 3 or 1))
    C = jitc.dask.evaluate("c = 2*a + b", target=target, a=A, b=B)
    assert isinstance(C, da.Array) and C.dtype == np.float64
    assert C.chunks == da.core.unify_chunks(A, "i", B, "i")[1][0].chunks
    same(C.compute(**THREADS), 2 * a + b)


def test_two_dimensions_mixed_orders(target, rng):
    # X.T's chunks are Fortran-ordered views, Y's C-ordered: a block mixes them.
    x, y = rng.standard_normal((37, 50)), rng.standard_normal((50, 37))
    X = da.from_array(x, chunks=(7, 11)).T
    Y = da.from_array(y, chunks=(13, 5))
    Z = jitc.dask.evaluate("z = X * Y - 1", target=target, X=X, Y=Y)
    same(Z.compute(**THREADS), x.T * y - 1)


def test_numpy_array_with_a_dask_array(target, rng):
    a, b = rng.standard_normal(500), rng.standard_normal(500)
    C = jitc.dask.evaluate("c = a - b", target=target, a=da.from_array(a, chunks=77), b=b)
    assert C.chunks == ((77,) * 6 + (38,),)
    same(C.compute(**THREADS), a - b)


@pytest.mark.parametrize("shapes", [
    [(6, 7), (7,)],                 # a matrix by a row
    [(6, 7), (6, 1)],               # by a column
    [(6, 1), (1, 7)],               # an outer product
    [(3, 1, 5), (4, 1), (5,)],      # three ways, 3-D
    [(2, 3, 4), ()],                # a 0-d Dask array is a typed scalar
])
def test_broadcasting(target, rng, shapes):
    """Dask arrays of shapes that broadcast, chunked every which way, run
    block by block through blockwise: NumPy's result, the broadcast
    shape's chunks unified."""
    arrays = [rng.standard_normal(s) for s in shapes]
    for chunk in (2, 3, 100):
        ds = [da.from_array(x, chunks=chunk) for x in arrays]
        names = dict(zip("abc", ds))
        program = "r = " + " * ".join(names) + " + 1"
        R = jitc.dask.evaluate(program, target=target, **names)
        want = functools.reduce(np.multiply, arrays) + 1
        assert R.shape == want.shape and R.dtype == want.dtype
        same(R.compute(**THREADS), want)
    # a NumPy row with a Dask matrix, and reductions over the broadcast
    m, row = rng.standard_normal((40, 9)), rng.standard_normal(9)
    M = da.from_array(m, chunks=(7, 4))
    r = jitc.dask.evaluate("p = m * w; s = sum(m * w); k = argmax(m * w)", target=target,
                           m=M, w=row)
    p, s, k = dask.compute(r["p"], r["s"], r["k"], **THREADS)
    same(p, m * row)
    np.testing.assert_allclose(s, np.sum(m * row), rtol=1e-12)
    assert k == np.argmax(m * row)


def test_views_as_chunks(target, rng, monkeypatch):
    """Chunks that are views (reversed, stepped, transposed) go to jitc as
    they are, not copied."""
    x = rng.standard_normal((30, 20))
    X = da.from_array(x, chunks=(7, 6))[::-1, ::2].T
    seen = []
    run = jitc.evaluate

    def recording(program, **names):
        seen.append(names["x"].flags.c_contiguous)
        return run(program, **names)

    monkeypatch.setattr(jitc.dask._jitc, "evaluate", recording)
    same(jitc.dask.evaluate("y = 2 * x", target=target, x=X).compute(**THREADS),
         2 * x[::-1, ::2].T)
    assert seen and not all(seen)


def test_several_outputs_in_one_pass(target, rng, block_runs):
    a = rng.standard_normal(1000)
    A = da.from_array(a, chunks=100)
    r = jitc.dask.evaluate("s = sin(a); p = a > 0; h = f32(a) * 2", target=target, a=A)
    assert list(r) == ["s", "p", "h"]
    # The dtypes are known before computing.
    assert [r[k].dtype for k in r] == [np.float64, np.bool_, np.float32]
    s, p, h = dask.compute(r["s"], r["p"], r["h"], **THREADS)
    assert len(block_runs) == A.numblocks[0]
    np.testing.assert_allclose(s, np.sin(a), rtol=1e-15)
    same(p, a > 0)
    same(h, a.astype(np.float32) * 2)


def test_in_place_returns_the_new_array(target, rng):
    a = rng.standard_normal(1000)
    keep = a.copy()
    A = da.from_array(a, chunks=333)
    A1 = jitc.dask.evaluate("a[i] += 1", target=target, a=A)
    assert isinstance(A1, da.Array) and A1.dtype == np.float64
    same(A1.compute(**THREADS), keep + 1)
    # Neither the Dask array nor the NumPy array its chunks view changed.
    same(a, keep)
    same(A.compute(**THREADS), keep)
    r = jitc.dask.evaluate("a[i] *= 2; b = a + 1", target=target, a=A)
    same(r["a"].compute(**THREADS), keep * 2)
    same(r["b"].compute(**THREADS), keep * 2 + 1)
    same(a, keep)


def test_scalars_weak_and_typed(target, rng):
    a = rng.standard_normal(300).astype(np.float32)
    A = da.from_array(a, chunks=64)
    weak = jitc.dask.evaluate("c = a * s", target=target, a=A, s=2.5)
    assert weak.dtype == np.float32
    same(weak.compute(**THREADS), a * np.float32(2.5))
    typed = jitc.dask.evaluate("c = a * s", target=target, a=A, s=np.float64(2.5))
    assert typed.dtype == np.float64
    same(typed.compute(**THREADS), a * np.float64(2.5))
    s = da.from_array(np.array(3.0))  # a 0-d Dask array is a typed scalar
    zero_d = jitc.dask.evaluate("c = a + s", target=target, a=A, s=s)
    assert zero_d.dtype == np.float64
    same(zero_d.compute(**THREADS), a + np.float64(3.0))


GLOBAL_B = da.ones(10, chunks=4)


def test_names_from_the_callers_variables(target):
    a = da.arange(10.0, chunks=3)
    k = 3  # noqa: F841 - read by the program
    c = jitc.dask.evaluate("c = a*k + GLOBAL_B", target=target)
    same(c.compute(**THREADS), np.arange(10.0) * 3 + 1)


def test_output_given_by_name_fixes_its_dtype(target):
    a = da.arange(10, chunks=4, dtype=np.int64)
    out = da.zeros(10, chunks=5, dtype=np.float32)
    c = jitc.dask.evaluate("c = a * 2", target=target, a=a, c=out)
    assert c.dtype == np.float32
    same(c.compute(**THREADS), np.arange(10, dtype=np.float32) * 2)


def test_errors_raise_when_the_graph_is_built():
    a = da.arange(10.0, chunks=3)
    with pytest.raises(jitc.ProgramError) as e:
        jitc.dask.evaluate("c = a +* 2", a=a)
    assert e.value.line == 1 and "^" in str(e.value)
    with pytest.raises(jitc.ProgramError, match="unknown name 'nowhere_at_all'"):
        jitc.dask.evaluate("c = a + nowhere_at_all", a=a)
    with pytest.raises(jitc.ProgramError, match="needs integer or bool operands"):
        jitc.dask.evaluate("c = a & 1", a=a)
    with pytest.raises(ValueError, match=r"could not be broadcast together: 'a' has shape "
                       r"\(10,\) and 'b' has shape \(11,\) \(axis 0"):
        jitc.dask.evaluate("c = a + b", a=a, b=da.ones(11, chunks=3))
    with pytest.raises(KeyError, match="nowhere_at_all"):
        jitc.dask.evaluate("c = a + nowhere_at_all", a=a)
    with pytest.raises(jitc.InputError):
        jitc.dask.evaluate("c = a * 2", a=da.ones(4, dtype=np.clongdouble))
    with pytest.raises(jitc.InputError, match="no array"):
        jitc.dask.evaluate("c = s * 2", s=2.0)
    with pytest.raises(jitc.UsageError):
        jitc.dask.evaluate("c = a * 2", target="gpu", a=a)
    with pytest.raises(jitc.UsageError, match="'b' is not a name the program uses"):
        jitc.dask.evaluate("c = a * 2", a=a, b=a)



def test_element_index_needs_one_block():
    # Each block would count i from 0: over several blocks that would be a
    # wrong answer, so it is refused; over one block it is right.
    a = np.arange(10.0)
    with pytest.raises(jitc.UsageError, match="element index i"):
        jitc.dask.evaluate("c = a + i", a=da.from_array(a, chunks=3))
    c = jitc.dask.evaluate("c = a + i", a=da.from_array(a, chunks=10)).compute()
    assert np.array_equal(c, a + np.arange(10))


def test_cupy_chunks(cp):
    a = np.random.default_rng(1).standard_normal(100_001)
    A = da.from_array(cp.asarray(a), chunks=10_000)
    r = jitc.dask.evaluate("c = exp(a) * 2; a[i] += 1", a=A)
    assert isinstance(r["c"]._meta, cp.ndarray)
    c, a1 = dask.compute(r["c"], r["a"], **THREADS)
    assert isinstance(c, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(c), np.exp(a) * 2, rtol=1e-15)
    same(cp.asnumpy(a1), a + 1)


def test_processes_scheduler(rng):
    a = rng.standard_normal(2000)
    A = da.from_array(a, chunks=500)
    r = jitc.dask.evaluate("a[i] += 1; b = a * 2", a=A)
    got = dask.compute(r["a"], r["b"], scheduler="processes", num_workers=2)
    same(got[0], a + 1)
    same(got[1], (a + 1) * 2)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster, set_as_default=False) as c:
            yield c


def test_local_cluster(client, rng):
    a, b = rng.standard_normal((300, 41)), rng.standard_normal((300, 41))
    A, B = da.from_array(a, chunks=(70, 20)), da.from_array(b, chunks=(100, 41))
    C = jitc.dask.evaluate("c = where(a > b, a, b) * 2", a=A, b=B)
    same(C.compute(scheduler=client), np.where(a > b, a, b) * 2)
    r = jitc.dask.evaluate("a[i] += b; m = a > 0; n = i32(a * 10)", a=A, b=B)
    got = dask.compute(*r.values(), scheduler=client)
    same(got[0], a + b)
    same(got[1], a + b > 0)
    same(got[2], ((a + b) * 10).astype(np.int32))
    # Both worker processes ran blocks (each compiled the programs once).
    compiles = client.run(lambda: __import__("jitc").cache_info()["compiles"])
    assert len(compiles) == 2 and all(n >= 2 for n in compiles.values()), compiles


def test_dask_cluster_sample(client):
    # The sample connects to a running scheduler by its address, as it
    # would to a cluster of several machines.
    from test_samples import run_sample
    out = run_sample("dask_cluster.py", client.scheduler.address)
    assert "2 workers" in out and "as NumPy finds" in out
