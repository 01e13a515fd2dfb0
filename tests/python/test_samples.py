"""Every sample of samples/python/ runs with exit 0 (small sizes), and what
it prints is right: each value against NumPy or its documented bound, each
time a positive number, the GPU parts skipped, saying why, without a GPU.
dask_cluster.py is run by test_dask.py, against its cluster's address."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import jitc

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples",
                       "python")
N = 1001
HOST = "cpu" if jitc.available("cpu") else "interp"
MS = r"([0-9]+\.[0-9]{3}) ms"


def run_sample(name, *args):
    env = dict(os.environ, JITC_SAMPLE_N=str(N))
    p = subprocess.run([sys.executable, os.path.join(SAMPLES, name), *args], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def line(out, pattern):
    """The groups of the line of out that matches pattern (whole line)."""
    m = re.search("^" + pattern + "$", out, re.M)
    assert m, f"no line matching {pattern!r} in:\n{out}"
    return m.groups()


def positive_ms(*texts):
    for t in texts:
        assert float(t) > 0, texts


def test_inc():
    out = run_sample("inc.py")
    line(out, rf"a\[i\] \+= 1 over {N} float64 elements \(best of 5\):")
    positive_ms(*line(out, rf"  jitc {HOST}, NumPy array +{MS}"), *line(out, rf"  NumPy a \+= 1 +{MS}"))
    if jitc.available("cuda"):
        line(out, rf"  jitc cuda, NumPy array \(copies\) +{MS}")
    else:
        line(out, r"  jitc cuda +skipped: the cuda target is not available here")


def test_exp():
    out = run_sample("exp.py")
    positive_ms(*line(out, rf"  jitc {HOST:6s} +{MS}"), *line(out, rf"  np\.exp +{MS}"))
    ulp, bound = map(int, line(out, r"  largest difference: ([0-9]+) ulp \(at most ([0-9]+)\)"))
    # docs/language.md: the cpu target within 4 ulp of exp, NumPy's within 4.
    assert bound == 8 and 0 <= ulp <= bound, out


def test_reductions():
    out = run_sample("reductions.py")
    # The sample's data, made here again: its seed and size.
    rng = np.random.default_rng(7)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    exact = np.sum((a * b).astype(np.float64))
    num = r"np\.float(?:32|64)\(([-0-9.e+]+)\)"
    t, s, m = line(out, rf"  jitc {HOST:6s} +{MS}   sum {num}, max {num}")
    t_np, s_np, m_np = line(out, rf"  NumPy +{MS}   sum {num}, max {num}")
    positive_ms(t, t_np)
    assert np.float32(s_np) == np.sum(a * b) and np.float32(m_np) == np.max(np.abs(a - b))
    assert np.float32(m) == np.max(np.abs(a - b))
    # A float32 sum added in float64, rounded once: within a float32 ulp.
    assert abs(float(np.float32(s)) - exact) <= np.spacing(np.float32(abs(exact))), (s, exact)
    (e,) = line(out, rf"  float64's sum {num}: jitc off by [-0-9.e+]+, NumPy by [-0-9.e+]+")
    assert float(e) == exact


def test_device_arrays():
    out = run_sample("device_arrays.py")
    if not jitc.available("cuda"):
        assert out == "skip: the cuda target is not available here (no GPU or no CUDA driver)\n"
        return
    cupy = re.search(rf"^CuPy, {N} float32: .* largest difference ([-0-9.e+]+)$", out, re.M)
    torch = re.search(rf"^PyTorch, {N} float64: leaky ReLU equal to torch's, in place x \*= 3 done$",
                      out, re.M)
    assert cupy or torch or "skip: neither CuPy nor PyTorch with a GPU" in out, out
    if cupy:
        assert float(cupy.group(1)) <= 8 * np.spacing(np.float32(np.e + 1)), out


def test_every_sample_is_tested():
    scripts = {f for f in os.listdir(SAMPLES) if f.endswith(".py") and not f.startswith("_")}
    tested = {n[5:] + ".py" for n in globals() if n.startswith("test_")} | {"dask_cluster.py"}
    assert scripts <= tested, scripts - tested
