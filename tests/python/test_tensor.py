# SPDX-License-Identifier: MIT
# Tensors to and from numpy: every dtype round-trips, int8/int32/fp32 numpy() and the buffer
# protocol are views of the card's memory (writes through them reach the card's ops), bf16
# rounds to nearest even, views share the buffer.
import numpy as np

import tpurt


def test_round_trip_every_dtype(card, rng):
    for dtype, values in [
        (tpurt.int8, rng.integers(-128, 128, size=(3, 5, 7), dtype=np.int8)),
        (tpurt.int32, rng.integers(-2**31, 2**31, size=(4, 9), dtype=np.int32)),
        (tpurt.fp32, rng.standard_normal((6, 11), dtype=np.float32)),
    ]:
        t = tpurt.Tensor.from_numpy(card, values)
        assert t.dtype == dtype and t.shape == values.shape and t.is_contiguous
        np.testing.assert_array_equal(t.numpy(), values)
        np.testing.assert_array_equal(np.asarray(t), values)


def test_bf16_rounds_to_nearest_even(card):
    values = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5, np.inf], dtype=np.float32)
    t = tpurt.Tensor.from_numpy(card, values, tpurt.bf16)
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0, 1.0 + 2**-6, -2.5, np.inf])
    bits = t.numpy(bits=True)
    assert bits.dtype == np.uint16 and bits[0] == 0x3F80
    again = tpurt.Tensor.from_numpy(card, bits, tpurt.bf16)  # bit patterns taken as they are
    np.testing.assert_array_equal(again.numpy(bits=True), bits)


def test_numpy_is_a_view_of_the_card_memory(card):
    a = tpurt.Tensor.from_numpy(card, np.eye(4, dtype=np.float32))
    b = tpurt.Tensor.from_numpy(card, np.full((4, 4), 2, dtype=np.float32))
    c = tpurt.Tensor.empty(card, tpurt.fp32, [4, 4])
    view = a.numpy()
    view[0, 0] = 5.0  # written into the buffer the card reads
    result = c.numpy()
    tpurt.ops.matmul(card, a, b, c)
    assert result[0, 0] == 10.0 and result[1, 0] == 2.0  # the earlier view sees the card's write
    del a, view
    assert c.numpy()[0, 1] == 10.0


def test_views_share_the_buffer(card):
    t = tpurt.Tensor.from_numpy(card, np.arange(24, dtype=np.int32).reshape(4, 6))
    np.testing.assert_array_equal(t.slice(1, 2, 5).numpy(), np.arange(24).reshape(4, 6)[:, 2:5])
    np.testing.assert_array_equal(t.transpose(0, 1).numpy(), np.arange(24).reshape(4, 6).T)
    np.testing.assert_array_equal(t.select(0, 2).numpy(), np.arange(12, 18))
    r = t.reshape([2, 12])
    r.copy_from(np.zeros((2, 12), dtype=np.int32))
    assert not t.numpy().any()


def test_conversions_follow_dtype(card):
    t = tpurt.Tensor.from_numpy(card, np.array([[1.7, -2.2]]), tpurt.fp32)  # float64 converted
    np.testing.assert_array_equal(t.numpy(), np.array([[1.7, -2.2]], dtype=np.float32))
    assert repr(t) == "<tpurt.Tensor fp32 [1, 2]>"
