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

a = np.zeros(N)
rows = []
host = "cpu" if jitc.available("cpu") else "interp"
rows.append((f"jitc {host}, NumPy array", best_ms(lambda: jitc.evaluate("a[i] += 1", target=host, a=a))))
rows.append(("NumPy a += 1", best_ms(lambda: np.add(a, 1, out=a))))
cp, why = cupy_or_reason()
if not jitc.available("cuda"):
    why = "the cuda target is not available here"
if why:
    rows.append(("jitc cuda", f"skipped: {why}"))
else:
    rows.append(("jitc cuda, NumPy array (copies)",
                 best_ms(lambda: jitc.evaluate("a[i] += 1", target="cuda", a=a))))
    d = cp.zeros(N)
    sync = cp.cuda.get_current_stream().synchronize
    rows.append(("jitc cuda, CuPy array", best_ms(lambda: jitc.evaluate("a[i] += 1", a=d), sync=sync)))
    rows.append(("CuPy d += 1", best_ms(lambda: cp.add(d, 1, out=d), sync=sync)))
    assert float(d[0]) == float(d[-1]) and float(d[0]) > 0
# Every call added 1 to every element, whatever did it.
assert a[0] == a[-1] and a[0] > 0
print(f"a[i] += 1 over {N} float64 elements (best of 5):")
for what, ms in rows:
    print(f"  {what:34s} " + (f"{ms:9.3f} ms" if isinstance(ms, float) else ms))
