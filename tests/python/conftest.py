"""Shared fixtures: the host targets this machine has."""
import os

import numpy as np
import pytest

import jitc

HOST_TARGETS = [t for t in ("interp", "cpu") if jitc.available(t)]


@pytest.fixture(params=HOST_TARGETS)
def target(request):
    return request.param


def reduces(t):
    """Why target t does not run reductions, or None when it does."""
    try:
        jitc.compile("s = sum(a)", t, a=np.float64)
    except jitc.TargetUnavailable as e:
        return str(e)
    return None


@pytest.fixture(params=HOST_TARGETS)
def rtarget(request):
    """A host target, skipped while it does not run reductions (the tests
    pick it up when it does)."""
    why = reduces(request.param)
    if why:
        pytest.skip(why)
    return request.param


@pytest.fixture
def cp():
    """CuPy on a GPU; the test is skipped without CuPy or a GPU."""
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception as e:  # noqa: BLE001 - no driver is a skip
        pytest.skip(f"no GPU: {e}")
    return cp


@pytest.fixture
def block_runs(monkeypatch):
    """A list that grows by one for each block jitc.dask runs a program on."""
    import jitc.dask
    calls = []
    run = jitc.dask._run_block

    def counted(*args):
        calls.append(1)
        return run(*args)

    monkeypatch.setattr(jitc.dask, "_run_block", counted)
    return calls


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


# tests/t_python.sh: one line per test case in the file $JITC_RESULTS, in
# tests/run.sh's format ("ok NAME", "FAIL NAME: why", "skip NAME: why").
_RESULTS = os.environ.get("JITC_RESULTS")


def pytest_runtest_logreport(report):
    if not _RESULTS:
        return
    path, _, name = report.nodeid.partition("::")
    name = "python." + os.path.splitext(os.path.basename(path))[0] + "." + name
    line = None
    if report.when == "call" and report.passed:
        line = f"ok {name}"
    elif report.failed:
        why = str(report.longrepr).strip().splitlines()[-1] if report.longrepr else ""
        line = f"FAIL {name}: {report.when}: {why}"
    elif report.skipped:
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
        line = f"skip {name}: {why.removeprefix('Skipped: ')}"
    if line:
        with open(_RESULTS, "a") as f:
            f.write(line + "\n")
