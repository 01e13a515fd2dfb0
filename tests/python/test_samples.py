"""Every sample of samples/python/ runs with exit 0 (small sizes); the GPU
parts skip themselves without a GPU.  dask_cluster.py is run by
test_dask.py, against its cluster's address."""
import os
import subprocess
import sys

import pytest

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples",
                       "python")


def run_sample(name, *args):
    env = dict(os.environ, JITC_SAMPLE_N="1001")
    p = subprocess.run([sys.executable, os.path.join(SAMPLES, name), *args], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.mark.parametrize("name", ["inc.py", "exp.py", "device_arrays.py", "reductions.py"])
def test_sample(name):
    out = run_sample(name)
    assert out.strip()


def test_every_sample_is_tested():
    scripts = {f for f in os.listdir(SAMPLES) if f.endswith(".py") and not f.startswith("_")}
    assert scripts == {"inc.py", "exp.py", "device_arrays.py", "dask_cluster.py", "reductions.py"}
