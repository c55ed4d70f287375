// SPDX-License-Identifier: MIT
// card_executor.hpp - a compiled model (.tpumodel) run on a TPU card: its constants uploaded
// once, every tensor a card node touches allocated once and every card node prepared once as
// the libtpurt op it names (by name, through the op registry), `view` nodes as views of their
// input's buffer, and the nodes placed on the CPU run with the reference kernels in between,
// their tensors copied off the card and back on as needed. A model compiled for bf16 runs its
// matmuls and convolutions (dense, conv2d_layer, matmul) on bf16 operands, the card's fast
// path: constant weights rounded to bf16 once, activations cast on the card before each;
// biases, outputs and every other op stay fp32. A model compiled for int8 (with calibration)
// runs those of them with constant weights on the card's int8 path (int8_layers.hpp: the data
// quantised by a cast on the card, the weights per channel at load, fp32 out); every other op
// stays fp32. ONNX's quantised ops run on the card's int8
// path (compiler/run/src/quant_ops.cpp), uint8 tensors held there as int8 u - 128: the
// executor shifts them as it copies them on and off.
#pragma once

#include "tpumodel/model.hpp"

#include <tpurt/card/launch.hpp>
#include <tpurt/device.hpp>
#include <tpurt/tensor.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpumodel::card {

// Thrown when a model cannot be loaded on the card or a node fails to run there; the message
// names the node (and the card op's own refusal, where it gave one).
class ExecError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class Executor {
  public:
    // Loads `model` on `device`: uploads its constants, allocates the card's tensors and
    // prepares each card node. Throws ExecError naming the first node it cannot bind (an int8
    // model's layer without its calibrated range among them).
    Executor(tpurt::Device &device, Model model);

    // The graph outputs for `inputs` (one per graph input, in order, of its dtype and shape,
    // in ONNX's order): the same contract as tpumodel::cpu::run_model(). Throws
    // std::invalid_argument for inputs that do not match, ExecError for a node that fails.
    std::vector<Tensor> run(const std::vector<Tensor> &inputs);

    const Model &model() const { return model_; }
    std::size_t card_nodes() const; // nodes run by a card op (views included)
    std::size_t cpu_nodes() const;

  private:
    struct Step {
        std::size_t node;                    // index into model_.nodes
        std::vector<tpurt::OpSequence> card; // casts to bf16, then the op; none for views, CPU
        bool on_cpu = false;
    };

    tpurt::Tensor &on_card(std::uint32_t id); // the tensor's card copy, allocated on first use
    // Its bf16 copy: a constant's rounded once, another's cast by `casts` (the first reader's).
    const tpurt::Tensor &in_bf16(std::uint32_t id, std::vector<tpurt::OpSequence> &casts);
    // Its int8 copy, x / scale cast on the card by `casts` (the first reader's).
    const tpurt::Tensor &in_int8(std::uint32_t id, float scale,
                                 std::vector<tpurt::OpSequence> &casts);

    tpurt::Device *device_;
    Model model_;
    std::vector<std::optional<tpurt::Tensor>> card_; // per tensor id: its copy on the card
    std::vector<std::optional<tpurt::Tensor>> bf16_; // and its bf16 copy (bf16 models)
    std::vector<std::optional<tpurt::Tensor>> int8_; // or its int8 copy (int8 models)
    std::vector<Step> steps_;
};

} // namespace tpumodel::card
