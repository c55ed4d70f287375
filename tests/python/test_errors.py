# SPDX-License-Identifier: MIT
# The runtime's errors reach Python as tpurt.Error (a RuntimeError) with the runtime's message
# and code: bad shapes, mismatched dtypes, unknown ops and attributes, no card; numpy dtypes the
# card has no type for are a ValueError.
import numpy as np
import pytest

import tpurt


def test_error_is_a_runtime_error():
    assert issubclass(tpurt.Error, RuntimeError)
    assert issubclass(tpurt.JobError, tpurt.Error)


def test_bad_shapes(card):
    a = tpurt.Tensor.empty(card, tpurt.fp32, [4, 8])
    b = tpurt.Tensor.empty(card, tpurt.fp32, [7, 3])
    c = tpurt.Tensor.empty(card, tpurt.fp32, [4, 3])
    with pytest.raises(tpurt.Error) as e:
        tpurt.ops.matmul(card, a, b, c)
    assert e.value.code == "InvalidArgument"
    assert "8" in str(e.value) and "7" in str(e.value)


def test_dtype_mismatch(card):
    a = tpurt.Tensor.empty(card, tpurt.int8, [4, 8])
    b = tpurt.Tensor.empty(card, tpurt.fp32, [8, 3])
    c = tpurt.Tensor.empty(card, tpurt.int32, [4, 3])
    with pytest.raises(tpurt.Error, match="(?i)int8|fp32|type"):
        tpurt.ops.matmul(card, a, b, c)
    with pytest.raises(tpurt.Error):  # on a stream the checks run at once too
        tpurt.ops.matmul(tpurt.Stream(card), a, b, c)


def test_copy_of_another_shape(card):
    t = tpurt.Tensor.empty(card, tpurt.fp32, [2, 3])
    with pytest.raises(tpurt.Error, match=r"\[3, 2\].*\[2, 3\]"):
        t.copy_from(np.zeros((3, 2), dtype=np.float32))


def test_unknown_attribute_value(card):
    x = tpurt.Tensor.empty(card, tpurt.fp32, [2, 3])
    with pytest.raises(tpurt.Error, match="nonsense"):
        tpurt.ops.unary(card, x, x, function="nonsense")
    with pytest.raises(TypeError, match="colour"):
        tpurt.ops.unary(card, x, x, colour="red")


def test_no_card_behind_the_driver():
    if tpurt.Device.list():
        pytest.skip("this system has a card behind tpu.ko")
    with pytest.raises(tpurt.Error) as e:
        tpurt.Device.open(0)
    assert e.value.code in ("NoDevice", "DeviceAccess")


def test_numpy_dtype_without_card_type(card):
    with pytest.raises(ValueError, match="float64"):
        tpurt.Tensor.from_numpy(card, np.zeros(3))


def test_missing_data_set(tmp_path):
    with pytest.raises(tpurt.Error, match="fashion-mnist") as e:
        tpurt.load_dataset("fashion-mnist", data_dir=str(tmp_path))
    assert e.value.code == "DataError"
