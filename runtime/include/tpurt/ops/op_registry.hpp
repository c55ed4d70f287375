// SPDX-License-Identifier: MIT
// op_registry.hpp - every op of the runtime's registry by name: its tensors (in the order the
// op takes them; an optional one may be null) and its attributes (given by name as text:
// "op" = "add", "scale" = "0.5", "activation" = "relu", window sizes as integers). The typed C++
// functions (tensor_ops.hpp, train_ops.hpp, ...) and the C API's tpurt_op_launch() reach the
// same ops; runtime/README.md ("Adding an op") shows how an op is registered.
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/device.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tpurt {

struct OpOperand {
    const char *name;
    bool optional = false; // may be null (a dense layer's bias)
};

struct OpAttribute {
    std::string_view name;
    std::string_view value; // "add", "relu", "0.5", "0x1p-3", "2"
};

struct OpInfo {
    std::string_view name;
    std::span<const OpOperand> operands;
    std::span<const char *const> attributes;
    // Made of other ops' launches or with scratch of its own (matmul_tn, the convolution
    // gradients, ...): prepared on a device only, not compiled by compile_op().
    bool composite = false;

    // "dense(a, w, out, bias?; activation, scale)"
    std::string signature() const;
};

// The registered ops, in registration order.
std::size_t op_count();
const OpInfo &op_info(std::size_t index);     // throws Error(InvalidArgument) beyond op_count()
const OpInfo *find_op(std::string_view name); // null for an unknown op

// The op `name` on `operands` (exactly its operand count; null only for optional ones) with
// `attributes` (each by name at most once; the others keep their defaults): checked and
// compiled, or fetched from the device's cache. Throws Error(InvalidArgument) for an unknown
// op, a wrong operand count, a missing operand, an unknown or malformed attribute, and
// whatever the op's own checks refuse. The launches run in order (one for most ops): run() them
// and wait, or queue them with Stream::enqueue().
OpSequence prepare_op(Device &device, std::string_view name,
                      std::span<const Tensor *const> operands,
                      std::span<const OpAttribute> attributes = {});
// The same on layouts alone, compiled for a card described by `info` (no device, no cache):
// the executable whose arguments are the non-null operands in order. Throws Error(Unsupported)
// for a composite op.
Executable compile_op(const DeviceInfo &info, std::string_view name,
                      std::span<const TensorLayout *const> operands,
                      std::span<const OpAttribute> attributes = {});

} // namespace tpurt
