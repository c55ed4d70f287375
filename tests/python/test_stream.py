# SPDX-License-Identifier: MIT
# Streams and events from Python: ops queued in order return at once, synchronize() waits,
# events order two streams, a queued host copy lands in stream order.
import numpy as np

import tpurt


def test_queued_ops_run_in_order(card, rng):
    s = tpurt.Stream(card)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    w = rng.standard_normal((16, 16), dtype=np.float32)
    tx = tpurt.Tensor.from_numpy(card, x)
    tw = tpurt.Tensor.from_numpy(card, w)
    h = tpurt.Tensor.empty(card, tpurt.fp32, [8, 16])
    y = tpurt.Tensor.empty(card, tpurt.fp32, [8, 16])
    assert tpurt.ops.matmul(s, tx, tw, h) is None
    tpurt.ops.elementwise(s, h, h, y, op="add")
    tpurt.ops.unary(s, y, y, function="relu")
    event = s.record()
    s.synchronize()
    assert event.query() and s.idle
    np.testing.assert_allclose(y.numpy(), np.maximum(2 * (x @ w), 0), rtol=1e-4, atol=1e-4)


def test_an_event_orders_two_streams(card):
    first, second = tpurt.Stream(card), tpurt.Stream(card, priority=0)
    a = tpurt.Tensor.from_numpy(card, np.ones((4, 4), dtype=np.float32))
    b = tpurt.Tensor.empty(card, tpurt.fp32, [4, 4])
    c = tpurt.Tensor.empty(card, tpurt.fp32, [4, 4])
    first.copy_from_host(a, np.full((4, 4), 3, dtype=np.float32))
    tpurt.ops.elementwise(first, a, a, b, op="mul")  # 9
    second.wait(first.record())
    tpurt.ops.elementwise(second, b, a, c, op="add")  # 12
    second.record().wait(timeout=60)
    np.testing.assert_array_equal(c.numpy(), np.full((4, 4), 12, dtype=np.float32))


def test_copy_from_host_keeps_its_own_copy(card):
    s = tpurt.Stream(card)
    t = tpurt.Tensor.empty(card, tpurt.int32, [5])
    values = np.arange(5, dtype=np.int32)
    s.copy_from_host(t, values)
    values[:] = -1  # the queued copy holds the values of the call
    s.synchronize()
    np.testing.assert_array_equal(t.numpy(), np.arange(5))
