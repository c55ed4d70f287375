// SPDX-License-Identifier: MIT
// card_reference.cpp - a compiled model in the card's arithmetic on the CPU (card_reference.hpp):
// dense, conv2d_layer, matmul, batched_matmul, mean, reduce_axis, softmax and layer_norm nodes
// by libtpurt's golden models, the exact card ops and CPU nodes by the reference kernels.
#include "tpumodel/card_reference.hpp"

#include "card_ops.hpp"
#include "op_text.hpp"

#include "tpumodel/card_executor.hpp"
#include "tpumodel/cpu_executor.hpp"
#include "tpumodel/reduction.hpp"

#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/golden/reference_dense.hpp>
#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/golden/reference_layer_norm.hpp>
#include <tpurt/golden/reference_reduce.hpp>
#include <tpurt/golden/reference_softmax.hpp>
#include <tpurt/types/bf16.hpp>

#include <cstring>
#include <set>
#include <span>

namespace tpumodel::card {

namespace {

// The card ops whose results are the CPU kernels' bit for bit.
bool exact_card_op(const Node &n) {
    static const std::set<std::string> ops = {"view",        "permute", "pool2d",
                                              "elementwise", "divide",  "slice_copy"};
    return ops.contains(n.card_op) || (n.card_op == "unary" && n.op == "Relu");
}

// node n's first output holding v.
Tensor float_output(const Model &m, const Node &n, const std::vector<float> &v) {
    Tensor y = m.tensors[n.outputs.at(0)];
    y.data.resize(v.size() * sizeof(float));
    std::memcpy(y.data.data(), v.data(), y.data.size());
    return y;
}

// The operand bytes of a matmul or convolution of `type` (fp32 or bf16, rounded to nearest even).
std::vector<std::byte> operand(const Tensor &t, tpurt::DType type) {
    const std::vector<float> v = t.floats();
    if (type == tpurt::DType::Fp32)
        return std::vector<std::byte>(reinterpret_cast<const std::byte *>(v.data()),
                                      reinterpret_cast<const std::byte *>(v.data() + v.size()));
    std::vector<std::byte> out(v.size() * sizeof(tpurt::Bf16));
    for (std::size_t i = 0; i < v.size(); ++i) {
        const tpurt::Bf16 b = tpurt::Bf16::from_float(v[i]);
        std::memcpy(out.data() + i * sizeof b, &b, sizeof b);
    }
    return out;
}

tpurt::Activation activation(const Node &n) {
    const std::string a = n.get_string("activation", "");
    if (a.empty())
        return tpurt::Activation::None;
    if (a == "Relu")
        return tpurt::Activation::Relu;
    cannot(n, "fused activation " + a);
}

// dense or conv2d_layer of node n on its inputs: fp32 out, as the executor binds them.
Tensor layer(const Model &m, const Node &n, const std::vector<const Tensor *> &in) {
    const Tensor &x = *in.at(0), &w = *in.at(1);
    if (x.dtype != DType::Float || w.dtype != DType::Float)
        cannot(n, "no bit-exact model of other than float32 operands here");
    const tpurt::DType type =
        m.precision == Precision::Bf16 ? tpurt::DType::Bf16 : tpurt::DType::Fp32;
    const std::vector<float> bias = in.size() > 2 && in[2] ? in[2]->floats() : std::vector<float>{};
    Tensor y = m.tensors[n.outputs.at(0)];
    std::vector<std::byte> out;
    if (n.card_op == "dense") {
        const tpurt::DenseLayer l{.m = std::uint32_t(x.shape.at(0)),
                                  .k = std::uint32_t(x.shape.at(1)),
                                  .n = std::uint32_t(w.shape.at(1)),
                                  .in_type = type,
                                  .out_type = tpurt::DType::Fp32,
                                  .activation = activation(n)};
        out = tpurt::reference_dense(l, operand(x, type), operand(w, type), bias);
    } else {
        const std::vector<std::int64_t> strides = n.get_ints("strides", {1, 1});
        const std::vector<std::int64_t> pads = window_pads(m, n, {w.shape[0], w.shape[1]});
        const tpurt::Conv2dShape s{.batch = std::uint32_t(x.shape.at(0)),
                                   .height = std::uint32_t(x.shape.at(1)),
                                   .width = std::uint32_t(x.shape.at(2)),
                                   .channels = std::uint32_t(x.shape.at(3)),
                                   .kernel_h = std::uint32_t(w.shape[0]),
                                   .kernel_w = std::uint32_t(w.shape[1]),
                                   .filters = std::uint32_t(w.shape.at(3)),
                                   .stride_h = std::uint32_t(strides.at(0)),
                                   .stride_w = std::uint32_t(strides.at(1)),
                                   .pad_h = std::uint32_t(pads[0]),
                                   .pad_w = std::uint32_t(pads[1])};
        out = tpurt::reference_conv2d_layer(
            type, operand(x, type), operand(w, type), bias,
            {.function = activation(n), .out_type = tpurt::DType::Fp32}, s);
    }
    y.data.resize(out.size());
    std::memcpy(y.data.data(), out.data(), out.size());
    return y;
}

// mean or reduce_axis of node n over the middle axis of its input's [outer, length, inner]
// view, as card_ops.cpp binds it: a global pool's NHWC image as [N, H x W, C], a reduction's
// run of neighbouring axes.
Tensor reduction(const Model &m, const Node &n, const std::vector<const Tensor *> &in) {
    const Tensor &x = *in.at(0);
    if (x.dtype != DType::Float)
        cannot(n, "no bit-exact model of a reduction of other than float32 here");
    cpu::AxisRun run;
    if (n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool") {
        if (x.shape.size() != 4)
            cannot(n, "an input of rank other than 4");
        run = {.outer = std::uint64_t(x.shape[0]),
               .length = std::uint64_t(x.shape[1] * x.shape[2]),
               .inner = std::uint64_t(x.shape[3])};
    } else {
        const Tensor *axes = in.size() > 1 ? in[1] : nullptr;
        const std::optional<cpu::AxisRun> r =
            cpu::contiguous_run(x.shape, cpu::reduced_axes(n, x.shape.size(), axes));
        if (!r)
            cannot(n, "a reduction over other than one run of neighbouring axes");
        run = *r;
    }
    const tpurt::ReduceKind kind = n.card_op == "mean" ? tpurt::ReduceKind::Mean
                                   : n.op == "ReduceMax" || n.op == "GlobalMaxPool"
                                       ? tpurt::ReduceKind::Max
                                       : tpurt::ReduceKind::Sum;
    return float_output(
        m, n, tpurt::reference_reduce_axis(x.floats(), run.outer, run.length, run.inner, kind));
}

// matmul or batched_matmul of node n, as card_ops.cpp binds it: a [..., M, K] by b [..., K, N]
// (the same leading axes) or by b [K, N] shared by every matrix; a bf16 model's 2-D matmul on
// operands rounded to bf16 (the executor's fast path), a batched one in fp32.
Tensor matmul(const Model &m, const Node &n, const std::vector<const Tensor *> &in) {
    const Tensor &a = *in.at(0), &b = *in.at(1);
    if (a.dtype != DType::Float || b.dtype != DType::Float || a.shape.size() < 2 ||
        b.shape.size() < 2)
        cannot(n, "no bit-exact model of a matmul of other than float32 matrices here");
    const auto rows = std::uint32_t(a.shape[a.shape.size() - 2]), k = std::uint32_t(a.shape.back()),
               cols = std::uint32_t(b.shape.back());
    const std::size_t batch = a.element_count() / (std::size_t(rows) * k);
    const bool shared = b.shape.size() == 2;
    const bool bf16 = m.precision == Precision::Bf16 && n.card_op == "matmul";
    const std::vector<float> av = a.floats(), bv = b.floats();
    std::vector<tpurt::Bf16> ab, bb;
    if (bf16)
        for (const auto &[from, to] : {std::pair{&av, &ab}, std::pair{&bv, &bb}})
            for (float v : *from)
                to->push_back(tpurt::Bf16::from_float(v));
    std::vector<float> c(batch * rows * cols);
    const std::size_t as = std::size_t(rows) * k, bs = shared ? 0 : std::size_t(k) * cols,
                      cs = std::size_t(rows) * cols;
    for (std::size_t i = 0; i < batch; ++i) {
        const std::span<float> out = std::span(c).subspan(i * cs, cs);
        if (bf16)
            tpurt::reference_matmul(std::span<const tpurt::Bf16>(ab).subspan(i * as, as),
                                    std::span<const tpurt::Bf16>(bb).subspan(i * bs), out, rows, k,
                                    cols);
        else
            tpurt::reference_matmul(std::span<const float>(av).subspan(i * as, as),
                                    std::span<const float>(bv).subspan(i * bs), out, rows, k, cols);
    }
    return float_output(m, n, c);
}

// layer_norm over the axes from `axis` on ([outer, inner] views), or softmax over the last axis.
Tensor normalisation(const Model &m, const Node &n, const std::vector<const Tensor *> &in) {
    const Tensor &x = *in.at(0);
    if (x.dtype != DType::Float)
        cannot(n, "no bit-exact model of other than float32 data here");
    const auto rank = std::int64_t(x.shape.size());
    std::int64_t axis = n.card_op == "softmax" ? rank - 1 : n.get_int("axis", -1);
    axis = axis < 0 ? axis + rank : axis;
    std::size_t outer = 1, inner = 1;
    for (std::int64_t i = 0; i < rank; ++i)
        (i < axis ? outer : inner) *= std::size_t(x.shape[std::size_t(i)]);
    if (n.card_op == "softmax")
        return float_output(m, n, tpurt::reference_softmax(x.floats(), outer, inner));
    if (in.size() < 3 || !in[1] || !in[2])
        cannot(n, "a layer normalisation without its scale and bias");
    return float_output(m, n,
                        tpurt::reference_layer_norm(x.floats(), in[1]->floats(), in[2]->floats(),
                                                    {}, outer, inner, n.get_float("epsilon", 1e-5f))
                            .y);
}

} // namespace

std::vector<Tensor> reference_run(const Model &m, const std::vector<Tensor> &inputs) {
    if (m.precision == Precision::Int8)
        throw ExecError("a model compiled for int8: no CPU model of its card arithmetic here");
    return cpu::run_model(m, inputs, [&](const Node &n, const std::vector<const Tensor *> &in) {
        if (n.placement == Placement::Card && (n.card_op == "dense" || n.card_op == "conv2d_layer"))
            return std::vector<Tensor>{layer(m, n, in)};
        if (n.placement == Placement::Card && (n.card_op == "mean" || n.card_op == "reduce_axis"))
            return std::vector<Tensor>{reduction(m, n, in)};
        if (n.placement == Placement::Card &&
            (n.card_op == "matmul" || n.card_op == "batched_matmul"))
            return std::vector<Tensor>{matmul(m, n, in)};
        if (n.placement == Placement::Card && (n.card_op == "layer_norm" || n.card_op == "softmax"))
            return std::vector<Tensor>{normalisation(m, n, in)};
        if (n.placement == Placement::Card && !exact_card_op(n))
            cannot(n, "no bit-exact CPU model of this card op here");
        return cpu::run_node(m, n, in);
    });
}

} // namespace tpumodel::card
