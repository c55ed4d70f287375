// SPDX-License-Identifier: MIT
// train_common.hpp - what the trainers share (tpu-train-cpu on the CPU, tpu-train on the card):
// their command-line options, the data sets standardised with the training set's statistics,
// the evaluation of a network over a set, and the checkpoint's common fields.
#pragma once

#include <tpu_data/dataset.hpp>
#include <tpu_eval/metrics.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_model/cpu_mlp.hpp>
#include <tpu_report/curve_log.hpp>

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tpu_train {

struct Options {
    std::string data = "fashion-mnist";
    std::string data_dir;
    std::vector<std::size_t> hidden = {256, 128};
    std::string optimizer = "sgd";
    float lr = 0.0f; // 0: the optimiser's default
    float momentum = 0.9f;
    std::size_t epochs = 5;
    std::size_t batch = 64;
    std::size_t limit = 0; // 0: the whole training set
    std::uint64_t seed = 1;
    std::string out = "train-out";
    std::string resume;
};

// The trainers' options on `app`.
void add_options(CLI::App &app, Options &o);

// The learning rate: --lr, or the optimiser's default (0.02 for SGD, 0.001 for Adam).
float learning_rate(const Options &o);

// Loads the sets and standardises both with the training set's statistics, which it returns.
tpu_data::Normalization load_data(const Options &o, tpu_data::Dataset &train,
                                  tpu_data::Dataset &test);

// {inputs, hidden..., classes} for the training set, and the model's name ("mlp-784-256-...").
std::vector<std::size_t> layer_sizes(const Options &o, const tpu_data::Dataset &train);
std::string model_name(const std::vector<std::size_t> &sizes);

// Loss and accuracy of `net` over a whole set, in batches; fills `matrix` if given.
std::pair<double, double> evaluate(tpu_model::CpuMlp &net, const tpu_data::Dataset &d,
                                   tpu_eval::ConfusionMatrix *matrix);

// The end of an epoch: evaluates `net` on the test set, prints the test loss and accuracy and the
// epoch's samples/s, and adds the epoch's row to the learning curves.
void end_epoch(tpu_model::CpuMlp &net, const tpu_data::Dataset &test, std::size_t epoch,
               double loss_sum, std::size_t correct, std::size_t seen, double seconds,
               tpu_report::CurveLog &curves);
// The end of training: the test set's confusion matrix, printed and saved as
// <out>/evaluation.csv, and what was saved where.
void final_evaluation(tpu_model::CpuMlp &net, const tpu_data::Dataset &test,
                      const std::string &out);
// A checkpoint's fields other than the tensors: model, epoch, seed, optimiser, and what inference
// applies to raw features (tpu_infer::InputTransform).
tpu_model::Checkpoint checkpoint_header(const Options &o, const std::string &model,
                                        std::size_t epoch, const tpu_data::Normalization &norm);

} // namespace tpu_train
