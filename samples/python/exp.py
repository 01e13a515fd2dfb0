"""c = exp(a) over 10M float32 elements against np.exp: the time of each,
and how far apart they are (in units in the last place, float32's).

    python3 samples/python/exp.py          # JITC_SAMPLE_N=1000 for a small run
"""
import numpy as np

import jitc
from _common import N, best_ms

rng = np.random.default_rng(7)
a = rng.uniform(-80, 80, N).astype(np.float32)
target = "cpu" if jitc.available("cpu") else "interp"
c = jitc.evaluate("c = exp(a)", target=target, a=a)
want = np.exp(a)
assert c.dtype == np.float32
ulps = np.abs(c.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64)).max()
t_jitc = best_ms(lambda: jitc.evaluate("c = exp(a)", target=target, a=a))
t_np = best_ms(lambda: np.exp(a))
print(f"exp over {N} float32 elements (best of 5):")
print(f"  jitc {target:6s} {t_jitc:9.3f} ms")
print(f"  np.exp      {t_np:9.3f} ms")
print(f"  largest difference: {ulps} ulp")
