// SPDX-License-Identifier: MIT
// op_rules.cpp - the table of op rules (each defined in ops/<op>.cpp) and the shape helpers.
#include "ops/rules.hpp"

#include <stdexcept>

namespace tpu_nn {

std::size_t elements(const Shape &s) {
    std::size_t n = 1;
    for (std::size_t d : s)
        n *= d;
    return n;
}

std::string to_string(const Shape &s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i)
        out += (i > 0 ? "x" : "") + std::to_string(s[i]);
    return out;
}

void expect_image(const Shape &s, const char *op) {
    if (s.size() != 3)
        throw std::invalid_argument(std::string(op) + " needs an image HxWxC, not a vector of " +
                                    to_string(s) + " (put it before the flatten or dense layers)");
}

const char *act_name(Act a) {
    switch (a) {
    case Act::Relu:
        return "relu";
    case Act::Sigmoid:
        return "sigmoid";
    case Act::Tanh:
        return "tanh";
    case Act::Gelu:
        return "gelu";
    }
    return "?";
}

const OpRule &op_rule(OpKind kind) {
    switch (kind) {
    case OpKind::Input:
        return input_rule;
    case OpKind::Dense:
        return dense_rule;
    case OpKind::Conv2d:
        return conv2d_rule;
    case OpKind::Pool:
        return pool_rule;
    case OpKind::Flatten:
        return flatten_rule;
    case OpKind::Activation:
        return activation_rule;
    case OpKind::LayerNorm:
        return layer_norm_rule;
    case OpKind::Add:
        return add_rule;
    }
    throw std::invalid_argument("tpu_nn: unknown op kind");
}

} // namespace tpu_nn
