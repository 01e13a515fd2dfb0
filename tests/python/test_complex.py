"""complex64 and complex128 from Python against NumPy: arrays in and out,
Python complex scalars weak and NumPy's complex scalars typed (NEP 50),
reductions as NumPy complex scalars, the signature's spellings, DLPack's
kDLComplex, jitc.dask over complex chunks, CuPy arrays and PyTorch tensors.
On interp, and on each other host target that takes complex types (one that
refuses them is skipped, saying why)."""
import warnings

import numpy as np
import pytest

import jitc
from conftest import HOST_TARGETS
from test_types import DLPackTensor

CTYPES = [np.complex64, np.complex128]
nan, inf = np.nan, np.inf


def refuses_complex(t):
    """Why host target t does not run complex programs, or None (interp
    defines them: it never skips)."""
    if t == "interp":
        return None
    try:
        jitc.compile("c = a * b; s = sum(a)", t, a=np.complex64, b=np.complex128)
    except jitc.Error as e:
        return "%s: %s" % (t, str(e).splitlines()[0])
    return None


@pytest.fixture(params=HOST_TARGETS)
def ctarget(request):
    why = refuses_complex(request.param)
    if why:
        pytest.skip(why)
    return request.param


def cdata(rng, dt, n, specials=True):
    """n values of complex type dt, both parts random, NaN, inf and -0.0 in
    either part among them."""
    z = np.empty(n, dt)
    z.real = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)
    z.imag = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)
    if specials and n >= 8:
        z[:8] = [complex(nan, 1), complex(1, nan), complex(inf, -1), complex(-1, -inf),
                 complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), 0]
    return z


def same(got, want):
    """Equal dtype, shape and bits (NaN's sign and payload aside)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    parts = [(got.real, want.real), (got.imag, want.imag)] if got.dtype.kind == "c" \
        else [(got, want)]
    for g, w in parts:
        assert np.array_equal(g, w, equal_nan=True), (got, want)
        assert np.array_equal(np.signbit(g) | np.isnan(g), np.signbit(w) | np.isnan(w)), \
            (got, want)


# ---- arrays ----

@pytest.mark.parametrize("dt", CTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("order", ["C", "F"])
def test_arrays_in_and_out(ctarget, rng, dt, order):
    a = np.asarray(cdata(rng, dt, 60).reshape(6, 10), order=order)
    b = jitc.evaluate("b = a", ctarget, a=a)
    assert b.dtype == a.dtype and b.flags.f_contiguous == a.flags.f_contiguous
    assert b.tobytes(order="A") == a.tobytes(order="A")
    c = np.zeros_like(a)
    jitc.evaluate("c[i] = a + b", ctarget, a=a, b=b, c=c)  # a given output, in place
    same(c, a + b)
    x = a.copy(order="K")
    jitc.evaluate("x[i] = -x", ctarget, x=x)
    same(x, -a)


# ---- scalars: Python's complex is weak, NumPy's complex scalars typed ----

REALS = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32,
         np.float64, np.complex64, np.complex128]
WEAK = [1j, 2.5 - 1j, complex(-0.0, 3), complex(nan, 1), complex(1e300, -inf)]


@pytest.mark.parametrize("dt", REALS, ids=lambda d: np.dtype(d).name)
def test_python_complex_is_weak(ctarget, rng, dt):
    a = (rng.standard_normal(9) * 3).astype(dt) if np.dtype(dt).kind != "b" else \
        rng.random(9) < 0.5
    for s in WEAK:
        with np.errstate(all="ignore"):
            want = a + s  # NumPy 2: float32 + 1j is complex64, int32 + 1j complex128
        got = jitc.evaluate("c = a + s", ctarget, a=a, s=s)
        same(got, want)
        k = jitc.compile("c = a + s", ctarget, a=a.dtype, s=complex)
        assert k.arrays[1][2] == want.dtype.name
        same(k(a, s), want)


class Complexish(complex):
    """A subclass of Python's complex: weak as complex is."""


@pytest.mark.parametrize("dt", REALS, ids=lambda d: np.dtype(d).name)
def test_numpy_complex_scalars_are_typed(ctarget, rng, dt):
    a = (rng.standard_normal(9) * 3).astype(dt) if np.dtype(dt).kind != "b" else \
        rng.random(9) < 0.5
    for s in (np.complex64(1.5 - 2j), np.complex128(0.1 + 0.2j), np.array(2 - 1j, np.complex64),
              np.array(complex(-0.0, inf)), np.complex64(complex(nan, -0.0))):
        with np.errstate(all="ignore"):
            want = a + s
        same(jitc.evaluate("c = a + s", ctarget, a=a, s=s), want)
        k = jitc.compile("c = a + s", ctarget, a=a.dtype, s=s)
        assert k.scalars == (("s", np.asarray(s).dtype.name),)
        same(k(a, s), want)
    same(jitc.evaluate("c = a + s", ctarget, a=a, s=Complexish(1, 2)), a + (1 + 2j))


def test_complex_scalar_of_a_real_program(ctarget):
    # A complex scalar makes a real program's result complex, as in NumPy.
    a = np.arange(4, dtype=np.float32)
    got = jitc.evaluate("c = a * s", ctarget, a=a, s=np.complex64(2j))
    same(got, a * np.complex64(2j))


# ---- reductions: NumPy complex scalars ----

def rtol_of(dt):
    return np.finfo(np.dtype(dt).type(0).real.dtype).eps


@pytest.mark.parametrize("n", [0, 1, 7, 1001])
@pytest.mark.parametrize("dt", CTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["sum", "prod", "mean", "min", "max", "argmin", "argmax",
                                "any", "all"])
def test_reductions(ctarget, rng, op, dt, n):
    x = cdata(rng, dt, n, specials=False)
    if op == "prod":  # near 1: a product of 1001 terms that neither overflows nor vanishes
        x = (1 + (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / 50).astype(dt)
    if op in ("min", "max", "argmin", "argmax") and n == 0:
        with pytest.raises(jitc.EmptyReductionError):
            jitc.evaluate("s = %s(x)" % op, ctarget, x=x)
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of nothing
        # complex64 sums and means accumulate in complex128, rounded once.
        wide = x.astype(np.complex128) if op in ("sum", "mean") else x
        want = getattr(np, op)(wide)
        want = np.dtype(dt).type(want) if op in ("sum", "mean") else want
        numpy_type = type(getattr(np, op)(x))
    got = jitc.evaluate("s = %s(x)" % op, ctarget, x=x)
    assert type(got) is type(want) and type(got) is numpy_type, (got, want)
    if op in ("sum", "mean", "prod") and n > 1:
        mag = np.sum(np.abs(x.astype(np.complex128))) / (n if op == "mean" else 1)
        tol = (2 * n * abs(want) if op == "prod" else 4 * mag) * rtol_of(dt)
        assert abs(complex(got) - complex(want)) <= tol, (got, want, tol)
    else:
        same(got, want)


def test_min_max_order_and_nan(ctarget):
    # NumPy's order of complex numbers: by real part, then imaginary part;
    # a NaN in either part wins min and max, the first one argmin and argmax.
    x = np.array([2 + 1j, 2 - 1j, -1 + 5j, -1 + 4j, 3 + 0j], np.complex128)
    for dt in CTYPES:
        y = x.astype(dt)
        r = jitc.evaluate("lo = min(y); hi = max(y); k = argmin(y); m = argmax(y)", ctarget, y=y)
        same(r["lo"], np.min(y))
        same(r["hi"], np.max(y))
        assert r["k"] == np.argmin(y) and r["m"] == np.argmax(y)
        z = y.copy()
        z[1], z[3] = complex(1, nan), complex(nan, 2)
        r = jitc.evaluate("lo = min(z); hi = max(z); k = argmin(z); m = argmax(z)", ctarget, z=z)
        same(r["lo"], np.min(z))
        same(r["hi"], np.max(z))
        assert r["k"] == np.argmin(z) == 1 and r["m"] == np.argmax(z) == 1


# ---- the signature's spellings ----

@pytest.mark.parametrize("dt", CTYPES, ids=lambda d: np.dtype(d).name)
def test_signature_spellings(dt):
    d = np.dtype(dt)
    for spec in (d.name, d, dt, d.str, d.char, "c%d" % d.itemsize, "c%d" % (8 * d.itemsize),
                 np.zeros(3, dt)):
        assert jitc.compile("b = a", "interp", a=spec).arrays[0][2] == d.name, spec
    for s, want in ((complex, d.name), (1j, d.name), (np.complex128(0), "complex128"),
                    (np.complex64(0), d.name)):
        k = jitc.compile("b = a * s", "interp", a=dt, s=s)
        assert k.arrays[1][2] == want, (s, k.arrays)


def test_signature_weak_complex_with_reals():
    k = jitc.compile("b = a * s", "interp", a=np.float16, s=complex)
    assert k.arrays[1][2] == "complex64"
    k = jitc.compile("b = a * s", "interp", a=np.int32, s=1j)
    assert k.arrays[1][2] == "complex128"


# ---- DLPack: kDLComplex (5), the width of both parts ----

@pytest.mark.parametrize("dt", CTYPES, ids=lambda d: np.dtype(d).name)
def test_dlpack_complex(rng, dt):
    host = cdata(rng, dt, 12)
    b = jitc.evaluate("b = a", "interp", a=DLPackTensor(host, 5, 8 * host.itemsize))
    assert b.dtype == host.dtype and b.tobytes() == host.tobytes()
    assert jitc._dlpack._type_name(5, 8 * host.itemsize, jitc._TYPES) == \
        np.dtype(dt).name


# ---- jitc.dask over complex chunks ----

def test_dask_elementwise(ctarget, rng):
    da = pytest.importorskip("dask.array")
    import jitc.dask
    for dt in CTYPES:
        # Real results of complex chunks: no cast of the chunks' meta (NumPy
        # would warn that it drops the imaginary parts).
        z = cdata(rng, dt, 300)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = jitc.dask.evaluate("m = abs(z); k = argmin(z); t = any(z)", ctarget,
                                   z=da.from_array(z, chunks=64))
        got = {nm: v.compute(scheduler="threads") for nm, v in r.items()}
        same(got["m"], jitc.evaluate("m = abs(z)", ctarget, z=z))
        assert got["k"] == np.argmin(z) and got["t"] == np.any(z)
        assert r["m"].dtype == got["m"].dtype and r["m"]._meta.dtype == got["m"].dtype
        a, b = cdata(rng, dt, 1001), cdata(rng, dt, 1001)
        A, B = da.from_array(a, chunks=97), da.from_array(b, chunks=200)
        c = jitc.dask.evaluate("c = a * s + b", ctarget, a=A, b=B, s=2 - 1j)
        assert c.dtype == dt and c._meta.dtype == dt
        same(c.compute(scheduler="threads"), jitc.evaluate("c = a * s + b", ctarget, a=a, b=b,
                                                            s=2 - 1j))


@pytest.mark.parametrize("dt", CTYPES, ids=lambda d: np.dtype(d).name)
def test_dask_reductions(ctarget, rng, dt):
    da = pytest.importorskip("dask.array")
    import jitc.dask
    x = cdata(rng, dt, 1001, specials=False)
    x[500] = x[17]  # a tie: argmin and argmax give the first
    X = da.from_array(x, chunks=97)
    r = jitc.dask.evaluate("s = sum(x); m = mean(x); lo = min(x); hi = max(x); "
                           "k = argmin(x); j = argmax(x); p = prod(x / abs(x))", ctarget, x=X)
    got = {nm: v.compute(scheduler="threads") for nm, v in r.items()}
    wide = x.astype(np.complex128)
    for nm, want in (("s", dt(np.sum(wide))), ("m", dt(np.mean(wide)))):
        assert type(got[nm]) is dt, (nm, got[nm])
        tol = 8 * np.sum(np.abs(wide)) / (1 if nm == "s" else x.size) * rtol_of(dt)
        assert abs(complex(got[nm]) - complex(want)) <= tol, (nm, got[nm], want)
    same(got["lo"], np.min(x))
    same(got["hi"], np.max(x))
    assert got["k"] == np.argmin(x) and got["j"] == np.argmax(x)
    with np.errstate(all="ignore"):
        want = np.prod((x / np.abs(x)).astype(np.complex128))
    assert abs(complex(got["p"]) - complex(want)) <= 4 * x.size * rtol_of(dt), (got["p"], want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        empty = jitc.dask.evaluate("m = mean(x)", ctarget, x=da.from_array(x[:0])).compute()
    same(empty, jitc.evaluate("m = mean(x)", ctarget, x=x[:0]))


# ---- device arrays: CuPy arrays and PyTorch tensors of complex types ----

def test_fake_complex_device_array_reaches_cuda(rng):
    from test_types import FakeDeviceArray
    for dt in CTYPES:
        a = FakeDeviceArray(cdata(rng, dt, 4), dtype=np.dtype(dt))
        assert jitc._device_info(a)[3] == np.dtype(dt).name
        if not jitc.available("cuda"):
            with pytest.raises(jitc.TargetUnavailable):
                jitc.evaluate("c = a * 1j", a=a)


def test_cupy_complex(cp, rng):
    for dt in CTYPES:
        ha, hb = cdata(rng, dt, 10_001), cdata(rng, dt, 10_001)
        a, b = cp.asarray(ha), cp.asarray(hb)
        c = jitc.evaluate("c = a + b * s", a=a, b=b, s=2 - 1j)
        assert isinstance(c, cp.ndarray) and c.dtype == dt
        same(cp.asnumpy(c), jitc.evaluate("c = a + b * s", "interp", a=ha, b=hb, s=2 - 1j))
        r = jitc.evaluate("s = sum(a); lo = min(a); k = argmax(a)", a=a)
        assert all(isinstance(v, cp.ndarray) and v.shape == () for v in r.values())
        assert r["s"].dtype == dt and r["lo"].dtype == dt
        want = jitc.evaluate("s = sum(a); lo = min(a); k = argmax(a)", "interp", a=ha)
        same(cp.asnumpy(r["lo"])[()], want["lo"])
        assert int(r["k"]) == int(want["k"])
        tol = 8 * np.sum(np.abs(ha[np.isfinite(ha)].astype(np.complex128))) * rtol_of(dt)
        if np.isfinite(want["s"]):
            assert abs(complex(cp.asnumpy(r["s"])[()]) - complex(want["s"])) <= tol


def test_torch_complex(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU for PyTorch")
    for dt, tdt in ((np.complex64, torch.complex64), (np.complex128, torch.complex128)):
        host = cdata(rng, dt, 1001, specials=False)
        a = torch.from_numpy(host).to("cuda")
        assert a.dtype == tdt
        c = jitc.evaluate("c = a * a", a=a)
        assert isinstance(c, torch.Tensor) and c.dtype == tdt and c.device == a.device
        same(c.cpu().numpy(), jitc.evaluate("c = a * a", "interp", a=host))
        s = jitc.evaluate("s = sum(a)", a=a)
        assert s.dtype == tdt and s.shape == ()


@pytest.mark.parametrize("n", [3, 5, 9])
def test_complex_aligned_to_its_part(n):
    """NumPy counts a complex128 at 8 bytes aligned (its part's alignment):
    such a view runs (gathered), of one element too, in and out."""
    z = np.zeros(n)[1:n].view(np.complex128)
    z[...] = np.arange(z.size) + 1j
    assert z.flags.aligned and z.ctypes.data % 16 == 8
    np.testing.assert_array_equal(jitc.evaluate("z * 2"), z * 2)
    o = np.zeros(n)[1:n].view(np.complex128)
    jitc.evaluate("z * 2", local_dict={"z": z.copy()}, out=o)
    np.testing.assert_array_equal(o, z * 2)
