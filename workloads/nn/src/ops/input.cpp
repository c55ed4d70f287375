// SPDX-License-Identifier: MIT
// input.cpp - the graph's input node: no parameters, no computation (the executors copy the
// batch in); Graph's constructor checks its shape.
#include "rules.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &, std::span<const Shape>) {
    throw std::invalid_argument("the input is node 0 and only node 0");
}
std::vector<ParamSlot> params(const Attrs &, std::span<const Shape>) {
    return {};
}
void nothing(const CpuCall &) {}

} // namespace

const OpRule input_rule{"input", 0, infer, params, nothing, nothing};

} // namespace tpu_nn
