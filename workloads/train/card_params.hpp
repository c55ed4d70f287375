// SPDX-License-Identifier: MIT
// card_params.hpp - a model's parameters on the card with their gradients and optimiser state,
// updated in place by the card's sgd_momentum_step / adam_step (fp32 master weights, which also
// write the bf16 copy the next step reads in bf16 precision), and the stream every op of the
// model's training steps is queued on: a step queues its ops and host writes there and waits
// once at its end (workloads/README.md). The state
// is checkpointed under tpu_model's optimiser names (<"sgd.v" | "adam.m" | "adam.v"><key>, the
// step count as the note "adam.t"; tpu_model/optimizer.hpp), so that a run resumes bit for bit
// and either trainer reads the other's checkpoints.
#pragma once

#include <tpu_model/checkpoint.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tpu_train {

enum class OptimizerKind { Sgd, Adam };

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::Sgd;
    float lr = 0.02f;
    float momentum = 0.9f;                           // SGD
    float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f; // Adam
    // The models' step(): the step's ops captured once per batch size (a tpurt::Graph) and
    // replayed, or (false) every op queued on its own. The results are the same bit for bit.
    bool captured = true;
};

// The dtype of a training step's ops: fp32 throughout, or bf16 mixed precision: bf16
// activations, weight copies and gradients into the matmuls and convolutions (their sums fp32),
// fp32 master weights, biases, weight gradients and optimiser state (workloads/README.md).
enum class Precision { Fp32, Bf16 };
// "fp32" or "bf16"; anything else throws std::invalid_argument.
Precision parse_precision(const std::string &name);
tpurt::DType compute_dtype(Precision p);

// Queues t = values on `stream`: converted to t's dtype (fp32 or bf16, rounded to nearest even)
// on the host at once, into a copy that the queued work holds (`values` may change at once).
void copy_in(tpurt::Stream &stream, const tpurt::Tensor &t, std::span<const float> values);

// Queues the one-hot rows of `labels` (batch of them) into targets [batch, classes]; throws
// std::invalid_argument naming `model` for a label that is not below classes.
void copy_targets(tpurt::Stream &stream, const tpurt::Tensor &targets, const std::uint8_t *labels,
                  std::size_t batch, const char *model);

// What one step reports: the batch's mean loss and how many rows the logits got right.
struct StepResult {
    double loss = 0.0;
    std::size_t correct = 0;
};

// Waits for the stream's work (the step's ops), then reads the per-row loss [batch] and the
// logits [batch, classes] back and scores them against `labels`.
StepResult step_result(tpurt::Stream &stream, const tpurt::Tensor &loss,
                       const tpurt::Tensor &logits, const std::uint8_t *labels);

// Parameters [first, first + count) of a model's CardParams: what one part of a backward pass
// completes the gradients of (a layer's weights and bias), for data-parallel training
// (data_parallel.hpp).
struct ParamRange {
    std::size_t first = 0, count = 0;
};

struct CardParam {
    std::string key;          // tpu_model::Param's key
    tpurt::Tensor w, g, m, v; // fp32 weights (the master), gradient, momentum / Adam's moments
    tpurt::Tensor c;          // what the ops read: w itself, or w's bf16 copy (every step's)
};

class CardParams {
  public:
    CardParams(tpurt::Device &device, const OptimizerConfig &opt, Precision precision);

    // Declares a parameter of `shape` holding `values`, with zero gradient and state; `copied`
    // gives it a compute copy in the precision's dtype (weights; biases are read as fp32 by the
    // ops). place() then puts every declared parameter on the card: each kind of tensor (weights,
    // gradients, the two moments, the bf16 copies) one flat buffer, each parameter's a view of
    // it in declaration order, so that one optimiser job updates them all (the update is
    // elementwise: the same values as one job per parameter). Parameters are used after place().
    void add(const std::string &key, const std::vector<float> &values,
             std::vector<std::size_t> shape, bool copied);
    void place();
    CardParam &operator[](std::size_t i) { return params_[i]; }
    const CardParam &operator[](std::size_t i) const { return params_[i]; }
    std::size_t size() const { return params_.size(); }
    // The flat buffers every parameter is a view of (after place()): what data-parallel
    // training compares between replicas.
    const CardParam &flat() const;
    // The gradients of the parameters of `range` as one view of the flat gradient buffer (they
    // are placed one after the other): what a data-parallel step all-reduces.
    tpurt::Tensor gradients(ParamRange range) const;
    // The stream of the model's ops: a step's ops are queued here in order; reading a tensor
    // back (gradients, weights, the optimiser state) needs it synchronized first.
    tpurt::Stream &stream() { return stream_; }

    // The learning rate of the steps that follow (lr_schedule.hpp); a change reaches the card
    // through the hyperparameter tensor (a stream copy), the programs stay.
    void set_lr(float lr);
    // Queues one optimiser update of every parameter from its gradient, on the card, behind
    // the hyperparameters if they changed (the learning rate, Adam's step).
    void step();

    // A captured step (OptimizerConfig::captured): `queue_ops` (the step's forward and backward
    // ops on stream()) and the optimiser's update captured as a graph named `name`, whose
    // parameter "hyperparameters" is the optimiser's hyperparameter tensor.
    tpurt::Graph capture_step(const std::string &name, const std::function<void()> &queue_ops);
    // Replays it as step() would queue it: the hyperparameters set as its parameter if they
    // changed, then the graph's jobs.
    void replay_step(tpurt::Graph &step);
    std::uint64_t steps() const { return steps_; }

    void save_optimizer(tpu_model::Checkpoint &c) const;
    void load_optimizer(const tpu_model::Checkpoint &c);

  private:
    // The hyperparameters of step steps_ + 1, written into hp_ before the next update.
    void write_hyperparameters();
    void queue_update();

    struct Declared {
        std::string key;
        std::vector<float> values;
        std::vector<std::size_t> shape;
        bool copied;
    };

    tpurt::Device &device_;
    tpurt::Stream stream_;
    OptimizerConfig opt_;
    Precision precision_;
    std::vector<Declared> declared_;
    std::vector<CardParam> params_;
    std::vector<std::size_t> offsets_; // of each parameter in the flat buffers, and the total
    // The flat buffers once placed (c: the bf16 copies, or w in fp32 precision).
    std::optional<CardParam> all_;
    tpurt::Tensor hp_;
    std::optional<std::vector<float>> hp_pending_; // not yet in hp_
    std::uint64_t steps_ = 0;
};

} // namespace tpu_train
