// SPDX-License-Identifier: MIT
// tpurt.hpp - the stable API of libtpurt, the TPU runtime, in one include: devices, buffers,
// tensors, streams, executables and launches, the ops on tensors and host arrays, profiling and
// errors.
//
//   tpurt::Device dev = tpurt::Device::open();          // first card under /dev/accel
//   tpurt::matmul(dev, a, b, c, M, K, N);                // host spans, exact int8/bf16
//
// Not included here, each included by name where it is used: the low-level compilers, the
// program builder and the ops' executables (tpurt/codegen/*.hpp), the CPU golden models
// (tpurt/golden/*.hpp) and the deterministic test matrices (tpurt/testing/test_patterns.hpp).
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/collectives.hpp"
#include "tpurt/device.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/graph.hpp"
#include "tpurt/ops/conv2d.hpp"
#include "tpurt/ops/dense.hpp"
#include "tpurt/ops/grouped_conv2d.hpp"
#include "tpurt/ops/layer_norm.hpp"
#include "tpurt/ops/matmul.hpp"
#include "tpurt/ops/op_registry.hpp"
#include "tpurt/ops/shape_ops.hpp"
#include "tpurt/ops/tensor_ops.hpp"
#include "tpurt/ops/train_ops.hpp"
#include "tpurt/profile.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"
#include "tpurt/types/bf16.hpp"
#include "tpurt/types/dtype.hpp"
#include "tpurt/types/dtype_of.hpp"
#include "tpurt/types/tensor_layout.hpp"
