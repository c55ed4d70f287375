# SPDX-License-Identifier: MIT
# Fixtures of the Python bindings' tests: an in-process card (the engine in the test process,
# the same arithmetic as the card behind tpu.ko) and a seeded random generator.
import numpy as np
import pytest

import tpurt


@pytest.fixture(scope="session")
def card():
    return tpurt.Device.open_in_process()


@pytest.fixture
def rng():
    return np.random.default_rng(20261206)
