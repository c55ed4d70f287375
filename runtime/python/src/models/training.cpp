// SPDX-License-Identifier: MIT
// training.cpp - tpurt.Trainer: the MLP, the CNN or a model spec of tpu-train trained on a card
// by the same C++ (tpu_nn's CardTrainer on the graph of the model's name: every op of a step on
// the card, the step captured once and replayed), with its optimisers, precisions and
// learning-rate schedules, its evaluation and its checkpoints (read by tpu-eval, tpu-serve,
// tpu-train --resume).
#include "dataset.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "train_common.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>
#include <tpu_nn/card_trainer.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace tpurt_python {

namespace {

using Scores = std::pair<double, double>; // mean loss, accuracy

// A model trained on a card, whatever its kind (TrainerOf below).
class Trainer {
  public:
    Trainer(tpurt::Device device, std::shared_ptr<const Data> train, tpu_train::Options o)
        : device_(std::move(device)), train_(std::move(train)), o_(std::move(o)),
          schedule_(tpu_train::lr_schedule(
              o_, tpu_data::Batches(train_->set, o_.batch, o_.seed).batches_per_epoch())) {}
    virtual ~Trainer() = default;

    // One epoch over the training set in the seeded order of tpu-train's epoch `epoch_`;
    // `callback(step, loss, accuracy, lr)` after every `every`-th step.
    Scores train_epoch(const py::object &callback, std::size_t every) {
        if (every == 0)
            throw py::value_error("every must be at least 1");
        tpu_data::Batches batches(train_->set, o_.batch, o_.seed);
        batches.start_epoch(epoch_);
        tpu_data::Batch b;
        double loss_sum = 0;
        std::size_t correct = 0, seen = 0;
        while (batches.next(b)) {
            const float lr = schedule_.at(step_);
            tpu_train::StepResult r;
            {
                py::gil_scoped_release release;
                set_lr(lr);
                r = step(b.features.data(), b.labels.data(), b.size);
            }
            ++step_;
            loss_sum += r.loss * double(b.size);
            correct += r.correct;
            seen += b.size;
            if (!callback.is_none() && step_ % every == 0)
                callback(step_, r.loss, double(r.correct) / double(b.size), lr);
            if (PyErr_CheckSignals() != 0) // Ctrl-C between steps
                throw py::error_already_set();
        }
        ++epoch_;
        return {loss_sum / double(seen), double(correct) / double(seen)};
    }

    // Mean loss and accuracy over `d`, the logits computed as tpu-train's test set's.
    Scores evaluate(const Data &d) {
        py::gil_scoped_release release;
        return tpu_train::evaluate(forward(), d.set, nullptr);
    }

    // The logits [n, classes] of n standardised samples.
    py::array_t<float>
    logits(const py::array_t<float, py::array::c_style | py::array::forcecast> &x) {
        const std::size_t sample = train_->set.sample_size();
        if (x.ndim() < 1 || x.shape(0) == 0 || std::size_t(x.size()) != x.shape(0) * sample)
            throw py::value_error("logits() takes n > 0 samples of " + std::to_string(sample) +
                                  " features each (e.g. an array [n, 1, 28, 28] or [n, 784])");
        const std::size_t n = x.shape(0);
        std::vector<float> out;
        {
            py::gil_scoped_release release;
            out = forward()(x.data(), n);
        }
        py::array_t<float> result({py::ssize_t(n), py::ssize_t(out.size() / n)});
        std::copy(out.begin(), out.end(), result.mutable_data());
        return result;
    }

    // A checkpoint of the weights and optimiser state, as tpu-train writes it.
    void save(const std::string &path) {
        tpu_model::Checkpoint c = tpu_train::checkpoint_header(o_, name(), epoch_, train_->norm);
        c.notes["precision"] = o_.precision;
        save_state(c);
        tpu_model::save_checkpoint(c, path);
    }

    // The weights, optimiser state and position of a checkpoint of this model (save(), or
    // tpu-train's), to go on training or evaluating from there.
    void load(const std::string &path) {
        const tpu_model::Checkpoint c = tpu_model::load_checkpoint(path);
        if (c.model != name())
            throw tpu_data::DataError(path, "holds model " + c.model + ", not " + name());
        {
            py::gil_scoped_release release;
            load_state(c);
        }
        epoch_ = c.epoch;
        step_ = c.step;
    }

    virtual std::string name() const = 0;
    std::size_t epochs_done() const { return epoch_; }
    std::uint64_t steps_done() const { return step_; }
    const tpurt::Device &device() const { return device_; }

  protected:
    virtual tpu_train::StepResult step(const float *x, const std::uint8_t *labels,
                                       std::size_t batch) = 0;
    virtual void set_lr(float lr) = 0;
    virtual tpu_train::Forward forward() = 0;
    virtual void save_state(tpu_model::Checkpoint &c) = 0;
    virtual void load_state(const tpu_model::Checkpoint &c) = 0;

    tpurt::Device device_; // outlives the derived class's card model
    std::shared_ptr<const Data> train_;
    tpu_train::Options o_;

  private:
    tpu_model::LrSchedule schedule_;
    std::size_t epoch_ = 0;
    std::uint64_t step_ = 0;
};

tpu_train::OptimizerConfig optimizer_config(const tpu_train::Options &o) {
    if (o.optimizer != "adam" && o.optimizer != "sgd")
        throw py::value_error("unknown optimizer '" + o.optimizer + "': adam or sgd");
    tpu_train::OptimizerConfig c;
    c.kind = o.optimizer == "adam" ? tpu_train::OptimizerKind::Adam : tpu_train::OptimizerKind::Sgd;
    c.lr = tpu_train::learning_rate(o);
    c.momentum = o.momentum;
    return c;
}

// The model of `o.model` (mlp, cnn or a spec) as a graph on the card.
class GraphTrainer : public Trainer {
  public:
    GraphTrainer(tpurt::Device device, std::shared_ptr<const Data> train, tpu_train::Options o)
        : Trainer(std::move(device), std::move(train), std::move(o)),
          net_(tpu_train::model_graph(o_, train_->set), o_.seed),
          card_(std::in_place, device_, net_, optimizer_config(o_),
                tpu_train::parse_precision(o_.precision)) {}

    std::string name() const override { return net_.graph().name(); }

  protected:
    tpu_train::StepResult step(const float *x, const std::uint8_t *labels,
                               std::size_t batch) override {
        return card_->step(x, labels, batch);
    }
    void set_lr(float lr) override { card_->set_lr(lr); }
    tpu_train::Forward forward() override {
        return [this](const float *x, std::size_t n) { return card_->logits(x, n); };
    }
    void save_state(tpu_model::Checkpoint &c) override {
        card_->copy_to(net_);
        c.step = card_->steps();
        net_.save(c);
        card_->save_optimizer(c);
    }
    // The card's model made again from the checkpoint's weights, with its optimiser state.
    void load_state(const tpu_model::Checkpoint &c) override {
        net_.load(c);
        card_.reset();
        card_.emplace(device_, net_, optimizer_config(o_),
                      tpu_train::parse_precision(o_.precision));
        card_->load_optimizer(c);
    }

  private:
    tpu_nn::CpuExecutor net_;
    std::optional<tpu_nn::CardTrainer> card_;
};

} // namespace

void bind_training(py::module_ &m) {
    py::class_<Trainer>(
        m, "Trainer",
        "tpu-train's MLP, CNN or a model spec trained on a card: every op of a training step "
        "(forward, loss, backward, optimiser) runs on the card, the step captured once and "
        "replayed.")
        .def(py::init([](tpurt::Device device, std::shared_ptr<const Data> train,
                         const std::string &model, std::optional<std::vector<std::size_t>> filters,
                         std::optional<std::vector<std::size_t>> hidden,
                         const std::string &optimizer, float lr, const std::string &lr_schedule,
                         float momentum, std::size_t epochs, std::size_t batch, std::uint64_t seed,
                         const std::string &precision) -> std::unique_ptr<Trainer> {
                 if (!train)
                     throw py::value_error("Trainer needs a training Dataset");
                 if (batch == 0 || epochs == 0)
                     throw py::value_error("batch and epochs must be at least 1");
                 tpu_train::Options o;
                 o.model = model;
                 if (filters)
                     o.filters = std::move(*filters);
                 else if (model == "cnn")
                     o.filters = {32, 64};
                 o.hidden = hidden.value_or(std::vector<std::size_t>{});
                 o.optimizer = optimizer;
                 o.lr = lr;
                 o.lr_schedule = lr_schedule;
                 o.momentum = momentum;
                 o.epochs = epochs;
                 o.batch = batch;
                 o.seed = seed;
                 o.precision = precision;
                 return std::make_unique<GraphTrainer>(std::move(device), std::move(train),
                                                       std::move(o));
             }),
             py::arg("device"), py::arg("train"), py::arg("model") = "cnn",
             py::arg("filters") = py::none(), py::arg("hidden") = py::none(),
             py::arg("optimizer") = "adam", py::arg("lr") = 0.0f,
             py::arg("lr_schedule") = "constant", py::arg("momentum") = 0.9f, py::arg("epochs") = 1,
             py::arg("batch") = 64, py::arg("seed") = 1, py::arg("precision") = "bf16",
             "A model for `train` on `device`: model 'cnn' (3x3 conv blocks of `filters`, "
             "default [32, 64], with ReLU and 2x2 max pooling, then dense `hidden` (default "
             "[128]) and the classes), 'mlp' (hidden default [256, 128]) or a model spec such as "
             "'cnn-28x28x1-c16k5-res-d64-10' (workloads/README.md, which says its layers: no "
             "filters or hidden then), initialised from `seed`; optimizer 'adam' or "
             "'sgd' (with `momentum`), lr 0: the optimiser's default (0.001, 0.02), lr_schedule "
             "'constant' or 'cosine' (to zero over `epochs`), precision 'bf16' (mixed) or "
             "'fp32'. Batches are drawn in tpu-train's seeded order.")
        .def("train_epoch", &Trainer::train_epoch, py::arg("callback") = py::none(),
             py::arg("every") = 100,
             "Trains one epoch; calls callback(step, loss, accuracy, lr) after every `every`-th "
             "step (the batch's mean loss and accuracy). Returns (mean loss, accuracy) of the "
             "epoch's batches.")
        .def("evaluate", &Trainer::evaluate, py::arg("dataset"),
             "(mean loss, accuracy) over a Dataset (the logits computed on the card).")
        .def("logits", &Trainer::logits, py::arg("x"),
             "The logits [n, classes] of n standardised samples (float32 array, n first).")
        .def("save", &Trainer::save, py::arg("path"),
             "Writes a checkpoint (.tpuckpt) of the weights and optimiser state, as tpu-train "
             "does: tpu-eval, tpu-serve and tpu-train --resume read it.")
        .def("load", &Trainer::load, py::arg("path"),
             "Takes the weights, optimiser state, epoch and step of a checkpoint of this model "
             "(save(), tpu-train's checkpoint.tpuckpt): training goes on from there as it would "
             "have without the stop. Raises tpurt.Error for a missing file or another model.")
        .def_property_readonly("name", &Trainer::name,
                               "The model's name, e.g. cnn-28x28x1-c32-c64-d128-10.")
        .def_property_readonly("epochs_done", &Trainer::epochs_done,
                               "Epochs trained (a loaded checkpoint's included).")
        .def_property_readonly("steps_done", &Trainer::steps_done, "Optimiser steps taken.")
        .def_property_readonly("device", &Trainer::device, "The card it trains on.");
}

} // namespace tpurt_python
