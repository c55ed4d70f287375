# SPDX-License-Identifier: MIT
# Fixtures of the Python bindings' tests: a card and a seeded random generator. The card is an
# in-process one (the engine in the test process, the same arithmetic as the card behind tpu.ko),
# or with TPURT_TEST_ON_CARD=1 card 0 behind tpu.ko (a server VM's tests: tests/vm).
import os

import numpy as np
import pytest

import tpurt


@pytest.fixture(scope="session")
def card():
    if os.environ.get("TPURT_TEST_ON_CARD") == "1":
        return tpurt.Device.open(0)
    return tpurt.Device.open_in_process()


@pytest.fixture
def rng():
    return np.random.default_rng(20261206)
