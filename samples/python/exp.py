"""c = exp(a) over 10M float32 elements against np.exp: the time of each,
and how far apart they are (in units in the last place, float32's).  Exits
with status 1 when they are further apart than jitc promises: the cpu
target's exp is within 4 ulp of the exact result, and so is NumPy's own
float32 exp, so the two are within 4 + 4 = 8 ulp of each other
(docs/language.md, "Accuracy"; interp computes float32 exp as NumPy does).

    python3 samples/python/exp.py          # JITC_SAMPLE_N=1000 for a small run
"""
import sys

import numpy as np

import jitc
from _common import N, best_ms

BOUND_ULP = 8

rng = np.random.default_rng(7)
a = rng.uniform(-80, 80, N).astype(np.float32)
target = "cpu" if jitc.available("cpu") else "interp"
c = jitc.evaluate("c = exp(a)", target=target, a=a)
want = np.exp(a)
assert c.dtype == np.float32
# Positive finite floats (e^-80 is a normal float32, e^80 below its
# largest) are ordered as their bits: the distance in ulp is the integers'.
ulps = np.abs(c.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64)).max()
t_jitc = best_ms(lambda: jitc.evaluate("c = exp(a)", target=target, a=a))
t_np = best_ms(lambda: np.exp(a))
print(f"exp over {N} float32 elements (best of 5):")
print(f"  jitc {target:6s} {t_jitc:9.3f} ms")
print(f"  np.exp      {t_np:9.3f} ms")
print(f"  largest difference: {ulps} ulp (at most {BOUND_ULP})")
if ulps > BOUND_ULP:
    sys.exit(f"exp.py: jitc's exp is {ulps} ulp from np.exp, more than {BOUND_ULP}")
