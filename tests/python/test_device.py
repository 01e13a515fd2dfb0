"""Device arrays on the cuda target: CuPy arrays and PyTorch tensors, in place,
outputs of the same kind on the same device, the current stream.  Skipped
without CuPy or PyTorch and a GPU."""
import numpy as np
import pytest

import jitc

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
    if jitc.available("cuda"):
        pytest.skip("a GPU is here: the CuPy and PyTorch tests cover it")
    a = FakeDeviceArray(np.ones(4))
    with pytest.raises(jitc.TargetUnavailable):
        jitc.evaluate("a[i] += 1", a=a)
    with pytest.raises(jitc.TargetUnavailable):
        jitc.compile("c = a + s", a=a, s=1.0)


def test_fake_device_array_errors():
    a = FakeDeviceArray(np.ones(4))
    with pytest.raises(jitc.InputError, match="host and device"):
        jitc.evaluate("c = a + b", a=a, b=np.ones(4))
    with pytest.raises(jitc.InputError, match="cuda"):
        jitc.evaluate("c = a + 1", target="interp", a=a)
    with pytest.raises(jitc.InputError, match="device array of <f2"):
        jitc.evaluate("c = a + 1", a=FakeDeviceArray(np.ones(4, np.float16)))
    with pytest.raises(jitc.InputError, match="not contiguous"):
        jitc.evaluate("c = a + 1", a=FakeDeviceArray(np.ones(4), strides=(16,)))
