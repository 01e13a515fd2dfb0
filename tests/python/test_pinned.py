"""The outputs of runs on the cuda target over host arrays, in pinned memory
kept for reuse (python/jitc/pinned.c): NumPy arrays like any other, right on
every use of a block, the block handed to the next output of its size once
its array is gone, resized and copied as NumPy's own.  Skipped without a
GPU."""
import gc

import numpy as np
import pytest

import jitc

pytestmark = pytest.mark.skipif(not jitc.available("cuda"), reason="no GPU")

# float64 elements of a size no other test makes: 37.7 MB, a block of its own
N = 4_718_593


def test_outputs_right_and_reused():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(N)
    first = jitc.evaluate("c = a * 3 - 1", target="cuda", a=a)
    np.testing.assert_array_equal(first, a * 3 - 1)
    assert first.flags.owndata and first.flags.writeable
    at = first.ctypes.data
    first[:] = 7  # dirty: the next runs write every element
    del first
    gc.collect()
    for k in range(3):
        b = a * (k + 1)
        r = jitc.evaluate("c = b * 2 + 1", target="cuda", b=b)
        assert r.ctypes.data == at  # the same block, pinned once
        np.testing.assert_array_equal(r, b * 2 + 1)
        del r


def test_several_alive():
    """Outputs held at once each have a block; two outputs of one run too."""
    a = np.linspace(-3, 3, N)
    outs = [jitc.evaluate("c = a + k", target="cuda", a=a, k=float(k)) for k in range(3)]
    two = jitc.evaluate("c = a * 2; d = a - 1", target="cuda", a=a)
    c, d = two["c"], two["d"]
    assert len({o.ctypes.data for o in outs + [c, d]}) == 5
    for k, o in enumerate(outs):
        np.testing.assert_array_equal(o, a + k)
    np.testing.assert_array_equal(c, a * 2)
    np.testing.assert_array_equal(d, a - 1)


def test_resize_and_copy():
    a = np.arange(N, dtype=np.float64)
    r = jitc.evaluate("c = a + 0.5", target="cuda", a=a)
    r.resize(2 * N, refcheck=False)  # NumPy reallocates through the pool
    np.testing.assert_array_equal(r[:N], a + 0.5)
    assert not r[N:].any()
    c = r.copy()
    del r
    gc.collect()
    np.testing.assert_array_equal(c[:N], a + 0.5)


def test_axis_result_and_small():
    m = np.random.default_rng(6).standard_normal((N, 3))
    s = jitc.evaluate("s = sum(m, axis=1)", target="cuda", m=m)
    np.testing.assert_allclose(s, m.sum(axis=1), rtol=1e-13, atol=1e-13)
    small = jitc.evaluate("c = a + 1", target="cuda", a=np.ones(10))  # NumPy's own memory
    np.testing.assert_array_equal(small, 2)
