// SPDX-License-Identifier: MIT
// cpu_kernels.hpp - the reference kernels that run a model's nodes on the CPU: the nodes
// tpu-compile places on the CPU, and the constant subgraphs it folds at compile time (shape
// arithmetic, reshapes, casts, elementwise math). ONNX semantics at opset 17 on tensors of
// the Plain layout; the elementwise ones take any layout. No ONNX or protobuf needed.
#pragma once

#include "tpumodel/model.hpp"

#include <span>
#include <stdexcept>
#include <string>

namespace tpumodel::cpu {

// A kernel reads its inputs' data (null for a left-out optional input) and writes its
// outputs' dtype, shape and data (their `constant` flag is the caller's business).
using Kernel = void (*)(const Node &node, std::span<const Tensor *const> inputs,
                        std::span<Tensor *const> outputs);

// The kernel of ONNX op `op`, or null when there is none.
Kernel find_kernel(const std::string &op);

// Element i of a tensor of any dtype, as int64 or as double (bfloat16 widened exactly).
std::int64_t int_at(const Tensor &t, std::uint64_t i);
double real_at(const Tensor &t, std::uint64_t i);

// Thrown when a kernel cannot run a node (an unsupported dtype, layout, attribute or shape);
// the message names the node.
class KernelError : public std::runtime_error {
  public:
    KernelError(const Node &node, const std::string &what)
        : std::runtime_error(node.describe() + ": " + what), reason_(what) {}
    const std::string &reason() const { return reason_; } // without the node's name

  private:
    std::string reason_;
};

} // namespace tpumodel::cpu
