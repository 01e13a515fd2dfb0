"""a[i] += 1 over 10M float64 elements on the CPU and on the GPU, timed side
by side: jitc's cpu target on a NumPy array, NumPy itself, and the cuda
target on the same NumPy array (copies in and out included) and on a CuPy
array (the data stays on the GPU).  The GPU lines say why they are skipped
without a GPU.

    python3 samples/python/inc.py          # JITC_SAMPLE_N=1000 for a small run
"""
import numpy as np

import jitc
from _common import N, best_ms, cupy_or_reason

calls = {}


def counted(key, f):
    """f, counting its calls in calls[key]: each adds 1 to every element."""
    def g():
        calls[key] = calls.get(key, 0) + 1
        f()
    return g


a = np.zeros(N)
rows = []
host = "cpu" if jitc.available("cpu") else "interp"
rows.append((f"jitc {host}, NumPy array",
             best_ms(counted("a", lambda: jitc.evaluate("a[i] += 1", target=host, a=a)))))
rows.append(("NumPy a += 1", best_ms(counted("a", lambda: np.add(a, 1, out=a)))))
cp, why = cupy_or_reason()
if not jitc.available("cuda"):
    why = "the cuda target is not available here"
if why:
    rows.append(("jitc cuda", f"skipped: {why}"))
else:
    rows.append(("jitc cuda, NumPy array (copies)",
                 best_ms(counted("a", lambda: jitc.evaluate("a[i] += 1", target="cuda", a=a)))))
    d = cp.zeros(N)
    sync = cp.cuda.get_current_stream().synchronize
    rows.append(("jitc cuda, CuPy array",
                 best_ms(counted("d", lambda: jitc.evaluate("a[i] += 1", a=d)), sync=sync)))
    rows.append(("CuPy d += 1", best_ms(counted("d", lambda: cp.add(d, 1, out=d)), sync=sync)))
    assert bool((d == calls["d"]).all()), (calls, float(d.min()), float(d.max()))
# Every call added 1 to every element, whatever did it: each element holds
# the number of calls.
assert (a == calls["a"]).all(), (calls, a.min(), a.max())
print(f"a[i] += 1 over {N} float64 elements (best of 5):")
for what, ms in rows:
    print(f"  {what:34s} " + (f"{ms:9.3f} ms" if isinstance(ms, float) else ms))
