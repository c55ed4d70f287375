// SPDX-License-Identifier: MIT
// card_executor.cpp - loading a compiled model on the card (constants uploaded, tensors
// allocated, card nodes prepared: all once) and running it: graph inputs copied on, each node
// in order (card ops run, views nothing, CPU nodes on copies of their inputs taken off the
// card, their outputs copied back on where a card node reads them), graph outputs copied off.
#include "tpumodel/card_executor.hpp"

#include "card_ops.hpp"
#include "int8_layers.hpp"
#include "op_text.hpp"
#include "quant_ops.hpp"

#include "tpumodel/cpu_executor.hpp"

#include <tpurt/error.hpp>
#include <tpurt/ops/op_registry.hpp>
#include <tpurt/types/bf16.hpp>

#include <array>
#include <cstring>

namespace tpumodel::card {

namespace {

tpurt::DType card_dtype(const Model &m, std::uint32_t id) {
    const Tensor &t = m.tensors[id];
    switch (t.dtype) {
    case DType::Float:
        return tpurt::DType::Fp32;
    case DType::Bfloat16:
        return tpurt::DType::Bf16;
    case DType::Uint8: // as int8 u - 128: put_on_card() and take_off_card() shift it
    case DType::Int8:
        return tpurt::DType::Int8;
    case DType::Int32:
        return tpurt::DType::Int32;
    default:
        throw ExecError("tensor '" + t.name + "' is " + dtype_name(t.dtype) +
                        ": the card's nodes take float32, bfloat16, uint8, int8 or int32 tensors");
    }
}

// uint8 data as the card's int8 (u - 128, the top bit flipped), and back: the same flip.
std::vector<std::uint8_t> flip_top_bits(std::vector<std::uint8_t> bytes) {
    for (std::uint8_t &b : bytes)
        b ^= 0x80;
    return bytes;
}

void put_on_card(tpurt::Tensor &card, const Tensor &t) {
    if (t.dtype == DType::Uint8) {
        const std::vector<std::uint8_t> shifted = flip_top_bits(t.data);
        card.copy_from_host(shifted.data(), shifted.size());
    } else {
        card.copy_from_host(t.data.data(), t.data.size());
    }
}

void take_off_card(const tpurt::Tensor &card, Tensor &t) {
    card.copy_to_host(t.data.data(), t.data.size());
    if (t.dtype == DType::Uint8)
        t.data = flip_top_bits(std::move(t.data));
}

// The ops a bf16 model runs on bf16 operands (its first two inputs, when they are float32).
bool fast_path(const Model &m, const Node &n) {
    return (n.card_op == "dense" || n.card_op == "conv2d_layer" || n.card_op == "matmul") &&
           m.tensors[n.inputs[0]].dtype == DType::Float;
}

bool integer_constant(const Tensor &t) {
    return t.constant && t.dtype != DType::Float && t.dtype != DType::Bfloat16;
}

std::vector<std::size_t> dims(const Tensor &t) {
    return {t.shape.begin(), t.shape.end()};
}

} // namespace

Executor::Executor(tpurt::Device &device, Model model)
    : device_(&device), model_(std::move(model)), card_(model_.tensors.size()),
      bf16_(model_.tensors.size()), int8_(model_.tensors.size()) {
    const bool bf16 = model_.precision == Precision::Bf16;
    const bool int8 = model_.precision == Precision::Int8;
    for (std::size_t i = 0; i < model_.nodes.size(); ++i) {
        const Node &n = model_.nodes[i];
        Step step{i, {}, n.placement == Placement::Cpu};
        if (step.on_cpu) {
            steps_.push_back(std::move(step));
            continue;
        }
        try {
            // Integer constants (a Reshape's shape, a reduction's axes) are attributes, and a
            // quantised op's constants (weights, scales, zero points) are folded into the card
            // tensors its binder makes: they are read from the model and stay off the card.
            const bool quantised = quant_binder(n.op) != nullptr;
            std::vector<const tpurt::Tensor *> in;
            for (std::uint32_t id : n.inputs) {
                const bool off = id == no_tensor || integer_constant(model_.tensors[id]) ||
                                 (quantised && model_.tensors[id].constant);
                in.push_back(off ? nullptr : &on_card(id));
            }
            if (n.card_op == "view") {
                if (in.empty() || !in[0] || n.outputs.size() != 1)
                    throw ExecError(n.describe() + ": a view takes one tensor to one");
                card_[n.outputs[0]] = in[0]->reshape(dims(model_.tensors[n.outputs[0]]));
            } else {
                std::vector<const tpurt::Tensor *> out;
                for (std::uint32_t id : n.outputs)
                    out.push_back(&on_card(id));
                if (int8 && int8_layer_form(model_, n) && !int8_layer(n))
                    cannot(n, "a model compiled for int8 without this layer's calibrated range "
                              "(tpu-compile --dtype int8 --calibrate FILE)");
                if (int8 && int8_layer(n)) {
                    const tpurt::Tensor &xq = in_int8(n.inputs[0], int8_data_scale(n), step.card);
                    step.card.push_back(prepare_int8_layer(device, model_, n, xq, *out[0]));
                } else {
                    if (bf16 && fast_path(model_, n))
                        for (std::size_t k = 0; k < 2; ++k)
                            in[k] = &in_bf16(n.inputs[k], step.card);
                    step.card.push_back(prepare_card_node(device, model_, n, in, out));
                }
            }
        } catch (const tpurt::Error &e) {
            throw ExecError(n.describe() + ": " + e.what());
        }
        steps_.push_back(std::move(step));
    }
}

const tpurt::Tensor &Executor::in_bf16(std::uint32_t id, std::vector<tpurt::OpSequence> &casts) {
    if (!bf16_[id]) {
        const Tensor &t = model_.tensors[id];
        bf16_[id] = tpurt::Tensor::empty(*device_, tpurt::DType::Bf16, dims(t));
        if (t.constant && t.dtype == DType::Float) {
            std::vector<tpurt::Bf16> rounded(t.element_count());
            for (std::size_t k = 0; k < rounded.size(); ++k) {
                float v = 0;
                std::memcpy(&v, t.data.data() + k * 4, 4);
                rounded[k] = tpurt::Bf16::from_float(v);
            }
            bf16_[id]->copy_from_host<tpurt::Bf16>(rounded);
        } else {
            const std::array<tpurt::OpAttribute, 1> cast = {{{"function", "none"}}};
            const std::array<const tpurt::Tensor *, 2> operands = {&on_card(id), &*bf16_[id]};
            casts.push_back(tpurt::prepare_op(*device_, "unary", operands, cast));
        }
    }
    return *bf16_[id];
}

const tpurt::Tensor &Executor::in_int8(std::uint32_t id, float scale,
                                       std::vector<tpurt::OpSequence> &casts) {
    if (!int8_[id]) {
        int8_[id] = tpurt::Tensor::empty(*device_, tpurt::DType::Int8, dims(model_.tensors[id]));
        Attributes cast;
        cast.add("function", "none").add("scale", 1.0f / scale);
        casts.push_back(prepare(*device_, "unary", {&on_card(id), &*int8_[id]}, cast));
    }
    return *int8_[id];
}

tpurt::Tensor &Executor::on_card(std::uint32_t id) {
    if (!card_[id]) {
        const Tensor &t = model_.tensors[id];
        card_[id] = tpurt::Tensor::empty(*device_, card_dtype(model_, id), dims(t));
        if (t.constant)
            put_on_card(*card_[id], t);
    }
    return *card_[id];
}

std::size_t Executor::card_nodes() const {
    std::size_t count = 0;
    for (const Step &s : steps_)
        count += !s.on_cpu;
    return count;
}

std::size_t Executor::cpu_nodes() const {
    return steps_.size() - card_nodes();
}

std::vector<Tensor> Executor::run(const std::vector<Tensor> &inputs) {
    if (inputs.size() != model_.inputs.size())
        throw std::invalid_argument("the model takes " + std::to_string(model_.inputs.size()) +
                                    " inputs, " + std::to_string(inputs.size()) + " given");
    // Host values of this run: graph inputs, CPU nodes' outputs, and card tensors copied off.
    std::vector<std::optional<Tensor>> host(model_.tensors.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::uint32_t id = model_.inputs[i];
        const Tensor &want = model_.tensors[id];
        if (inputs[i].dtype != want.dtype || inputs[i].shape != want.shape ||
            inputs[i].data.size() != want.element_count() * dtype_size(want.dtype))
            throw std::invalid_argument("input '" + want.name + "' must be " +
                                        dtype_name(want.dtype) + " " + want.shape_string());
        host[id] = inputs[i];
        if (card_[id])
            put_on_card(*card_[id], inputs[i]);
    }
    auto host_value = [&](std::uint32_t id) -> const Tensor * {
        if (id == no_tensor)
            return nullptr;
        const Tensor &t = model_.tensors[id];
        if (t.constant)
            return &t;
        if (!host[id]) {
            Tensor copy = t;
            copy.data.resize(t.element_count() * dtype_size(t.dtype));
            take_off_card(*card_[id], copy);
            host[id] = std::move(copy);
        }
        return &*host[id];
    };
    for (const Step &step : steps_) {
        const Node &n = model_.nodes[step.node];
        if (!step.card.empty()) {
            try {
                for (const tpurt::OpSequence &op : step.card)
                    op.run(*device_);
            } catch (const tpurt::Error &e) {
                throw ExecError(n.describe() + " on the card's " + n.card_op + ": " + e.what());
            }
        }
        if (!step.on_cpu)
            continue;
        std::vector<const Tensor *> in;
        for (std::uint32_t id : n.inputs)
            in.push_back(host_value(id));
        std::vector<Tensor> results = cpu::run_node(model_, n, in);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const std::uint32_t id = n.outputs[i];
            if (card_[id])
                put_on_card(*card_[id], results[i]);
            host[id] = std::move(results[i]);
        }
    }
    std::vector<Tensor> outputs;
    for (std::uint32_t id : model_.outputs)
        outputs.push_back(*host_value(id));
    return outputs;
}

} // namespace tpumodel::card
