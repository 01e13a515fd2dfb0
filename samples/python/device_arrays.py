"""jitc on CuPy arrays and PyTorch tensors: the program runs on the GPU where
the data is, on the array's current stream, and its output is an array of
the same kind on the same device.  Skips, saying why, without CuPy or
PyTorch or a GPU.

    python3 samples/python/device_arrays.py     # JITC_SAMPLE_N=1000 for a small run
"""
import sys

import numpy as np

import jitc
from _common import N, best_ms, cupy_or_reason

if not jitc.available("cuda"):
    print("skip: the cuda target is not available here (no GPU or no CUDA driver)")
    sys.exit(0)
ran = 0
cp, why = cupy_or_reason()
if cp is None:
    print(f"skip CuPy: {why}")
else:
    a = cp.random.random(N, dtype=cp.float32)
    b = cp.random.random(N, dtype=cp.float32)
    c = jitc.evaluate("c = exp(a) * b + 1")  # a and b from this script's variables
    assert isinstance(c, cp.ndarray) and c.dtype == cp.float32
    # Both round each step to float32 and differ by the exp alone (each
    # within 4 ulp of the exact value, docs/language.md): at most 8 ulp of
    # the largest result apart, whose ulp is spacing(e + 1).
    err = float(cp.abs(c - (cp.exp(a) * b + 1)).max())
    assert err <= 8 * float(np.spacing(np.float32(np.e + 1))), err
    sync = cp.cuda.get_current_stream().synchronize
    t = best_ms(lambda: jitc.evaluate("c = exp(a) * b + 1", a=a, b=b), sync=sync)
    t_cp = best_ms(lambda: cp.exp(a) * b + 1, sync=sync)
    print(f"CuPy, {N} float32: jitc {t:.3f} ms, CuPy's three kernels {t_cp:.3f} ms, "
          f"largest difference {err:.3g}")
    ran += 1
try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("PyTorch sees no GPU")
except Exception as e:  # noqa: BLE001 - no PyTorch or no GPU: a skip
    print(f"skip PyTorch: {e}")
else:
    x = torch.linspace(-3, 3, N, device="cuda", dtype=torch.float64)
    y = jitc.evaluate("y = where(x > 0, x, 0.1 * x)", x=x)  # a leaky ReLU
    assert isinstance(y, torch.Tensor) and y.device == x.device
    assert torch.allclose(y, torch.nn.functional.leaky_relu(x, 0.1), rtol=1e-15, atol=0)
    x[:] = 1
    jitc.evaluate("x[i] *= 3", x=x)  # in place, on the tensor's memory
    assert bool((x == 3).all())
    print(f"PyTorch, {N} float64: leaky ReLU equal to torch's, in place x *= 3 done")
    ran += 1
if not ran:
    print("skip: neither CuPy nor PyTorch with a GPU")
