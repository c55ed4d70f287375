# SPDX-License-Identifier: MIT
# Matmuls on the card from Python against numpy and the runtime's golden model: int8 exactly
# numpy's int32 product, bf16 and fp32 bit for bit the golden model's (the card's rounding),
# fp32 close to numpy's; on numpy arrays, on tensors and on strided views.
import numpy as np
import pytest

import tpurt


def test_int8_equals_numpy(card, rng):
    a = rng.integers(-128, 128, size=(70, 300), dtype=np.int8)
    b = rng.integers(-128, 128, size=(300, 45), dtype=np.int8)
    c = tpurt.matmul(card, a, b)
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_bf16_equals_golden(card, rng):
    a = rng.standard_normal((33, 160), dtype=np.float32)
    b = rng.standard_normal((160, 129), dtype=np.float32)
    c = tpurt.matmul(card, a, b, tpurt.bf16)
    golden = tpurt.reference_matmul(a, b, tpurt.bf16)
    np.testing.assert_array_equal(c.view(np.uint32), golden.view(np.uint32))
    # and near numpy's product of the bf16-rounded inputs
    ta = tpurt.Tensor.from_numpy(card, a, tpurt.bf16).numpy()
    tb = tpurt.Tensor.from_numpy(card, b, tpurt.bf16).numpy()
    np.testing.assert_allclose(c, ta @ tb, rtol=1e-3, atol=1e-3)


def test_fp32_equals_golden_and_near_numpy(card, rng):
    a = rng.standard_normal((64, 96), dtype=np.float32)
    b = rng.standard_normal((96, 80), dtype=np.float32)
    c = tpurt.matmul(card, a, b)
    np.testing.assert_array_equal(c.view(np.uint32),
                                  tpurt.reference_matmul(a, b, tpurt.fp32).view(np.uint32))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_ops_on_strided_views(card, rng):
    a = rng.integers(-5, 5, size=(40, 64), dtype=np.int8)
    b = rng.integers(-5, 5, size=(64, 32), dtype=np.int8)
    ta = tpurt.Tensor.from_numpy(card, a)
    tb = tpurt.Tensor.from_numpy(card, b)
    tc = tpurt.Tensor.empty(card, tpurt.int32, [20, 48])
    view = tc.slice(1, 8, 40)  # rows 48 elements apart
    stats = tpurt.ops.matmul(card, ta.slice(0, 10, 30), tb, view)
    assert stats.macs == 20 * 64 * 32 and stats.cycles > 0 and stats.jobs >= 1
    expected = a[10:30].astype(np.int32) @ b.astype(np.int32)
    np.testing.assert_array_equal(view.numpy(), expected)
    np.testing.assert_array_equal(tc.numpy()[:, :8], 0)


@pytest.mark.parametrize("activation", ["none", "relu"])
def test_dense_layer(card, rng, activation):
    x = rng.standard_normal((16, 32), dtype=np.float32)
    w = rng.standard_normal((32, 8), dtype=np.float32)
    bias = rng.standard_normal(8, dtype=np.float32)
    out = tpurt.Tensor.empty(card, tpurt.fp32, [16, 8])
    tpurt.ops.dense(card, tpurt.Tensor.from_numpy(card, x), tpurt.Tensor.from_numpy(card, w), out,
                    bias=tpurt.Tensor.from_numpy(card, bias), activation=activation)
    expected = x @ w + bias
    if activation == "relu":
        expected = np.maximum(expected, 0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
