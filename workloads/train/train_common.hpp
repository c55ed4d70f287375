// SPDX-License-Identifier: MIT
// train_common.hpp - what the trainers share (tpu-train-cpu on the CPU, tpu-train on the card):
// their command-line options (the MLP or the CNN), the data sets standardised with the training
// set's statistics, the evaluation of a network's logits over a set, and the checkpoint's
// common fields.
#pragma once

#include <tpu_data/dataset.hpp>
#include <tpu_eval/metrics.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_model/loss.hpp>
#include <tpu_model/lr_schedule.hpp>
#include <tpu_model/optimizer.hpp>
#include <tpu_nn/graph.hpp>
#include <tpu_report/curve_log.hpp>
#include <tpu_report/tensorboard_writer.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tpu_train {

struct Options {
    std::string model = "mlp"; // or "cnn", or a model spec (tpu_nn/spec.hpp)
    std::string data = "fashion-mnist";
    std::string data_dir;
    std::vector<std::size_t> hidden;             // empty: the model's default
    std::vector<std::size_t> filters = {16, 32}; // the CNN's conv blocks
    std::string optimizer = "sgd";
    float lr = 0.0f;                      // 0: the optimiser's default
    std::string lr_schedule = "constant"; // or "cosine" (tpu_model/lr_schedule.hpp)
    float momentum = 0.9f;
    std::size_t epochs = 5;
    std::size_t batch = 64;
    std::size_t limit = 0; // 0: the whole training set
    std::uint64_t seed = 1;
    std::string out = "train-out";
    std::string resume;
    std::string tensorboard;         // --tensorboard: a directory for TensorBoard's event files
    std::string precision = "bf16";  // tpu-train's --precision (card_params.hpp), or fp32
    std::string profile;             // tpu-train's --profile: the trace of the first steps
    std::size_t profile_steps = 4;   // tpu-train's --profile-steps
    std::size_t snapshot_steps = 50; // tpu-train's --snapshot-steps (card_recovery.hpp)
    std::size_t retries = 5;         // tpu-train's --retries
    unsigned card = 0;               // tpu-train's --card
    std::size_t cards = 1;           // tpu-train's --cards (data_parallel.hpp)
    std::size_t replica_check_steps = 100; // tpu-train's --replica-check-steps
    bool eager_steps = false; // tpu-train's --eager-steps (OptimizerConfig::captured false)
};

// The trainers' options on `app`.
void add_options(CLI::App &app, Options &o);

// The learning rate: --lr, or the optimiser's default (0.02 for SGD, 0.001 for Adam).
float learning_rate(const Options &o);

// --lr-schedule over --epochs of `batches_per_epoch` steps from learning_rate(o); step
// epoch x batches_per_epoch + i is batch i of that epoch.
tpu_model::LrSchedule lr_schedule(const Options &o, std::size_t batches_per_epoch);

// Loads the sets and standardises both with the training set's statistics, which it returns.
tpu_data::Normalization load_data(const Options &o, tpu_data::Dataset &train,
                                  tpu_data::Dataset &test);

// {inputs, hidden..., classes} for the training set, and the model's name ("mlp-784-256-...").
std::vector<std::size_t> layer_sizes(const Options &o, const tpu_data::Dataset &train);
std::string model_name(const std::vector<std::size_t> &sizes);
// The CNN's name for the training set's images (one channel) and --filters, --hidden, e.g.
// cnn-28x28x1-c16-c32-d128-10.
std::string cnn_name(const Options &o, const tpu_data::Dataset &train);
// The graph of --model: that of the mlp's or the cnn's name, or a spec's, checked against the
// training set: the input shape (HxWx1 images for cnn-, their pixel count for mlp-) and the
// classes; throws std::invalid_argument saying what differs, or that --hidden or --filters was
// given with a spec.
tpu_nn::Graph model_graph(const Options &o, const tpu_data::Dataset &train);

// The logits (batch x classes) of a network for `batch` standardised samples.
using Forward = std::function<std::vector<float>(const float *x, std::size_t batch)>;
// The samples a Forward is given at once by the evaluations below.
inline constexpr std::size_t eval_batch = 250;

// Loss and accuracy of `forward` over a whole set, in batches; fills `matrix` if given.
std::pair<double, double> evaluate(const Forward &forward, const tpu_data::Dataset &d,
                                   tpu_eval::ConfusionMatrix *matrix);

// Where a run's figures go: the learning curves (<out>/curves.csv, continued by a resumed run)
// and, with --tensorboard, a TensorBoard event file.
struct RunLogs {
    RunLogs(const Options &o, bool resumed);
    // With --tensorboard, a training step's scalars: its loss, accuracy and learning rate, and
    // its samples/s in wall time since the previous step's (none for a run's first step).
    void step(std::size_t step, double loss, double accuracy, float lr, std::size_t samples);

    tpu_report::CurveLog curves;
    std::optional<tpu_report::TensorBoardWriter> tensorboard;

  private:
    std::optional<std::chrono::steady_clock::time_point> last_step_;
};

// The end of an epoch ending at global step `step`: evaluates `forward` on the test set, prints
// the test loss and accuracy and the epoch's samples/s, and adds the epoch's row to the learning
// curves and its scalars to TensorBoard.
void end_epoch(const Forward &forward, const tpu_data::Dataset &test, std::size_t epoch,
               std::size_t step, double loss_sum, std::size_t correct, std::size_t seen,
               double seconds, RunLogs &logs);
// The end of training: the test set's confusion matrix, printed and saved as
// <out>/evaluation.csv, and what was saved where.
void final_evaluation(const Forward &forward, const tpu_data::Dataset &test,
                      const std::string &out);
// A checkpoint's fields other than the tensors: model, epoch, seed, optimiser, and what inference
// applies to raw features (tpu_infer::InputTransform); for a CNN also the note input.shape.
tpu_model::Checkpoint checkpoint_header(const Options &o, const std::string &model,
                                        std::size_t epoch, const tpu_data::Normalization &norm);

} // namespace tpu_train
