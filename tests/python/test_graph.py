# SPDX-License-Identifier: MIT
# Capture and replay from Python: ops captured on a stream replay as fewer jobs with the eager
# results bit for bit, on new inputs each time; a parameter is written before a replay's jobs.
import numpy as np
import pytest

import tpurt


def test_capture_and_replay(card, rng):
    s = tpurt.Stream(card)
    x = tpurt.Tensor.empty(card, tpurt.fp32, [16, 32])
    w = tpurt.Tensor.from_numpy(card, rng.standard_normal((32, 24), dtype=np.float32))
    bias = tpurt.Tensor.from_numpy(card, rng.standard_normal(24, dtype=np.float32))
    h = tpurt.Tensor.empty(card, tpurt.fp32, [16, 24])
    y = tpurt.Tensor.empty(card, tpurt.fp32, [16, 24])

    def queue():
        tpurt.ops.dense(s, x, w, h, bias=bias, activation="relu")
        tpurt.ops.softmax(s, h, y)

    s.begin_capture()
    assert s.capturing
    queue()
    graph = s.end_capture("step")
    assert graph.name == "step" and graph.launch_count == 2
    assert graph.job_count < graph.eager_job_count or graph.job_count == 1

    for _ in range(3):
        batch = rng.standard_normal((16, 32), dtype=np.float32)
        x.copy_from(batch)
        queue()
        s.synchronize()
        eager = y.numpy().copy()
        y.copy_from(np.zeros((16, 24), dtype=np.float32))
        graph.replay(s)
        s.synchronize()
        np.testing.assert_array_equal(y.numpy(), eager)
        np.testing.assert_allclose(y.numpy().sum(axis=1), 1.0, rtol=1e-5)


def test_parameter_is_written_before_the_replay(card):
    s = tpurt.Stream(card)
    a = tpurt.Tensor.from_numpy(card, np.full((2, 8), 2, dtype=np.float32))
    scale = tpurt.Tensor.from_numpy(card, np.zeros(8, dtype=np.float32))
    out = tpurt.Tensor.empty(card, tpurt.fp32, [2, 8])
    s.begin_capture()
    tpurt.ops.elementwise(s, a, scale, out, op="mul")
    graph = s.end_capture()
    graph.add_parameter("scale", scale)
    graph.set_parameter("scale", np.arange(8, dtype=np.float32))
    graph.replay(s)
    s.synchronize()
    np.testing.assert_array_equal(out.numpy(), 2 * np.tile(np.arange(8, dtype=np.float32), (2, 1)))


def test_an_executable_prepared_once_runs_many_times(card, rng):
    a = tpurt.Tensor.empty(card, tpurt.int8, [8, 16])
    b = tpurt.Tensor.from_numpy(card, rng.integers(-9, 9, size=(16, 4), dtype=np.int8))
    c = tpurt.Tensor.empty(card, tpurt.int32, [8, 4])
    exe = tpurt.ops.prepare("matmul", card, a, b, c)
    assert exe.names and exe.names[0].startswith("matmul")
    compilations = card.runtime_stats().compilations
    s = tpurt.Stream(card)
    for i in range(3):
        values = rng.integers(-9, 9, size=(8, 16), dtype=np.int8)
        a.copy_from(values)
        if i % 2:
            exe.queue(s)
            s.synchronize()
        else:
            assert exe.run(card).macs == 8 * 16 * 4
        np.testing.assert_array_equal(c.numpy(), values.astype(np.int32) @ b.numpy())
    assert card.runtime_stats().compilations == compilations
    with pytest.raises(tpurt.Error, match="no_such_op"):
        tpurt.ops.prepare("no_such_op", card, a)
