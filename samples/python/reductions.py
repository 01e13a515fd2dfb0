"""s = sum(a*b); m = max(abs(a - b)); c = a - b over 10M float32 elements:
jitc reads a and b once for all three, NumPy makes three passes; the time
of each, and the results side by side (the sum against float64's).  The
results are checked: m and c equal NumPy's, and s, a float32 sum added up
in float64 and rounded once (docs/language.md, "Reductions"), within one
float32 ulp of the float64 sum.

    python3 samples/python/reductions.py   # JITC_SAMPLE_N=1000 for a small run
"""
import numpy as np

import jitc
from _common import N, best_ms


def runs_reductions(target):
    try:
        jitc.compile("s = sum(a)", target, a=np.float32)
        return True
    except jitc.Error:
        return False


target = next(t for t in ("cpu", "interp") if runs_reductions(t))
rng = np.random.default_rng(7)
a = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(N).astype(np.float32)
program = "s = sum(a*b); m = max(abs(a - b)); c = a - b"
r = jitc.evaluate(program, target=target, a=a, b=b)


def numpy():
    return np.sum(a * b), np.max(np.abs(a - b)), a - b


s, m, c = numpy()
# NumPy's types, NumPy's values (a sum to float32's rounding of float64's).
assert type(r["s"]) is np.float32 and type(r["m"]) is np.float32
assert r["m"] == m and np.array_equal(r["c"], c)
exact = np.sum((a * b).astype(np.float64))
ulp = float(np.spacing(np.float32(abs(exact))))
assert abs(float(r["s"]) - exact) <= ulp, (r["s"], exact)
t_jitc = best_ms(lambda: jitc.evaluate(program, target=target, a=a, b=b))
t_np = best_ms(numpy)
print(f"{program} over {N} float32 elements (best of 5):")
print(f"  jitc {target:6s} {t_jitc:9.3f} ms   sum {r['s']!r}, max {r['m']!r}")
print(f"  NumPy       {t_np:9.3f} ms   sum {s!r}, max {m!r}")
print(f"  float64's sum {exact!r}: jitc off by {abs(float(r['s']) - exact):.3g}, "
      f"NumPy by {abs(float(s) - exact):.3g}")
