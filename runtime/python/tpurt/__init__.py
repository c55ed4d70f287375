# SPDX-License-Identifier: MIT
"""tpurt: the TPU runtime (libtpurt) for Python.

Cards (``Device.open()`` behind tpu.ko, ``Device.open_in_process()`` without a VM), tensors to
and from numpy (``Tensor.from_numpy``, ``Tensor.numpy``: zero-copy for int8, int32, fp32),
every op of the runtime (``tpurt.ops``), streams and events, captured graphs, the profiler
(``tpurt.profiler``), collectives (``Communicator``), training on the card (``load_dataset``,
``Trainer``) and compiled models (``CompiledModel``, .tpumodel files). Failures raise ``tpurt.Error`` (a RuntimeError) with the runtime's message.
"""

from ._tpurt import (  # noqa: F401
    CommId,
    CompiledModel,
    Communicator,
    Dataset,
    Device,
    DeviceCounters,
    DeviceInfo,
    DType,
    Error,
    Event,
    Executable,
    Graph,
    JobError,
    OpRecord,
    Profile,
    RuntimeStats,
    Stats,
    Stream,
    Tensor,
    Trainer,
    load_dataset,
    profiler,
    reference_matmul,
)
from . import ops  # noqa: F401

int8 = DType.int8
bf16 = DType.bf16
int32 = DType.int32
fp32 = DType.fp32


def matmul(device, a, b, dtype=None):
    """a @ b of numpy matrices a [M, K] and b [K, N] on `device`, as a numpy array.

    The inputs are copied to the card as `dtype` (default: a's own, float32 or int8; bf16 from
    float values rounded to nearest even); the result is int32 for int8 inputs, else float32,
    and equals ``reference_matmul(a, b, dtype)`` bit for bit.
    """
    ta = Tensor.from_numpy(device, a, dtype)
    tb = Tensor.from_numpy(device, b, ta.dtype)
    if ta.ndim != 2 or tb.ndim != 2:
        raise ValueError(f"matmul takes matrices, not shapes {ta.shape} and {tb.shape}")
    out = Tensor.empty(device, int32 if ta.dtype == int8 else fp32, [ta.shape[0], tb.shape[1]])
    ops.matmul(device, ta, tb, out)
    return out.numpy()
