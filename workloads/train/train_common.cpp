// SPDX-License-Identifier: MIT
// train_common.cpp - the trainers' shared options, data loading, evaluation and checkpoint
// header (train_common.hpp).
#include "train_common.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_nn/spec.hpp>

#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace tpu_train {

namespace {

// A float written so that reading it back gives the same value.
std::string float_text(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

} // namespace

void add_options(CLI::App &app, Options &o) {
    app.add_option("--model", o.model,
                   "mlp, cnn, or a model spec such as cnn-28x28x1-c16k5-res-d128-10 "
                   "(workloads/README.md, \"Model specs\"), which --hidden and --filters do "
                   "not change")
        ->check(CLI::Validator(
            [](std::string &m) -> std::string {
                if (m == "mlp" || m == "cnn")
                    return {};
                try {
                    tpu_nn::parse_spec(m);
                } catch (const std::invalid_argument &e) {
                    return e.what();
                }
                return {};
            },
            "MODEL"))
        ->capture_default_str();
    app.add_option("--data", o.data, "data set")
        ->check(CLI::IsMember({"fashion-mnist", "digits"}))
        ->capture_default_str();
    app.add_option("--data-dir", o.data_dir, "where the data sets are (default: the cache's)");
    app.add_option("--hidden", o.hidden,
                   "hidden dense layer sizes (default: 256 128 for mlp, 128 for cnn)");
    app.add_option("--filters", o.filters, "the CNN's filters per conv block")
        ->capture_default_str();
    app.add_option("--optimizer", o.optimizer, "sgd (with momentum) or adam")
        ->check(CLI::IsMember({"sgd", "adam"}))
        ->capture_default_str();
    app.add_option("--lr", o.lr, "learning rate (default: 0.02 for sgd, 0.001 for adam)");
    app.add_option("--lr-schedule", o.lr_schedule,
                   "constant, or cosine: decay to zero over all --epochs' steps")
        ->check(CLI::IsMember({"constant", "cosine"}))
        ->capture_default_str();
    app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
    app.add_option("--epochs", o.epochs, "epochs in all (a resumed run counts those done)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--batch", o.batch, "mini-batch size")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--limit", o.limit, "train on the first N samples only (0: all)");
    app.add_option("--seed", o.seed, "seed of initialisation and data order")
        ->capture_default_str();
    app.add_option("--out", o.out, "output directory")->capture_default_str();
    app.add_option("--resume", o.resume, "checkpoint to continue from")->check(CLI::ExistingFile);
    app.add_option("--tensorboard", o.tensorboard,
                   "write loss, accuracy, learning rate, samples/s (and on the card its "
                   "utilisation) as TensorBoard event files in this directory");
}

RunLogs::RunLogs(const Options &o, bool resumed) : curves(o.out + "/curves.csv", resumed) {
    if (!o.tensorboard.empty())
        tensorboard.emplace(o.tensorboard);
}

void RunLogs::step(std::size_t step, double loss, double accuracy, float lr, std::size_t samples) {
    if (!tensorboard)
        return;
    const auto at = static_cast<std::int64_t>(step);
    tensorboard->scalar("train/loss", at, loss);
    tensorboard->scalar("train/accuracy", at, accuracy);
    tensorboard->scalar("train/learning_rate", at, lr);
    const auto now = std::chrono::steady_clock::now();
    if (last_step_) {
        const std::chrono::duration<double> seconds = now - *last_step_;
        if (seconds.count() > 0)
            tensorboard->scalar("train/samples_per_second", at, double(samples) / seconds.count());
    }
    last_step_ = now;
}

float learning_rate(const Options &o) {
    if (o.lr > 0)
        return o.lr;
    return o.optimizer == "adam" ? 1e-3f : 0.02f;
}

tpu_model::LrSchedule lr_schedule(const Options &o, std::size_t batches_per_epoch) {
    return tpu_model::LrSchedule(tpu_model::parse_lr_schedule(o.lr_schedule), learning_rate(o),
                                 std::uint64_t(o.epochs) * batches_per_epoch);
}

tpu_data::Normalization load_data(const Options &o, tpu_data::Dataset &train,
                                  tpu_data::Dataset &test) {
    const std::string dir = o.data_dir.empty() ? tpu_data::datasets_dir() : o.data_dir;
    if (o.data == "digits") {
        tpu_data::Dataset all = tpu_data::load_digits(dir + "/sklearn");
        const std::size_t n = all.count * 5 / 6;
        train = tpu_data::slice(all, 0, n);
        test = tpu_data::slice(all, n, all.count);
    } else {
        train = tpu_data::load_fashion_mnist(dir + "/fashion-mnist", tpu_data::Split::train);
        test = tpu_data::load_fashion_mnist(dir + "/fashion-mnist", tpu_data::Split::test);
    }
    if (o.limit > 0 && o.limit < train.count)
        train = tpu_data::slice(train, 0, o.limit);
    const tpu_data::Normalization norm = tpu_data::compute_normalization(train);
    tpu_data::normalize(train, norm);
    tpu_data::normalize(test, norm);
    return norm;
}

namespace {

std::vector<std::size_t> hidden_sizes(const Options &o) {
    if (!o.hidden.empty())
        return o.hidden;
    if (o.model == "cnn")
        return {128};
    return {256, 128};
}

} // namespace

std::vector<std::size_t> layer_sizes(const Options &o, const tpu_data::Dataset &train) {
    std::vector<std::size_t> sizes = {train.sample_size()};
    const std::vector<std::size_t> hidden = hidden_sizes(o);
    sizes.insert(sizes.end(), hidden.begin(), hidden.end());
    sizes.push_back(train.classes());
    return sizes;
}

std::string model_name(const std::vector<std::size_t> &sizes) {
    std::string model = "mlp";
    for (std::size_t s : sizes)
        model += "-" + std::to_string(s);
    return model;
}

std::string cnn_name(const Options &o, const tpu_data::Dataset &train) {
    if (train.sample_shape.size() != 3 || train.sample_shape[0] != 1)
        throw std::invalid_argument("the CNN takes images of one channel");
    std::string n = "cnn-" + std::to_string(train.sample_shape[1]) + "x" +
                    std::to_string(train.sample_shape[2]) + "x1";
    for (std::size_t f : o.filters)
        n += "-c" + std::to_string(f);
    n += "-d";
    const std::vector<std::size_t> hidden = hidden_sizes(o);
    for (std::size_t i = 0; i < hidden.size(); ++i)
        n += (i > 0 ? "-" : "") + std::to_string(hidden[i]);
    return n + "-" + std::to_string(train.classes());
}

namespace {

bool is_spec(const Options &o) {
    return o.model != "mlp" && o.model != "cnn";
}

tpu_nn::Graph spec_graph(const Options &o, const tpu_data::Dataset &train) {
    if (!o.hidden.empty() || o.filters != Options{}.filters)
        throw std::invalid_argument("--hidden and --filters shape the mlp and the cnn; a model "
                                    "spec says its layers itself (" +
                                    o.model + ")");
    tpu_nn::Graph g = tpu_nn::graph_from_spec(o.model);
    const tpu_nn::Shape &in = g.node(g.input()).shape;
    const std::vector<std::uint32_t> &s = train.sample_shape;
    const tpu_nn::Shape data = in.size() == 1  ? tpu_nn::Shape{train.sample_size()}
                               : s.size() == 3 ? tpu_nn::Shape{s[1], s[2], s[0]}
                                               : tpu_nn::Shape{};
    if (in != data)
        throw std::invalid_argument("model " + g.name() + " takes inputs of " +
                                    tpu_nn::to_string(in) + ", " + train.name + "'s are " +
                                    (data.empty() ? "not images" : tpu_nn::to_string(data)));
    const std::size_t classes = g.node(g.output()).shape.at(0);
    if (classes != train.classes())
        throw std::invalid_argument("model " + g.name() + " has " + std::to_string(classes) +
                                    " classes, " + train.name + " has " +
                                    std::to_string(train.classes()));
    return g;
}

} // namespace

tpu_nn::Graph model_graph(const Options &o, const tpu_data::Dataset &train) {
    if (is_spec(o))
        return spec_graph(o, train);
    return tpu_nn::graph_from_spec(o.model == "cnn" ? cnn_name(o, train)
                                                    : model_name(layer_sizes(o, train)));
}

std::pair<double, double> evaluate(const Forward &forward, const tpu_data::Dataset &d,
                                   tpu_eval::ConfusionMatrix *matrix) {
    tpu_data::Batches batches(d, eval_batch, 0, false);
    tpu_data::Batch b;
    double loss = 0;
    std::size_t correct = 0;
    while (batches.next(b)) {
        const std::vector<float> logits = forward(b.features.data(), b.size);
        tpu_model::LossResult r =
            tpu_model::softmax_cross_entropy(logits, b.size, d.classes(), b.labels.data());
        loss += double(r.loss) * double(b.size);
        correct += r.correct;
        if (matrix)
            matrix->add_logits(logits.data(), b.labels.data(), b.size);
    }
    return {loss / double(d.count), double(correct) / double(d.count)};
}

tpu_model::Checkpoint checkpoint_header(const Options &o, const std::string &model,
                                        std::size_t epoch, const tpu_data::Normalization &norm) {
    tpu_model::Checkpoint c;
    c.model = model;
    c.epoch = epoch;
    c.seed = o.seed;
    c.notes["optimizer"] = o.optimizer;
    c.notes["lr.schedule"] = o.lr_schedule;
    c.notes["input.mean"] = float_text(norm.mean);
    c.notes["input.stddev"] = float_text(norm.stddev);
    if (model.rfind("cnn-", 0) == 0) // from the name "cnn-<H>x<W>x<C>-..."
        c.notes["input.shape"] = model.substr(4, model.find('-', 4) - 4);
    return c;
}

void end_epoch(const Forward &forward, const tpu_data::Dataset &test, std::size_t epoch,
               std::size_t step, double loss_sum, std::size_t correct, std::size_t seen,
               double seconds, RunLogs &logs) {
    auto [test_loss, test_acc] = evaluate(forward, test, nullptr);
    std::printf("  test loss %.4f accuracy %.2f%%, %.0f samples/s\n", test_loss, test_acc * 100,
                double(seen) / seconds);
    const tpu_report::EpochRecord r{
        epoch + 1, loss_sum / double(seen), double(correct) / double(seen), test_loss, test_acc,
        seconds,   double(seen) / seconds};
    logs.curves.add(r);
    if (logs.tensorboard) {
        const auto at = static_cast<std::int64_t>(step);
        logs.tensorboard->scalar("epoch/train_loss", at, r.train_loss);
        logs.tensorboard->scalar("epoch/train_accuracy", at, r.train_accuracy);
        logs.tensorboard->scalar("epoch/test_loss", at, r.test_loss);
        logs.tensorboard->scalar("epoch/test_accuracy", at, r.test_accuracy);
        logs.tensorboard->scalar("epoch/samples_per_second", at, r.samples_per_second);
    }
}

void final_evaluation(const Forward &forward, const tpu_data::Dataset &test,
                      const std::string &out) {
    tpu_eval::ConfusionMatrix matrix(test.class_names);
    evaluate(forward, test, &matrix);
    matrix.print(std::cout);
    matrix.write_csv(out + "/evaluation.csv");
    std::cout << "saved " << out << "/{curves.csv,evaluation.csv,checkpoint.tpuckpt}\n";
}

} // namespace tpu_train
