"""Shared fixtures: the host targets this machine has."""
import numpy as np
import pytest

import jitc

HOST_TARGETS = [t for t in ("interp", "cpu") if jitc.available(t)]


@pytest.fixture(params=HOST_TARGETS)
def target(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
