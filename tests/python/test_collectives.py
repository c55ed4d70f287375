# SPDX-License-Identifier: MIT
# Collectives from Python on two in-process cards joined by a fabric's links: all-reduce and
# all-gather through a Communicator, each rank's part queued on its own stream.
import numpy as np
import pytest

import tpurt


@pytest.fixture(scope="module")
def ranks():
    cards = tpurt.Device.open_in_process_fabric(dim_x=2)
    comm = tpurt.Communicator.init_all(cards)
    streams = [tpurt.Stream(c) for c in cards]
    return cards, comm, streams


def test_all_reduce_sum(ranks, rng):
    cards, comm, streams = ranks
    assert comm.nranks == 2 and comm.local_ranks == [0, 1]
    values = [rng.integers(-100, 100, size=4096).astype(np.float32) for _ in cards]
    send = [tpurt.Tensor.from_numpy(c, v) for c, v in zip(cards, values)]
    recv = [tpurt.Tensor.empty(c, tpurt.fp32, [4096]) for c in cards]
    comm.all_reduce(streams, send, recv, op="sum")
    for s in streams:
        s.synchronize()
    for r in recv:  # integers: the sum is exact in any order
        np.testing.assert_array_equal(r.numpy(), values[0] + values[1])
    assert comm.async_error() is None


def test_all_gather(ranks):
    cards, comm, streams = ranks
    send = [tpurt.Tensor.from_numpy(c, np.full(100, i + 1, dtype=np.int32))
            for i, c in enumerate(cards)]
    recv = [tpurt.Tensor.empty(c, tpurt.int32, [200]) for c in cards]
    comm.all_gather(streams, send, recv)
    for s in streams:
        s.synchronize()
    for r in recv:
        np.testing.assert_array_equal(r.numpy(), np.repeat(np.int32([1, 2]), 100))


def test_unknown_reduction(ranks):
    cards, comm, streams = ranks
    t = [tpurt.Tensor.empty(c, tpurt.fp32, [8]) for c in cards]
    with pytest.raises(ValueError, match="product"):
        comm.all_reduce(streams, t, t, op="product")


def test_a_link_down_raises_a_job_error():
    cards = tpurt.Device.open_in_process_fabric(dim_x=2)
    comm = tpurt.Communicator.init_all(cards, timeout=20)
    streams = [tpurt.Stream(c) for c in cards]
    t = [tpurt.Tensor.from_numpy(c, np.ones(1024, dtype=np.float32)) for c in cards]
    for port in range(2):
        cards[0].set_link(port, False)
    comm.all_reduce(streams, t, t)
    errors = []
    for s in streams:  # a rank sees the link down, or is aborted when the other rank saw it
        with pytest.raises(tpurt.JobError) as e:
            s.synchronize(timeout=60)
        assert isinstance(e.value, tpurt.Error) and e.value.code == "JobFailed"
        assert e.value.op == "all_reduce" and e.value.status_name in str(e.value)
        errors.append(e.value.status_name)
    assert set(errors) <= {"TPU_ERR_LINK_DOWN", "TPU_ERR_ABORTED"}
    assert "LINK_DOWN" in comm.async_error()  # the first error: the link
    with pytest.raises(tpurt.Error):  # a failed communicator refuses later collectives
        comm.all_reduce(streams, t, t)
