// SPDX-License-Identifier: MIT
// cpu_train.cpp - tpu-train-cpu: trains the MLP, the CNN or a model spec (--model), each as the
// graph of its name on tpu_nn's CPU executor, on a real data set with plain C++ on this CPU, the
// baseline that training on the card is measured against. Shows a progress line per epoch, writes
// the learning curves (curves.csv), the test set's evaluation (evaluation.csv) and a checkpoint
// after every epoch (checkpoint.tpuckpt) into --out, and resumes from one.
#include <tpu_data/batches.hpp>
#include <tpu_data/dataset.hpp>
#include <tpu_data/error.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_report/curve_log.hpp>
#include <tpu_report/progress.hpp>

#include "train_common.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <variant>

namespace {

using tpu_train::Options;
using Optimizer = std::variant<tpu_model::SgdMomentum, tpu_model::Adam>;

Optimizer make_optimizer(const Options &o) {
    if (o.optimizer == "adam")
        return tpu_model::Adam(tpu_train::learning_rate(o));
    return tpu_model::SgdMomentum(tpu_train::learning_rate(o), o.momentum);
}

// Trains `net` named `model`.
int train_net(const Options &o, tpu_nn::CpuExecutor &net, const std::string &model,
              tpu_data::Dataset &train, const tpu_data::Dataset &test,
              const tpu_data::Normalization &norm) {
    const tpu_train::Forward forward = [&net](const float *x, std::size_t batch) {
        return net.forward(x, batch);
    };
    Optimizer opt = make_optimizer(o);
    std::size_t first_epoch = 0;
    std::filesystem::create_directories(o.out);
    const std::string ckpt_path = o.out + "/checkpoint.tpuckpt";
    if (!o.resume.empty()) {
        tpu_model::Checkpoint c = tpu_model::load_checkpoint(o.resume);
        if (c.model != model)
            throw tpu_data::DataError(o.resume, "holds model " + c.model + ", not " + model);
        net.load(c);
        std::visit([&](auto &op) { op.load(c, net.params()); }, opt);
        first_epoch = c.epoch;
        std::cout << "resumed " << model << " from " << o.resume << " after epoch " << c.epoch
                  << "\n";
    }
    std::cout << "training " << model << " on " << train.name << " (" << train.count
              << " samples, batch " << o.batch << ", " << o.optimizer << ") on the CPU\n";

    tpu_train::RunLogs logs(o, first_epoch > 0);
    tpu_data::Batches batches(train, o.batch, o.seed);
    tpu_data::Batch b;
    const tpu_model::LrSchedule schedule = tpu_train::lr_schedule(o, batches.batches_per_epoch());
    const bool tty = tpu_report::Progress::stdout_is_terminal();
    for (std::size_t epoch = first_epoch; epoch < o.epochs; ++epoch) {
        tpu_report::Progress progress("epoch " + std::to_string(epoch + 1) + "/" +
                                          std::to_string(o.epochs),
                                      train.count, std::cout, tty);
        batches.start_epoch(epoch);
        double loss_sum = 0;
        std::size_t seen = 0, correct = 0;
        std::uint64_t step = epoch * batches.batches_per_epoch();
        while (batches.next(b)) {
            const float lr = schedule.at(step++);
            std::visit([&](auto &op) { op.set_lr(lr); }, opt);
            const std::vector<float> &logits = net.forward(b.features.data(), b.size);
            tpu_model::LossResult r =
                tpu_model::softmax_cross_entropy(logits, b.size, train.classes(), b.labels.data());
            net.backward(r.dlogits);
            std::visit([&](auto &op) { op.step(net.params()); }, opt);
            loss_sum += double(r.loss) * double(b.size);
            correct += r.correct;
            seen += b.size;
            logs.step(step, r.loss, double(r.correct) / double(b.size), lr, b.size);
            progress.update(seen, loss_sum / double(seen), double(correct) / double(seen));
        }
        const double seconds = progress.elapsed();
        progress.finish(loss_sum / double(seen), double(correct) / double(seen));
        tpu_train::end_epoch(forward, test, epoch, step, loss_sum, correct, seen, seconds, logs);
        tpu_model::Checkpoint c = tpu_train::checkpoint_header(o, model, epoch + 1, norm);
        net.save(c);
        std::visit([&](const auto &op) { op.save(c); }, opt);
        tpu_model::save_checkpoint(c, ckpt_path);
    }
    tpu_train::final_evaluation(forward, test, o.out);
    return 0;
}

int run(const Options &o) {
    tpu_data::Dataset train, test;
    const tpu_data::Normalization norm = tpu_train::load_data(o, train, test);
    tpu_nn::CpuExecutor net(tpu_train::model_graph(o, train), o.seed);
    const std::string name = net.graph().name();
    return train_net(o, net, name, train, test, norm);
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    CLI::App app("tpu-train-cpu: train the MLP or the CNN on the CPU (the baseline for training "
                 "on the card)");
    tpu_train::add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    try {
        return run(o);
    } catch (const std::exception &e) {
        std::cerr << "tpu-train-cpu: " << e.what() << "\n";
        return 1;
    }
}
