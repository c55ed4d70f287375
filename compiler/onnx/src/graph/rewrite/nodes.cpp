// SPDX-License-Identifier: MIT
// nodes.cpp - the building blocks of the passes that write one node as several (passes.hpp):
// data tensors, one-element float constants and nodes, all placed later.
#include "passes.hpp"

#include <cstring>

namespace tpu_onnx {

std::uint32_t add_float_tensor(tpumodel::Model &m, const std::string &name,
                               std::vector<std::int64_t> shape) {
    tpumodel::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    return m.add_tensor(std::move(t));
}

std::uint32_t add_float_scalar(tpumodel::Model &m, const std::string &name, float value) {
    tpumodel::Tensor t{name, tpumodel::DType::Float,      tpumodel::Layout::Plain, {},
                       true, std::vector<std::uint8_t>(4)};
    std::memcpy(t.data.data(), &value, 4);
    return m.add_tensor(std::move(t));
}

tpumodel::Node op_node(const std::string &name, const char *op, std::vector<std::uint32_t> inputs,
                       std::uint32_t output) {
    return tpumodel::Node{name, op, tpumodel::Placement::Cpu, "",
                          "",   {}, std::move(inputs),        {output}};
}

} // namespace tpu_onnx
