// SPDX-License-Identifier: MIT
// quant_rules.cpp - where ONNX's quantised ops run (compiler/run/src/quant_ops.cpp has how):
// on the card when the CPU kernel takes the node's form (it checks ONNX's rules: dtypes,
// shapes, parameters per tensor or per axis) and the card's path does too: 8-bit data in ONNX's
// order, constant weights, scales and zero points; for the QLinear ops sums the epilogue's
// binary32 holds exactly (below 2^24); convolutions 2-D with group 1, no dilation and symmetric
// padding.
#include "quant_rules.hpp"

#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/cpu_kernels.hpp>
#include <tpumodel/quantization.hpp>
#include <tpumodel/window.hpp>

#include <algorithm>
#include <cstdlib>

namespace tpu_onnx {

namespace {

using tpumodel::DType;
using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

CardDecision card(const char *op) {
    return {op, ""};
}
CardDecision cpu(std::string reason) {
    return {"", std::move(reason)};
}

const Tensor *input(const Model &m, const Node &n, std::size_t i) {
    return i < n.inputs.size() && n.inputs[i] != tpumodel::no_tensor ? &m.tensors[n.inputs[i]]
                                                                     : nullptr;
}

bool eight_bit(const Tensor &t) {
    return t.dtype == DType::Uint8 || t.dtype == DType::Int8;
}

// Why the CPU kernel refuses the node's form, or empty. The rules below read the shapes the
// kernel checked, so a node it cannot be tried on stays off the card.
std::string kernel_refusal(const Model &m, const Node &n) {
    if (!tpumodel::cpu::zero_inputs(m, n))
        return "inputs the CPU kernel cannot be tried on (over 2^24 elements, or unknown shapes)";
    try {
        tpumodel::cpu::check_node_runs(m, n);
    } catch (const tpumodel::cpu::KernelError &e) {
        return e.reason();
    }
    return "";
}

// The data (input 0) and the inputs in `constants` as the card's path needs them.
std::string operand_reason(const Model &m, const Node &n,
                           std::initializer_list<std::size_t> constants) {
    if (std::string why = kernel_refusal(m, n); !why.empty())
        return why;
    const Tensor &x = *input(m, n, 0);
    if (x.layout != tpumodel::Layout::Plain)
        return "data in the NHWC layout";
    for (std::size_t i : constants)
        if (const Tensor *t = input(m, n, i); t && !t->constant)
            return "input " + std::to_string(i) +
                   " computed at run time: the card's path folds "
                   "weights, scales and zero points at load";
    return "";
}

// Whether the epilogue's binary32 sum of the int8 product (at most 128 x the centred weights'
// absolute sum of an output) and the correction (at most as much again, plus the bias) holds
// every value exactly: below 2^24.
bool epilogue_exact(std::int64_t largest_abs_sum, std::int64_t largest_bias) {
    return 256 * largest_abs_sum + largest_bias < (std::int64_t(1) << 24);
}

} // namespace

CardDecision quantize_rule(const Model &m, const Node &n) {
    if (std::string why = operand_reason(m, n, {1, 2}); !why.empty())
        return cpu(why);
    if (input(m, n, 0)->dtype != DType::Float)
        return cpu("bfloat16 data: the card's path divides float32");
    return card("unary");
}

CardDecision dequantize_rule(const Model &m, const Node &n) {
    if (std::string why = operand_reason(m, n, {1, 2}); !why.empty())
        return cpu(why);
    if (!eight_bit(*input(m, n, 0)))
        return cpu(std::string(tpumodel::dtype_name(input(m, n, 0)->dtype)) +
                   " data: the card's path converts 8-bit data");
    return card("unary");
}

CardDecision integer_matmul_rule(const Model &m, const Node &n) {
    const bool qlinear = n.op == "QLinearMatMul";
    const std::size_t ib = qlinear ? 3 : 1, izb = qlinear ? 5 : 3;
    std::string why =
        qlinear ? operand_reason(m, n, {1, 2, 3, 4, 5, 6, 7}) : operand_reason(m, n, {1, 2, 3});
    if (why.empty() && !input(m, n, ib)->constant)
        why = "B computed at run time: the card's path splits constant weights";
    if (!why.empty())
        return cpu(why);
    if (!qlinear)
        return card("matmul");
    const Tensor &b = *input(m, n, ib);
    const std::uint64_t k = std::uint64_t(b.shape[b.shape.size() - 2]),
                        cols = std::uint64_t(b.shape.back());
    std::int64_t largest = 0;
    for (std::uint64_t s = 0; s < b.element_count() / (k * cols); ++s)
        for (std::uint64_t j = 0; j < cols; ++j) {
            std::int64_t sum = 0;
            for (std::uint64_t i = 0; i < k; ++i)
                sum += std::abs(tpumodel::cpu::int_at(b, (s * k + i) * cols + j) -
                                tpumodel::cpu::zero_point(input(m, n, izb), j));
            largest = std::max(largest, sum);
        }
    if (!epilogue_exact(largest, 0))
        return cpu("sums of 2^24 or more: the card's epilogue adds in binary32");
    return card("dense");
}

CardDecision integer_conv_rule(const Model &m, const Node &n) {
    const bool qlinear = n.op == "QLinearConv";
    const std::size_t iw = qlinear ? 3 : 1, izw = qlinear ? 5 : 3;
    std::string why =
        qlinear ? operand_reason(m, n, {1, 2, 3, 4, 5, 6, 7, 8}) : operand_reason(m, n, {1, 2, 3});
    if (why.empty() && !input(m, n, iw)->constant)
        why = "weights computed at run time: the card's path splits constant weights";
    if (!why.empty())
        return cpu(why);
    const Tensor &x = *input(m, n, 0), &w = *input(m, n, iw);
    tpumodel::cpu::Window g{};
    try {
        g = tpumodel::cpu::window(n, x.shape[2], x.shape[3], w.shape[2], w.shape[3]);
    } catch (const tpumodel::cpu::KernelError &e) {
        return cpu(e.reason());
    }
    if (g.pt != g.pb || g.pl != g.pr)
        return cpu("asymmetric padding: the card pads both sides alike");
    if (g.dh != 1 || g.dw != 1)
        return cpu("dilation: the card's int8 convolution takes none");
    if (!qlinear)
        return card("conv2d");
    const std::uint64_t f = std::uint64_t(w.shape[0]), per = w.element_count() / f;
    std::int64_t largest = 0, largest_bias = 0;
    for (std::uint64_t o = 0; o < f; ++o) {
        std::int64_t sum = 0;
        for (std::uint64_t i = 0; i < per; ++i)
            sum += std::abs(tpumodel::cpu::int_at(w, o * per + i) -
                            tpumodel::cpu::zero_point(input(m, n, izw), o));
        largest = std::max(largest, sum);
        if (const Tensor *b = input(m, n, 8))
            largest_bias = std::max(largest_bias, std::abs(tpumodel::cpu::int_at(*b, o)));
    }
    if (!epilogue_exact(largest, largest_bias))
        return cpu("sums of 2^24 or more: the card's epilogue adds in binary32");
    return card("conv2d_layer");
}

} // namespace tpu_onnx
