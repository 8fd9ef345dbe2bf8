import os

import numpy as np
import pytest


def pytest_configure(config):
    os.environ.setdefault("KILN_CACHE_QUIET", "1")


@pytest.fixture(scope="session")
def kiln():
    import kiln as k

    try:
        k.get_default_queue()
    except k.KilnError as e:  # no runtime / no device here: skip, never fake a pass
        pytest.skip(f"no kiln device: {e}")
    return k


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# awkward sizes: 0, 1, primes, 2^k +- 1
SIZES = [0, 1, 2, 7, 31, 127, 255, 257, 1023, 4099]
