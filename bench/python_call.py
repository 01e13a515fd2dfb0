"""Per-call cost of jitc from Python, against numexpr and NumPy, in one run.

    python3 bench/python_call.py [--repeat R] [--target T] [--c-bench build/jitc]

At 1,000 float64 elements, `c = 2*a + b`: jitc.evaluate, a compiled jitc
kernel's call, numexpr.evaluate, NumPy's `2*a + b`, and one ufunc call
(np.add(a, b, out=c)): the median over R repeats of the time per call.
At 10M elements: jitc's kernel called from Python against the same program
run by the command line's timer (jitc --repeat, the kernel from C).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import jitc


def per_call(fn, calls, repeat):
    """Median over `repeat` samples of the mean time of `calls` calls, in us."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=25)
    ap.add_argument("--target", default=None)
    ap.add_argument("--jitc", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                   "jitc"), help="the command line, for C")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    target = args.target or jitc.default_target()
    rng = np.random.default_rng(1)
    rows = []

    n = 1000
    a, b = rng.random(n), rng.random(n)
    c = np.empty(n)
    k = jitc.compile("c = 2*a + b", target=target, a=np.float64, b=np.float64)
    prog = "c = 2*a + b"
    # evaluate and numexpr find a and b in the caller's locals (the
    # lambda's, by its defaults), as in `c = jitc.evaluate("c = 2*a + b")`.
    calls = 2000
    rows.append(("jitc.evaluate", per_call(lambda a=a, b=b: jitc.evaluate(prog, target=target),
                                           calls, args.repeat)))
    rows.append(("jitc kernel call", per_call(lambda: k(a, b), calls, args.repeat)))
    kc = jitc.compile("c = 2*a + b", target=target, a=np.float64, b=np.float64, c=np.float64)
    rows.append(("jitc kernel call, c given", per_call(lambda: kc(a, b, c), calls,
                                                       args.repeat)))
    try:
        import numexpr
        rows.append(("numexpr.evaluate", per_call(lambda a=a, b=b: numexpr.evaluate("2*a + b"), calls,
                                                  args.repeat)))
    except ImportError:
        rows.append(("numexpr.evaluate", None))
    rows.append(("NumPy 2*a + b", per_call(lambda: 2 * a + b, calls, args.repeat)))
    rows.append(("NumPy np.add(a, b, out=c)", per_call(lambda: np.add(a, b, out=c), calls,
                                                       args.repeat)))

    n = 10_000_000
    a, b = rng.random(n), rng.random(n)
    c = np.empty(n)
    reps = max(5, args.repeat // 2)
    # The C timer below reuses its output: the like here is the call that
    # writes into a given c; a new c each call adds the page faults of
    # 80 MB of fresh memory, reported apart.
    big = per_call(lambda: kc(a, b, c), 1, reps)
    big_new = per_call(lambda: k(a, b), 1, reps)
    big_c = None
    if os.path.exists(args.jitc):
        # The same kernel from C: the command line times jitc_run alone
        # (inputs in memory, outputs allocated once) over --repeat runs.
        out = subprocess.run([args.jitc, "-t", target, "-n", str(n), "--in", "a=rand:1",
                              "--in", "b=rand:2", "--repeat", str(reps),
                              "--json", prog], capture_output=True, text=True)
        try:
            rec = json.loads(out.stdout.splitlines()[-1])
            big_c = rec.get("run_ms", rec.get("median_ms")) * 1e3
        except (ValueError, IndexError, TypeError):
            big_c = None
    if args.json:
        print(json.dumps({"target": target, "n1000_us": dict(rows),
                          "n10M_python_us": big, "n10M_python_new_c_us": big_new,
                          "n10M_c_us": big_c}))
        return
    print(f"c = 2*a + b, float64, target {target}, median per call")
    print(f"{'1,000 elements':34s} {'us':>9s}")
    for name, t in rows:
        print(f"  {name:32s} {t:9.2f}" if t is not None else f"  {name:32s} {'n/a':>9s}")
    print(f"{'10,000,000 elements':34s} {'ms':>9s}")
    print(f"  {'jitc kernel call from Python':32s} {big / 1e3:9.2f}  (c given)")
    print(f"  {'jitc kernel call from Python':32s} {big_new / 1e3:9.2f}  (a new c each call)")
    if big_c is not None:
        print(f"  {'the same kernel from C':32s} {big_c / 1e3:9.2f}  "
              f"(Python/C {big / big_c:.2f})")


if __name__ == "__main__":
    sys.exit(main())
