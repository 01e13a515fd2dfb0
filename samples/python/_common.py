"""What the samples share: the size (JITC_SAMPLE_N, default 10M), a timer,
and whether a GPU is here for CuPy (with the reason when not)."""
import os
import time

N = int(os.environ.get("JITC_SAMPLE_N", 10_000_000))


def best_ms(f, repeat=5, sync=None):
    """The best of `repeat` timed calls of f, in milliseconds, after one
    untimed call (the compile, the first touch of memory).  sync() waits
    for queued GPU work before each clock read."""
    f()
    best = float("inf")
    for _ in range(repeat):
        if sync:
            sync()
        t = time.perf_counter()
        f()
        if sync:
            sync()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def cupy_or_reason():
    """(cupy, None) when CuPy and a GPU are here, else (None, why not)."""
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "no GPU"
        return cupy, None
    except Exception as e:  # noqa: BLE001 - no CuPy, no driver: a skip
        return None, f"no CuPy with a GPU ({type(e).__name__}: {e})"
