// SPDX-License-Identifier: MIT
// tpurt.hpp - everything of libtpurt, the TPU runtime, in one include.
//
//   tpurt::Device dev = tpurt::Device::open();          // first card under /dev/accel
//   tpurt::matmul(dev, a, b, c, M, K, N);                // host spans, exact int8/bf16
//
// Lower levels: Device::allocate() buffers, compile_matmul() / ProgramBuilder programs,
// Device::submit() jobs and Job::wait() statistics; errors are tpurt::Error exceptions.
#pragma once

#include "tpurt/axis_compiler.hpp"
#include "tpurt/bf16.hpp"
#include "tpurt/buffer.hpp"
#include "tpurt/conv2d.hpp"
#include "tpurt/conv_grad_compiler.hpp"
#include "tpurt/dense.hpp"
#include "tpurt/device.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/dtype.hpp"
#include "tpurt/dtype_of.hpp"
#include "tpurt/error.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/grouped_conv2d.hpp"
#include "tpurt/job.hpp"
#include "tpurt/launch.hpp"
#include "tpurt/layer_norm.hpp"
#include "tpurt/layer_norm_compiler.hpp"
#include "tpurt/matmul.hpp"
#include "tpurt/matmul_compiler.hpp"
#include "tpurt/op_executables.hpp"
#include "tpurt/profile.hpp"
#include "tpurt/program_builder.hpp"
#include "tpurt/reference.hpp"
#include "tpurt/reference_dense.hpp"
#include "tpurt/reference_fp32.hpp"
#include "tpurt/shape_executables.hpp"
#include "tpurt/shape_ops.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"
#include "tpurt/tensor_layout.hpp"
#include "tpurt/tensor_ops.hpp"
#include "tpurt/test_patterns.hpp"
#include "tpurt/train_compiler.hpp"
#include "tpurt/train_ops.hpp"
#include "tpurt/vector_compiler.hpp"
#include "tpurt/vpu_ops.hpp"
