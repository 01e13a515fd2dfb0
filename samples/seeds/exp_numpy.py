#!/usr/bin/env python3
"""exp_numpy.py -- NumPy's side of the exp seed: np.exp over the same float32
input that `jitc --in a=randn:1` generates (NumPy's legacy RandomState(1),
bit for bit), timed, and both results measured against exp in float64.
Exits with status 1 when jitc's result is further from it than the 4 ulp
that the cpu and cuda targets promise (docs/language.md, "Accuracy").

    python3 samples/seeds/exp_numpy.py c.npy     (c.npy: jitc's --out c=c.npy)
"""
import sys
import time

import numpy as np

c = np.load(sys.argv[1])
a = np.random.RandomState(1).randn(c.size).astype(np.float32)
times = []
for _ in range(10):
    t0 = time.perf_counter()
    want = np.exp(a)
    times.append((time.perf_counter() - t0) * 1e3)
print("np.exp over %d float32: %.3f ms (median of 10)" % (a.size, np.median(times)))

# The error of each result in ulps of float32, against exp computed in
# float64 (whose own error is far below a float32 ulp).
exact = np.exp(a.astype(np.float64))
ulp = np.spacing(exact.astype(np.float32)).astype(np.float64)


def error(x):
    return np.max(np.abs(x.astype(np.float64) - exact) / ulp)


print("largest error against exp in float64: jitc %.2f ulp, np.exp %.2f ulp" % (error(c), error(want)))
if not error(c) <= 4:
    sys.exit("exp_numpy.py: jitc's exp is %.2f ulp from exp in float64, more than 4" % error(c))
