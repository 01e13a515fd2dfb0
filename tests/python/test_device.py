"""Device arrays on the cuda target: CuPy arrays and PyTorch tensors, in place,
outputs of the same kind on the same device, the current stream.  Skipped
without CuPy or PyTorch and a GPU."""
import numpy as np
import pytest

import jitc
from test_reduce import data, float_tol, numpy_of, same_scalar

def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU for PyTorch")
    return torch


def test_cupy_evaluate(cp):
    a = cp.arange(1000, dtype=cp.float64)
    b = cp.ones(1000, dtype=cp.float64)
    c = jitc.evaluate("c = 2*a + b", a=a, b=b)
    assert isinstance(c, cp.ndarray) and c.device.id == a.device.id
    np.testing.assert_array_equal(cp.asnumpy(c), 2 * np.arange(1000.0) + 1)


def test_cupy_second_device(cp):
    """Arrays on device 1 run there, the output is made there; arrays on two
    devices are refused."""
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU")
    with cp.cuda.Device(1):
        a = cp.arange(1001, dtype=cp.float64)
        b = cp.ones(1001, dtype=cp.float64)
    c = jitc.evaluate("c = 2*a + b", a=a, b=b)  # device 0 is current here
    assert c.device.id == 1
    np.testing.assert_array_equal(cp.asnumpy(c), 2 * np.arange(1001.0) + 1)
    with cp.cuda.Device(0):
        b0 = cp.ones(1001, dtype=cp.float64)
    with pytest.raises(jitc.Error, match="device"):
        jitc.evaluate("c = 2*a + b", a=a, b=b0)


def test_cupy_in_place_and_float32(cp):
    a = cp.arange(10, dtype=cp.float32)
    r = jitc.evaluate("a[i] += 1.5", a=a)
    assert r is a
    np.testing.assert_array_equal(cp.asnumpy(a), np.arange(10, dtype=np.float32) + 1.5)
    c = jitc.evaluate("c = a * s", a=a, s=np.float64(2))
    assert c.dtype == cp.float64


def test_cupy_stream_and_fortran(cp):
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        a = cp.asfortranarray(cp.arange(12.0).reshape(3, 4))
        c = jitc.evaluate("c = a * 2", a=a)
    s.synchronize()
    assert c.flags.f_contiguous
    np.testing.assert_array_equal(cp.asnumpy(c), np.arange(12.0).reshape(3, 4) * 2)


def test_torch_evaluate():
    torch = _torch()
    a = torch.arange(1000, dtype=torch.float64, device="cuda")
    b = torch.ones(1000, dtype=torch.float64, device="cuda")
    c = jitc.evaluate("c = 2*a + b", a=a, b=b)
    assert isinstance(c, torch.Tensor) and c.device == a.device
    torch.testing.assert_close(c, 2 * a + b)
    jitc.evaluate("a[i] += 1", a=a)
    torch.testing.assert_close(a, torch.arange(1000, dtype=torch.float64, device="cuda") + 1)


def test_torch_compile_kernel():
    torch = _torch()
    a = torch.rand(5000, device="cuda")
    k = jitc.compile("c = exp(a) * s", a=a, s=float)
    assert k.target == "cuda"
    torch.testing.assert_close(k(a, 2.0), torch.exp(a) * 2.0)


def test_host_and_device_mixed(cp):
    with pytest.raises(jitc.InputError, match="host and device"):
        jitc.evaluate("c = a + b", a=cp.ones(3), b=np.ones(3))


def test_device_array_on_cpu_target(cp):
    with pytest.raises(jitc.InputError, match="cuda"):
        jitc.evaluate("c = a + 1", target="cpu", a=cp.ones(3))


class FakeDeviceArray:
    """An object with __cuda_array_interface__ (v3) over host memory: enough
    to reach the device path without a GPU (the run itself is refused)."""

    def __init__(self, host, strides=None, typestr=None):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": typestr or host.dtype.str,
            "data": (host.ctypes.data, False), "version": 3, "strides": strides,
            "stream": None}


def test_fake_device_array_reaches_cuda():
    """Device arrays of any strides, broadcast, 0-d, reduced over an axis:
    each is taken (refused only for want of a GPU, where before a strided
    or a 0-d device array was refused as such)."""
    if jitc.available("cuda"):
        pytest.skip("a GPU is here: the CuPy and PyTorch tests cover it")
    a = FakeDeviceArray(np.ones(4))
    with pytest.raises(jitc.TargetUnavailable):
        jitc.evaluate("a[i] += 1", a=a)
    with pytest.raises(jitc.TargetUnavailable):
        jitc.compile("c = a + s", a=a, s=1.0)
    m = np.ones((3, 4))
    for names in ({"a": FakeDeviceArray(np.ones(8), strides=(16,))},
                  {"a": FakeDeviceArray(m, strides=(8, 24)), "b": FakeDeviceArray(np.ones(4))},
                  {"a": FakeDeviceArray(m, strides=(-32, 8)), "b": FakeDeviceArray(np.ones(()))}):
        names = dict(names, b=names.get("b", FakeDeviceArray(np.ones(1))))
        with pytest.raises(jitc.TargetUnavailable):
            jitc.evaluate("c = a + b", **names)
    with pytest.raises(jitc.TargetUnavailable):
        jitc.evaluate("s = sum(a, axis=0)", a=FakeDeviceArray(m))


def test_fake_device_array_errors():
    a = FakeDeviceArray(np.ones(4))
    with pytest.raises(jitc.InputError, match="host and device"):
        jitc.evaluate("c = a + b", a=a, b=np.ones(4))
    with pytest.raises(jitc.InputError, match="cuda"):
        jitc.evaluate("c = a + 1", target="interp", a=a)
    with pytest.raises(jitc.InputError, match="device array of <f16"):
        jitc.evaluate("c = a + 1", a=FakeDeviceArray(np.ones(4, np.longdouble)))


# ---- reductions: a 0-d array of the inputs' kind on their device ----

RED_OPS = ["sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"]


@pytest.mark.parametrize("op", RED_OPS)
@pytest.mark.parametrize("dt", [np.bool_, np.int32, np.int64, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 7, 100_003])
def test_cupy_reduction(cp, op, dt, n):
    host = data(np.random.default_rng(n), dt, n, op)
    a = cp.asarray(host)
    r = jitc.evaluate(f"s = {op}(a)", a=a)
    assert isinstance(r, cp.ndarray) and r.shape == () and r.device.id == a.device.id
    want = numpy_of(op, host)
    inexact = isinstance(want, np.floating) and op in ("sum", "mean", "prod") and n > 1
    same_scalar(cp.asnumpy(r)[()], want, exact=not inexact,
                tol=float_tol(op, host, want) if inexact else 0)


def test_cupy_reductions_with_outputs_on_a_stream(cp):
    host_a = np.random.default_rng(1).standard_normal(1_000_001).astype(np.float32)
    host_b = np.random.default_rng(2).standard_normal(1_000_001).astype(np.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        a, b = cp.asarray(host_a), cp.asarray(host_b)
        r = jitc.evaluate("s = sum(a*b); m = max(abs(a - b)); c = a - b; k = argmin(a)",
                          a=a, b=b)
    s.synchronize()
    assert set(r) == {"s", "m", "c", "k"}
    assert all(isinstance(v, cp.ndarray) for v in r.values())
    ab = host_a * host_b
    same_scalar(cp.asnumpy(r["s"])[()], np.sum(ab), exact=False,
                tol=float_tol("sum", ab, np.sum(ab)))
    same_scalar(cp.asnumpy(r["m"])[()], np.max(np.abs(host_a - host_b)))
    same_scalar(cp.asnumpy(r["k"])[()], np.argmin(host_a))
    np.testing.assert_array_equal(cp.asnumpy(r["c"]), host_a - host_b)


def test_cupy_reduction_same_bits_every_run(cp):
    a = cp.asarray(np.random.default_rng(3).standard_normal(3_000_017).astype(np.float32))
    first = cp.asnumpy(jitc.evaluate("sum(a)", a=a)).tobytes()
    for _ in range(19):
        assert cp.asnumpy(jitc.evaluate("sum(a)", a=a)).tobytes() == first


def test_cupy_reduction_empty(cp):
    a = cp.zeros(0, dtype=cp.float64)
    r = jitc.evaluate("s = sum(a); p = prod(a); y = any(a)", a=a)
    assert float(r["s"]) == 0.0 and float(r["p"]) == 1.0 and not bool(r["y"])
    with pytest.raises(jitc.EmptyReductionError):
        jitc.evaluate("s = max(a)", a=a)


def test_torch_reductions():
    torch = _torch()
    a = torch.rand(10_001, device="cuda", dtype=torch.float64)
    x = torch.arange(-50, 51, device="cuda", dtype=torch.int32)
    r = jitc.evaluate("s = sum(a); k = argmax(a); c = a * 2", a=a)
    assert isinstance(r["s"], torch.Tensor) and r["s"].shape == () and r["s"].device == a.device
    torch.testing.assert_close(r["s"], a.sum())
    assert r["k"].dtype == torch.int64 and int(r["k"]) == int(a.argmax())
    torch.testing.assert_close(r["c"], a * 2)
    t = jitc.evaluate("sum(x)", x=x)
    assert t.dtype == torch.int64 and int(t) == 0 and t.device == x.device
    k = jitc.compile("s = mean(x)", x=x)
    torch.testing.assert_close(k(x), x.double().mean())


def test_fake_device_array_reduction_needs_cuda():
    if jitc.available("cuda"):
        pytest.skip("a GPU is here: the CuPy and PyTorch tests cover it")
    with pytest.raises(jitc.TargetUnavailable):
        jitc.evaluate("s = sum(a)", a=FakeDeviceArray(np.ones(4)))
